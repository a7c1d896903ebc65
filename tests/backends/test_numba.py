"""The numba backend (srcgrad/backends): grad(f, backend="numba").

Functions of Python floats are compiled with numba.njit: the value is the
NumPy backend's bit for bit, the gradient equal within 1e-12 relative (in
practice bit for bit too: numba calls the same libm), and the source is the
NumPy backend's with ``import numba`` and a decorator.  Anything numba cannot
compile runs the NumPy code, ``.source`` saying why, without a warning.
"""

import math
import os
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

import srcgrad

numba = pytest.importorskip("numba")

K = 0.25          # a number the generated code reads: numba compiles it in
TABLE = [1.0, 2.0]  # a list: numba cannot compile code reading it


def scalar_loop(a, b):
    for i in range(200):
        a = a + 0.1 * math.sin(b)
        b = b + 0.1 * math.cos(a)
    return a * b


def euler(y, k, n):
    """An ODE stepper: y' = -k y + sin(t), explicit Euler, n steps."""
    t = 0.0
    h = 0.01
    for i in range(n):
        y = y + h * (-k * y + math.sin(t))
        t = t + h
    return y * y


def recurrence(x, c):
    """Branches, while, powers, exp/log/tanh, abs, a callee, a global number."""
    s = 0.0
    i = 0
    while i < 30:
        if x > 0.5:
            x = x - K * math.tanh(x) ** 2
        else:
            x = step(x, c) + abs(x - 0.3)
        s += math.exp(-x) * c + math.log(1.0 + x * x) / (i + 1)
        i += 1
    return s + x ** 3


def step(x, c):
    return x + 0.1 * math.sqrt(c * c + x * x)


def reads_table(x):
    return x * TABLE[0] + math.sin(x)


def on_arrays(x):
    return np.sum(np.sin(x) * x)


FLOAT_CASES = [
    (scalar_loop, (0.3, 0.7), (0, 1)),
    (euler, (1.5, 0.8, 150), (0, 1)),
    (recurrence, (0.9, 1.3), (0, 1)),
    (recurrence, (0.2, 0.4), (0, 1)),
]


def _close(a, b, rtol=1e-12):
    a, b = np.atleast_1d(a), np.atleast_1d(b)
    return np.all(np.abs(a - b) <= rtol * np.maximum(np.abs(b), 1e-300))


@pytest.mark.parametrize("fn, args, wrt", FLOAT_CASES, ids=lambda v: getattr(v, "__name__", ""))
def test_value_and_gradient_match_numpy(fn, args, wrt):
    jit = srcgrad.value_and_grad(fn, wrt=wrt, backend="numba")
    ref = srcgrad.value_and_grad(fn, wrt=wrt)
    value, grads = jit(*args)
    ref_value, ref_grads = ref(*args)
    assert value == ref_value == fn(*args)          # bit for bit
    assert type(value) is float and all(type(g) is float for g in grads)
    assert _close(grads, ref_grads)
    assert "@numba.njit(cache=True)" in jit.source, jit.source
    assert srcgrad.gradcheck(fn, *args, wrt=wrt)


def test_source_is_numpy_source_plus_decorator():
    g = srcgrad.grad(scalar_loop, wrt=(0, 1), backend="numba")
    g(0.3, 0.7)
    numpy_source = srcgrad.grad(scalar_loop, wrt=(0, 1))
    numpy_source(0.3, 0.7)
    plain = [line for line in g.source.splitlines()
             if line not in ("import numba", "@numba.njit(cache=True)")]
    assert plain == numpy_source._shown.source.splitlines() if numpy_source._shown else True
    assert g.source.count("@numba.njit(cache=True)") == 1
    # the compiled function is what runs
    assert isinstance(g._shown.functions[0].dispatcher, numba.core.registry.CPUDispatcher)


def test_single_gradient_and_check_mode():
    g = srcgrad.grad(scalar_loop, backend="numba", check=True)
    assert g(0.3, 0.7) == srcgrad.grad(scalar_loop)(0.3, 0.7)


def test_global_number_is_compiled_in_and_followed(monkeypatch):
    g = srcgrad.grad(recurrence, wrt=(0, 1), backend="numba")
    before = g(0.9, 1.3)
    assert "# backend numba: globals compiled in as constants: K = 0.25" in g.source
    monkeypatch.setitem(globals(), "K", 0.5)
    after = g(0.9, 1.3)
    assert "K = 0.5" in g.source
    assert _close(after, srcgrad.grad(recurrence, wrt=(0, 1))(0.9, 1.3))
    assert not _close(after, before)


def _no_warnings(call):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = call()
    assert not caught, [str(w.message) for w in caught]
    return result


