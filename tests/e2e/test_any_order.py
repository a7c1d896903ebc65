"""Derivatives of any order (issue 15): ``grad(grad(grad(f)))``,
``jacobian(hessian(f))``, ``hvp`` through loops and branches, ``grad(grad(f))``
with a tuple ``wrt``.

Each order is checked against an analytic derivative or against central
differences of srcgrad's own derivative one order lower, and against autograd
on the same code where autograd runs it.  Higher orders differentiate
generated tangent code again (:class:`srcgrad.api.second_order.HigherOrder`),
so these tests are also the tests that generated code is differentiable
source.
"""

import math

import numpy as np
import pytest
from numeric import assert_close

import srcgrad
from srcgrad import NonDifferentiableError, SrcGradError

autograd = pytest.importorskip("autograd")
anp = pytest.importorskip("autograd.numpy")

RNG = np.random.default_rng(15)


# ---------------------------------------------------------------- functions
# Written against a module-level ``np``; ``_as_autograd`` runs the same code
# with autograd.numpy in its place.

def polynomial(x):
    return 3.0 * x ** 5 - 2.0 * x ** 3 + x


def chain(x):
    return np.sin(np.exp(0.5 * x)) * np.exp(-x * x) + np.tanh(x) ** 2


def looped(x):
    """A loop with a branch on the data."""
    s = 0.0
    for i in range(4):
        if s < 1.0:
            s = s + np.sin(x * (i + 1))
        else:
            s = s * x - np.cos(s)
    return s * x


def two(x, y):
    return x ** 3 * y ** 2 + np.sin(x * y)


def weighted(x, W):
    """A float x and an array W: the outermost gradient is an array."""
    return np.sum(np.tanh(W * x) ** 2) * x + np.sum(W ** 3) * x ** 2


def tensor_fn(x):
    return np.sum(x ** 3) * x[0] + np.sum(np.sin(x)) * np.sum(x ** 2)


def loop_branch_vector(x, n):
    """A vector function with a loop and a branch on the data, for hvp."""
    h = x
    total = 0.0
    for i in range(n):
        if np.sum(h) > 0.0:
            h = np.tanh(h * 1.3) + 0.1 * x
        else:
            h = h * h - 0.5 * x
        total = total + np.sum(h * x)
    return total + np.sum(np.exp(0.2 * x) * h)


def stack_args(w, *args):
    """``*args + (column,)``: a concatenation of tuples in the tangent code too."""
    parts = np.hstack(args + (np.ones(2) * w,))
    return parts


def rows(x, n):
    """A helper returning a list (the outputs of an RNN): its tangent is a list."""
    out = []
    for i in range(n):
        x = np.tanh(x * (i + 1.0))
        out.append(x)
    return out


def by_name(x):
    """A helper returning a dict."""
    return {"a": np.sin(x), "b": x * x}


def structured(x, w):
    outs = rows(x, 3)
    parts = by_name(x)
    total = 0.0
    for o in outs:
        total = total + np.sum(o * parts["a"]) + np.sum(parts["b"] * o)
    items = tuple(np.tanh(x)) + (w,)  # an array's rows as a tuple, concatenated
    total = total + items[0] * items[1] * items[2] ** 2
    return total + np.sum(stack_args(w, x, x * 2.0) ** 2) * w


def _as_autograd(fn):
    """``fn`` with its global ``np`` bound to autograd.numpy."""
    namespace = dict(fn.__globals__, np=anp)
    return type(fn)(fn.__code__, namespace, fn.__name__, fn.__defaults__, fn.__closure__)


def _fd(fn, x, eps=1e-5):
    """Central difference of a scalar function of a float."""
    return (fn(x + eps) - fn(x - eps)) / (2 * eps)


def _fd_array(fn, x, eps=1e-6):
    """Central differences of an array-valued ``fn`` along each element of ``x``:
    shape ``fn(x).shape + x.shape``."""
    columns = []
    for k in range(x.size):
        e = np.zeros(x.size)
        e[k] = eps
        e = e.reshape(x.shape)
        columns.append(np.ravel((np.asarray(fn(x + e)) - np.asarray(fn(x - e))) / (2 * eps)))
    return np.stack(columns, axis=-1).reshape(np.shape(fn(x)) + x.shape)


# ------------------------------------------------------- grad(grad(grad(f)))

