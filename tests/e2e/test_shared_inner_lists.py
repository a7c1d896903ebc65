"""A list two containers share, appended to through one of them (review s37 R5-22, diff review D-9).

``e = copy.copy(d)`` (or ``d.copy()``, ``list(xs)``) holds the very lists
``d`` holds; ``e['b'].append(v)`` changes ``d['b']`` too.  The generated code
appends to a copy of the list and stores it back into ``e``, and its run-time
check that no other name read afterwards holds the old list looked through
the lists ``d`` holds without asking whether one of them *is* that list: the
append was lost in ``d`` -- value and gradient silently wrong, every policy
and jvp (runtime/aliases._sees_except).  Such a program is now refused,
located, as the check meant (its message says what to write instead).
"""

from __future__ import annotations

import copy

import numpy as np
import pytest

import srcgrad
from srcgrad import AliasedUpdateError

X = np.array([0.3, -0.4])


def copied_dict(x):
    d = {"a": x * 2, "b": [x, x ** 2]}
    e = copy.copy(d)
    e["b"].append(x * 3)  # d["b"] gets the item too
    return sum(np.sum(v * x) for v in d["b"])


def dict_method_copy(x):
    d = {"a": x * 2, "b": [x, x ** 2]}
    e = d.copy()
    e["b"].append(x * 3)
    return sum(np.sum(v * x) for v in d["b"])


def copied_list(x):
    xs = [[x], [x ** 2]]
    ys = copy.copy(xs)
    ys[0].append(x * 3)
    return sum(np.sum(v * x) for v in xs[0])


def list_call(x):
    xs = [[x], [x ** 2]]
    ys = list(xs)
    ys[0].append(x * 3)
    return sum(np.sum(v * x) for v in xs[0])


@pytest.mark.parametrize("fn", [copied_dict, dict_method_copy, copied_list, list_call])
def test_an_append_through_the_other_container_is_refused_not_lost(fn):
    for call in (lambda: srcgrad.value_and_grad(fn)(X.copy()),
                 lambda: srcgrad.value_and_grad(fn, policy="sqrt")(X.copy()),
                 lambda: srcgrad.jvp(fn, (X.copy(),), (np.ones(2),))):
        with pytest.raises(AliasedUpdateError, match="shares its memory") as info:
            call()
        assert info.value.filename == __file__ and info.value.lineno, info.value
