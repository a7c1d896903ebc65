"""A recurrent network trained with srcgrad, with gradient clipping.

The task: read a noisy sine wave, 24 samples at a time, and predict the next
sample.  The loss runs the recurrence in an ordinary Python ``for`` loop and
calls a user function (``cell``) for each step; srcgrad differentiates both,
so the gradient code has a loop run backwards over tapes of the values each
step saved, and a forward/backward pair for ``cell``.

Exploding gradients are the classic failure of plain RNNs.  The training loop
clips the gradient by its global norm: when the norm of all parameter
gradients together exceeds ``MAX_NORM`` they are scaled down to it, so one
bad batch cannot throw the weights far away.  (The recurrent weights start
deliberately large so that clipping has work to do early on.)

    python examples/rnn_clipping.py            # 400 steps
    python examples/rnn_clipping.py --steps 50 --show-code
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import srcgrad

HIDDEN = 16
LENGTH = 24
MAX_NORM = 1.0


def cell(Wx, Wh, b, x, h):
    """One step of the recurrence: the new hidden state."""
    return np.tanh(x @ Wx + h @ Wh + b)


def loss(Wx, Wh, b, Wy, c, xs, y):
    """Mean squared error of the next-sample prediction for a batch.

    ``xs`` has shape (LENGTH, batch, 1): the inputs, one time step per row.
    """
    h = np.zeros((xs.shape[1], Wh.shape[0]))
    for x in xs:
        h = cell(Wx, Wh, b, x, h)
    prediction = h @ Wy + c
    return np.mean((prediction - y) ** 2)


def batch(rng, size):
    """Windows of a noisy sine wave of random phase and frequency, and the sample after."""
    t = np.arange(LENGTH + 1)[:, None]
    phase = rng.uniform(0, 2 * np.pi, size)
    freq = rng.uniform(0.15, 0.35, size)
    wave = np.sin(freq * t + phase) + 0.05 * rng.normal(size=(LENGTH + 1, size))
    return wave[:LENGTH, :, None], wave[LENGTH][:, None]


def clip_by_global_norm(grads, max_norm):
    """``grads`` scaled so that their joint norm is at most ``max_norm``; and the norm."""
    norm = np.sqrt(sum(np.sum(g * g) for g in grads))
    if norm > max_norm:
        grads = [g * (max_norm / norm) for g in grads]
    return grads, norm


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=400)
    parser.add_argument("--show-code", action="store_true", help="print the gradient code")
    args = parser.parse_args()

    rng = np.random.default_rng(0)
    params = [
        rng.normal(0, 0.5, (1, HIDDEN)),                    # Wx
        rng.normal(0, 1.5 / np.sqrt(HIDDEN), (HIDDEN, HIDDEN)),  # Wh: large on purpose
        np.zeros(HIDDEN),                                   # b
        rng.normal(0, 1 / np.sqrt(HIDDEN), (HIDDEN, 1)),    # Wy
        np.zeros(1),                                        # c
    ]
    step_fn = srcgrad.value_and_grad(loss, wrt=(0, 1, 2, 3, 4))
    if args.show_code:
        print(step_fn.source)
    xs, y = batch(rng, 4)
    srcgrad.gradcheck(loss, *params, xs, y, wrt=(0, 1, 2, 3, 4))
    print("gradcheck against finite differences: passed")

    lr, clipped, start = 0.05, 0, time.perf_counter()
    first = None
    for step in range(1, args.steps + 1):
        xs, y = batch(rng, 32)
        value, grads = step_fn(*params, xs, y)
        grads, norm = clip_by_global_norm(grads, MAX_NORM)
        clipped += norm > MAX_NORM
        params = [p - lr * g for p, g in zip(params, grads)]
        first = value if first is None else first
        if step % 100 == 0 or step == args.steps:
            print(f"step {step:4d}  loss {value:.4f}  gradient norm {norm:7.3f}  "
                  f"clipped so far {clipped}")
    elapsed = time.perf_counter() - start
    xs, y = batch(np.random.default_rng(99), 256)
    final = loss(*params, xs, y)
    print(f"\n{args.steps} steps in {elapsed:.2f} s; held-out loss {final:.4f} "
          f"(first batch {first:.4f}); the gradient was clipped in {clipped} steps")
    assert np.isfinite(final)


if __name__ == "__main__":
    main()
