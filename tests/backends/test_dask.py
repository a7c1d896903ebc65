"""Generated gradients on Dask arrays (issue 19): the same code, computed lazily.

The data of an MLP is a chunked Dask array that is never in memory whole;
the weights are NumPy arrays.  ``grad`` builds a Dask graph and computes
nothing (a scheduler that raises proves it); ``dask.compute`` of the
gradients then matches NumPy's to 1e-12, with a peak that does not grow with
the number of rows; and the same runs on a ``dask.distributed`` local
cluster.  The runtime helpers keep Dask arrays Dask arrays, and an exported
module (which carries copies of them) does too.
"""

from __future__ import annotations

import importlib.util
import tracemalloc

import numpy as np
import pytest
from numeric import assert_close, numeric_grad

import srcgrad
from srcgrad import runtime

dask = pytest.importorskip("dask")
da = pytest.importorskip("dask.array")

D, HIDDEN, K = 20, 16, 5


def mlp_loss(W, b, V, c, X, y):
    """Two tanh layers, softmax cross-entropy, the mean over rows; ``y`` is one-hot."""
    h = np.tanh(X @ W + b)
    z = np.tanh(h @ V + c)
    m = np.max(z, axis=1, keepdims=True)
    s = z - m
    lse = np.log(np.sum(np.exp(s), axis=1, keepdims=True))
    return -np.sum(y * (s - lse)) / X.shape[0]


def data(rows, chunk, seed=0):
    """``X`` (rows x D, normal) and one-hot ``y``, made chunk by chunk: nothing whole."""
    rs = da.random.RandomState(seed)
    X = rs.standard_normal((rows, D), chunks=(chunk, D))
    labels = rs.randint(0, K, size=rows, chunks=chunk)
    return X, (labels[:, None] == np.arange(K)).astype(np.float64)


def weights(seed=1):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((D, HIDDEN)) / 4, 0.1 * rng.standard_normal(HIDDEN),
            rng.standard_normal((HIDDEN, K)) / 4, 0.1 * rng.standard_normal(K))


def _forbid(dsk, keys, **kwargs):
    raise AssertionError("srcgrad computed a Dask array while building the gradient")


def lazily(fn, *args):
    """``fn(*args)``, where computing any Dask array raises."""
    with dask.config.set(scheduler=_forbid):
        return fn(*args)


def assert_relative(got, want, rtol=1e-12):
    for g, w in zip(got, want):
        assert type(g) is np.ndarray and g.shape == w.shape and g.dtype == w.dtype
        assert np.max(np.abs(g - w)) <= rtol * np.max(np.abs(w))


def test_mlp_gradient_is_lazy_and_matches_numpy():
    X, y = data(200_000, 25_000)
    params = weights()
    g = srcgrad.grad(mlp_loss, wrt=(0, 1, 2, 3))
    lazy = lazily(g, *params, X, y)
    assert all(isinstance(d, da.Array) for d in lazy)
    assert [d.shape for d in lazy] == [p.shape for p in params]
    got = dask.compute(*lazy, scheduler="threads")
    Xn, yn = dask.compute(X, y, scheduler="threads")
    assert_relative(got, g(*params, Xn, yn))


def test_value_and_grad_and_the_gradient_of_the_data():
    X, y = data(20_000, 5_000)
    params = weights()
    value, grads = lazily(srcgrad.value_and_grad(mlp_loss, wrt=(0, 4)), *params, X, y)
    assert isinstance(value, da.Array) and isinstance(grads[1], da.Array)
    assert grads[1].chunks == X.chunks  # the data's gradient, chunk by chunk
    value, dW, dX = dask.compute(value, *grads, scheduler="threads")
    Xn, yn = dask.compute(X, y, scheduler="threads")
    want_value, (want_dW, want_dX) = srcgrad.value_and_grad(mlp_loss, wrt=(0, 4))(*params, Xn, yn)
    assert abs(value - want_value) <= 1e-12 * abs(want_value)
    assert_relative((dW, dX), (want_dW, want_dX))


