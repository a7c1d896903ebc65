"""srcgrad benchmark suite (issues 7 and 16): generated gradients against careful NumPy.

    python benchmarks/run.py                 # everything; writes benchmarks/results.md
    python benchmarks/run.py --quick         # fewer repetitions (a smoke test)
    python benchmarks/run.py --only mlp,rnn  # some workloads or scaling loops (no results.md)
    python benchmarks/run.py --show-source   # also print the generated code

For each workload in ``workloads.py`` the careful hand-written gradient (and the
naive one, where there is one) is first checked against srcgrad's
(``np.allclose``; the arguments must come back unchanged), then all are timed on
one thread: a warm-up, then repetitions interleaved srcgrad, careful, naive,
function, jax.jit, autograd, torch (those importable), the order reversed every
other repetition, each repetition timing ``inner`` calls.  The table gives the
median time per call and the ratios to the careful hand gradient (the median
over repetitions of the ratio of back-to-back timings, which cancels slow
drifts in machine load), next to the issue's target; ``grad/f`` is srcgrad's
gradient time over the function's own.  jax is timed after its compile (the
first call), which is reported on its own.

The scaling section times loops that index the array being differentiated at
several sizes: gradient time / function time must stay under 5 and flat in n
(issue 16, item 5).  The memory row is the peak (tracemalloc) of a revolve-8
RNN gradient at T=64 and T=1024 (issue 16, item 7).

Compile time is the first call of ``srcgrad.grad(f)`` (generation, compilation,
one run on 4-element arrays) for generated straight-line functions of 10, 100
and 1000 lines, with a fresh on-disk cache directory.  The wrapper overhead is
a cached ``grad`` call of a trivial function minus a direct call of the
generated function it wraps (``g._get().functions[0]``).

Import time is measured in fresh interpreters (the median of a few): ``import
srcgrad`` (the error classes only; everything else is imported on first use),
NumPy and gast alone for comparison, and ``import srcgrad`` followed by the
first read of ``srcgrad.grad``, which imports the compiler.
"""

from __future__ import annotations

import os

# One thread everywhere; this must happen before NumPy is imported.
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
             "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import datetime  # noqa: E402
import gc  # noqa: E402
import platform  # noqa: E402

try:
    import resource  # noqa: E402 - POSIX only
except ImportError:  # pragma: no cover - Windows
    resource = None
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))  # run from a checkout without installing

import numpy as np  # noqa: E402

import generate  # noqa: E402
import others  # noqa: E402
import srcgrad  # noqa: E402
import workloads  # noqa: E402

others.configure_threads()

COMPILE_TARGETS_MS = {100: 50.0, 1000: 500.0}  # issue 16 item 8: first grad, by lines
OVERHEAD_TARGET_US = 2.0       # issue 7: what a cached call adds
IMPORT_TARGET_MS = 100.0       # issue 17: import srcgrad
SCALING_TARGET = 5.0           # issue 16 item 5: gradient / function time, at every n
FLAT_TARGET = 1.5              # ... and the largest n's ratio over the smallest n's
MEMORY_TARGET = 1.5            # issue 16 item 7: revolve-8 peak at T=1024 over T=64
TORCH_NOTE = "not installed (the package index offers only the CUDA build)"


# --- timing ---------------------------------------------------------------------------


# The clock of the timings.  By default the CPU time of this process (user +
# system, all its threads): on a shared machine, time spent waiting for a CPU
# would otherwise land on whichever measurement happened to be running, and
# more often on long ones than on short ones.  With one BLAS thread it equals
# the wall-clock time on an idle machine.  ``--clock wall`` uses perf_counter.
CLOCKS = {"cpu": time.process_time, "wall": time.perf_counter}
clock = CLOCKS["cpu"]


def _time_calls(call, inner):
    """Seconds per call of ``call`` over ``inner`` calls (an int, or a dict by name
    resolved by the caller)."""
    start = clock()
    for _ in range(inner):
        call()
    return (clock() - start) / inner


def _minor_faults():
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt if resource else 0


def interleaved(contestants, repeats, inner, warmup=2, faults=None):
    """Seconds per call of each contestant, one sample per repetition, timed in rotation.

    ``faults``, a dict, receives each contestant's minor page faults per call
    (fresh memory being mapped: a sign of large temporaries kept alive).
    ``inner`` is calls per repetition, the same for all or a dict by name.
    """
    inners = inner if isinstance(inner, dict) else {name: inner for name in contestants}
    for name, call in contestants.items():
        for i in range(warmup):
            if _time_calls(call, inners[name]) > 0.05 and i:
                break  # a slow call: one warm-up is enough
    samples = {name: [] for name in contestants}
    counts = {name: 0 for name in contestants}
    gc.collect()
    enabled = gc.isenabled()
    gc.disable()  # as timeit does: a collection lands on whoever happens to be running
    try:
        for r in range(repeats):
            # alternate the order too, so that neither always runs after the other
            order = list(contestants.items())
            if r % 2:
                order.reverse()
            for name, call in order:
                before = _minor_faults()
                samples[name].append(_time_calls(call, inners[name]))
                counts[name] += _minor_faults() - before
            gc.collect()
    finally:
        if enabled:
            gc.enable()
    if faults is not None:
        faults.update({name: n / (repeats * inners[name]) for name, n in counts.items()})
    return samples


