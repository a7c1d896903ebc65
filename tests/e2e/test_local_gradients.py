"""srcgrad's transformations made inside the function differentiated.

A cold review (s33, F16) found ``g = srcgrad.grad(L)`` refused when ``L`` is a
local function or a lambda ("the local function 'L' can only be called
here"), and ``g = srcgrad.grad(Lm)`` of a module-level ``Lm`` refused too
(``g`` held "a function only known when the code runs"), while the same
programs with the gradient made at module level worked: the inner gradient
steps of meta-learning (MAML) and the derivative a Newton solve divides by.
A function reading only its parameters and globals is the same whenever the
code runs, so srcgrad now makes the transformation when it compiles
(srcgrad/normalize/made_transforms.py) and differentiates its calls as those
of a gradient made at module level; a closure over variables of the function
(data, or the value being differentiated) is lifted, those variables passed
to it at each call, so the inner gradient's dependence on them is
differentiated too.  Each program runs under every policy (value bit for bit,
gradient against central differences) and in forward mode, in a loop, a
branch and a helper, against autograd where it runs the program; the cases
srcgrad cannot make when it compiles (arguments computed when the code runs,
a closure over a local function) are refused, located, saying how to write
them.
"""

from __future__ import annotations

import functools

import autograd
import autograd.numpy as anp
import numpy as np
import pytest
from numeric import assert_close
from numeric import check_every_policy as check

import srcgrad

RNG = np.random.default_rng(16)
W3 = RNG.standard_normal(3)
XS = [RNG.standard_normal(4) for _ in range(3)]
YS = [RNG.standard_normal(4) for _ in range(3)]
THETA = RNG.standard_normal(2)


# -- the review's programs (pq.py) ---------------------------------------------------

def gd_inner(w0):
    def L(w):
        return np.sum((w - 1.0) ** 2 * np.arange(1.0, w.size + 1)) + np.sum(w ** 4) * 0.1
    g = srcgrad.grad(L)
    w = w0
    for _ in range(4):
        w = w - 0.05 * g(w)
    return L(w)  # L called directly too


def gd_inner_ag(w0):
    def L(w):
        return anp.sum((w - 1.0) ** 2 * anp.arange(1.0, w.size + 1)) + anp.sum(w ** 4) * 0.1
    g = autograd.grad(L)
    w = w0
    for _ in range(4):
        w = w - 0.05 * g(w)
    return L(w)


def newton_inner(a):
    x = a
    fprime = srcgrad.grad(lambda t: t ** 3 + t)
    for _ in range(8):
        x = x - (x ** 3 + x - a) / fprime(x)
    return x


def maml(theta, xs, ys):
    def loss(t, x, y):
        return np.mean((x * t[0] + t[1] - y) ** 2)
    gl = srcgrad.grad(loss)
    tot = 0.0
    for i in range(len(xs)):
        t_i = theta - 0.1 * gl(theta, xs[i], ys[i])
        tot = tot + loss(t_i, xs[i], ys[i])
    return tot


def maml_ag(theta, xs, ys):
    def loss(t, x, y):
        return anp.mean((x * t[0] + t[1] - y) ** 2)
    gl = autograd.grad(loss)
    tot = 0.0
    for i in range(len(xs)):
        t_i = theta - 0.1 * gl(theta, xs[i], ys[i])
        tot = tot + loss(t_i, xs[i], ys[i])
    return tot


def test_gradient_steps_on_a_local_loss():
    grad = check(gd_inner, (W3.copy(),))
    assert_close(grad, autograd.grad(gd_inner_ag)(W3), what="autograd")


def test_newton_divides_by_the_gradient_of_a_lambda():
    grad = check(newton_inner, (1.3,))
    # x(a) solves x ** 3 + x = a: dx/da = 1 / (3 x ** 2 + 1)
    x = newton_inner(1.3)
    assert_close(grad, 1.0 / (3 * x ** 2 + 1), rtol=1e-9, what="implicit derivative")


def test_maml_with_a_local_inner_loss():
    grad = check(maml, (THETA.copy(), XS, YS))
    assert_close(grad, autograd.grad(maml_ag)(THETA, XS, YS), what="autograd")


def test_generated_code_calls_the_gradients_rules():
    source = srcgrad.grad(gd_inner).source
    assert "grad_L_fwd(w)" in source and "grad_L_bwd(" in source
    source = srcgrad.grad(newton_inner).source
    assert "grad_lambda_fwd(x)" in source and "<lambda>" not in source


# -- variants: a branch, a default, a call made at once, a helper, a tuple wrt -----------

def in_a_branch(w0):
    def L(w, c=2.0):
        return np.sum(np.sin(w) * c) + np.sum(w ** 2)
    w = w0
    if np.sum(w0) > 0:
        w = w - 0.1 * srcgrad.grad(L)(w)      # c's default
    else:
        w = w + 0.1 * srcgrad.grad(L)(w, 3.0)
    return np.sum(w ** 3)


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_made_and_called_at_once_in_a_branch(sign):
    check(in_a_branch, (sign * np.abs(W3),))


