"""Models built on matrix factorisations, Fourier transforms, NaN-skipping
reductions, interpolation and SciPy (tests/data/linalg_models.py), through the
whole compiler.

Each model's gradient is checked against central differences, and, where
autograd has rules for everything the model calls, against autograd running
the same code (its globals rebound to autograd's modules).  The value is the
model's own, bit for bit.  Forward mode (``jvp``) and second derivatives
(``hessian``, which differentiates generated tangent code again) are checked
on a few.  The rest: SciPy's rules load only when the user's code imports
SciPy, srcgrad works without SciPy, and an unsupported SciPy function is named
by its real module.
"""

from __future__ import annotations

import subprocess
import sys
import types

import linalg_models as m
import numpy as np
import pytest
from numeric import assert_bit_identical, assert_close, jvp_fd, numeric_grad

import srcgrad

RNG = np.random.default_rng(2024)
X6 = RNG.standard_normal((6, 2))
Y6 = np.sin(X6[:, 0]) + 0.1 * RNG.standard_normal(6)
SQUARE = 2 * np.eye(3) + 0.3 * RNG.standard_normal((3, 3))
WITH_NANS = np.where(RNG.uniform(size=(3, 4)) < 0.25, np.nan, RNG.standard_normal((3, 4)))

SCIPY = m.special is not None


def case(fn, args, wrt, autograd=True, scipy=False):
    shapes = "-".join("x".join(map(str, np.shape(a))) for a in args)
    return pytest.param(fn, args, wrt, autograd, id=f"{fn.__name__}-{shapes}",
                        marks=[pytest.mark.skipif(scipy and not SCIPY, reason="needs SciPy")])


CASES = [
    case(m.gp_neg_log_marginal, (np.log([0.8, 1.2, 0.3]), X6, Y6), (0,)),
    case(m.gp_neg_log_marginal_eigh, (np.log([0.8, 1.2, 0.3]), X6, Y6), (0,)),
    case(m.gmm_log_likelihood, (RNG.standard_normal(3), RNG.standard_normal((3, 2)),
                                0.2 * RNG.standard_normal(3), X6), (0, 1, 2), scipy=True),
    case(m.spectral_loss, (RNG.standard_normal(8), RNG.standard_normal(5)), (0,)),
    case(m.spectral_power, (RNG.standard_normal(8), RNG.uniform(size=5)), (0,)),
    case(m.spectral_power, (RNG.standard_normal(7), RNG.uniform(size=4)), (0,),
         autograd=False),  # autograd's rfft rule needs an even length
    case(m.circular_filter_loss, (RNG.standard_normal(6), RNG.standard_normal(6),
                                  RNG.standard_normal(6)), (0, 1)),
    case(m.image_spectrum_energy, (RNG.standard_normal((4, 5)), RNG.uniform(size=(4, 5))),
         (0,)),
    case(m.student_t_regression, (RNG.standard_normal(2), np.array(-0.3), X6, Y6), (0, 1),
         scipy=True),
    case(m.normal_regression, (RNG.standard_normal(2), np.array(0.2), X6, Y6), (0, 1),
         scipy=True),
    case(m.logistic_loss, (RNG.standard_normal(2), X6, (Y6 > 0).astype(float)), (0,),
         autograd=False, scipy=True),
    case(m.mvn_fit, (RNG.standard_normal(2), 0.4, X6), (0, 1), scipy=True),
    case(m.gamma_log_prior, (RNG.uniform(0.5, 2, 4), RNG.uniform(0.5, 2, 4)), (0, 1),
         scipy=True),
    case(m.smooth_2d, (RNG.standard_normal((4, 5)), RNG.standard_normal((2, 3))), (0, 1),
         scipy=True),
    case(m.nuclear_regression, (RNG.standard_normal((3, 2)), RNG.standard_normal((4, 3)),
                                RNG.standard_normal((4, 2))), (0,)),
    case(m.spectral_norm_penalty, (RNG.standard_normal((4, 3)),), (0,), autograd=False),
    case(m.least_squares_norm, (RNG.standard_normal((6, 3)), RNG.standard_normal(6)), (0, 1),
         autograd=False),
    case(m.pinv_projection, (RNG.standard_normal((3, 5)), RNG.standard_normal(3)), (0,),
         autograd=False),
    case(m.qr_log_volume, (RNG.standard_normal((5, 3)),), (0,), autograd=False),
    case(m.matrix_power_trace, (SQUARE,), (0,), autograd=False),
    case(m.nan_robust_loss, (RNG.standard_normal((3, 4)), WITH_NANS), (0,), autograd=False),
    case(m.survival, (RNG.standard_normal(5),), (0,), autograd=False),
    case(m.interpolated_curve, (np.array([-1.3, -0.2, 0.45, 0.9, 2.5]),
                                RNG.standard_normal(4), np.array([-1.0, 0.0, 0.5, 1.5])),
         (0, 1), autograd=False),
    case(m.smoothed, (RNG.standard_normal(7), RNG.standard_normal(3)), (0, 1), autograd=False),
]


