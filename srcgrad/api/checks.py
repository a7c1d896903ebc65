"""``gradcheck``: the generated gradient against central finite differences.

Two checks, both in float64: every element of the gradient against a central
difference (for arguments up to a few hundred elements; larger ones are
sampled), and the dot-product identity ``<u, J v> = <J^T u, v>`` for a random
direction ``v``, which exercises every element at once.  On disagreement it
raises :class:`~srcgrad.errors.GradcheckError` naming the worst element with
its analytic and numeric values.
"""

from __future__ import annotations

import numpy as np

from ..errors import GradcheckError
from .transforms import grad

_MAX_ELEMENTS = 400


def _as_float64(value):
    if isinstance(value, np.ndarray):
        return value.astype(np.float64)
    if isinstance(value, (float, np.floating)):
        return float(value)
    return value


def _perturbed(args, index, flat_pos, delta):
    args = list(args)
    value = args[index]
    if isinstance(value, np.ndarray):
        arr = value.copy()
        arr.flat[flat_pos] += delta
        args[index] = arr
    else:
        args[index] = value + delta
    return args


def gradcheck(fn, *args, wrt=0, eps=1e-6, rtol=1e-5, atol=1e-8, seed=0):
    """Return True if ``grad(fn, wrt)`` matches finite differences at ``args``.

    Raises ``GradcheckError`` naming the worst element otherwise.
    """
    positions = (wrt,) if isinstance(wrt, int) else tuple(wrt)
    args = [_as_float64(a) for a in args]
    g = grad(fn, wrt=positions)
    analytic = g(*args)
    rng = np.random.default_rng(seed)
    f = fn

    def value(call_args):
        return float(f(*call_args))

    for index, g_i in zip(positions, analytic):
        arg = args[index]
        size = int(np.size(arg))
        g_flat = np.ravel(np.asarray(g_i, dtype=np.float64))
        if g_flat.shape != (size,):
            raise GradcheckError(f"gradient for argument {index} has shape {np.shape(g_i)}, "
                                 f"the argument has shape {np.shape(arg)}")
        picks = range(size) if size <= _MAX_ELEMENTS else rng.choice(size, _MAX_ELEMENTS,
                                                                      replace=False)
        worst = None
        for pos in picks:
            numeric = (value(_perturbed(args, index, pos, eps))
                       - value(_perturbed(args, index, pos, -eps))) / (2 * eps)
            err = abs(numeric - g_flat[pos])
            tol = atol + rtol * abs(numeric)
            if err > tol and (worst is None or err - tol > worst[0]):
                worst = (err - tol, pos, g_flat[pos], numeric)
        if worst is not None:
            _, pos, a_val, n_val = worst
            where = np.unravel_index(pos, np.shape(arg)) if np.ndim(arg) else ()
            raise GradcheckError(
                f"gradient of {fn.__name__} with respect to argument {index} disagrees with "
                f"finite differences at element {tuple(int(i) for i in where)}: "
                f"analytic {a_val!r}, numeric {n_val!r}")
        direction = rng.standard_normal(np.shape(arg))
        scale = eps
        plus = _add(args, index, scale * direction)
        minus = _add(args, index, -scale * direction)
        jv = (value(plus) - value(minus)) / (2 * scale)
        jtu = float(np.sum(g_flat * np.ravel(direction)))
        if abs(jv - jtu) > atol * 10 + rtol * 10 * max(abs(jv), abs(jtu)):
            raise GradcheckError(
                f"dot-product check failed for argument {index} of {fn.__name__}: "
                f"<J^T u, v> = {jtu!r} but finite differences give <u, J v> = {jv!r}")
    return True


def _add(args, index, delta):
    args = list(args)
    value = args[index]
    args[index] = value + (delta if isinstance(value, np.ndarray) else float(delta))
    return args
