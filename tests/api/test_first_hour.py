"""A user's first hour (issue 17): a fast ``import srcgrad``, a gradient call
that a debugger steps straight into, ``grad(model)`` on a callable object, and
error messages that say what to do instead."""

from __future__ import annotations

import functools
import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import srcgrad
from srcgrad.api import transforms

from numeric import assert_close, numeric_grad

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = Path(srcgrad.__file__).resolve().parent
RNG = np.random.default_rng(17)


def python(code: str, *args, cwd=None, stdin=None) -> subprocess.CompletedProcess:
    """Run ``code`` in a fresh interpreter (the cache directory conftest chose
    is inherited through the environment)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("SRCGRAD_CHECK", None)
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                          env=env, cwd=cwd, input=stdin, timeout=120, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    return done


# -- import srcgrad is cheap -------------------------------------------------------------


def test_import_srcgrad_loads_only_the_error_classes():
    """The compiler, the runtime, NumPy and gast wait for the first name that
    needs them; a timing would be flaky, the modules loaded are not."""
    out = python("import sys, json, srcgrad; print(json.dumps(sorted(sys.modules)))")
    loaded = set(json.loads(out.stdout))
    ours = {m for m in loaded if m == "srcgrad" or m.startswith("srcgrad.")}
    assert ours == {"srcgrad", "srcgrad.errors", "srcgrad.version"}
    assert not {"numpy", "gast", "typing"} & loaded


def test_every_public_name_is_there_when_asked_for():
    out = python(textwrap.dedent("""
        import json, sys
        import srcgrad
        listed = sorted(set(srcgrad.__all__) - set(dir(srcgrad)))
        before = "srcgrad.pipeline" in sys.modules
        grad = srcgrad.grad
        after = "srcgrad.pipeline" in sys.modules
        namespace = {}
        exec("from srcgrad import *", namespace)
        star = sorted(set(srcgrad.__all__) - set(namespace))
        resolved = {n: getattr(srcgrad, n).__module__ for n in srcgrad.__all__
                    if callable(getattr(srcgrad, n))}
        try:
            srcgrad.no_such_name
            missing = None
        except AttributeError as exc:
            missing = str(exc)
        print(json.dumps({"listed": listed, "before": before, "after": after, "star": star,
                          "resolved": resolved, "missing": missing,
                          "passes": len(srcgrad.pipeline.PASSES)}))
        """))
    found = json.loads(out.stdout)
    assert found["listed"] == [] and found["star"] == []
    assert (found["before"], found["after"]) == (False, True)
    assert found["resolved"]["grad"] == "srcgrad.api.transforms"
    assert found["resolved"]["SrcGradError"] == "srcgrad.errors"
    assert found["missing"] == "module 'srcgrad' has no attribute 'no_such_name'"
    assert found["passes"] > 10  # a submodule is imported when it is first named


def test_lazy_names_are_the_objects_their_modules_define():
    from srcgrad.api import checks, higher
    from srcgrad.rules import custom
    from srcgrad import runtime
    assert srcgrad.grad is transforms.grad and srcgrad.vjp is transforms.vjp
    assert srcgrad.hvp is higher.hvp and srcgrad.gradcheck is checks.gradcheck
    assert srcgrad.custom_vjp is custom.custom_vjp and srcgrad.stop_gradient is runtime.stop_gradient
    assert set(srcgrad.__all__) <= set(dir(srcgrad))


def test_the_benchmark_measures_the_import():
    """``make bench`` times the imports and prints them in its table."""
    out = python(textwrap.dedent("""
        import json, sys
        sys.argv = ["run.py"]
        sys.path.insert(0, "benchmarks")
        import run
        found = run.import_times(repeat=1)
        print(json.dumps({"found": found, "table": run.tables([], [], [], [], found)}))
        """), cwd=ROOT)
    report = json.loads(out.stdout)
    assert list(report["found"]) == ["import srcgrad", "import numpy", "import gast",
                                     "first srcgrad.grad"]
    assert all(ms > 0 for ms in report["found"].values())
    assert "| import, in a fresh interpreter | ms | target | met |" in report["table"]
    assert re.search(r"^\| `import srcgrad` \| [0-9.]+ \| < 100 ms \| (yes|no) \|$",
                     report["table"], flags=re.MULTILINE)


# -- a call is one short frame -----------------------------------------------------------


SHIFT = 0.5


def loss(w, x):
    return np.sum(np.tanh(x @ w) + SHIFT * w[0])


class Model:
    def __init__(self, w):
        self.w = w

    def loss(self, x):
        return np.sum(np.tanh(x @ self.w) ** 2)

    def __call__(self, x, scale):
        h = np.tanh(x @ self.w) * scale
        return np.sum(h ** 2) + np.sum(self.w ** 2)


def steps_before_the_generated_code(g, *args):
    """The line events srcgrad runs between a second call of ``g`` and the first
    frame of the generated code, and that frame's function name."""
    g(*args)
    seen, entered = [], []

    def trace(frame, event, arg):
        if entered:
            return None
        path = frame.f_code.co_filename
        if event == "call" and not path.startswith(str(PACKAGE)) and "/numpy/" not in path:
            entered.append(frame.f_code.co_name)
            return None
        if event == "line":
            seen.append((Path(path).name, frame.f_code.co_name, frame.f_lineno))
        return trace

    sys.settrace(trace)
    try:
        g(*args)
    finally:
        sys.settrace(None)
    return seen, entered[0] if entered else None