def test_arrays_fall_back_to_numpy_with_a_note():
    g = srcgrad.grad(on_arrays, backend="numba")
    x = np.linspace(0.0, 1.0, 5)
    np.testing.assert_array_equal(_no_warnings(lambda: g(x)), srcgrad.grad(on_arrays)(x))
    assert ("# backend numba: not compiled: it calls the runtime helpers "
            "summed_elementwise_seed, unreduce, which numba cannot type") in g.source
    # the function runs on NumPy; its elementwise runs are fused kernels (test_numba_fusion.py)
    assert "@numba.njit(cache=True)\n" not in g.source
    assert "\ndef grad_on_arrays(x):" in g.source


def test_unsupported_global_falls_back_before_running():
    g = srcgrad.grad(reads_table, backend="numba")
    assert _no_warnings(lambda: g(0.4)) == srcgrad.grad(reads_table)(0.4)
    assert "# backend numba: not compiled: TABLE is a list bound from the globals" in g.source


def scaled(x, mode):
    y = x
    for v in (1.0, 2.0, 3.0):
        y = y * v + math.sin(y)
    return y if mode == "plain" else 2.0 * y


def test_argument_numba_is_not_given_falls_back():
    g = srcgrad.grad(scaled, backend="numba")
    assert _no_warnings(lambda: g(0.4, "plain")) == srcgrad.grad(scaled)(0.4, "plain")
    assert "# backend numba: not compiled: argument mode is a str" in g.source


def hypotenuse(x, y):
    return math.hypot(x, y) * x


def test_functions_numba_rounds_differently_run_on_numpy():
    g = srcgrad.value_and_grad(hypotenuse, wrt=(0, 1), backend="numba")
    assert g(2.6010959714322834, 0.2254192472209985) == srcgrad.value_and_grad(
        hypotenuse, wrt=(0, 1))(2.6010959714322834, 0.2254192472209985)
    assert "# backend numba: not compiled: it calls math.hypot" in g.source


def gamma_terms(a, b):  # lgamma and gamma of values not differentiated: compiled before
    s = 0.0
    for i in range(10):
        s = s + a * math.lgamma(2.0 + i * 0.137) + b * math.gamma(1.5 + i * 0.01)
    return s


def test_gamma_and_lgamma_run_on_numpy():
    """numba's lgamma and gamma (the C library's) differ from CPython's own in
    the last bits on most inputs: the value was -3.0862337542191427 for the
    function's -3.0862337542191436 (review s36 R4-21)."""
    g = srcgrad.value_and_grad(gamma_terms, wrt=(0, 1), backend="numba")
    value, grads = g(0.4, -0.53)
    assert value == gamma_terms(0.4, -0.53)
    assert grads == srcgrad.grad(gamma_terms, wrt=(0, 1))(0.4, -0.53)
    assert "# backend numba: not compiled: it calls math.gamma" in g.source \
        or "# backend numba: not compiled: it calls math.lgamma" in g.source


def log_of(x):
    return math.log(x) * x


def test_python_errors_are_raised_where_numba_gives_nan():
    g = srcgrad.grad(log_of, backend="numba")
    assert g(2.0) == srcgrad.grad(log_of)(2.0)
    assert "@numba.njit" in g.source
    for x in (-1.0, 0.0):  # numba's math.log gives NaN and -Inf; Python's raises
        with pytest.raises(ValueError, match="math domain error"):
            g(x)
    with pytest.raises(ZeroDivisionError):  # numba raises this one itself
        srcgrad.grad(divided, backend="numba")(1.0, 0.0)


def divided(x, d):
    return x / d


def python_only(x):
    return x


def test_typing_failure_is_reported_before_running():
    from srcgrad.backends.numba_compile import compile_for

    ran = []

    @numba.njit
    def calls_python(x):
        ran.append(x)
        return python_only(x)

    reason = compile_for(calls_python, (0.5,))
    assert reason is not None and " at 0x" not in reason and len(reason) <= 160
    assert not ran


def test_float_of_a_comparison_and_powers_are_bit_identical():
    rng = np.random.default_rng(0)
    g = srcgrad.value_and_grad(powers, wrt=(0, 1), backend="numba")
    ref = srcgrad.value_and_grad(powers, wrt=(0, 1))
    for x, y in rng.uniform(0.05, 3.0, size=(200, 2)):
        x, y = float(x), float(y)
        assert g(x, y) == ref(x, y)
    assert "@numba.njit" in g.source


def powers(x, y):
    return (x ** 3 + x ** 0.5 + math.pow(x, y) + y ** -2 + math.fabs(x - 1.0)
            + math.log2(x) + math.atan2(x, y)
            + math.erfc(x) + math.expm1(-y) + math.log1p(y) + math.sinh(x) * math.cosh(y))


