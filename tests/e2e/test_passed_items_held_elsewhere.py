"""A list or dict argument whose array item is updated in place, read through
another container holding the same arrays (outside tester T2 #4 "more of",
with a list argument; T1 #14 with the container an argument).

``def f(hs): t = list(hs); hs[0] *= 3.0; return np.sum(t[0] * a)``: Python's
``t[0]`` is ``hs[0]``, changed in place.  The alias check looked at item
updates of the containers the function builds only, so for an argument (or a
helper's parameter) the read of ``t`` went unchecked: value_and_grad gave the
old value and gradient, no error.  Such an update of a parameter whose items
another container holds -- a copy of them, or one read from it -- is now
checked as one of a container built here: the updated array is stored back
where the list or dict holds it, or refused, located, as the code runs.  A
dict argument copied with ``.copy()`` (whose kind the compiler does not see)
and then updated through the original is refused, located, as the code runs;
``q |= p`` of a dict argument is followed.  Each program: value bit for bit
under every policy and in jvp, gradient and tangent against central
differences, and the caller's list or dict and arrays left as they were.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest
from numeric import POLICIES, assert_bit_identical, assert_close
from numeric import check_every_policy as check

import srcgrad

X = np.array([0.6, -1.1, 0.9])
A3 = np.arange(3.0)


def listed(hs):  # T2: f 2.1, srcgrad 0.7
    t = list(hs)
    hs[0] *= 3.0
    return np.sum(t[0] * A3)


def item_listed(hs):
    t = [hs[0]]
    hs[0] *= 3.0
    return np.sum(t[0] * A3)


def copied(hs):  # T1 #14: the list argument copied, the original updated
    q = hs.copy()
    hs[0] *= 2.0
    return np.sum(q[0] ** 2)


def comprehension_element_write(hs):
    t = [h for h in hs]
    hs[0][1] = 7.0 * hs[0][0]
    return np.sum(t[0] * A3)


def in_a_loop(hs):
    t = hs[:]
    for i in range(3):
        hs[0] *= 0.9
    return np.sum(t[0] * A3)


def merged_into(p):  # T1 #14 "q |= p" with p an argument
    q = {'extra': 1.0}
    q |= p
    p['w'] *= 2.0
    return np.sum(q['w'] ** 2)


def _difference(fn, args, eps=1e-6):
    """Central differences of ``fn`` along each element of the arrays its one list
    or dict argument holds (a list or dict of gradients)."""
    (box,) = args
    keys = list(box.keys()) if isinstance(box, dict) else list(range(len(box)))
    grads = {}
    for k in keys:
        g = np.zeros(np.shape(box[k]))
        for pos in np.ndindex(g.shape):
            pair = []
            for step in (eps, -eps):
                moved = copy.deepcopy(box)
                moved[k] = moved[k].astype(np.float64)
                moved[k][pos] += step
                pair.append(fn(moved))
            g[pos] = (pair[0] - pair[1]) / (2 * eps)
        grads[k] = g
    return grads if isinstance(box, dict) else [grads[k] for k in keys]


@pytest.mark.parametrize("fn, box", [
    (listed, [X]), (item_listed, [X]), (copied, [X]), (comprehension_element_write, [X]),
    (in_a_loop, [X]), (merged_into, {'w': X})], ids=lambda v: getattr(v, "__name__", ""))
def test_a_container_argument(fn, box):
    want = fn(copy.deepcopy(box))
    fd = _difference(fn, (box,))
    for policy in POLICIES:
        given = copy.deepcopy(box)
        value, grad = srcgrad.value_and_grad(fn, policy=policy)(given)
        assert_bit_identical(value, want, f"{fn.__name__}, {policy!r}")
        for k in (grad.keys() if isinstance(grad, dict) else range(len(grad))):
            assert_close(grad[k], fd[k], rtol=1e-6, atol=1e-8, what=f"{fn.__name__} {policy!r}")
        # the caller's container and arrays are left as they were
        for k in (box.keys() if isinstance(box, dict) else range(len(box))):
            assert np.array_equal(given[k], box[k]), (fn.__name__, policy)
        assert type(given) is type(box) and len(given) == len(box)
    direction = copy.deepcopy(box)
    for k in (direction.keys() if isinstance(direction, dict) else range(len(direction))):
        direction[k] = np.linspace(-1.0, 1.5, np.size(box[k]))
    value, tangent = srcgrad.jvp(fn, (copy.deepcopy(box),), (direction,))
    assert_bit_identical(value, want, f"{fn.__name__}, jvp")
    keys = list(box.keys()) if isinstance(box, dict) else range(len(box))
    assert_close(tangent, sum(float(np.sum(fd[k] * direction[k])) for k in keys),
                 rtol=1e-6, atol=1e-8, what=f"{fn.__name__}, jvp")


def _scaled(hs):
    t = list(hs)
    hs[0] *= 3.0
    return np.sum(t[0] * A3)


def _written(hs):
    t = [hs[0]]
    hs[0][1] = 4.0 * hs[0][0]
    return np.sum(t[0] * A3)


def through_a_helper(x):  # the list is the helper's parameter
    return _scaled([x * 1.0]) + _written([np.sin(x)])


def in_a_branch(x):
    if x[0] > 0:
        return _scaled([x * 2.0])
    return _written([x * 0.5])


@pytest.mark.parametrize("fn", [through_a_helper, in_a_branch], ids=lambda f: f.__name__)
def test_a_helpers_parameter(fn):
    check(fn, (X.copy(),))
    check(fn, (-X,))


def snapshot_of_a_dict_argument(p):  # T1 #14: snap = p.copy() of a dict passed in
    snap = p.copy()
    for i in range(2):
        p['w'] -= 0.1 * p['w']
    return np.sum((p['w'] - snap['w']) ** 2) + np.sum(snap['w'])


def test_a_dict_argument_copied_then_updated_is_refused_located():
    for run in (lambda: srcgrad.value_and_grad(snapshot_of_a_dict_argument)({'w': X.copy()}),
                lambda: srcgrad.jvp(snapshot_of_a_dict_argument, ({'w': X.copy()},),
                                    ({'w': np.ones(3)},))):
        with pytest.raises(srcgrad.AliasedUpdateError) as info:
            run()
        err = info.value
        assert err.filename.endswith(".py") and err.lineno, err
        assert "snap = p.copy()" in err.message and "p[k] = p[k] * ..." in err.message


def test_an_array_argument_never_a_wrong_answer():
    # list(W) of a 2-D array: views of its rows, one of which W[1] *= 3.0
    # changes -- refused, located, as before; a view read afterwards followed
    def rows(W):
        t = list(W)
        W[1] *= 3.0
        return np.sum(t[0] * A3)

    def window(W):
        r = W[1:]
        W[1] *= 3.0
        return np.sum(r * A3[:2])

    with pytest.raises(srcgrad.AliasedUpdateError) as info:
        srcgrad.grad(rows)(np.arange(6.0).reshape(2, 3))
    assert info.value.lineno
    check(window, (X.copy(),))
