"""backend="numba" on arrays: runs of elementwise statements fused into kernels.

The module stays NumPy code (numba cannot type its array helpers); each run
of elementwise statements becomes one generated loop kernel, called where
``fits()`` finds float64 arrays of one shape, the NumPy statements in the
``else`` branch (srcgrad/backends/numba_fusion.py).  Kernels use only
operations whose bits are NumPy's (``+ - * /``, ``** 2``, ``sqrt``, ``abs``,
and ``sin``/``cos``, which NumPy's float64 loops take from the same C
library), so values and gradients are the NumPy backend's bit for bit; exp,
log and tanh end a run (NumPy's SIMD loops are faster, and other bits).
"""

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import srcgrad

numba = pytest.importorskip("numba")
from srcgrad.backends import numba_rules, numba_threads

threads = pytest.mark.skipif(numba.config.NUMBA_NUM_THREADS < 2,
                             reason="numba's pool has one thread (NUMBA_NUM_THREADS)")


def chain(x):
    """The benchmark's elementwise chain, shorter: exp, log and tanh split it."""
    a = np.sin(x)
    b = np.exp(a)
    c = a * b
    d = c + x
    e = np.tanh(d)
    f = e * x
    g = np.cos(f)
    h = g + 2.0
    i = np.log(h)
    k = i * e - a
    m = np.sqrt(k * k + 1.0)
    n = m / h
    s = np.where(n > 0.5, n ** 2, -n) * g
    return np.sum(s * m + np.abs(k))


def two(x, y):
    """Two arguments: fused where they have one shape, NumPy where they broadcast."""
    u = x * y + np.sin(x)
    v = u / (1.0 + y * y)
    w = np.cos(v) * u - v
    return np.sum(w * w)


def looped(x, n):
    """A chain inside a loop body and a branch, and one in a helper."""
    s = 0.0
    for i in range(n):
        if i % 2 == 0:
            x = x * 0.9 + np.sin(x) * 0.1
            x = x - 0.05 * x * x
        else:
            x = helper(x)
        s = s + np.sum(x * x)
    return s


def helper(x):
    y = np.cos(x) * x + 0.5
    return y / (1.0 + x * x)


def poly(x):
    """Arithmetic, sqrt and abs only: the adjoint sweep is one kernel (abs's
    signum and match_complex included)."""
    a = x * x + 1.0
    b = np.sqrt(a) * x - 0.5
    c = b / a + x
    d = c * c - b
    e = np.abs(d) + a * 0.25
    f = e / (1.0 + c ** 2)
    g = f * b - d * 0.125
    return np.sum(g * g + f)


def kinks(x):
    return np.sum(np.abs(x) * x + np.abs(x - 0.5) * 3.0)


def scaled(x, alpha, n):
    """Numbers in names: alpha and n broadcast over the run; beta is a number
    itself (made of alpha alone), so alpha's statement is NumPy's."""
    beta = alpha * 2.0 + 1.0
    y = np.sin(x) * alpha + x / n
    z = y * y * beta - x * alpha
    w = z * alpha ** 2 + x ** 2  # Python's alpha ** 2 is pow(), NumPy's x ** 2 x * x
    return np.sum(w * y)


def inverse(x, alpha):
    y = np.sin(x) * (1.0 / alpha) + x
    return np.sum(y * y - x)


def kernels_ran(transform):
    """The kinds of calls each fused kernel of ``transform``'s module ran for."""
    names = transform._shown.functions[0].__globals__
    return [(name, key) for name, kernel in sorted(names.items()) if name.startswith("fused_")
            for key, ok in numba_rules._FITTED.get(kernel, {}).items() if ok]


def central(f, x, h=1e-6):
    out = np.zeros_like(x)
    flat = x.reshape(-1)
    for j in range(flat.size):
        e = np.zeros_like(flat)
        e[j] = h
        out.reshape(-1)[j] = (f((flat + e).reshape(x.shape)) - f((flat - e).reshape(x.shape))) \
            / (2 * h)
    return out


@pytest.fixture
def x():
    return np.random.default_rng(19).uniform(-1.0, 1.0, 1000)


def test_chain_gradient_is_numpy_backends_bit_for_bit(x):
    g = srcgrad.grad(chain, backend="numba")
    got = g(x)
    assert np.array_equal(got, srcgrad.grad(chain)(x))
    assert kernels_ran(g), g.source
    small = x[:7].copy()
    assert np.allclose(g(small), central(chain, small), rtol=1e-6, atol=1e-8)


