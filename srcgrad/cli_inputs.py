"""What ``srcgrad check`` runs a function on, and what it reports.

Kept apart from :mod:`srcgrad.cli` (argument parsing and the commands) because
choosing example inputs is a small problem of its own: an argument's shape
comes from ``--shapes``, else from its default, else from its annotation
(``float``, ``Annotated[np.ndarray, (3, 4)]``), else it is guessed
(:data:`GUESSED_SHAPE`) and the report says so; the function is called on the
inputs first, so a failure names the user's line, not NumPy's.

    >>> def loss(W, b=np.zeros(4), n: int = 2):
    ...     return float(np.sum(W @ b) * n)
    >>> describe_inputs(choose_inputs(loss, "3x4"))
    'W: 3x4 (from --shapes); b: 4 (from its default); n = 2 (its default, held fixed)'
"""

from __future__ import annotations

import argparse
import inspect
import os
import typing
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .api.checks import Element, Measurement
from .errors import SrcGradError


class UsageError(Exception):
    """A command-line argument that names nothing usable."""


def parameters(fn) -> list[inspect.Parameter]:
    """``fn``'s positional parameters: what ``--wrt`` and ``--shapes`` count."""
    try:
        parameters = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return []
    return [p for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]


def function_name(fn, shown: str | None = None) -> str:
    """How messages name ``fn``: its qualified name; for an object without one
    (a ``functools.partial``), the name the command line gave it (``shown``),
    not a repr with a memory address (review s37 R5-12).

        >>> import functools
        >>> function_name(functools.partial(max, 1), "part")
        'part'
    """
    return getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or shown \
        or repr(fn)


def parse_policy(text: str):
    """``--policy``: a policy's name, or ``revolve,K`` / ``revolve:K`` for
    ``("revolve", K)``, binomial checkpointing with ``K`` snapshots.

        >>> parse_policy("sqrt"), parse_policy("revolve,3"), parse_policy("revolve:2")
        ('sqrt', ('revolve', 3), ('revolve', 2))
    """
    name, sep, count = text.strip().replace(":", ",").partition(",")
    name = name.strip()
    if name == "revolve" and sep and count.strip().isdigit() and int(count) >= 1:
        return ("revolve", int(count))
    if name in ("save", "recompute", "save_products", "sqrt") and not sep:
        return name
    raise argparse.ArgumentTypeError(
        f"unknown policy {text!r}: use save, recompute, save_products, sqrt, or revolve,K "
        f"for binomial checkpointing with K >= 1 snapshots (revolve,3 or revolve:3)")


def parse_shapes(text: str) -> list:
    """``--shapes 3x4,4,s`` -> ``[(3, 4), (4,), None]`` (None: a float)."""
    shapes = []
    for part in text.split(","):
        part = part.strip()
        if part in ("s", "scalar", ""):
            shapes.append(None)
        else:
            try:
                shapes.append(tuple(int(d) for d in part.split("x")))
            except ValueError:
                raise UsageError(f"--shapes takes shapes such as 3x4,4,s; got {part!r}") from None
    return shapes


def _count(shapes) -> str:
    return f"{len(shapes)} shape{'s' if len(shapes) != 1 else ''}"


def _shape_text(shape) -> str:
    return "a float" if shape is None else "x".join(map(str, shape)) if shape else "a 0-d array"


def example_shapes(count: int) -> str:
    """A ``--shapes`` value with one shape per argument, to show the syntax."""
    return ",".join((["3x4", "4"] + ["s"] * count)[:max(count, 1)])


#: The shape ``srcgrad check`` gives an argument nothing tells it the shape of.
GUESSED_SHAPE = (3,)
#: The value of an ``int`` argument without a default (held fixed, not differentiated).
GUESSED_INT = 3


#: The shape of an argument passed as it is (an int, a default that is not a float).
FIXED = object()


@dataclass
class Input:
    """One argument ``srcgrad check`` passes: its value, and how it was chosen."""

    name: str
    shape: object          # a tuple, None for a float, or FIXED for a value held fixed
    source: str            # "from --shapes", "from its default", ...
    guessed: bool = False
    fixed: object = None   # the value held fixed (an int, a default)


def describe_inputs(inputs: list[Input]) -> str:
    """``W: 3x4, b: 4 (from --shapes); n = 3 (its default, held fixed)``."""
    parts, group = [], []
    for item in [*inputs, None]:
        if group and (item is None or item.shape is FIXED or item.source != group[0].source):
            parts.append(", ".join(f"{i.name}: {_shape_text(i.shape)}" for i in group)
                         + f" ({group[0].source})")
            group = []
        if item is not None and item.shape is FIXED:
            parts.append(f"{item.name} = {item.fixed!r} ({item.source}, held fixed)")
        elif item is not None:
            group.append(item)
    return "; ".join(parts)