def Lm(w, x):
    return np.sum(np.tanh(x * w) ** 2)


def module_level_inside(w0, x):
    g = srcgrad.grad(Lm, wrt=(0, 1))
    gw, gx = g(w0, x)
    return np.sum(gw * gx) + np.sum(w0)


@pytest.mark.parametrize("wrt", [0, 1])
def test_module_level_function_with_a_tuple_wrt(wrt):
    check(module_level_inside, (W3.copy(), W3 + 1.0), wrt=wrt)


def helper_step(w):
    g = srcgrad.grad(lambda v: np.sum(np.cos(v) * v))
    return w - 0.2 * g(w)


def through_a_helper(w0):
    w = helper_step(w0)
    for _ in range(2):
        w = helper_step(w)
    return np.sum(w ** 2)


def test_made_in_a_helper_called_in_a_loop():
    check(through_a_helper, (W3.copy(),))


def apply_twice(f, w):
    return f(f(w))


def passed_to_a_helper(w0):
    def E(q):
        return np.sum(q ** 4) / 4 - np.sum(q ** 2)
    force = srcgrad.grad(E)
    q = apply_twice(lambda v: v - 0.1 * force(v), w0)
    return np.sum(q * q) + E(q)


def test_called_by_a_lambda_passed_to_a_helper():
    check(passed_to_a_helper, (W3.copy(),))


def meta_step(f, w):
    def L(v):
        return np.sum(np.sin(v) ** 2)
    g = srcgrad.grad(L)
    return f(w - 0.1 * g(w))


def helper_given_a_lambda(w0):
    w = meta_step(lambda v: np.sin(v) * 1.5, w0)  # meta_step is inlined, L with it
    return np.sum(w ** 2)


def test_made_in_a_helper_that_is_inlined():
    check(helper_given_a_lambda, (W3.copy(),))


def value_and_gradient(w0):
    vg = srcgrad.value_and_grad(lambda w: np.sum(np.exp(w) * w))
    v, g = vg(w0)
    return v * np.sum(g * w0)


def test_value_and_grad_made_inside():
    """Refused as a module-level one was until review s36 R4-6: both the value's
    derivative and the gradient's now flow."""
    check(value_and_gradient, (W3.copy(),))


C3 = np.array([0.5, 1.0, -1.0])


def curvature_of_constants(w0):
    H = srcgrad.hessian(lambda w: np.sum(w ** 4) + w[0] * w[1])
    hv = srcgrad.hvp(lambda w: np.sum(np.sin(w) * w))(C3, np.ones(3))
    J = srcgrad.jacobian(lambda w: np.tanh(w) * 2.0)
    return np.sum(H(C3) @ w0) + np.sum(hv * w0 ** 2) + np.sum(J(C3) @ np.sin(w0))


def test_hessian_hvp_and_jacobian_made_inside_of_constants():
    check(curvature_of_constants, (W3.copy(),))


def hvp_of_the_input(w0):
    hv = srcgrad.hvp(lambda w: np.sum(np.sin(w) * w))
    return np.sum(hv(w0, np.ones(3)))


def test_hvp_made_inside_of_a_value_differentiated_refused_as_at_module_level():
    with pytest.raises(srcgrad.MissingRuleError, match="hvp_") as info:
        srcgrad.grad(hvp_of_the_input)(W3.copy())
    assert info.value.filename == __file__ and info.value.lineno


def hvp_of_outer(w0):
    g = srcgrad.grad(lambda a: np.sum(a ** 3))
    return np.sum(g(w0) ** 2)


def test_third_derivative_refused_as_for_a_module_level_gradient():
    check(hvp_of_outer, (W3.copy(),))
    with pytest.raises(srcgrad.MissingRuleError, match="third derivative"):
        srcgrad.hvp(hvp_of_outer)(W3.copy(), np.ones(3))


# -- closures: the variables they read passed after their parameters -----------------

def closure_over_data(w0, xs):
    def loss(w):
        return np.sum((w * xs) ** 2)
    g = srcgrad.grad(loss)
    return np.sum(w0 - 0.1 * g(w0) * w0)


@pytest.mark.parametrize("wrt", [0, 1])  # wrt=1: xs, which the inner gradient reads
def test_closure_over_data_and_its_second_order(wrt):
    check(closure_over_data, (W3.copy(), W3[::-1] + 0.5), wrt=wrt)


def closure_over_the_input(w0):
    def loss(w):
        return np.sum((w * w0) ** 2) + np.sum(np.sin(w0) * w)
    return np.sum(srcgrad.grad(loss)(w0) * w0)


def closure_over_the_input_ag(w0):
    def loss(w):
        return anp.sum((w * w0) ** 2) + anp.sum(anp.sin(w0) * w)
    return anp.sum(autograd.grad(loss)(w0) * w0)


def test_closure_over_the_value_differentiated():
    grad = check(closure_over_the_input, (W3.copy(),))
    assert_close(grad, autograd.grad(closure_over_the_input_ag)(W3), what="autograd")


