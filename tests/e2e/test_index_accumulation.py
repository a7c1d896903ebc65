"""Indexing adjoints accumulated in place (issue 16, item 5; optimize/accumulate.py).

Loops that index the array being differentiated -- over rows, ``for x in X``,
a 1-D convolution over slices, repeated integer indices, boolean masks,
nested loops, branches -- run under every policy with ``check=True`` (the
value bit for bit the function's own).  Each gradient is checked against
central finite differences and, bit for bit, against the code without the
pass (``optimize=False``): the pass adds the same terms in the same order,
element by element, so no tolerance is needed.  Where the generated code must
use the buffer, the source says so; where it must not (the soundness
conditions of the pass), it keeps the plain sums.
"""

from __future__ import annotations

import numpy as np
import pytest
from numeric import POLICIES, assert_bit_identical, assert_close, numeric_grad, pure

import srcgrad

RNG = np.random.default_rng(16)
X = RNG.standard_normal((7, 3))
W = RNG.standard_normal(3)
SIGNAL = RNG.standard_normal(20)
KERNEL = RNG.standard_normal(4)
IDX = np.array([0, 3, 3, -1, 5, 0, 3])
MASK = np.array([True, False, True, True, False, False, True])


def rows(X, w):
    s = 0.0
    for i in range(X.shape[0]):
        s = s + np.tanh(X[i] @ w)
    return s


def each_row(X, w):
    s = 0.0
    for x in X:
        s = s + np.sum(np.sin(x * w))
    return s


def conv(x, w):
    k = w.shape[0]
    s = 0.0
    for i in range(x.shape[0] - k + 1):
        s = s + np.tanh(x[i:i + k] @ w)
    return s


def repeated(X, w):
    s = 0.0
    for j in range(3):
        s = s + np.sum(np.tanh(X[IDX] @ w) * (j + 1))
    return s


def masked(X, w):
    s = 0.0
    for j in range(2):
        s = s + np.sum(np.cos(X[MASK] * w) * (j + 0.5))
    return s


def nested(X, w):
    s = 0.0
    for i in range(X.shape[0]):
        for j in range(X.shape[1]):
            s = s + np.sin(X[i, j] * w[j])
    return s


def branches(X, w):
    s = 0.0
    for i in range(X.shape[0]):
        if i % 2 == 0:
            s = s + np.tanh(X[i] @ w)
        else:
            s = s + np.sum(X[i, 1:] ** 2)
    return s


def also_whole(X, w):
    s = np.sum(X ** 2) * 0.5
    for i in range(X.shape[0]):
        s = s + np.tanh(X[i] @ w) + X[i, 0]
    return s * np.sum(X)


def local_array(X, w):
    Y = np.sin(X) * 2.0
    s = 0.0
    for i in range(Y.shape[0]):
        s = s + np.tanh(Y[i] @ w)
    return s


def rebound_in_loop(X, w):
    Y = X * 1.0
    s = 0.0
    for i in range(3):
        s = s + np.sum(Y[i] * w)
        Y = np.sin(Y)
    return s


def recurrent(X, w):
    h = np.zeros(3)
    for t in range(X.shape[0]):
        h = np.tanh(X[t] * w + h * 0.5)
    return np.sum(h)


def while_rows(X, w):
    s = 0.0
    i = 0
    while i < X.shape[0]:
        s = s + np.tanh(X[i] @ w)
        i = i + 1
    return s


BUFFERED = [rows, each_row, conv, repeated, masked, nested, branches, also_whole, local_array,
            recurrent, while_rows]


def _args(fn):
    return (SIGNAL, KERNEL) if fn is conv else (X, W)


def _grads(fn, args, **options):
    value, grads = srcgrad.value_and_grad(fn, wrt=(0, 1), check=True, **options)(*args)
    return value, grads


@pytest.mark.parametrize("fn", BUFFERED + [rebound_in_loop], ids=lambda f: f.__name__)
@pytest.mark.parametrize("policy", POLICIES, ids=repr)
def test_gradient_is_the_plain_sums_and_finite_differences(fn, policy):
    args = _args(fn)
    value, grads = _grads(fn, args, policy=policy)
    assert_bit_identical(value, pure(fn)(*args), fn.__name__)
    _, plain = _grads(fn, args, policy=policy, optimize=False)
    assert_bit_identical(grads, plain, f"{fn.__name__}, policy {policy!r}")
    for k in (0, 1):
        assert_close(grads[k], numeric_grad(pure(fn), list(args), k), rtol=1e-5, atol=1e-6,
                     what=f"{fn.__name__}, argument {k}, policy {policy!r}")


@pytest.mark.parametrize("fn", BUFFERED, ids=lambda f: f.__name__)
def test_the_buffer_is_made_once(fn):
    source = srcgrad.grad(fn, wrt=(0, 1)).source
    assert "cotangent_buffer(" in source and "scatter_add(" in source, source
    assert "getitem_grad(" not in source.split("# Adjoint sweep")[1].split("for ")[1]


def test_a_cotangent_rebound_in_the_loop_keeps_the_plain_sums():
    # d_Y is reset after each iteration's adjoint of Y = np.sin(Y): not owned from the start
    source = srcgrad.grad(rebound_in_loop).source
    assert "scatter_add" not in source