W3, X23 = RNG.standard_normal(3), RNG.standard_normal((2, 3))

CALLS = {
    "arrays": (lambda: srcgrad.grad(loss), (W3, X23), "grad_loss"),
    "value_and_grad, two wrt": (lambda: srcgrad.value_and_grad(loss, wrt=(0, 1)), (W3, X23),
                                "value_and_grad_loss"),
    "bound method": (lambda: srcgrad.grad(Model(W3).loss), (X23,), "grad_loss"),
    "callable object": (lambda: srcgrad.grad(Model(W3)), (X23, 2.0), "grad___call__"),
    "float arguments": (lambda: srcgrad.grad(Model(W3), wrt=1), (X23, 2.0), "grad___call__"),
}


@pytest.mark.parametrize("case", CALLS)
def test_a_second_call_runs_two_srcgrad_lines_before_the_generated_code(case):
    make, args, entry = CALLS[case]
    seen, entered = steps_before_the_generated_code(make(), *args)
    assert entered == entry, (seen, entered)
    # a call with a float argument goes through one more frame, three lines: the
    # try around the generated code that gives NumPy's inf where Python's float
    # arithmetic raised in a derivative (api/float_errors.py)
    floats = [step for step in seen if step[:2] == ("float_errors.py", "gradient")]
    assert len(floats) <= (3 if any(isinstance(a, float) for a in args) else 0), seen
    seen = [step for step in seen if step not in floats]
    assert len(seen) <= 2, seen
    assert {(file, fn) for file, fn, _ in seen} <= {("transforms.py", "__call__")}, seen


PDB_SCRIPT = """
import pdb
import numpy as np
import srcgrad

def loss(w, x):
    h = np.tanh(x @ w)
    return np.sum(h ** 2)

g = srcgrad.grad(loss)
w, x = np.ones(3), np.ones((2, 3))
g(w, x)
pdb.set_trace()
g(w, x)
"""


def test_pdb_steps_into_the_generated_code_in_three_steps(tmp_path):
    """``s`` on the call stops in ``Transformed.__call__``; the two lines of that
    frame take two more; the next ``s`` is in ``grad_loss``, the generated code."""
    script = tmp_path / "user.py"
    script.write_text(PDB_SCRIPT)
    env = dict(os.environ)
    env.pop("SRCGRAD_CHECK", None)
    done = subprocess.run([sys.executable, str(script)], input="s\ns\ns\ns\nc\n",
                          capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120,
                          check=False)
    # where pdb stopped: "> FILE(LINE)FUNCTION()", after each prompt
    stops = re.findall(r"> (\S+\(\d+\)\S+\(\))$", done.stdout, flags=re.MULTILINE)
    assert len(stops) >= 5 and stops[0].endswith("<module>()"), done.stdout + done.stderr
    assert all(re.search(r"transforms\.py\(\d+\)__call__\(\)$", s) for s in stops[1:4]), stops
    assert stops[4].endswith("grad_loss()"), stops


def test_wrapper_frames_are_hidden_from_pytest_tracebacks():
    """An error raised by the generated code: every srcgrad frame between the
    caller and the generated code carries ``__tracebackhide__``."""
    def check(x):
        return np.sum(np.linalg.solve(x, np.ones(2)))

    g = srcgrad.grad(check)
    for _ in range(2):  # the first call (compiling) and the second (looked up)
        with pytest.raises(np.linalg.LinAlgError) as info:
            g(np.zeros((2, 2)))
        frames = [entry.frame for entry in info.traceback
                  if Path(entry.frame.code.path).name == "transforms.py"]
        assert frames and all(f.f_locals.get("__tracebackhide__") for f in frames)


# -- the short path stays right ----------------------------------------------------------


def test_a_rebound_global_is_seen_after_the_call_was_remembered():
    global SHIFT
    g = srcgrad.grad(loss)
    w = np.zeros(3)
    x = np.zeros((2, 3))
    g(w, x)
    first = g(w, x)
    SHIFT = 3.0
    try:
        second = g(w, x)
    finally:
        SHIFT = 0.5
    assert (first[0], second[0]) == (2 * 0.5, 2 * 3.0)  # SHIFT * w[0], summed over 2 rows
    assert g(w, x)[0] == 2 * 0.5


