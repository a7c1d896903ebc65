"""Helpers that return closures (issue 15): ``flat, unflatten = flatten(params)``,
the shape of every parameter-flattening utility.  The helper is inlined where
its result is assigned, and each local function it returns becomes a local
function of the caller (inlined at each call, its free names the helper's
variables as the helper left them).  A closure made outside and passed in is
specialised on, like any function argument.  Values are the function's own,
bit for bit; gradients match central differences and autograd."""

from __future__ import annotations

import numpy as np
import pytest
from numeric import (
    assert_bit_identical,
    assert_close,
    check_policies,
    jvp_fd,
    numeric_grad,
)

import srcgrad
from srcgrad.errors import UnsupportedSyntaxError


def flatten(params):
    shapes = [p.shape for p in params]
    flat = np.concatenate([p.ravel() for p in params])

    def unflatten(v):
        out, i = [], 0
        for s in shapes:
            n = int(np.prod(s))
            out.append(v[i:i + n].reshape(s))
            i += n
        return out

    return flat, unflatten


def scaler(k):
    return lambda v: v * k


def running(x):
    """The closure reads ``total`` as the loop after its definition leaves it."""
    total = 0.0

    def add(v):
        return v + total

    for i in range(3):
        total = total + x[i]
    return add


def objective(v, template):
    _, unflatten = flatten(template)
    W, b = unflatten(v)
    return np.sum(np.tanh(W @ b) ** 2)


def objective_by_index(v, template):
    unflatten = flatten(template)[1]
    W, b = unflatten(v)
    return np.sum(np.tanh(W @ b) ** 2)


def prior(a):
    flat, unflatten = flatten([a[:4].reshape(2, 2), a[4:]])
    back = unflatten(flat * 2.0)
    return np.sum(flat ** 2) + np.sum(back[0] * back[1][0])


def two_closures(v, a):
    fa, first = flatten([a[:2], a[2:]])
    _, second = flatten([a[:1], a[1:]])
    p, q = first(v)
    r, s = second(v)
    return np.sum(p) * np.sum(q ** 2) + np.sum(r ** 3) * np.sum(np.sin(s)) + np.sum(fa * v)


def scaled_in_a_loop(x, k):
    times_k = scaler(k)
    total = 0.0
    for i in range(3):
        total = total + np.sum(times_k(x) ** (i + 1))
    return total


def closure_after_a_loop(x, y):
    add = running(x)
    return np.sum(add(y) ** 2)


def one_per_layer(v, layers):
    total = 0.0
    for layer in layers:
        flat, unflatten = flatten(layer)
        W, b = unflatten(v * np.sum(flat))
        total = total + np.sum(np.tanh(W @ b))
    return total


def objective_passed(v, template_sizes, unflatten):
    W, b = unflatten(v)
    return np.sum(np.tanh(W @ b) ** 2) + 0.0 * template_sizes


def _check(fn, args, wrt=0):
    value, grads = srcgrad.value_and_grad(fn, wrt)(*args)
    assert_bit_identical(value, fn(*args))
    expected = numeric_grad(fn, args, wrt)
    assert_close(grads, expected, rtol=1e-5, atol=1e-7)
    try:
        import autograd
        import autograd.numpy as anp
    except ImportError:
        return grads
    # the same code, autograd's numpy: np is this module's
    global np
    saved, np = np, anp
    try:
        assert_close(grads, autograd.grad(fn, wrt)(*args), rtol=1e-9, atol=1e-12)
    finally:
        np = saved
    return grads


RS = np.random.RandomState(0)
TEMPLATE = [RS.randn(3, 2), RS.randn(2)]
VECTOR = RS.randn(8)


@pytest.mark.parametrize("fn", [objective, objective_by_index])
def test_unflatten_from_a_helper(fn):
    _check(fn, (VECTOR, TEMPLATE))


def test_flat_and_unflatten_of_the_parameters():
    _check(prior, (RS.randn(8),))


def test_two_calls_make_two_closures():
    _check(two_closures, (RS.randn(4), RS.randn(4)))
    _check(two_closures, (RS.randn(4), RS.randn(4)), wrt=1)


def test_a_returned_lambda_closes_over_a_differentiated_value():
    _check(scaled_in_a_loop, (RS.randn(3), 0.7), wrt=1)
    _check(scaled_in_a_loop, (RS.randn(3), 0.7))


def test_a_closure_reads_the_helpers_variables_as_it_returned():
    _check(closure_after_a_loop, (RS.randn(3), RS.randn(2)))


def test_a_helper_called_in_a_loop_makes_a_closure_each_time():
    layers = [TEMPLATE, [RS.randn(3, 2), RS.randn(2)]]
    _check(one_per_layer, (VECTOR, layers))


