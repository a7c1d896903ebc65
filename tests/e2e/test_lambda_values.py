"""A lambda passed to a primitive that only calls it -- ``sorted``'s key,
``on_grad``'s hook -- is a value of the generated code (``t1 = lambda v: -v``)
instead of an error; nothing is differentiated through it."""

from __future__ import annotations

import numpy as np

import srcgrad


def _clip(g):
    return np.clip(g, -0.1, 0.1)


def sorted_by_lambda(xs):
    return np.sum(np.array(sorted(xs, key=lambda v: -v)) * np.arange(3.0))


def sorted_by_local_lambda(xs):
    key = lambda v: abs(v)  # noqa: E731 - the form under test
    return np.sum(np.array(sorted(xs, key=key)) * np.arange(3.0))


def hook_lambda(x):
    c = 2.0
    return np.sum(srcgrad.on_grad(x * 3.0, lambda d: d * c) ** 2)


def clipped_rnn_lambda(W, xs):
    h = np.zeros(W.shape[0])
    for x in xs:
        h = srcgrad.on_grad(np.tanh(W @ h + x), lambda g: np.clip(g, -0.1, 0.1))
    return np.sum(h)


def clipped_rnn_named(W, xs):
    h = np.zeros(W.shape[0])
    for x in xs:
        h = srcgrad.on_grad(np.tanh(W @ h + x), _clip)
    return np.sum(h)


def test_sorted_with_a_lambda_key():
    xs = [0.3, -0.7, 1.1]
    assert srcgrad.grad(sorted_by_lambda)(xs) == [1.0, 2.0, 0.0]
    assert srcgrad.jvp(sorted_by_lambda, (xs,), ([1.0, 0.0, 0.0],))[1] == 1.0
    assert srcgrad.grad(sorted_by_local_lambda)(xs) == [0.0, 1.0, 2.0]
    assert "lambda v: -v" in srcgrad.grad(sorted_by_lambda).source


def test_a_lambda_hook_acts_on_the_cotangent():
    x = np.array([0.3, -0.7, 1.1])
    np.testing.assert_allclose(srcgrad.grad(hook_lambda)(x), 2.0 * 18.0 * x)
    v = np.array([1.0, -2.0, 0.5])
    np.testing.assert_allclose(srcgrad.hvp(hook_lambda)(x, v), 36.0 * v)  # the hook too


def test_a_lambda_hook_in_a_loop_is_the_named_hook():
    rs = np.random.RandomState(0)
    W, xs = rs.randn(3, 3), rs.randn(6, 3)
    np.testing.assert_array_equal(srcgrad.grad(clipped_rnn_lambda)(W, xs),
                                  srcgrad.grad(clipped_rnn_named)(W, xs))


def lambda_in_a_branch_after_an_early_return(x, s):
    if np.sum(x) > 10.0:
        if s > 5.0:
            return np.sum(x)
    if np.sum(x) < 0.0:
        t = s * 0.5
    else:
        fn = lambda v: np.sin(0.1 * s) * v  # noqa: E731 - the form under test
        t = fn(np.sum(x))
    return t * np.sum(x * x)


def test_a_lambda_defined_once_in_a_branch_after_an_early_return():
    """Was refused as 'defined more than once': the code after the early return is
    copied into the branch that does not return, and the definition with it."""
    from numeric import assert_close, numeric_grad
    x, s = np.array([0.3, 0.4, -0.2]), 0.7
    value, g = srcgrad.value_and_grad(lambda_in_a_branch_after_an_early_return, wrt=(0, 1))(x, s)
    assert value == lambda_in_a_branch_after_an_early_return(x, s)
    for i in range(2):
        assert_close(g[i], numeric_grad(lambda_in_a_branch_after_an_early_return, (x, s), i))