def under_autograd(fn):
    """``fn``'s own code with NumPy and SciPy rebound to autograd's wrappers."""
    anp = pytest.importorskip("autograd.numpy")
    names = dict(fn.__globals__, np=anp)
    if SCIPY:  # autograd's wrappers of SciPy import SciPy
        from autograd.scipy import signal, special, stats  # noqa: PLC0415
        names.update(special=special, stats=stats, signal=signal)
    return types.FunctionType(fn.__code__, names, fn.__name__, fn.__defaults__)


@pytest.mark.parametrize(("fn", "args", "wrt", "autograd"), CASES)
def test_gradient_matches_differences(fn, args, wrt, autograd):
    value, grads = srcgrad.value_and_grad(fn, wrt=wrt if len(wrt) > 1 else wrt[0])(*args)
    assert_bit_identical(value, fn(*args), fn.__name__)
    grads = grads if len(wrt) > 1 else (grads,)
    for i, g in zip(wrt, grads):
        assert np.shape(g) == np.shape(args[i])
        assert_close(g, numeric_grad(fn, list(args), i), rtol=1e-5, atol=1e-6,
                     what=f"{fn.__name__}, argument {i}")


@pytest.mark.parametrize(("fn", "args", "wrt", "autograd"), CASES)
def test_gradient_matches_autograd(fn, args, wrt, autograd):
    if not autograd:
        pytest.skip("autograd has no rule for a function this model calls")
    ag = pytest.importorskip("autograd")
    grads = srcgrad.grad(fn, wrt=wrt if len(wrt) > 1 else wrt[0])(*args)
    grads = grads if len(wrt) > 1 else (grads,)
    expected = ag.grad(under_autograd(fn), wrt if len(wrt) > 1 else wrt[0])(*args)
    expected = expected if len(wrt) > 1 else (expected,)
    for g, e in zip(grads, expected):
        assert_close(g, e, rtol=1e-7, atol=1e-9, what=fn.__name__)


@pytest.mark.parametrize(("fn", "args", "wrt", "autograd"), CASES)
def test_forward_mode_matches_differences(fn, args, wrt, autograd):
    rng = np.random.default_rng(5)
    directions = [rng.standard_normal(np.shape(args[i])) for i in wrt]
    tangents = [None] * len(args)
    for i, d in zip(wrt, directions):
        tangents[i] = d if np.ndim(args[i]) else float(d)
    value, tangent = srcgrad.jvp(fn, list(args), tangents)
    assert_bit_identical(value, fn(*args), fn.__name__)
    assert_close(tangent, jvp_fd(fn, list(args), list(wrt), directions), rtol=1e-5, atol=1e-6,
                 what=fn.__name__)


@pytest.mark.parametrize(("fn", "args"), [
    (m.gp_neg_log_marginal, (np.log([0.8, 1.2, 0.3]), X6, Y6)),
    (m.gp_neg_log_marginal_eigh, (np.log([0.8, 1.2, 0.3]), X6, Y6)),
    (m.spectral_power, (RNG.standard_normal(6), RNG.uniform(size=4))),
    pytest.param(m.student_t_regression, (RNG.standard_normal(2), -0.3, X6, Y6),
                 marks=pytest.mark.skipif(not SCIPY, reason="needs SciPy")),
    pytest.param(m.gmm_log_likelihood, (RNG.standard_normal(3), RNG.standard_normal((3, 2)),
                                        0.2 * RNG.standard_normal(3), X6),
                 marks=pytest.mark.skipif(not SCIPY, reason="needs SciPy")),
    (m.survival, (RNG.standard_normal(4),)),
    (m.nuclear_regression, (RNG.standard_normal((3, 2)), RNG.standard_normal((4, 3)),
                            RNG.standard_normal((4, 2)))),
], ids=lambda v: getattr(v, "__name__", ""))
def test_hessian_matches_differences_of_the_gradient(fn, args):
    """Second derivatives run reverse mode over the generated tangent code:
    the tangent rules of cholesky, eigh, svd, rfft, logsumexp, t.logpdf (psi)
    and cumprod are differentiated again.  (Not through ``np.abs`` of a complex
    value: docs/limitations.md.)"""
    hess = srcgrad.hessian(fn)(*args)
    grad = srcgrad.grad(fn)
    x = np.asarray(args[0], dtype=float)
    eps = 1e-5
    numeric = np.zeros((x.size, x.size))
    for k in range(x.size):
        step = np.zeros(x.size)
        step[k] = eps
        step = step.reshape(x.shape)
        numeric[:, k] = np.ravel(grad(x + step, *args[1:]) - grad(x - step, *args[1:])) / (2 * eps)
    assert_close(np.reshape(hess, (x.size, x.size)), numeric, rtol=1e-4, atol=1e-5,
                 what=fn.__name__)