# --- the workloads --------------------------------------------------------------------


def _close(got, want, rtol, atol):
    if len(got) != len(want):
        return False
    return all(np.shape(g) == np.shape(w) and np.allclose(g, w, rtol=rtol, atol=atol)
               for g, w in zip(got, want))


def available_tools():
    found = []
    for tool in others.TOOLS:
        try:
            __import__(tool)
        except Exception:  # noqa: BLE001 - any failure to import means "not available"
            continue
        found.append(tool)
    return found


def _unchanged(args, copies):
    return all(np.array_equal(a, c) if isinstance(a, np.ndarray) else a == c
               for a, c in zip(args, copies))


def _copies(args):
    return [a.copy() if isinstance(a, np.ndarray) else a for a in args]


def run_workload(w, scale, tools, show_source):
    rng = np.random.default_rng(0)
    args = w.make_args(rng)
    copies = _copies(args)
    want = w.hand(*args)
    row = {"name": w.name, "description": w.description, "target": w.target,
           "issue": w.issue, "ok": False, "status": "WRONG GRADIENT", "others": {}}
    if not _unchanged(args, copies):
        print(f"  {w.name}: the careful hand gradient changed its arguments; not timed")
        row["status"] = "HAND CHANGED ITS ARGUMENTS"
        return row
    g = srcgrad.grad(w.fn, wrt=w.wrt)
    try:
        start = time.perf_counter()
        got = g(*args)
        row["first_ms"] = (time.perf_counter() - start) * 1e3
    except Exception as exc:  # noqa: BLE001 - report it and go on with the others
        print(f"  {w.name}: srcgrad failed: {type(exc).__name__}: {exc}")
        row["status"] = f"ERROR ({type(exc).__name__})"
        return row
    row["ok"] = _close(got, want, w.rtol, w.atol) and _unchanged(args, copies)
    if show_source:
        print(f"\n# ---- generated code for {w.name} ----")
        print(g.source)
    if not row["ok"]:
        print(f"  {w.name}: srcgrad's gradient differs from the careful hand-written one; "
              "not timed")
        return row

    contestants = {"srcgrad": lambda: g(*args), "hand": lambda: w.hand(*args),
                   "function": lambda: w.fn(*args)}
    if w.naive is not None:
        if _close(w.naive(*args), want, w.rtol, w.atol):
            contestants["naive"] = lambda: w.naive(*args)
        else:
            print(f"  {w.name}: the naive hand gradient differs from the careful one; not timed")
    for tool in tools:
        try:
            call, to_numpy = others.make(tool, w, args)
            start = time.perf_counter()
            result = call()  # jax: this call compiles
            row["others"][tool] = {"first_ms": (time.perf_counter() - start) * 1e3}
            if not _close(to_numpy(result), want, 1e-5, 1e-7):
                row["others"][tool]["error"] = "wrong gradient"
                continue
            contestants[tool] = call
        except Exception as exc:  # noqa: BLE001 - an optional tool must not stop the suite
            row["others"][tool] = {"error": f"{type(exc).__name__}: {exc}"[:80]}

    repeats = max(3, int(w.repeats * scale)) | 1  # odd: the median is a sample
    # a contestant far slower than the hand gradient (autograd on the scalar loop:
    # 400x) makes fewer calls per repetition, so that it does not take the run's time
    once = {}
    for name, call in contestants.items():
        start = clock()
        call()
        once[name] = max(clock() - start, 1e-7)
    inner = {name: max(1, min(w.inner, int(w.inner * 4 * once["hand"] / t)))
             for name, t in once.items()}
    faults = {}
    samples = interleaved(contestants, repeats, inner, faults=faults)
    if not _unchanged(args, copies):
        raise AssertionError(f"{w.name}: a contestant changed the arguments")
    row["faults"] = faults
    hand = samples["hand"]

    def paired_ratio(name, base=hand):
        # each repetition timed the contestants back to back: the median of the
        # per-repetition ratios cancels slow drifts in machine load
        return statistics.median(s / h for s, h in zip(samples[name], base))

    row["srcgrad_ms"] = statistics.median(samples["srcgrad"]) * 1e3
    row["hand_ms"] = statistics.median(hand) * 1e3
    row["function_ms"] = statistics.median(samples["function"]) * 1e3
    row["ratio"] = paired_ratio("srcgrad")
    row["grad_over_f"] = paired_ratio("srcgrad", samples["function"])
    if "naive" in samples:
        row["naive_ms"] = statistics.median(samples["naive"]) * 1e3
        row["naive_ratio"] = paired_ratio("naive")
    row["repeats"] = f"{repeats}x{w.inner}"
    for tool in tools:
        if tool in samples:
            row["others"][tool]["ms"] = statistics.median(samples[tool]) * 1e3
            row["others"][tool]["ratio"] = paired_ratio(tool)
    return row


