"""Writes through an index, ``y[index] = v`` and ``y[index] += v``, whose
gradients were silently wrong (runtime/indexing.py: written_cotangent,
written_tangent).

* An integer array (or several) may name an element twice: NumPy keeps the
  last write (``y[[1, 1, 3]] = v`` leaves ``v[1]`` at ``y[1]``), so the earlier
  writes get no cotangent.  ``y[idx] += v`` is NumPy's buffered
  ``y[idx] = y[idx] + v``: the old element counts once and only the last
  ``v`` there reaches it.  The same for ``-=``, ``*=``, ``/=``, an embedding
  update with a repeated token, two integer arrays, integer arrays beside
  slices, a scalar or a row written to several places, negative indices that
  name the same element as positive ones; boolean masks (no repeats) and
  indices without repeats stay as they were.
* A value stored into an integer or bool array is truncated (piecewise
  constant): no derivative flows through it, in either mode.

Each function runs under every policy with ``check=True`` (the value bit for
bit the function's own); gradients are checked against central differences
and the hand-computed derivatives of the reproductions, forward mode against
central differences along a random direction.  autograd has no element
assignment, so it is no oracle here.
"""

from __future__ import annotations

import numpy as np
import pytest
from numeric import POLICIES, assert_bit_identical, assert_close, jvp_fd, numeric_grad, pure

import srcgrad
from srcgrad.runtime.indexing import last_writes, written_cotangent

RNG = np.random.default_rng(2024)
X4 = np.array([1.0, 2.0, 3.0, 4.0])
V3 = np.array([10.0, 20.0, 30.0])
A = RNG.standard_normal((3, 4))
IDS = np.array([2, 0, 2, 1, 2])
MASK = np.array([True, False, True, True])


def rep_set(x, v):
    y = x.copy()
    y[[1, 1, 3]] = v
    return np.sum(y ** 2)


def rep_iadd(x, v):
    y = x.copy()
    y[[0, 0]] += v
    return np.sum(y ** 2)


def rep_isub(x, v):
    y = x * 1.5
    y[[2, 0, 2]] -= v
    return np.sum(np.sin(y) * x)


def rep_imul(x, v):
    y = x.copy()
    y[[3, 3, 1]] *= v
    return np.sum(y ** 3)


def rep_idiv(x, v):
    y = x + 2.0
    y[[1, 2, 1]] /= v
    return np.sum(np.tanh(y) * x)


def embedding_update(E, g):
    E = E.copy()
    E[IDS] -= 0.1 * g
    return np.sum(E ** 2)


def two_arrays(A, v):
    B = A.copy()
    B[[0, 1, 1], [2, 0, 0]] = v
    return np.sum(np.sin(B) * A)


def two_arrays_iadd(A, v):
    B = A * 2.0
    B[[0, 1, 1, 0], [2, 0, 0, -2]] += v
    return np.sum(B ** 2)


def rows_and_slice(A, V):
    B = A.copy()
    B[[0, 2, 0], 1:3] = V
    return np.sum(B ** 2 * A)


def slice_and_columns(A, V):
    B = A.copy()
    B[1:, [0, 3, 0]] += V
    return np.sum(np.cos(B))


def scalar_to_several(x, s):
    y = x.copy()
    y[[1, 1, 2]] = s
    return np.sum(y ** 2 * x)


def row_to_several(A, r):
    B = A.copy()
    B[[0, 0, 2]] = r
    return np.sum(B ** 2 * A)


def negative_alias(x, v):
    y = x[:3].copy()
    y[[1, -2]] = v
    return np.sum(y ** 2)


def negative_alias_iadd(x, v):
    y = x[:3].copy()
    y[[1, -2]] += v
    return np.sum(y ** 2)


def masked(x, v):
    y = x.copy()
    y[MASK] = v
    return np.sum(y ** 2)


def masked_iadd(x, v):
    y = x.copy()
    y[MASK] += v
    return np.sum(np.sin(y))


def mask_and_ints(A, v):
    B = A.copy()
    B[np.array([True, False, False]), [1, 1]] = v
    return np.sum(B ** 2)


