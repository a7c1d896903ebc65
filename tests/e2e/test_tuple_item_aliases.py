"""An array a tuple holds, changed in place through another name (outside tester
T2 #15): ``a = t[0]; a[1] = v`` (also ``a, b = t``, and ``W = p[0]`` of a named
tuple) on a tuple argument or a named tuple made the generated code store ``a``
back into the tuple (``t_1[0] = a``): a raw TypeError "'tuple' object does not
support item assignment".  The array changes in place, so this is valid
Python; srcgrad cannot follow the change into a tuple it did not build from a
display, and now refuses it, located at the update, naming the user's item
(``t[0]``), as it refuses ``t[0][1] = v`` on such a tuple -- in grad and jvp
under every policy, in a loop too.  A list takes the array back and is still
followed: value bit for bit and gradient under every policy.  (autograd does
not run programs that assign array elements.)
"""

import warnings
from collections import namedtuple

import numpy as np
import pytest

import srcgrad
from numeric import POLICIES

P = namedtuple("P", "W b")


def tuple_argument(t):
    a = t[0]
    a[1] = t[1][0] * 3.0
    return np.sum(t[0])


def tuple_unpacked(t):
    a, b = t
    a[1] = b[0] * 3.0
    return np.sum(t[0] * 2.0)


def named_unpacked(x):
    p = P(x * 1.0, x * 2.0)
    W, b = p
    W[0] = b[1] * 4.0
    return np.sum(p.W ** 2)


def named_item_in_loop(x):
    p = P(x * 1.0, x * 2.0)
    for k in range(2):
        W = p[0]
        W[k] = p[1][1] * 4.0
    return np.sum(p.W ** 2)


def list_argument(xs):  # a list takes the array back: followed
    a = xs[0]
    a[1] = xs[1][0] * 3.0
    return np.sum(xs[0] ** 2)


X = np.array([0.3, -1.2, 0.8])


def _runs(fn, args, tangents):
    yield lambda: srcgrad.jvp(fn, args, tangents)
    for policy in POLICIES:
        yield lambda policy=policy: srcgrad.value_and_grad(fn, policy=policy)(*args)


def _refused(fn, args, tangents, *words):
    for run in _runs(fn, args, tangents):
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # refused before any warning
            with pytest.raises(srcgrad.AliasedUpdateError) as info:
                run()
        err = info.value
        assert err.filename and err.filename.endswith(".py") and err.lineno, err
        for word in words:
            assert word in err.message, err.message
        assert "t1" not in err.message and "_1" not in err.message, err.message


@pytest.mark.parametrize("fn, args", [
    (tuple_argument, ((X.copy(), X * 2.0),)),
    (tuple_unpacked, ((X.copy(), X * 2.0),)),
    (named_unpacked, (X.copy(),)),
    (named_item_in_loop, (X.copy(),)),
])
def test_tuple_item_changed_through_a_name_refused(fn, args):
    tangents = tuple(tuple(np.ones(3) for _ in a) if isinstance(a, tuple) else np.ones(3)
                     for a in args)
    _refused(fn, args, tangents, "an item of the tuple", "hold the arrays in a list")


def test_tuple_message_names_the_users_item():
    with pytest.raises(srcgrad.AliasedUpdateError) as info:
        srcgrad.grad(tuple_argument)((X.copy(), X * 2.0))
    assert "'a', which is 't[0]'" in info.value.message
    assert info.value.lineno == tuple_argument.__code__.co_firstlineno + 2


def test_list_argument_still_followed():
    xs = [X.copy(), X * 2.0]
    want = list_argument([X.copy(), X * 2.0])
    for policy in POLICIES:
        value, g = srcgrad.value_and_grad(list_argument, policy=policy)(xs)
        assert value == want
        # d/dx0: 2*x0 except slot 1 (overwritten); d/dx1[0]: 2 * (3 x1[0]) * 3
        w0 = 2 * X.copy()
        w0[1] = 0.0
        w1 = np.zeros(3)
        w1[0] = 18.0 * (X[0] * 2.0)
        np.testing.assert_allclose(g[0], w0)
        np.testing.assert_allclose(g[1], w1)
    assert np.array_equal(xs[0], X)
