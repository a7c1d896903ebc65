"""The ``srcgrad`` command line (also ``python -m srcgrad``).

    srcgrad show FILE.py:FUNC [--wrt 0,1] [--policy save] [--mode reverse|forward|...]
                              [--after PASS]
    srcgrad check FILE.py:FUNC [--wrt 0,1] [--shapes 3x4,4,s] [--seed 0]
    srcgrad export FILE.py:FUNC[,FUNC...] -o OUT.py [--wrt 0,1 | --wrt F:0,1 G:0]
                   [--mode grad|value_and_grad]
    srcgrad explain FILE.py:FUNC [--wrt 0,1] [--policy save]
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
``Annotated[np.ndarray, (3, 4)]``), else it is guessed (:data:`srcgrad.cli_inputs.GUESSED_SHAPE`)
and the report says so; where the function fails on the inputs (shapes it
cannot take) or returns a non-scalar, a :class:`SrcGradError` names its file
and line and what to pass.

``explain`` prints :func:`srcgrad.explain`'s report: for each argument of
``--wrt`` (default: every argument), whether its gradient flows or is always
zero and the line and expression that cut it, then what the forward sweep
saves.

``export`` writes a standalone module (:func:`srcgrad.export`); ``--wrt``
gives the arguments of every function (``0,1``), or of each
(``loss:0,1,2,3 step:0``).  ``--wrt`` takes positions or names.  ``cache``
reports on or empties the on-disk code cache.  Exit status: 0 on success, 1
when a check fails or srcgrad rejects the function, 2 for bad usage
(argparse's convention).
"""

from __future__ import annotations

import argparse
import functools
import importlib.util
import inspect
import sys
from pathlib import Path

from . import pipeline as compiler
from .api import transforms as api
from .api.explain import explain
from .api.checks import measure
from .cache import store as cache
from .cli_inputs import (
    FIXED,
    GUESSED_INT,
    GUESSED_SHAPE,
    UsageError,
    choose_inputs,
    function_name,
    parameters,
    parse_policy,
    random_values,
    report,
    run_on,
)
from .errors import GradcheckError, SrcGradError
from .pipeline import Options


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
    except SyntaxError as exc:  # the user's file does not parse: say where, no traceback
        raise UsageError(f"{exc.filename or path}:{exc.lineno}:{exc.offset or 0}: "
                         f"syntax error: {exc.msg}") from None
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


def _takes_more(fn) -> bool:
    """Whether ``fn`` takes positional arguments beyond its named ones (``*args``),
    or its signature is unknown."""
    try:
        parameters = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return True
    return any(p.kind is p.VAR_POSITIONAL for p in parameters)


def _wrt(text: str | None, fn, shown: str | None = None) -> tuple[int, ...]:
    """``--wrt 0,1`` or ``--wrt W,b`` -> argument positions of ``fn`` (default: 0);
    ``shown`` is the option's text as the user wrote it, for messages."""
    if text is None:
        return (0,)
    shown = text if shown is None else shown
    names = [p.name for p in parameters(fn)]
    known = f"{function_name(fn)}'s arguments are {', '.join(names) or '(none)'}"
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


def _unpartial(fn, wrt):
    """The function a ``functools.partial`` calls and ``wrt`` counted in its
    arguments (the partial's own positions shifted past its fixed ones), as
    ``grad(partial)`` differentiates it; ``fn`` and ``wrt`` as they are for
    anything else (review s36 R4-7: ``show`` refused a partial that ``check``,
    ``export`` and ``explain`` take)."""
    while isinstance(fn, functools.partial):
        wrt = tuple(w + len(fn.args) for w in wrt)
        fn = fn.func
    return fn, wrt


def cmd_show(args) -> int:
    fn = load_function(args.target)
    fn, wrt = _unpartial(fn, _wrt(args.wrt, fn))
    mode = _SHOW_MODES.get(args.mode, args.mode)
    options = Options(mode=mode, wrt=wrt, single=len(wrt) == 1, policy=args.policy)
    if args.after:
        api.show(_Shown(compiler.generate(fn, options, dump_after=args.after)))
        return 0
    generated = compiler.generate(fn, options)
    api.show(_Shown(generated.source))
    return 0