# --- gradient time / function time over sizes -------------------------------------------


def _scaling_reference(name, X, w):
    """The gradient of a scaling loop, vectorised by hand (the correctness check)."""
    if name == "conv_loop":
        k, n = w.shape[0], X.shape[0]
        windows = np.lib.stride_tricks.sliding_window_view(X, k)[:n - k]
        c = 1.0 - np.tanh(windows @ w) ** 2
        dx = np.zeros(n)
        for j in range(k):
            dx[j:j + n - k] += c * w[j]
        return dx, windows.T @ c
    c = 1.0 - np.tanh(X @ w) ** 2
    return np.outer(c, w), X.T @ c


def run_scaling(s, scale):
    """Gradient time / function time of one scaling loop at each of its sizes."""
    rows = []
    g = srcgrad.grad(s.fn, wrt=s.wrt)
    rng = np.random.default_rng(0)
    for n in s.sizes:
        args = s.make_args(rng, n)
        row = {"name": s.name, "n": n, "target": s.target, "ok": False}
        rows.append(row)
        start = clock()
        try:
            got = g(*args)
        except Exception as exc:  # noqa: BLE001 - report it and go on
            print(f"  {s.name} n={n}: srcgrad failed: {type(exc).__name__}: {exc}")
            row["status"] = f"ERROR ({type(exc).__name__})"
            continue
        first = clock() - start
        if not _close(got, _scaling_reference(s.name, *args), 1e-9, 1e-12):
            print(f"  {s.name} n={n}: srcgrad's gradient is wrong; not timed")
            row["status"] = "WRONG GRADIENT"
            continue
        row["ok"] = True
        start = clock()
        s.fn(*args)
        f_first = clock() - start
        # about 20 ms a sample; the slowest gradients (seconds) fewer times
        inner = {"srcgrad": max(1, int(0.02 / max(first, 1e-6))),
                 "function": max(1, int(0.02 / max(f_first, 1e-6)))}
        repeats = 1 if first * scale > 5 else 3 if first > 0.5 or scale < 1 else 5
        contestants = {"srcgrad": lambda a=args: g(*a), "function": lambda a=args: s.fn(*a)}
        samples = interleaved(contestants, repeats, inner, warmup=0 if first > 0.5 else 1)
        row["grad_ms"] = statistics.median(samples["srcgrad"]) * 1e3
        row["function_ms"] = statistics.median(samples["function"]) * 1e3
        row["ratio"] = statistics.median(a / b for a, b in zip(samples["srcgrad"],
                                                                samples["function"]))
    return rows


# --- peak memory of a checkpointed loop -----------------------------------------------


def revolve_memory(steps=(64, 1024)):
    """Peak bytes (tracemalloc) of a revolve-8 gradient of a 64-wide RNN at each T,
    measured as tests/memory/test_lazy_schedules.py does: after one untraced call."""
    import tracemalloc  # noqa: PLC0415 - only here

    g = srcgrad.grad(workloads.revolve_rnn, policy=("revolve", 8))
    rng = np.random.default_rng(0)
    W = rng.standard_normal((64, 64)) * 0.1
    peaks = {}
    for T in sorted(steps, reverse=True):
        xs = rng.standard_normal((T, 64))
        # compiled, and the interpreter's free lists filled: no gc.collect() here, a
        # full collection empties the free lists (of tuples, floats, lists) and the
        # traced call would then count their refill, ~90 KiB at T=1024 (bounded: the
        # same at T=4096), as if it were the gradient's memory
        g(W, xs)
        tracemalloc.start()
        try:
            base = tracemalloc.get_traced_memory()[0]
            g(W, xs)
            peaks[T] = tracemalloc.get_traced_memory()[1] - base
        finally:
            tracemalloc.stop()
    return {T: peaks[T] for T in sorted(peaks)}


# --- backend="numba" (issue 19) -----------------------------------------------------

NUMBA_TARGET = 0.1             # issue 19: the scalar loop's gradient / the careful hand one

_NUMBA_PROCESS = """
import sys, time
sys.path[:0] = {paths!r}
start = time.perf_counter()
import srcgrad, workloads
g = srcgrad.grad(workloads.scalar_loop, wrt=(0, 1), backend="numba")
g(0.3, 0.7)
print(time.perf_counter() - start)
"""