@pytest.mark.parametrize("x", [0.7, -1.3, 0.0])
def test_third_and_fourth_derivative_of_a_polynomial(x):
    d3 = srcgrad.grad(srcgrad.grad(srcgrad.grad(polynomial)))
    d4 = srcgrad.grad(d3)
    assert_close(d3(x), 180.0 * x ** 2 - 12.0, rtol=1e-12, atol=1e-12)
    assert_close(d4(x), 360.0 * x, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("fn", [chain, looped], ids=["sin_exp_chain", "loop_with_branch"])
@pytest.mark.parametrize("x", [0.7, -0.4])
def test_third_derivative_against_lower_order_and_autograd(fn, x):
    d2 = srcgrad.grad(srcgrad.grad(fn))
    d3 = srcgrad.grad(d2)
    value = d3(x)
    assert isinstance(value, float)
    assert_close(value, _fd(d2, x), rtol=1e-6, atol=1e-7)
    ag = _as_autograd(fn)
    assert_close(value, autograd.grad(autograd.grad(autograd.grad(ag)))(x), rtol=1e-10,
                 atol=1e-10)


def test_fourth_derivative_through_a_loop():
    d3 = srcgrad.grad(srcgrad.grad(srcgrad.grad(looped)))
    d4 = srcgrad.grad(d3)
    ag = _as_autograd(looped)
    expected = autograd.grad(autograd.grad(autograd.grad(autograd.grad(ag))))(0.3)
    assert_close(d4(0.3), expected, rtol=1e-9, atol=1e-9)
    assert_close(d4(0.3), _fd(d3, 0.3), rtol=1e-5, atol=1e-6)


def test_third_derivative_with_an_array_outermost():
    """Inner gradients along a float, the outermost one along an array."""
    x, W = 0.6, RNG.standard_normal((2, 3))
    d2 = srcgrad.grad(srcgrad.grad(weighted, 0), 0)
    d3 = srcgrad.grad(d2, 1)
    got = d3(x, W)
    assert got.shape == W.shape
    assert_close(got, _fd_array(lambda w: d2(x, w), W), rtol=1e-6, atol=1e-7)
    ag = _as_autograd(weighted)
    expected = autograd.grad(autograd.grad(autograd.grad(ag, 0), 0), 1)(x, W)
    assert_close(got, expected, rtol=1e-10, atol=1e-10)


def test_mixed_third_derivatives():
    x, y = 0.4, 1.3
    dxy = srcgrad.grad(srcgrad.grad(two, 1), 0)  # d2f/dx dy
    # d3f/dx2 dy = 12xy - 2y sin(xy) - x y^2 cos(xy)
    expected = 12 * x * y - 2 * y * math.sin(x * y) - x * y * y * math.cos(x * y)
    assert_close(srcgrad.grad(dxy, 0)(x, y), expected, rtol=1e-12, atol=1e-12)
    assert_close(srcgrad.grad(dxy, 1)(x, y), _fd(lambda v: dxy(x, v), y), rtol=1e-7)


def test_third_derivative_source_shows_every_level():
    source = srcgrad.grad(srcgrad.grad(srcgrad.grad(polynomial))).source
    assert "def tangent_polynomial(" in source
    assert "def tangent_tangent_polynomial(" in source
    assert "def grad_tangent_tangent_polynomial(" in source


def test_third_derivative_of_an_array_argument_is_refused_clearly():
    d3 = srcgrad.grad(srcgrad.grad(srcgrad.grad(tensor_fn)))
    with pytest.raises(NonDifferentiableError, match="floats"):
        d3(np.ones(3))


def test_grad_of_a_non_scalar_derivative_is_refused_clearly():
    with pytest.raises(SrcGradError, match="made by srcgrad"):
        srcgrad.grad(srcgrad.hvp(chain))
    with pytest.raises(SrcGradError, match="made by srcgrad"):
        srcgrad.grad(srcgrad.grad(srcgrad.grad(two), wrt=(0, 1)))


# ------------------------------------------------------- grad(grad(f)), tuples

def test_second_derivative_with_a_tuple_wrt():
    x, y = 0.4, 1.3
    dxx, dxy = srcgrad.grad(srcgrad.grad(two), wrt=(0, 1))(x, y)
    assert_close(dxx, 6 * x * y * y - y * y * math.sin(x * y), rtol=1e-12, atol=1e-12)
    assert_close(dxy, 6 * x * x * y + math.cos(x * y) - x * y * math.sin(x * y),
                 rtol=1e-12, atol=1e-12)


def test_third_derivative_with_a_tuple_wrt():
    x, W = -0.8, RNG.standard_normal(4)
    d2 = srcgrad.grad(srcgrad.grad(weighted))
    dx, dW = srcgrad.grad(d2, wrt=(0, 1))(x, W)
    assert_close(dx, _fd(lambda v: d2(v, W), x), rtol=1e-6, atol=1e-7)
    assert_close(dW, _fd_array(lambda w: d2(x, w), W), rtol=1e-6, atol=1e-7)


# ------------------------------------------------------- jacobian(hessian(f))

def test_jacobian_of_hessian():
    x = np.array([0.3, -0.7, 1.1])
    hessian = srcgrad.hessian(tensor_fn)
    third = srcgrad.jacobian(hessian)(x)
    assert third.shape == (3, 3, 3)
    assert_close(third, _fd_array(hessian, x), rtol=1e-6, atol=1e-7)
    # a third derivative is symmetric in its three indices
    assert_close(third, third.transpose(1, 0, 2), rtol=1e-12, atol=1e-12)
    assert_close(third, third.transpose(2, 1, 0), rtol=1e-12, atol=1e-12)
    ag = _as_autograd(tensor_fn)
    assert_close(third, autograd.jacobian(autograd.hessian(ag))(x), rtol=1e-10, atol=1e-10)


def test_jacobian_of_jacobian_of_hessian():
    x = np.array([0.5, -0.2])
    third = srcgrad.jacobian(srcgrad.hessian(tensor_fn))
    fourth = srcgrad.jacobian(third)(x)
    assert fourth.shape == (2, 2, 2, 2)
    assert_close(fourth, _fd_array(third, x), rtol=1e-6, atol=1e-7)
    # jacobian(grad(f)) is the hessian, so jacobian of it goes on the same way
    again = srcgrad.jacobian(srcgrad.jacobian(srcgrad.grad(tensor_fn)))(x)
    assert_close(again, third(x), rtol=1e-12, atol=1e-12)


def test_jacobian_of_hessian_with_another_position_is_refused_clearly():
    with pytest.raises(SrcGradError, match="third derivative"):
        srcgrad.jacobian(srcgrad.hessian(two, 0), 1)


# ------------------------------------------------------- hvp with loops

@pytest.mark.parametrize("seed", [0, 1, 2])
def test_hvp_of_a_function_with_a_loop_and_a_branch(seed):
    rng = np.random.default_rng(seed)
    x, v = rng.standard_normal(5), rng.standard_normal(5)
    got = srcgrad.hvp(loop_branch_vector)(x, 4, v)
    gradient = srcgrad.grad(loop_branch_vector)
    eps = 1e-6
    fd = (gradient(x + eps * v, 4) - gradient(x - eps * v, 4)) / (2 * eps)
    assert_close(got, fd, rtol=1e-6, atol=1e-7)
    ag = _as_autograd(loop_branch_vector)
    expected = autograd.hessian(ag)(x, 4) @ v
    assert_close(got, expected, rtol=1e-10, atol=1e-10)


# ------------------------------------------------------- structured tangents

def test_second_and_third_order_through_helpers_returning_lists_dicts_and_star_args():
    """Generated tangent code hands back a helper's list or dict output with
    ``tangent_like`` and concatenates ``*args`` tangents with
    ``sequence_tangent(...) + ...``: reverse mode over that code needs their
    rules for structures (the LSTM of the model zoo uses all three)."""
    x, v, w = RNG.standard_normal(2), RNG.standard_normal(2), 0.7
    got = srcgrad.hvp(structured)(x, w, v)
    gradient = srcgrad.grad(structured)
    eps = 1e-6
    expected = (gradient(x + eps * v, w) - gradient(x - eps * v, w)) / (2 * eps)
    assert_close(got, expected, rtol=1e-6, atol=1e-7)
    d2 = srcgrad.grad(srcgrad.grad(structured, 1), 1)
    d3 = srcgrad.grad(d2, (0, 1))
    dx, dw = d3(x, w)
    assert_close(dw, _fd(lambda u: d2(x, u), w), rtol=1e-6, atol=1e-7)
    assert_close(dx, _fd_array(lambda u: d2(u, w), x), rtol=1e-6, atol=1e-7)


# ------------------------------------------------------- what grad takes

class Spring:
    def __init__(self, k):
        self.k = k

    def energy(self, x):
        return self.k * x ** 4 + np.sin(x)

    def __call__(self, x):
        return self.k * x ** 4 + np.sin(x)

    def cubic(self, x):
        return np.sum(self.k * x ** 3)


@pytest.mark.parametrize("kind", ["method", "callable", "lambda"])
def test_third_derivative_of_a_method_a_callable_object_and_a_lambda(kind):
    spring = Spring(2.0)
    fn = {"method": spring.energy, "callable": spring,
          "lambda": lambda x: 2.0 * x ** 4 + np.sin(x)}[kind]
    d3 = srcgrad.grad(srcgrad.grad(srcgrad.grad(fn)))
    assert_close(d3(0.3), 48 * 0.3 - math.cos(0.3), rtol=1e-12, atol=1e-12)


def test_jacobian_of_hessian_of_a_method():
    third = srcgrad.jacobian(srcgrad.hessian(Spring(2.0).cubic))(np.array([0.5, -0.2]))
    expected = np.zeros((2, 2, 2))
    expected[0, 0, 0] = expected[1, 1, 1] = 12.0
    assert_close(third, expected, rtol=1e-12, atol=1e-12)


def ranked(x):
    """sorted() of differentiable values: its tangent code permutes the tangents
    with sorted_order, which reverse mode over it must take as a constant."""
    xs = sorted([x[0], x[1] * 2.0, x[2] ** 2])
    return xs[0] * xs[1] + xs[2] ** 3


def test_hvp_through_sorted():
    x, v = np.array([0.3, -0.4, 1.1]), np.array([0.2, 0.5, -0.3])
    gradient = srcgrad.grad(ranked)
    eps = 1e-6
    expected = (gradient(x + eps * v) - gradient(x - eps * v)) / (2 * eps)
    assert_close(srcgrad.hvp(ranked)(x, v), expected, rtol=1e-6, atol=1e-7)


def complex_modulus(x):
    """np.abs of a complex intermediate of a real function: third order
    differentiates signum's tangent, the phase turn, once more."""
    z = x * (1.0 + 2.0j) + 0.5j
    return np.abs(z) ** 2 * x + np.abs(z)


@pytest.mark.parametrize("x", [0.7, -0.4])
def test_third_derivative_through_abs_of_a_complex_value(x):
    d2 = srcgrad.grad(srcgrad.grad(complex_modulus))
    d3 = srcgrad.grad(d2)
    ag = _as_autograd(complex_modulus)
    assert_close(d3(x), autograd.grad(autograd.grad(autograd.grad(ag)))(x), rtol=1e-10,
                 atol=1e-10)
    assert_close(d3(x), _fd(d2, x), rtol=1e-6, atol=1e-7)


# ------------------------------------------- jacobian(jacobian(f)) (review s36 R4-5)

def vector_fn(x):
    """R^(2x2) -> R^3 with a loop and a branch: a second derivative tensor of
    shape (3, 2, 2, 2, 2)."""
    h = x
    for _ in range(2):
        h = np.tanh(h @ x) if np.sum(h) > 0 else h * x
    return np.stack([np.sum(h ** 2), np.prod(x), np.sum(np.sin(h) * x)])


class Quadratic:
    def __init__(self, a):
        self.a = a

    def out(self, x):
        return np.array([self.a * np.sum(x ** 3), x[0] * x[1]])


@pytest.mark.parametrize("fn, x", [
    (vector_fn, np.array([[0.3, -0.2], [0.5, 0.4]])),
    (tensor_fn, np.array([0.3, -0.5, 0.8])),         # scalar: the Hessian
    (Quadratic(1.5).out, np.array([0.4, -0.7])),     # a bound method
])
def test_jacobian_of_jacobian_is_the_second_derivative(fn, x):
    """jacobian(jacobian(f)), JAX's jacfwd(jacrev(f)), was refused as 'a third
    derivative'; it is the second derivative tensor, out.shape + x.shape * 2."""
    J = srcgrad.jacobian(fn)
    T = srcgrad.jacobian(J)(x)
    assert T.shape == np.shape(fn(x)) + x.shape * 2
    assert_close(T, _fd_array(J, x), rtol=1e-6, atol=1e-7)
    if np.ndim(fn(x)) == 0:
        assert_close(T, srcgrad.hessian(fn)(x), rtol=1e-12, atol=1e-12)
    with pytest.raises(SrcGradError, match="third derivative"):
        srcgrad.jacobian(srcgrad.jacobian(J))


def two_arguments(x, y):
    return np.array([np.sum(x * y), np.sum(np.sin(x) * y ** 2)])


def test_a_mixed_jacobian_of_jacobian_is_refused_as_what_it_is():
    with pytest.raises(SrcGradError, match="mixed second derivative") as info:
        srcgrad.jacobian(srcgrad.jacobian(two_arguments, 0), 1)
    assert "third" not in str(info.value)