def shown_path(filename: str) -> str:
    """``filename`` relative to the current directory where it is below it."""
    try:
        relative = Path(filename).resolve().relative_to(Path.cwd().resolve())
    except (ValueError, OSError):
        return os.path.normpath(filename)
    return str(relative)


def _annotation_kind(annotation):
    """``("float", None)``, ``("array", shape or None)`` or ``("int", None)`` for
    an annotation srcgrad check understands, else None."""
    if typing.get_origin(annotation) is typing.Annotated:
        base, *extras = typing.get_args(annotation)
        for extra in extras:
            if isinstance(extra, str):
                try:
                    extra = parse_shapes(extra)[0] if "," not in extra else None
                except UsageError:
                    extra = None
            if isinstance(extra, tuple) and all(isinstance(d, int) for d in extra):
                return ("array", extra) if extra else ("float", None)
        annotation = base
    text = annotation if isinstance(annotation, str) else None  # not evaluated
    if annotation is float or text == "float" or (isinstance(annotation, type)
                                                  and issubclass(annotation, np.floating)):
        return ("float", None)
    if annotation is int or text == "int":
        return ("int", None)
    if annotation is np.ndarray or typing.get_origin(annotation) is np.ndarray or \
            text in ("np.ndarray", "numpy.ndarray", "NDArray", "npt.NDArray"):
        return ("array", None)
    return None


def _annotations(fn) -> dict:
    """``fn``'s parameter annotations, evaluated where they are strings
    (``from __future__ import annotations``) and evaluate."""
    try:
        parameters = inspect.signature(fn, eval_str=True).parameters
    except Exception:  # noqa: BLE001 - an annotation that does not evaluate: read the text
        try:
            parameters = inspect.signature(fn).parameters
        except (TypeError, ValueError):
            return {}
    return {name: p.annotation for name, p in parameters.items()
            if p.annotation is not inspect.Parameter.empty}


def choose_inputs(fn, shapes_text: str | None, shown: str | None = None) -> list[Input]:
    """How ``srcgrad check`` chooses each argument: ``--shapes``, else the
    default's shape, else the annotation's, else a guess (:data:`GUESSED_SHAPE`)."""
    params = parameters(fn)
    annotations = _annotations(fn)
    shapes = parse_shapes(shapes_text) if shapes_text is not None else []
    names = ", ".join(p.name for p in params)
    if len(shapes) > len(params):
        raise UsageError(f"--shapes gives {_count(shapes)} for {function_name(fn, shown)}'s "
                         f"{len(params)} arguments ({names})")
    inputs = []
    for i, param in enumerate(params):
        if i < len(shapes):
            inputs.append(Input(param.name, shapes[i], "from --shapes"))
            continue
        inferred = _inferred(param, annotations.get(param.name))
        if shapes and inferred.guessed:
            raise UsageError(f"--shapes gives {_count(shapes)} for {function_name(fn, shown)}'s "
                             f"{len(params)} arguments ({names}); give one per argument "
                             f"(the last ones may be left out where a default or an "
                             f"annotation gives their shape)")
        inputs.append(inferred)
    return inputs


def _inferred(param: inspect.Parameter, annotation) -> Input:
    default = param.default
    if default is not inspect.Parameter.empty:
        if isinstance(default, (float, np.floating)):
            return Input(param.name, None, "from its default")
        if isinstance(default, np.ndarray) and default.dtype.kind == "f":
            return Input(param.name, default.shape, "from its default")
        return Input(param.name, FIXED, "its default", fixed=default)
    kind = _annotation_kind(annotation) if annotation is not None else None
    if kind == ("float", None):
        return Input(param.name, None, "from its annotation")
    if kind == ("int", None):
        return Input(param.name, FIXED, "guessed for an int without a default",
                      fixed=GUESSED_INT)
    if kind is not None and kind[1] is not None:
        return Input(param.name, kind[1], "from its annotation")
    if kind is not None:
        return Input(param.name, GUESSED_SHAPE, "guessed: an array of unknown shape",
                      guessed=True)
    return Input(param.name, GUESSED_SHAPE, "guessed", guessed=True)


def random_values(inputs: list[Input], seed: int) -> list:
    """Random arguments: floats and arrays uniform in [0.5, 1.5); fixed values as they are."""
    rng = np.random.default_rng(seed)
    values = []
    for item in inputs:
        if item.shape is FIXED:
            values.append(item.fixed)
        elif item.shape is None:
            values.append(float(rng.uniform(0.5, 1.5)))
        else:
            values.append(rng.uniform(0.5, 1.5, item.shape))
    return values


def _location(fn) -> tuple[str | None, int | None]:
    code = getattr(fn, "__code__", None)
    return (code.co_filename, code.co_firstlineno) if code else (None, None)


