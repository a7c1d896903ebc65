"""The NumPy functions of issue 15 in programs written the way users write them
(data/breadth_fns.py): a fluid step with np.roll, finite-difference energies
with np.diff, np.pad and np.gradient, sorted and partitioned losses, an LSTM
cell with np.split, a Gaussian KL with np.tril, np.diag and an einsum trace,
complex phases, np.cross, np.kron, np.select...

Each program is checked in reverse mode against finite differences and against
autograd (an independent AD, run on the same source with ``np`` bound to
``autograd.numpy``), in forward mode against finite differences, and its
Hessian-vector product (reverse mode over the generated tangent code, which
differentiates the tangent rules again) against differences of gradients.
The complex program's arguments are the real and imaginary parts of its
complex intermediates, so its differences run along both directions.
"""

from __future__ import annotations

import builtins
import importlib.util
import types

import breadth_fns
import numpy as np
import pytest
from numeric import assert_close, float_positions, jvp_fd, numeric_grad, random_like

import srcgrad

CASES = [pytest.param(name, id=name) for name in breadth_fns.CASES]


def _case(name, seed=0):
    fn, make = breadth_fns.CASES[name]
    return fn, make(np.random.default_rng(seed))


@pytest.mark.parametrize("name", CASES)
def test_gradient_matches_finite_differences(name):
    fn, args = _case(name)
    wrt = float_positions(args)
    value, grads = srcgrad.value_and_grad(fn, wrt=wrt)(*args)
    assert value == fn(*args)
    for index, g in zip(wrt, grads):
        assert np.shape(g) == np.shape(args[index])
        assert_close(g, numeric_grad(fn, args, index), rtol=1e-5, atol=1e-6,
                     what=f"{name}: gradient of argument {index}")


def _on_autograd():
    """breadth_fns executed again from its file, ``import numpy`` giving autograd's."""
    anp = pytest.importorskip("autograd.numpy")

    def importer(name, globals=None, locals=None, fromlist=(), level=0):
        if level == 0 and name == "numpy":
            return anp
        return builtins.__import__(name, globals, locals, fromlist, level)

    twin = types.ModuleType("breadth_fns_on_autograd")
    twin.__dict__["__builtins__"] = {**builtins.__dict__, "__import__": importer}
    with open(breadth_fns.__file__, encoding="utf-8") as file:
        exec(compile(file.read(), breadth_fns.__file__, "exec"), twin.__dict__)  # noqa: S102
    return twin


#: Programs autograd itself cannot differentiate, and why.
AUTOGRAD_CANNOT = {
    "membrane_energy": "autograd's np.pad VJP needs the mode passed explicitly",
    "smoothing_penalty": "autograd's np.pad VJP supports the constant mode only",
    "gaussian_kl": "autograd's np.diagonal VJP supports axis1=-1, axis2=-2 only",
    "batch_traces": "autograd's einsum VJP cannot take an index repeated in one operand",
}


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@pytest.mark.parametrize("name", CASES)
def test_gradient_agrees_with_autograd(name):
    autograd = pytest.importorskip("autograd")
    fn, args = _case(name)
    twin = _on_autograd().CASES[name][0]
    wrt = float_positions(args)
    try:
        expected = [autograd.grad(twin, i)(*args) for i in wrt]
    except Exception as error:  # autograd cannot run this program
        if name in AUTOGRAD_CANNOT:
            pytest.skip(f"autograd cannot run {name}: {AUTOGRAD_CANNOT[name]}")
        raise AssertionError(f"autograd raised on {name} ({type(error).__name__}: {error}); "
                             f"if the limit is autograd's, record it in AUTOGRAD_CANNOT") \
            from error
    assert name not in AUTOGRAD_CANNOT, f"autograd now runs {name}: remove it from AUTOGRAD_CANNOT"
    for index, g, h in zip(wrt, srcgrad.grad(fn, wrt=wrt)(*args), expected):
        assert_close(g, h, rtol=1e-9, atol=1e-11,
                     what=f"{name}: gradient of argument {index}, srcgrad vs autograd")


@pytest.mark.parametrize("name", CASES)
def test_forward_mode_matches_finite_differences(name):
    fn, args = _case(name)
    wrt = float_positions(args)
    rng = np.random.default_rng(1)
    tangents = [random_like(rng, a) if i in wrt else None for i, a in enumerate(args)]
    value, tangent = srcgrad.jvp(fn, args, tangents)
    assert value == fn(*args)
    assert_close(tangent, jvp_fd(fn, args, wrt, [tangents[i] for i in wrt]), rtol=1e-5,
                 atol=1e-6, what=f"{name}: jvp")


HVP_CASES = breadth_fns.CASES  # phase_loss: through np.abs of a complex value (signum's tangent)


@pytest.mark.parametrize("name", HVP_CASES)
def test_hessian_vector_product_matches_differences_of_gradients(name):
    fn, args = _case(name)
    v = random_like(np.random.default_rng(2), args[0])
    hv = srcgrad.hvp(fn)(*args, v)
    eps = 1e-5
    grad = srcgrad.grad(fn)
    plus, minus = grad(args[0] + eps * v, *args[1:]), grad(args[0] - eps * v, *args[1:])
    assert_close(hv, (plus - minus) / (2 * eps), rtol=1e-4, atol=1e-5, what=f"{name}: hvp")