def numba_backend(scale):
    """The scalar loop's gradient with ``backend="numba"`` against the careful hand
    gradient, and the first call's time in a fresh process, twice with one cache
    directory: the first compiles, the second should find numba's disk cache."""
    try:
        import numba  # noqa: F401, PLC0415 - optional
    except ImportError:
        return {"status": "numba not installed"}
    g = srcgrad.grad(workloads.scalar_loop, wrt=(0, 1), backend="numba")
    args = workloads.scalar_args(np.random.default_rng(3))
    got, want = g(*args), workloads.scalar_hand(*args)
    if not _close(got, want, 1e-12, 1e-14):
        return {"status": "numba gradient differs from the hand gradient"}
    samples = interleaved({"numba": lambda: g(*args),
                           "careful": lambda: workloads.scalar_hand(*args)},
                          max(5, int(41 * scale)), 20)
    ratios = [a / b for a, b in zip(samples["numba"], samples["careful"])]
    row = {"numba_ms": statistics.median(samples["numba"]) * 1e3,
           "hand_ms": statistics.median(samples["careful"]) * 1e3,
           "ratio": statistics.median(ratios),
           "compiled": "@numba.njit" in g.source}
    code = _NUMBA_PROCESS.format(paths=[str(HERE), str(HERE.parent)])
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "SRCGRAD_CACHE_DIR": cache}
        firsts = []
        for _ in range(2):
            done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                                  text=True, timeout=600)
            if done.returncode:
                return {**row, "status": "a fresh process failed: " + done.stderr[-200:]}
            firsts.append(float(done.stdout.split()[-1]) * 1e3)
    row["first_ms"], row["second_process_ms"] = firsts
    return row


NUMBA_FUSED_TARGET = 0.5       # issue 19: the 30-op chain's gradient / the careful hand one

_NUMBA_FUSED_PROCESS = """
import sys, time
sys.path[:0] = {paths!r}
import numpy as np
start = time.perf_counter()
import srcgrad, workloads
g = srcgrad.grad(workloads.elementwise_loss, backend="numba")
g(workloads.elementwise_args(np.random.default_rng(3))[0])
elapsed = time.perf_counter() - start
names = g._shown.functions[0].__globals__
hits = sum(sum(v.stats.cache_hits.values()) for k, v in names.items() if k.startswith("fused_"))
print(hits, elapsed)
"""


def numba_elementwise(scale):
    """The 30-op elementwise chain's gradient with ``backend="numba"`` (its
    elementwise runs fused into numba kernels) against the careful hand
    gradient (single-threaded NumPy), the kernels on one thread and on two
    (``numba.set_num_threads``; at 1e6 elements the kernels' threaded twins
    run), timed in wall-clock time whatever ``--clock`` says (process CPU time
    adds up the threads); and the first call in fresh processes sharing a
    cache: the second should load every kernel from numba's disk cache, and one
    more with ``NUMBA_NUM_THREADS=1`` (its own cache) compiles the serial
    kernels instead of the twins."""
    global clock
    try:
        import numba  # noqa: PLC0415 - optional
    except ImportError:
        return {"status": "numba not installed"}
    g = srcgrad.grad(workloads.elementwise_loss, backend="numba")
    args = workloads.elementwise_args(np.random.default_rng(3))
    got, want = g(*args), workloads.elementwise_hand(*args)
    if not _close((got,), want, 1e-9, 1e-12):
        return {"status": "numba gradient differs from the hand gradient"}
    numpy_g = srcgrad.grad(workloads.elementwise_loss)
    if not np.array_equal(got, numpy_g(*args)):
        return {"status": "numba gradient differs from the NumPy backend's bits"}
    pool, before = numba.config.NUMBA_NUM_THREADS, numba.get_num_threads()

    def on(threads):
        def call():
            numba.set_num_threads(min(threads, pool))
            return g(*args)
        return call
    if not np.array_equal(on(2)(), got):
        return {"status": "the threaded kernels' gradient differs from the serial ones'"}
    saved, clock = clock, CLOCKS["wall"]
    try:
        samples = interleaved({"numba": on(1), "numba2": on(2), "numpy": lambda: numpy_g(*args),
                               "careful": lambda: workloads.elementwise_hand(*args)},
                              max(3, int(11 * scale)), 1)
    finally:
        clock = saved
        numba.set_num_threads(before)

    def ratio(name):
        return statistics.median(a / b for a, b in zip(samples[name], samples["careful"]))
    row = {"numba_ms": statistics.median(samples["numba"]) * 1e3,
           "numba2_ms": statistics.median(samples["numba2"]) * 1e3,
           "numpy_ms": statistics.median(samples["numpy"]) * 1e3,
           "hand_ms": statistics.median(samples["careful"]) * 1e3,
           "ratio": ratio("numba"), "ratio2": ratio("numba2"), "threads": min(2, pool),
           "kernels": g.source.count("\ndef fused_")}
    code = _NUMBA_FUSED_PROCESS.format(paths=[str(HERE), str(HERE.parent)])
    runs = []
    with tempfile.TemporaryDirectory() as shared, tempfile.TemporaryDirectory() as alone:
        # twice with one cache (the second loads the kernels), then serial kernels alone
        for cache, threads in ((shared, None), (shared, None), (alone, "1")):
            env = {**os.environ, "SRCGRAD_CACHE_DIR": cache}
            if threads:
                env["NUMBA_NUM_THREADS"] = threads
            done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                                  text=True, timeout=600, check=False)
            if done.returncode:
                return {**row, "status": "a fresh process failed: " + done.stderr[-200:]}
            hits, seconds = done.stdout.split()[-2:]
            runs.append((int(hits), float(seconds) * 1e3))
    (_, row["first_ms"]), (row["second_hits"], row["second_process_ms"]), \
        (_, row["first_serial_ms"]) = runs
    return row


