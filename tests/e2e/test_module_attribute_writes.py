"""A write through a name for an array that an attribute of a global holds
(``b = wsmod.BUF; b[:] = v``): review s34, R2-22.  The normaliser read every
later ``b`` as ``wsmod.BUF`` and a second name for it (``b2 = wsmod.BUF``)
was not seen as one: a zero gradient where the derivative is [5.73, 0.92,
4.32], silently.  The same write through a global's own name is refused;
now this one is too, located, and reading such an array (or writing a copy
of it) is differentiated as before.
"""

from __future__ import annotations

import sys
import types

import numpy as np
import pytest
from numeric import check_every_policy

import srcgrad
from srcgrad.errors import AliasedUpdateError

wsmod = types.ModuleType("wsmod_for_tests")
wsmod.BUF = np.zeros(3)
sys.modules[wsmod.__name__] = wsmod


class Holder:
    def __init__(self):
        self.W = np.eye(3) * 0.5


GM = Holder()
X = np.array([1.76405235, 0.40015721, 0.97873798])


def two_names(x):
    b = wsmod.BUF
    b[:] = np.sin(x)
    y = b * 2.0
    b2 = wsmod.BUF
    b2[:] = x ** 2
    return np.sum(y * b)


def object_array(x):
    w = GM.W
    a = np.tanh(x @ w)
    w *= 0.8
    return np.sum(np.tanh(a @ GM.W) ** 2)


def in_a_loop(x):
    s = 0.0
    for k in range(3):
        b = wsmod.BUF
        b[k] = x[k] ** 2
        s = s + np.sum(b * x)
    return s


def read_only(x):
    return np.sum(np.tanh(x @ GM.W) * wsmod.BUF)


def on_a_copy(x):
    b = wsmod.BUF.copy()
    b[:] = np.sin(x)
    return np.sum(b * x)


@pytest.mark.parametrize("fn", [two_names, object_array, in_a_loop])
@pytest.mark.parametrize("transform", [srcgrad.grad, srcgrad.value_and_grad])
def test_a_write_into_an_attribute_of_a_global_is_refused_where_it_is_written(fn, transform):
    before, weights = wsmod.BUF.copy(), GM.W.copy()
    with pytest.raises(AliasedUpdateError, match="not a variable of .*copy") as caught:
        transform(fn)(X)
    assert caught.value.filename == __file__
    assert fn.__code__.co_firstlineno < caught.value.lineno <= fn.__code__.co_firstlineno + 5
    np.testing.assert_array_equal(wsmod.BUF, before)    # nothing ran
    np.testing.assert_array_equal(GM.W, weights)


@pytest.mark.parametrize("fn", [read_only, on_a_copy])
def test_reading_it_or_writing_a_copy_is_differentiated(fn):
    wsmod.BUF[:] = [0.3, -0.2, 0.5]
    check_every_policy(fn, (X,), 0)


GLOBAL_W = np.eye(3) * 0.5


def global_name_augmented(x):
    w = GLOBAL_W
    a = np.tanh(x @ w)
    w *= 0.8
    return np.sum(np.tanh(a @ GLOBAL_W) ** 2)


def test_an_augmented_update_of_a_global_array_through_another_name():
    before = GLOBAL_W.copy()
    try:
        value, grad = srcgrad.value_and_grad(global_name_augmented)(X)
    except AliasedUpdateError:
        return   # refused: fine
    finally:
        np.testing.assert_array_equal(GLOBAL_W, before)
    # followed: then as Python runs it (the global's array scaled in place)
    want = global_name_augmented(X.copy())
    GLOBAL_W[...] = before
    assert value == want