def test_a_rebound_closure_value_is_seen():
    def make():
        k = 2.0

        def f(x):
            return np.sum(k * x)

        def rebind(v):
            nonlocal k
            k = v
        return f, rebind

    f, rebind = make()
    g = srcgrad.grad(f)
    g(np.ones(2))
    assert list(g(np.ones(2))) == [2.0, 2.0]
    rebind(7.0)
    assert list(g(np.ones(2))) == [7.0, 7.0]


def doubling():
    def f(x):
        return np.sum(2.0 * x)
    return f


def quintupling():
    def f(x):
        return np.sum(5.0 * x)
    return f


def test_a_new_code_object_is_seen():
    f = doubling()
    g = srcgrad.grad(f)
    g(np.ones(2))
    assert list(g(np.ones(2))) == [2.0, 2.0]
    f.__code__ = quintupling().__code__
    assert list(g(np.ones(2))) == [5.0, 5.0]


def test_arguments_are_checked_when_their_kind_changes():
    g = srcgrad.grad(loss)
    g(W3, X23)
    g(W3, X23)
    with pytest.raises(srcgrad.NonDifferentiableError, match="argument 'w' .*dtype int64"):
        g(np.arange(3), X23)
    assert g(W3.astype(np.float32), X23).dtype == np.float32
    with pytest.raises(srcgrad.NonDifferentiableError, match="argument 'w'"):
        g([1, 2, 3], X23)


def sum_of_list(ws):
    return ws[0] * ws[1] + ws[1]


def test_container_arguments_are_checked_on_every_call():
    g = srcgrad.grad(sum_of_list)
    assert g([2.0, 3.0]) == [3.0, 3.0]
    assert g([2.0, 3.0]) == [3.0, 3.0]
    with pytest.raises(srcgrad.NonDifferentiableError):
        g([2, 3])


def scaled(x, scale=3.0):
    return np.sum(x) * scale


def test_keyword_arguments_and_defaults_pass_through():
    g = srcgrad.grad(scaled)
    for _ in range(2):
        assert list(g(np.ones(2))) == [3.0, 3.0]
        assert list(g(np.ones(2), scale=4.0)) == [4.0, 4.0]


def test_float_and_array_calls_run_their_own_code():
    g = srcgrad.grad(Model(W3), wrt=1)
    x = X23
    for scale in (2.0, np.float64(2.0), 2.0):
        assert_close(g(x, scale), numeric_grad(Model(W3), [x, 2.0], 1))


# -- grad(model) on a callable object -----------------------------------------------------


def test_grad_of_a_callable_object_differentiates_its_call():
    model = Model(RNG.standard_normal(3))
    x = RNG.standard_normal((4, 3))
    g = srcgrad.grad(model, wrt=(0, 1))
    dx, dscale = g(x, 1.5)
    assert_close(dx, numeric_grad(model, [x, 1.5], 0))
    assert_close(dscale, numeric_grad(model, [x, 1.5], 1))
    assert_close(srcgrad.grad(model)(x, 1.5), srcgrad.grad(model.__call__)(x, 1.5))
    value, grads = srcgrad.value_and_grad(model)(x, 1.5)
    assert value == model(x, 1.5)
    assert_close(grads, dx)


def test_the_other_transformations_take_callable_objects():
    model = Model(RNG.standard_normal(3))
    x = RNG.standard_normal((4, 3))
    value, pullback = srcgrad.vjp(model, x, 1.5)
    assert value == model(x, 1.5)
    dx, dscale = pullback(1.0)
    assert_close(dx, numeric_grad(model, [x, 1.5], 0))
    assert_close(dscale, numeric_grad(model, [x, 1.5], 1))
    v = RNG.standard_normal((4, 3))
    _, tangent = srcgrad.jvp(model, (x, 1.5), (v, None))
    assert_close(tangent, np.sum(dx * v), rtol=1e-6)
    eps = 1e-6
    g = srcgrad.grad(model)
    by_differences = (g(x + eps * v, 1.5) - g(x - eps * v, 1.5)) / (2 * eps)
    assert_close(srcgrad.hvp(model)(x, 1.5, v), by_differences, rtol=1e-5, atol=1e-7)
    hessian = srcgrad.hessian(model, wrt=1)(x, 1.5)
    assert_close(hessian, (srcgrad.grad(model, wrt=1)(x, 1.5 + eps)
                           - srcgrad.grad(model, wrt=1)(x, 1.5 - eps)) / (2 * eps), rtol=1e-5)


