"""optimize/forward_dots.py and runtime/steps.py's dot_ready: a forward loop's
product with a fixed matrix, ``h @ U``, made with ``np.dot`` where that is the
same GEMM (``dot_dtype``), for an ``h`` laid out as a new array.

The pass claims the product is ``@``'s bit for bit, the gradient with it:
every program below is held to the bits of the same pipeline without the
pass (value and gradient), and of the function itself, under every policy,
and to finite differences; the ``np.dot`` branch is checked to run where
promised (``fast``: every forward step, none, or all but the first), and
``@`` where the start value, the dtype, the axes or the rows rule ``np.dot``
out.
"""

from __future__ import annotations

import gast
import numpy as np
import pytest
from numeric import POLICIES, assert_bit_identical, assert_close, check_every_policy, \
    numeric_grad, pure
from recurrences import compiled_without, rnn
from recurrences import rnn_args as _rnn_args

from srcgrad.ir.emit import show_statements
from srcgrad.ir.naming import Namer
from srcgrad.optimize.forward_dots import dot_forward_products
from srcgrad.runtime import dot_ready


def _run(body, before="h = h0\n", params=("U", "h0")):
    sweep = gast.parse(before + "for t in t1:\n"
                       + "".join(f"    {line}\n" for line in body)).body
    return show_statements(dot_forward_products(sweep, set(params), Namer()))


# -- the pass, on loops written by hand ----------------------------------------------------

def test_a_carried_value_is_checked_once_where_the_loop_starts():
    out = _run(["t4 = h @ U", "h = np.tanh(t4)"])
    assert "h_dots = dot_ready(h)" in out and "U_dtype = dot_dtype(U, 2)" in out
    assert "t4 = np.dot(h, U) if h_dots and h.dtype is U_dtype" in out
    assert "else h @ U" in out


def test_a_value_the_step_made_needs_no_start_check():
    out = _run(["a = h * 2.0", "b = a", "t4 = b @ U", "h = np.tanh(t4)"])
    assert "t4 = np.dot(b, U) if b.dtype is U_dtype" in out and "dot_ready" not in out


@pytest.mark.parametrize("body, before", [
    (["t4 = h @ U", "U = U * 2.0", "h = np.tanh(t4)"], "h = h0\n"),   # U assigned in the loop
    (["t4 = h @ V", "h = np.tanh(t4)"], "h = h0\n"),                  # V bound nowhere before
    (["t4 = h @ U", "h = f(t4)"], "h = h0\n"),                         # h: a call's result
    (["t4 = h @ U", "h = t4[0]"], "h = h0\n"),                         # h: a row, a view
    (["t4 = h @ U", "h = np.tanh(t4)", "h = h.T"], "h = h0\n"),        # h assigned twice
    (["t4 = g @ U", "g = np.tanh(t4)"], ""),                           # g unbound before the loop
    (["a = h.T", "t4 = a @ U", "h = np.tanh(t4)"], "h = h0\n"),        # a transposed view
    (["t4 = U @ h", "h = np.tanh(t4)"], "h = h0\n"),                   # the matrix on the left
])
def test_what_is_left_alone(body, before):
    out = _run(body, before=before)
    assert "np.dot" not in out and "dot_dtype" not in out


def test_dot_ready_admits_what_a_new_array_is_laid_out_as():
    a = np.ones((4, 3))
    assert dot_ready(a) and dot_ready(np.asfortranarray(a))
    assert not dot_ready(a[:, ::2]) and not dot_ready(a[::2]) and not dot_ready(np.ones(3))
    assert not dot_ready(np.ones((2, 2, 2))) and not dot_ready(2.0) and not dot_ready([[1.0]])
    unaligned = np.frombuffer(b"\0" + bytes(8 * 6), dtype=np.float64, offset=1).reshape(2, 3)
    assert not dot_ready(unaligned)

    class Sub(np.ndarray):
        pass
    assert not dot_ready(a.view(Sub))


# -- whole programs ------------------------------------------------------------------------

def rnn_made_in_step(W, U, xs, h0):   # the product of a value the step made
    h = h0
    for t in range(xs.shape[0]):
        a = h * 0.5
        h = np.tanh(xs[t] @ W + a @ U)
    return np.sum(h * h)


