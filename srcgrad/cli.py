"""The ``srcgrad`` command line (also ``python -m srcgrad``).

    srcgrad show FILE.py:FUNC [--wrt 0,1] [--policy save] [--mode reverse|forward|...]
                              [--after PASS]
    srcgrad check FILE.py:FUNC [--wrt 0,1] [--shapes 3x4,4,s] [--seed 0]
    srcgrad export FILE.py:FUNC[,FUNC...] -o OUT.py [--wrt 0,1 | --wrt F:0,1 G:0]
                   [--mode grad|value_and_grad]
    srcgrad cache info|clear

``show`` prints the generated code (highlighted on a terminal when Pygments is
installed): ``--mode reverse`` (the default, same as ``grad``) the gradient,
``--mode forward`` (same as ``jvp``) the tangent code, or ``value_and_grad``,
``vjp``; with ``--after PASS`` (a pass of :data:`srcgrad.pipeline.PASSES`,
such as ``reverse`` or ``tapes``) the code as it stands after that pass, to
see what each pass does.

``check`` runs the checks of :func:`srcgrad.gradcheck` on random inputs and
prints what it measured (:func:`srcgrad.api.checks.measure`): the worst
absolute and relative errors and where they are, the shapes it used and where
each came from, and the seed.  An argument's shape comes from ``--shapes``,
else from its default, else from its annotation (``float``,
``Annotated[np.ndarray, (3, 4)]``), else it is guessed (:data:`GUESSED_SHAPE`)
and the report says so; where the function fails on the inputs (shapes it
cannot take) or returns a non-scalar, a :class:`SrcGradError` names its file
and line and what to pass.

``export`` writes a standalone module (:func:`srcgrad.export`); ``--wrt``
gives the arguments of every function (``0,1``), or of each
(``loss:0,1,2,3 step:0``).  ``--wrt`` takes positions or names.  ``cache``
reports on or empties the on-disk code cache.  Exit status: 0 on success, 1
when a check fails or srcgrad rejects the function, 2 for bad usage
(argparse's convention).
"""

from __future__ import annotations

import argparse
import importlib.util
import inspect
import os
import sys
import typing
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from . import pipeline as compiler
from .api import transforms as api
from .api.checks import Element, Measurement, measure
from .cache import store as cache
from .errors import GradcheckError, SrcGradError
from .pipeline import Options


class UsageError(Exception):
    """A command-line argument that names nothing usable."""


def load_function(target: str):
    """``path/to/file.py:name`` (or ``file.py:Class.method``) -> the function."""
    functions = load_functions(target)
    if len(functions) != 1:
        raise UsageError(f"expected one function, got {target!r}")
    return functions[0]


def load_functions(target: str) -> list:
    """``path/to/file.py:f,g`` -> the functions, from one import of the file."""
    path, sep, names = target.rpartition(":")
    if not sep or not path or not names or not all(names.split(",")):
        raise UsageError(f"expected FILE.py:FUNC, got {target!r}")
    module = _load_module(path)
    return [_member(module, path, name) for name in names.split(",")]


def _load_module(path: str):
    file = Path(path)
    if not file.is_file():
        raise UsageError(f"no such file: {path}")
    module_name = f"srcgrad_cli_{file.stem}"
    spec = importlib.util.spec_from_file_location(module_name, file)
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    sys.path.insert(0, str(file.parent.resolve()))
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.pop(0)
    return module


def _member(module, path, name):
    obj = module
    for part in name.split("."):
        if not hasattr(obj, part):
            raise UsageError(f"{path} has no function {name!r}")
        obj = getattr(obj, part)
    return getattr(obj, "__wrapped__", obj)


def _parameters(fn) -> list[inspect.Parameter]:
    """``fn``'s positional parameters: what ``--wrt`` and ``--shapes`` count."""
    try:
        parameters = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return []
    return [p for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]


def _takes_more(fn) -> bool:
    """Whether ``fn`` takes positional arguments beyond its named ones (``*args``),
    or its signature is unknown."""
    try:
        parameters = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return True
    return any(p.kind is p.VAR_POSITIONAL for p in parameters)


def _name(fn) -> str:
    return getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn)


