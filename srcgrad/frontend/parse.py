"""Frontend: from a live Python function to a located gast tree and its names.

Three jobs, each a function here:

* :func:`parse_function` finds the function's source (``inspect``; works for
  functions in files, nested and indented definitions, decorated functions),
  parses it with gast and moves every node's ``lineno``/``col_offset`` back to
  where it stands in the user's file, so that errors point at the real line;
* :class:`Resolver` answers what a free name means (closure cell, then the
  function's globals, then builtins), the way Python itself would at call time;
* :func:`static_value` evaluates an attribute chain such as ``np.linalg.norm``
  against the resolver, which is how calls get matched to adjoint rules.

    >>> import numpy as np
    >>> def f(x):
    ...     return np.tanh(x)
    >>> parsed = parse_function(f)
    >>> parsed.node.name, [a.id for a in parsed.node.args.args]
    ('f', ['x'])
    >>> call = parsed.node.body[0].value
    >>> static_value(call.func, parsed.resolver) is np.tanh
    True
"""

from __future__ import annotations

import ast
import builtins
import dis
import importlib.machinery
import inspect
import linecache
import os
import sys
import textwrap
from dataclasses import dataclass, field

import gast

from ..errors import SourceNotFoundError, SrcGradError, UnsupportedSyntaxError
from ..ir.syntax import walk
from .foreign import native
from .errstate import run_errstate_blocks
from .fstrings import format_fstrings
from .mangle import mangle_private_names
from .reachable import drop_unreachable
from .source_lines import definition_lines
from .unresolved import defer_unresolved
from .wrappers import bind_wrapper_parameters

_MISSING = object()


@dataclass
class ParsedFunction:
    """A function's gast tree with locations in the user's file."""

    fn: object
    node: gast.FunctionDef
    filename: str
    resolver: "Resolver"
    lines: list[str] = field(default_factory=list)
    #: the np.errstate settings of its ``with`` blocks (frontend/errstate.py)
    errstate: dict = field(default_factory=dict)

    def error(self, cls, message: str, node=None) -> SrcGradError:
        """Build an error of class ``cls`` located at ``node``."""
        return located_error(cls, message, node, self.filename)


def located_error(cls, message, node, filename):
    lineno = getattr(node, "lineno", None) if node is not None else None
    col = getattr(node, "col_offset", None) if node is not None else None
    return cls(message, filename=filename, lineno=lineno, col=col)


def source_target(fn):
    """The function whose source srcgrad reads for ``fn``.

    A plain function is itself, even with a ``__wrapped__``: a decorator's
    wrapper made with ``functools.wraps`` is what a call runs (``2.0 *
    fn(v)``), so it is what is differentiated, the wrapped function one it
    calls, found in its closure -- unless the wrapper only passes its
    ``*args, **kwargs`` on (:func:`_forwards`).  An object that is not a
    function is followed through ``__wrapped__`` (``functools.lru_cache``,
    :func:`srcgrad.custom_vjp`, whose calls run the function they wrap) to its
    ``__srcgrad_primal__`` or to the first function."""
    target, seen = fn, set()
    while not hasattr(target, "__srcgrad_primal__") and id(target) not in seen:
        inner = getattr(target, "__wrapped__", None)
        if inner is None or (inspect.isfunction(target) and not _forwards(target)):
            break
        seen.add(id(target))
        target = inner
    return getattr(target, "__srcgrad_primal__", target)


def decorator_of(wrapper) -> str:
    """The name of the function that made ``wrapper`` (``doubled`` for the
    ``wrapper`` defined inside ``def doubled(fn)``), for messages."""
    code = wrapper.__code__
    return getattr(code, "co_qualname", code.co_name).split(".<locals>.")[0]


