"""Code written for autograd (``import autograd.numpy as np``) differentiates
as written.

autograd's examples were refused ("calling 'dot', which has a **kwargs ...
parameter ... not supported yet", outside tester): each function of
``autograd.numpy`` is a wrapper of NumPy's, which srcgrad took for a user
function.  It now reads such a wrapper as the function it wraps
(frontend/foreign.py), so the code gets NumPy's rules: values bit-identical
to the function's own, gradients equal to autograd's and to central
differences, both modes and every policy.  srcgrad imports nothing from
autograd; these tests need it.
"""

from __future__ import annotations

import numpy
import pytest
from numeric import assert_bit_identical, assert_close, jvp_fd, numeric_grad

import srcgrad

autograd = pytest.importorskip("autograd")
models = pytest.importorskip("autograd_style")

POLICIES = ["save", "recompute", "sqrt", ("revolve", 2)]
rs = numpy.random.RandomState(3)
PARAMS = models.make_layers(0.3, [3, 5, 4, 2])
INPUTS = rs.randn(6, 3)
TARGETS = numpy.eye(2)[rs.randint(0, 2, 6)]
GP_X, GP_Y = rs.randn(7, 1), rs.randn(7)
GP_P = 0.2 * rs.randn(4)


def _flat(tree):
    return numpy.concatenate([numpy.ravel(a) for layer in tree for a in layer])


@pytest.mark.parametrize("policy", POLICIES)
def test_mlp_objective_matches_autograd(policy):
    f = models.mlp_objective
    value, g = srcgrad.value_and_grad(f, policy=policy)(PARAMS, INPUTS, TARGETS, 0.1)
    assert_bit_identical(value, f(PARAMS, INPUTS, TARGETS, 0.1))
    expected = autograd.grad(f)(PARAMS, INPUTS, TARGETS, 0.1)
    assert_close(_flat(g), _flat(expected), rtol=1e-10, atol=1e-12)


def test_mlp_forward_mode_matches_differences():
    f = models.mlp_objective
    d = [(numpy.ones_like(W), -numpy.ones_like(b)) for W, b in PARAMS]
    value, tangent = srcgrad.jvp(f, (PARAMS, INPUTS, TARGETS, 0.1), (d, None, None, None))
    assert_bit_identical(value, f(PARAMS, INPUTS, TARGETS, 0.1))
    g = srcgrad.grad(f)(PARAMS, INPUTS, TARGETS, 0.1)
    assert_close(tangent, numpy.dot(_flat(g), _flat(d)), rtol=1e-9)


@pytest.mark.parametrize("policy", POLICIES)
def test_gp_log_marginal_matches_autograd(policy):
    f = models.gp_log_marginal
    value, g = srcgrad.value_and_grad(f, policy=policy)(GP_P, GP_X, GP_Y)
    assert_bit_identical(value, f(GP_P, GP_X, GP_Y))
    assert_close(g, autograd.grad(f)(GP_P, GP_X, GP_Y), rtol=1e-9, atol=1e-12)
    assert_close(g, numeric_grad(f, (GP_P, GP_X, GP_Y), 0), rtol=1e-5, atol=1e-7)


def test_gp_predictive_mean_both_modes():
    f = models.gp_predictive_mean
    xstar = numpy.linspace(-1, 1, 4).reshape(4, 1)
    args = (GP_P, GP_X, GP_Y, xstar)
    value, g = srcgrad.value_and_grad(f)(*args)
    assert_bit_identical(value, f(*args))
    assert_close(g, autograd.grad(f)(*args), rtol=1e-9, atol=1e-12)
    direction = numpy.array([0.3, -0.2, 0.5, 1.0])
    _, tangent = srcgrad.jvp(f, args, (direction, None, None, None))
    assert_close(tangent, jvp_fd(f, args, (0,), (direction,)), rtol=1e-5, atol=1e-7)


def test_autograd_wrappers_read_as_numpy():
    """What srcgrad sees: the wrapped NumPy/SciPy function, for primitives,
    functions with no gradient and the plain Python wrappers alike."""
    import autograd.numpy as anp
    import autograd.scipy.special as asp
    import scipy.special

    from srcgrad.frontend.foreign import native
    assert native(anp.dot) is numpy.dot and native(anp.tanh) is numpy.tanh
    assert native(anp.shape, "shape") is numpy.shape
    assert native(anp.concatenate, "concatenate") is numpy.concatenate
    assert native(anp.linalg.solve) is numpy.linalg.solve
    assert native(asp.logsumexp) is scipy.special.logsumexp
    assert native(anp.pi) == numpy.pi


def test_generated_code_calls_numpy_itself():
    """``np`` (autograd.numpy in the source) is NumPy in the generated code:
    no wrapper between the gradient and the arrays."""
    source = srcgrad.grad(models.mlp_objective).source
    imports = [line for line in source.splitlines() if line.startswith(("import ", "from "))]
    assert "import numpy as np" in imports and not any("autograd" in line for line in imports)
    assert "np.tanh(" in source and "np.dot(" in source
