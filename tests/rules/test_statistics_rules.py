"""Rules of ordinary statistics code (srcgrad/rules/statistics.py), end to end.

An outside tester's statistics code stopped at MissingRuleError for
``np.median``, ``np.percentile``/``np.quantile``, ``np.average`` (weights),
``np.cov``/``np.corrcoef``, ``np.polyval``, ``np.vander``, ``np.meshgrid``,
``np.correlate`` and ``np.linalg.multi_dot``, and ``np.digitize`` of a
differentiated value was refused although its result is integer bin numbers.
Each now differentiates in both modes: values bit-identical to the function's
own, gradients against central differences and JAX, the tangent against the
gradient, every policy, inside a loop and a helper.  The rules themselves are
checked one by one by the spec table (tests/spec.py, test_spec.py).
"""

from __future__ import annotations

import numpy as np
import pytest
from numeric import assert_bit_identical, assert_close, check_every_policy, numeric_grad

import srcgrad

POLICIES = ["save", "recompute", "sqrt", ("revolve", 2)]
rng = np.random.default_rng(3800000)
A = rng.normal(size=(4, 5))
V = rng.normal(size=5)
W = rng.uniform(0.5, 2.0, size=5)
B = rng.normal(size=(5, 3))
C = rng.normal(size=(3, 2))


def median_axis(a):
    return np.sum(np.sin(np.median(a, axis=0)))


def median_even_keepdims(a):
    return np.sum(np.median(a[:, :4], axis=1, keepdims=True) ** 2)


def quantiles(a):
    return np.sum(np.quantile(a, [0.1, 0.75], axis=1) ** 2) + np.quantile(a, 0.5)


def percentile(a):
    return np.percentile(a, 30) * 2.0 + np.sum(np.percentile(a, [5, 95], axis=0))


def average_weighted(a):
    return np.sum(np.average(a, axis=1, weights=W ** 2) ** 2) + np.average(a)


def average_of_weights(w):
    return np.average(V, weights=w) ** 2


def covariance(a):
    return np.sum(np.cov(a) ** 2) + np.sum(np.sin(np.cov(a, rowvar=False, bias=True)))


def covariance_pair(v):
    return np.sum(np.cov(V, v) ** 2) + np.corrcoef(V, v)[0, 1]


def correlation(a):
    return np.sum(np.corrcoef(a) ** 3)


def polynomial(p):
    return np.sum(np.polyval(p, V) ** 2)


def polynomial_x(x):
    return np.sum(np.polyval([1.0, -2.0, 0.5], x) ** 2)


def vandermonde(x):
    return np.sum(np.vander(x, 4) ** 2) + np.sum(np.sin(np.vander(x[:3], increasing=True)))


def correlate(a):
    return np.sum(np.correlate(a, V[:3], "full") ** 2) + np.sum(np.correlate(V, a[:2]))


def grid(x):
    xx, yy = np.meshgrid(x, V[:2])
    _, jj = np.meshgrid(V[:2], x, indexing="ij")
    return np.sum(np.sin(xx) * yy) + np.sum(jj ** 2)


def chain(a):
    return np.sum(np.linalg.multi_dot([a, B, C]) ** 2) + np.linalg.multi_dot([A[:, 0], a, V])


def binned(x):
    return np.sum(x * np.digitize(x, [-0.5, 0.0, 0.5]))


def robust_scale(x):
    """A helper and a loop: each step standardises by the median and IQR."""
    for _ in range(2):
        x = (x - np.median(x)) / iqr(x)
    return np.sum(x ** 3)


def iqr(x):
    low, high = np.percentile(x, [25, 75])
    return high - low


CASES = [(median_axis, A), (median_even_keepdims, A), (quantiles, A), (percentile, A),
         (average_weighted, A), (average_of_weights, W), (covariance, A),
         (covariance_pair, V[::-1] * 1.3 + 0.2), (correlation, A), (polynomial, np.array([1.0, -2.0, 0.5])),
         (polynomial_x, V), (vandermonde, V), (correlate, V), (grid, V[:3]), (chain, A),
         (binned, V), (robust_scale, V)]


@pytest.mark.parametrize("fn, x", CASES, ids=[f.__name__ for f, _ in CASES])
def test_gradient_and_tangent_match_differences(fn, x):
    value, g = srcgrad.value_and_grad(fn)(x)
    assert_bit_identical(value, fn(x))
    assert_close(g, numeric_grad(fn, (x,), 0), rtol=1e-5, atol=1e-6)
    direction = np.cos(np.arange(np.size(x)) + 1.0).reshape(np.shape(x))
    tvalue, tangent = srcgrad.jvp(fn, (x,), (direction,))
    assert_bit_identical(tvalue, fn(x))
    assert_close(tangent, np.sum(g * direction), rtol=1e-9, atol=1e-10)


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("fn, x", [(robust_scale, V), (covariance, A), (average_weighted, A)],
                         ids=["robust_scale", "covariance", "average_weighted"])