def _forwards(wrapper) -> bool:
    """Whether ``wrapper`` (a function with ``__wrapped__``) takes ``*args`` and/or
    ``**kwargs`` only and returns ``fn(*args, **kwargs)``, ``fn`` the function it
    wraps -- at once (``return fn(*args, **kwargs)``) or held in a name assigned
    once and returned at the end (``out = fn(*args, **kwargs)``; a timer, a
    print; ``return out``) -- its other statements rebinding none of these names,
    changing no part of them and reading the result only in a ``print`` or an
    f-string: its value is then ``fn``'s on the same arguments, so srcgrad
    differentiates ``fn`` (what the wrapper does besides runs where the function
    is called directly).  Any other wrapper is read as it is."""
    code = wrapper.__code__
    if not code.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS):
        return False
    try:
        lines, _ = inspect.getsourcelines(code)
        tree = ast.parse(textwrap.dedent("".join(lines)))
    except (OSError, TypeError, SyntaxError):
        return False
    node = next((n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)
                 and n.name == code.co_name), None)
    if node is None or node.args.args or node.args.posonlyargs or node.args.kwonlyargs:
        return False
    *rest, last = node.body
    if not isinstance(last, ast.Return) or last.value is None:
        return False
    held, call = None, last.value
    if isinstance(call, ast.Name):  # out = fn(*args, **kwargs) ... return out
        held = call.id
        made = [s for s in rest if isinstance(s, ast.Assign) and len(s.targets) == 1
                and isinstance(s.targets[0], ast.Name) and s.targets[0].id == held]
        if len(made) != 1:
            return False
        call = made[0].value
        rest = [s for s in rest if s is not made[0]]
    if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Name):
        return False
    star, double = node.args.vararg, node.args.kwarg
    cells = dict(zip(code.co_freevars, wrapper.__closure__ or ()))
    try:
        if call.func.id not in cells or cells[call.func.id].cell_contents \
                is not wrapper.__wrapped__:
            return False
    except ValueError:  # an empty cell
        return False
    passed = [a.value.id for a in call.args
              if isinstance(a, ast.Starred) and isinstance(a.value, ast.Name)]
    keywords = [k.value.id for k in call.keywords
                if k.arg is None and isinstance(k.value, ast.Name)]
    if passed != ([star.arg] if star else []) or len(passed) != len(call.args) \
            or keywords != ([double.arg] if double else []) \
            or len(keywords) != len(call.keywords):
        return False
    names = {call.func.id, *passed, *keywords, *([held] if held else [])}
    shown = set()  # the result read where it is only shown: print(out), f"{out}"
    for stmt in rest:
        for n in ast.walk(stmt):
            if isinstance(n, ast.FormattedValue) or (
                    isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
                    and n.func.id == "print"):
                shown.update(id(a) for a in (
                    [n.value] if isinstance(n, ast.FormattedValue) else n.args))
    for stmt in rest:
        for n in ast.walk(stmt):
            if isinstance(n, (ast.Return, ast.Yield, ast.YieldFrom, ast.Nonlocal,
                              ast.Global)):
                return False
            if isinstance(n, (ast.Name, ast.Subscript, ast.Attribute)) \
                    and not isinstance(n.ctx, ast.Load):
                root = n
                while isinstance(root, (ast.Subscript, ast.Attribute)):
                    root = root.value
                if isinstance(root, ast.Name) and root.id in names:
                    return False
            if held and isinstance(n, ast.Name) and n.id == held and id(n) not in shown:
                return False
    return True