def test_cumprod_second_derivatives_through_zeros():
    """cumprod's tangent is written so that its zero terms move: the Hessian
    at a point with zeros is exact."""
    z = np.array([0.5, 0.0, 2.0, 0.0, 1.5])

    hess = srcgrad.hessian(_weighted_cumprod)(z)
    eps = 1e-6
    numeric = np.zeros((5, 5))
    for i in range(5):
        for j in range(5):
            ei, ej = np.eye(5)[i] * eps, np.eye(5)[j] * eps
            numeric[i, j] = (_weighted_cumprod(z + ei + ej) - _weighted_cumprod(z + ei - ej)
                             - _weighted_cumprod(z - ei + ej)
                             + _weighted_cumprod(z - ei - ej)) / (4 * eps * eps)
    assert_close(hess, numeric, rtol=1e-4, atol=1e-4)


def _weighted_cumprod(z):
    return np.sum(np.cumprod(z) * np.array([1.0, -2.0, 0.5, 3.0, 1.0]))


# -- SciPy, lazily -------------------------------------------------------------------

def _run(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_scipy_is_not_imported_unless_the_code_uses_it(tmp_path):
    module = tmp_path / "plain_model.py"
    module.write_text("import numpy as np\n\n\ndef f(x):\n"
                      "    return np.sum(np.linalg.cholesky(x @ x.T + np.eye(2)))\n")
    out = _run(f"import sys; sys.path.insert(0, {str(tmp_path)!r})\n"
               "import numpy as np, srcgrad, plain_model\n"
               "g = srcgrad.grad(plain_model.f)(np.eye(2))\n"
               "print(sorted(m for m in sys.modules if m.split('.')[0] == 'scipy'))\n")
    assert out.strip() == "[]"


def test_srcgrad_works_without_scipy(tmp_path):
    module = tmp_path / "plain_model2.py"
    module.write_text("import numpy as np\n\n\ndef f(x):\n"
                      "    return np.sum(np.abs(np.fft.rfft(x)) ** 2)\n")
    out = _run(f"import sys; sys.path.insert(0, {str(tmp_path)!r})\n"
               "sys.modules['scipy'] = None  # as if SciPy were not installed\n"
               "import numpy as np, srcgrad, plain_model2\n"
               "from srcgrad.rules import registry\n"
               "print(srcgrad.grad(plain_model2.f)(np.ones(4)), registry.lookup(len))\n")
    assert out.split()[-1] == "None"


@pytest.mark.skipif(not SCIPY, reason="needs SciPy")
def test_a_scipy_function_without_a_rule_is_named_by_its_module(tmp_path):
    module = tmp_path / "bessel_model.py"
    module.write_text("import numpy as np\nfrom scipy import special\n\n\ndef f(x):\n"
                      "    return np.sum(special.kv(1.5, x))\n")
    out = _run(f"import sys; sys.path.insert(0, {str(tmp_path)!r})\n"
               "import numpy as np, srcgrad, bessel_model\n"
               "try:\n    srcgrad.grad(bessel_model.f)(np.ones(3))\n"
               "except srcgrad.MissingRuleError as e:\n    print(e)\n")
    assert "'scipy.special.kv'" in out and "np.kv" not in out


@pytest.mark.skipif(not SCIPY, reason="needs SciPy")
def test_generated_code_calls_scipy_by_the_users_name():
    source = srcgrad.grad(m.gmm_log_likelihood).source
    assert "special.logsumexp(" in source and "logsumexp_grads(" in source
