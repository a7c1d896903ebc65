"""``gradcheck``: the generated gradient against central finite differences.

Two checks, both in float64: every element of the gradient against a central
difference (for arguments up to a few hundred elements; larger ones are
sampled), and the dot-product identity ``<u, J v> = <J^T u, v>`` for a random
direction ``v``, which exercises every element at once.  On disagreement it
raises :class:`~srcgrad.errors.GradcheckError` naming the worst element with
its analytic and numeric values.  :func:`measure` runs the same checks and returns
what it measured (the worst absolute and relative errors and where they are),
which ``srcgrad check`` prints.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field

import numpy as np

from ..errors import GradcheckError, SrcGradError
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


@dataclass
class Element:
    """One compared element: ``argument`` (a position of ``fn``) and ``index`` into
    it (``()`` for a number), the analytic and numeric derivatives there, their
    absolute difference and that difference relative to the larger of the two."""

    argument: int
    index: tuple
    analytic: float
    numeric: float
    abs_error: float
    rel_error: float


@dataclass
class Measurement:
    """What :func:`measure` found.

    ``worst_abs``/``worst_rel``: the elements with the largest absolute and
    relative error (the relative error counts only where the analytic or numeric
    value exceeds ``atol``; None where no element does); ``checked``/``sizes``:
    how many elements of each argument were compared, out of how many;
    ``dot_rel``: the worst relative disagreement of the dot-product checks;
    ``failure``: the message of the :class:`GradcheckError` that ``gradcheck``
    raises, or None when the gradient passed.
    """

    wrt: tuple
    eps: float
    rtol: float
    atol: float
    seed: int
    checked: dict = field(default_factory=dict)
    sizes: dict = field(default_factory=dict)
    worst_abs: Element | None = None
    worst_rel: Element | None = None
    dot_rel: float = 0.0
    failure: str | None = None

    @property
    def passed(self) -> bool:
        return self.failure is None


def gradcheck(fn, *args, wrt=0, eps=1e-6, rtol=1e-5, atol=1e-8, seed=0):
    """Return True if ``grad(fn, wrt)`` matches finite differences at ``args``.

    Raises ``GradcheckError`` naming the worst element otherwise.
    """
    found = measure(fn, *args, wrt=wrt, eps=eps, rtol=rtol, atol=atol, seed=seed)
    if found.failure is not None:
        raise GradcheckError(found.failure)
    return True


def measure(fn, *args, wrt=0, eps=1e-6, rtol=1e-5, atol=1e-8, seed=0) -> Measurement:
    """Compare ``grad(fn, wrt)`` with finite differences at ``args`` as
    :func:`gradcheck` does, and return what was measured (:class:`Measurement`)
    instead of raising ``GradcheckError``: the worst absolute and relative
    errors and where they are, and the failure, if any.  ``gradcheck`` fails at
    the first argument (in ``wrt`` order) whose check fails; every argument is
    measured all the same."""
    positions = (wrt,) if isinstance(wrt, int) else tuple(wrt)
    for index in positions:
        if -len(args) <= index < len(args) and isinstance(args[index], (dict, list, tuple)):
            raise SrcGradError(
                f"gradcheck compares gradients with finite differences element by element "
                f"for float and array arguments; argument {index} of "
                f"{getattr(fn, '__name__', 'the function')} is a {type(args[index]).__name__}: "
                f"check a function of its arrays (lambda W, b: loss({{'W': W, 'b': b}}, x)) "
                f"with respect to each")
    args = [_as_float64(a) for a in args]
    g = grad(fn, wrt=positions)
    analytic = g(*args)
    rng = np.random.default_rng(seed)
    found = Measurement(positions, eps, rtol, atol, seed)
    f = fn

    def value(call_args):
        return float(f(*call_args))

    def fail(message):
        if found.failure is None:
            found.failure = message

    names, name = _argument_names(fn), getattr(fn, "__name__", "the function")

    for index, g_i in zip(positions, analytic):
        arg, what = args[index], f"argument {index}{names.get(index, '')}"
        size = int(np.size(arg))
        g_flat = np.ravel(np.asarray(g_i, dtype=np.float64))
        if g_flat.shape != (size,):
            fail(f"gradient for {what} has shape {np.shape(g_i)}, the argument has shape "
                 f"{np.shape(arg)}")
            continue
        picks = range(size) if size <= _MAX_ELEMENTS else rng.choice(size, _MAX_ELEMENTS,
                                                                      replace=False)
        found.checked[index], found.sizes[index] = len(picks), size
        worst = None
        for pos in picks:
            numeric = (value(_perturbed(args, index, pos, eps))
                       - value(_perturbed(args, index, pos, -eps))) / (2 * eps)
            err = abs(numeric - g_flat[pos])
            tol = atol + rtol * abs(numeric)
            if err > tol and (worst is None or err - tol > worst[0]):
                worst = (err - tol, pos, g_flat[pos], numeric)
            _note(found, index, arg, pos, float(g_flat[pos]), float(numeric))
        if worst is not None:
            _, pos, a_val, n_val = worst
            fail(f"gradient of {name} with respect to {what} disagrees with "
                 f"finite differences at element {_where(arg, pos)}: analytic {float(a_val)!r}, "
                 f"numeric {float(n_val)!r}")
        direction = rng.standard_normal(np.shape(arg))
        scale = eps
        plus = _add(args, index, scale * direction)
        minus = _add(args, index, -scale * direction)
        jv = (value(plus) - value(minus)) / (2 * scale)
        jtu = float(np.sum(g_flat * np.ravel(direction)))
        gap = abs(jv - jtu)
        if max(abs(jv), abs(jtu)) > 0:
            found.dot_rel = max(found.dot_rel, gap / max(abs(jv), abs(jtu)))
        if worst is None and gap > atol * 10 + rtol * 10 * max(abs(jv), abs(jtu)):
            fail(f"dot-product check failed for {what} of {name}: <J^T u, v> = "
                 f"{jtu!r} but finite differences give <u, J v> = {jv!r}")
    return found


def _argument_names(fn) -> dict:
    """Position -> `` (name)`` for ``fn``'s named positional parameters."""
    try:
        parameters = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return {}
    return {i: f" ({p.name})" for i, p in enumerate(parameters)
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)}


def _where(arg, pos) -> tuple:
    where = np.unravel_index(pos, np.shape(arg)) if np.ndim(arg) else ()
    return tuple(int(i) for i in where)


def _note(found: Measurement, index, arg, pos, analytic: float, numeric: float) -> None:
    err = abs(numeric - analytic)
    scale = max(abs(analytic), abs(numeric))
    rel = err / scale if scale > found.atol else 0.0
    if found.worst_abs is None or err > found.worst_abs.abs_error:
        found.worst_abs = Element(index, _where(arg, pos), analytic, numeric, err, rel)
    if scale > found.atol and (found.worst_rel is None or rel > found.worst_rel.rel_error):
        found.worst_rel = Element(index, _where(arg, pos), analytic, numeric, err, rel)


def _add(args, index, delta):
    args = list(args)
    value = args[index]
    args[index] = value + (delta if isinstance(value, np.ndarray) else float(delta))
    return args