def parse_function(fn) -> ParsedFunction:
    """Parse ``fn``'s definition into a gast ``FunctionDef`` located in its file."""
    target = source_target(fn)
    if not inspect.isfunction(target):
        hint = ""
        method = target.__func__ if inspect.ismethod(target) else inspect.getattr_static(
            type(target), "__call__", None)
        if inspect.isfunction(method):  # a bound method, a callable object
            hint = (f": pass the plain function {method.__qualname__} and the instance as its "
                    f"first argument (srcgrad.grad and the other transformations take bound "
                    f"methods and callable objects themselves)")
        raise SrcGradError(f"srcgrad differentiates Python functions; got {fn!r}{hint}")
    filename = target.__code__.co_filename
    if target.__code__.co_name == "<lambda>":
        return _parse_lambda(target, filename)
    try:
        # inspect follows __wrapped__ to the wrapped function's lines; a wrapper's
        # own are its code's
        # (the lines from the code object where it can tell them: source_lines.py)
        lines, first = definition_lines(target.__code__, getattr(target, "__globals__", None)) \
            or inspect.getsourcelines(target.__code__ if hasattr(target, "__wrapped__")
                                      else target)
    except (OSError, TypeError):
        raise SourceNotFoundError(
            f"cannot find the source code of {target.__qualname__} (defined in "
            f"{filename}); srcgrad reads a function's source, so define it in a file, "
            f"a notebook cell or a module") from None
    text = "".join(lines)
    dedented = textwrap.dedent(text)
    indent = _indent_width(text) - _indent_width(dedented)
    try:
        # blank lines before it: the nodes' line numbers are the file's already
        parsed = ast.parse("\n" * max(first - 1, 0) + dedented)
        module = _to_gast(parsed)
    except SyntaxError as exc:  # pragma: no cover - inspect found valid code
        raise SrcGradError(f"cannot parse the source of {target.__qualname__}: {exc}") from exc
    node = _find_definition(module, target)
    if node is None and not _stale(target, filename):
        raise SourceNotFoundError(
            f"the source of {target.__qualname__} at {filename}:{first} is not a plain "
            f"'def' statement (a lambda?)")
    if node is None or not _runs_this_source(target, dedented, filename, parsed):
        raise SourceNotFoundError(
            f"the source of {target.__qualname__} in {filename} is not the code Python runs "
            f"for it: the file was changed after it was loaded; reload the module "
            f"(importlib.reload) or run the cell again, then make the gradient again (srcgrad "
            f"reads the function's source, and would differentiate the new text)")
    node.decorator_list = []
    mangle_private_names(node, target.__qualname__)  # self.__w of class C: self._C__w
    _lift(node, target)
    if indent:
        _relocate(node, 0, indent)
    if hasattr(target, "__wrapped__") and node.args.vararg is not None:
        bind_wrapper_parameters(node, target)  # def wrapper(*args, **kw): wrappers.py
    if hasattr(target, "__wrapped__") and node.args.kwarg is not None:
        code = target.__code__
        raise located_error(
            UnsupportedSyntaxError,
            f"{target.__qualname__} is wrapped by the decorator {decorator_of(target)} (its "
            f"wrapper {code.co_name}, made with functools.wraps, is what a call runs, so "
            f"srcgrad differentiates it), and srcgrad cannot follow the wrapper's **"
            f"{node.args.kwarg.id} parameter yet: give the wrapper the wrapped function's "
            f"parameters (def {code.co_name}(x): ...), or differentiate the undecorated "
            f"function", node, filename)
    resolver = Resolver.for_function(target)
    errstate = run_errstate_blocks(node, resolver, filename)
    drop_unreachable(node, resolver)
    defer_unresolved(node, resolver, filename)
    format_fstrings(node)
    all_lines = linecache.getlines(filename) or lines
    return ParsedFunction(target, node, filename, resolver, all_lines, errstate)


def _lift(node, target) -> None:
    """A local function lifted out of the function around it (``srcgrad.grad(L)``
    made there, ``L`` a closure: normalize/made_transforms.py) is compiled with
    the variables it reads of that function as parameters after its own, named
    by ``__srcgrad_lifted__``; its source, read from the file, gets them too."""
    for name in getattr(target, "__srcgrad_lifted__", ()):
        node.args.args.append(gast.copy_location(gast.Name(
            id=name, ctx=gast.Param(), annotation=None, type_comment=None), node))


