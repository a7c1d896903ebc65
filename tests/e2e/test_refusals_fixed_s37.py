"""Valid code srcgrad refused (a located error) until session 37, now followed.

Each construct runs in a loop, under a branch and in a helper, under every
policy (value bit for bit the function's own, gradient against central
differences) and in forward mode (``numeric.check_every_policy``); the
matrix functions also in hvp against differences of the gradient:

- ``xs.index(v)`` and ``xs.count(v)`` on lists: integers, no derivative (a
  list holding differentiated values was refused, 'no adjoint rule for the
  method .index()'; normalize/calls.py, rules/containers.py);
- ``np.fromiter(gen, dtype=float)`` of a generator over differentiated
  values (rules/construction.py: each item gets its element);
- ``d.pop(k)`` and ``d.pop(k, default)`` on a dict the function builds
  (normalize/dict_pops.py);
- ``np.concatenate(xs, dtype=...)`` (and ``np.stack``, ``np.hstack``,
  ``np.vstack``) with ``xs`` a list held in a name (rules/shapes.py);
- ``scipy.linalg.sqrtm`` (rules/scipy_linalg.py: a Sylvester solve);
- a method of what a method returns, ``self.layer(0).forward(x)`` (review s35
  R3-33; normalize/user_methods.held_object_method);
- ``@dataclass(slots=True)`` parameters, read from a global, built, or passed
  and differentiated (runtime object_fields: its fields, where it has no
  ``__dict__``).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
import pytest
from numeric import assert_close, check_every_policy, numeric_grad

import srcgrad

X = np.array([0.3, -0.7, 1.1])


# -- list.index / list.count -------------------------------------------------------


def indexed_in_a_loop(x):
    names = ["a", "b", "c", "b"]
    xs = [x, 2.0 * x, x ** 2]
    s = 0.0
    for key in ["c", "b"]:
        s = s + np.sum(xs[names.index(key)] * names.count(key))
    return s


def indexed_under_a_branch(x):
    ks = [1, 2, 3, 2]
    if ks.count(2) > 1:
        return np.sum(x ** ks.index(3))
    return np.sum(x)


def position(names, key):
    return names.index(key) + names.count(key)


def indexed_in_a_helper(x):
    names = ["w", "b"]
    return np.sum(np.sin(x) * position(names, "b"))


def best_in_a_loop(x):
    s = 0.0
    for k in range(2):
        scores = [np.sum(x * (k + 1.0)), np.sum(x ** 2), 0.5]
        s = s + scores[scores.index(max(scores))] * (1 + scores.count(0.5))
    return s


def found_under_a_branch(x):
    xs = [x[0], x[1], x[2]]
    if xs.count(x[1]) == 1:
        return xs[xs.index(x[1])] * 3.0 + xs[0]
    return xs[0]


def argmax_of(vals):
    ranked = list(vals)
    return ranked.index(max(ranked)) + list(vals).count(ranked[0]) - 1


def found_in_a_helper(x):
    vals = [float(v) for v in np.sin(x)]
    return x[argmax_of(vals)] * 2.0 + np.sum(x ** 2)


# -- np.fromiter ------------------------------------------------------------------


def fromiter_plain(x):
    return np.sum(np.fromiter((v * v for v in x), dtype=float) * x)


def fromiter_in_a_loop(x):
    s = 0.0
    for k in range(1, 3):
        y = np.fromiter((np.sin(x[i]) * k for i in range(3)), dtype=float, count=3)
        s = s + np.sum(y ** 2)
    return s


def fromiter_under_a_branch(x):
    if np.sum(x) > 0.0:
        y = np.fromiter((v ** 3 for v in x), np.float64, 2)  # the first two items
    else:
        y = np.fromiter(x, dtype=float)
    return np.sum(np.tanh(y))


def squares(x):
    return np.fromiter((v * w for v, w in zip(x, x[::-1])), dtype=float)


def fromiter_in_a_helper(x):
    return np.sum(squares(x) * x)


# -- dict.pop ---------------------------------------------------------------------


def pop_in_a_loop(x):
    d = {"a": x, "b": 2.0 * x, "c": np.exp(x)}
    s = 0.0
    for key in ["a", "c"]:
        s = s + np.sum(d.pop(key) * d["b"])
    return s + len(d)


def pop_under_a_branch(x):
    cache = {"h": np.sin(x), "tmp": x ** 2}
    if np.sum(x) > 0.0:
        extra = cache.pop("tmp")
    else:
        extra = cache.pop("missing", 3.0 * x)
    cache.pop("tmp", None)
    return np.sum(cache["h"] * extra) + len(cache)


def popped_total(x):
    d = {"w": x * 2.0, "v": x ** 3}
    w = d.pop("w")
    v = d.pop("v", x)
    return np.sum(w * v) + len(d)


def pop_in_a_helper(x):
    return popped_total(np.cos(x))


# -- np.concatenate(xs, dtype=...) with xs in a name ---------------------------------


def joined_in_a_loop(x):
    xs = []
    for i in range(3):
        xs.append(x * (i + 1.0))
    return np.sum(np.concatenate(xs, dtype=np.float64) ** 2)


def joined_under_a_branch(x):
    parts = [x, np.sin(x)]
    if np.sum(x) > 0.0:
        y = np.stack(parts, axis=1, dtype=np.float64)
    else:
        y = np.hstack(parts, dtype=np.float64)
    return np.sum(y ** 3) + np.sum(np.vstack(parts, dtype=float) * 2.0)


def join(parts):
    return np.concatenate(parts, axis=0, dtype=np.float32)


def joined_in_a_helper(x):
    parts = [x, x ** 2]
    return np.sum(join(parts) * 1.5)


ALL = [indexed_in_a_loop, indexed_under_a_branch, indexed_in_a_helper,
       best_in_a_loop, found_under_a_branch, found_in_a_helper,
       fromiter_plain, fromiter_in_a_loop, fromiter_under_a_branch, fromiter_in_a_helper,
       pop_in_a_loop, pop_under_a_branch, pop_in_a_helper,
       joined_in_a_loop, joined_under_a_branch]


@pytest.mark.parametrize("fn", ALL, ids=lambda f: f.__name__)
@pytest.mark.parametrize("x", [X, -X], ids=["x", "minus-x"])
def test_followed_under_every_policy_and_forward_mode(fn, x):
    check_every_policy(fn, (x.copy(),))


def test_a_join_cast_to_float32_keeps_the_argument_dtype():
    """np.concatenate(parts, dtype=np.float32) of float64 arrays: the value in
    float32 bit for bit; the gradient of each part back in float64."""
    value, grad = srcgrad.value_and_grad(joined_in_a_helper)(X)
    assert value == joined_in_a_helper(X) and grad.dtype == np.float64
    assert_close(grad, 1.5 * (1.0 + 2.0 * X), rtol=1e-6)


def test_a_join_cast_to_int_passes_no_derivative():
    def floored(x):
        xs = [x * 3.0, x]
        return np.sum(np.concatenate(xs, dtype=int, casting="unsafe")[:3] * x)

    assert_close(srcgrad.grad(floored)(X), np.array([0.0, -2.0, 3.0]))


def test_fromiter_to_int_passes_no_derivative():
    def floored(x):
        return np.sum(np.fromiter((v * 3.0 for v in x), dtype=int) * x)

    assert_close(srcgrad.grad(floored)(X), np.fromiter((v * 3.0 for v in X), dtype=int))


# -- scipy.linalg.sqrtm ------------------------------------------------------------

scipy_linalg = pytest.importorskip("scipy.linalg")


def spd(x):
    a = np.outer(x, x) + 3.0 * np.eye(3)
    return a


def sqrtm_in_a_loop(x):
    a = spd(x)
    s = 0.0
    for k in range(2):
        s = s + np.sum(scipy_linalg.sqrtm(a + k * np.eye(3)) * a)
    return s


def sqrtm_under_a_branch(x):
    a = spd(x)
    if np.sum(x) > 0.0:
        r = scipy_linalg.sqrtm(a)
    else:
        r = scipy_linalg.sqrtm(a @ a.T)
    return np.trace(r @ r @ r)


def root(a):
    return scipy_linalg.sqrtm(a)


def sqrtm_in_a_helper(x):
    m = np.array([[2.0, 0.3, 0.0], [0.1, 1.5, 0.2], [0.0, 0.4, 1.0]]) + np.diag(x ** 2)
    return np.sum(root(m) ** 2)


@pytest.mark.parametrize("fn", [sqrtm_in_a_loop, sqrtm_under_a_branch, sqrtm_in_a_helper],
                         ids=lambda f: f.__name__)
@pytest.mark.parametrize("x", [X, -X], ids=["x", "minus-x"])
def test_sqrtm_under_every_policy_forward_mode_and_hvp(fn, x):
    check_every_policy(fn, (x.copy(),))
    v = np.array([0.5, -1.0, 0.25])
    got = srcgrad.hvp(fn)(x, v)
    g = srcgrad.grad(fn)
    h = 1e-5
    want = (g(x + h * v) - g(x - h * v)) / (2 * h)
    assert_close(got, want, rtol=1e-5, atol=1e-7)


def test_sqrtm_gradient_is_the_sylvester_solution():
    """d/dA <G, sqrtm(A)> solves S X + X S = G for S = sqrtm(A)^T (here symmetric)."""
    a = spd(X)
    g = np.arange(9.0).reshape(3, 3) / 9.0

    def f(a):
        return np.sum(scipy_linalg.sqrtm(a) * g)

    got = srcgrad.grad(f)(a)
    s = scipy_linalg.sqrtm(a)
    assert_close(s.T @ got + got @ s.T, g, rtol=1e-8, atol=1e-10)
    assert_close(got, numeric_grad(f, [a], 0), rtol=1e-6, atol=1e-8)


# -- a method of what a method returns (review s35 R3-33) ----------------------------


class Layer:
    def __init__(self, w):
        self.w = w

    def forward(self, x):
        return np.tanh(self.w * x)


class Scale:
    def __init__(self, s):
        self.s = s

    def forward(self, x):
        return self.s * x ** 2


class Model:
    def __init__(self):
        self.layers = [Layer(np.array([1.5, -0.5, 0.8])), Scale(0.7)]

    def layer(self, i):
        return self.layers[i]

    def get_block(self):
        return self.layers[1]

    def __call__(self, x):
        h = x
        for i in range(2):
            h = self.layer(i).forward(h)
        return np.sum(h + self.get_block().forward(x))


MODEL = Model()


def chained_in_a_loop(x):
    h = x
    for i in range(2):
        h = MODEL.layer(i).forward(h) + 0.1 * h
    return np.sum(h)


def chained_under_a_branch(x):
    if np.sum(x) > 0.0:
        y = MODEL.get_block().forward(x)
    else:
        y = MODEL.layer(0).forward(x)
    return np.sum(y * x)


def through_block(model, x):
    return model.get_block().forward(np.sin(x))


def chained_in_a_helper(x):
    return np.sum(through_block(MODEL, x) + MODEL.layer(0).forward(x))


def chained_on_an_argument(model, x):
    named = model.layer(0)
    return np.sum(model.layer(0).forward(x) * named.forward(x) + model.get_block().forward(x))


def model_called(x):
    return MODEL(x)


@pytest.mark.parametrize("fn", [chained_in_a_loop, chained_under_a_branch, chained_in_a_helper,
                                model_called], ids=lambda f: f.__name__)
@pytest.mark.parametrize("x", [X, -X], ids=["x", "minus-x"])
def test_a_method_of_what_a_method_returns(fn, x):
    check_every_policy(fn, (x.copy(),))


def test_a_method_of_what_a_method_of_an_argument_returns():
    check_every_policy(chained_on_an_argument, (MODEL, X.copy()), wrt=1)


def test_grad_of_a_model_whose_call_chains_methods():
    x = X.copy()
    assert_close(srcgrad.grad(MODEL)(x), numeric_grad(MODEL, [x], 0), rtol=1e-6, atol=1e-8)


# -- dataclasses with __slots__ holding parameters ---------------------------------


@dataclass(slots=True)
class Params:
    w: np.ndarray
    b: float = 0.5


@dataclass(slots=True, frozen=True)
class Frozen:
    w: np.ndarray
    scale: float


PARAMS = Params(np.array([1.0, -2.0, 0.5]), 0.25)


def slots_global_in_a_loop(x):
    h = x
    for _ in range(2):
        h = np.tanh(PARAMS.w * h + PARAMS.b)
    return np.sum(h)


def slots_argument_under_a_branch(p, x):
    if p.b > 0.0:
        y = np.sin(p.w * x) + p.b
    else:
        y = np.cos(p.w * x)
    return np.sum(y ** 2)


def apply(p, x):
    return p.w * x * p.scale


def slots_in_a_helper(q, x):
    return np.sum(np.exp(apply(q, x)) + apply(q, x * 2.0))


def slots_built(x):
    p = Params(x * 2.0, 0.1)
    return slots_argument_under_a_branch(p, x)


@pytest.mark.parametrize("fn", [slots_global_in_a_loop, slots_built], ids=lambda f: f.__name__)
def test_slots_dataclass_read_or_built(fn):
    check_every_policy(fn, (X.copy(),))


@pytest.mark.parametrize("fn, p", [(slots_argument_under_a_branch, PARAMS),
                                   (slots_argument_under_a_branch, Params(PARAMS.w, -0.5)),
                                   (slots_in_a_helper, Frozen(np.array([0.3, 0.2, -0.1]), 1.5))],
                         ids=["branch", "other-branch", "helper-frozen"])
def test_slots_dataclass_argument(fn, p):
    check_every_policy(fn, (p, X.copy()), wrt=1)  # the data
    g = srcgrad.grad(fn, wrt=0)(p, X.copy())  # the parameters: an object of their class
    assert type(g) is type(p)
    for name in ("w", "b", "scale"):
        if not hasattr(p, name):
            continue
        value = getattr(p, name)

        def along(v, name=name):
            return fn(dataclasses.replace(p, **{name: v}), X.copy())
        assert_close(getattr(g, name), numeric_grad(along, [value], 0), rtol=1e-6, atol=1e-8)
    for policy in ("recompute", "sqrt"):
        again = srcgrad.grad(fn, wrt=0, policy=policy)(p, X.copy())
        assert all(np.array_equal(getattr(again, n), getattr(g, n))
                   for n in ("w", "b", "scale") if hasattr(p, n))


# -- scipy.special functions autograd differentiates (session 37) ----------------------

special = pytest.importorskip("scipy.special")


def bessels_in_a_loop(x):
    s = 0.0
    for k in range(3):
        s = s + np.sum(special.jn(k, x) * special.i0(x) + special.iv(1.5, x * x + 0.5))
    return s


def gamma_family_under_a_branch(x):
    y = x * x + 0.5
    if np.sum(x) > 0.0:
        r = special.gammainc(2.5, y) + special.rgamma(y) + special.beta(y, 2.0)
    else:
        r = special.gammaincc(1.5, y) * special.betainc(2.0, 3.0, y / (1.0 + y))
    return np.sum(r) + special.multigammaln(np.sum(y) + 2.0, 3)


def bessel_helper(x):
    return special.y1(x * x + 1.0) + special.j0(x) * special.ive(2, x) + special.i1(x)


def special_in_a_helper(x):
    return np.sum(bessel_helper(x) ** 2)


@pytest.mark.parametrize("fn", [bessels_in_a_loop, gamma_family_under_a_branch,
                                special_in_a_helper], ids=lambda f: f.__name__)
@pytest.mark.parametrize("x", [X, -X], ids=["x", "minus-x"])
def test_special_functions_every_policy_forward_mode_and_hvp(fn, x):
    check_every_policy(fn, (x.copy(),))
    v = np.array([0.5, -1.0, 0.25])
    g = srcgrad.grad(fn)
    h = 1e-5
    assert_close(srcgrad.hvp(fn)(x, v), (g(x + h * v) - g(x - h * v)) / (2 * h),
                 rtol=1e-5, atol=1e-7)


# -- scipy.stats densities autograd differentiates (session 37) ------------------------

stats = pytest.importorskip("scipy.stats")
K = np.array([0, 2, 1])


def densities_in_a_loop(x):
    s = 0.0
    for df in (3.0, 5.0):
        s = s + np.sum(stats.t.pdf(x, df, 0.1, 1.5) + stats.chi2.logpdf(x * x + 0.5, df))
    return s + np.sum(stats.norm.logsf(x, 0.2, 1.3))


def densities_under_a_branch(x):
    mu = np.exp(x)
    if np.sum(x) > 0.0:
        r = stats.poisson.logpmf(K, mu) + stats.gamma.pdf(mu + 1.0, 2.5)
    else:
        r = stats.poisson.pmf(K, mu) * stats.chi2.pdf(mu, 4.0)
    return np.sum(r)


def beta_density(x):
    p = 1.0 / (1.0 + np.exp(-x))
    return stats.beta.logpdf(p, 2.0, 3.0) + stats.beta.pdf(p, 1.5, 2.5)


def densities_in_a_helper(x):
    cov = np.eye(3) * 2.0 + 0.1
    return np.sum(beta_density(x)) + stats.multivariate_normal.pdf(x, np.zeros(3), cov)


def sylvester_in_a_helper(x):
    a = np.diag(x ** 2 + 2.0) + 0.1
    return np.sum(scipy_linalg.solve_sylvester(a, a.T + np.eye(3), np.outer(x, x) + np.eye(3)))


@pytest.mark.parametrize("fn", [densities_in_a_loop, densities_under_a_branch,
                                densities_in_a_helper, sylvester_in_a_helper],
                         ids=lambda f: f.__name__)
@pytest.mark.parametrize("x", [X, -X], ids=["x", "minus-x"])
def test_densities_every_policy_forward_mode_and_hvp(fn, x):
    check_every_policy(fn, (x.copy(),))
    v = np.array([0.5, -1.0, 0.25])
    g = srcgrad.grad(fn)
    h = 1e-5
    assert_close(srcgrad.hvp(fn)(x, v), (g(x + h * v) - g(x - h * v)) / (2 * h),
                 rtol=1e-5, atol=1e-7)


# -- still refused: np.lib.stride_tricks.as_strided -----------------------------------


def strided_windows(x):
    w = np.lib.stride_tricks.as_strided(x, shape=(2, 2), strides=(x.strides[0], x.strides[0]))
    return np.sum(w ** 2)


def test_as_strided_is_refused_saying_why_and_what_to_write():
    """Its view is chosen by byte offsets (overlaps, or memory outside the
    array), so no rule can say where each element's gradient goes; the message
    says so and names sliding_window_view and integer indexing, in both modes."""
    for run in (lambda: srcgrad.grad(strided_windows)(X.copy()),
                lambda: srcgrad.jvp(strided_windows, (X.copy(),), (np.ones(3),))):
        with pytest.raises(srcgrad.MissingRuleError) as caught:
            run()
        error = caught.value
        assert (error.filename, error.lineno) == (__file__,
                                                  strided_windows.__code__.co_firstlineno + 1)
        assert "byte offsets" in error.message and "sliding_window_view" in error.message


@pytest.mark.parametrize("fn", [pop_in_a_loop, pop_under_a_branch, pop_in_a_helper,
                                fromiter_in_a_loop, fromiter_under_a_branch, joined_in_a_loop,
                                joined_under_a_branch, chained_in_a_loop, chained_in_a_helper,
                                slots_global_in_a_loop, slots_built, best_in_a_loop,
                                found_in_a_helper], ids=lambda f: f.__name__)
def test_second_order_through_each_construct(fn):
    """hvp (forward over reverse) against differences of the gradient."""
    x, v = X.copy(), np.array([0.5, -1.0, 0.25])
    g = srcgrad.grad(fn)
    h = 1e-5
    assert_close(srcgrad.hvp(fn)(x, v), (g(x + h * v) - g(x - h * v)) / (2 * h),
                 rtol=1e-5, atol=1e-7)


def real_order(v):
    return np.sum(special.jv(v, 2.0) + special.jn(v, 1.5))


def test_a_differentiated_bessel_order_is_refused_not_zero():
    """jn is jv's very ufunc, whose order is real: a value being differentiated
    reaching it is refused (its gradient would be 0), not silently dropped."""
    with pytest.raises(srcgrad.NonDifferentiableError, match="parameter 'v' of 'scipy.special.jv'"):
        srcgrad.grad(real_order)(np.array([1.5, 2.5]))


ALPHA = np.array([1.5, 2.0, 3.0])
P = np.array([0.2, 0.3, 0.5])


def simplex(z):
    e = np.exp(z - np.max(z))
    return e / np.sum(e)


def dirichlet_in_a_loop(z):
    p = simplex(z)
    s = 0.0
    for scale in (1.0, 2.0):
        s = s + stats.dirichlet.logpdf(p, ALPHA * scale)
    return s


def dirichlet_under_a_branch(z):
    p = simplex(z)
    if np.sum(z) > 0.0:
        return stats.dirichlet.pdf(p, ALPHA)
    return stats.dirichlet.logpdf(p[:2], ALPHA)  # k - 1 rows: SciPy adds 1 - sum


def concentration(z):
    return np.exp(z) + 1.0


def dirichlet_in_a_helper(z):
    return stats.dirichlet.logpdf(P, concentration(z)) + stats.dirichlet.pdf(P, concentration(-z))


@pytest.mark.parametrize("fn", [dirichlet_in_a_loop, dirichlet_under_a_branch,
                                dirichlet_in_a_helper], ids=lambda f: f.__name__)
@pytest.mark.parametrize("x", [X, -X], ids=["x", "minus-x"])
def test_dirichlet_every_policy_forward_mode_and_hvp(fn, x):
    check_every_policy(fn, (x.copy(),))
    v = np.array([0.5, -1.0, 0.25])
    g = srcgrad.grad(fn)
    h = 1e-5
    assert_close(srcgrad.hvp(fn)(x, v), (g(x + h * v) - g(x - h * v)) / (2 * h),
                 rtol=1e-5, atol=1e-7)


def test_dirichlet_gradient_in_x_of_k_rows_is_the_ambient_one():
    """With all k rows (on the simplex) the cotangent of x is (alpha - 1) / x."""
    def logp(x):
        return stats.dirichlet.logpdf(x, ALPHA)

    assert_close(srcgrad.grad(logp)(P.copy()), (ALPHA - 1) / P, rtol=1e-12)


def cdfs_in_a_loop(x):
    s = 0.0
    for df in (2.5, 6.0):
        s = s + np.sum(stats.t.cdf(x, df, 0.1, 1.2) + stats.t.logcdf(x * 0.5, df))
    return s


def cdfs_under_a_branch(x):
    y = x * x + 0.5
    if np.sum(x) > 0.0:
        r = stats.gamma.cdf(y, 2.5, 0.0, 1.5) + stats.chi2.cdf(y, 3.0)
    else:
        r = stats.beta.cdf(y / (1.0 + y), 2.0, 3.0)
    return np.sum(r)


def counts_below(mu):
    return stats.poisson.cdf(K, mu)


def cdfs_in_a_helper(x):
    return np.sum(counts_below(np.exp(x)) ** 2)


@pytest.mark.parametrize("fn", [cdfs_in_a_loop, cdfs_under_a_branch, cdfs_in_a_helper],
                         ids=lambda f: f.__name__)
@pytest.mark.parametrize("x", [X, -X], ids=["x", "minus-x"])
def test_distribution_functions_every_policy_forward_mode_and_hvp(fn, x):
    check_every_policy(fn, (x.copy(),))
    v = np.array([0.5, -1.0, 0.25])
    g = srcgrad.grad(fn)
    h = 1e-5
    assert_close(srcgrad.hvp(fn)(x, v), (g(x + h * v) - g(x - h * v)) / (2 * h),
                 rtol=1e-5, atol=1e-7)


def cdf_in_its_shape(df):
    return np.sum(stats.t.cdf(0.7, df))


def test_a_distribution_function_in_its_shape_parameter_is_refused():
    """No closed form in df: a value being differentiated reaching it is refused,
    never a silent 0."""
    with pytest.raises(srcgrad.NonDifferentiableError, match="parameter 'df'"):
        srcgrad.grad(cdf_in_its_shape)(np.array([2.5, 4.0]))


def popped_while_iterated(x):
    d = {"a": x, "b": 2.0 * x}
    s = 0.0
    for k in d:
        s = s + np.sum(d.pop(k))
    return s


def test_a_pop_in_a_loop_over_the_dict_itself_is_left_to_the_refusal():
    """Python raises RuntimeError there (the dict changed size while iterated);
    srcgrad's rebound copy would not, so that pop keeps the located refusal."""
    with pytest.raises(srcgrad.UnsupportedSyntaxError, match=r"d\.pop\(k\)"):
        srcgrad.grad(popped_while_iterated)(X.copy())
