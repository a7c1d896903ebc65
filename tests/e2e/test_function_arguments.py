"""Functions passed as arguments (issue 15, API.md): ``grad(apply, wrt=1)(np.tanh, x)``.

The generated code is specialised on the function passed -- a NumPy function,
a user ``def`` (its body differentiated like any called helper's), a lambda, a
``functools.partial``, a callable object, a bound method -- and cached on its
identity; a guard at the top refuses another function when the code runs
directly or exported.  Each case: the value bit for bit the function's own,
the gradient against finite differences and against autograd running the same
code (its ``np`` rebound to ``autograd.numpy``).
"""

from __future__ import annotations

import functools
import importlib.util
import types

import numpy as np
import pytest
from numeric import assert_close, bit_identical, numeric_grad

import srcgrad
from srcgrad import pipeline as compiler

try:
    import autograd
    import autograd.numpy as anp
except ImportError:  # pragma: no cover - autograd is a test dependency
    autograd = anp = None

RNG = np.random.default_rng(15)
X = RNG.uniform(0.1, 1.0, 5)


# -- the functions differentiated ---------------------------------------------------

def apply(f, x):
    return np.sum(f(x))


def my_helper(v):
    return v * np.sin(v) + 1.0


def power(v, k=1):
    return v ** k


def relu(z):
    return np.maximum(z, 0.0)


class Scaled:
    def __init__(self, c):
        self.c = c

    def __call__(self, v):
        return self.c * np.exp(-v ** 2)

    def forward(self, v):
        return np.cos(v) * self.c


def nn(W, b, x, act):
    h = act(x @ W + b)
    return np.mean(h ** 2)


def contract(a, x):
    return 0.5 * np.cos(x) * a


def fixed_point(f, a, x0):
    x = x0
    for _ in range(40):
        x = f(a, x)
    return np.sum(x)


def solve(f, a, x0):
    x = x0
    for _ in range(40):
        x = f(a, x)
    return x


def fixed_point_through_a_helper(f, a, x0):
    return np.sum(solve(f, a, x0) ** 2)


def dynamics(y, p):
    return -p * y + np.sin(y)


def euler(f, y, p, steps):
    for _ in range(steps):
        y = y + 0.1 * f(y, p)
    return y


def ode_loss(p, y0):
    return np.sum(euler(dynamics, y0, p, 8) ** 2)


def mapped(f, xs):
    return sum(map(f, xs))


SQUARE = lambda v: v ** 2 + np.tanh(v)
SCALED = Scaled(1.5)

CALLEES = {
    "np.tanh": np.tanh,
    "np.exp": np.exp,
    "def": my_helper,
    "lambda": SQUARE,
    "partial": functools.partial(power, k=3),
    "callable object": SCALED,
    "bound method": SCALED.forward,
}


# -- autograd running the same code ----------------------------------------------------

def _rebound(fn):
    """``fn`` with ``np`` in its globals rebound to autograd.numpy."""
    return types.FunctionType(fn.__code__, {**fn.__globals__, "np": anp}, fn.__name__,
                              fn.__defaults__, fn.__closure__)


def _for_autograd(f):
    if isinstance(f, np.ufunc):
        return getattr(anp, f.__name__)
    if isinstance(f, functools.partial):
        return functools.partial(_for_autograd(f.func), *f.args, **f.keywords)
    if isinstance(f, types.FunctionType):
        return _rebound(f)
    if isinstance(f, types.MethodType):
        return types.MethodType(_rebound(f.__func__), f.__self__)
    return lambda v: f.c * anp.exp(-v ** 2)  # Scaled.__call__, rebound


def _check(fn, args, wrt, autograd_args=None):
    """Value bit-identical, gradient vs finite differences and autograd."""
    value, grads = srcgrad.value_and_grad(fn, wrt=wrt)(*args)
    assert bit_identical(value, fn(*args))
    for i, g in zip(wrt, grads):
        assert_close(g, numeric_grad(fn, args, i), rtol=1e-6, atol=1e-8)
        if autograd is not None and autograd_args is not None:
            assert_close(g, autograd.grad(_rebound(fn), i)(*autograd_args), rtol=1e-10)
    return grads