def _wrt(text: str | None, fn, shown: str | None = None) -> tuple[int, ...]:
    """``--wrt 0,1`` or ``--wrt W,b`` -> argument positions of ``fn`` (default: 0);
    ``shown`` is the option's text as the user wrote it, for messages."""
    if text is None:
        return (0,)
    shown = text if shown is None else shown
    names = [p.name for p in _parameters(fn)]
    known = f"{_name(fn)}'s arguments are {', '.join(names) or '(none)'}"
    positions = []
    for part in (part.strip() for part in text.split(",")):
        if part.isdigit():
            position = int(part)
            if position >= len(names) and not _takes_more(fn):
                raise UsageError(f"--wrt {shown}: there is no argument {position}; {known} "
                                 f"(positions count from 0)")
        elif part in names:
            position = names.index(part)
        elif part.lstrip("-").isdigit() or not part.isidentifier():
            raise UsageError(f"--wrt takes argument positions or names such as 0,1 or "
                             f"{','.join(names[:2]) or 'x'}; got {shown!r}")
        else:
            raise UsageError(f"--wrt {shown}: there is no argument {part!r}; {known}")
        if position in positions:
            raise UsageError(f"--wrt {shown} names argument {names[position]} twice")
        positions.append(position)
    return tuple(positions)


def _export_wrt(items: list[str] | None, names: list[str], functions) -> list[tuple[int, ...]]:
    """``--wrt 0,1`` (every function) and ``--wrt loss:0,1 step:0`` (per function,
    by the names in FILE.py:loss,step) -> each function's argument positions."""
    default, per, shown = None, {}, {}
    for item in items or []:
        name, sep, positions = item.rpartition(":")
        if not sep:
            if default is not None:
                raise UsageError(f"--wrt gives the positions of every function twice "
                                 f"({default} and {positions}); name the function for "
                                 f"one of them, as in --wrt {names[0]}:{positions}")
            default = positions
        elif name not in names:
            raise UsageError(f"--wrt {item}: {name!r} is not one of the functions exported "
                             f"({', '.join(names)})")
        elif name in per:
            raise UsageError(f"--wrt gives the positions of {name} twice")
        else:
            per[name], shown[name] = positions, item
    return [_wrt(per.get(name, default), fn, shown.get(name))
            for name, fn in zip(names, functions)]


def _shapes(text: str) -> list:
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


def _example_shapes(count: int) -> str:
    """A ``--shapes`` value with one shape per argument, to show the syntax."""
    return ",".join((["3x4", "4"] + ["s"] * count)[:max(count, 1)])


#: The shape ``srcgrad check`` gives an argument nothing tells it the shape of.
GUESSED_SHAPE = (3,)
#: The value of an ``int`` argument without a default (held fixed, not differentiated).
GUESSED_INT = 3


#: The shape of an argument passed as it is (an int, a default that is not a float).
_FIXED = object()


@dataclass
class _Input:
    """One argument ``srcgrad check`` passes: its value, and how it was chosen."""

    name: str
    shape: object          # a tuple, None for a float, or _FIXED for a value held fixed
    source: str            # "from --shapes", "from its default", ...
    guessed: bool = False
    fixed: object = None   # the value held fixed (an int, a default)


def _describe(inputs: list[_Input]) -> str:
    """``W: 3x4, b: 4 (from --shapes); n = 3 (its default, held fixed)``."""
    parts, group = [], []
    for item in [*inputs, None]:
        if group and (item is None or item.shape is _FIXED or item.source != group[0].source):
            parts.append(", ".join(f"{i.name}: {_shape_text(i.shape)}" for i in group)
                         + f" ({group[0].source})")
            group = []
        if item is not None and item.shape is _FIXED:
            parts.append(f"{item.name} = {item.fixed!r} ({item.source}, held fixed)")
        elif item is not None:
            group.append(item)
    return "; ".join(parts)


def _shown(filename: str) -> str:
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
                    extra = _shapes(extra)[0] if "," not in extra else None
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


def _inputs(fn, shapes_text: str | None) -> list[_Input]:
    """How ``srcgrad check`` chooses each argument: ``--shapes``, else the
    default's shape, else the annotation's, else a guess (:data:`GUESSED_SHAPE`)."""
    params = _parameters(fn)
    annotations = _annotations(fn)
    shapes = _shapes(shapes_text) if shapes_text is not None else []
    names = ", ".join(p.name for p in params)
    if len(shapes) > len(params):
        raise UsageError(f"--shapes gives {_count(shapes)} for {_name(fn)}'s "
                         f"{len(params)} arguments ({names})")
    inputs = []
    for i, param in enumerate(params):
        if i < len(shapes):
            inputs.append(_Input(param.name, shapes[i], "from --shapes"))
            continue
        inferred = _inferred(param, annotations.get(param.name))
        if shapes and inferred.guessed:
            raise UsageError(f"--shapes gives {_count(shapes)} for {_name(fn)}'s "
                             f"{len(params)} arguments ({names}); give one per argument "
                             f"(the last ones may be left out where a default or an "
                             f"annotation gives their shape)")
        inputs.append(inferred)
    return inputs


