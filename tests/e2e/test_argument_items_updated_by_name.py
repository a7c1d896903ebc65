"""A dict, list or tuple argument whose arrays are updated in place through a
name of their own: ``h = st['h']; h *= 2`` then ``st['h']``, ``for w in ws: w
*= 0.5`` then ``ws[0]``, ``a = tp[0]; a *= 3.0`` then ``tp[0]``.

Python changes the array the container holds, and reads through the container
see it.  srcgrad followed that for a container the function makes, and refused
it for an argument ("'st' shares its memory and is read afterwards").  The
generated code now works on its own copy of such an argument (the container and
its arrays: the caller's are never changed; a tuple as a list, read only by its
items) and stores each updated array back where its copy holds it, as for a
container of its own.  Each program runs under every policy (value bit for bit,
gradient against central differences) and in forward mode; the caller's dict,
list and arrays are left as they were.
"""

from __future__ import annotations

import numpy as np
import pytest
from numeric import assert_close, numeric_grad, pure
from numeric import check_every_policy as check

import srcgrad
from srcgrad.errors import SrcGradError

X = np.array([1.0, 3.0, 0.5])


def dict_item(st, x):  # the brief's program
    h = st['h']
    h *= 2
    return np.sum(st['h'] * x)


def list_items(ws, x):  # the brief's program
    for w in ws:
        w *= 0.5
    return np.sum(ws[0] * x) + np.sum(ws[1] * x)


def tuple_item(tp, x):
    a = tp[0]
    a *= 3.0
    return np.sum(tp[0] * x) + np.sum(tp[1] * x)


def dict_in_a_loop(st, x):
    s = 0.0
    for i in range(3):
        h = st['h']
        h *= np.tanh(x)
        c = st['c']
        c += x * 0.5
        s = s + np.sum(st['h'] * st['c'])
    return s


def list_in_a_branch(ws, x):
    if np.sum(x) > 0:
        for w in ws:
            w *= x
    else:
        for w in ws:
            w += np.sin(x)
    return np.sum(ws[0] * ws[1]) + np.sum(ws[1])


def tuple_items_in_a_loop(tp, x):
    for k in range(len(tp)):
        a = tp[k]
        a -= 0.25 * x
    total = 0.0
    for a in tp:
        total = total + np.sum(a ** 2)
    return total


def bumped(st, x):
    h = st['h']
    h *= x
    return np.sum(st['h'])


def in_a_helper(st, x):
    return bumped(st, x) * 2.0


def dict_arg():
    return {'h': X * 1.5, 'c': np.array([0.5, -1.0, 2.0])}


def list_arg():
    return [X * 1.0, np.array([2.0, -1.0, 0.5])]


def tuple_arg():
    return (X * 1.0, np.array([2.0, -1.0, 0.5]))


CASES = [(dict_item, dict_arg), (list_items, list_arg), (tuple_item, tuple_arg),
         (dict_in_a_loop, dict_arg), (list_in_a_branch, list_arg),
         (tuple_items_in_a_loop, tuple_arg), (in_a_helper, dict_arg)]


def _copied(value):
    if isinstance(value, dict):
        return {k: v.copy() for k, v in value.items()}
    return type(value)(v.copy() for v in value)


def _python(fn):
    """``fn`` on a fresh copy of its container: Python changes the arrays in it."""
    def call(container, x):
        return fn(_copied(container), x)
    return call


@pytest.mark.parametrize("fn, make", CASES, ids=lambda c: getattr(c, "__name__", ""))
@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_every_policy(fn, make, sign):
    container = make()
    given = _copied(container)
    x = sign * X
    want = _python(fn)(container, x)
    fd = numeric_grad(lambda c, v: _python(fn)(c, v), [container, x], 1)
    for policy in ("save", "recompute", "save_products", "sqrt", ("revolve", 2)):
        value, grad = srcgrad.value_and_grad(fn, wrt=1, policy=policy)(given, x)
        assert value == want and type(value) is type(want), (policy, value, want)
        assert_close(grad, fd, rtol=1e-6, atol=1e-8, what=f"{fn.__name__} {policy}")
    direction = np.linspace(-1.0, 1.5, 3)
    value, tangent = srcgrad.jvp(fn, wrt=[1])(given, x, direction)
    assert value == want
    eps = 1e-6
    assert_close(tangent, (_python(fn)(container, x + eps * direction)
                           - _python(fn)(container, x - eps * direction)) / (2 * eps),
                 rtol=1e-6, atol=1e-8)
    # the caller's container and its arrays are left as they were
    assert type(given) is type(container)
    for a, b in zip(given.values() if isinstance(given, dict) else given,
                    container.values() if isinstance(container, dict) else container):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("fn, make", [(dict_item, dict_arg), (list_items, list_arg),
                                      (tuple_item, tuple_arg), (dict_in_a_loop, dict_arg)],
                         ids=lambda c: getattr(c, "__name__", ""))
def test_gradient_of_the_container(fn, make):
    container = make()
    grad = srcgrad.grad(fn, wrt=0)(_copied(container), X)
    keys = list(container) if isinstance(container, dict) else range(len(container))
    for k in keys:
        def through(item, k=k):
            c = _copied(container)
            if isinstance(c, tuple):
                c = tuple(item if i == k else v for i, v in enumerate(c))
            else:
                c[k] = item
            return fn(c, X)
        assert_close(grad[k], numeric_grad(through, [container[k].copy()], 0),
                     rtol=1e-6, atol=1e-8, what=f"{fn.__name__}[{k!r}]")


def test_check_every_policy_through_a_closure():
    # the function check_every_policy takes: the container built outside, passed in
    def loss(x):
        return dict_item({'h': np.array([0.5, 1.0, -2.0])}, x) + np.sum(x)
    check(loss, (X,))


def test_another_argument_sharing_an_item_is_refused():
    x = X.copy()
    with pytest.raises(SrcGradError):
        srcgrad.grad(dict_item, wrt=1)({'h': x}, x)  # h *= 2 would change x too


def test_returning_the_tuple_keeps_the_refusal():
    def returns_it(tp, x):
        a = tp[0]
        a *= 3.0
        return np.sum(tp[0] * x), tp
    with pytest.raises(SrcGradError):
        srcgrad.vjp(returns_it, tuple_arg(), X)