def test_vjp_of_a_bound_method_counts_the_methods_arguments():
    model = Model(RNG.standard_normal(3))
    x = RNG.standard_normal((4, 3))
    value, pullback = srcgrad.vjp(model.loss, x)
    assert value == model.loss(x)
    (dx,) = pullback(1.0)
    assert_close(dx, numeric_grad(model.loss, [x], 0))


WHAT = ("differentiates functions written with 'def', bound methods and callable objects "
        "(whose class defines __call__)")


def power(x, n):
    return np.sum(x ** n)


@pytest.mark.parametrize("given, transform, then", [
    (functools.partial(np.tanh), "hvp",  # a partial of a def is taken (API.md)
     "got functools.partial(<ufunc 'tanh'>): differentiate tanh itself, "
     "srcgrad.hvp(tanh, wrt=...), and pass the fixed arguments when you call the result "
     "(or call the partial inside a def and differentiate that)"),
    (np.tanh, "value_and_grad",
     "got <ufunc 'tanh'>, which has no Python source: differentiate a def that calls it"),
    (Model, "vjp",
     "got <class 'test_first_hour.Model'>, a class: differentiate an instance, "
     "srcgrad.vjp(Model(...)), or a method, srcgrad.vjp(Model.method)"),
    (srcgrad.hessian(power), "grad",
     "got <srcgrad hessian_power>, made by srcgrad: the derivatives of generated functions "
     "it takes are grad(grad(f)) for a float argument, and hvp, hessian and "
     "jacobian(grad(f))"),
])
def test_what_a_transformation_cannot_take_says_what_to_do(given, transform, then):
    with pytest.raises(srcgrad.SrcGradError) as info:
        if transform == "vjp":
            srcgrad.vjp(given, np.ones(2))
        else:
            getattr(srcgrad, transform)(given)
    text = re.sub(r"0x[0-9a-f]+", "0x...", str(info.value))
    assert text == f"srcgrad.{transform} {WHAT}; {then}"


def test_jvp_and_hvp_say_the_same():
    with pytest.raises(srcgrad.SrcGradError, match=r"srcgrad\.jvp differentiates .*partial"):
        srcgrad.jvp(functools.partial(np.tanh), (np.ones(2),), (np.ones(2),))
    with pytest.raises(srcgrad.SrcGradError, match=r"srcgrad\.hvp differentiates .*a class"):
        srcgrad.hvp(Model)


def test_a_callable_object_given_below_the_api_names_the_function_to_pass():
    model = Model(W3)
    with pytest.raises(srcgrad.SrcGradError) as info:
        srcgrad.saved(model, X23, 2.0)
    assert str(info.value).endswith(
        ": pass the plain function Model.__call__ and the instance as its first argument "
        "(srcgrad.grad and the other transformations take bound methods and callable "
        "objects themselves)")


# -- every error class is exported ---------------------------------------------------------


def test_every_error_class_is_exported_from_srcgrad():
    import srcgrad.errors as errors
    classes = {name: obj for name, obj in vars(errors).items()
               if isinstance(obj, type) and issubclass(obj, Exception)}
    assert "SourceNotFoundError" in classes and "ZeroGradientWarning" in classes
    for name, cls in classes.items():
        assert name in srcgrad.__all__, f"srcgrad.errors.{name} is not in srcgrad.__all__"
        assert getattr(srcgrad, name) is cls
        # the warnings (issue 18) derive from SrcGradWarning, a UserWarning
        base = srcgrad.SrcGradWarning if issubclass(cls, Warning) else srcgrad.SrcGradError
        assert issubclass(cls, base)


def test_no_srcgrad_error_class_is_defined_elsewhere():
    """An error users can catch lives in srcgrad.errors (and so in srcgrad)."""
    import importlib
    import pkgutil
    found = []
    for info in pkgutil.walk_packages([str(PACKAGE)], prefix="srcgrad."):
        if info.name.endswith("__main__"):
            continue
        module = importlib.import_module(info.name)
        for name, obj in vars(module).items():
            if isinstance(obj, type) and issubclass(obj, srcgrad.SrcGradError) \
                    and obj.__module__ == info.name and info.name != "srcgrad.errors":
                found.append(f"{info.name}.{name}")
    assert not found


def _doubled(x):
    return x * 2.0


@pytest.mark.parametrize("primals, says", [((), "none was given"),
                                           ((3,), "none of them is a float")])
def test_vjp_without_a_differentiable_point_says_what_to_pass(primals, says):
    # was a raw IndexError from inside the compiler
    with pytest.raises(srcgrad.SrcGradError) as info:
        srcgrad.vjp(_doubled, *primals)
    assert "vjp(f, x, y)" in str(info.value) and says in str(info.value)
