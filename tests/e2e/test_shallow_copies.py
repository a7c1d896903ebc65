"""copy.copy of a value being differentiated (review s37 R5-8).

``copy.copy(x)`` was refused ('no adjoint rule for copy.copy') where
``copy.deepcopy`` and ``list(xs)`` were differentiated.  It has a rule now,
both modes (rules/containers.shallow_copy: the cotangent passes through), and
analysis/sharing knows a shallow copy of a list or dict holds its items, so a
write into an item through the copy is followed.  Each: value bit for bit
under every policy and in jvp, gradient and tangent against differences.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest
from numeric import check_every_policy

X = np.array([0.37, -0.81, 1.23, -0.22])


def an_array(x):
    return np.sum(copy.copy(x) * x)


def written_after(x):
    y = copy.copy(x)
    y[0] = 5.0  # a new array: x keeps its value
    return np.sum(y * x)


def a_list(x):
    xs = [x * 2.0, x ** 2]
    ys = copy.copy(xs)
    ys.append(x)
    return np.sum(ys[0] * ys[2]) + len(xs)


def an_item_written_through_the_copy(x):
    xs = [x * 2.0, x ** 2]
    ys = copy.copy(xs)
    ys[0][1] = 3.0  # xs[0] is that very array
    return np.sum(xs[0] * x)


def a_dict(x):
    d = {"a": x * 2.0}
    e = copy.copy(d)
    e["b"] = x ** 2
    return np.sum(e["a"] * e["b"]) + len(d)


def in_a_loop(x):
    h = x
    for i in range(3):
        h = np.tanh(copy.copy(h) * 1.5)
    return np.sum(h)


@pytest.mark.parametrize("fn", [an_array, written_after, a_list, an_item_written_through_the_copy,
                                a_dict, in_a_loop])
def test_every_policy_and_jvp(fn):
    check_every_policy(fn, (X.copy(),))
