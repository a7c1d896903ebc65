"""The public API (API.md): forms of grad, value_and_grad, vjp, source, show,
caching, and where functions may be defined."""

from __future__ import annotations

import functools
import inspect
import io
import os
import traceback

import numpy as np
import pytest

import srcgrad
from srcgrad.api import transforms as api

from numeric import assert_close, numeric_grad

RNG = np.random.default_rng(0)
W, B, X, Y = (RNG.standard_normal(s) for s in ((4, 3), (3,), (5, 4), (5, 3)))


@srcgrad.grad(wrt=(0, 1))
def decorated_loss(W, b, x, y):
    h = np.tanh(x @ W + b)
    return np.mean((h - y) ** 2)


@srcgrad.grad
def decorated_plain(x):
    return np.sum(np.sin(x))


def loss(W, b, x, y):
    h = np.tanh(x @ W + b)
    return np.mean((h - y) ** 2)


def test_decorator_with_arguments_returns_a_tuple():
    dW, db = decorated_loss(W, B, X, Y)
    assert dW.shape == W.shape and db.shape == B.shape
    assert_close(dW, numeric_grad(loss, [W, B, X, Y], 0))
    assert_close(db, numeric_grad(loss, [W, B, X, Y], 1))


def test_decorator_without_arguments_differentiates_argument_0():
    x = RNG.standard_normal(4)
    assert_close(decorated_plain(x), np.cos(x))
    assert decorated_plain.__wrapped__.__name__ == "decorated_plain"


def test_wrt_int_returns_one_gradient_and_tuple_returns_a_tuple():
    g0 = srcgrad.grad(loss)(W, B, X, Y)
    g01 = srcgrad.grad(loss, wrt=(0, 1))(W, B, X, Y)
    g1 = srcgrad.grad(loss, wrt=1)(W, B, X, Y)
    assert isinstance(g0, np.ndarray) and isinstance(g01, tuple)
    np.testing.assert_array_equal(g0, g01[0])
    np.testing.assert_array_equal(g1, g01[1])
    (only,) = srcgrad.grad(loss, wrt=(2,))(W, B, X, Y)
    assert only.shape == X.shape


def test_negative_wrt_counts_from_the_end():
    g = srcgrad.grad(loss, wrt=-1)(W, B, X, Y)
    assert_close(g, numeric_grad(loss, [W, B, X, Y], 3))


def test_source_and_wrapped():
    g = srcgrad.grad(loss, wrt=(0, 1))
    assert g.__wrapped__ is loss
    assert g.__name__ == "loss"
    src = g.source
    assert "def grad_loss(W, b, x, y):" in src
    assert "# Forward sweep" in src and "# Adjoint sweep" in src
    assert "# save:" in src
    assert "import numpy as np" in src


def test_show_prints_the_source():
    g = srcgrad.grad(loss)
    out = io.StringIO()
    srcgrad.show(g, file=out)
    assert out.getvalue() == g.source


def test_value_and_grad():
    value, (dW, db) = srcgrad.value_and_grad(loss, wrt=(0, 1))(W, B, X, Y)
    assert value == pytest.approx(loss(W, B, X, Y))
    ref = srcgrad.grad(loss, wrt=(0, 1))(W, B, X, Y)
    np.testing.assert_array_equal(dW, ref[0])
    value, dW = srcgrad.value_and_grad(loss)(W, B, X, Y)
    np.testing.assert_array_equal(dW, ref[0])


def test_vjp_of_a_non_scalar_output():
    def f(x, A):
        return np.tanh(A @ x) * 2.0

    x, A = RNG.standard_normal(3), RNG.standard_normal((4, 3))
    value, pullback = srcgrad.vjp(f, x, A)
    np.testing.assert_allclose(value, f(x, A))
    u = RNG.standard_normal(4)
    dx, dA = pullback(u)
    d = 2.0 * u * (1 - np.tanh(A @ x) ** 2)
    assert_close(dx, A.T @ d)
    assert_close(dA, np.outer(d, x))
    assert "def f_forward(x, A):" in pullback.source
    assert "def f_backward(residuals, " in pullback.source
    assert pullback.__wrapped__ is f