@pytest.mark.parametrize("dtype", [np.float32, np.complex128])
def test_dtypes(dtype):
    def f(X, w):
        s = 0.0
        for i in range(X.shape[0]):
            s = s + np.abs(np.sum(X[i] * w)) ** 2
        return s
    Xd = (X + (1j * X[::-1] if dtype is np.complex128 else 0)).astype(dtype)
    Wd = W.astype(dtype)
    grads = srcgrad.grad(f, wrt=(0, 1))(Xd, Wd)
    plain = srcgrad.grad(f, wrt=(0, 1), optimize=False)(Xd, Wd)
    assert "scatter_add" in srcgrad.grad(f, wrt=(0, 1)).source
    assert grads[0].dtype == dtype
    assert_bit_identical(grads, plain, str(dtype))


def test_float32_array_and_float64_cotangent():
    # the cotangent reaching X[i] is float64 (w is): it is cast to float32 before
    # it is added, as getitem_grad's zeros cast it
    X32 = X.astype(np.float32)
    grads = srcgrad.grad(rows, wrt=(0, 1))(X32, W)
    plain = srcgrad.grad(rows, wrt=(0, 1), optimize=False)(X32, W)
    assert_bit_identical(grads, plain)


def test_a_list_of_rows_keeps_the_plain_sums():
    rows_list = [X[i].copy() for i in range(X.shape[0])]

    def f(xs, w):
        s = 0.0
        for i in range(len(xs)):
            s = s + np.tanh(xs[i] @ w)
        return s
    g = srcgrad.grad(f, wrt=(0, 1))(rows_list, W)
    plain = srcgrad.grad(f, wrt=(0, 1), optimize=False)(rows_list, W)
    assert_bit_identical(tuple(g[0]), tuple(plain[0]))
    assert_bit_identical(g[1], plain[1])
    assert "cotangent_buffer(xs)" in srcgrad.grad(f, wrt=(0, 1)).source  # 0.0 at run time


def test_hvp():
    def f(X):
        s = 0.0
        for i in range(X.shape[0]):
            s = s + np.tanh(X[i] @ W) ** 2
        return s
    v = RNG.standard_normal(X.shape)
    hv = srcgrad.hvp(f)(X, v)
    g = srcgrad.grad(f)
    eps = 1e-6
    expected = (g(X + eps * v) - g(X - eps * v)) / (2 * eps)
    assert_close(hv, expected, rtol=1e-5, atol=1e-6)


def test_vjp_of_a_called_function():
    def helper(X, w):
        s = 0.0
        for i in range(X.shape[0]):
            s = s + np.tanh(X[i] @ w)
        return s

    def f(X, w):
        return helper(X, w) * helper(X * 2.0, w)
    grads = srcgrad.grad(f, wrt=(0, 1))(X, W)
    plain = srcgrad.grad(f, wrt=(0, 1), optimize=False)(X, W)
    assert_bit_identical(grads, plain)
    for k in (0, 1):
        assert_close(grads[k], numeric_grad(f, [X, W], k), rtol=1e-5, atol=1e-6)


def test_check_finite():
    grads = srcgrad.grad(rows, wrt=(0, 1), check_finite=True)(X, W)
    plain = srcgrad.grad(rows, wrt=(0, 1), optimize=False)(X, W)
    assert_bit_identical(grads, plain)


def test_repeated_indices_add_up_in_order():
    # many repeats of one row: np.add.at's order, before the sum reaches the buffer
    idx = np.array([2, 2, 2, 2, 2, 1, 2])

    def f(X, w):
        s = 0.0
        for j in range(2):
            s = s + np.sum(np.exp(X[idx] * w) * (j + 1.0))
        return s
    grads = srcgrad.grad(f, wrt=(0, 1))(X, W)
    plain = srcgrad.grad(f, wrt=(0, 1), optimize=False)(X, W)
    assert_bit_identical(grads, plain)


# -- issue 16, item 3: a slice of an argument is recomputed in the adjoint, not taped --------

@pytest.mark.parametrize("policy", ["save", "save_products"])
def test_a_row_of_an_argument_is_recomputed_not_taped(policy):
    source = srcgrad.grad(rows, wrt=(0, 1), policy=policy).source
    adjoint = source.split("# Adjoint sweep")[1]
    assert "= X[i]  # recompute:" in adjoint
    # s and np.tanh's output; X[i] is not (tapes of a loop over range(n): slots by index)
    assert source.count("_tape = [None] * len(") == 2, source


def test_a_policy_callable_still_decides_for_a_row():
    source = srcgrad.grad(rows, wrt=(0, 1), policy=lambda c: "save").source
    assert "# recompute:" not in source


def test_a_row_of_an_argument_at_the_top_level_is_saved():
    def f(X, w):
        return np.tanh(X[0] @ w) + np.sum(X[1:] ** 2)
    source = srcgrad.grad(f, wrt=(0, 1)).source
    assert "# recompute:" not in source


def test_each_row_of_a_for_loop_is_recomputed_not_taped():
    source = srcgrad.grad(each_row, wrt=(0, 1)).source
    assert "x = t1[k]  # recompute: x" in source and "x_tape" not in source


def updated_argument(X, w):
    X[0] = X[0] * 2.0
    s = 0.0
    for x in X:
        s = s + np.sum(np.sin(x * w))
    return s


def test_an_argument_updated_in_place_keeps_its_rows_taped():
    source = srcgrad.grad(updated_argument, wrt=(0, 1)).source
    assert "# recompute:" not in source
    for policy in POLICIES:
        grads = srcgrad.grad(updated_argument, wrt=(0, 1), policy=policy)(X, W)
        plain = srcgrad.grad(updated_argument, wrt=(0, 1), policy=policy, optimize=False)(X, W)
        assert_bit_identical(grads, plain, f"policy {policy!r}")
        assert_close(grads[0], numeric_grad(pure(updated_argument), [X, W], 0), rtol=1e-5,
                     atol=1e-6)