def no_repeats(x, v):
    y = x.copy()
    y[[3, 0, 1]] = v
    return np.sum(y ** 2 * x)


def in_loop(x, v):
    y = x.copy()
    for t in range(3):
        y[[0, 2, 0]] += v * (t + 1.0)
        y = np.sin(y)
    return np.sum(y ** 2)


def in_loop_set(x, v):
    y = x * 1.0
    s = 0.0
    for t in range(3):
        y[[t, t, 3]] = v * (t + 0.5)
        s = s + np.sum(y * x)
    return s


def fortran_order(x, V):
    y = x.copy()
    y[IDX_F] = V.T  # NumPy writes in the memory order of the index and the value here
    return np.sum(y ** 2)


IDX_F = np.asfortranarray(np.array([[0, 1], [1, 0], [2, 2]]))

CASES = [
    (rep_set, (X4, V3)),
    (rep_iadd, (X4, V3[:2])),
    (rep_isub, (X4, V3 * 0.01)),
    (rep_imul, (X4, np.array([0.5, -1.5, 2.0]))),
    (rep_idiv, (X4, np.array([1.5, 2.5, 3.5]))),
    (embedding_update, (RNG.standard_normal((3, 2)), RNG.standard_normal((5, 2)))),
    (two_arrays, (A, V3 * 0.1)),
    (two_arrays_iadd, (A, np.array([0.1, 0.2, 0.3, 0.4]))),
    (rows_and_slice, (A, RNG.standard_normal((3, 2)))),
    (slice_and_columns, (A, RNG.standard_normal((2, 3)))),
    (scalar_to_several, (X4, 0.7)),
    (row_to_several, (A, RNG.standard_normal(4))),
    (negative_alias, (X4, np.array([5.0, 7.0]))),
    (negative_alias_iadd, (X4, np.array([5.0, 7.0]))),
    (masked, (X4, V3 * 0.1)),
    (masked_iadd, (X4, V3 * 0.1)),
    (mask_and_ints, (A, np.array([0.3, 0.9]))),
    (no_repeats, (X4, V3)),
    (in_loop, (X4 * 0.1, np.array([0.2, 0.3, 0.4]))),
    (in_loop_set, (X4, np.array([0.2, 0.3, 0.4]))),
    (fortran_order, (X4, RNG.standard_normal((2, 3)))),
]


def _ids(case):
    return case[0].__name__


@pytest.mark.parametrize("case", CASES, ids=_ids)
@pytest.mark.parametrize("policy", POLICIES, ids=repr)
def test_gradient_is_central_differences(case, policy):
    fn, args = case
    value, grads = srcgrad.value_and_grad(fn, wrt=(0, 1), policy=policy, check=True)(*args)
    assert_bit_identical(value, pure(fn)(*args), fn.__name__)
    for k in (0, 1):
        assert_close(grads[k], numeric_grad(pure(fn), list(args), k), rtol=1e-5, atol=1e-6,
                     what=f"{fn.__name__}, argument {k}, policy {policy!r}")


@pytest.mark.parametrize("case", CASES, ids=_ids)
def test_forward_mode_is_central_differences(case):
    fn, args = case
    rng = np.random.default_rng(7)
    directions = tuple(rng.standard_normal(np.shape(a)) if np.ndim(a) else 0.8 for a in args)
    value, tangent = srcgrad.jvp(fn, args, directions)
    assert_bit_identical(value, pure(fn)(*args), fn.__name__)
    assert_close(tangent, jvp_fd(pure(fn), list(args), (0, 1), directions), rtol=1e-5,
                 atol=1e-6, what=fn.__name__)


def test_the_reproductions_have_their_derivatives():
    assert_close(srcgrad.grad(rep_set, wrt=1)(X4, V3), [0.0, 40.0, 60.0])
    gx, gv = srcgrad.grad(rep_iadd, wrt=(0, 1))(X4, V3[:2])
    assert_close(gx, [42.0, 4.0, 6.0, 8.0])
    assert_close(gv, [0.0, 42.0])
    _, t = srcgrad.jvp(rep_set, (X4, V3), (None, np.array([1.0, 0.0, 0.0])))
    assert t == 0.0