# -- every kind of function -----------------------------------------------------------

@pytest.mark.parametrize("kind", CALLEES)
def test_a_function_passed_is_called_and_differentiated_as_itself(kind):
    f = CALLEES[kind]
    _check(apply, (f, X), (1,), (_for_autograd(f), X))


@pytest.mark.parametrize("act", [np.tanh, relu, lambda z: z / (1.0 + np.abs(z))],
                         ids=["np.tanh", "def", "lambda"])
def test_a_nonlinearity_passed_to_a_network(act):
    W, b, x = RNG.standard_normal((3, 4)), RNG.standard_normal(4), RNG.standard_normal((6, 3))
    _check(nn, (W, b, x, act), (0, 1), (W, b, x, _for_autograd(act)))


@pytest.mark.parametrize("f", [contract, lambda a, x: 0.4 * np.sin(x) * a],
                         ids=["def", "lambda"])
def test_a_fixed_point_solver_calls_the_function_it_receives_in_a_loop(f):
    a, x0 = np.array([0.3, 0.7, 1.1]), np.zeros(3)
    _check(fixed_point, (f, a, x0), (1,), (_for_autograd(f), a, x0))
    _check(fixed_point_through_a_helper, (f, a, x0), (1,), None)


def test_a_function_passed_on_by_name_to_a_helper():
    """``euler(dynamics, ...)`` inside the differentiated function: the helper's
    code is specialised on ``dynamics`` (the ODE-integrator shape)."""
    p, y0 = np.array([0.5, 1.5]), np.array([1.0, -0.3])
    _check(ode_loss, (p, y0), (0, 1), (p, y0))


def with_callback(x, callback):
    return np.sum(x ** 2)


def test_one_gradient_called_with_several_functions_runs_the_code_of_each():
    a, x0 = np.array([0.3, 0.7, 1.1]), np.zeros(3)
    g = srcgrad.grad(fixed_point_through_a_helper, wrt=1)
    other = lambda a, x: 0.4 * np.sin(x) * a
    for f in (contract, other, contract, other):  # the helper's code is specialised too
        assert_close(g(f, a, x0), numeric_grad(fixed_point_through_a_helper, (f, a, x0), 1),
                     rtol=1e-6, atol=1e-9)
    h = srcgrad.grad(with_callback)  # a function it never calls: one code for all
    for f in (print, len, my_helper):
        assert_close(h(X, f), 2 * X)
    assert "Specialised" not in h.source


def test_map_over_a_function_argument():
    xs = [0.3, -0.8, 1.2]
    value, grads = srcgrad.value_and_grad(mapped, wrt=1)(np.sin, xs)
    assert bit_identical(value, mapped(np.sin, xs))
    assert_close(grads, np.cos(xs), rtol=1e-14)
    assert_close(srcgrad.grad(mapped, wrt=1)(my_helper, xs),
                 [np.sin(v) + v * np.cos(v) for v in xs], rtol=1e-14)


def test_value_and_grad_vjp_and_check_take_function_arguments():
    value, pullback = srcgrad.vjp(apply, np.tanh, X)
    assert bit_identical(value, apply(np.tanh, X))
    assert pullback(1.0)[0] is None
    assert_close(pullback(1.0)[1], 1 - np.tanh(X) ** 2)
    checked = srcgrad.grad(apply, wrt=1, check=True)
    assert_close(checked(my_helper, X), numeric_grad(apply, (my_helper, X), 1), rtol=1e-6)