def _inferred(param: inspect.Parameter, annotation) -> _Input:
    default = param.default
    if default is not inspect.Parameter.empty:
        if isinstance(default, (float, np.floating)):
            return _Input(param.name, None, "from its default")
        if isinstance(default, np.ndarray) and default.dtype.kind == "f":
            return _Input(param.name, default.shape, "from its default")
        return _Input(param.name, _FIXED, "its default", fixed=default)
    kind = _annotation_kind(annotation) if annotation is not None else None
    if kind == ("float", None):
        return _Input(param.name, None, "from its annotation")
    if kind == ("int", None):
        return _Input(param.name, _FIXED, "guessed for an int without a default",
                      fixed=GUESSED_INT)
    if kind is not None and kind[1] is not None:
        return _Input(param.name, kind[1], "from its annotation")
    if kind is not None:
        return _Input(param.name, GUESSED_SHAPE, "guessed: an array of unknown shape",
                      guessed=True)
    return _Input(param.name, GUESSED_SHAPE, "guessed", guessed=True)


def _values(inputs: list[_Input], seed: int) -> list:
    """Random arguments: floats and arrays uniform in [0.5, 1.5); fixed values as they are."""
    rng = np.random.default_rng(seed)
    values = []
    for item in inputs:
        if item.shape is _FIXED:
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