def test_source_shows_the_kernels_and_the_numpy_code(x):
    g = srcgrad.grad(chain, backend="numba")
    g(x)
    source = g.source
    assert "# backend numba: not compiled: it calls the runtime helper" in source
    assert '@numba.njit(cache=True, error_model="numpy")\ndef fused_1(' in source
    assert "    fused = fused_1_threads if on_threads(" in source
    assert "    if fits(fused, " in source and "    else:\n" in source
    assert "for index in numba.prange(" in source  # range, but in fused_1_threads
    assert "\nfused_1_threads = parallel_twin(fused_1)  # " in source
    assert "from srcgrad.backends.numba_rules import at, blank, fits, flat" in source
    assert "from srcgrad.backends.numba_threads import on_threads, parallel_twin" in source
    compile(source, "<fused>", "exec")
    # exp, log and tanh stay NumPy statements, outside the kernels
    kernel_text = source.split("\ndef grad_chain")[0]
    assert "np.exp" not in kernel_text and "np.tanh" not in kernel_text
    assert "np.sin(" in kernel_text and "np.sqrt(" in kernel_text


def test_value_and_grad_value_is_the_functions_own(x):
    value, grad = srcgrad.value_and_grad(chain, backend="numba")(x)
    assert value == chain(x)
    assert np.array_equal(grad, srcgrad.grad(chain)(x))


def test_same_shapes_fuse_broadcast_shapes_fall_back():
    rng = np.random.default_rng(3)
    x, y = rng.normal(size=(6, 5)), rng.normal(size=(6, 5))
    g = srcgrad.grad(two, wrt=(0, 1), backend="numba")
    want = srcgrad.grad(two, wrt=(0, 1))
    assert all(np.array_equal(a, b) for a, b in zip(g(x, y), want(x, y)))
    assert kernels_ran(g)  # 2-d arrays of one shape: the kernels ran
    row = rng.normal(size=5)  # broadcast: fits() says no, the NumPy code runs
    assert all(np.array_equal(a, b) for a, b in zip(g(x, row), want(x, row)))
    # a strided view, float32, a 0-d array: NumPy code, the same values as NumPy's
    view = rng.normal(size=(6, 10))[:, ::2]
    assert all(np.array_equal(a, b) for a, b in zip(g(view, y), want(view, y)))
    x32, y32 = x.astype(np.float32), y.astype(np.float32)
    assert all(np.array_equal(a, b) for a, b in zip(g(x32, y32), want(x32, y32)))
    zero = np.array(0.3)
    assert all(np.array_equal(a, b) for a, b in zip(g(zero, zero), want(zero, zero)))
    small = x[:2, :2].copy(), y[:2, :2].copy()
    fd = central(lambda v: two(v, small[1]), small[0])
    assert np.allclose(g(*small)[0], fd, rtol=1e-6, atol=1e-8)


def test_fits_guard():
    a = np.ones((3, 4))
    kernel = numba.njit(lambda p, q, out: None)
    assert not numba_rules.fits(kernel, a, np.ones((4,)))
    assert not numba_rules.fits(kernel, a, 1.0)
    assert not numba_rules.fits(kernel, a.astype(np.float32), a)
    assert not numba_rules.fits(kernel, a.T, a.T)
    assert not numba_rules.fits(kernel, np.ones(()), np.ones(()))
    assert numba_rules.fits(kernel, a, a + 1)
    # a 1-d cotangent broadcast from a number (strides 0) is indexed as it is
    assert numba_rules.fits(kernel, np.broadcast_to(2.0, (5,)), np.ones(5))


def test_loop_branch_and_helper_bit_for_bit(x):
    g = srcgrad.grad(looped, backend="numba")
    want = srcgrad.grad(looped)
    assert np.array_equal(g(x, 5), want(x, 5))
    small = x[:5].copy()
    assert np.allclose(g(small, 5), central(lambda v: looped(v, 5), small),
                       rtol=1e-6, atol=1e-8)
    value, _ = srcgrad.value_and_grad(looped, backend="numba")(x, 4)
    assert value == looped(x, 4)


def test_vjp_and_jvp_on_arrays(x):
    value, pullback = srcgrad.vjp(chain, x, backend="numba")
    assert value == chain(x)
    assert np.array_equal(pullback(1.0)[0], srcgrad.grad(chain)(x))
    t = np.cos(x)
    got = srcgrad.jvp(chain, (x,), (t,), backend="numba")
    want = srcgrad.jvp(chain, (x,), (t,))
    assert got[0] == want[0] == chain(x) and got[1] == want[1]


