"""``for c in helper(n)`` where the helper returns an iterator (review s36 R4-16).

A helper returning a generator expression, ``map``, ``zip``, ``filter``,
``reversed``, ``enumerate`` or a dict's ``items()``: the loop was taken for
one over a sequence and indexed by position -- a raw ``TypeError: object of
type 'generator' has no len()`` under every policy and in jvp.  The loop now
lists what a helper returns first (runtime ``sequence``: a list, tuple or
array as it is), so a helper returning the differentiated values themselves
keeps their derivatives.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from numeric import check_every_policy

import srcgrad


def offsets(n):
    return (i * 0.1 for i in range(n))


def mapped(n):
    return map(lambda i: 0.2 * i, range(n))


def weighted(n):
    return {"a": 0.5, "b": -0.25, "c": 1.5}.items()


def rows(x):
    return [x * 2.0, np.sin(x), x ** 2]


def pairs(x):
    return zip(rows(x), (0.5, -1.0, 2.0))


def over_a_generator(x):
    h = x
    for c in offsets(4):
        h = np.sin(h + c)
    return np.sum(h)


def over_map_in_a_branch(x):
    h = x
    for c in mapped(3):
        if np.sum(h) > 0:
            h = np.tanh(h * c + 0.3)
        else:
            h = h * 0.5 + c
    return np.sum(h ** 2)


def over_items(x):
    total = 0.0
    for _, w in weighted(3):
        total = total + w * np.sum(np.cos(x * w))
    return total


def over_differentiated_rows(x):
    total = 0.0
    for r in rows(x):
        total = total + np.sum(r * x)
    return total


def over_zipped_rows(x):
    total = 0.0
    for r, w in pairs(x):
        total = total + w * np.sum(np.exp(r))
    return total


@pytest.mark.parametrize("fn", [over_a_generator, over_map_in_a_branch, over_items,
                                over_differentiated_rows, over_zipped_rows])
def test_loop_over_what_a_helper_returns(fn):
    check_every_policy(fn, (np.array([0.3, -0.5, 0.8]),), 0)


def endless(n):
    return itertools.count(n)


def stops_early_over_an_endless_iterator(x):
    h = x
    for i in endless(0):
        if i >= 3:
            break
        h = np.sin(h) * 1.1
    return np.sum(h)


def stops_early_over_a_list(x):
    h = x
    for r in rows(x):
        if np.sum(h) > 10.0:
            break
        h = h + np.tanh(r)
    return np.sum(h ** 2)


def test_a_loop_stopping_early_over_a_helpers_list():
    check_every_policy(stops_early_over_a_list, (np.array([0.3, -0.5, 0.8]),), 0)


def test_a_loop_stopping_early_over_an_endless_iterator_is_refused_not_listed():
    """Listed first, itertools.count() never ended (found by a review of the
    change): a loop that may stop early over what a helper returns runs a
    list, tuple or array as it is and refuses anything else, located."""
    with pytest.raises(srcgrad.UnsupportedSyntaxError) as info:
        srcgrad.grad(stops_early_over_an_endless_iterator)(np.array([0.3, -0.5]))
    assert "may stop early" in info.value.message
    assert info.value.lineno == stops_early_over_an_endless_iterator.__code__.co_firstlineno + 2