@pytest.mark.parametrize("f", [np.tanh, my_helper, SQUARE], ids=["np.tanh", "def", "lambda"])
def test_forward_mode_takes_function_arguments(f):
    direction = np.linspace(-1.0, 1.0, X.size)
    value, tangent = srcgrad.jvp(apply, (f, X), (None, direction))
    assert bit_identical(value, apply(f, X))
    assert_close(tangent, np.dot(srcgrad.grad(apply, wrt=1)(f, X), direction), rtol=1e-12)
    a, x0 = np.array([0.3, 0.7, 1.1]), np.zeros(3)
    _, tangent = srcgrad.jvp(fixed_point_through_a_helper, (contract, a, x0), (None, a, None))
    want = np.dot(srcgrad.grad(fixed_point_through_a_helper, wrt=1)(contract, a, x0), a)
    assert_close(tangent, want, rtol=1e-10)


@pytest.mark.parametrize("f", [np.tanh, my_helper, SQUARE], ids=["np.tanh", "def", "lambda"])
def test_second_derivatives_take_function_arguments(f):
    v = np.linspace(-1.0, 1.0, X.size)
    g = srcgrad.grad(apply, wrt=1)
    eps = 1e-6
    want = (g(f, X + eps * v) - g(f, X - eps * v)) / (2 * eps)
    assert_close(srcgrad.hvp(apply, wrt=1)(f, X, v), want, rtol=1e-6, atol=1e-8)
    assert_close(srcgrad.hessian(apply, wrt=1)(f, X) @ v, want, rtol=1e-6, atol=1e-8)


# -- methods of objects taken from a list ----------------------------------------------

class Affine:
    def __init__(self, W, b):
        self.W, self.b = W, b

    def forward(self, x):
        return x @ self.W + self.b


class Gain:
    def __init__(self, g):
        self.g = g

    def forward(self, x):
        return np.tanh(x * self.g)


class Stack:
    def __init__(self, layers):
        self.layers = layers

    def loss(self, x):
        for layer in self.layers:
            x = layer.forward(x)
        return np.sum(x ** 2)


def run_layers(layers, x):
    for layer in layers:
        x = layer.forward(x)
    return np.sum(x ** 2)


def _layers():
    rs = np.random.default_rng(3)
    return [Affine(rs.standard_normal((3, 4)), rs.standard_normal(4)), Gain(np.full(4, 0.7)),
            Affine(rs.standard_normal((4, 2)), rs.standard_normal(2))]


LAYERS = _layers()
XS = np.random.default_rng(4).standard_normal((5, 3))


def run_global_layers(x):
    for layer in LAYERS:
        x = layer.forward(x)
    return np.sum(x ** 2)


def _layers_loss(layer_index, attr):
    def loss(value):
        layers = _layers()
        setattr(layers[layer_index], attr, value)
        return run_layers(layers, XS)
    return loss


def test_a_method_of_objects_of_several_classes_from_a_list():
    layers = _layers()
    _check(run_layers, (layers, XS), (1,), None)
    g = srcgrad.grad(run_layers, wrt=0)(layers, XS)
    assert [type(v) for v in g] == [Affine, Gain, Affine]
    for i, attr in ((0, "W"), (0, "b"), (1, "g"), (2, "W")):
        want = numeric_grad(_layers_loss(i, attr), (getattr(layers[i], attr),), 0)
        assert_close(getattr(g[i], attr), want, rtol=1e-6, atol=1e-9)
    made = srcgrad.grad(run_layers, wrt=1)
    made(layers, XS)
    source = made.source
    assert "# Specialised for layers=[Affine, Gain]" in source
    assert "type(layer) is Affine_class" in source


def test_a_global_list_of_layers_and_a_models_own_list():
    want = srcgrad.grad(run_layers, wrt=1)(LAYERS, XS)
    value, g = srcgrad.value_and_grad(run_global_layers)(XS)
    assert bit_identical(value, run_global_layers(XS)) and bit_identical(g, want)
    model = Stack(LAYERS)
    assert bit_identical(srcgrad.grad(model.loss)(XS), want)
    assert bit_identical(srcgrad.grad(Stack.loss, wrt=1)(model, XS), want)