def test_callers_arrays_are_not_written(x):
    keep = x.copy()
    srcgrad.grad(chain, backend="numba")(x)
    srcgrad.grad(looped, backend="numba")(x, 3)
    assert np.array_equal(x, keep)


_PROCESS = textwrap.dedent("""
    import json, sys, time
    sys.path.insert(0, {tests!r})
    import numpy as np
    import test_numba_fusion as t
    import srcgrad
    x = np.random.default_rng(19).uniform(-1.0, 1.0, {size})
    g = srcgrad.grad(t.chain, backend="numba")
    start = time.perf_counter()
    grads = g(x)
    elapsed = time.perf_counter() - start
    names = g._shown.functions[0].__globals__
    hits = sum(sum(v.stats.cache_hits.values()) for k, v in names.items()
               if k.startswith("fused_"))
    misses = sum(sum(v.stats.cache_misses.values()) for k, v in names.items()
                 if k.startswith("fused_"))
    twins = sorted(k for k, v in names.items()
                   if k.startswith("fused_") and k.endswith("_threads") and v.signatures)
    print(json.dumps({{"grads": grads.tolist(), "hits": hits, "misses": misses,
                      "seconds": elapsed, "twins": twins}}))
""")


def _two_processes(tmp_path, size):
    env = {**os.environ, "SRCGRAD_CACHE_DIR": str(tmp_path / "cache")}
    script = _PROCESS.format(tests=os.path.dirname(__file__), size=size)
    runs = [json.loads(subprocess.run([sys.executable, "-c", script], env=env, check=True,
                                      capture_output=True, text=True).stdout)
            for _ in range(2)]
    assert runs[0]["hits"] == 0 and runs[0]["misses"] > 0
    assert runs[1]["hits"] == runs[0]["misses"] and runs[1]["misses"] == 0
    assert runs[0]["grads"] == runs[1]["grads"]
    return runs


def test_second_process_loads_the_kernels_from_numbas_disk_cache(tmp_path):
    runs = _two_processes(tmp_path, 1000)
    assert runs[0]["twins"] == runs[1]["twins"] == []  # small: the serial kernels


@threads
def test_second_process_loads_the_threaded_twins_from_numbas_disk_cache(tmp_path):
    """cache=True with parallel=True: the twins' machine code (numba's gufuncs
    included) is filed under their own names and loaded by a second process."""
    runs = _two_processes(tmp_path, numba_threads.THREADS_FROM)
    assert runs[0]["twins"] and runs[0]["twins"] == runs[1]["twins"]
    assert all(name.endswith("_threads") for name in runs[0]["twins"])


def test_arithmetic_chain_is_two_kernels_bit_for_bit(x):
    g = srcgrad.grad(poly, backend="numba")
    assert np.array_equal(g(x), srcgrad.grad(poly)(x))
    assert g.source.count("\ndef fused_") == 2, g.source
    kernels = g.source.split("\n@numba.njit", 1)[1].split("\ndef grad_poly")[0]
    assert "signum" not in kernels and " == 0 else " in kernels  # np.sign's formula inline
    small = x[:6].copy()
    assert np.allclose(g(small), central(poly, small), rtol=1e-6, atol=1e-8)


def test_abs_at_zero_minus_zero_and_nan_as_numpy():
    x = np.array([0.0, -0.0, 0.5, np.nan, -1.5, 2.0, np.inf, -np.inf])
    with np.errstate(invalid="ignore"):
        got = srcgrad.grad(kinks, backend="numba")(x)
        want = srcgrad.grad(kinks)(x)
    assert np.array_equal(got, want, equal_nan=True)
    assert np.array_equal(np.signbit(got), np.signbit(want))