def _where_it_failed(exc: BaseException, filename: str | None):
    """``(file, line, column)`` of the innermost frame of ``exc``'s traceback in
    ``filename`` (the user's file), or None."""
    found, tb = None, exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == filename:
            found = tb
        tb = tb.tb_next
    if found is None:
        return None
    positions = list(found.tb_frame.f_code.co_positions())
    index = found.tb_lasti // 2
    line, _, col, _ = positions[index] if 0 <= index < len(positions) else (None,) * 4
    return filename, line or found.tb_lineno, col


def run_on(fn, inputs: list[Input], values: list, shown: str | None = None) -> None:
    """Call ``fn`` on the inputs ``srcgrad check`` made; a failure or a
    non-scalar result becomes a :class:`SrcGradError` at the user's line."""
    filename, first = _location(fn)
    signature = f"{function_name(fn, shown)}({', '.join(i.name for i in inputs)})"
    defined = f" ({shown_path(filename)}, line {first})" if filename else ""
    chosen = f"  inputs: {describe_inputs(inputs)}"
    guessed = [i.name for i in inputs if i.guessed]
    guess = (f"srcgrad check guessed {', '.join(guessed)}: no --shapes, default or "
             f"annotation gives {'its' if len(guessed) == 1 else 'their'} shape.  "
             if guessed else "")
    how = (f"{guess}Pass the shapes {function_name(fn, shown)} takes with --shapes, one per "
           f"argument, e.g. --shapes {example_shapes(len(inputs))} (3x4: a 3-by-4 array, 4: a vector "
           f"of 4, s: a float), or give its arguments defaults or annotations such as "
           f"Annotated[np.ndarray, (3, 4)].")
    try:
        out = fn(*values)
    except Exception as exc:  # noqa: BLE001 - the user's function failed on our inputs
        where = _where_it_failed(exc, filename) or (filename, first, None)
        raise SrcGradError(
            f"{signature}{defined} fails on the inputs srcgrad check made for it:\n{chosen}\n"
            f"  {type(exc).__name__}: {exc}\n{how}",
            filename=where[0], lineno=where[1], col=where[2]) from None
    if isinstance(out, (int, float, np.number)) or (isinstance(out, np.ndarray)
                                                    and out.ndim == 0):
        return
    kind = (f"an array of shape {out.shape}" if isinstance(out, np.ndarray)
            else f"a {type(out).__name__}")
    raise SrcGradError(f"{signature}{defined} returns {kind} on the inputs srcgrad check "
                       f"made for it, and gradcheck needs a scalar output:\n{chosen}\n{how}",
                       filename=filename, lineno=first)


def report(fn, inputs: list[Input], wrt, found: Measurement, seed: int,
           shown: str | None = None) -> list[str]:
    """What ``srcgrad check`` prints: what it compared, on which inputs, and the
    worst errors it measured and where."""
    filename, first = _location(fn)
    names = [item.name for item in inputs]
    status = "passed" if found.passed else "FAILED"
    where = f" ({shown_path(filename)}, line {first})" if filename else ""
    lines = [(f"gradcheck {status}: {function_name(fn, shown)}({', '.join(names)}) with respect to "
              f"{', '.join(names[i] for i in wrt)}{where}"),
             f"  inputs:   {describe_inputs(inputs)}",
             f"            random, uniform in [0.5, 1.5), --seed {seed}"]
    guessed = [item.name for item in inputs if item.guessed]
    if guessed:
        lines.append(f"  guessed:  {', '.join(guessed)} (no --shapes, default or annotation "
                     f"gives {'its' if len(guessed) == 1 else 'their'} shape); choose with "
                     f"--shapes {example_shapes(len(inputs))}, one per argument")
    checked = sum(found.checked.values())
    total = sum(found.sizes.values())
    sampled = f" of {total} (a random sample)" if checked != total else ""
    lines.append(f"  checked:  {checked}{sampled} elements against central differences "
                 f"(eps {found.eps:g}),")
    lines.append(f"            and a dot-product test per argument (agreeing to "
                 f"{found.dot_rel:.2e}, relative)")

    def at(element: Element) -> str:
        index = ", ".join(map(str, element.index))
        name = names[element.argument] + (f"[{index}]" if element.index else "")
        return (f"at {name} (analytic {element.analytic:.10g}, "
                f"numeric {element.numeric:.10g})")

    if found.worst_abs is not None:
        lines.append(f"  worst absolute error: {found.worst_abs.abs_error:.2e} "
                     f"{at(found.worst_abs)}")
    if found.worst_rel is not None:
        lines.append(f"  worst relative error: {found.worst_rel.rel_error:.2e} "
                     f"{at(found.worst_rel)}")
    else:
        lines.append(f"  worst relative error: none measured (every derivative is within "
                     f"atol {found.atol:g} of zero)")
    lines.append(f"  tolerance: |analytic - numeric| <= {found.atol:g} + {found.rtol:g} "
                 f"* |numeric| per element")
    return lines