def _parse_lambda(target, filename) -> ParsedFunction:
    """A lambda as a ``def`` of its own: ``objective = lambda p: -f(p)`` reads as
    ``def objective(p): return -f(p)`` located where the lambda stands.

    Its source is on its line (``co_firstlineno``), read through linecache like
    a function's (a file, a notebook cell, an exec'd string registered there),
    parsed whole so that a lambda inside a longer statement is found too.
    Several lambdas beginning on that line are told apart by the columns of
    their bodies (:func:`lambda_spans`, from ``co_positions``), or failing that
    (Python 3.10, ``-X no_debug_ranges``) by compiling each and comparing its
    code with the lambda's; a line whose lambdas cannot be told apart gives a
    :class:`SourceNotFoundError` naming it.
    """
    code = target.__code__
    first = code.co_firstlineno
    linecache.checkcache(filename)
    lines = linecache.getlines(filename, target.__globals__)
    if not lines:
        raise SourceNotFoundError(
            f"cannot find the source code of the lambda defined at {filename}:{first}; "
            f"srcgrad reads a function's source, so define it in a file, a notebook cell "
            f"or a module")
    on_line = _lambdas_by_line(filename, "".join(lines)).get(first, ())
    candidates = [node for node, _ in on_line]
    chosen = _choose_lambda(candidates, code, filename)
    if chosen is None:
        what = (f"{len(candidates)} lambdas begin on line {first} of {filename} and srcgrad "
                f"cannot tell which one this is" if candidates else
                f"no lambda begins on line {first} of {filename} (was the file changed?)")
        raise SourceNotFoundError(
            f"cannot find the source code of the lambda: {what}; put it on a line of its "
            f"own, or define it with 'def'", filename=filename, lineno=first)
    node = gast.ast_to_gast(chosen)
    body = gast.copy_location(gast.Return(value=node.body), node.body)
    parents = {lam: parent for lam, parent in on_line}
    func = gast.FunctionDef(name=_lambda_name(chosen, parents), args=node.args, body=[body],
                            decorator_list=[], returns=None, type_comment=None,
                            type_params=[])
    gast.copy_location(func, node)
    func.end_lineno, func.end_col_offset = node.end_lineno, node.end_col_offset
    _lift(func, target)
    resolver = Resolver.for_function(target)
    drop_unreachable(func, resolver)
    defer_unresolved(func, resolver, filename)
    format_fstrings(func)
    return ParsedFunction(target, func, filename, resolver, lines)


#: The lambdas of the files lambdas were last read from, by first line, each with
#: its parent node (its name comes from there): {filename: (text, {line: [(lambda,
#: parent)]})}.  Parsing and walking a whole module costs far more than the rest
#: of a lambda's parse, and a file's lambdas are read again for each lambda, each
#: callee that is one and each set of options; kept while the file's text is the
#: same, for a few files.  The ``ast`` nodes are only read (the function's
#: tree is a gast copy), so sharing them is safe.
_LAMBDA_FILES: dict[str, tuple[str, dict]] = {}
_LAMBDA_FILES_KEPT = 8


def _lambdas_by_line(filename: str, text: str) -> dict:
    """The lambdas in ``text`` (the source of ``filename``) by first line, each as
    ``(node, parent)``; empty where the text does not parse."""
    known = _LAMBDA_FILES.get(filename)
    if known is not None and known[0] == text:
        return known[1]
    try:
        tree = ast.parse(text, filename)
    except (SyntaxError, ValueError):
        tree = None
    by_line: dict[int, list] = {}
    for node in ast.walk(tree) if tree is not None else ():
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Lambda):
                by_line.setdefault(child.lineno, []).append((child, node))
    if len(_LAMBDA_FILES) >= _LAMBDA_FILES_KEPT:
        _LAMBDA_FILES.clear()
    _LAMBDA_FILES[filename] = (text, by_line)
    return by_line


def lambda_spans(code) -> list[tuple[int, int, int, int]] | None:
    """Where the instructions of ``code`` come from: ``(line, end line, column,
    end column)`` of each (Python 3.11's ``co_positions``), or None where the
    interpreter keeps no columns."""
    positions = getattr(code, "co_positions", None)
    if positions is None:
        return None
    spans = [p for p in positions() if None not in p and (p[0], p[2]) < (p[1], p[3])]
    return spans or None


def lambda_identity(code) -> str:
    """Which of the lambdas on a line ``code`` is, as text (for cache keys: the
    lambdas of one line share their name, line and source text)."""
    spans = lambda_spans(code)
    return repr(spans if spans is not None else _instructions(code))