def test_export_writes_the_numpy_code(tmp_path):
    g = srcgrad.grad(euler, backend="numba")
    g(1.5, 0.8, 20)
    path = tmp_path / "exported_euler.py"
    srcgrad.export(str(path), g)
    text = path.read_text()
    assert "import numba" not in text and "@numba" not in text and "def grad_euler(" in text


def test_unknown_backend_lists_the_choices():
    with pytest.raises(srcgrad.SrcGradError, match="unknown backend 'jax': use one of 'numpy', 'numba'"):
        srcgrad.grad(scalar_loop, backend="jax")


def test_missing_numba_names_the_package(monkeypatch):
    import srcgrad.backends as backends
    monkeypatch.setitem(sys.modules, "numba", None)
    monkeypatch.delitem(sys.modules, "srcgrad.backends.numba_rules")
    monkeypatch.delattr(backends, "numba_rules")
    with pytest.raises(srcgrad.BackendUnavailableError, match=r"pip install numba") as info:
        srcgrad.grad(scalar_loop, backend="numba")
    assert isinstance(info.value, srcgrad.SrcGradError)
    assert srcgrad.grad(scalar_loop)(0.3, 0.7)  # the NumPy backend needs nothing


def decay(y, k, n):  # for the next two tests only: nothing else compiles it before them
    for i in range(n):
        y = y - 0.1 * k * y
    return y


def swing(x, y):
    return math.sin(x) * math.cos(y)


def test_memory_only_cache_compiles_without_numba_cache(monkeypatch):
    monkeypatch.setenv("SRCGRAD_CACHE", "0")
    g = srcgrad.grad(decay, backend="numba")
    assert g(1.5, 0.8, 40) == srcgrad.grad(decay)(1.5, 0.8, 40)
    assert "@numba.njit\ndef" in g.source


def test_unwritable_cache_directory_compiles_in_memory(tmp_path, monkeypatch):
    (tmp_path / "file").write_text("")
    monkeypatch.setenv("SRCGRAD_CACHE_DIR", str(tmp_path / "file" / "cache"))
    monkeypatch.setattr("srcgrad.cache.store._warned", True)  # its one warning, tested elsewhere
    g = srcgrad.grad(swing, backend="numba")
    assert g(0.5, 1.5) == srcgrad.grad(swing)(0.5, 1.5)
    assert "@numba.njit\ndef" in g.source and "cache=True" not in g.source


_PROCESS = textwrap.dedent("""
    import json, sys, time
    sys.path.insert(0, {tests!r})
    import test_numba
    import srcgrad
    g = srcgrad.grad(test_numba.scalar_loop, wrt=(0, 1), backend="numba")
    start = time.perf_counter()
    grads = g(0.3, 0.7)
    elapsed = time.perf_counter() - start
    hits = sum(g._shown.functions[0].dispatcher.stats.cache_hits.values())
    print(json.dumps({{"grads": grads, "hits": hits, "seconds": elapsed}}))
""")


def test_second_process_hits_numba_disk_cache(tmp_path):
    import json
    env = {**os.environ, "SRCGRAD_CACHE_DIR": str(tmp_path / "cache")}
    script = _PROCESS.format(tests=os.path.dirname(__file__))
    runs = [json.loads(subprocess.run([sys.executable, "-c", script], env=env, check=True,
                                      capture_output=True, text=True).stdout)
            for _ in range(2)]
    assert runs[0]["hits"] == 0 and runs[1]["hits"] == 1
    assert runs[0]["grads"] == runs[1]["grads"] == list(
        srcgrad.grad(scalar_loop, wrt=(0, 1))(0.3, 0.7))
    assert list((tmp_path / "cache" / "code" / "__pycache__").glob("*.nbi"))


# --- integers: Python's grow, numba's int64 wraps ------------------------------------------

def times_ten(x, n):
    m = 1
    for i in range(n):
        m = m * 10
    return x * m


def cubed(x, n):
    return x * (n * n * n)


def truncated(x):
    k = int(x * 1e19)
    return x * k


def floored(x):
    return x * (math.floor(x * 1e19) + 1)


def negative_power(x, n):
    return x * n ** -2 + x * 2 ** n


def added(x, n):
    return x * (n + n)


def doubled(x, n):
    k = 1
    for i in range(n):
        k = k + k
    return x * k


def fibonacci(x):
    a, b = 0, 1
    for i in range(100):
        a, b = b, a + b
    return x * a


@pytest.mark.parametrize("fn, args", [(times_ten, (1.5, 25)), (cubed, (1.0, 3_000_000)),
                                      (truncated, (3.0,)), (floored, (3.0,)),
                                      (negative_power, (1.5, 3)),
                                      (negative_power, (1.5, -3)), (added, (2.0, 2 ** 62)),
                                      (doubled, (2.0, 70)), (fibonacci, (2.0,))],
                         ids=lambda v: getattr(v, "__name__", ""))