def test_a_list_with_another_class_gets_code_for_it():
    g = srcgrad.grad(run_layers, wrt=1)
    g(_layers(), XS)
    direct = g._shown.functions[0]
    only_gains = [Gain(np.full(3, 0.5)), Gain(np.full(3, 2.0))]
    with pytest.raises(srcgrad.SrcGradError, match="on objects of the classes Affine, Gain"):
        direct([*_layers(), Stack([])], XS)
    assert_close(g(only_gains, XS), numeric_grad(run_layers, (only_gains, XS), 1), rtol=1e-6)
    assert "# Specialised for layers=[Gain]" in g.source


# -- specialisation, cache and guard --------------------------------------------------

def test_the_code_is_specialised_and_says_for_what(monkeypatch):
    g = srcgrad.grad(apply, wrt=1)
    with pytest.raises(srcgrad.UnsupportedSyntaxError, match="'f' is a parameter: srcgrad "
                                                             "specialises"):
        _ = g.source
    g(np.tanh, X)
    assert "# Specialised for f=np.tanh: what the call passed when it was compiled." in g.source
    assert "if f is not np.tanh:" in g.source and "np.tanh(x)" in g.source
    g(my_helper, X)
    assert "# Specialised for f=my_helper" in g.source and "my_helper_forward(x)" in g.source
    g(SQUARE, X)
    assert "# Specialised for f=<lambda> (test_function_arguments.py, line" in g.source


def test_a_second_gradient_of_the_same_function_reuses_the_code(monkeypatch):
    calls = []
    generate = compiler.generate
    monkeypatch.setattr(compiler, "generate", lambda *a, **k: calls.append(a) or generate(*a, **k))

    def cubed(v):
        return v ** 3

    first = srcgrad.grad(apply, wrt=1)(cubed, X)
    again = srcgrad.grad(apply, wrt=1)(cubed, X)
    assert len(calls) == 1 and bit_identical(first, again)
    other = srcgrad.grad(apply, wrt=1)

    def squared(v):
        return v ** 2

    assert_close(other(squared, X), 2 * X)
    assert len(calls) == 2
    assert_close(other(cubed, X), 3 * X ** 2)  # the first code again, from memory
    assert len(calls) == 2


RATE = 2.0


def rated(v):
    return v * RATE


def test_a_rebound_value_the_function_passed_reads_regenerates_the_code():
    global RATE
    a = 2.0
    f = lambda v: v * a  # noqa: E731 - the closure is the point
    g = srcgrad.grad(apply, wrt=1)
    assert_close(g(f, X), np.full(X.size, 2.0))
    a = 5.0
    assert_close(g(f, X), np.full(X.size, 5.0))
    assert_close(g(rated, X), np.full(X.size, 2.0))
    RATE = 3.0
    try:
        assert_close(g(rated, X), np.full(X.size, 3.0))
    finally:
        RATE = 2.0


def test_a_library_function_is_cached_on_disk_by_its_module_and_name():
    from srcgrad.api.arguments import callee_arguments
    from srcgrad.cache import manifest

    options = compiler.Options(wrt=(1,), callees=callee_arguments(apply, (1,), (np.tanh, X)))
    assert options.callees[0].stable_description() == ["callee", 0, "numpy", "tanh"]
    assert manifest.key(apply, options) is not None
    other = compiler.Options(wrt=(1,), callees=callee_arguments(apply, (1,), (np.sin, X)))
    assert manifest.key(apply, other) != manifest.key(apply, options)


PASSING = """
import numpy as np


def apply(f, x):
    return np.sum(f(x))


def cube(v):
    return v ** 3 * SCALE


SCALE = {scale}
SQUARE = lambda v: np.sin(v) * v
"""

RUNNER = """
import json, sys
import numpy as np
import srcgrad
from srcgrad import pipeline as compiler

calls = []
generate = compiler.generate
compiler.generate = lambda *a, **k: calls.append(1) or generate(*a, **k)
sys.path.insert(0, sys.argv[1])
import passing
g = srcgrad.grad(passing.apply, wrt=1)
x = np.array([0.5, 1.5])
grads = [g(f, x).tolist() for f in (np.tanh, passing.cube, passing.SQUARE)]
print(json.dumps({"calls": len(calls), "grads": grads}))
"""