def _choose_lambda(candidates, code, filename):
    """The lambda among ``candidates`` (ast nodes on one line) that compiled to
    ``code``, or None when that cannot be told."""
    if len(candidates) <= 1:
        return candidates[0] if candidates else None
    spans = lambda_spans(code)
    if spans is not None:
        def holds(node):
            body = node.body
            return all((body.lineno, body.col_offset) <= (line, col)
                       and (end, end_col) <= (body.end_lineno, body.end_col_offset)
                       for line, end, col, end_col in spans)
        holding = [n for n in candidates if holds(n)]
        # a lambda inside another's body: the innermost holds exactly its own code
        holding.sort(key=lambda n: (n.body.end_lineno - n.body.lineno,
                                    n.body.end_col_offset - n.body.col_offset))
        if holding:
            return holding[0]
    # several matches compile to the same instructions: any of them is the lambda
    same = [n for n in candidates if _same_code(n, code, filename)]
    return same[0] if same else None


def _runs_this_source(target, text, filename, tree=None) -> bool:
    """Whether compiling ``target``'s definition found in ``text`` (its file
    as it is now) gives the instructions of the code Python runs for it: a
    file edited after it was loaded (an editor's save while a notebook holds
    the module; a reload, with an object of the old class kept) has text that
    is not the function's, and differentiating the text would give the
    derivative of other code, silently.  Compared as :func:`_same_code`
    compares a lambda's, in a function whose parameters are the code's free
    variables (inside a class of the method's class's name, which mangles
    ``__names`` as the class did); where the text does not compile alone,
    nothing is claimed.  ``tree``: ``text`` parsed already, as an ``ast``
    tree the caller no longer needs (its line numbers may be the file's: the
    instructions compared do not depend on them); parsing a long function
    again was a fifth of its parse."""
    code = target.__code__
    if not _plainly_loaded(target, filename):
        return True
    if tree is None:
        try:
            tree = ast.parse(text)
        except SyntaxError:  # pragma: no cover - inspect found it
            return True
    found = next((n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
                  and n.name == code.co_name), None)
    if found is None:
        return False
    found.decorator_list = []
    # a closure lifted out of its function (normalize/made_transforms.py) is compiled
    # with the variables it reads as parameters after its own (see _lift)
    found.args.args += [ast.arg(arg=n) for n in getattr(target, "__srcgrad_lifted__", ())]
    outer = ast.FunctionDef(
        name=_WRAPPER, args=ast.arguments(
            posonlyargs=[], args=[ast.arg(arg=n) for n in code.co_freevars], vararg=None,
            kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[]),
        body=[found, ast.Return(value=ast.Name(id=found.name, ctx=ast.Load()))],
        decorator_list=[], returns=None, type_params=[])
    body = [outer]
    owner = target.__qualname__.split(".")[-2:-1]
    if owner and owner[0] != "<locals>":
        body = [ast.ClassDef(name=owner[0], bases=[], keywords=[], body=body,
                             decorator_list=[], type_params=[])]
    module = ast.Module(body=_imported(target) + body, type_ignores=[])
    # the nodes made here located, not the definition's body, which the parse
    # located (fix_missing_locations of a long function's walked every node)
    inside, found.body = found.body, []
    ast.fix_missing_locations(module)
    found.body = inside
    try:
        made = compile(module, filename, "exec", dont_inherit=True,
                       flags=code.co_flags & _FUTURE_FLAGS)
    except (SyntaxError, ValueError):
        return True
    wrapper = _nested_named(made, _WRAPPER)
    inner = None if wrapper is None else next(
        (c for c in wrapper.co_consts if isinstance(c, type(code)) and c.co_name == code.co_name),
        None)
    return inner is None or _same_instructions(inner, code)


#: The name of the function :func:`_runs_this_source` compiles a definition in:
#: not an identifier, so that it names no function of the user's (a user's
#: ``outer`` was found in its place, and every call of it refused as stale).
_WRAPPER = "<srcgrad: the definition compiled again>"