def test_numbers_in_names_broadcast_inside_the_kernel(x):
    g = srcgrad.grad(scaled, wrt=(0, 1), backend="numba")
    want = srcgrad.grad(scaled, wrt=(0, 1))
    g(x, 0.7, 3.0)
    assert kernels_ran(g)  # Python floats broadcast inside the kernels
    assert ", arrays=1):" in g.source and " = at(" in g.source, g.source
    for alpha, n in ((0.7, 3.0), (np.float64(-1.25), 7.0), (2.0, np.float64(2.5))):
        got = g(x, alpha, n)
        assert np.array_equal(got[0], want(x, alpha, n)[0])
        assert got[1] == want(x, alpha, n)[1]
    # x a number too: no statement of the run is an array, NumPy runs it all
    assert g(0.3, 0.7, 3) == want(0.3, 0.7, 3)
    # a bool or an int (n * n of int64s wraps where Python's ints grow): NumPy's code
    for n in (True, 3, 2 ** 40):
        assert np.array_equal(g(x, 0.7, n)[0], want(x, 0.7, n)[0])
    small = x[:4].copy()
    assert np.allclose(g(small, 0.7, 3)[0], central(lambda v: scaled(v, 0.7, 3), small),
                       rtol=1e-6, atol=1e-8)


def _unfused(transform, *args):
    """``transform``'s generated module run with every ``fits()`` False: its
    NumPy statements, the reference a kernel must reproduce bit for bit."""
    names = transform._shown.functions[0].__globals__
    keep = names["fits"]
    names["fits"] = lambda *values, **kw: False
    try:
        return transform._shown.functions[0](*args)
    finally:
        names["fits"] = keep


@pytest.mark.filterwarnings("ignore::srcgrad.errors.ZeroGradientWarning")
@pytest.mark.parametrize("seed", [1920, 1927])
def test_random_programs_fused_as_their_numpy_statements(seed, tmp_path):
    """Random user programs (tests/data/userprograms.py: helpers, loops, lambdas,
    views, reductions) whose generated code has fused kernels: the value is the
    function's own, the gradient what the module's NumPy statements give (the
    numba backend's generated code differs from the NumPy backend's, which
    optimises more, by ~1e-20 on some programs with or without kernels).
    Seeds 1900-1999 were checked this way when the kernels were written: 28
    programs with kernels, 84 kernels, no difference."""
    from userprograms import WRT, generate, load, make_inputs
    program = generate(seed)
    args = make_inputs(seed, program.scalar_kind)
    module = load(program.source, tmp_path)
    vg = srcgrad.value_and_grad(module.f, wrt=WRT, backend="numba")
    value, grads = vg(*args)
    assert kernels_ran(vg), vg.source
    assert value == module.f(*args)
    for got, want in zip(grads, _unfused(vg, *args)[1]):
        assert type(got) is type(want) and np.shape(got) == np.shape(want)
        assert np.array_equal(got, want)


def test_a_number_divided_by_raises_as_python_does(x):
    """1.0 / alpha of a float 0.0 raises ZeroDivisionError in the function; a
    kernel would give Inf, so a divisor must be an array for the kernel to run."""
    g = srcgrad.grad(inverse, wrt=(0, 1), backend="numba")
    with pytest.raises(ZeroDivisionError):
        inverse(x, 0.0)
    with pytest.raises(ZeroDivisionError):
        g(x, 0.0)
    got, want = g(x, 0.5), srcgrad.grad(inverse, wrt=(0, 1))(x, 0.5)
    assert np.array_equal(got[0], want[0]) and got[1] == want[1]


# --- kernels on numba's threads (srcgrad/backends/numba_threads.py) ---------------------


@pytest.fixture
def every_call_threaded(monkeypatch):
    """Every kernel call on arrays of at least one element runs the threaded
    twin (``on_threads()``'s size threshold lowered to 1), on two threads."""
    monkeypatch.setattr(numba_threads, "THREADS_FROM", 1)
    before = numba.get_num_threads()
    numba.set_num_threads(2)
    yield
    numba.set_num_threads(before)


def twins_ran(transform):
    return [name for name, _ in kernels_ran(transform) if name.endswith("_threads")]


def _same(got, want, nan_signs=False):
    """Equal values, -0.0 and 0.0 told apart; NaNs equal, and of one sign only
    where ``nan_signs`` (a kernel's NaN may carry another sign than NumPy's:
    which operand's NaN an operation passes on is up to the compiled code)."""
    got, want = (got if isinstance(got, tuple) else (got,)), \
        (want if isinstance(want, tuple) else (want,))
    assert len(got) == len(want)
    for a, b in zip(got, want):
        assert type(a) is type(b) and np.shape(a) == np.shape(b)
        assert np.array_equal(a, b, equal_nan=True), (a, b)
        signs = np.ones(np.shape(a), bool) if nan_signs else ~np.isnan(a)
        assert np.array_equal(np.signbit(a)[signs], np.signbit(b)[signs])


