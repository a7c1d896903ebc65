"""Optional comparison with autograd, jax and torch.

None of them is required: each adapter imports its library inside
``make(...)`` and the runner skips the ones that raise ImportError.  Each
workload's own source is reused by rebinding its ``np`` and ``math`` globals to
the library's NumPy-like module, so every tool differentiates the same code.

``make(tool, workload, args)`` returns ``(call, to_numpy)``: ``call()`` computes
the gradients of the prepared arguments (their conversion to the library's
array type is not timed) and ``to_numpy(result)`` turns them into NumPy arrays
for the correctness check.
"""

from __future__ import annotations

import os
import types

import numpy as np

TOOLS = ("jax", "autograd", "torch")


def configure_threads() -> None:
    """Ask jax (XLA) for one thread too; call before importing jax."""
    os.environ.setdefault(
        "XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1")


def rebind(fn, **names):
    """``fn`` with some of its globals replaced (``np``, ``math``)."""
    globs = dict(fn.__globals__)
    globs.update(names)
    return types.FunctionType(fn.__code__, globs, fn.__name__, fn.__defaults__, fn.__closure__)


def _math_from(mod):
    """A stand-in for the ``math`` module that traced values can go through."""
    return types.SimpleNamespace(sin=mod.sin, cos=mod.cos, tan=mod.tan, exp=mod.exp,
                                 log=mod.log, sqrt=mod.sqrt, tanh=mod.tanh)


def make(tool, workload, args):
    return {"autograd": _autograd, "jax": _jax, "torch": _torch}[tool](workload, args)


def _autograd(workload, args):
    import autograd  # noqa: PLC0415 - optional
    import autograd.numpy as anp  # noqa: PLC0415

    fn = rebind(workload.fn, np=anp, math=_math_from(anp))
    wrt = workload.wrt
    gfn = autograd.grad(fn, wrt[0] if len(wrt) == 1 else tuple(wrt))

    def call():
        return gfn(*args)

    def to_numpy(result):
        if len(wrt) == 1:
            result = (result,)
        return tuple(np.asarray(r, dtype=float) for r in result)

    return call, to_numpy


def _jax(workload, args):
    configure_threads()
    import jax  # noqa: PLC0415 - optional

    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp  # noqa: PLC0415

    fn = rebind(workload.fn, np=jnp, math=_math_from(jnp))
    gfn = jax.jit(jax.grad(fn, argnums=tuple(workload.wrt)))
    jargs = tuple(jnp.asarray(a) for a in args)

    def call():
        return jax.block_until_ready(gfn(*jargs))

    def to_numpy(result):
        return tuple(np.asarray(r, dtype=float) for r in result)

    return call, to_numpy


def _torch(workload, args):
    import torch  # noqa: PLC0415 - optional

    torch.set_num_threads(1)

    def _sum(x, axis=None, keepdims=False):
        return torch.sum(x) if axis is None else torch.sum(x, dim=axis, keepdim=keepdims)

    def _max(x, axis=None, keepdims=False):
        return torch.max(x) if axis is None else torch.amax(x, dim=axis, keepdim=keepdims)

    tnp = types.SimpleNamespace(
        sin=torch.sin, cos=torch.cos, tan=torch.tan, exp=torch.exp, log=torch.log,
        sqrt=torch.sqrt, tanh=torch.tanh, sum=_sum, max=_max)
    fn = rebind(workload.fn, np=tnp, math=_math_from(torch))
    targs = [torch.tensor(np.asarray(a), dtype=torch.float64) for a in args]
    leaves = []
    for i in workload.wrt:
        targs[i] = targs[i].requires_grad_()
        leaves.append(targs[i])

    def call():
        return torch.autograd.grad(fn(*targs), leaves)

    def to_numpy(result):
        return tuple(r.detach().numpy() for r in result)

    return call, to_numpy
