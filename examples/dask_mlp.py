"""Training an MLP on a chunked Dask array: the gradient computed lazily.

The loss is plain NumPy, the weights are NumPy arrays and the data ``X`` is a
Dask array of a million rows in chunks of 100,000, made chunk by chunk and
never in memory whole.  ``srcgrad.grad`` runs the same generated code it runs
on NumPy arrays; on Dask arrays that code builds a graph and computes
nothing: the gradients come back as Dask arrays, and one ``dask.compute``
evaluates them in one pass over the chunks, each gradient a sum of per-chunk
products reduced across chunks, in memory that does not grow with the number
of rows.  The weights stay NumPy arrays, updated with the computed gradients.

The loss is computed by a call of its own: asked for in the same
``dask.compute`` as the gradients (``value_and_grad``), it makes Dask's
scheduler run every chunk's forward pass before any backward pass, holding
what the backward passes read for all chunks at once (docs/arrays.md).

    python examples/dask_mlp.py                  # 1e6 rows: check against NumPy, train
    python examples/dask_mlp.py --distributed    # the same on a dask.distributed local cluster
    python examples/dask_mlp.py --rows 20000 --chunk 5000 --steps 3   # a quick run
    python examples/dask_mlp.py --show-code      # print the generated gradient code
"""

from __future__ import annotations

import argparse
import contextlib
import time

import dask
import dask.array as da
import numpy as np

import srcgrad

D, HIDDEN, K = 20, 32, 5


def loss(W1, b1, W2, b2, X, y):
    """Mean softmax cross-entropy of a 20-32-5 tanh MLP over the rows of ``X``; ``y`` one-hot."""
    h = np.tanh(X @ W1 + b1)
    z = h @ W2 + b2
    m = np.max(z, axis=1, keepdims=True)
    s = z - m
    lse = np.log(np.sum(np.exp(s), axis=1, keepdims=True))
    return -np.sum(y * (s - lse)) / X.shape[0]


def make_data(rows, chunk, seed=0):
    """``X`` (normal) and one-hot labels of a fixed random teacher, both lazy."""
    rs = da.random.RandomState(seed)
    X = rs.standard_normal((rows, D), chunks=(chunk, D))
    teacher = np.random.default_rng(seed).standard_normal((D, K))
    labels = da.argmax(X @ teacher, axis=1)
    return X, (labels[:, None] == np.arange(K)).astype(np.float64)


def init_params(seed=1):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal((D, HIDDEN)) / np.sqrt(D), np.zeros(HIDDEN),
            rng.standard_normal((HIDDEN, K)) / np.sqrt(HIDDEN), np.zeros(K)]


def peak_rss_growth(fn):
    """``fn()``, and how far it raised the process's peak resident memory (Linux:
    ``ru_maxrss``, a high-water mark; 0 where it cannot be read)."""
    try:
        import resource
        with open("/proc/self/statm") as f:
            before = int(f.read().split()[1]) * resource.getpagesize()
    except (ImportError, OSError):
        return fn(), 0
    out = fn()
    return out, max(0, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - before)


def check_against_numpy(grad, params, X, y):
    """One gradient on Dask and on NumPy: the figures, and the agreement."""
    grad(*params, X[:8], y[:8])  # compile (and cache) first: not timed
    start = time.perf_counter()
    lazy = grad(*params, X, y)
    built = time.perf_counter() - start
    start = time.perf_counter()
    grads, growth = peak_rss_growth(lambda: dask.compute(*lazy))
    elapsed = time.perf_counter() - start
    print(f"Dask:  graph built in {built:.2f} s, computed in {elapsed:.2f} s, peak memory "
          f"+{growth / 2**20:.0f} MiB; X alone is {X.nbytes / 2**20:.0f} MiB in "
          f"{X.numblocks[0]} chunks")
    Xn, yn = dask.compute(X, y)
    grad(*params, Xn[:8], yn[:8])
    start = time.perf_counter()
    want = grad(*params, Xn, yn)
    print(f"NumPy: {time.perf_counter() - start:.2f} s with X in memory")
    worst = max(float(np.max(np.abs(g - w)) / np.max(np.abs(w))) for g, w in zip(grads, want))
    print(f"gradients {'agree to 1e-12' if worst <= 1e-12 else 'DIFFER'} "
          f"(worst relative difference {worst:.1e})")


def train(grad, params, X, y, steps, lr):
    for step in range(steps):
        grads = dask.compute(*grad(*params, X, y))  # one pass over the chunks
        value = float(loss(*params, X, y))  # the loss, by a pass of its own
        print(f"step {step}: loss {value:.6f}   |dW1| {np.linalg.norm(grads[0]):.3e}")
        params = [p - lr * g for p, g in zip(params, grads)]
    return params


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--chunk", type=int, default=100_000)
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--lr", type=float, default=1.0)
    parser.add_argument("--distributed", action="store_true",
                        help="compute on a dask.distributed local cluster (2 workers)")
    parser.add_argument("--show-code", action="store_true", help="print the gradient code")
    opts = parser.parse_args(argv)
    grad = srcgrad.grad(loss, wrt=(0, 1, 2, 3))
    if opts.show_code:
        print(grad.source)
    X, y = make_data(opts.rows, opts.chunk)
    params = init_params()
    with contextlib.ExitStack() as stack:
        if opts.distributed:
            from dask.distributed import Client, LocalCluster
            cluster = stack.enter_context(LocalCluster(
                processes=False, n_workers=2, threads_per_worker=1, dashboard_address=None))
            stack.enter_context(Client(cluster))
        check_against_numpy(grad, params, X, y)
        train(grad, params, X, y, opts.steps, opts.lr)


if __name__ == "__main__":
    main()