def test_complex_directions_of_the_phase_loss():
    """The gradient with respect to ``re`` and ``im`` is the derivative along the
    real and the imaginary direction of ``z = re + i im``: autograd's convention
    for a real loss of a complex value, checked element by element."""
    fn, (re, im, w) = _case("phase_loss")
    g_re, g_im = srcgrad.grad(fn, wrt=(0, 1))(re, im, w)
    h = 1e-6
    for k in range(re.size):
        e = np.zeros_like(re)
        e[k] = h
        assert g_re[k] == pytest.approx((fn(re + e, im, w) - fn(re - e, im, w)) / (2 * h),
                                        rel=1e-6, abs=1e-8)
        assert g_im[k] == pytest.approx((fn(re, im + e, w) - fn(re, im - e, w)) / (2 * h),
                                        rel=1e-6, abs=1e-8)


def test_einsum_with_a_repeated_index_differentiates():
    """np.einsum('ii', A) (a trace) and 'ii->i' (a diagonal) used to fail inside
    the runtime; their cotangents are the identity and a diagonal matrix."""
    a = np.arange(9.0).reshape(3, 3)
    g = srcgrad.grad(lambda m: np.einsum("ii", m))(a)
    np.testing.assert_array_equal(g, np.eye(3))
    g = srcgrad.grad(lambda m: np.sum(np.einsum("ii->i", m) * np.array([1.0, 2.0, 3.0])))(a)
    np.testing.assert_array_equal(g, np.diag([1.0, 2.0, 3.0]))


def test_integer_casts_carry_no_derivative_and_float_casts_do():
    def f(x):
        return np.float32(x) * 2.0 + np.int64(x) + np.float64(np.int32(x * 3))

    assert srcgrad.grad(f)(1.25) == 2.0
    value, tangent = srcgrad.jvp(f, (1.25,), (1.0,))
    assert value == f(1.25) and tangent == 2.0


@pytest.mark.parametrize("name", list(breadth_fns.VIEW_UPDATES))
def test_updates_seen_through_the_new_views_are_followed(name):
    """np.fliplr, np.real, np.rollaxis and np.diagonal return views of their
    argument: an update of the base after them changes them, and the gradient
    follows (as for a slice)."""
    fn, shape = breadth_fns.VIEW_UPDATES[name]
    x = np.random.default_rng(3).standard_normal(shape)
    assert_close(srcgrad.grad(fn)(x), numeric_grad(fn, (x,), 0), rtol=1e-5, atol=1e-6,
                 what=name)
    value, tangent = srcgrad.jvp(fn, (x,), (np.ones(shape),))
    assert tangent == pytest.approx(float(np.sum(numeric_grad(fn, (x,), 0))), rel=1e-6)


def test_an_update_seen_through_split_pieces_is_refused():
    x = np.arange(4.0)
    with pytest.raises(srcgrad.AliasedUpdateError):
        srcgrad.grad(breadth_fns.split_then_updated)(x)


def test_exported_gradients_carry_the_new_helpers(tmp_path):
    """The runtime helpers of these rules (unsplit, pad_grad, diff_grad,
    gradient_grad, kron_grads, einsum's diagonals...) are copied into an
    exported module, which gives the same gradients."""
    fns = [breadth_fns.CASES[name][0] for name in breadth_fns.CASES]
    path = tmp_path / "breadth_exported.py"
    srcgrad.export(str(path), *[srcgrad.grad(fn) for fn in fns])
    text = path.read_text(encoding="utf-8")
    assert "import srcgrad" not in text and "from srcgrad" not in text
    spec = importlib.util.spec_from_file_location("breadth_exported", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    for name, (fn, make) in breadth_fns.CASES.items():
        args = make(np.random.default_rng(0))
        assert_close(getattr(module, f"grad_{fn.__name__}")(*args), srcgrad.grad(fn)(*args),
                     rtol=1e-12, atol=1e-14, what=f"{name}, exported")


def test_unsupported_pad_modes_say_so():
    def f(x):
        return np.sum(np.pad(x, 2, mode="maximum") ** 2)

    with pytest.raises(srcgrad.MissingRuleError, match="maximum"):
        srcgrad.grad(f)(np.arange(4.0))



def _abs_power(t):
    return np.abs(t + 1j * t ** 2) ** 1.5


def _abs_sum(x):
    return np.sum(np.abs(x + 1j * x ** 2 + 0.5j))


def test_second_derivatives_through_abs_of_a_complex_value():
    """``signum(z) = conj(z) / |z|`` turns with the phase of ``z``: grad(grad),
    hessian (forward over reverse) and finite differences of the gradient agree."""
    t, eps = 0.7, 1e-4
    first = srcgrad.grad(_abs_power)
    assert_close(srcgrad.grad(first)(t), (first(t + eps) - first(t - eps)) / (2 * eps),
                 rtol=1e-6, atol=1e-8, what="grad(grad)")
    x = np.array([0.3, -0.8, 1.4])
    g = srcgrad.grad(_abs_sum)
    numeric = np.array([(g(x + 1e-5 * e) - g(x - 1e-5 * e)) / 2e-5 for e in np.eye(3)])
    assert_close(srcgrad.hessian(_abs_sum)(x), numeric, rtol=1e-5, atol=1e-6, what="hessian")