def test_every_policy(fn, x, policy):
    value, g = srcgrad.value_and_grad(fn, policy=policy)(x)
    assert_bit_identical(value, fn(x))
    assert_close(g, srcgrad.grad(fn)(x), rtol=1e-12, atol=1e-14)


def test_matches_jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jnp = jax.numpy

    def jax_version(a):
        return (jnp.sum(jnp.sin(jnp.median(a, axis=0))) + jnp.sum(jnp.quantile(a, jnp.array([0.1, 0.75]), axis=1) ** 2)
                + jnp.percentile(a, 30.0) + jnp.sum(jnp.average(a, axis=1, weights=jnp.asarray(W)) ** 2)
                + jnp.sum(jnp.cov(a) ** 2) + jnp.sum(jnp.corrcoef(a) ** 3)
                + jnp.sum(jnp.linalg.multi_dot([a, jnp.asarray(B), jnp.asarray(C)]) ** 2)
                + jnp.sum(jnp.polyval(a[0], a[1]) ** 2) + jnp.sum(jnp.vander(a[2], 3) ** 2)
                + jnp.sum(jnp.correlate(a[3], a[0, :3], "full") ** 2))

    def ours(a):
        return (np.sum(np.sin(np.median(a, axis=0))) + np.sum(np.quantile(a, [0.1, 0.75], axis=1) ** 2)
                + np.percentile(a, 30.0) + np.sum(np.average(a, axis=1, weights=W) ** 2)
                + np.sum(np.cov(a) ** 2) + np.sum(np.corrcoef(a) ** 3)
                + np.sum(np.linalg.multi_dot([a, B, C]) ** 2)
                + np.sum(np.polyval(a[0], a[1]) ** 2) + np.sum(np.vander(a[2], 3) ** 2)
                + np.sum(np.correlate(a[3], a[0, :3], "full") ** 2))

    expected = np.asarray(jax.grad(jax_version)(jnp.asarray(A)))
    assert_close(srcgrad.grad(ours)(A), expected, rtol=1e-9, atol=1e-10)


def robust_spread(a):
    """Interpolation methods other than the default: an element ('lower',
    'higher', 'nearest'), halfway between two ('midpoint'), another virtual
    position ('hazen'), in a loop."""
    s = 0.0
    for i, method in enumerate(("lower", "higher", "nearest", "midpoint", "hazen")):
        s = s + np.quantile(a[i % 4] * (i + 1.0), [0.3, 0.8], method=method)[1] ** 2
    return s + np.sum(np.percentile(a, 40.0, axis=1, method="midpoint") ** 2)


def percentile_branch(a):
    if a[0, 0] > 0:
        return np.sum(np.sin(np.percentile(a, [10.0, 65.0], axis=0, method="lower")))
    return np.percentile(a, 90.0, method="higher") ** 2


@pytest.mark.parametrize("fn", [robust_spread, percentile_branch])
def test_other_interpolation_methods(fn):
    """Each NumPy method is a weighted sum of one or two sorted elements at its
    own virtual position: gradient and tangent against differences under
    every policy, value bit for bit; hvp against differences of the gradient."""
    for x in (A, -A):
        check_every_policy(fn, (x.copy(),), 0)
    v = np.cos(np.arange(20.0)).reshape(4, 5)
    eps = 1e-5
    grad = srcgrad.grad(fn)
    fd = (grad(A + eps * v) - grad(A - eps * v)) / (2 * eps)
    assert_close(srcgrad.hvp(fn)(A.copy(), v), fd, rtol=1e-5, atol=1e-7)


def test_interpolation_keyword_refused():
    """NumPy's deprecated ``interpolation=`` spelling is not the rules' keyword:
    refused where it stands, not differentiated as linear."""
    def f(a):
        return np.quantile(a, 0.3, interpolation="nearest")
    with pytest.raises(srcgrad.SrcGradError) as info:
        srcgrad.grad(f)(V)
    assert "quantile" in str(info.value)


