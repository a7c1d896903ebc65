"""Memory and time of the checkpointing policies on a loop model (issue 4).

An explicit ODE time-stepper (state of 1000 floats) runs for T steps; its
gradient is taken under each policy.  Reported: the peak memory traced while
computing the gradient (tracemalloc), the bytes the forward sweep saves
(``srcgrad.saved``), and time relative to ``"save"``.  ``"sqrt"`` keeps about
sqrt(T) states and reruns the loop once; ``("revolve", 8)`` keeps 8 states and
reruns more, by Griewank and Walther's formula.

    python benchmarks/policies.py [--steps 100,1000,10000]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import tracemalloc

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import numpy as np  # noqa: E402

import srcgrad  # noqa: E402
from srcgrad.runtime.schedules import revolve_cost  # noqa: E402

POLICIES = ["save", "recompute", "sqrt", ("revolve", 8)]


def ode(x, steps):
    for i in range(steps):
        x = x + 0.01 * (np.sin(x) - 0.1 * x)
    return np.sum(x ** 2)


def measure(policy, x, steps):
    g = srcgrad.grad(ode, policy=policy)
    g(x, steps)  # compile and warm up
    tracemalloc.start()
    g(x, steps)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    times = []
    for _ in range(3):
        start = time.perf_counter()
        g(x, steps)
        times.append(time.perf_counter() - start)
    saved = srcgrad.saved(ode, x, steps, policy=policy).total
    return peak, saved, sorted(times)[1]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", default="100,1000,10000")
    args = parser.parse_args(argv)
    x = np.linspace(0.0, 1.0, 1000)
    print(f"{'T':>6} {'policy':<14} {'peak MiB':>9} {'saved MiB':>10} {'time ms':>9} "
          f"{'time / save':>11}")
    for steps in (int(s) for s in args.steps.split(",")):
        base = None
        for policy in POLICIES:
            peak, saved, seconds = measure(policy, x, steps)
            base = base or seconds
            name = policy if isinstance(policy, str) else f"revolve {policy[1]}"
            print(f"{steps:>6} {name:<14} {peak / 2**20:>9.2f} {saved / 2**20:>10.2f} "
                  f"{seconds * 1e3:>9.1f} {seconds / base:>11.2f}")
        print(f"{'':>6} revolve 8 reruns {revolve_cost(steps, 8)} iterations "
              f"({revolve_cost(steps, 8) / steps:.1f} extra sweeps)")


if __name__ == "__main__":
    main()