def _peak(rows):
    X, y = data(rows, 5_000)
    lazy = lazily(srcgrad.grad(mlp_loss, wrt=(0, 1, 2, 3)), *weights(), X, y)
    tracemalloc.start()
    try:
        dask.compute(*lazy, scheduler="threads", num_workers=2)
        return tracemalloc.get_traced_memory()[1], X.nbytes + y.nbytes
    finally:
        tracemalloc.stop()


def test_the_data_is_never_in_memory_whole():
    small, small_data = _peak(50_000)
    large, large_data = _peak(100_000)
    assert large < large_data
    # twice the rows, twice the data: the peak grows by far less (the graph's own size)
    assert large - small < 0.5 * (large_data - small_data)


def test_on_a_local_distributed_cluster():
    distributed = pytest.importorskip("dask.distributed")
    X, y = data(100_000, 10_000)
    params = weights()
    g = srcgrad.grad(mlp_loss, wrt=(0, 1, 2, 3))
    lazy = lazily(g, *params, X, y)
    with distributed.LocalCluster(processes=False, n_workers=2, threads_per_worker=1,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        got = client.gather(client.compute(list(lazy)))
        Xn, yn = client.gather(client.compute([X, y]))
    assert_relative(got, g(*params, Xn, yn))


def test_gradient_with_respect_to_a_dask_parameter():
    """A Dask parameter gets a Dask gradient of its shape and floating dtype."""
    def loss(w, x):
        return np.sum(np.sin(x * w) ** 2)
    dloss = srcgrad.grad(loss)
    w = da.from_array(np.linspace(0.1, 1.0, 12, dtype=np.float32).reshape(3, 4), chunks=2)
    x = np.linspace(-1.0, 1.0, 4, dtype=np.float32)
    dw = lazily(dloss, w, x)
    assert isinstance(dw, da.Array) and dw.shape == (3, 4) and dw.dtype == np.float32
    np.testing.assert_allclose(dw.compute(), dloss(w.compute(), x), rtol=1e-6)


def pieces(x, w):
    """Indexing with repeated rows, a concatenation and a reshape."""
    z = x @ w
    rows = z[np.array([0, 3, 3, -1])]
    both = np.concatenate([z, 2 * z], axis=-1)
    return np.sum(rows ** 2) + np.sum(np.reshape(both, (-1,)) ** 3)


def test_indexing_concatenation_and_reshape_stay_lazy():
    rng = np.random.default_rng(2)
    xn, wn = rng.standard_normal((40, 4)), rng.standard_normal((4, 3))
    x = da.from_array(xn, chunks=(10, 4))
    g = srcgrad.grad(pieces, wrt=(0, 1))
    dx, dw = lazily(g, x, wn)
    assert isinstance(dx, da.Array) and isinstance(dw, da.Array)
    want = g(xn, wn)
    for got, w in zip(dask.compute(dx, dw, scheduler="sync"), want):
        np.testing.assert_allclose(got, w, rtol=1e-12, atol=1e-12)


def rnn(W, xs, h0):
    """A loop over the rows of an array: ``for x in xs``."""
    h = h0
    for x in xs:
        h = np.tanh(W @ h + x)
    return np.sum(h ** 2)


def test_a_loop_over_the_rows_of_a_dask_array():
    """The rows' cotangents reach ``xs`` (the loop's sequence passed them on for
    NumPy arrays only: a Dask ``xs`` got a zero gradient)."""
    rng = np.random.default_rng(3)
    W, xs, h0 = rng.standard_normal((3, 3)) / 2, rng.standard_normal((5, 3)), np.zeros(3)
    g = srcgrad.grad(rnn, wrt=(0, 1))
    dW, dxs = lazily(g, W, da.from_array(xs, chunks=2), h0)
    want = g(W, xs, h0)
    for got, w in zip(dask.compute(dW, dxs, scheduler="sync"), want):
        np.testing.assert_allclose(got, w, rtol=1e-12, atol=1e-14)


def with_methods(x, w):
    """ndarray methods on a Dask array (the first argument: not a user object
    whose class's methods srcgrad would differentiate)."""
    z = x.dot(w)
    return (z.T ** 2).sum() + z.max(axis=1).sum()


def test_array_methods_of_a_dask_argument():
    rng = np.random.default_rng(4)
    xn, wn = rng.standard_normal((12, 4)), rng.standard_normal((4, 3))
    g = srcgrad.grad(with_methods, wrt=(0, 1))
    dx, dw = lazily(g, da.from_array(xn, chunks=(4, 4)), wn)
    for got, w in zip(dask.compute(dx, dw, scheduler="sync"), g(xn, wn)):
        np.testing.assert_allclose(got, w, rtol=1e-12, atol=1e-14)


def decayed(x, w):
    """A NumPy weight's small reduction scaled by a Dask value."""
    return np.sum(w ** 2) * np.sum(np.tanh(x)) + np.sum(np.sum(w, axis=0) * np.mean(w))


def test_a_numpy_reduction_scaled_by_a_dask_value_stays_lazy():
    rng = np.random.default_rng(5)
    xn, wn = rng.standard_normal((12, 4)), rng.standard_normal((4, 3))
    g = srcgrad.grad(decayed, wrt=(0, 1))
    dx, dw = lazily(g, da.from_array(xn, chunks=(4, 4)), wn)
    assert isinstance(dw, da.Array)
    for got, w in zip(dask.compute(dx, dw, scheduler="sync"), g(xn, wn)):
        np.testing.assert_allclose(got, w, rtol=1e-12, atol=1e-14)


def test_runtime_helpers_keep_dask_arrays():
    x = da.ones((6, 4), chunks=3)
    g = da.arange(24.0, chunks=6).reshape(6, 4)
    gn = np.arange(24.0).reshape(6, 4)
    rows = np.zeros((6, 4))
    rows[1:3] = gn[1:3]
    with dask.config.set(scheduler=_forbid):
        made = [
            (runtime.unbroadcast(g, np.ones(4)), gn.sum(0)),
            (runtime.unbroadcast(g, x[:1]), gn.sum(0, keepdims=True)),
            (runtime.unreduce(2.0, x), np.full((6, 4), 2.0)),
            (runtime.unreduce(g.sum(axis=1), x, 1), np.repeat(gn.sum(1)[:, None], 4, axis=1)),
            (runtime.grad_like(g, np.zeros((6, 4))), gn),
            (runtime.grad_like(0.0, x), np.zeros((6, 4))),
            (runtime.matmul_grad_b(g[:, :2], x, np.ones((4, 2))), np.ones((4, 6)) @ gn[:, :2]),
            (runtime.getitem_grad(g[1:3], x, slice(1, 3)), rows),
            (runtime.extremum_grad(1.0, x.max(), x), np.full((6, 4), 1 / 24)),
            (runtime.zero_tangent(x), np.zeros((6, 4))),
            (runtime.snapshot(x), np.ones((6, 4))),
        ]
        d1, d2 = runtime.grad_like((g, g), (x, x))  # one cotangent, two arguments
    assert d1 is not d2
    assert made[-1][0] is not x
    for value, want in made:
        assert isinstance(value, da.Array)
        np.testing.assert_array_equal(value.compute(scheduler="sync"), want)


def test_an_exported_module_runs_on_dask_arrays(tmp_path):
    g = srcgrad.grad(mlp_loss, wrt=(0, 1, 2, 3))
    path = tmp_path / "mlp_grad.py"
    srcgrad.export(path, g)
    spec = importlib.util.spec_from_file_location("mlp_grad", path)
    exported = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(exported)
    X, y = data(40_000, 10_000)
    params = weights()
    lazy = lazily(exported.grad_mlp_loss, *params, X, y)
    assert all(isinstance(d, da.Array) for d in lazy)
    Xn, yn = dask.compute(X, y, scheduler="threads")
    assert_relative(dask.compute(*lazy, scheduler="threads"), g(*params, Xn, yn))


def moments(x, w):
    """Means, variances and deviations, whole and over each axis, with ddof and keepdims."""
    z = np.tanh(x @ w)
    return (np.mean(z ** 2) + np.var(z, ddof=1) + np.std(z) + np.sum(np.mean(x, axis=0) ** 2)
            + np.sum(np.std(x, axis=1, keepdims=True)) + np.sum(np.var(x, axis=0))
            + np.sum(np.mean(x * x, axis=(0, 1), keepdims=True)) + np.sum(np.mean(x, axis=1) ** 2))


def _moments_data():
    rng = np.random.default_rng(6)
    xn, wn = rng.standard_normal((40, 3)), rng.standard_normal(3)
    return da.from_array(xn, chunks=(10, 3)), wn


@pytest.mark.filterwarnings("error::FutureWarning")  # Dask's "np.size is not implemented"
def test_mean_var_and_std_stay_lazy():
    """Their adjoints divided by np.size(x), which converts a Dask array to NumPy:
    the whole array was computed (the forbidding scheduler raised).  size_of
    reads the Dask array's own size."""
    x, w = _moments_data()
    g = srcgrad.grad(moments, wrt=(0, 1))
    dx, dw = lazily(g, x, w)
    assert isinstance(dx, da.Array) and dx.chunks == x.chunks and isinstance(dw, da.Array)
    want = g(x.compute(scheduler="sync"), w)
    for got, expected in zip(dask.compute(dx, dw, scheduler="sync"), want):
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-14)
    _, tangent = lazily(lambda: srcgrad.jvp(moments, (x, w), (np.ones_like(x), None)))
    assert isinstance(tangent, da.Array)
    _, want_tangent = srcgrad.jvp(moments, (x.compute(), w), (np.ones(x.shape), None))
    np.testing.assert_allclose(tangent.compute(scheduler="sync"), want_tangent, rtol=1e-12)