@threads
def test_threaded_kernels_give_the_numpy_backends_bits(x, every_call_threaded):
    """The test corpus above, every kernel on two threads: bit for bit the
    NumPy backend's gradients, the function's own values; 2-d arrays, numbers
    in names, a loop, a branch and a helper; grad, value_and_grad, vjp, jvp."""
    rng = np.random.default_rng(7)
    y = rng.normal(size=x.shape)
    cases = [(chain, (0,), (x,)), (poly, (0,), (x,)), (looped, (0,), (x, 5)),
             (two, (0, 1), (x.reshape(40, 25), y.reshape(40, 25))),
             (scaled, (0, 1), (x, 0.7, 3.0)), (inverse, (0, 1), (x, 0.5))]
    for f, wrt, args in cases:
        g = srcgrad.grad(f, wrt=wrt, backend="numba")
        _same(g(*args), srcgrad.grad(f, wrt=wrt)(*args))
        assert twins_ran(g), (f.__name__, g.source)
        if f in (chain, looped):
            value, _ = srcgrad.value_and_grad(f, wrt=wrt, backend="numba")(*args)
            assert value == f(*args)
    value, pullback = srcgrad.vjp(chain, x, backend="numba")
    assert value == chain(x)
    _same(pullback(1.0)[0], srcgrad.grad(chain)(x))
    t = np.cos(x)
    assert srcgrad.jvp(chain, (x,), (t,), backend="numba") == srcgrad.jvp(chain, (x,), (t,))


@threads
def test_threaded_kernels_on_views_empty_nan_and_signed_zeros(every_call_threaded):
    """What fits() lets into a kernel besides C-contiguous arrays -- 1-d views
    with strides (negative, 0 of a broadcast cotangent) -- and empty arrays,
    NaN, Inf and -0.0 at abs's kink, on two threads; and what it keeps out
    (0-d arrays, 2-d views) runs NumPy's code as before."""
    base = np.random.default_rng(5).uniform(-1.0, 1.0, 4001)
    special = np.array([0.0, -0.0, 0.5, np.nan, -1.5, 2.0, np.inf, -np.inf])
    for f in (poly, kinks, chain):
        g, want = srcgrad.grad(f, backend="numba"), srcgrad.grad(f)
        with np.errstate(all="ignore"):
            for arg in (base[::-1], base[::3], base[-2::-7], np.empty(0), special,
                        np.concatenate([special, base]), np.array(0.25),
                        base[:4000].reshape(40, 100)[:, ::2]):
                threaded = g(arg)
                _same(threaded, want(arg))
                # the serial kernels: the same bits but for a NaN's sign -- with numba 0.68 /
                # llvmlite 0.50 the parallel twin of poly's adjoint, vectorised otherwise,
                # passes on the other operand's NaN at inf * 0 (a sign NumPy leaves open too)
                numba_threads.THREADS_FROM = 2 ** 62
                _same(threaded, g(arg))
                numba_threads.THREADS_FROM = 1
        assert twins_ran(g), f.__name__


def serial_first(x):
    """Differentiated by one test only: its kernels' verdicts start empty."""
    y = x * x + np.sqrt(x * x + 2.0)
    return np.sum(y / (1.0 + x * x) - x)


@threads
def test_small_arrays_and_one_thread_run_the_serial_kernel(x):
    """Below THREADS_FROM elements, or with numba.set_num_threads(1), the
    kernel runs on the calling thread: the twin is not even compiled."""
    assert x.size < numba_threads.THREADS_FROM
    g, want = srcgrad.grad(serial_first, backend="numba"), srcgrad.grad(serial_first)
    _same(g(x), want(x))
    assert kernels_ran(g) and not twins_ran(g)
    big = np.random.default_rng(2).uniform(-1.0, 1.0, numba_threads.THREADS_FROM)
    before = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        _same(g(big), want(big))
    finally:
        numba.set_num_threads(before)
    assert not twins_ran(g)
    numba.set_num_threads(2)
    try:
        _same(g(big), want(big))
    finally:
        numba.set_num_threads(before)
    assert twins_ran(g)


