"""srcgrad benchmark suite (issue 7): generated gradients against hand-written NumPy.

    python benchmarks/run.py                 # everything; writes benchmarks/results.md
    python benchmarks/run.py --quick         # fewer repetitions (a smoke test)
    python benchmarks/run.py --only mlp,rnn  # some workloads (no results.md)
    python benchmarks/run.py --show-source   # also print the generated code

For each workload in ``workloads.py`` the srcgrad gradient is first checked
against the hand-written one (``np.allclose``), then both are timed on one
thread: a warm-up, then repetitions interleaved srcgrad, hand, hand, srcgrad,
... (and autograd / jax / torch, when importable, in the same rotation), each
repetition timing ``inner`` calls.  The table gives the median time per call
and the ratio srcgrad / hand-written (the median over repetitions of the ratio
of the two back-to-back timings, which cancels slow drifts in machine load),
next to issue 7's target.

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

COMPILE_TARGET_MS = 100.0      # issue 7: first grad of a 100-line function
OVERHEAD_TARGET_US = 2.0       # issue 7: what a cached call adds
IMPORT_TARGET_MS = 100.0       # issue 17: import srcgrad


# --- timing ---------------------------------------------------------------------------


# The clock of the timings.  By default the CPU time of this process (user +
# system, all its threads): on a shared machine, time spent waiting for a CPU
# would otherwise land on whichever measurement happened to be running, and
# more often on long ones than on short ones.  With one BLAS thread it equals
# the wall-clock time on an idle machine.  ``--clock wall`` uses perf_counter.
CLOCKS = {"cpu": time.process_time, "wall": time.perf_counter}
clock = CLOCKS["cpu"]


def _time_calls(call, inner):
    """Seconds per call of ``call`` over ``inner`` calls."""
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
    """
    for call in contestants.values():
        for _ in range(warmup):
            _time_calls(call, inner)
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
                samples[name].append(_time_calls(call, inner))
                counts[name] += _minor_faults() - before
            gc.collect()
    finally:
        if enabled:
            gc.enable()
    if faults is not None:
        faults.update({name: n / (repeats * inner) for name, n in counts.items()})
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


def run_workload(w, scale, tools, show_source):
    rng = np.random.default_rng(0)
    args = w.make_args(rng)
    want = w.hand(*args)
    row = {"name": w.name, "description": w.description, "target": w.target,
           "ok": False, "status": "WRONG GRADIENT", "others": {}}
    g = srcgrad.grad(w.fn, wrt=w.wrt)
    try:
        start = time.perf_counter()
        got = g(*args)
        row["first_ms"] = (time.perf_counter() - start) * 1e3
    except Exception as exc:  # noqa: BLE001 - report it and go on with the others
        print(f"  {w.name}: srcgrad failed: {type(exc).__name__}: {exc}")
        row["status"] = f"ERROR ({type(exc).__name__})"
        return row
    row["ok"] = _close(got, want, w.rtol, w.atol)
    if show_source:
        print(f"\n# ---- generated code for {w.name} ----")
        print(g.source)
    if not row["ok"]:
        print(f"  {w.name}: srcgrad's gradient differs from the hand-written one; not timed")
        return row

    contestants = {"srcgrad": lambda: g(*args), "hand": lambda: w.hand(*args)}
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
    faults = {}
    samples = interleaved(contestants, repeats, w.inner, faults=faults)
    row["faults"] = faults
    hand = samples["hand"]

    def paired_ratio(name):
        # each repetition timed the contestants back to back: the median of the
        # per-repetition ratios cancels slow drifts in machine load
        return statistics.median(s / h for s, h in zip(samples[name], hand))

    row["srcgrad_ms"] = statistics.median(samples["srcgrad"]) * 1e3
    row["hand_ms"] = statistics.median(hand) * 1e3
    row["ratio"] = paired_ratio("srcgrad")
    row["repeats"] = f"{repeats}x{w.inner}"
    for tool in tools:
        if tool in samples:
            row["others"][tool]["ms"] = statistics.median(samples[tool]) * 1e3
            row["others"][tool]["ratio"] = paired_ratio(tool)
    return row


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
        "srcgrad": srcgrad.__version__,
        "load": "load average {:.2f} {:.2f} {:.2f} when the run started".format(
            *os.getloadavg()),
    }


def _fmt_ms(ms):
    return f"{ms:.3f}" if ms < 1 else f"{ms:.2f}" if ms < 100 else f"{ms:.1f}"