@pytest.mark.filterwarnings("error::FutureWarning")
def test_unknown_chunk_sizes():
    """A Dask array whose chunk sizes are unknown (rows chosen by a mask, as a
    data frame's values are): its shape holds NaN, which Dask's broadcast_to
    refuses even for its own shape, and its size is NaN; both stay lazy."""
    x, w = _moments_data()
    rows = x[x[:, 0] > -0.3]
    assert np.isnan(rows.shape[0])
    g = srcgrad.grad(moments, wrt=(0, 1))
    dx, dw = lazily(g, rows, w)
    assert isinstance(dx, da.Array) and isinstance(dw, da.Array)
    got = dask.compute(dx, dw, scheduler="sync")
    want = g(rows.compute(scheduler="sync"), w)
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)


def test_size_of_and_broadcast_like():
    x = da.ones((6, 4), chunks=3)
    rows = x[x[:, 0] > 0]
    with dask.config.set(scheduler=_forbid):
        sizes = [runtime.size_of(x), runtime.size_of(rows)]
        spread = runtime.unreduce(np.sum(rows, axis=1), rows, 1)
    assert sizes[0] == 24 and type(sizes[0]) is int
    assert isinstance(sizes[1], da.Array) and sizes[1].compute(scheduler="sync") == 24
    np.testing.assert_array_equal(spread.compute(scheduler="sync"), np.full((6, 4), 4.0))
    numpy_x = np.zeros((2, 3))
    assert runtime.size_of(numpy_x) == np.size(numpy_x) and runtime.size_of([1.0, 2.0]) == 2