def test_second_derivatives_through_quantiles():
    """hvp and hessian run reverse mode over the tangent code, whose quantile
    helper has rules of its own."""
    def f(a):
        s = 0.0
        for i in range(3):
            s = s + np.percentile(a[i] * (i + 1.0), 30.0) ** 2 + np.median(a[i] ** 3)
        return s + np.sum(np.quantile(a, [0.2, 0.7], axis=1) ** 2)
    v = np.cos(np.arange(20.0)).reshape(4, 5)
    hv = srcgrad.hvp(f)(A, v)
    differences = (srcgrad.grad(f)(A + 1e-6 * v) - srcgrad.grad(f)(A - 1e-6 * v)) / 2e-6
    assert_close(hv, differences, rtol=1e-6, atol=1e-7)
    assert_close(srcgrad.hessian(f)(A).reshape(20, 20) @ v.ravel(), hv.ravel(), rtol=1e-12,
                 atol=1e-12)


@pytest.mark.parametrize("fn, x", [(polynomial, np.array([1.0, -2.0, 0.5])), (polynomial_x, V),
                                   (vandermonde, V), (correlate, V), (grid, V[:3]),
                                   (robust_scale, V), (chain, A)],
                         ids=["polynomial", "polynomial_x", "vandermonde", "correlate", "grid",
                              "robust_scale", "chain"])
def test_hvp_matches_differences_of_the_gradient(fn, x):
    v = np.cos(np.arange(np.size(x)) + 0.5).reshape(np.shape(x))
    differences = (srcgrad.grad(fn)(x + 1e-6 * v) - srcgrad.grad(fn)(x - 1e-6 * v)) / 2e-6
    assert_close(srcgrad.hvp(fn)(x, v), differences, rtol=1e-6, atol=1e-6)


# --- second derivatives through np.average, np.cov, np.corrcoef and multi_dot ---------------
# Their tangent rules called runtime helpers without rules (average_jvp, cov_jvp, corrcoef_jvp,
# multi_dot_jvp), so hvp/hessian were refused; the rules are now NumPy operations with rules.
D = rng.normal(size=(4, 2))


def average_axis(a):
    return np.sum(np.sin(np.average(a, axis=1)) ** 2) + np.average(a ** 2)


def average_weighted_axis(a):
    return (np.sum(np.average(a, axis=0, weights=W[:4] ** 2) ** 3)
            + np.average(a ** 2, weights=np.abs(a) + 1.0))


def average_weights_moved(w):
    return (np.average(V, weights=w) ** 2 + np.sum(np.average(A, axis=1, weights=w) ** 2)
            + np.sum(np.average(A, axis=-1, weights=w * w, keepdims=True) ** 2))


def covariance_options(a):
    return (np.sum(np.cov(a) ** 2) + np.sum(np.sin(np.cov(a, rowvar=False, bias=True)))
            + np.sum(np.cov(a, ddof=0) ** 2) + np.sum(np.cov(a[:, :3], a[:, 1:4] ** 2) ** 2)
            + np.sum(np.cov(a, a[:, 1] ** 2, rowvar=False) ** 2))


def covariance_of_y(v):
    return np.sum(np.cov(V, v) ** 2) + np.sum(np.cov(v, A[0] * v, bias=True) ** 2)


def correlation_options(a):
    return (np.sum(np.corrcoef(a) ** 3) + np.sum(np.corrcoef(a, rowvar=False) ** 2)
            + np.sum(np.corrcoef(a[0], a[1] ** 2) ** 3))


def correlation_of_y(v):
    return np.corrcoef(V, v)[0, 1] + np.sum(np.corrcoef(v, v ** 2) ** 2)


def chains(a):
    return (np.sum(np.linalg.multi_dot([a, a.T]) ** 2)
            + np.sum(np.linalg.multi_dot([a[:, 0], a, B]) ** 2)
            + np.sum(np.linalg.multi_dot([a, B, C, D.T]) ** 2)
            + np.linalg.multi_dot([V[:4], a, a.T, a, V])
            + np.sum(np.linalg.multi_dot([a, a.T, a, B, C]) ** 2))


def standardised_steps(a):
    """A loop and a helper: each step rescales by a weighted mean and the correlation."""
    for i in range(2):
        a = step(a, W[:4] * (i + 1.0))
    return np.sum(a ** 2)


def step(a, w):
    centre = np.average(a, axis=0, weights=w)
    return (a - centre) @ np.corrcoef(a, rowvar=False) * 0.5 + np.cov(a, rowvar=False)[0] * 0.1


SECOND_ORDER = [(average_axis, A), (average_weighted_axis, A), (average_weights_moved, W),
                (covariance_options, A), (covariance_of_y, V[::-1] * 1.3 + 0.2),
                (correlation_options, A), (correlation_of_y, V[::-1] * 1.3 + 0.2), (chains, A),
                (standardised_steps, A)]


