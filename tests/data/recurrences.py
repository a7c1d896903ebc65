"""Recurrent programs and the pipeline with one pass left out, shared by the
tests of the passes that rewrite a steady adjoint loop (optimize/
steady_loops.py, batched_steps.py, steady_products.py): each test compares the
code its pass writes with the code the pipeline writes without it, bit for bit."""

from __future__ import annotations

import numpy as np

from srcgrad import pipeline
from srcgrad.options import Options


def rnn(W, U, xs, h0):
    h = h0
    for t in range(xs.shape[0]):
        h = np.tanh(xs[t] @ W + h @ U)
    return np.sum(h * h)


def gru(Wz, Uz, Wh, Uh, xs, h0):   # a sigmoid gate: z * (1 - z) of the gate's output
    h = h0
    for t in range(xs.shape[0]):
        z = 1.0 / (1.0 + np.exp(-(xs[t] @ Wz + h @ Uz)))
        c = np.tanh(xs[t] @ Wh + h @ Uh)
        h = (1.0 - z) * h + z * c
    return np.sum(h * h)


def rnn_args(rng, steps=6, batch=3, width=4, hidden=5, dtype=np.float64, state=None):
    """``(W, U, xs, h0)``; ``state``: the dtype of ``xs`` and ``h0`` where it is
    not the weights'."""
    state = dtype if state is None else state
    return [(rng.normal(size=(width, hidden)) * 0.5).astype(dtype),
            (rng.normal(size=(hidden, hidden)) * 0.5).astype(dtype),
            rng.normal(size=(steps, batch, width)).astype(state),
            (rng.normal(size=(batch, hidden)) * 0.5).astype(state)]


def gru_args(rng, steps=5, batch=3, width=4, hidden=5):
    weights = [rng.normal(size=shape) * 0.5 for shape in
               ((width, hidden), (hidden, hidden), (width, hidden), (hidden, hidden))]
    return weights + [rng.normal(size=(steps, batch, width)), rng.normal(size=(batch, hidden))]


def compiled_without(monkeypatch, fn, left_out, **options):
    """``(namespace, function, source)``: ``fn``'s generated function straight
    from the pipeline (the cache would not tell the two apart), without the
    pass named ``left_out`` (a function of :mod:`srcgrad.pipeline` that takes
    the sweep first and returns it) where it is not None."""
    with monkeypatch.context() as patch:
        if left_out is not None:
            patch.setattr(pipeline, left_out, lambda sweep, *args: sweep)
        made = pipeline.generate(fn, Options(**options))
    namespace = dict(made.bindings)
    exec(compile(made.source, f"<{fn.__name__}>", "exec"), namespace)  # noqa: S102
    return namespace, namespace[made.entries[0]], made.source


def counting(namespace, counts, names):
    """Count in ``counts`` the calls the generated code in ``namespace`` makes of
    the runtime helpers ``names`` (those a fast loop writes out, or calls)."""
    for name in names:
        helper = namespace.get(name)
        if helper is not None:
            def counted(*args, helper=helper, name=name):
                counts[name] = counts.get(name, 0) + 1
                return helper(*args)
            namespace[name] = counted