@pytest.mark.parametrize("fn, args", [
    (objective, (VECTOR, TEMPLATE)), (one_per_layer, (VECTOR, [TEMPLATE, TEMPLATE])),
    (closure_after_a_loop, (RS.randn(3), RS.randn(2)))])
def test_every_policy_and_forward_mode(fn, args):
    check_policies(fn, args)
    direction = RS.randn(*np.shape(args[0]))
    _, tangent = srcgrad.jvp(fn, args, (direction,) + (None,) * (len(args) - 1))
    assert_close(tangent, jvp_fd(fn, args, (0,), (direction,)), rtol=1e-5, atol=1e-7)


def test_second_order_through_a_closure():
    direction = RS.randn(8)
    hv = srcgrad.hvp(objective)(VECTOR, TEMPLATE, direction)
    eps = 1e-5
    g = srcgrad.grad(objective)
    expected = (g(VECTOR + eps * direction, TEMPLATE) - g(VECTOR - eps * direction, TEMPLATE))
    assert_close(hv, expected / (2 * eps), rtol=1e-5, atol=1e-7)


def test_a_closure_made_outside_and_passed_in():
    """``grad(objective)(flat, ..., unflatten)``: specialised on the closure (its
    cells, ``shapes``, are constants of the code)."""
    _, unflatten = flatten(TEMPLATE)
    args = (VECTOR, 1.0, unflatten)
    value, grads = srcgrad.value_and_grad(objective_passed)(*args)
    assert_bit_identical(value, objective_passed(*args))
    assert_close(grads, numeric_grad(objective_passed, args, 0))
    assert_close(grads, srcgrad.grad(objective)(VECTOR, TEMPLATE))


# ----------------------------------------------------------------- refusals

def returns_the_closure(v, template):
    _, unflatten = flatten(template)
    return unflatten


def keeps_the_pair(v, template):
    pair = flatten(template)
    return np.sum(pair[0])


def stores_the_closure(v, template):
    _, unflatten = flatten(template)
    fns = [unflatten]
    return np.sum(v) * len(fns)


def chooses_by_a_branch(v, a, b):
    if np.sum(v) > 0:
        _, unflatten = flatten(a)
    else:
        _, unflatten = flatten(b)
    return np.sum(unflatten(v)[0])


def either(c):
    if c > 0:
        def f(v):
            return v * 2.0
    else:
        def f(v):
            return v * 3.0
    return f


def uses_either(v, c):
    f = either(c)
    return np.sum(f(v))


def calls_the_result_directly(v, template):
    return np.sum(flatten(template)[1](v)[0])


@pytest.mark.parametrize("fn, args, words", [
    (returns_the_closure, (VECTOR, TEMPLATE), "can only be called"),
    (keeps_the_pair, (VECTOR, TEMPLATE), "returns a local function (unflatten)"),
    (stores_the_closure, (VECTOR, TEMPLATE), "can only be called"),
    (chooses_by_a_branch, (VECTOR, TEMPLATE, TEMPLATE), "in more than one place"),
    (uses_either, (VECTOR, 1.0), "defines more than once"),
    (calls_the_result_directly, (VECTOR, TEMPLATE), "returns a local function (unflatten)"),
])
def test_what_is_refused_says_where(fn, args, words):
    with pytest.raises(UnsupportedSyntaxError) as info:
        srcgrad.grad(fn)(*args)
    message = str(info.value)
    assert words in message
    assert "test_closures.py" in message and "line" in message
    assert "line 29," not in message  # the caller's line, not flatten's


# ------------------------------------------- '**' of a dict known at compile time

def mean_by_literal(x):
    return np.sum(np.mean(x, **{"axis": 0}) ** 2)  # noqa: PIE804 - the form under test


def sum_by_name(x, w):
    kw = {"axis": 0, "keepdims": True}
    return np.sum(np.sum(x * w, **kw) ** 2)


def power_of(x, scale=1.0, power=1):
    return (x * scale) ** power


def helper_by_name(x, w):
    kw = {"scale": w * 2.0, "power": 3}
    return np.sum(power_of(x, **kw)) + np.sum(kw["scale"])


X, W = RS.randn(3, 4), RS.randn(3, 4)


@pytest.mark.parametrize("fn, args, wrt", [
    (mean_by_literal, (X,), 0), (sum_by_name, (X, W), 0), (sum_by_name, (X, W), 1),
    (helper_by_name, (X, W[0]), 0), (helper_by_name, (X, W[0]), 1)])
def test_keywords_from_a_known_dict(fn, args, wrt):
    _check(fn, args, wrt)