def tables(rows, compile_rows, overhead_rows, tools, import_rows=None):
    """The report as Markdown tables (also printed: they read fine as text)."""
    out = []
    head = ["workload", "srcgrad ms", "hand ms", "ratio", "target", "met"]
    head += [f"{t} ratio" for t in tools]
    out.append("| " + " | ".join(head) + " |")
    out.append("|" + "|".join(["---"] + ["---:"] * 4 + ["---"] + ["---:"] * len(tools)) + "|")
    for r in rows:
        if "ratio" not in r:
            cells = [r["name"], "-", "-", r["status"], f"<= {r['target']}", "no"]
            cells += ["-" for _ in tools]
        else:
            met = "yes" if r["ratio"] <= r["target"] else "no"
            cells = [r["name"], _fmt_ms(r["srcgrad_ms"]), _fmt_ms(r["hand_ms"]),
                     f"{r['ratio']:.2f}", f"<= {r['target']}", met]
            for t in tools:
                o = r["others"].get(t, {})
                cells.append(f"{o['ratio']:.2f}" if "ratio" in o else o.get("error", "-"))
        out.append("| " + " | ".join(cells) + " |")
    out.append("")
    if compile_rows:
        out.append("| compile (first grad call) | ms | generated lines | target | met |")
        out.append("|---|---:|---:|---:|---|")
        for c in compile_rows:
            target = f"< {COMPILE_TARGET_MS:.0f} ms" if c["lines"] == 100 else ""
            met = ("yes" if c["ms"] < COMPILE_TARGET_MS else "no") if c["lines"] == 100 else ""
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


def write_results(path, text, rows, info, tools, elapsed, clock_name):
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
        "one thread; ratio = srcgrad / hand-written NumPy "
        "(median over interleaved repetitions of the ratio of back-to-back timings). "
        "Targets are those of issue 7.",
        "Other tools compared: " + (", ".join(tools) if tools else
                                    "none (autograd, jax and torch are not installed)") + ".",
        "",
        text,
        "Workloads:",
        "",
    ]
    for r in rows:
        extra = f"; {r['repeats']} timed calls" if "repeats" in r else ""
        lines.append(f"- `{r['name']}`: {r['description']}{extra}.")
    lines.append("")
    Path(path).write_text("\n".join(lines), encoding="utf-8")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    parser.add_argument("--only", help="comma-separated workload names (skips results.md)")
    parser.add_argument("--show-source", action="store_true", help="print the generated code")
    parser.add_argument("--no-compile", action="store_true",
                        help="skip the compile-time, overhead and import-time benchmarks")
    parser.add_argument("--clock", choices=sorted(CLOCKS), default="cpu",
                        help="process CPU time (default; robust to other load) or wall time")
    parser.add_argument("--results", default=str(HERE / "results.md"),
                        help="where to write the Markdown results ('' for nowhere)")
    opts = parser.parse_args(argv)

    global clock
    clock = CLOCKS[opts.clock]
    started = time.perf_counter()
    scale = 0.25 if opts.quick else 1.0
    chosen = workloads.WORKLOADS
    if opts.only:
        names = set(opts.only.split(","))
        unknown = names - {w.name for w in chosen}
        if unknown:
            parser.error(f"unknown workloads: {', '.join(sorted(unknown))}")
        chosen = [w for w in chosen if w.name in names]
    tools = available_tools()
    info = machine()
    for k, v in info.items():
        print(f"{k:9s}{v}")
    print(f"clock    {opts.clock} (see --clock)")
    print("other tools: " + (", ".join(tools) if tools else "none importable "
                             "(autograd, jax, torch are optional)"))
    print()

    rows = []
    for w in chosen:
        print(f"running {w.name} ...", flush=True)
        rows.append(run_workload(w, scale, tools, opts.show_source))
    compile_rows, overhead_rows, import_rows = [], [], {}
    if not opts.no_compile:
        print("running import-time benchmark ...", flush=True)
        import_rows = import_times(3 if opts.quick else 7)
        print("running compile-time benchmark ...", flush=True)
        compile_rows = compile_times([(10, 9), (100, 5), (1000, 1 if opts.quick else 3)])
        print("running wrapper-overhead benchmark ...", flush=True)
        overhead_rows = wrapper_overhead(2_000 if opts.quick else 20_000)

    text = tables(rows, compile_rows, overhead_rows, tools, import_rows)
    print()
    print(text)
    for r in rows:
        if r.get("faults"):
            print(f"{r['name']}: minor page faults per call: " + ", ".join(
                f"{k} {v:.0f}" for k, v in r["faults"].items()))
        for tool, o in r["others"].items():
            if "first_ms" in o:
                print(f"{r['name']}: first {tool} call (jax: compile) {o['first_ms']:.0f} ms")
    elapsed = time.perf_counter() - started
    print(f"total {elapsed:.0f} s")
    if opts.results and not opts.only and not opts.quick:
        write_results(opts.results, text, rows, info, tools, elapsed, opts.clock)
        print(f"wrote {opts.results}")
    return 0 if all(r["ok"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
