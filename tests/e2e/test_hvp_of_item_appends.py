"""hvp of a function appending to a list held by a list or dict (review s36 R4-17b).

``acc[k].append(v)`` runs, in the generated code, as ``part_1 =
snapshot(part); part_1.append(v); ...; acc[k] = part_1`` with the append
marked as one into a copy no other name holds (analysis/slot_writes).  hvp
differentiates the tangent code once more, read from its source, where the
mark is lost: the append was refused ('part_1' is updated in place while
'acc', which holds it, is read afterwards), naming srcgrad's own 'part_1'.
slot_writes.appends_to_its_copy finds the copy again from the statements
(its tangent's fresh_tangent between).  Each: the gradient against
differences, hvp against differences of the gradient.
"""

from __future__ import annotations

import numpy as np
import pytest
from numeric import assert_close, check_every_policy

import srcgrad

X = np.array([0.3, -0.5, 0.8])
V = np.array([1.0, 0.5, -0.2])


def list_of_lists(x):
    acc = [[], []]
    for k in range(2):
        acc[k].append(x ** 2 * float(k + 1))
    return np.sum(acc[0][0] * acc[1][0])


def dict_of_lists(x):
    acc = {"a": [], "b": []}
    for i in range(3):
        acc["a"].append(x * float(i + 1))
        acc["b"].append(np.sin(x))
    return np.sum(acc["a"][2] * acc["b"][0]) + np.sum(acc["a"][0] ** 3)


def appended_twice_per_step(x):
    acc = [[], [], []]
    h = x
    for k in range(3):
        h = np.tanh(h * 1.2)
        acc[k].append(h)
        acc[k].append(h ** 2)
    return np.sum(acc[0][1] * acc[2][0]) + np.sum(acc[1][1])


FUNCTIONS = [list_of_lists, dict_of_lists, appended_twice_per_step]


@pytest.mark.parametrize("fn", FUNCTIONS)
def test_hvp_against_differences_of_the_gradient(fn):
    g, eps = srcgrad.grad(fn), 1e-6
    assert_close(srcgrad.hvp(fn)(X, V), (g(X + eps * V) - g(X - eps * V)) / (2 * eps),
                 rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("fn", FUNCTIONS)
def test_every_policy_and_jvp(fn):
    check_every_policy(fn, (X.copy(),))
