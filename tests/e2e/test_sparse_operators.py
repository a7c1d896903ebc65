"""A SciPy sparse matrix as a constant operand of ``@`` (review s37 R5-20).

A graph Laplacian or a finite-difference stencil held as a ``scipy.sparse``
matrix (``x @ (L @ x)``, ``np.sum(np.tanh(L @ x))``) made the adjoint raise a
raw AxisError (``np.swapaxes`` of the 0-d object array NumPy makes of it) or
a raw ValueError from the summed-product helpers, in grad under every policy
and in hvp.  The product's helpers now write the cotangent with the sparse
operand's own ``@`` (runtime/linalg.sparse).  Each: value bit for bit under
every policy and in jvp, gradient and tangent against differences, hvp
against differences of the gradient; the operator global or passed.

Its other operators are not ndarray's (for a sparse matrix ``x * L`` is the
matrix product, ``L + x`` an np.matrix): ``np.sum(np.tanh(x * L))`` got the
gradient of another function, silently.  Such arithmetic with a value being
differentiated is refused, located (analysis/sparse_operands.py); with a
constant (``dt * L @ u``) it is differentiated.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sps
from numeric import assert_close, check_every_policy

import srcgrad

N = 5
L = sps.diags([2.0 * np.ones(N), -3.0 * np.ones(N - 1), -np.ones(N - 1)], [0, 1, -1],
              format="csr")  # not symmetric: L.T is not L
A = sps.csr_array(L)
W = np.linspace(0.1, 0.5, N)
X2 = np.arange(10.0).reshape(5, 2) / 10
X = np.array([0.3, -0.5, 0.8, 0.1, -0.2])


def quadratic(x):
    return x @ (L @ x)


def summed(x):
    return np.sum(L @ x)


def mean_of_left(x):
    return np.mean(x @ L)


def transposed(x):
    return np.sum(L.T @ x ** 2)


def weighted(x):
    return np.sum((L @ x) * W)


def through_tanh(x):
    return np.sum(np.tanh(L @ x))


def sparse_array(x):
    return np.sum(np.tanh(A @ x))


def matrix_operand(x):
    return np.sum(np.tanh(L @ (x[:, None] * X2)))


def matrix_on_the_left(x):
    return np.sum(np.tanh((X2.T * x) @ L))


def in_a_loop(x):
    h = x
    for i in range(3):
        h = np.tanh(L @ h + 0.1 * h)
    return np.sum(h ** 2)


def scaled_step(x, dt=0.1):  # dt * L: a constant scaling, then @
    u = x
    for i in range(3):
        u = u + dt * L @ u - 0.5 * (A @ u)
    return np.sum(np.tanh(u))


FUNCTIONS = [quadratic, summed, mean_of_left, transposed, weighted, through_tanh, sparse_array,
             matrix_operand, matrix_on_the_left, in_a_loop, scaled_step]


@pytest.mark.parametrize("fn", FUNCTIONS)
def test_every_policy_and_jvp(fn):
    check_every_policy(fn, (X.copy(),))


@pytest.mark.parametrize("fn", FUNCTIONS)
def test_hvp(fn):
    v, eps = np.linspace(-1.0, 1.0, N), 1e-6
    g = srcgrad.grad(fn)
    assert_close(srcgrad.hvp(fn)(X, v), (g(X + eps * v) - g(X - eps * v)) / (2 * eps),
                 rtol=1e-5, atol=1e-7)


def with_operator(x, op):
    return np.sum((op @ x) ** 2) + np.sum(x @ op)


def test_the_operator_passed_as_an_argument():
    Ld = L.toarray()
    for op in (L, A):
        assert_close(srcgrad.grad(with_operator)(X, op), 2 * Ld.T @ (Ld @ X) + Ld.sum(axis=1),
                     rtol=1e-12)


def right_times(x):
    return np.sum(np.tanh(x * L))  # x @ L for a sparse matrix


def left_times(x):
    return np.sum(np.tanh(L * x))


def array_times(x):
    return np.sum(A * x)  # a sparse array


def plus(x):
    h = x * 2.0
    return np.sum(L + h)  # an np.matrix


@pytest.mark.parametrize("fn", [right_times, left_times, array_times, plus])
def test_arithmetic_other_than_matmul_with_a_differentiated_value_is_refused(fn):
    for call in (lambda: srcgrad.grad(fn)(X), lambda: srcgrad.grad(fn, policy="sqrt")(X),
                 lambda: srcgrad.jvp(fn, (X,), (np.ones(N),))):
        with pytest.raises(srcgrad.NonDifferentiableError,
                           match="is a SciPy sparse matrix, whose '[*+]'") as info:
            call()
        assert info.value.filename == __file__ and info.value.lineno, info.value
        assert "toarray()" in info.value.message


def times_passed(x, op):
    return np.sum(np.tanh(x * op))  # x @ op for a sparse matrix


class Operator:
    def __init__(self, op):
        self.L, self.w = op, W

    def __call__(self, x):
        return np.sum(np.tanh(x * self.L))

    def loss(self, x):
        return np.sum(np.tanh(x * self.L))

    def fine(self, x):  # @, and * of a dense field: differentiated
        return np.sum(np.tanh(self.L @ x) * self.w)


def test_arithmetic_with_an_operator_passed_or_held_is_refused():  # R5-23 (diff review D-7)
    model = Operator(L)
    for call in (lambda: srcgrad.grad(times_passed)(X, L),
                 lambda: srcgrad.jvp(times_passed, (X, L), (np.ones(N), None)),
                 lambda: srcgrad.hvp(times_passed)(X, L, np.ones(N)),
                 lambda: srcgrad.grad(model)(X),
                 lambda: srcgrad.grad(model.loss, policy="sqrt")(X),
                 lambda: srcgrad.jvp(model.loss, (X,), (np.ones(N),))):
        with pytest.raises(srcgrad.NonDifferentiableError,
                           match="is a SciPy sparse matrix, whose '[*]'") as info:
            call()
        assert info.value.filename == __file__ and info.value.lineno, info.value


def test_an_operator_held_by_the_model_through_matmul():
    model = Operator(L)
    Ld = L.toarray()
    want = Ld.T @ ((1 - np.tanh(Ld @ X) ** 2) * W)
    assert_close(srcgrad.grad(model.fine)(X), want, rtol=1e-12)
    assert_close(srcgrad.jvp(model.fine, (X,), (np.ones(N),))[1], want @ np.ones(N), rtol=1e-12)


OPS = {"L": L}


class Holder:
    def __init__(self):
        self.ops = [L]


HELD = Holder()


def item_of_a_list(x, ops):
    return np.sum(np.tanh(x * ops[0]))


def item_of_a_dict(x, ops):
    return np.sum(np.tanh(x * ops["L"]))


def item_of_a_global_dict(x):
    return np.sum(np.tanh(x * OPS["L"]))


def item_of_a_field(x):
    return np.sum(np.tanh(x * HELD.ops[0]))


@pytest.mark.parametrize("fn, extra", [(item_of_a_list, ([L],)), (item_of_a_dict, ({"L": L},)),
                                       (item_of_a_global_dict, ()), (item_of_a_field, ())])
def test_an_operator_reached_through_items_is_refused(fn, extra):  # diff review D-32
    for call in (lambda: srcgrad.grad(fn)(X, *extra),
                 lambda: srcgrad.jvp(fn, (X, *extra), (np.ones(N), *[None] * len(extra)))):
        with pytest.raises(srcgrad.NonDifferentiableError,
                           match="is a SciPy sparse matrix, whose '[*]'") as info:
            call()
        assert info.value.filename == __file__ and info.value.lineno, info.value


def _times(x, M):
    return x * M


def _product(x, M):
    return M @ x


def helper_times(x):
    return np.sum(np.tanh(_times(x, L)))


def helper_product(x):
    return np.sum(np.tanh(_product(x, L)))


def test_an_operator_passed_to_a_helper():  # diff review D-32: its parameter's x * M
    with pytest.raises(srcgrad.NonDifferentiableError, match="passed to _times as 'M'"):
        srcgrad.grad(helper_times)(X)
    check_every_policy(helper_product, (X.copy(),))
