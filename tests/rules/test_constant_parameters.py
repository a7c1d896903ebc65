"""A value being differentiated passed where srcgrad's rules once took a
constant: clip bounds, interpolation knots and ``left``/``right``, pad values,
a log base, ``np.diff``'s prepend and append, ``np.gradient``'s spacing,
``np.linspace``'s end points and ``np.arange``'s start and step (all gave a
silent zero).  Each function's gradient is checked against central
differences, its jvp against the gradient, and autograd where it
differentiates the same.  Parameters no rule differentiates (a norm's order,
coordinates given to ``np.gradient``, ``ddof``) are refused when compiling,
with the place and the way out; ints, shapes and axes reaching a constant
parameter are not.
"""

from __future__ import annotations

import constant_param_fns as fns
import numpy as np
import pytest
from numeric import numeric_grad

import srcgrad
from srcgrad.errors import NonDifferentiableError

X = np.array([-2.0, -0.3, 0.4, 1.7, 2.5])
U = np.array([0.1, 0.5, 0.2, 0.9])
M = np.array([[0.3, -1.2, 0.5, 2.0], [1.1, 0.2, -0.7, 0.4], [-0.4, 0.9, 1.3, -1.8]])

CASES = {
    "clip_bounds": (fns.clip_bounds, (X, 1.0), 6.0),
    "clip_method": (fns.clip_method, (X, 1.0), 6.0),
    "clip_array_bounds": (fns.clip_array_bounds,
                          (M, np.array([-0.5, -1.0, 0.0, -0.6]), np.array([[0.8], [0.5], [1.0]])),
                          None),
    "clip_lower": (fns.clip_lower, (X, 0.1), None),
    "clip_upper": (fns.clip_upper, (X, 0.1), None),
    "interp_xp": (fns.interp_xp, (U, 1.2), -0.9722222),
    "interp_all": (fns.interp_all, (np.array([-0.3, 0.2, 0.55, 0.9, 1.4]),
                                    np.array([0.0, 0.4, 0.7, 1.0]),
                                    np.array([1.0, -0.5, 2.0, 0.3])), None),
    "interp_left": (fns.interp_left, (np.array([-0.5, 0.5, 1.5]), 0.3), 3.0),
    "pad_const": (fns.pad_const, (U, 0.7), 5.6),
    "pad_pairs": (fns.pad_pairs, (M[:2, :2], np.array([[0.5, -0.2], [1.5, 0.3]])), None),
    "pad_tuple": (fns.pad_tuple, (U, 0.5, -0.8), None),
    "log_base": (fns.log_base, (2.5, 3.0), -0.2530598),
    "diff_prepend": (fns.diff_prepend, (U, 0.7), 1.2),
    "diff_append": (fns.diff_append, (U, 0.7), None),
    "diff_both": (fns.diff_both, (M, np.array([[0.2, 0.1, -0.3, 0.4]]),
                                  np.array([[1.0, 0.5, 0.2, -0.1], [0.3, 0.3, 0.9, 0.0]])), None),
    "grad_spacing": (fns.grad_spacing, (U, 0.3), -51.2962963),
    "grad_spacings_2d": (fns.grad_spacings_2d, (M, 0.3, 0.7), None),
    "timegrid": (fns.timegrid, (2.0, 0.7), (0, -1.5376455)),
    "linspace_open": (fns.linspace_open, (-0.4, 1.3), None),
    "linspace_arrays": (fns.linspace_arrays, (np.array([0.2, -0.5]), np.array([1.0, 0.3])), None),
    "linspace_retstep": (fns.linspace_retstep, (-0.4, 1.3), None),
    "linspace_one": (fns.linspace_one, (-0.4, 1.3), None),
    "linspace_int": (fns.linspace_int, (0.25, 1.5), None),   # floored: only a * b moves
    "arange_start": (fns.arange_start, (0.1,), 3.8),
    "arange_step": (fns.arange_step, (0.3,), None),
    "nan_to_num_values": (fns.nan_to_num_values,
                          (np.array([1.0, np.nan, np.inf, -np.inf, np.nan]), 0.6), None),
}


def _float_positions(args):
    return [i for i, a in enumerate(args)
            if isinstance(a, float) or (isinstance(a, np.ndarray) and not np.isnan(a).any()
                                        and not np.isinf(a).any())]


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradient_matches_central_differences(name):
    fn, args, expected = CASES[name]
    wrt = tuple(_float_positions(args))
    grads = srcgrad.grad(fn, wrt=wrt)(*args)
    grads = grads if isinstance(grads, tuple) else (grads,)
    for i, g in zip(wrt, grads):
        fd = numeric_grad(fn, args, i)
        np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-7, err_msg=f"{name}: argument {i}")
        assert np.shape(g) == np.shape(args[i])
    if expected is not None:  # the reproduction's finite difference (of the last argument)
        position, value = expected if isinstance(expected, tuple) else (wrt[-1], expected)
        assert grads[wrt.index(position)] == pytest.approx(value, rel=1e-6)


