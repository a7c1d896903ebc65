"""Reads of a Dask array through an integer index array that is not sorted:
the cotangent goes back to the rows the index names, in its order.

``np.sum(H[np.array([3, 1])] * w)`` gave the gradient ``[0, w[1], 0, w[0]]``
on Dask (outside tester, session 29; NumPy gives ``[0, w[1], 0, w[0]]`` the
other way round), the value right: Dask has no ``np.add.at``, and the runtime's
stand-in (``runtime.indexing._scatter_rows``) wrote the cotangent's rows to
the index's rows sorted (``np.unique``) in the index's own order.  Each
program below is checked on Dask under every policy: the value bit for bit
against the function's own on the same Dask array, the gradient against
central differences (and autograd where it runs), the tangent likewise; and
hvp against differences of the NumPy gradient."""

from __future__ import annotations

import numpy as np
import pytest
from numeric import assert_bit_identical, assert_close, jvp_fd, numeric_grad, pure

import srcgrad

da = pytest.importorskip("dask.array")

POLICIES = ["save", "recompute", "sqrt", ("revolve", 2)]
W = np.array([1.0, 2.0, -0.5, 3.0])
X = np.array([0.5, -1.0, 2.0, 0.3])
PERM = np.array([2, 3, 0, 1])


def unsorted(H):  # the tester's program: gradient [0, 2, 0, 1]
    return np.sum(H[np.array([3, 1])] * np.array([1.0, 2.0]))


def repeated_unsorted(H):
    return np.sum(H[np.array([3, 1, 3, 0])] * W)


def negative(H):
    return np.sum(np.sin(H[np.array([-1, 1, -4])]) * W[:3])


def rows_2d(x):
    Y = x.reshape(4, 2)
    return np.sum(Y[np.array([2, 0, 3])] * np.array([[1.0, -1.0], [2.0, 0.5], [3.0, 1.5]]))


def index_argument(H, idx):  # a shuffled minibatch: X[perm]
    return np.sum(H[idx] ** 2 * W)


def rows_swapped(x):  # H[idx] = H[idx2] * 2.0
    H = x * 1.0
    H[np.array([0, 2])] = H[np.array([3, 0])] * 2.0
    return np.sum(H * W)


def in_a_loop(x):
    s = 0.0
    H = x * 1.0
    for k in range(3):
        if k % 2:
            H[np.array([1, 3])] = H[np.array([3, 1])] * 2.0
        else:
            s = s + np.sum(H[np.array([3, 0, 2])] * W[:3])
        s = s + np.sum(H[np.array([2, 0, 2])] * W[:3]) * (k + 1)
    return s


def _take(H, idx):
    return H[idx]


def in_a_helper(x):
    return np.sum(np.tanh(_take(x, np.array([3, 0, 1]))) * W[:3])


PROGRAMS = [(unsorted, (X,)), (repeated_unsorted, (X,)), (negative, (X,)),
            (rows_2d, (np.linspace(-1.0, 1.1, 8),)), (index_argument, (X, PERM)),
            (rows_swapped, (X,)), (in_a_loop, (X,)), (in_a_helper, (X,))]
IDS = [fn.__name__ for fn, _ in PROGRAMS]


def _dask(args):
    return (da.from_array(args[0], chunks=2),) + args[1:]


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize(("fn", "args"), PROGRAMS, ids=IDS)
def test_dask_gradient_of_an_unsorted_index(fn, args, policy):
    lazy = _dask(args)
    value, grad = srcgrad.value_and_grad(fn, policy=policy)(*lazy)
    assert isinstance(grad, da.Array)
    assert_bit_identical(np.asarray(value), np.asarray(fn(*lazy)), f"{fn.__name__} on Dask")
    assert_close(np.asarray(value), pure(fn)(*args), rtol=1e-14, what=fn.__name__)  # Dask sums by chunk
    assert_close(np.asarray(grad), numeric_grad(pure(fn), list(args), 0), rtol=1e-6,
                 atol=1e-8, what=f"{fn.__name__} gradient on Dask, policy {policy!r}")


@pytest.mark.parametrize(("fn", "args"), PROGRAMS, ids=IDS)
def test_dask_tangent_and_hvp_of_an_unsorted_index(fn, args):
    lazy = _dask(args)
    direction = np.linspace(0.5, 1.5, args[0].size)
    value, tangent = srcgrad.jvp(fn, wrt=[0])(*lazy, direction)
    assert_bit_identical(np.asarray(value), np.asarray(fn(*lazy)), f"{fn.__name__} jvp")
    assert_close(np.asarray(tangent), jvp_fd(pure(fn), list(args), [0], [direction]),
                 rtol=1e-6, atol=1e-8, what=f"{fn.__name__} tangent on Dask")
    hv = srcgrad.hvp(fn)(*lazy, direction)
    grad = srcgrad.grad(fn)
    eps = 1e-6
    fd = (grad(args[0] + eps * direction, *args[1:])
          - grad(args[0] - eps * direction, *args[1:])) / (2 * eps)
    assert_close(np.asarray(hv), fd, rtol=1e-5, atol=1e-6, what=f"{fn.__name__} hvp on Dask")


def test_dask_unsorted_rows_exact():
    got = srcgrad.grad(unsorted)(da.from_array(X, chunks=2))
    np.testing.assert_array_equal(np.asarray(got), [0.0, 2.0, 0.0, 1.0])
    got = srcgrad.grad(index_argument)(da.from_array(X, chunks=2), PERM)
    np.testing.assert_array_equal(np.asarray(got), srcgrad.grad(index_argument)(X, PERM))


def test_dask_data_shuffled_with_numpy_weights():
    """The data a Dask array, the weights NumPy: the gradient of the data (the
    cotangent a Dask array scattered into NumPy's zeros) and of the weights."""
    def model(h, data):
        Y = data * h
        return np.sum(Y[np.array([3, 1])] * np.array([1.0, 2.0])[:, None])

    h, data = np.array([0.5, 2.0]), np.arange(8.0).reshape(4, 2)
    for wrt in (0, 1):
        got = srcgrad.grad(model, wrt=wrt)(h, da.from_array(data, chunks=2))
        assert_close(np.asarray(got), numeric_grad(model, [h, data], wrt), rtol=1e-6,
                     atol=1e-8, what=f"model, argument {wrt}")


def test_autograd_agrees_on_numpy():
    autograd = pytest.importorskip("autograd")
    anp = pytest.importorskip("autograd.numpy")

    def plain(H):  # repeated_unsorted and negative, in autograd's NumPy
        return (anp.sum(H[np.array([3, 1, 3, 0])] * W)
                + anp.sum(anp.sin(H[np.array([-1, 1, -4])]) * W[:3]))

    def ours(H):
        return repeated_unsorted(H) + negative(H)

    assert_close(np.asarray(srcgrad.grad(ours)(da.from_array(X, chunks=2))),
                 autograd.grad(plain)(X), rtol=1e-12, what="autograd")