def _imported(target) -> list:
    """``import m`` of each global name ``target``'s code reads that holds a
    module (``np``), put before the definition compiled again: Python compiles
    ``np.sin(x)`` of an imported ``np`` as an attribute load and a call, not
    as a method call, so that the bytes of the two codes match where the
    module imported it (:func:`_same_instructions`; where it did not, the
    bytes differ and the instructions are compared)."""
    names, todo = set(), [target.__code__]
    for code in todo:
        names.update(code.co_names)
        todo.extend(c for c in code.co_consts if isinstance(c, type(code)))
    scope = getattr(target, "__globals__", {})
    return [ast.Import(names=[ast.alias(name=name, asname=None)]) for name in sorted(names)
            if isinstance(scope.get(name), type(sys))]


def _same_instructions(made, code) -> bool:
    """Whether :func:`_instructions` of ``made`` and ``code`` are equal: at once
    where their bytes and every table the bytes index are (then so is each
    instruction and its argument); else one instruction at a time, which for
    a long function took a third of its parse."""
    if made.co_code == code.co_code and made.co_consts == code.co_consts \
            and made.co_names == code.co_names and made.co_varnames == code.co_varnames \
            and made.co_cellvars == code.co_cellvars and made.co_freevars == code.co_freevars:
        return True
    return _instructions(made) == _instructions(code)


def _plainly_loaded(target, filename) -> bool:
    """Whether ``target`` was compiled from its file as the file read then, by
    Python's own loader: what :func:`_runs_this_source` can compare.  Not
    srcgrad's generated code (hvp's ``tangent_f``: one file name may stand for
    several versions, and no user edits it), a notebook cell (its text is
    never edited in place, and IPython transforms it before compiling), nor a
    module an import hook rewrote (pytest's assertion rewriting of test files):
    its code is not its text's."""
    if filename.startswith("<") or not os.path.isfile(filename):
        return False
    module = sys.modules.get(getattr(target, "__module__", None) or "")
    loader = getattr(module, "__loader__", None)
    return type(loader) is importlib.machinery.SourceFileLoader \
        and getattr(module, "__file__", None) is not None


#: The ``from __future__`` flags a code object carries, which compile() takes.
_FUTURE_FLAGS = 0
for _feature in ("annotations", "generator_stop", "barry_as_FLUFL"):
    _FUTURE_FLAGS |= getattr(__import__("__future__"), _feature).compiler_flag


def _nested_named(code, name):
    """The code object named ``name`` nested anywhere in ``code``, or None."""
    for const in code.co_consts:
        if isinstance(const, type(code)):
            if const.co_name == name:
                return const
            found = _nested_named(const, name)
            if found is not None:
                return found
    return None


def _stale(target, filename) -> bool:
    """Whether ``target``'s file has no definition of its name at the line its
    code starts on: lines were added or removed above it since it was loaded."""
    lines = linecache.getlines(filename)
    first, name = target.__code__.co_firstlineno, target.__code__.co_name
    if not lines or first > len(lines):
        return bool(lines)
    line = lines[first - 1].lstrip()
    return not (line.startswith("@") or line.startswith((f"def {name}(", f"def {name} ",
                                                          f"async def {name}(")))


def _same_code(node, code, filename) -> bool:
    """Whether compiling the lambda ``node`` gives ``code``'s instructions: compiled
    inside a function whose parameters are ``code``'s free variables, so that
    the names it reads have the scopes they have in ``code``."""
    outer = ast.FunctionDef(
        name=_WRAPPER, args=ast.arguments(
            posonlyargs=[], args=[ast.arg(arg=n) for n in code.co_freevars], vararg=None,
            kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[]),
        body=[ast.Return(value=node)], decorator_list=[], returns=None, type_params=[])
    module = ast.fix_missing_locations(ast.Module(body=[outer], type_ignores=[]))
    try:
        made = compile(module, filename, "exec")
    except (SyntaxError, ValueError):  # pragma: no cover - it parsed
        return False
    function = next(c for c in made.co_consts if isinstance(c, type(code)))
    inner = [c for c in function.co_consts if isinstance(c, type(code))]
    return bool(inner) and _instructions(inner[0]) == _instructions(code)