def test_the_twin_is_the_kernel_compiled_with_parallel(x):
    """parallel_twin() copies the kernel's function under a name of its own (numba's
    disk cache files machine code by name and bytecode, not by flags) and
    compiles it with parallel=True; called directly it gives the kernel's bits
    whatever the size of numba's pool."""
    g = srcgrad.grad(poly, backend="numba")
    g(x)
    names = g._shown.functions[0].__globals__
    kernel, twin = names["fused_1"], names["fused_1_threads"]
    assert twin.targetoptions["parallel"] is True and "parallel" not in kernel.targetoptions
    assert twin.py_func.__qualname__ == "fused_1_threads"
    assert twin.py_func.__code__ is kernel.py_func.__code__
    params = kernel.py_func.__code__.co_varnames[:kernel.py_func.__code__.co_argcount]
    outputs = sum(p.endswith("_out") for p in params)
    for arr in (x, x[::-1], np.empty(0)):
        args = (arr,) * (len(params) - outputs)
        _same(twin(*args, *numba_rules.blank(arr, outputs)),
              kernel(*args, *numba_rules.blank(arr, outputs)), nan_signs=True)


@threads
@pytest.mark.filterwarnings("ignore::srcgrad.errors.ZeroGradientWarning")
@pytest.mark.parametrize("seed", [1920, 1927, 3400002])
def test_random_programs_on_threads_as_their_numpy_statements(seed, tmp_path,
                                                               every_call_threaded):
    """Random user programs with every kernel call on two threads: the value is
    the function's own, the gradient what the module's NumPy statements give."""
    from userprograms import WRT, generate, load, make_inputs
    program = generate(seed)
    args = make_inputs(seed, program.scalar_kind)
    module = load(program.source, tmp_path)
    vg = srcgrad.value_and_grad(module.f, wrt=WRT, backend="numba")
    value, grads = vg(*args)
    if not kernels_ran(vg):
        pytest.skip(f"program {seed} has no kernel that ran")
    assert twins_ran(vg), vg.source
    assert value == module.f(*args)
    for got, want in zip(grads, _unfused(vg, *args)[1]):
        _same(got, want)


def named_like_helpers(x):
    """Locals named like the threads helpers' words (wide, threaded, fused):
    the generated module imports other names, so the runs still fuse."""
    wide = x * x + 1.0
    threaded = np.sin(wide) * x
    fused = threaded / wide - x
    return np.sum(fused * fused)


def test_user_names_like_the_helpers_still_fuse(x):
    g = srcgrad.grad(named_like_helpers, backend="numba")
    _same(g(x), srcgrad.grad(named_like_helpers)(x))
    assert kernels_ran(g), g.source
    assert "    fused_ = fused_1_threads if on_threads(" in g.source


_HAZARD = textwrap.dedent("""
    import multiprocessing, sys, threading
    sys.path.insert(0, {tests!r})
    import numpy as np
    import test_numba_fusion as t
    import srcgrad
    x = np.random.default_rng(19).uniform(-1.0, 1.0, {size})
    g = srcgrad.grad(t.poly, backend="numba")
    want = g(x)  # the main thread: the threaded twins
    assert t.twins_ran(g)
    if sys.argv[1] == "fork":
        context = multiprocessing.get_context("fork")
        queue = context.Queue()
        child = context.Process(target=lambda: queue.put(g(x).tobytes()))
        child.start()
        got = queue.get(timeout=300)
        child.join()
        print(child.exitcode == 0 and got == want.tobytes())
    else:
        results = []
        def work():
            results.append(all(np.array_equal(g(x), want) for _ in range(5)))
        workers = [threading.Thread(target=work) for _ in range(3)]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        print(results == [True] * 3)
""")


@threads
@pytest.mark.parametrize("case, layer", [("fork", None), ("threads", "workqueue")])
def test_no_threads_where_numba_would_end_the_process(case, layer, tmp_path):
    """A child forked after the parent ran the twins (GNU OpenMP: numba
    terminates it), and Python threads under the workqueue layer (numba
    terminates the process when two start parallel kernels at once), run the
    serial kernels: the same bits, and the process lives."""
    env = {**os.environ, "SRCGRAD_CACHE_DIR": str(tmp_path / "cache")}
    if layer:
        env["NUMBA_THREADING_LAYER"] = layer
    script = _HAZARD.format(tests=os.path.dirname(__file__), size=numba_threads.THREADS_FROM)
    done = subprocess.run([sys.executable, "-c", script, case], env=env, capture_output=True,
                          text=True, timeout=600, check=False)
    assert done.returncode == 0 and done.stdout.split()[-1] == "True", done.stderr[-2000:]