def emb_update(E, ids, g):
    E = E.copy()
    E[ids] -= 0.1 * g
    return np.sum(E ** 2)


def test_an_embedding_update_with_a_repeated_token():
    E, ids, g = np.ones((3, 1)), np.array([2, 2]), np.array([[1.0], [3.0]])
    assert_close(srcgrad.grad(emb_update)(E, ids, g).ravel(), [2.0, 2.0, 1.4])
    assert_close(srcgrad.grad(emb_update, wrt=2)(E, ids, g).ravel(), [0.0, -0.14])


def int_store(x):
    y = np.zeros(3, dtype=int)
    y[0] = x * 2.7
    return y[0] + x


def int_store_like(x, idx):
    y = np.zeros_like(idx)
    y[1] = x[1] * 3.3
    return np.sum(y * x)


def bool_store(x):
    m = np.zeros(3, dtype=bool)
    m[[0, 2]] = x[:2]
    return np.sum(np.where(m, x, 0.0)) + np.sum(m * x)


def int_store_in_loop(x):
    counts = np.zeros(3, dtype=np.int32)
    s = 0.0
    for i in range(3):
        counts[i] = x[i] * 10.0
        s = s + counts[i] * x[i]
    return s


def float_store(x):
    y = np.zeros(3, dtype=np.float32)
    y[0] = x * 2.7
    return y[0] + x


@pytest.mark.parametrize("policy", POLICIES, ids=repr)
def test_a_store_into_an_integer_array_cuts_the_derivative(policy):
    grad = srcgrad.grad(int_store, policy=policy)
    assert grad(0.9) == 1.0
    assert srcgrad.jvp(int_store, (0.9,), (1.0,))[1] == 1.0
    x, idx = np.array([0.5, 0.2, -1.0]), np.array([1, 2, 3])
    assert_close(srcgrad.grad(int_store_like, policy=policy)(x, idx), [0.0, 0.0, 0.0])
    assert_close(srcgrad.grad(int_store_like, policy=policy)(x * 2, idx), [0.0, 1.0, 0.0])
    x = np.array([0.33, -0.27, 0.74])
    for fn in (bool_store, int_store_in_loop):
        _, g = srcgrad.value_and_grad(fn, policy=policy, check=True)(x)
        assert_close(g, numeric_grad(fn, [x], 0), what=fn.__name__)
        _, t = srcgrad.jvp(fn, (x,), (np.array([1.0, -2.0, 0.5]),))
        assert_close(t, jvp_fd(fn, [x], (0,), (np.array([1.0, -2.0, 0.5]),)), what=fn.__name__)


def test_a_store_into_a_float32_array_keeps_the_derivative():
    assert_close(srcgrad.grad(float_store)(0.9), 3.7)
    assert_close(srcgrad.jvp(float_store, (0.9,), (1.0,))[1], 3.7)


@pytest.mark.parametrize("index, shape", [
    ([1, 1, 3], (6,)),
    ([1, -5, 3, -3], (6,)),
    (np.array([[0, 5], [5, 0]]), (6,)),
    (np.asfortranarray([[0, 5], [5, 0], [2, 2]]), (6,)),
    (([0, 1, 1], [2, 0, 0]), (3, 4)),
    (([0, 1, 1], slice(1, 3)), (3, 4)),
    ((slice(None), [3, 3, -1]), (3, 4)),
    ((0, slice(None), [1, 1]), (2, 3, 4)),
    (([1, 1], slice(None), [1, 1]), (2, 3, 4)),
    ((Ellipsis, [2, 2, 0]), (2, 3, 4)),
    ((None, [1, 1]), (3, 4)),
    ((np.array([True, False, True]), [1, 1]), (3, 4)),
    (np.array([True, False, True]), (3, 4)),
    ([4, 3, 2], (6,)),
])
def test_last_writes_is_what_numpy_keeps(index, shape):
    """The writes kept are those NumPy keeps: distinct values written and read back."""
    y = np.zeros(shape)
    n = y[index].size
    for written in (np.arange(1.0, n + 1).reshape(y[index].shape),
                    np.asfortranarray(np.arange(1.0, n + 1).reshape(y[index].shape))):
        y[index] = written
        truth = y[index] == written
        kept = last_writes(y, index, written.shape, written)
        if truth.all():
            assert kept is None or kept.all()
        else:
            np.testing.assert_array_equal(kept, truth)
        g = RNG.standard_normal(shape)
        np.testing.assert_array_equal(written_cotangent(g, y, index, written),
                                      np.where(truth, g[index], 0.0))