#: jvp specialises on Python floats as grad does (a spacing passed in is then known
#: to be a number; a moving array of coordinates is refused); these functions take
#: float(dx) instead, which both modes accept too.
AS_FLOAT = {"grad_spacing": fns.grad_spacing_float, "grad_spacings_2d": fns.grad_spacings_2d_float}


@pytest.mark.parametrize("name", sorted(CASES))
def test_jvp_matches_the_gradient(name):
    fn, args, _ = CASES[name]
    for fn in (fn, AS_FLOAT[name]) if name in AS_FLOAT else (fn,):
        wrt = tuple(_float_positions(args))
        grads = srcgrad.grad(fn, wrt=wrt)(*args)
        grads = grads if isinstance(grads, tuple) else (grads,)
        rng = np.random.default_rng(3)
        for i, g in zip(wrt, grads):
            v = float(rng.standard_normal()) if isinstance(args[i], float) \
                else rng.standard_normal(np.shape(args[i]))
            tangents = [None] * len(args)
            tangents[i] = v
            _, t = srcgrad.jvp(fn, args, tangents)
            assert float(t) == pytest.approx(float(np.sum(g * v)), rel=1e-9, abs=1e-12), name


def test_autograd_agrees_on_linspace():
    autograd = pytest.importorskip("autograd")
    anp = pytest.importorskip("autograd.numpy")

    def timegrid(T, k):
        return anp.sum(anp.exp(-k * anp.linspace(0.0, T, 11)))

    for wrt in (0, 1):
        expected = autograd.grad(timegrid, wrt)(2.0, 0.7)
        assert srcgrad.grad(fns.timegrid, wrt=wrt)(2.0, 0.7) == pytest.approx(expected, rel=1e-12)


def test_autograd_agrees_on_diff_as_a_concatenation():
    autograd = pytest.importorskip("autograd")
    anp = pytest.importorskip("autograd.numpy")

    def diff_prepend(x, x0):
        return anp.sum(anp.diff(anp.concatenate([anp.array([x0]), x])) ** 2)

    expected = autograd.grad(diff_prepend, 1)(U, 0.7)
    assert srcgrad.grad(fns.diff_prepend, wrt=1)(U, 0.7) == pytest.approx(expected, rel=1e-12)


def test_clip_ties_split_as_maximum_and_minimum_do():
    """At a tie the cotangent splits 0.5/0.5 between the value and the bound,
    as np.minimum(np.maximum(x, lo), hi) -- what NumPy computes -- gives."""
    x = np.array([-1.0, 0.0, 1.0, 2.0])
    g_x, g_c = srcgrad.grad(fns.clip_bounds, wrt=(0, 1))(x, 1.0)
    np.testing.assert_array_equal(g_x, [-1.0, 0.0, 1.0, 0.0])
    assert g_c == pytest.approx(4.0)   # the ties give half each (1 + 1), x = 2 all (2)


@pytest.mark.parametrize(("fn", "args", "wrt", "parameter"), [
    (fns.norm_order, (X, 3.0), (1,), "'ord' of 'np.linalg.norm'"),
    (fns.grad_coordinates, (U, np.array([0.0, 0.3, 0.7, 1.2])), (1,), "'varargs' of 'np.gradient'"),
    (fns.var_ddof, (X, 1.0), (1,), "'ddof'"),
], ids=["norm-ord", "gradient-coordinates", "var-ddof"])
def test_a_parameter_no_rule_differentiates_is_refused(fn, args, wrt, parameter):
    for call in (lambda: srcgrad.grad(fn, wrt=wrt)(*args),
                 lambda: srcgrad.jvp(fn, args, [None if i not in wrt else args[i]
                                                for i in range(len(args))])):
        with pytest.raises(NonDifferentiableError) as info:
            call()
        message = str(info.value)
        assert parameter in message and "srcgrad.stop_gradient" in message
        assert info.value.lineno is not None and "constant_param_fns.py" in info.value.filename


def test_stop_gradient_says_the_parameter_is_a_constant():
    assert srcgrad.grad(fns.norm_order_stopped, wrt=0)(X, 3.0) == pytest.approx(
        numeric_grad(fns.norm_order_stopped, (X, 3.0), 0), rel=1e-6)


@pytest.mark.parametrize("fn", [fns.axis_from_list, fns.arange_of_shape, fns.linspace_of_len,
                                fns.full_like_shape])
def test_ints_and_shapes_reaching_a_constant_parameter_are_not_refused(fn):
    W, x = np.array([[0.5, -1.0], [2.0, 0.3]]), np.array([0.7, -0.2])
    args = (W, x) if fn is fns.axis_from_list else (x, 0.3) if fn is fns.full_like_shape else (x,)
    g = srcgrad.grad(fn)(*args)
    np.testing.assert_allclose(g, numeric_grad(fn, args, 0), rtol=1e-6, atol=1e-8)
