"""An augmented update through a container a helper returns (outside tester T1 #15).

``def pack(p): return {'w': p['w']}`` returns a new dict holding the caller's
array; ``q = pack(p); q['w'] *= 2.0`` then changes that array in place, so
``p['w']`` doubles too.  srcgrad lost the update (value and gradient of the
old array, no error) where ``q`` was a helper's result, though it followed the
same update through a dict built in place (``q = {'w': p['w']}``) and an
element write through the helper's dict.  The alias check now takes ``q['w']
op= v`` on a name every binding of which is a user function's result as the
update of the array the item holds, as it does for a container built here:
``p`` sees it through the helper (followed as the code runs), another name for
the array is bound to the updated one where it is that array (it was refused,
located, until F29 of session 33: tests/e2e/test_container_entries_updated.py).  The same on an array a helper returns (``Q =
make(x); Q[0] *= 3.0``) is followed as before.  Each program: value bit for
bit under every policy and in jvp, gradient and tangent against differences.
"""

from __future__ import annotations

import numpy as np
import pytest
from numeric import assert_close
from numeric import check_every_policy as check

import srcgrad
from srcgrad.errors import SrcGradError

X = np.array([0.5, -1.2, 2.0])


def pack(p):
    return {'w': p['w']}


def packl(p):
    return [p['w']]


def through_a_dict(w0):  # T1 #15: 22.76, gradient 8 w0
    p = {'w': w0 * 1.0}
    q = pack(p)
    q['w'] *= 2.0
    return np.sum(p['w'] ** 2)


def through_a_list(w0):
    p = {'w': w0 * 1.0}
    q = packl(p)
    q[0] *= 2.0
    return np.sum(p['w'] ** 2)


def in_a_loop(w0):
    p = {'w': w0 * 1.0, 'b': w0 * 0.5}
    for _ in range(3):
        q = pack(p)
        q['w'] *= 0.9
        p['b'] = p['b'] + q['w']
    return np.sum(p['w'] ** 2) + np.sum(p['b'])


def in_a_branch(w0):
    p = {'w': w0 * 1.0}
    if np.sum(w0) > 0:
        q = packl(p)
        q[0] *= 2.0
    else:
        q = pack(p)
        q['w'] -= w0
    return np.sum(p['w'] ** 2)


def in_a_branch_other_way(w0):
    return in_a_branch(-w0)


def part_taken_before(w0):
    p = {'w': w0 * 1.0}
    q = pack(p)
    s = q['w']
    q['w'] *= 2.0
    return np.sum(p['w'] ** 2) + np.sum(s)


def both_read(w0):
    p = {'w': w0 * 1.0}
    q = pack(p)
    q['w'] *= 2.0
    return np.sum(q['w'] * p['w'])


def make(x):
    return np.outer(x, x)


def array_result(w0):  # an array a helper returns: Q[0] *= v writes into Q
    Q = make(w0)
    r = Q[0]
    R = Q
    Q[0] *= 3.0
    Q[1:] += 1.0
    return np.sum(Q ** 2) + np.sum(r) + np.sum(R * w0)


def array_result_in_a_loop(w0):
    Q = make(w0)
    for i in range(3):
        Q[i] *= w0[i]
    return np.sum(Q)


def held_by_a_name(w0):  # w is the array q[0] is: Python's w changes
    w = w0 * 1.0
    q = packl({'w': w})
    q[0] += 1.0
    return np.sum(w ** 2)


PROGRAMS = [held_by_a_name, through_a_dict, through_a_list, in_a_loop, in_a_branch, in_a_branch_other_way,
            part_taken_before, both_read, array_result, array_result_in_a_loop]


@pytest.mark.parametrize("fn", PROGRAMS, ids=lambda f: f.__name__)
def test_the_update_through_a_returned_container_is_followed(fn):
    check(fn, (X,))


def test_the_testers_numbers():
    value, grad = srcgrad.value_and_grad(through_a_dict)(X.copy())
    assert_close(value, 22.76)
    assert_close(grad, 8.0 * X)
    value, tangent = srcgrad.jvp(through_a_list, (X.copy(),), (np.ones(3),))
    assert_close(tangent, 10.4)


def step(p):  # p is the caller's: srcgrad's code for step works on a copy
    q = pack(p)
    q['w'] *= 2.0
    return np.sum(p['w'] ** 2)


def in_a_helper(w0):
    return step({'w': w0 * 1.0})


def pack_twice(p):
    return {'a': p['w'], 'b': p['w']}


def held_twice(w0):  # q['b'] is q['a']
    p = {'w': w0 * 1.0}
    q = pack_twice(p)
    q['a'] *= 2.0
    return np.sum(q['b'] ** 2)


@pytest.mark.parametrize("fn", [in_a_helper, held_twice],
                         ids=lambda f: f.__name__)
@pytest.mark.parametrize("mode", ["grad", "jvp"])
def test_what_cannot_be_followed_is_refused_located(fn, mode):
    run = (lambda: srcgrad.grad(fn)(X.copy())) if mode == "grad" else \
        (lambda: srcgrad.jvp(fn, (X.copy(),), (np.ones(3),)))
    with pytest.raises(SrcGradError) as info:
        run()
    assert info.value.filename == __file__ and info.value.lineno, info.value
    assert "in place" in info.value.message, info.value.message


def test_autograd_agrees():
    autograd = pytest.importorskip("autograd")
    anp = pytest.importorskip("autograd.numpy")

    def plain(w0):  # through_a_dict, the update written as a new array
        return anp.sum((w0 * 2.0) ** 2)

    assert_close(srcgrad.grad(through_a_dict)(X.copy()), autograd.grad(plain)(X),
                 what="autograd")