def _run_passing(directory, cache_dir):
    import json
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(srcgrad.__file__).resolve().parents[1]
    env = dict(os.environ, PYTHONPATH=str(root), SRCGRAD_CACHE_DIR=str(cache_dir))
    env.pop("SRCGRAD_CACHE", None)
    result = subprocess.run([sys.executable, "-c", RUNNER, str(directory)], capture_output=True,
                            text=True, env=env, timeout=120, check=False)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_a_second_process_loads_the_code_for_each_function_passed_from_disk(tmp_path):
    (tmp_path / "passing.py").write_text(PASSING.format(scale=2.0))
    first = _run_passing(tmp_path, tmp_path / "cache")
    second = _run_passing(tmp_path, tmp_path / "cache")
    assert first["calls"] == 3 and second["calls"] == 0
    assert first["grads"] == second["grads"]
    x = np.array([0.5, 1.5])
    assert_close(second["grads"][1], 6.0 * x ** 2)
    (tmp_path / "passing.py").write_text(PASSING.format(scale=3.0))  # what cube reads
    for stale in (tmp_path / "__pycache__").glob("*"):
        stale.unlink()
    third = _run_passing(tmp_path, tmp_path / "cache")
    assert third["calls"] == 1  # cube's code only
    assert_close(third["grads"][1], 9.0 * x ** 2)


def test_the_guard_refuses_another_function_in_the_exported_code(tmp_path):
    g = srcgrad.grad(apply, wrt=1)
    g(np.tanh, X)
    path = tmp_path / "exported.py"
    srcgrad.export(str(path), g)
    spec = importlib.util.spec_from_file_location("exported_apply", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert_close(module.grad_apply(np.tanh, X), 1 - np.tanh(X) ** 2)
    with pytest.raises(TypeError, match="apply was differentiated for f=np.tanh"):
        module.grad_apply(np.sin, X)


def test_the_function_argument_has_no_gradient():
    with pytest.raises(srcgrad.NonDifferentiableError,
                       match="argument 'f' .position 0.: it is a function .np.tanh."):
        srcgrad.grad(apply, wrt=0)(np.tanh, X)
    with pytest.raises(srcgrad.NonDifferentiableError, match="it is a function"):
        srcgrad.grad(apply, wrt=(0, 1))(my_helper, X)


# -- a lambda or local function passed to a helper: the helper inlined -----------------

def _iterate(f, x0, steps=30):
    """A fixed-point iteration, with a docstring."""
    x = x0
    for _ in range(steps):
        x = f(x)
    return x


def fixed_point_of_a_closure(a, x0):
    return np.sum(_iterate(lambda z: 0.5 * np.cos(z) * a, x0))


def local_def_passed(a, x):
    def scaled(v):
        return np.tanh(v) * a

    return np.sum(apply_twice(scaled, x)) + np.sum(_iterate(scaled, x, steps=3))


def apply_twice(f, x):
    return f(f(x))


@pytest.mark.parametrize("fn", [fixed_point_of_a_closure, local_def_passed])
def test_a_closure_passed_to_a_helper_is_inlined_with_it(fn):
    a, x0 = np.array([0.3, 0.7, 1.1]), np.array([0.2, -0.1, 0.4])
    _check(fn, (a, x0), (0, 1), (a, x0))


def test_an_object_without_source_passed_is_a_located_missing_rule():
    """np.vectorize(...) or a gradient srcgrad made, passed as the function: a
    MissingRuleError at the call naming its __call__ (it was "name 'f_fn' is not
    defined", a name srcgrad had made up)."""
    x = np.array([0.1, 0.5, 0.9])
    for fn in (np.vectorize(lambda v: v * 2.0), srcgrad.grad(lambda v: np.sum(v ** 2))):
        with pytest.raises(srcgrad.MissingRuleError, match="__call__") as info:
            srcgrad.grad(apply, wrt=1)(fn, x)
        assert info.value.lineno is not None