def maml_closure(theta, xs, ys):
    tot = 0.0
    for i in range(len(xs)):
        x, y = xs[i], ys[i]
        loss = lambda t: np.mean((x * t[0] + t[1] - y) ** 2)  # noqa: E731
        g = srcgrad.grad(loss)
        t_i = theta - 0.1 * g(theta)
        tot = tot + loss(t_i)
    return tot


def test_maml_closing_over_each_tasks_data():
    grad = check(maml_closure, (THETA.copy(), XS, YS))
    assert_close(grad, autograd.grad(maml_ag)(THETA, XS, YS), what="autograd")


def rebound_after(w0, s0):
    s = s0
    def L(w):
        return np.sum(np.sin(w * s))
    g = srcgrad.grad(L)
    w = w0
    for _ in range(3):
        w = w - 0.1 * g(w)  # reads s as it is now, as Python's closure does
        s = s * 1.5
    return np.sum(w ** 2) + L(w)


@pytest.mark.parametrize("wrt", [0, 1])
def test_closure_reads_the_variable_as_it_is_at_the_call(wrt):
    check(rebound_after, (W3.copy(), 0.8), wrt=wrt)


def value_and_grad_of_a_closure(w0):
    c = np.cos(w0)
    vg = srcgrad.value_and_grad(lambda w: np.sum(np.exp(w) * c), wrt=-1)
    return vg(w0)[0]


def test_negative_wrt_counts_the_closures_own_parameters():
    assert srcgrad.value_and_grad(lambda w: np.sum(np.exp(w) * np.cos(W3)), wrt=-1)(W3)[0] \
        == value_and_grad_of_a_closure(W3)


# -- refused, located ----------------------------------------------------------------

def closure_over_a_local_function(w0):
    def act(v):
        return np.tanh(v)
    def loss(w):
        return np.sum(act(w) ** 2)
    return np.sum(srcgrad.grad(loss)(w0))


def meta_step_reading_f(f, w):
    def L(v):
        return np.sum(f(v) ** 2)
    return w - 0.1 * srcgrad.grad(L)(w)


def closure_over_a_passed_lambda(w0):
    return np.sum(meta_step_reading_f(lambda v: np.sin(v) * 1.5, w0))


def closure_with_a_default(w0):
    def loss(w, k=2.0):
        return np.sum((w * w0) ** 2) * k
    return np.sum(srcgrad.grad(loss)(w0))


def default_computed(w0):
    def L(w, c=[2.0 for _ in range(1)][0]):  # a comprehension's code on the def's line
        return np.sum(w ** 2) * c
    return np.sum(srcgrad.grad(L)(w0))


def hvp_of_a_closure(w0):
    h = srcgrad.hvp(lambda w: np.sum(w ** 3 * w0))
    return np.sum(h(w0, np.ones(3)))


def wrt_computed(w0):
    k = 0
    g = srcgrad.grad(lambda a: np.sum(a ** 2), wrt=k)
    return np.sum(g(w0))


def wrt_out_of_range(w0):
    g = srcgrad.grad(lambda a: np.sum(a ** 2), wrt=3)
    return np.sum(g(w0))


def partial_made_here(w0):
    p = functools.partial(np.dot, w0)
    g = srcgrad.grad(p)
    return np.sum(g(w0))


def kept_in_a_list(w0):
    g = srcgrad.grad(lambda a: np.sum(a ** 2))
    fs = [g]
    return np.sum(fs[0](w0))


def two_at_once(w0):
    f, g = srcgrad.grad(lambda a: np.sum(a ** 2)), srcgrad.grad(lambda a: np.sum(a ** 3))
    return np.sum(f(w0) * g(w0))


@pytest.mark.parametrize("fn, words", [
    (closure_over_a_local_function, ["'loss'", "'act' is a local function"]),
    (closure_over_a_passed_lambda, ["'L'", "'f' is a local function"]),
    (closure_with_a_default, ["'w0'", "without defaults", "add 'w0' to its parameters"]),
    (default_computed, ["'L'", "defaults computed when the code runs"]),
    (hvp_of_a_closure, ["'w0'", "srcgrad.grad and srcgrad.value_and_grad only"]),
    (wrt_computed, ["literals", "wrt=0"]),
    (wrt_out_of_range, ["wrt=3", "1 positional argument"]),
    (partial_made_here, ["functools.partial made here"]),
    (kept_in_a_list, ["'g' can only be called here"]),
    (two_at_once, ["assigned to one name", "srcgrad.grad(f)(x)"]),
])
def test_refused_located(fn, words):
    args = (W3.copy(),)
    for run in (lambda: srcgrad.grad(fn)(*args),
                lambda: srcgrad.jvp(fn, wrt=[0])(*args, np.ones(3))):
        with pytest.raises(srcgrad.UnsupportedSyntaxError) as info:
            run()
        err = info.value
        assert err.filename == __file__ and err.lineno, err
        for word in words:
            assert word in err.message, err.message