def selected_rows(x, keep):
    """Rows chosen by a NumPy boolean mask, as data is filtered."""
    return np.sum(np.tanh(x[keep]) ** 2)


def test_a_numpy_row_mask_stays_lazy():
    """x[keep] with a 1-D NumPy mask: its adjoint scattered with np.add.at, which
    Dask has not (MissingRuleError before); the mask's rows are the integer rows
    np.flatnonzero(keep), which the row scatter places lazily."""
    rng = np.random.default_rng(7)
    xn = rng.standard_normal((12, 3))
    keep = xn[:, 0] > 0
    g = srcgrad.grad(selected_rows)
    dx = lazily(g, da.from_array(xn, chunks=(4, 3)), keep)
    assert isinstance(dx, da.Array)
    np.testing.assert_array_equal(dx.compute(scheduler="sync"), g(xn, keep))


def dask_mask(x):
    return np.sum(x[x > 0] ** 2)


def square_mask(x, keep):
    return np.sum(x[keep] ** 2)


def test_masks_whose_positions_dask_does_not_know_name_the_construct():
    """A Dask mask, or a NumPy mask of several axes (Dask's result then has
    chunks of unknown sizes): a MissingRuleError that says so and names the
    lazy way (np.where), not a raw ValueError from Dask."""
    x = da.from_array(np.linspace(-1.0, 1.0, 12).reshape(4, 3), chunks=2)
    with pytest.raises(srcgrad.MissingRuleError, match=r"boolean mask that is a dask array.*np\.where"):
        lazily(srcgrad.grad(dask_mask), x)
    with pytest.raises(srcgrad.MissingRuleError, match=r"boolean mask of several axes"):
        lazily(srcgrad.grad(square_mask), x, np.ones((4, 3), dtype=bool))
    where = srcgrad.grad(lambda x: np.sum(np.where(x > 0, x, 0.0) ** 2))
    np.testing.assert_array_equal(lazily(where, x).compute(scheduler="sync"),
                                  where(x.compute()))


