"""The adjoint of an ODE solver with binomial (revolve) checkpointing.

A damped pendulum integrated by explicit Euler for 2000 steps; the gradient of
a loss on the final state with respect to the initial state and the damping,
under three policies.  "save" tapes every step; ("revolve", 10) keeps 10
states and reruns steps in Griewank's optimal order; "sqrt" keeps about 45.
The gradients agree; the memory does not.

    python examples/ode_revolve.py
"""

import os
import sys
import time
import tracemalloc

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import srcgrad  # noqa: E402
from srcgrad.runtime.schedules import revolve_cost  # noqa: E402

STEPS = 2000


def pendulum(state, damping, steps):
    """Final-state loss of theta'' = -sin(theta) - damping * theta'."""
    dt = 0.01
    theta, omega = state[0], state[1]
    for _ in range(steps):
        theta_next = theta + dt * omega
        omega = omega + dt * (-np.sin(theta) - damping * omega)
        theta = theta_next
    return (theta - 1.0) ** 2 + omega ** 2


def main():
    state, damping = np.array([0.3, 0.0]), 0.2
    results = {}
    for policy in ["save", ("revolve", 10), "sqrt"]:
        g = srcgrad.grad(pendulum, wrt=(0, 1), policy=policy)
        g(state, damping, STEPS)
        tracemalloc.start()
        start = time.perf_counter()
        results[str(policy)] = g(state, damping, STEPS)
        seconds = time.perf_counter() - start
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        print(f"{str(policy):<16} d state = {results[str(policy)][0]}, "
              f"d damping = {results[str(policy)][1]:.6f}   "
              f"peak {peak / 1024:8.1f} KiB   {seconds * 1e3:6.1f} ms")
    base = results["save"]
    for name, (d_state, d_damping) in results.items():
        assert np.allclose(d_state, base[0]) and np.isclose(d_damping, base[1]), name
    print(f"revolve with 10 states reruns {revolve_cost(STEPS, 10)} of the {STEPS} steps "
          f"(the binomial minimum)")
    assert srcgrad.gradcheck(pendulum, state, damping, 200, wrt=(0, 1))
    print("gradcheck passed")


if __name__ == "__main__":
    main()