def numba_table(row, fused=None) -> str:
    """The numba rows as Markdown."""
    lines = ["| backend=\"numba\" | numba ms | careful ms | ratio | target | met | "
             "first call, fresh process ms | same, second process ms |",
             "|---|---:|---:|---:|---:|---|---:|---:|"]
    if "ratio" not in row:
        lines.append(f"| scalar_loop | - | - | {row['status']} | <= {NUMBA_TARGET} | no | - | - |")
    else:
        lines.append(f"| scalar_loop | {_fmt_ms(row['numba_ms'])} | {_fmt_ms(row['hand_ms'])} "
                     f"| {row['ratio']:.2f} | <= {NUMBA_TARGET} | "
                     f"{_met(row['ratio'], NUMBA_TARGET)} | "
                     f"{row.get('first_ms', float('nan')):.0f} | "
                     f"{row.get('second_process_ms', float('nan')):.0f} |")
    fused = fused or {"status": "not run"}
    if "ratio" not in fused:
        lines.append(f"| elementwise | - | - | {fused['status']} | <= {NUMBA_FUSED_TARGET} "
                     f"| no | - | - |")
    else:
        lines.append(f"| elementwise, 1 thread ({fused['kernels']} fused kernels; NumPy "
                     f"backend {_fmt_ms(fused['numpy_ms'])} ms; wall clock) "
                     f"| {_fmt_ms(fused['numba_ms'])} "
                     f"| {_fmt_ms(fused['hand_ms'])} | {fused['ratio']:.2f} "
                     f"| <= {NUMBA_FUSED_TARGET} | {_met(fused['ratio'], NUMBA_FUSED_TARGET)} "
                     f"| {fused.get('first_serial_ms', float('nan')):.0f} "
                     f"(NUMBA_NUM_THREADS=1: serial kernels) | - |")
        lines.append(f"| elementwise, {fused['threads']} threads (the kernels' parallel twins; "
                     f"the careful gradient is single-threaded NumPy) "
                     f"| {_fmt_ms(fused['numba2_ms'])} "
                     f"| {_fmt_ms(fused['hand_ms'])} | {fused['ratio2']:.2f} "
                     f"| <= {NUMBA_FUSED_TARGET} | {_met(fused['ratio2'], NUMBA_FUSED_TARGET)} "
                     f"| {fused.get('first_ms', float('nan')):.0f} (parallel=True) "
                     f"| {fused.get('second_process_ms', float('nan')):.0f} "
                     f"({fused.get('second_hits', 0)} kernels from numba's disk cache) |")
        if "status" in fused:
            lines.append(f"| elementwise, first calls | - | - | {fused['status']} | | | - | - |")
    return "\n".join(lines) + "\n"


# --- compile time and wrapper overhead ---------------------------------------------------


def compile_times(sizes_and_repeats):
    """Median milliseconds of the first ``grad(f)(x, y)`` call per function size."""
    x = np.linspace(0.1, 0.9, 4)
    y = np.linspace(-0.5, 0.5, 4)
    saved = {k: os.environ.get(k) for k in ("SRCGRAD_CACHE", "SRCGRAD_CACHE_DIR")}
    rows = []
    with tempfile.TemporaryDirectory(prefix="srcgrad-bench-") as tmp:
        os.environ.pop("SRCGRAD_CACHE", None)
        os.environ["SRCGRAD_CACHE_DIR"] = str(Path(tmp) / "cache")  # fresh: nothing cached
        try:
            # warm-up: import every lazily imported part of srcgrad once
            srcgrad.grad(generate.write_module(tmp, 5, "warm"), wrt=(0, 1))(x, y)
            for n, repeats in sizes_and_repeats:
                times = []
                for r in range(repeats):
                    f = generate.write_module(tmp, n, f"r{r}")
                    gc.collect()
                    start = clock()
                    g = srcgrad.grad(f, wrt=(0, 1))
                    g(x, y)
                    times.append(clock() - start)
                rows.append({"lines": n, "ms": statistics.median(times) * 1e3,
                             "generated_lines": len(g.source.splitlines()),
                             "repeats": repeats})
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
    return rows


def wrapper_overhead(number, repeats=9):
    """Microseconds a cached ``grad`` call adds to a direct call of the generated code."""
    rows = []
    for label, value in (("Python float", 1.5), ("0-d ndarray", np.array(1.5))):
        g = srcgrad.grad(workloads.trivial)
        g(value)  # compile
        direct = g._get().functions[0]
        samples = {"wrapped": [], "direct": []}
        gc.collect()
        gc.disable()
        try:
            for _ in range(repeats):
                for name, fn in (("wrapped", g), ("direct", direct)):
                    start = clock()
                    for _ in range(number):
                        fn(value)
                    samples[name].append((clock() - start) / number)
        finally:
            gc.enable()
        wrapped, plain = min(samples["wrapped"]), min(samples["direct"])
        rows.append({"arg": label, "wrapped_us": wrapped * 1e6, "direct_us": plain * 1e6,
                     "overhead_us": (wrapped - plain) * 1e6})
    return rows


