"""Generated gradients on CuPy arrays (issue 19): the same code, on the GPU.

Each test runs twice: on CuPy, skipped where CuPy is not installed or no GPU
is present, and on :mod:`strict_arrays`, a stand-in that follows CuPy's rules
(no NumPy operands, no conversion to NumPy) on any machine.  The gradient of
an MLP whose weights and data are such arrays is a tuple of arrays of the
same library (never copied to the host behind the caller's back: the
conversion raises, so a helper that tried would fail), fresh, of the
parameters' dtypes, and equal to NumPy's to 1e-12 in float64.
"""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest
import strict_arrays

import srcgrad
from srcgrad import runtime


def _has_gpu(cupy) -> bool:
    try:
        return cupy.cuda.runtime.getDeviceCount() > 0
    except (RuntimeError, ImportError, OSError):  # no driver, no device (CUDARuntimeError)
        return False


@pytest.fixture(params=["cupy", "strict"])
def cp(request):
    """The array module: CuPy where it and a GPU are, else skipped; or the stand-in."""
    if request.param == "strict":
        return strict_arrays
    cupy = pytest.importorskip("cupy")
    if not _has_gpu(cupy):
        pytest.skip("CuPy is installed but no GPU is present")
    return cupy


D, HIDDEN, K = 20, 16, 5


def mlp_loss(W, b, V, c, X, y):
    """Two tanh layers, softmax cross-entropy, the mean over rows; ``y`` is one-hot."""
    h = np.tanh(X @ W + b)
    z = np.tanh(h @ V + c)
    m = np.max(z, axis=1, keepdims=True)
    s = z - m
    lse = np.log(np.sum(np.exp(s), axis=1, keepdims=True))
    return -np.sum(y * (s - lse)) / X.shape[0]


def host_arguments(rows=20_000, dtype=np.float64, seed=0):
    rng = np.random.default_rng(seed)
    args = (rng.standard_normal((D, HIDDEN)) / 4, 0.1 * rng.standard_normal(HIDDEN),
            rng.standard_normal((HIDDEN, K)) / 4, 0.1 * rng.standard_normal(K),
            rng.standard_normal((rows, D)), np.eye(K)[rng.integers(0, K, rows)])
    return tuple(a.astype(dtype) for a in args)


def test_mlp_gradient_stays_on_the_device_and_matches_numpy(cp):
    host = host_arguments()
    device = tuple(cp.asarray(a) for a in host)
    g = srcgrad.grad(mlp_loss, wrt=(0, 1, 2, 3))
    got = g(*device)
    want = g(*host)
    for d, p, w in zip(got, device, want):
        assert isinstance(d, cp.ndarray) and d.shape == p.shape and d.dtype == p.dtype
        assert d.data.ptr != p.data.ptr  # a fresh array, not the parameter
        d = cp.asnumpy(d)
        assert np.max(np.abs(d - w)) <= 1e-12 * np.max(np.abs(w))


def test_value_and_grad_in_float32(cp):
    host = host_arguments(dtype=np.float32)
    device = tuple(cp.asarray(a) for a in host)
    value, grads = srcgrad.value_and_grad(mlp_loss, wrt=(0, 4))(*device)
    want_value, want = srcgrad.value_and_grad(mlp_loss, wrt=(0, 4))(*host)
    assert abs(float(value) - float(want_value)) <= 1e-5 * abs(float(want_value))
    for d, w in zip(grads, want):
        assert isinstance(d, cp.ndarray) and d.dtype == np.float32
        np.testing.assert_allclose(cp.asnumpy(d), w, rtol=1e-4, atol=1e-6)


def test_gradients_are_fresh_arrays(cp):
    """One cotangent reaching two arguments gives two arrays, neither the caller's."""
    def loss(a, b):
        return np.sum(a + b)
    a, b = cp.ones(3), cp.ones(3)
    ga, gb = srcgrad.grad(loss, wrt=(0, 1))(a, b)
    ga[0] = 5.0
    assert float(gb[0]) == 1.0 and float(a[0]) == 1.0


def test_runtime_helpers_keep_cupy_arrays(cp):
    x = cp.ones((6, 4))
    g = cp.arange(24.0).reshape(6, 4)
    gn = np.arange(24.0).reshape(6, 4)
    rows = np.zeros((6, 4))
    rows[1:3] = gn[1:3]
    cases = [
        (runtime.unbroadcast(g, cp.ones(4)), gn.sum(0)),
        (runtime.unreduce(2.0, x), np.full((6, 4), 2.0)),
        (runtime.unreduce(g.sum(axis=1), x, 1), np.repeat(gn.sum(1)[:, None], 4, axis=1)),
        (runtime.grad_like(0.0, x), np.zeros((6, 4))),
        (runtime.matmul_grad_b(g[:, :2], x, cp.ones((4, 2))), np.ones((4, 6)) @ gn[:, :2]),
        (runtime.getitem_grad(g[1:3], x, slice(1, 3)), rows),
        (runtime.extremum_grad(1.0, x.max(), x), np.full((6, 4), 1 / 24)),
        (runtime.zero_tangent(x), np.zeros((6, 4))),
        (runtime.snapshot(x), np.ones((6, 4))),
    ]
    for value, want in cases:
        assert isinstance(value, cp.ndarray)
        np.testing.assert_array_equal(cp.asnumpy(value), want)


def test_an_exported_module_runs_on_cupy_arrays(cp, tmp_path):
    g = srcgrad.grad(mlp_loss, wrt=(0, 1, 2, 3))
    path = tmp_path / "mlp_grad.py"
    srcgrad.export(path, g)
    spec = importlib.util.spec_from_file_location("mlp_grad", path)
    exported = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(exported)
    host = host_arguments(rows=2_000)
    got = exported.grad_mlp_loss(*(cp.asarray(a) for a in host))
    for d, w in zip(got, g(*host)):
        assert isinstance(d, cp.ndarray)
        np.testing.assert_allclose(cp.asnumpy(d), w, rtol=1e-12, atol=1e-15)