def cmd_explain(args) -> int:
    fn = load_function(args.target)
    if args.wrt:
        wrt = _wrt(args.wrt, fn)
    else:
        wrt = tuple(range(len(parameters(fn)))) or (0,)
    print(explain(fn, wrt=wrt, policy=args.policy))
    return 0


#: What ``show --mode`` accepts besides the compiler's own mode names.
_SHOW_MODES = {"reverse": "grad", "forward": "jvp"}


class _Shown:
    def __init__(self, source):
        self.source = source


def cmd_check(args) -> int:
    fn = load_function(args.target)
    shown = args.target.rpartition(":")[2]  # the name of a partial, which has none
    names = [p.name for p in parameters(fn)]
    if "." in args.target.rpartition(":")[2] and names[:1] == ["self"]:
        # Model.loss read from its class: check would make an array for self
        raise UsageError(f"{function_name(fn, shown)} is a method: srcgrad check makes arrays for "
                         f"its arguments and cannot make the object 'self' is; check a "
                         f"function that builds the object and calls the method (def "
                         f"loss(x): return {fn.__qualname__.rpartition('.')[0]}(...)."
                         f"{fn.__name__}(x)), or use srcgrad.gradcheck on an object you made")
    inputs = choose_inputs(fn, args.shapes, shown)
    if args.wrt:
        wrt = _wrt(args.wrt, fn)
        if any(i >= len(inputs) for i in wrt):
            raise UsageError(f"--wrt {args.wrt}: srcgrad check makes values for the named "
                             f"arguments of {function_name(fn, shown)} only")
    else:
        wrt = tuple(i for i, item in enumerate(inputs) if item.shape is not FIXED)
        if not wrt:
            raise UsageError(f"{function_name(fn, shown)} has no float argument to differentiate; "
                             f"choose some with --wrt")
    values = random_values(inputs, args.seed)
    run_on(fn, inputs, values, shown)
    found = measure(fn, *values, wrt=wrt, seed=args.seed)
    for line in report(fn, inputs, wrt, found, args.seed, shown):
        print(line)
    if not found.passed:
        raise GradcheckError(found.failure)
    return 0


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


_POLICY_HELP = "save, recompute, save_products, sqrt, or revolve,K (K snapshots; also revolve:K)"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="srcgrad", description="Source-to-source "
                                     "automatic differentiation for Python and NumPy.")
    sub = parser.add_subparsers(dest="command", required=True)
    show = sub.add_parser("show", help="print the generated gradient code")
    show.add_argument("target", help="FILE.py:FUNC")
    show.add_argument("--wrt", help="argument positions or names, e.g. 0,1 or W,b "
                                    "(default 0)")
    show.add_argument("--policy", default="save", type=parse_policy, help=_POLICY_HELP)
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
    export.add_argument("--policy", default="save", type=parse_policy, help=_POLICY_HELP)
    export.add_argument("--mode", default="grad", choices=("grad", "value_and_grad"))
    export.set_defaults(run=cmd_export)
    explained = sub.add_parser(
        "explain", help="say where the gradient flows, where it is cut, and what is saved",
        description="For each argument, say whether its gradient can be nonzero or is "
        "always zero, and where (file, line, expression) the flow is cut: a comparison, an "
        "int cast, np.round and other piecewise-constant functions, stop_gradient, a use "
        "that never reaches the returned value.  Then list what the forward sweep saves.")
    explained.add_argument("target", help="FILE.py:FUNC")
    explained.add_argument("--wrt", help="argument positions or names, e.g. 0,1 or W,b "
                                         "(default: every argument)")
    explained.add_argument("--policy", default="save", type=parse_policy, help=_POLICY_HELP)
    explained.set_defaults(run=cmd_explain)
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