def tied_extrema(x):
    r = np.round(x)
    return np.max(r * x) + np.sum(np.min(r, axis=0) * x[0])


def test_tied_extrema_share_lazily():
    xn = np.round(np.linspace(-2.0, 2.0, 24).reshape(6, 4), 1)
    g = srcgrad.grad(tied_extrema)
    dx = lazily(g, da.from_array(xn, chunks=3))
    np.testing.assert_allclose(dx.compute(scheduler="sync"), g(xn), rtol=1e-15)


def smallest_two(x):
    return np.sum(np.sort(x, axis=0)[:2] ** 2)


def test_sort_computes_as_the_function_does():
    """Dask has no np.sort: the function itself computes its argument (Dask warns),
    and so does the gradient; the values are NumPy's."""
    xn = np.random.default_rng(8).standard_normal((6, 3))
    g = srcgrad.grad(smallest_two)
    with pytest.warns(FutureWarning, match="numpy.sort"):
        dx = g(da.from_array(xn, chunks=2))
    np.testing.assert_array_equal(np.asarray(dx), g(xn))


def test_numba_backend_runs_the_numpy_code_on_dask_arrays():
    pytest.importorskip("numba")
    x, w = _moments_data()
    g = srcgrad.grad(moments, wrt=(0, 1), backend="numba")
    dx, dw = lazily(g, x, w)
    assert isinstance(dx, da.Array) and "# backend numba: not compiled" in g.source
    want = srcgrad.grad(moments, wrt=(0, 1))(x.compute(), w)
    for got, expected in zip(dask.compute(dx, dw, scheduler="sync"), want):
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-14)


def row_normalised(x):
    """``x[:, None]``-style indices (outside tester: ``a / a.sum(axis=1)[:, None]``):
    Dask's assignment does not take ``None``, so the adjoint of the read scattered
    ``grad[:, None] = g`` into a raw ValueError."""
    s = x / x.sum(axis=1)[:, None]
    t = np.sin(x[None, ..., 0]) + x[..., None][:, 1:, 0].sum()
    total = 0.0
    for i in range(2):  # a loop, an int and None together
        total = total + np.sum(x[i, None] ** 2)
    return (np.sum(s ** 2) + np.sum(t * x[None][0, :, :1].T) + total
            + np.sum(x[..., :2] * x[:, None, 1:][:, 0]))


def by_columns(x):
    """Indices that leave the rows whole."""
    return np.sum(x / x.sum(axis=1)[:, None]) + np.sum(x[..., None, 1] ** 2 * x[None, :, 0].T)


@pytest.mark.parametrize("fn", [row_normalised, by_columns])
def test_newaxis_and_ellipsis_indices_on_dask(fn):
    rng = np.random.default_rng(7)
    xn = rng.standard_normal((6, 3)) + 3.0
    x = da.from_array(xn, chunks=(2, 3))
    g = srcgrad.grad(fn)
    got = lazily(g, x)
    assert isinstance(got, da.Array)
    np.testing.assert_allclose(got.compute(scheduler="sync"), g(xn), rtol=1e-12, atol=1e-14)
    assert_close(g(xn), numeric_grad(fn, [xn], 0), what="NumPy gradient")
    t = rng.standard_normal(xn.shape)
    value, tangent = lazily(srcgrad.jvp(fn), x, da.from_array(t, chunks=(2, 3)))
    want_value, want_tangent = srcgrad.jvp(fn)(xn, t)
    np.testing.assert_allclose(tangent.compute(scheduler="sync"), want_tangent, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(value), want_value, rtol=1e-12)
    assert want_value == fn(xn)
