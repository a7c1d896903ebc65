"""The ``srcgrad`` command line (also ``python -m srcgrad``).

    srcgrad show FILE.py:FUNC [--wrt 0,1] [--policy save] [--mode reverse|forward|...]
                              [--after PASS]
    srcgrad check FILE.py:FUNC [--wrt 0,1] [--shapes 3x4,4,s] [--seed 0]
    srcgrad export FILE.py:FUNC[,FUNC...] -o OUT.py [--wrt 0,1] [--mode grad|value_and_grad]
    srcgrad cache info|clear

``show`` prints the generated code (highlighted on a terminal when Pygments is
installed): ``--mode reverse`` (the default, same as ``grad``) the gradient,
``--mode forward`` (same as ``jvp``) the tangent code, or ``value_and_grad``,
``vjp``; with ``--after PASS`` (a pass of :data:`srcgrad.pipeline.PASSES`,
such as ``reverse`` or ``tapes``) the code as it stands after that pass, to
see what each pass does; ``check`` runs :func:`srcgrad.gradcheck` on random inputs;
``export`` writes a standalone module (:func:`srcgrad.export`); ``cache``
reports on or empties the on-disk code cache.  Exit status: 0 on success, 1
when a check fails or srcgrad rejects the function, 2 for bad usage
(argparse's convention).
"""

from __future__ import annotations

import argparse
import importlib.util
import inspect
import sys
from pathlib import Path

import numpy as np

from . import pipeline as compiler
from .api import transforms as api
from .api.checks import gradcheck
from .cache import store as cache
from .errors import SrcGradError
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


def _wrt(text: str | None, fn) -> tuple[int, ...]:
    if text is None:
        return (0,)
    try:
        return tuple(int(part) for part in text.split(","))
    except ValueError:
        raise UsageError(f"--wrt takes argument positions such as 0,1; got {text!r}") from None


def _shapes(text: str | None, count: int):
    if text is None:
        return [(3,)] * count
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
    if len(shapes) != count:
        raise UsageError(f"--shapes gives {len(shapes)} shapes for {count} arguments")
    return shapes


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
    params = list(inspect.signature(fn).parameters)
    wrt = _wrt(args.wrt, fn) if args.wrt else tuple(range(len(params)))
    rng = np.random.default_rng(args.seed)
    values = [float(rng.uniform(0.5, 1.5)) if shape is None else rng.uniform(0.5, 1.5, shape)
              for shape in _shapes(args.shapes, len(params))]
    gradcheck(fn, *values, wrt=wrt)
    print(f"gradcheck passed: {fn.__name__} with respect to "
          f"{', '.join(params[i] for i in wrt)}")
    return 0


def cmd_export(args) -> int:
    functions = load_functions(args.target)
    transform = api.value_and_grad if args.mode == "value_and_grad" else api.grad
    gradients = []
    for fn in functions:
        wrt = _wrt(args.wrt, fn)
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
    show.add_argument("--wrt", help="argument positions, e.g. 0,1 (default 0)")
    show.add_argument("--policy", default="save")
    show.add_argument("--mode", default="reverse",
                      choices=(*_SHOW_MODES, *(m for m in compiler.MODES if m != "tangent")))
    show.add_argument("--after", metavar="PASS",
                      help="print the code as it stands after this compiler pass instead; "
                           "the passes, in order: " + ", ".join(compiler.PASSES))
    show.set_defaults(run=cmd_show)
    check = sub.add_parser("check", help="compare the gradient with finite differences")
    check.add_argument("target", help="FILE.py:FUNC")
    check.add_argument("--wrt", help="argument positions (default: all)")
    check.add_argument("--shapes", help="one shape per argument, e.g. 3x4,4,s (s: a float)")
    check.add_argument("--seed", type=int, default=0)
    check.set_defaults(run=cmd_check)
    export = sub.add_parser("export", help="write a standalone gradient module (NumPy only)")
    export.add_argument("target", help="FILE.py:FUNC[,FUNC...]")
    export.add_argument("-o", "--output", required=True, help="the module to write")
    export.add_argument("--wrt", help="argument positions, e.g. 0,1 (default 0)")
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