def test_vjp_of_a_tuple_output_and_int_arguments():
    def f(x, n):
        return x * n, np.sum(x ** 2)

    x = RNG.standard_normal(3)
    (a, s), pullback = srcgrad.vjp(f, x, 3)
    dx, dn = pullback((np.ones(3), 2.0))
    assert dn is None
    assert_close(dx, 3.0 + 4.0 * x)
    (dx_only,) = srcgrad.vjp(f, x, 3, wrt=0)[1]((np.ones(3), 0.0))
    assert_close(dx_only, np.full(3, 3.0))


def test_vjp_forward_returns_residuals_explicitly():
    def f(x):
        return np.exp(np.sin(x))

    _, pullback = srcgrad.vjp(f, RNG.standard_normal(3))
    src = pullback.source
    assert "return t1, (" in src or "return " in src
    assert "= residuals" in src


def test_gradients_keep_dtype_and_are_writable():
    def f(x, s):
        return np.sum(x * s)

    x32 = np.ones(3, dtype=np.float32)
    g = srcgrad.grad(f, wrt=(0, 1))(x32, 2.0)
    assert g[0].dtype == np.float32 and g[0].flags.writeable
    assert isinstance(g[1], float)
    g = srcgrad.grad(lambda_free_sum)(x32)
    assert g.dtype == np.float32 and g.flags.writeable


def test_gradients_are_distinct_arrays_even_when_one_cotangent_reaches_several():
    def f(x, z, ps):
        return np.sum(np.tanh(x + z + ps[0] + ps[1]))  # d_x = d_z = d of each ps[i]

    x = np.ones(3)
    dx, dz, dps = srcgrad.grad(f, wrt=(0, 1, 2))(x, x.copy(), [x.copy(), x.copy()])
    arrays = [dx, dz, *dps]
    assert all(not np.shares_memory(a, b) for i, a in enumerate(arrays) for b in arrays[:i])
    np.testing.assert_allclose(dps[1], dx)
    dx += 1.0  # a caller updating one gradient in place leaves the others alone
    np.testing.assert_allclose(dz, dps[0])
    assert not np.allclose(dz, dx)


def test_grad_raises_what_the_function_raises_even_off_the_gradient_path():
    def f(x, y):
        return np.sum(x) + np.sum(np.reshape(y, (5,)))  # y's part: no gradient needed

    with pytest.raises(ValueError):
        f(np.ones(3), np.ones(4))
    with pytest.raises(ValueError):
        srcgrad.grad(f)(np.ones(3), np.ones(4))
    np.testing.assert_array_equal(srcgrad.grad(f)(np.ones(3), np.ones(5)), np.ones(3))


def lambda_free_sum(x):
    return np.sum(x)


def test_unused_argument_gets_zeros():
    def f(x, y):
        return np.sum(x)

    dy = srcgrad.grad(f, wrt=1)(np.ones(2), np.ones((2, 2)))
    np.testing.assert_array_equal(dy, np.zeros((2, 2)))


def test_stop_gradient_blocks_the_cotangent():
    def f(x, y):
        scale = srcgrad.stop_gradient(np.sum(x ** 2))
        return np.sum(x * y) * scale

    x, y = RNG.standard_normal(3), RNG.standard_normal(3)
    assert_close(srcgrad.grad(f)(x, y), y * np.sum(x ** 2))
    assert "stop_gradient(" in srcgrad.grad(f).source
    assert "import srcgrad\n" not in srcgrad.grad(f).source


SCALE = 2.0


def uses_global(x):
    return np.sum(x) * SCALE


def test_rebinding_a_global_regenerates_the_code():
    global SCALE
    g = srcgrad.grad(uses_global)
    np.testing.assert_array_equal(g(np.ones(2)), [2.0, 2.0])
    SCALE = 5.0
    try:
        np.testing.assert_array_equal(g(np.ones(2)), [5.0, 5.0])
    finally:
        SCALE = 2.0


