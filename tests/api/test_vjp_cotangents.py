"""What vjp's pullback takes as a cotangent (review r1, finding 4).

- None for a part of a tuple (list, dict) output is a zero cotangent for that
  part: it reached the backward sweep as None and turned the whole gradient
  into NaN, silently (``pb((None, ones))`` gave [nan, nan, nan] for [2, 2, 2]);
- a list of numbers for an array output is the array it spells (was a raw
  TypeError from the backward sweep);
- an array of one element stands for its number, as a number always did for
  an array output: ``np.ones(1)`` for a scalar output was taken before 66b5fcc
  (autograd takes it too, NumPy broadcasts it), then refused;
- anything else of another shape, length or kind stays a SrcGradError saying
  what to pass.

Each accepted case: the value bit for bit, the gradient against central
differences of <cotangent, f(x)>, under every policy, and the dot-product
identity with jvp.
"""

from __future__ import annotations

import numpy as np
import pytest
from numeric import POLICIES, assert_bit_identical, assert_close, numeric_grad

import srcgrad

X = np.array([0.3, 0.7, -0.2])


def pair(x):
    return np.sum(x), x * 2.0


def halves(x):
    return {"a": np.tanh(x), "b": np.sum(x ** 2)}


def scaled(x):
    return x * 3.0


def squares(x):
    return np.sum(x ** 2)


def inner(h, w):
    return np.tanh(h * w + 0.1)


def rnn_states(x):
    """A loop and a helper: every state and the final sum."""
    h = x
    states = []
    for t in range(4):
        h = inner(h, 0.5 + 0.1 * t)
        if t % 2 == 0:
            states.append(h)
    return np.sum(h), states[0], states[1]


def pulled(fn, cotangent, policy="save"):
    value, pullback = srcgrad.vjp(fn, X, policy=policy)
    want = fn(X)
    for key in want if isinstance(want, dict) else range(len(want)) if isinstance(
            want, tuple) else [None]:
        assert_bit_identical(value if key is None else value[key],
                             want if key is None else want[key])
    return pullback(cotangent)[0]


def differences(fn, cotangent):
    """Central differences of <cotangent, fn(x)>, None parts counted as zero."""
    def dot(x):
        out = fn(x)
        parts = out.values() if isinstance(out, dict) else out
        weights = cotangent.values() if isinstance(cotangent, dict) else cotangent
        return sum(np.sum(np.asarray(c) * np.asarray(o))
                   for c, o in zip(weights, parts) if c is not None)
    return numeric_grad(dot, [X], 0)


@pytest.mark.parametrize("policy", [*POLICIES, ("revolve", 3)])
@pytest.mark.parametrize("fn, cotangent", [
    (pair, (None, np.ones(3))),
    (pair, (1.5, None)),
    (rnn_states, (None, np.array([1.0, -2.0, 0.5]), None)),
    (rnn_states, (2.0, None, np.ones(3))),
])
def test_none_is_a_zero_cotangent_for_that_output(fn, cotangent, policy):
    got = pulled(fn, cotangent, policy)
    assert np.all(np.isfinite(got))
    assert_close(got, differences(fn, cotangent), rtol=1e-5, atol=1e-7,
                 what=f"{fn.__name__}, {cotangent}, {policy!r}")
    zeros = tuple(0.0 * np.asarray(o) if c is None else c for c, o in zip(cotangent, fn(X)))
    assert_close(got, pulled(fn, zeros, policy), rtol=1e-14, atol=0)


def test_none_for_a_dict_entry_and_for_the_whole_output():
    got = pulled(halves, {"a": None, "b": 2.0})
    assert_close(got, 4.0 * X, rtol=1e-12)
    got = pulled(halves, {"a": np.ones(3), "b": None})
    assert_close(got, 1 - np.tanh(X) ** 2, rtol=1e-12)
    np.testing.assert_array_equal(pulled(scaled, None), np.zeros(3))


def test_dot_product_identity_with_a_none_part():
    """<u, J v> = <J^T u, v>, u with a None part taken as zero."""
    v = np.array([0.2, -1.0, 0.7])
    _, (_, d_states0, d_states1) = srcgrad.jvp(rnn_states, (X,), (v,))
    u = (None, np.array([1.0, -2.0, 0.5]), np.array([0.3, 0.3, -1.0]))
    back = pulled(rnn_states, u)
    assert_close(np.dot(back, v), np.dot(u[1], d_states0) + np.dot(u[2], d_states1),
                 rtol=1e-12)


def test_a_list_of_numbers_for_an_array_output_is_that_array():
    assert_close(pulled(scaled, [1.0, 2.0, -1.0]), np.array([3.0, 6.0, -3.0]), rtol=1e-14)
    assert_close(pulled(pair, [1.0, [1.0, 0.0, 1.0]]), np.array([3.0, 1.0, 3.0]),
                 rtol=1e-14)


@pytest.mark.parametrize("cotangent", [np.ones(1), np.full((1, 1), 0.5), np.float64(2.0), 2])
def test_one_number_in_an_array_stands_for_that_number(cotangent):
    """A size-one cotangent for a scalar output (or an array output) is its
    number: as before 66b5fcc, as autograd, and as NumPy broadcasts it."""
    c = float(np.asarray(cotangent).reshape(()))
    assert_close(pulled(squares, cotangent), c * 2.0 * X, rtol=1e-14)
    assert_close(pulled(scaled, cotangent), np.full(3, 3.0 * c), rtol=1e-14)
    autograd = pytest.importorskip("autograd")
    anp = pytest.importorskip("autograd.numpy")
    vjp_fn, _ = autograd.make_vjp(lambda x: anp.sum(x ** 2))(X)
    assert_close(pulled(squares, cotangent), vjp_fn(np.asarray(cotangent, dtype=float)),
                 rtol=1e-14)


@pytest.mark.parametrize("fn, cotangent, words", [
    (scaled, np.ones(2), r"cotangent of shape \(2,\) for an output of shape \(3,\)"),
    (scaled, np.ones((1, 3)), r"shape \(1, 3\) for an output of shape \(3,\)"),
    (squares, np.ones(2), r"shape \(2,\) for an output of shape \(\)"),
    (pair, np.ones(3), "tuple of 2 item.*pass a tuple of one cotangent per item"),
    (pair, (1.0,), "1 item"),
    (pair, (1.0, np.ones(4)), r"output\[1\] of shape \(3,\)"),
    (scaled, [1.0, [1.0, 2.0]], "no array of numbers"),
    (scaled, ["a", "b", "c"], "no array of numbers"),
    (halves, {"c": 1.0}, "'c'.*the output lacks"),
    (halves, np.ones(3), "dict"),
])
def test_what_does_not_fit_is_refused_saying_what_to_pass(fn, cotangent, words):
    _, pullback = srcgrad.vjp(fn, X)
    with pytest.raises(srcgrad.SrcGradError, match=words):
        pullback(cotangent)