_SCOPE_LOADS = {"LOAD_GLOBAL", "LOAD_DEREF", "LOAD_NAME", "LOAD_CLASSDEREF"}
_ATTRIBUTE_LOADS = {"LOAD_ATTR", "LOAD_METHOD"}
_BOOKKEEPING = {"RESUME", "COPY_FREE_VARS", "MAKE_CELL", "CACHE", "PUSH_NULL", "NOP",
                "EXTENDED_ARG"}  # (jump offsets, which line numbers move, take it or not)
_JUMPS = set(dis.hasjrel) | set(dis.hasjabs)


def _instructions(code) -> list:
    """``code``'s instructions as ``(operation, argument)``, without those that
    depend on the scope it was compiled in (cells, the offsets of jumps)."""
    return [("LOAD" if i.opname in _SCOPE_LOADS else
             "LOAD_ATTR" if i.opname in _ATTRIBUTE_LOADS else i.opname,
             None if isinstance(i.argval, type(code)) or i.opcode in _JUMPS
             or (isinstance(i.argval, str) and "<lambda>" in i.argval)  # a qualified name
             else i.argval)
            for i in dis.get_instructions(code) if i.opname not in _BOOKKEEPING]


def _lambda_name(node, parents) -> str:
    """``objective`` for ``objective = lambda ...``; otherwise ``lambda``."""
    parent = parents.get(node)
    if isinstance(parent, ast.Assign) and len(parent.targets) == 1 \
            and isinstance(parent.targets[0], ast.Name):
        return parent.targets[0].id
    if isinstance(parent, ast.AnnAssign) and isinstance(parent.target, ast.Name):
        return parent.target.id
    return "lambda"


def _indent_width(text: str) -> int:
    for line in text.splitlines():
        if line.strip():
            return len(line) - len(line.lstrip())
    return 0


class _FastToGast(gast.ast3.Ast3ToGAst):
    """gast's converter, with the node kinds it converts generically (all but a
    few) copied directly: its ``ast.NodeTransformer`` dispatch was most of the
    parse of a long function.  The tree is the one ``gast.parse`` makes."""

    def _visit(self, node):
        kind = type(node)
        if kind is list:
            return [self._visit(n) for n in node]
        twin = _GENERIC.get(kind)
        if twin is None:
            return self.visit(node) if isinstance(node, ast.AST) else node
        # the new node's __dict__ filled directly: what gast's constructor does
        # with keywords (its fields, in order), less a call per node
        values = node.__dict__
        new = twin.__new__(twin)
        made = new.__dict__
        if kind is ast.Name:  # a third of the nodes: gast's two fields of its own None
            made["id"] = values["id"]
            made["ctx"] = self._visit(values["ctx"])
            made["annotation"] = made["type_comment"] = None
            if not _LOCATION.issubset(values):
                return ast.copy_location(new, node)
            for attr in _LOCATION_ORDER:  # (ast.copy_location of a parsed node)
                value = values[attr]
                if value is not None or attr.startswith("end_"):
                    made[attr] = value
            return new
        visit = self._visit
        for f in kind._fields:
            if f in values:
                value = values[f]
                made[f] = visit(value) if type(value) is list or isinstance(value, ast.AST) \
                    else value
            elif hasattr(node, f):
                made[f] = getattr(node, f)
        for attr in kind._attributes:
            if attr in values:
                made[attr] = values[attr]
        return new

    def visit(self, node):
        return self._visit(node) if type(node) in _GENERIC else super().visit(node)


