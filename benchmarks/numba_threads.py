"""Where numba's threads start to pay for a fused kernel (backend="numba").

    python benchmarks/numba_threads.py            # sizes 2**10 .. 2**20
    python benchmarks/numba_threads.py --quick

Times two gradients whose elementwise runs are fused kernels
(srcgrad/backends/numba_fusion.py) at growing sizes, every kernel forced onto
its threaded twin (``numba_threads.THREADS_FROM = 1``), on one thread
(``numba.set_num_threads(1)``: the serial kernels) and on two: ``light``, a few
additions and multiplications (the least work per element, where threads pay
last) and the 30-op chain of ``make bench``.  Wall-clock time (process CPU time
adds up the threads), medians of interleaved repetitions; the ratio is the
median of per-repetition ratios, two threads over one.  ``THREADS_FROM`` is
chosen from these figures: the smallest size where ``light`` gains on a
loaded machine.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]

import numba  # noqa: E402
import numpy as np  # noqa: E402

import srcgrad  # noqa: E402
import workloads  # noqa: E402
from srcgrad.backends import numba_threads  # noqa: E402


def light(x):
    """Arithmetic only: two kernels of a few operations each."""
    y = x * x + 1.0
    z = y * x - 0.5
    return np.sum(z * z + y)


def per_call(call, inner):
    start = time.perf_counter()
    for _ in range(inner):
        call()
    return (time.perf_counter() - start) / inner


def compare(g, x, repeats):
    """Median seconds per call on one thread and on two, and the median ratio."""
    def on(threads):
        def call():
            numba.set_num_threads(threads)
            return g(x)
        return call
    one, two = on(1), on(2)
    assert np.array_equal(one(), two())
    inner = max(1, int(0.02 / max(per_call(one, 1), 1e-7)))
    times = {1: [], 2: []}
    for r in range(repeats):
        for threads, call in ((1, one), (2, two)) if r % 2 else ((2, two), (1, one)):
            times[threads].append(per_call(call, inner))
    ratio = statistics.median(b / a for a, b in zip(times[1], times[2]))
    return statistics.median(times[1]), statistics.median(times[2]), ratio


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true")
    opts = parser.parse_args(argv)
    if numba.config.NUMBA_NUM_THREADS < 2:
        sys.exit("numba's pool has one thread (NUMBA_NUM_THREADS): nothing to compare")
    numba_threads.THREADS_FROM = 1
    before = numba.get_num_threads()
    repeats = 5 if opts.quick else 15
    print("| elements | gradient | 1 thread | 2 threads | 2 / 1 |")
    print("|---:|---|---:|---:|---:|")
    try:
        for f in (light, workloads.elementwise_loss):
            g = srcgrad.grad(f, backend="numba")
            for power in range(10, 21, 2):
                x = np.random.default_rng(power).uniform(-1.0, 1.0, 2 ** power)
                one, two, ratio = compare(g, x, repeats)
                print(f"| 2**{power} | {f.__name__} | {one * 1e6:.0f} us | {two * 1e6:.0f} us "
                      f"| {ratio:.2f} |", flush=True)
    finally:
        numba.set_num_threads(before)


if __name__ == "__main__":
    main()
