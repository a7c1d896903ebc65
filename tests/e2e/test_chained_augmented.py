"""Augmented assignment to a chained subscript: ``a[-1][0] *= 0.5``,
``d['h'][1] *= 3.0``, ``s[0][1] *= 0.5`` (outside testers T1 #5, T2 #6).

The plain form ``d['h'][1] = d['h'][1] * 3.0`` worked; the augmented one was
refused with "only elements of a local variable can be assigned (x[i] = v,
x[i][j] = v ...)" -- a message the program met.  Python runs ``y[a][b] op= v``
as ``t = y[a]; t[b] op= v``: the part taken once, then its item updated in
place, an array's element or the array a list's item holds.  The normaliser
now writes it so, and the alias check follows the change into ``y`` as it
follows that code written out; where another name holds the array changed in
place (``h`` in ``d = {'h': [x, h]}``), that name is bound to the updated array
where it is that array (it was refused, located, until findings F29 of session
33: tests/e2e/test_container_entries_updated.py).  Each program runs under every policy (value bit for bit,
gradient against central differences) and in forward mode, in a loop, a
branch and a helper; autograd agrees on the list of lists.
"""

from __future__ import annotations

import numpy as np
import pytest
from numeric import assert_close
from numeric import check_every_policy as check

import srcgrad

X = np.array([0.8, -1.4, 0.5])


def array_row_element(x):  # T1 #5
    a = np.outer(x, x)
    a[-1][0] *= 0.5
    return np.sum(a ** 2)


def dict_of_lists(x):
    d = {'h': [x * 1.0, x * 2.0]}
    d['h'][1] *= 3.0
    return np.sum(d['h'][1] * x)


def list_of_lists(x):
    s = [[x[0] * 1.0, x[1] * 2.0], [x[1], x[2]]]
    s[0][1] *= 0.5
    return s[0][1] * s[1][0] + s[0][0]


def dict_of_arrays(x):  # T2 #6
    st = {'c': np.zeros(3)}
    st['c'][1] += x[0]
    return np.sum(st['c'] ** 2)


def c_style_matrix(x):
    M = np.zeros((3, 3))
    M[1][2] += x[0]
    M[-1][0] -= x[1] * x[2]
    return np.sum(M ** 2)


def state_in_a_loop(x):  # the tester's LSTM-like state dict
    st = {'c': np.zeros(3), 'h': x * 1.0}
    for t in range(5):
        st['c'][t % 3] += st['h'][t % 2] * 0.3
        st['h'][0] *= 0.9
    return np.sum(st['c'] ** 2) + st['h'][0]


def in_a_branch(x):
    d = {'h': [np.sin(x), x * 2.0]}
    if np.sum(x) > 0:
        d['h'][0] *= x
    else:
        d['h'][-1] += x
    return np.sum(d['h'][0] * d['h'][1])


def scaled_last(x):
    a = np.outer(x, x)
    a[-1][-1] /= 2.0
    return a


def in_a_helper(x):
    return np.sum(scaled_last(x) * x)


PROGRAMS = [array_row_element, dict_of_lists, list_of_lists, dict_of_arrays, c_style_matrix,
            state_in_a_loop, in_a_branch, in_a_helper]


@pytest.mark.parametrize("fn", PROGRAMS, ids=lambda f: f.__name__)
def test_a_chained_augmented_assignment_differentiates(fn):
    check(fn, (X,))


def test_the_testers_gradient():
    assert_close(srcgrad.grad(array_row_element)(np.array([1.0, 2.0])), [14.0, 37.0])


def held_elsewhere(x):  # Python changes h too: h * x reads the tripled array
    h = x * 2.0
    d = {'h': [x * 1.0, h]}
    d['h'][1] *= 3.0
    return np.sum(h * x)


def test_an_array_another_name_holds_sees_the_update():
    # (refused, located, until h was bound to the updated array: F29 of session 33)
    assert_close(check(held_elsewhere, (X,)), 12.0 * X, what="held_elsewhere")


def test_autograd_agrees_on_the_list_of_lists():
    autograd = pytest.importorskip("autograd")
    assert_close(srcgrad.grad(list_of_lists)(X.copy()), autograd.grad(list_of_lists)(X),
                 what="autograd")