def test_a_constant_keyword_is_written_in():
    assert "np.sum(t1, axis=0, keepdims=True)" in srcgrad.grad(sum_by_name).source


def updates_the_dict(x):
    kw = {"axis": 0}
    kw["keepdims"] = True
    return np.sum(np.sum(x, **kw))


def passes_the_dict_on(x):
    kw = {"axis": 0}
    print(kw)
    return np.sum(np.sum(x, **kw))


def keywords_parameter(x, kw):
    return np.sum(np.sum(x, **kw))


def given_twice(x):
    return np.sum(np.sum(x, axis=0, **{"axis": 1}))  # noqa: PIE804, PLE1132 - under test


@pytest.mark.parametrize("fn, args, words", [
    (updates_the_dict, (X,), "'**' arguments are supported for a dict whose keys are known"),
    (passes_the_dict_on, (X,), "'**' arguments are supported for a dict whose keys are known"),
    (keywords_parameter, (X, {"axis": 0}), "'**' arguments are supported"),
    (given_twice, (X,), "keyword argument 'axis' is given more than once"),
])
def test_other_double_star_arguments_are_refused(fn, args, words):
    with pytest.raises(srcgrad.SrcGradError) as info:
        srcgrad.grad(fn)(*args)
    message = str(info.value)
    assert words in message
    assert "test_closures.py" in message and "line" in message


def shadows_a_global_the_helper_reads(v, template):
    np = 3.0  # noqa: F841 - flatten's np is the module, not this
    _, unflatten = flatten(template)
    return unflatten(v)[1][0]


def test_a_helper_global_shadowed_here_is_the_global():
    # refused until s37 (R5-14: 'reads the global np ... rename one of them'); the
    # inlined flatten now reads the module under a name of its own (flatten_np)
    _check(shadows_a_global_the_helper_reads, (VECTOR, TEMPLATE))
    check_policies(shadows_a_global_the_helper_reads, (VECTOR, TEMPLATE))


def doubler():
    return lambda v: v * 2.0


def tripler():
    return lambda v: v * 3.0


maker = doubler


def made_by_a_global(x):
    fn = maker()
    return np.sum(fn(x))


def test_a_rebound_helper_regenerates_the_code():
    """The inlined helper is watched like any global the code reads."""
    global maker
    g = srcgrad.grad(made_by_a_global)
    np.testing.assert_array_equal(g(np.ones(2)), [2.0, 2.0])
    maker = tripler
    try:
        np.testing.assert_array_equal(g(np.ones(2)), [3.0, 3.0])
    finally:
        maker = doubler


def apply_to(fn, v):
    return fn(v)


def passes_the_closure_to_a_helper(v, template):
    _, unflatten = flatten(template)
    W, b = apply_to(unflatten, v)
    return np.sum(np.tanh(W @ b) ** 2)


def test_a_closure_passed_to_a_helper_is_inlined_with_it():
    _check(passes_the_closure_to_a_helper, (VECTOR, TEMPLATE))
    assert_close(srcgrad.grad(passes_the_closure_to_a_helper)(VECTOR, TEMPLATE),
                 srcgrad.grad(objective)(VECTOR, TEMPLATE))


# ------------------------------------------- closure-returning helpers of another module

import helpers_module
from helpers_module import make_softplus


def scaled_by_a_module_helper(x):
    h = helpers_module.make_scale(2.0)
    return np.sum(h(x))


def softplus_of_another_module(x, k):
    sp = make_softplus(k)
    total = 0.0
    for i in range(2):
        total = total + np.sum(sp(x * (i + 1)) ** 2)
    return total


def shadows_the_helpers_globals(x):
    SCALE, onp = 3.0, None  # the names helpers_module's globals have
    sp = helpers_module.make_softplus(2.0)
    return np.sum(sp(x)) * SCALE + (0.0 if onp is None else 1.0)


def unflatten_of_another_module(v):
    n, unflatten = helpers_module.unflattener([(2, 2), (2,)])
    W, b = unflatten(v)
    if np.sum(b) > 0:
        return np.sum(np.tanh(W @ b)) * n
    return np.sum(W * W)


def lambda_to_a_module_helper(x):
    return np.sum(helpers_module.apply_twice(lambda z: np.sin(z) * 2.0, x))


def dynamic_in_a_module_helper(x):
    h = helpers_module.make_dynamic(2.0)
    return np.sum(h(x))