def test_an_index_without_repeats_is_decided_without_a_probe():
    assert last_writes(np.zeros(10 ** 9, dtype=np.int8), np.array([5, 3, 9]), (3,)) is None
    assert last_writes(np.zeros(4), np.array([], dtype=np.intp), (0,)) is None


def test_dask_arrays_keep_the_last_write_lazily():
    da = pytest.importorskip("dask.array")
    x, v = da.from_array(X4, chunks=2), da.from_array(V3, chunks=2)
    g = srcgrad.grad(rep_set, wrt=1)(x, v)
    assert_close(np.asarray(g), [0.0, 40.0, 60.0])


HESSIAN_CASES = [c for c in CASES if c[0] in (rep_set, rep_iadd, rep_imul, two_arrays, rows_and_slice,
                                             scalar_to_several, negative_alias_iadd, masked)]


@pytest.mark.parametrize("case", HESSIAN_CASES, ids=_ids)
def test_second_derivatives_keep_the_last_write(case):
    """hessian differentiates the forward-mode code again, whose tangent store
    ``d_y[index] = written_tangent(d_v, y)`` has the same repeats."""
    fn, args = case
    args = [np.asarray(a, dtype=np.float64) for a in args]
    for k in (0, 1):
        h = srcgrad.hessian(fn, wrt=k)(*args)
        g = srcgrad.grad(fn, wrt=k)
        eps, x = 1e-6, args[k]
        expected = np.zeros(np.shape(x) * 2)
        for pos in np.ndindex(np.shape(x)):
            step = np.zeros(np.shape(x))
            step[pos] = eps
            plus, minus = list(args), list(args)
            plus[k], minus[k] = x + step, x - step
            expected[(...,) + pos] = (g(*plus) - g(*minus)) / (2 * eps)
        assert_close(np.reshape(h, expected.shape), expected, rtol=1e-5, atol=1e-6,
                     what=f"{fn.__name__}, argument {k}")


def test_the_reproduction_has_its_hessian():
    np.testing.assert_array_equal(srcgrad.hessian(rep_set, wrt=1)(X4, V3), np.diag([0.0, 2.0, 2.0]))
    assert srcgrad.hessian(int_store)(0.9) == 0.0


def set_at(x, idx, v):
    y = x.copy()
    y[idx] = v
    return np.sum(y ** 2)


def test_dask_arrays_written_through_a_numpy_index():
    da = pytest.importorskip("dask.array")
    x, v = da.from_array(np.arange(5.0), chunks=2), da.from_array(np.array([1.0, 2.0, 3.0]), chunks=2)
    for idx, dx, dv in ((np.array([1, 3, 4]), [0, 0, 4, 0, 0], [2, 4, 6]),
                        (np.array([1, 1, 4]), [0, 0, 4, 6, 0], [0, 4, 6])):
        gx, gv = srcgrad.grad(set_at, wrt=(0, 2))(x, idx, v)
        assert_close(np.asarray(gx), dx)
        assert_close(np.asarray(gv), dv)


def test_a_lazy_dask_index_is_refused_with_a_reason():
    da = pytest.importorskip("dask.array")
    x, v = da.from_array(np.arange(5.0), chunks=2), da.from_array(np.array([1.0, 2.0, 3.0]), chunks=2)
    with pytest.raises(srcgrad.errors.MissingRuleError, match="idx.compute"):
        srcgrad.grad(set_at, wrt=(0, 2))(x, da.from_array(np.array([1, 1, 4])), v)
