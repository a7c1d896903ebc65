"""A nested function's locals are its own scope.

autograd's ``examples/rnn.py``: ``pred`` appends to its list ``output`` while its
nested ``readout`` binds a local ``output`` of its own.  The look at what a helper
updates in place took the two for one name, and a caller reading ``inputs``
after ``pred(W, V, inputs)`` was refused: "pred() updates its argument 'inputs'
in place" (outside tester t1 #8), though nothing updates anything.  A refusal
that does stand names the variables as the user wrote them, not srcgrad's
renamed ``out_1`` (t1 #14)."""

from __future__ import annotations

import numpy as np
import pytest
from numeric import assert_bit_identical, assert_close, jvp_fd, numeric_grad, pure

import srcgrad
from srcgrad.errors import AliasedUpdateError

POLICIES = ["save", "recompute", "sqrt", ("revolve", 2)]
RS = np.random.RandomState(0)
W, V, X = RS.randn(7, 4), RS.randn(4, 3), RS.randn(4, 2, 3)


def cm(weights, a, b=None):
    return np.dot(a if b is None else np.hstack((a, b)), weights)


def pred(W, V, inputs):
    def update(x, h):
        return np.tanh(cm(W, x, h))

    def readout(h):
        output = cm(V, h)  # readout's own 'output', not pred's list
        return output

    h = np.ones((2, 4))
    output = [readout(h)]
    for x in inputs:
        h = update(x, h)
        output.append(readout(h))
    return output


def loss(W, V, inputs):
    o = pred(W, V, inputs)
    return np.sum(o[-1]) + np.sum(inputs * 0.5)


def loss_in_branch(W, V, inputs):
    total = 0.0
    for k in range(2):
        if k == 1:
            total = total + np.sum(pred(W, V, inputs)[k]) * np.sum(inputs)
    return total


def pred_lambda_local(W, inputs):  # a lambda's parameter named like the list
    output = [inputs[0] * 1.0]
    scaled = lambda output: output * 2.0  # noqa: E731 (the form under test)
    for x in inputs:
        output.append(scaled(np.tanh(x @ W[:3])))
    return output


def loss_lambda(W, V, inputs):
    return np.sum(pred_lambda_local(W, inputs)[-1]) + np.sum(inputs)


@pytest.mark.parametrize("policy", POLICIES, ids=str)
@pytest.mark.parametrize("fn", [loss, loss_in_branch, loss_lambda], ids=lambda f: f.__name__)
def test_a_nested_local_named_like_an_enclosing_list_changes_nothing(fn, policy):
    expected = pure(fn)(W, V, X)
    args = (W.copy(), V.copy(), X.copy())
    value, grads = srcgrad.value_and_grad(fn, wrt=(0, 2), policy=policy)(*args)
    assert_bit_identical(value, expected)
    for g, i in zip(grads, (0, 2)):
        assert_close(g, numeric_grad(pure(fn), [W, V, X], i), what=f"{fn.__name__} d{i}")
    for given, original in zip(args, (W, V, X)):
        np.testing.assert_array_equal(given, original)
    direction = np.linspace(-1.0, 1.0, X.size).reshape(X.shape)
    value, tangent = srcgrad.jvp(lambda inputs: fn(W, V, inputs), (X.copy(),), (direction,))
    assert_bit_identical(value, expected)
    assert_close(tangent, jvp_fd(pure(lambda inputs: fn(W, V, inputs)), [X], [0], [direction]),
                 what=f"{fn.__name__} tangent")


def test_autograd_agrees_on_the_rnn():
    autograd = pytest.importorskip("autograd")
    anp = pytest.importorskip("autograd.numpy")

    def plain(W, V, inputs):  # loss, in autograd's NumPy
        h = anp.ones((2, 4))
        for x in inputs:
            h = anp.tanh(anp.dot(anp.hstack((x, h)), W))
        return anp.sum(anp.dot(h, V)) + anp.sum(inputs * 0.5)

    assert_close(srcgrad.grad(loss)(W.copy(), V, X), autograd.grad(plain)(W, V, X),
                 what="autograd")


def shared_through_a_nested_local(x):
    def g(h):
        out = h
        out[0] = out[0] * 3.0
        return out
    y = x * 1.0
    out = [y]
    z = g(y)
    out.append(z * 2)
    return np.sum(out[0] ** 2) + np.sum(out[1])


def test_a_refusal_names_the_users_variables():
    with pytest.raises(AliasedUpdateError) as info:
        srcgrad.value_and_grad(shared_through_a_nested_local)(np.array([0.5, -1.0, 2.0]))
    assert "out_1" not in info.value.message, info.value.message
    assert "another variable named 'out'" in info.value.message, info.value.message
    assert info.value.filename == __file__ and info.value.lineno