IMPORTS = {  # label -> the statement timed
    "import srcgrad": "import srcgrad",
    "import numpy": "import numpy",
    "import gast": "import gast",
    "first srcgrad.grad": "import srcgrad; srcgrad.grad",
}


def import_times(repeat=5):
    """Median milliseconds of each statement of ``IMPORTS``, each run in a fresh
    interpreter, on this benchmark's clock (``--clock``)."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(HERE.parent), os.environ.get("PYTHONPATH", "")]))
    now = f"time.{clock.__name__}()"
    found = {}
    for label, statement in IMPORTS.items():
        code = f"import time\nstart = {now}\n{statement}\nprint({now} - start)"
        times = []
        for _ in range(repeat):
            done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                  env=env, check=True)
            times.append(float(done.stdout))
        found[label] = statistics.median(times) * 1e3
    return found


# --- reporting ----------------------------------------------------------------------------


def _commit():
    """' (commit abc1234)' of the checkout measured, '+ changes' if srcgrad/ has
    uncommitted ones (other work in the same tree), or '' outside a git checkout."""
    try:
        def git(*args):
            return subprocess.run(["git", *args], cwd=HERE.parent, capture_output=True,
                                  text=True, timeout=10, check=True).stdout.strip()
        head = git("rev-parse", "--short", "HEAD")
        dirty = git("status", "--porcelain", "--", "srcgrad")
    except (OSError, subprocess.SubprocessError):
        return ""
    return f" (commit {head}{' + uncommitted changes in srcgrad/' if dirty else ''})"


def _busy():
    """A warning when other work already kept half the CPUs busy at the start."""
    load = os.getloadavg()[0]
    if load > 0.5 * (os.cpu_count() or 1):
        return (f" (busy: other work was running on this {os.cpu_count()}-CPU machine; "
                "CPU-time ratios hold up better than the milliseconds, but the numbers "
                "are indicative -- rerun on a quiet machine)")
    return ""


def machine():
    cpu = platform.processor() or "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    blas = "unknown BLAS"
    try:
        info = np.__config__.CONFIG["Build Dependencies"]["blas"]
        blas = f"{info['name']} {info.get('version', '')}".strip()
    except Exception:  # noqa: BLE001 - older NumPy has no CONFIG
        pass
    return {
        "cpu": f"{cpu} ({os.cpu_count()} logical CPUs; benchmarks run on 1 thread)",
        "platform": platform.platform(),
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "numpy": f"{np.__version__} ({blas})",
        "srcgrad": f"{srcgrad.__version__}{_commit()}",
        "load": "load average {:.2f} {:.2f} {:.2f} when the run started".format(
            *os.getloadavg()) + _busy(),
    }


def _fmt_ms(ms):
    return f"{ms:.3f}" if ms < 1 else f"{ms:.2f}" if ms < 100 else f"{ms:.1f}"


def _met(value, target):
    """'yes', or 'no' with how far over the target the value is."""
    return "yes" if value <= target else f"no ({value / target:.2f}x the target)"


def tables(rows, compile_rows, overhead_rows, tools, import_rows=None, scaling_rows=None,
           memory=None):
    """The report as Markdown tables (also printed: they read fine as text)."""
    out = []
    if rows:
        head = ["workload", "srcgrad ms", "careful ms", "ratio", "target", "met",
                "grad/f", "naive/careful"]
        for t in tools:
            head += ["jax.jit ratio", "jax compile ms"] if t == "jax" else [f"{t} ratio"]
        if "torch" not in tools:
            head.append("torch")
        out.append("| " + " | ".join(head) + " |")
        out.append("|" + "|".join(["---"] + ["---:"] * 4 + ["---"]
                                  + ["---:"] * (len(head) - 6)) + "|")
    for r in rows:
        target = f"<= {r['target']}" + (f" (issue {r['issue']})" if r["issue"] != 16 else "")
        if "ratio" not in r:
            cells = [r["name"], "-", "-", r["status"], target, "no", "-", "-"]
            cells += ["-"] * (len(head) - len(cells))
        else:
            cells = [r["name"], _fmt_ms(r["srcgrad_ms"]), _fmt_ms(r["hand_ms"]),
                     f"{r['ratio']:.2f}", target, _met(r["ratio"], r["target"]),
                     f"{r['grad_over_f']:.2f}",
                     f"{r['naive_ratio']:.2f}" if "naive_ratio" in r else "-"]
            for t in tools:
                o = r["others"].get(t, {})
                cells.append(f"{o['ratio']:.2f}" if "ratio" in o else o.get("error", "-"))
                if t == "jax":
                    cells.append(f"{o['first_ms']:.0f}" if "first_ms" in o else "-")
            if "torch" not in tools:
                cells.append("not installed")
        out.append("| " + " | ".join(cells) + " |")
    if rows:
        out.append("")
    if scaling_rows:
        out.append("| loop (gradient / function time) | n | grad ms | function ms | grad/f "
                   "| target | met |")
        out.append("|---|---:|---:|---:|---:|---:|---|")
        for name in dict.fromkeys(r["name"] for r in scaling_rows):
            mine = [r for r in scaling_rows if r["name"] == name]
            for r in mine:
                if "ratio" not in r:
                    out.append(f"| {name} | {r['n']} | - | - | {r['status']} "
                               f"| <= {r['target']:g} | no |")
                    continue
                out.append(f"| {name} | {r['n']} | {_fmt_ms(r['grad_ms'])} | "
                           f"{_fmt_ms(r['function_ms'])} | {r['ratio']:.2f} | "
                           f"<= {r['target']:g} | {_met(r['ratio'], r['target'])} |")
            timed = [r for r in mine if "ratio" in r]
            if len(timed) >= 2:
                growth = timed[-1]["ratio"] / timed[0]["ratio"]
                out.append(f"| {name}: flat? | {timed[0]['n']}->{timed[-1]['n']} | | | "
                           f"x{growth:.2f} | <= x{FLAT_TARGET:g} | {_met(growth, FLAT_TARGET)} |")
        out.append("")
    if memory:
        (t0, p0), (t1, p1) = min(memory.items()), max(memory.items())
        out.append(f"| revolve-8 RNN gradient, peak memory | T={t0} KiB | T={t1} KiB | growth "
                   "| target | met |")
        out.append("|---|---:|---:|---:|---:|---|")
        growth = p1 / p0
        out.append(f"| 64-wide tanh RNN, tracemalloc | {p0 / 1024:.0f} | {p1 / 1024:.0f} | "
                   f"x{growth:.2f} | <= x{MEMORY_TARGET:g} | {_met(growth, MEMORY_TARGET)} |")
        out.append("")
    if compile_rows:
        out.append("| compile (first grad call) | ms | generated lines | target | met |")
        out.append("|---|---:|---:|---:|---|")
        for c in compile_rows:
            limit = COMPILE_TARGETS_MS.get(c["lines"])
            target = f"< {limit:.0f} ms" if limit else ""
            met = _met(c["ms"], limit) if limit else ""
            out.append(f"| {c['lines']}-line function | {_fmt_ms(c['ms'])} | "
                       f"{c['generated_lines']} | {target} | {met} |")
        out.append("")
    if overhead_rows:
        out.append("| cached call of grad(trivial) | wrapped us | direct us | overhead us "
                   "| target | met |")
        out.append("|---|---:|---:|---:|---:|---|")
        for o in overhead_rows:
            met = "yes" if o["overhead_us"] < OVERHEAD_TARGET_US else "no"
            out.append(f"| {o['arg']} | {o['wrapped_us']:.2f} | {o['direct_us']:.2f} | "
                       f"{o['overhead_us']:.2f} | < {OVERHEAD_TARGET_US:.0f} us | {met} |")
        out.append("")
    if import_rows:
        out.append("| import, in a fresh interpreter | ms | target | met |")
        out.append("|---|---:|---:|---|")
        for label, ms in import_rows.items():
            target, met = "", ""
            if label == "import srcgrad":
                target = f"< {IMPORT_TARGET_MS:.0f} ms"
                met = "yes" if ms < IMPORT_TARGET_MS else "no"
            out.append(f"| `{IMPORTS[label]}` | {_fmt_ms(ms)} | {target} | {met} |")
        out.append("")
    return "\n".join(out)


def write_results(path, text, rows, info, tools, elapsed, clock_name, scaling_rows=()):
    lines = [
        "# srcgrad benchmark results",
        "",
        f"Written by `benchmarks/run.py` (`make bench`) on "
        f"{datetime.datetime.now().strftime('%Y-%m-%d %H:%M')}, in {elapsed:.0f} s.",
        "",
        "Machine:",
        "",
    ]
    lines += [f"- {k}: {v}" for k, v in info.items()]
    lines += [
        "",
        f"Median {'CPU' if clock_name == 'cpu' else 'wall-clock'} time per gradient call, "
        "one thread (BLAS and XLA); ratio = srcgrad / the careful hand-written NumPy "
        "gradient (median over interleaved repetitions of the ratio of back-to-back "
        "timings); the other tools' ratios are to the same careful gradient. "
        "`grad/f` = srcgrad's gradient time / the function's own time; "
        "`naive/careful` = the textbook hand gradient the suite used before issue 16. "
        "jax.jit is timed after compiling (its first call, the compile column). "
        "Targets are those of issue 16 unless the issue is named.",
        "Other tools compared: " + (", ".join(tools) if tools else
                                    "none (autograd, jax and torch are not installed)")
        + ("" if "torch" in tools else f"; torch {TORCH_NOTE}") + ".",
        "",
        text,
        "Workloads:",
        "",
    ]
    for r in rows:
        extra = f"; {r['repeats']} timed calls" if "repeats" in r else ""
        lines.append(f"- `{r['name']}`: {r['description']}{extra}.")
    for s in workloads.SCALING:
        if any(r["name"] == s.name for r in scaling_rows):
            lines.append(f"- `{s.name}` (scaling): {s.description}; gradient with respect "
                         "to both arguments.")
    lines.append("")
    Path(path).write_text("\n".join(lines), encoding="utf-8")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="fewer repetitions (a smoke test; writes no results.md)")
    parser.add_argument("--only", help="comma-separated workload or scaling-loop names "
                        "(skips the other sections and results.md)")
    parser.add_argument("--show-source", action="store_true", help="print the generated code")
    parser.add_argument("--no-compile", action="store_true",
                        help="skip the compile-time, overhead and import-time benchmarks")
    parser.add_argument("--no-scaling", action="store_true",
                        help="skip the gradient/function scaling and memory sections")
    parser.add_argument("--clock", choices=sorted(CLOCKS), default="cpu",
                        help="process CPU time (default; robust to other load) or wall time")
    parser.add_argument("--results", default=str(HERE / "results.md"),
                        help="where to write the Markdown results ('' for nowhere)")
    parser.add_argument("--load-note", default="",
                        help="said after the load average in results.md (e.g. what else ran)")
    opts = parser.parse_args(argv)

    global clock
    clock = CLOCKS[opts.clock]
    started = time.perf_counter()

    def say(what):
        print(f"running {what} ... ({time.perf_counter() - started:.0f} s)", flush=True)

    scale = 0.25 if opts.quick else 1.0
    chosen = workloads.WORKLOADS
    scaling = [] if opts.no_scaling else workloads.SCALING
    if opts.only:
        names = set(opts.only.split(","))
        unknown = names - {w.name for w in chosen} - {s.name for s in workloads.SCALING} \
            - {"numba"}  # --only numba: the backend="numba" rows alone
        if unknown:
            parser.error(f"unknown workloads: {', '.join(sorted(unknown))}")
        chosen = [w for w in chosen if w.name in names]
        scaling = [s for s in workloads.SCALING if s.name in names]
    tools = available_tools()
    info = machine()
    if opts.load_note:
        info["load"] += f"; {opts.load_note}"
    for k, v in info.items():
        print(f"{k:9s}{v}")
    print(f"clock    {opts.clock} (see --clock)")
    print("other tools: " + (", ".join(tools) if tools else "none importable "
                             "(autograd, jax, torch are optional)")
          + ("" if "torch" in tools else f"; torch {TORCH_NOTE}"))
    print()

    rows = []
    for w in chosen:
        say(w.name)
        rows.append(run_workload(w, scale, tools, opts.show_source))
    scaling_rows = []
    for s in scaling:
        say(f"scaling loop {s.name}")
        scaling_rows += run_scaling(s, scale)
    memory = {}
    if not opts.no_scaling and not opts.only:
        say("revolve memory benchmark")
        memory = revolve_memory()
    compile_rows, overhead_rows, import_rows = [], [], {}
    if not opts.no_compile and not opts.only:
        say("import-time benchmark")
        import_rows = import_times(3 if opts.quick else 5)
        say("compile-time benchmark")
        compile_rows = compile_times([(10, 9), (100, 5), (1000, 1 if opts.quick else 3)])
        say("wrapper-overhead benchmark")
        overhead_rows = wrapper_overhead(2_000 if opts.quick else 20_000)

    text = tables(rows, compile_rows, overhead_rows, tools, import_rows, scaling_rows, memory)
    if not opts.only or "numba" in opts.only.split(","):
        say("numba backend benchmark")
        text += "\n" + numba_table(numba_backend(scale), numba_elementwise(scale))
    print()
    print(text)
    for r in rows:
        if r.get("faults"):
            print(f"{r['name']}: minor page faults per call: " + ", ".join(
                f"{k} {v:.0f}" for k, v in r["faults"].items()))
        if "naive_ms" in r:
            print(f"{r['name']}: careful hand {_fmt_ms(r['hand_ms'])} ms, naive hand "
                  f"{_fmt_ms(r['naive_ms'])} ms, function {_fmt_ms(r['function_ms'])} ms")
        for tool, o in r["others"].items():
            if "ms" in o:
                print(f"{r['name']}: {tool} {_fmt_ms(o['ms'])} ms per call after a first "
                      f"call (jax: the compile) of {o['first_ms']:.0f} ms")
    elapsed = time.perf_counter() - started
    print(f"total {elapsed:.0f} s")
    if opts.results and not opts.only and not opts.quick:
        write_results(opts.results, text, rows, info, tools, elapsed, opts.clock, scaling_rows)
        print(f"wrote {opts.results}")
    return 0 if all(r["ok"] for r in rows + scaling_rows) else 1


if __name__ == "__main__":
    sys.exit(main())