def _programs():
    rng = np.random.default_rng(36)
    yield "steady", rnn, _rnn_args(rng), (0, 1), True
    yield "h0 differentiated", rnn, _rnn_args(rng), (0, 1, 3), True
    yield "the benchmark's shapes", rnn, [rng.normal(size=(16, 32)) / 4,
                                          rng.normal(size=(32, 32)) / np.sqrt(32),
                                          rng.normal(size=(50, 8, 16)), np.zeros((8, 32))], \
        (0, 1), True
    yield "float32", rnn, _rnn_args(rng, dtype=np.float32), (0, 1), True
    yield "a float32 state, float64 weights", rnn, _rnn_args(rng, state=np.float32), (0, 1), \
        -1   # the first step's h0 is float32: @; the steps after it, float64: np.dot
    yield "one step", rnn, _rnn_args(rng, steps=1), (0, 1), True
    yield "no step", rnn, _rnn_args(rng, steps=0), (0, 1), False
    yield "a batch of one", rnn, _rnn_args(rng, batch=1), (0, 1, 3), False
    yield "one hidden unit", rnn, _rnn_args(rng, hidden=1), (0, 1, 3), False
    w, u, xs, _ = _rnn_args(rng)
    yield "an h0 in Fortran order", rnn, [w, u, xs, np.asfortranarray(rng.normal(size=(3, 5)))], \
        (0, 1, 3), True
    yield "an h0 of every other column", rnn, [w, u, xs, rng.normal(size=(3, 10))[:, ::2]], \
        (0, 1, 3), False
    yield "a vector h0", rnn, [w, u, xs, rng.normal(size=5)], (0, 1, 3), False
    yield "a U in Fortran order", rnn, [w, np.asfortranarray(u), xs, rng.normal(size=(3, 5))], \
        (0, 1, 3), True
    yield "a U of every other column", rnn, [w, rng.normal(size=(5, 10))[:, ::2], xs,
                                             rng.normal(size=(3, 5))], (0, 1, 3), False
    yield "made in the step", rnn_made_in_step, _rnn_args(rng), (0, 1, 3), True


PROGRAMS = list(_programs())


def _compiled(monkeypatch, fn, with_pass, **options):
    return compiled_without(monkeypatch, fn, None if with_pass else "dot_forward_products",
                            **options)


def _dots(namespace, calls):
    """Count the np.dot calls of the generated code (its ``np``, a copy)."""
    real = np.dot

    class Spy:
        def __getattr__(self, name):
            return getattr(np, name)

        @staticmethod
        def dot(*args, **kwargs):
            calls.append(1)
            return real(*args, **kwargs)
    namespace["np"] = Spy()


@pytest.mark.parametrize("what, fn, args, wrt, fast", PROGRAMS, ids=[p[0] for p in PROGRAMS])
def test_gradients_are_bit_identical_to_the_loop_without_the_pass(monkeypatch, what, fn, args,
                                                                  wrt, fast):
    grad = None
    for policy in POLICIES:
        options = dict(mode="value_and_grad", wrt=wrt, policy=policy)
        namespace, with_pass, source = _compiled(monkeypatch, fn, True, **options)
        namespace0, without, plain = _compiled(monkeypatch, fn, False, **options)
        calls: list = []
        calls0: list = []
        _dots(namespace, calls)
        _dots(namespace0, calls0)
        value, grad = with_pass(*[np.copy(a) if a.flags.c_contiguous else a for a in args])
        value0, grad0 = without(*[np.copy(a) if a.flags.c_contiguous else a for a in args])
        assert_bit_identical(value, pure(fn)(*args), f"{what}, {policy!r}")
        assert_bit_identical(value0, value, f"{what}, {policy!r}")
        assert_bit_identical(grad, grad0, f"{what}, {policy!r}")
        if policy == "save":
            assert "dot_dtype(U, 2)" in source, what
            forward = len(args[2])   # one product per forward step (the adjoint's own besides)
            dots = forward + fast if type(fast) is int and not isinstance(fast, bool) \
                else forward if fast else 0
            assert len(calls) == len(calls0) + dots, (what, len(calls), len(calls0))
        if "dot_dtype(U, 2)" not in source:
            assert source == plain, (what, policy)
    for k, position in enumerate(wrt):
        assert_close(grad[k], numeric_grad(pure(fn), list(args), position), rtol=1e-4,
                     atol=1e-5, what=f"{what}, argument {position}")


def test_the_start_check_turns_np_dot_off_for_every_step(monkeypatch):
    rng = np.random.default_rng(3)
    w, u, xs, _ = _rnn_args(rng)
    namespace, with_pass, _ = _compiled(monkeypatch, rnn, True, wrt=(0, 1))
    calls: list = []
    _dots(namespace, calls)
    with_pass(w, u, xs, rng.normal(size=(3, 10))[:, ::2])
    forward_off = len(calls)
    calls.clear()
    with_pass(w, u, xs, rng.normal(size=(3, 5)))
    assert len(calls) == forward_off + len(xs)


def test_every_policy_and_jvp():
    check_every_policy(rnn, _rnn_args(np.random.default_rng(9)), 1)
    check_every_policy(rnn_made_in_step, _rnn_args(np.random.default_rng(9)), 3)


def test_random_shapes_give_the_loops_own_bits(monkeypatch):
    rng = np.random.default_rng(14)
    _, with_pass, source = _compiled(monkeypatch, rnn, True, wrt=(0, 1, 3))
    _, without, _ = _compiled(monkeypatch, rnn, False, wrt=(0, 1, 3))
    assert "np.dot(h, U)" in source
    for _ in range(25):
        steps, batch, width, hidden = (int(n) for n in rng.integers(1, 12, size=4))
        dtype = (np.float32, np.float64)[int(rng.integers(2))]
        args = _rnn_args(rng, steps, batch, width, hidden, dtype)
        assert_bit_identical(with_pass(*args), without(*args), (steps, batch, width, hidden))