def _generic_kinds() -> dict:
    """``ast`` node classes gast's converter copies field by field (no ``visit_``
    method of its own), with their gast classes; and ``Name``, done here."""
    kinds = {}
    for name in dir(ast):
        kind, twin = getattr(ast, name), getattr(gast, name, None)
        if isinstance(kind, type) and issubclass(kind, ast.AST) and isinstance(twin, type) \
                and getattr(gast.ast3.Ast3ToGAst, f"visit_{name}", None) is \
                getattr(ast.NodeTransformer, f"visit_{name}", None):
            kinds[kind] = twin
    kinds[ast.Name] = gast.Name
    return kinds


_GENERIC = _generic_kinds()
_LOCATION_ORDER = ("lineno", "col_offset", "end_lineno", "end_col_offset")
_LOCATION = frozenset(_LOCATION_ORDER)


def _to_gast(tree):
    """``tree`` (an ``ast`` tree) as gast: what ``gast.ast_to_gast`` returns."""
    return _FastToGast().visit(tree)


def _find_definition(module, fn):
    # the code's name is the def's: functools.wraps gives a wrapper the __name__
    # of the function it wraps
    name = fn.__code__.co_name
    for node in module.body:  # the first a breadth-first walk meets, if there is one
        if isinstance(node, gast.FunctionDef) and node.name == name:
            return node
    for node in walk(module):
        if isinstance(node, gast.FunctionDef) and node.name == name:
            return node
    return None


def _relocate(tree, line_offset: int, col_offset: int) -> None:
    for node in walk(tree):
        if hasattr(node, "lineno") and node.lineno is not None:
            node.lineno += line_offset
            if getattr(node, "end_lineno", None) is not None:
                node.end_lineno += line_offset
            if getattr(node, "col_offset", None) is not None:
                node.col_offset += col_offset
            if getattr(node, "end_col_offset", None) is not None:
                node.end_col_offset += col_offset


class Resolver:
    """What a free name of the function refers to, looked up as Python would."""

    def __init__(self, globals_: dict, closure: dict[str, object], qualname: str):
        self.globals = globals_
        self.closure = closure
        self.qualname = qualname

    @classmethod
    def for_function(cls, fn) -> "Resolver":
        cells = {}
        for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
            try:
                cells[name] = cell.cell_contents
            except ValueError:  # an empty cell: the name is not bound yet
                cells[name] = _MISSING
        return cls(fn.__globals__, cells, fn.__qualname__)

    def lookup(self, name: str):
        """The object ``name`` refers to, or ``_MISSING``; an autograd wrapper
        is what it wraps (:mod:`.foreign`)."""
        if name in self.closure:
            return native(self.closure[name], name)
        if name in self.globals:
            return native(self.globals[name], name)
        return getattr(builtins, name, _MISSING)

    def where(self, name: str) -> str:
        """'closure', 'global' or 'builtin': where ``name`` was found."""
        if name in self.closure:
            return "closure"
        if name in self.globals:
            return "global"
        return "builtin"

    def has(self, name: str) -> bool:
        return self.lookup(name) is not _MISSING


def static_value(node, resolver: Resolver, local_names=frozenset()):
    """The object a Name or attribute chain of free names refers to, or
    ``_MISSING`` when it is not static (it starts at a local variable, or an
    attribute does not exist)."""
    if isinstance(node, gast.Name):
        if getattr(node, "helper", None) is not None:  # a runtime helper the compiler wrote
            return node.helper
        if node.id in local_names:
            return _MISSING
        return native(resolver.lookup(node.id), node.id)
    if isinstance(node, gast.Attribute):
        base = static_value(node.value, resolver, local_names)
        if base is _MISSING:
            return _MISSING
        return native(getattr(base, node.attr, _MISSING), node.attr)
    return _MISSING


def root_name(node) -> str | None:
    """``np`` for ``np.linalg.norm``; None when the chain does not start at a name."""
    while isinstance(node, gast.Attribute):
        node = node.value
    return node.id if isinstance(node, gast.Name) else None


MISSING = _MISSING

__all__ = ["MISSING", "ParsedFunction", "Resolver", "SourceNotFoundError", "lambda_identity",
           "lambda_spans", "located_error", "parse_function", "root_name", "static_value",
           "UnsupportedSyntaxError"]