@pytest.mark.parametrize("fn, x", SECOND_ORDER, ids=[f.__name__ for f, _ in SECOND_ORDER])
def test_hvp_and_hessian_through_means_and_covariances(fn, x):
    v = np.cos(np.arange(np.size(x)) + 0.5).reshape(np.shape(x))
    value, g = srcgrad.value_and_grad(fn)(x)
    assert_bit_identical(value, fn(x))
    assert_close(g, numeric_grad(fn, (x,), 0), rtol=1e-5, atol=1e-6)
    differences = (srcgrad.grad(fn)(x + 1e-6 * v) - srcgrad.grad(fn)(x - 1e-6 * v)) / 2e-6
    hv = srcgrad.hvp(fn)(x, v)
    assert_close(hv, differences, rtol=1e-6, atol=1e-6)
    hessian = srcgrad.hessian(fn)(x).reshape(np.size(x), np.size(x))
    assert_close(hessian, hessian.T, rtol=1e-9, atol=1e-9)
    assert_close(hessian @ np.ravel(v), np.ravel(hv), rtol=1e-9, atol=1e-9)


def test_tangents_bit_identical_to_the_helpers_they_replace():
    """The tangent rules, rewritten in NumPy operations for second derivatives,
    compute what the runtime helpers did, bit for bit (float64)."""
    from srcgrad import runtime as rt
    ta, tv, tw = np.sin(A + 0.3), np.cos(V), np.sin(W)

    def same(found, expected):
        assert np.asarray(found).dtype == np.asarray(expected).dtype
        assert np.array_equal(found, expected)

    for f, axis in [(lambda a: np.average(a), None), (lambda a: np.average(a, axis=1), 1)]:
        same(srcgrad.jvp(f, (A,), (ta,))[1], rt.average_jvp(f(A), A, axis, None, False, ta, None))
    for f, axis, keep, w, t in [(lambda a, w: np.average(a, axis=1, weights=w), 1, False, W, tw),
                                (lambda a, w: np.average(a, weights=w), None, False, A ** 2, ta),
                                (lambda a, w: np.average(a, axis=0, weights=w, keepdims=True), 0,
                                 True, W[:4], tw[:4])]:
        out = f(A, w)
        same(srcgrad.jvp(f, (A, w), (ta, t))[1], rt.average_jvp(out, A, axis, w, keep, ta, None)
             + rt.average_jvp(out, A, axis, w, keep, None, t))
        same(srcgrad.jvp(f, (A, w), (None, t))[1], rt.average_jvp(out, A, axis, w, keep, None, t))
    for f, rowvar, bias, ddof in [(lambda a: np.cov(a), True, False, None),
                                  (lambda a: np.cov(a, rowvar=False, bias=True), False, True, None),
                                  (lambda a: np.cov(a, ddof=2), True, False, 2)]:
        same(srcgrad.jvp(f, (A,), (ta,))[1],
             rt.cov_jvp(A, None, rowvar, bias, ddof, ta, None, f(A)))
    for f, rowvar in [(lambda a: np.corrcoef(a), True),
                      (lambda a: np.corrcoef(a, rowvar=False), False)]:
        same(srcgrad.jvp(f, (A,), (ta,))[1], rt.corrcoef_jvp(A, None, rowvar, ta, None, f(A)))
    for x, y, tx, ty in [(V, V[::-1] ** 2, tv, tv[::-1]), (A, A[1:3], ta, ta[:2])]:
        out = np.cov(x, y)
        same(srcgrad.jvp(lambda x, y: np.cov(x, y), (x, y), (tx, ty))[1],
             rt.cov_jvp(x, y, True, False, None, tx, None, out)
             + rt.cov_jvp(x, y, True, False, None, None, ty, out))
        out = np.corrcoef(x, y)
        same(srcgrad.jvp(lambda x, y: np.corrcoef(x, y), (x, y), (None, ty))[1],
             rt.corrcoef_jvp(x, y, True, None, ty, out))
    operands = [A, B, C, D.T, rng.normal(size=(4, 3))]
    tangents = [np.cos(o) for o in operands]
    for n, f in [(4, lambda a, b, c, d: np.linalg.multi_dot([a, b, c, d])),
                 (5, lambda a, b, c, d, e: np.linalg.multi_dot([a, b, c, d, e]))]:
        same(srcgrad.jvp(f, tuple(operands[:n]), tuple(tangents[:n]))[1],
             rt.multi_dot_jvp(operands[:n], tangents[:n], f(*operands[:n])))