def _run_on(fn, inputs: list[_Input], values: list) -> None:
    """Call ``fn`` on the inputs ``srcgrad check`` made; a failure or a
    non-scalar result becomes a :class:`SrcGradError` at the user's line."""
    filename, first = _location(fn)
    signature = f"{_name(fn)}({', '.join(i.name for i in inputs)})"
    defined = f" ({_shown(filename)}, line {first})" if filename else ""
    chosen = f"  inputs: {_describe(inputs)}"
    guessed = [i.name for i in inputs if i.guessed]
    guess = (f"srcgrad check guessed {', '.join(guessed)}: no --shapes, default or "
             f"annotation gives {'its' if len(guessed) == 1 else 'their'} shape.  "
             if guessed else "")
    how = (f"{guess}Pass the shapes {_name(fn)} takes with --shapes, one per argument, "
           f"e.g. --shapes {_example_shapes(len(inputs))} (3x4: a 3-by-4 array, 4: a vector "
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


def cmd_show(args) -> int:
    fn = load_function(args.target)
    wrt = _wrt(args.wrt, fn)
    mode = _SHOW_MODES.get(args.mode, args.mode)
    options = Options(mode=mode, wrt=wrt, single=len(wrt) == 1, policy=args.policy)
    if args.after:
        api.show(_Shown(compiler.generate(fn, options, dump_after=args.after)))
        return 0
    generated = compiler.generate(fn, options)
    api.show(_Shown(generated.source))
    return 0


#: What ``show --mode`` accepts besides the compiler's own mode names.
_SHOW_MODES = {"reverse": "grad", "forward": "jvp"}


class _Shown:
    def __init__(self, source):
        self.source = source


def cmd_check(args) -> int:
    fn = load_function(args.target)
    inputs = _inputs(fn, args.shapes)
    if args.wrt:
        wrt = _wrt(args.wrt, fn)
        if any(i >= len(inputs) for i in wrt):
            raise UsageError(f"--wrt {args.wrt}: srcgrad check makes values for the named "
                             f"arguments of {_name(fn)} only")
    else:
        wrt = tuple(i for i, item in enumerate(inputs) if item.shape is not _FIXED)
        if not wrt:
            raise UsageError(f"{_name(fn)} has no float argument to differentiate; "
                             f"choose some with --wrt")
    values = _values(inputs, args.seed)
    _run_on(fn, inputs, values)
    found = measure(fn, *values, wrt=wrt, seed=args.seed)
    for line in _report(fn, inputs, wrt, found, args.seed):
        print(line)
    if not found.passed:
        raise GradcheckError(found.failure)
    return 0


def _report(fn, inputs: list[_Input], wrt, found: Measurement, seed: int) -> list[str]:
    """What ``srcgrad check`` prints: what it compared, on which inputs, and the
    worst errors it measured and where."""
    filename, first = _location(fn)
    names = [item.name for item in inputs]
    status = "passed" if found.passed else "FAILED"
    where = f" ({_shown(filename)}, line {first})" if filename else ""
    lines = [(f"gradcheck {status}: {_name(fn)}({', '.join(names)}) with respect to "
              f"{', '.join(names[i] for i in wrt)}{where}"),
             f"  inputs:   {_describe(inputs)}",
             f"            random, uniform in [0.5, 1.5), --seed {seed}"]
    guessed = [item.name for item in inputs if item.guessed]
    if guessed:
        lines.append(f"  guessed:  {', '.join(guessed)} (no --shapes, default or annotation "
                     f"gives {'its' if len(guessed) == 1 else 'their'} shape); choose with "
                     f"--shapes {_example_shapes(len(inputs))}, one per argument")
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


def cmd_export(args) -> int:
    target, items = args.target, list(args.wrt or [])
    if target is None:  # `--wrt loss:0 model.py:loss`: the target went into --wrt's list
        files = [item for item in items if item.rpartition(":")[0].endswith(".py")]
        if not files:
            raise UsageError("export needs FILE.py:FUNC[,FUNC...]")
        target = files[-1]
        items.remove(target)
    functions = load_functions(target)
    names = target.rpartition(":")[2].split(",")
    transform = api.value_and_grad if args.mode == "value_and_grad" else api.grad
    gradients = []
    for fn, wrt in zip(functions, _export_wrt(items, names, functions)):
        gradients.append(transform(fn, wrt=wrt[0] if len(wrt) == 1 else wrt,
                                   policy=args.policy))
    entries = api.export(args.output, *gradients)
    print(f"wrote {args.output}: {', '.join(entries)}")
    return 0


def cmd_cache(args) -> int:
    if args.action == "clear":
        removed = cache.clear()
        where = cache.cache_dir()
        print(f"removed {removed} files from {where}" if where else "the disk cache is off "
              "(SRCGRAD_CACHE=0)")
        return 0
    info = cache.info()
    print(f"directory: {info['directory'] or '(none: the disk cache is off, SRCGRAD_CACHE=0)'}")
    print(f"entries:   {info['entries']}")
    print(f"files:     {info['files']}")
    print(f"bytes:     {info['bytes']}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="srcgrad", description="Source-to-source "
                                     "automatic differentiation for Python and NumPy.")
    sub = parser.add_subparsers(dest="command", required=True)
    show = sub.add_parser("show", help="print the generated gradient code")
    show.add_argument("target", help="FILE.py:FUNC")
    show.add_argument("--wrt", help="argument positions or names, e.g. 0,1 or W,b "
                                    "(default 0)")
    show.add_argument("--policy", default="save")
    show.add_argument("--mode", default="reverse",
                      choices=(*_SHOW_MODES, *(m for m in compiler.MODES if m != "tangent")))
    show.add_argument("--after", metavar="PASS",
                      help="print the code as it stands after this compiler pass instead; "
                           "the passes, in order: " + ", ".join(compiler.PASSES))
    show.set_defaults(run=cmd_show)
    check = sub.add_parser(
        "check", help="compare the gradient with finite differences on random inputs",
        description="Compare the generated gradient with central finite differences on "
        "random inputs, and print the worst absolute and relative errors, where they are, "
        "the shapes used and the seed.  Each argument's shape comes from --shapes, else "
        "from its default (a float or float array), else from its annotation (float, "
        "Annotated[np.ndarray, (3, 4)]); an argument with none of these gets a guess "
        f"(a vector of {GUESSED_SHAPE[0]}; an int {GUESSED_INT}), reported as such.  Int "
        "and other non-float defaults are passed as they are and held fixed.")
    check.add_argument("target", help="FILE.py:FUNC")
    check.add_argument("--wrt", help="argument positions or names, e.g. 0,1 or W,b "
                                     "(default: every float argument)")
    check.add_argument("--shapes", help="one shape per argument, e.g. 3x4,4,s (3x4: a 3-by-4 "
                                        "array, 4: a vector, s: a float); trailing arguments "
                                        "with a default or an annotation may be left out")
    check.add_argument("--seed", type=int, default=0,
                       help="the seed of the random inputs (default 0); the report prints it")
    check.set_defaults(run=cmd_check)
    export = sub.add_parser(
        "export", help="write a standalone gradient module (NumPy only)",
        description="Write one module with the gradients of the functions named, which "
        "imports only NumPy and the standard library.  Where srcgrad would raise one of its "
        "errors, the module raises its own GradientError (a ValueError), whether or not "
        "srcgrad is installed.")
    export.add_argument("target", nargs="?", help="FILE.py:FUNC[,FUNC...]")
    export.add_argument("-o", "--output", required=True, help="the module to write")
    export.add_argument("--wrt", nargs="+", action="extend", metavar="[FUNC:]ARGS",
                        help="argument positions or names: 0,1 for every function, or per "
                             "function, e.g. --wrt loss:0,1,2,3 step:0 (default 0)")
    export.add_argument("--policy", default="save")
    export.add_argument("--mode", default="grad", choices=("grad", "value_and_grad"))
    export.set_defaults(run=cmd_export)
    cached = sub.add_parser("cache", help="the on-disk cache of generated code")
    cached.add_argument("action", choices=("info", "clear"))
    cached.set_defaults(run=cmd_cache)
    return parser


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.run(args)
    except UsageError as exc:
        print(f"srcgrad: error: {exc}", file=sys.stderr)
        return 2
    except SrcGradError as exc:
        print(f"srcgrad: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