def test_closures_are_read_and_tracked():
    def make(k):
        def f(x):
            return np.sum(x * k)
        return f

    f = make(3.0)
    assert_close(srcgrad.grad(f)(np.ones(2)), [3.0, 3.0])


def test_nested_indented_and_decorated_definitions():
    def logged(fn):
        @functools.wraps(fn)
        def wrapper(*args):
            return fn(*args)
        return wrapper

    class Holder:
        @staticmethod
        def inner(x):
            return np.sum(np.exp(x))

    @logged
    def decorated(x):
        return np.sum(x ** 3)

    x = RNG.standard_normal(3)
    assert_close(srcgrad.grad(Holder.inner)(x), np.exp(x))
    assert_close(srcgrad.grad(decorated)(x), 3 * x ** 2)


def test_defaults_and_keyword_calls():
    def f(x, scale=2.0):
        return np.sum(x * scale)

    g = srcgrad.grad(f)
    assert_close(g(np.ones(2)), [2.0, 2.0])
    assert_close(g(np.ones(2), 3.0), [3.0, 3.0])
    assert_close(g(np.ones(2), scale=4.0), [4.0, 4.0])


def test_compiled_through_a_real_file_so_tracebacks_show_generated_code():
    def f(x):
        return np.sum(np.exp(x))  # exp's adjoint reads its output: the forward computes it

    g = srcgrad.grad(f)
    g(np.ones(2))
    compiled = g._get()
    assert os.path.exists(compiled.filename)
    assert "def grad_f" in inspect.getsource(compiled.functions[0])
    with pytest.raises(TypeError) as info:
        compiled.functions[0](np.array(["a", "b"]))
    frames = traceback.extract_tb(info.value.__traceback__)
    generated = [fr for fr in frames if fr.filename == compiled.filename]
    assert generated and "np.exp(x)" in generated[-1].line


def test_in_memory_cache_reuses_compiled_code():
    def f(x):
        return np.sum(x)

    a, b = srcgrad.grad(f), srcgrad.grad(f)
    a(np.ones(2))
    b(np.ones(2))
    assert a._get() is b._get()
    assert srcgrad.grad(f, optimize=False)._get() is not a._get()


def test_disk_cache_can_be_turned_off(monkeypatch):
    monkeypatch.setenv("SRCGRAD_CACHE", "0")

    def f(x):
        return np.sum(x * x)

    g = srcgrad.grad(f)
    assert_close(g(np.ones(2)), [2.0, 2.0])
    assert g._get().filename.startswith("<srcgrad:")
    assert "def grad_f" in inspect.getsource(g._get().functions[0])


def test_unwritable_cache_dir_falls_back_to_memory(monkeypatch, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv("SRCGRAD_CACHE_DIR", str(blocker / "sub"))
    monkeypatch.setattr("srcgrad.cache.store._warned", False)

    def f(x):
        return np.sum(x * 3.0)

    with pytest.warns(RuntimeWarning, match="keeping it in memory"):
        g = srcgrad.grad(f)
        assert_close(g(np.ones(2)), [3.0, 3.0])


def test_generated_code_does_not_modify_arguments():
    def f(x):
        y = x
        y *= 2.0
        return np.sum(y)

    x = np.ones(3)
    assert_close(srcgrad.grad(f)(x), [2.0, 2.0, 2.0])
    np.testing.assert_array_equal(x, np.ones(3))


def test_print_and_assert_statements_run_in_the_forward_sweep(capsys):
    def f(x):
        assert x.ndim == 1
        print("shape", x.shape)
        return np.sum(x ** 2)

    assert_close(srcgrad.grad(f)(np.ones(2)), [2.0, 2.0])
    assert "shape (2,)" in capsys.readouterr().out


def test_api_names_exist():
    for name in ("grad", "value_and_grad", "vjp", "show", "stop_gradient", "gradcheck",
                 "SrcGradError", "UnsupportedSyntaxError", "NonDifferentiableError",
                 "MissingRuleError", "GradcheckError"):
        assert hasattr(srcgrad, name), name
    assert api.differentiable_value(1.0) and not api.differentiable_value(1)
