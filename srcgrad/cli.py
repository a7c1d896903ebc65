"""The ``srcgrad`` command line (also ``python -m srcgrad``).

    srcgrad show FILE.py:FUNC [--wrt 0,1] [--policy save] [--mode grad|value_and_grad|vjp]
    srcgrad check FILE.py:FUNC [--wrt 0,1] [--shapes 3x4,4,s] [--seed 0]

``show`` prints the generated code (highlighted on a terminal when Pygments is
installed); ``check`` runs :func:`srcgrad.gradcheck` on random inputs.  Exit
status: 0 on success, 1 when a check fails or srcgrad rejects the function,
2 for bad usage (argparse's convention).
"""

from __future__ import annotations

import argparse
import importlib.util
import inspect
import sys
from pathlib import Path

import numpy as np

from . import api, compiler
from .checks import gradcheck
from .compiler import Options
from .errors import SrcGradError


class UsageError(Exception):
    """A command-line argument that names nothing usable."""


def load_function(target: str):
    """``path/to/file.py:name`` (or ``file.py:Class.method``) -> the function."""
    path, sep, name = target.rpartition(":")
    if not sep or not path or not name:
        raise UsageError(f"expected FILE.py:FUNC, got {target!r}")
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
    options = Options(mode=args.mode, wrt=wrt, single=len(wrt) == 1, policy=args.policy)
    generated = compiler.generate(fn, options)
    api.show(_Shown(generated.source))
    return 0


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


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="srcgrad", description="Source-to-source "
                                     "automatic differentiation for Python and NumPy.")
    sub = parser.add_subparsers(dest="command", required=True)
    show = sub.add_parser("show", help="print the generated gradient code")
    show.add_argument("target", help="FILE.py:FUNC")
    show.add_argument("--wrt", help="argument positions, e.g. 0,1 (default 0)")
    show.add_argument("--policy", default="save")
    show.add_argument("--mode", default="grad", choices=compiler.MODES)
    show.set_defaults(run=cmd_show)
    check = sub.add_parser("check", help="compare the gradient with finite differences")
    check.add_argument("target", help="FILE.py:FUNC")
    check.add_argument("--wrt", help="argument positions (default: all)")
    check.add_argument("--shapes", help="one shape per argument, e.g. 3x4,4,s (s: a float)")
    check.add_argument("--seed", type=int, default=0)
    check.set_defaults(run=cmd_check)
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