def test_integer_arithmetic_gives_pythons_numbers(fn, args):
    """Silently wrong before (found by review): numba's 64-bit integers wrap where
    Python's grow (10 ** 25 as 2.4e18), and int ** -2 was 0.  Integer products,
    powers, shifts and integers made by calls run the NumPy code; so does a call
    with an int argument beyond 2**31 (a sum of two may pass 2**63)."""
    jit = srcgrad.value_and_grad(fn, backend="numba")
    value, grad = jit(*args)
    assert value == fn(*args)
    assert (value, grad) == srcgrad.value_and_grad(fn)(*args)
    if fn is not added:
        assert "backend numba: not compiled" in jit.source, jit.source


def test_loop_counters_and_integer_sums_still_compile():
    g = srcgrad.grad(euler, backend="numba")
    g(1.0, 0.5, 10)
    assert "@numba.njit(cache=True)" in g.source and "not compiled" not in g.source


# --- random programs of floats: the numba backend against the NumPy backend ---------------

_UNARY = ("math.sin({})", "math.cos({})", "math.tanh({})", "math.exp(-({}) ** 2)",
          "math.sqrt(1.0 + ({}) ** 2)", "math.log(1.0 + ({}) ** 2)", "math.atan({})",
          "abs({})", "({}) ** 3", "({}) ** 2", "math.erf({})", "math.pow(1.5, {})")
_BINARY = ("{} + {}", "{} - {}", "{} * {}", "{} / (1.0 + ({}) ** 2)", "max({}, {})",
           "min({}, {})", "0.5 * {} + 0.25 * {}")


def _random_program(rng, name):
    names = ["a", "b"]

    def expr(depth=0):
        if depth > 1 or rng.random() < 0.3:
            return rng.choice(names) if rng.random() < 0.85 else repr(rng.choice((0.5, 2.0, -1.5)))
        if rng.random() < 0.5:
            return rng.choice(_UNARY).format(expr(depth + 1))
        return rng.choice(_BINARY).format(expr(depth + 1), expr(depth + 1))

    def assign(indent):
        target = rng.choice(names + ["c"] * 2)
        if target not in names:
            names.append(target)
            return [f"{indent}{target} = math.tanh({expr()})"]
        return [f"{indent}{target} = math.tanh({expr()})"]

    lines = [f"def {name}(a, b, n):", "    c = 0.5 * a"]
    if "c" not in names:
        names.append("c")
    for _ in range(rng.randint(2, 5)):
        kind = rng.random()
        if kind < 0.35:
            lines.append("    for i in range(n):")
            lines += assign("        ") + assign("        ")
        elif kind < 0.55:
            lines.append(f"    if {rng.choice(names)} > {rng.choice(names)}:")
            lines += assign("        ")
            lines.append("    else:")
            lines += assign("        ")
        elif kind < 0.65:
            lines.append("    k = 0")
            lines.append("    while k < n:")
            lines += assign("        ")
            lines.append("        k += 1")
        else:
            lines += assign("    ")
    lines.append(f"    return {expr()} + a * b + c")
    return "\n".join(lines) + "\n"


#: The random programs below: 16 of them, of which `make test` checks the first
#: QUICK (each costs a numba compile of seconds) and `make slow` the rest.
RANDOM_PROGRAMS, QUICK = 16, 5


@pytest.mark.filterwarnings("ignore::srcgrad.ZeroGradientWarning")
def test_random_float_programs_match_numpy(tmp_path):
    _check_random_programs(tmp_path, range(QUICK))


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::srcgrad.ZeroGradientWarning")
def test_random_float_programs_match_numpy_slow(tmp_path):
    _check_random_programs(tmp_path, range(QUICK, RANDOM_PROGRAMS))


def _check_random_programs(tmp_path, checked, count=RANDOM_PROGRAMS, seed=19):
    import importlib.util
    import random

    rng = random.Random(seed)
    source = "import math\n\n\n" + "\n\n".join(_random_program(rng, f"p{i}") for i in range(count))
    path = tmp_path / "numba_random_programs.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("numba_random_programs", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    compiled = 0
    for i in checked:
        fn = getattr(module, f"p{i}")
        jit = srcgrad.value_and_grad(fn, wrt=(0, 1), backend="numba")
        ref = srcgrad.value_and_grad(fn, wrt=(0, 1))
        for a, b, n in ((0.3, -0.7, 3), (1.1, 0.4, 0), (-0.9, 0.8, 5)):
            value, grads = jit(a, b, n)
            ref_value, ref_grads = ref(a, b, n)
            assert value == ref_value == fn(a, b, n), (fn.__name__, a, b, n)
            assert _close(grads, ref_grads), (fn.__name__, a, b, n, grads, ref_grads)
        compiled += "@numba.njit(cache=True)" in jit.source
    assert compiled == len(checked), compiled