@pytest.mark.parametrize("fn, args, wrt", [
    (scaled_by_a_module_helper, (RS.randn(3),), 0),
    (softplus_of_another_module, (RS.randn(3), 1.5), 0),
    (softplus_of_another_module, (RS.randn(3), 1.5), 1),
    (shadows_the_helpers_globals, (RS.randn(3),), 0),
    (unflatten_of_another_module, (np.linspace(0.1, 0.6, 6),), 0),
    (unflatten_of_another_module, (-np.linspace(0.1, 0.6, 6),), 0),
    (lambda_to_a_module_helper, (RS.randn(3),), 0),
])
def test_a_helper_of_another_module_returning_a_closure(fn, args, wrt):
    """Inlined like one of this module: its globals (``onp``, ``SCALE``) read in
    its own module, under names of their own."""
    value, grads = srcgrad.value_and_grad(fn, wrt)(*args)
    assert_bit_identical(value, fn(*args))
    assert_close(grads, numeric_grad(fn, args, wrt), rtol=1e-5, atol=1e-7)
    if wrt == 0:
        check_policies(fn, args)
        direction = RS.randn(*np.shape(args[0]))
        tangent_value, tangent = srcgrad.jvp(fn, args, (direction,) + (None,) * (len(args) - 1))
        assert_bit_identical(tangent_value, fn(*args))
        assert_close(tangent, jvp_fd(fn, args, (0,), (direction,)), rtol=1e-5, atol=1e-7)


def test_the_helpers_globals_get_names_of_their_own():
    source = srcgrad.grad(softplus_of_another_module).source
    assert "import numpy as helpers_module_onp" in source
    assert "helpers_module_SCALE" in source


def test_an_error_inside_a_module_helper_names_its_file():
    with pytest.raises(UnsupportedSyntaxError) as info:
        srcgrad.grad(dynamic_in_a_module_helper)(RS.randn(3))
    assert info.value.filename == helpers_module.__file__


# ------------------------------------------- a closure passed in: the fast path

def squared_sum_of(f, x):
    return np.sum(f(x) ** 2)


def _scaler_with_setter(k):
    def scaled(v):
        return np.tanh(v) * k

    def set_k(value):
        nonlocal k
        k = value

    return scaled, set_k


GAIN = 2.0


def gained(v):
    return v * GAIN


def test_a_call_passing_a_function_seen_before_skips_the_compiler(monkeypatch):
    """Code specialised on a function passed is looked up by that function, as
    a plain call's is (it went through the compiler's cache at every call)."""
    x = RS.randn(3)
    g = srcgrad.grad(squared_sum_of, wrt=1)
    first = g(np.tanh, x)
    g(gained, x)  # watches what gained reads: the lookup starts again
    g(np.tanh, x)
    slow = []
    original = srcgrad.api.transforms.Transformed._call
    monkeypatch.setattr(srcgrad.api.transforms.Transformed, "_call",
                        lambda self, *a, **k: slow.append(a) or original(self, *a, **k))
    assert_bit_identical(g(np.tanh, x), first)
    assert_close(g(gained, x), numeric_grad(squared_sum_of, (gained, x), 1))
    assert slow == []
    assert_close(g(np.sin, x), numeric_grad(squared_sum_of, (np.sin, x), 1))
    assert len(slow) == 1  # a new function: compiled once


def test_what_a_function_passed_reads_is_watched():
    """A rebound closure cell, global or default of the function passed, or a
    new ``__code__``, gives new code, never the old gradient."""
    global GAIN
    x = RS.randn(3)
    g = srcgrad.grad(squared_sum_of, wrt=1)
    scaled, set_k = _scaler_with_setter(2.0)
    for _ in range(2):
        assert_close(g(scaled, x), numeric_grad(squared_sum_of, (scaled, x), 1))
        assert_close(g(gained, x), numeric_grad(squared_sum_of, (gained, x), 1))
    set_k(-3.0)
    assert_close(g(scaled, x), numeric_grad(squared_sum_of, (scaled, x), 1))
    saved = GAIN
    try:
        GAIN = 0.5
        assert_close(g(gained, x), numeric_grad(squared_sum_of, (gained, x), 1))
    finally:
        GAIN = saved

    def powered(v, p=2.0):
        return v ** p

    assert_close(g(powered, x), numeric_grad(squared_sum_of, (powered, x), 1))
    powered.__defaults__ = (3.0,)
    assert_close(g(powered, x), numeric_grad(squared_sum_of, (powered, x), 1))


def test_lambdas_made_at_each_call_keep_the_lookup_small():
    x = RS.randn(3)
    g = srcgrad.grad(squared_sum_of, wrt=1)
    for k in range(40):
        assert_close(g(lambda v, k=k: v * (k + 1.0), x), 2 * (k + 1.0) ** 2 * x)
    assert len(g._deps) <= 256 + 16 and len(g._ready) <= 64
