"""Rules for both modes from one declaration: ``pointwise``, ``linear``, ``alias``.

Most primitives need no hand-written pair of rules, because one mode follows
from the other:

* a unary elementwise function is its derivative:
  ``pointwise(np.tanh, lambda x, out: 1 - out ** 2)`` gives the adjoint
  ``d_out * (1 - out ** 2)`` and the tangent ``d_x * (1 - out ** 2)``;
* a linear primitive's tangent is the primitive applied to the tangent (JAX's
  ``deflinear``, autograd's ``def_linear``), so ``@linear`` on its transpose,
  the adjoint rule, gives both;
* an operator or an ``ndarray`` method with a NumPy twin (``a + b`` and
  ``np.add``, ``x.squeeze()`` and ``np.squeeze``) takes the twin's rules with
  :func:`alias`, its parameters renamed where the twin's names differ.

What these write are ordinary rule functions: source text, compiled, with the
text kept in :mod:`linecache` (as ``attrs`` does for the methods it writes), so
the inliner, ``inspect.getsource``, tracebacks and pdb read them like
hand-written ones, and registration checks them the same way.  The text is
the one a person would write (``d_out / (2 * out)``, not ``d_out * (1 / (2 *
out))``), so generated code reads as before.
"""

from __future__ import annotations

import ast
import copy
import inspect
import itertools
import linecache
import operator
import textwrap
from functools import cache

from ..errors import RuleError
from .registry import (
    RULE_GLOBALS,
    adjoint,
    display_name,
    lookup,
    lookup_tangent,
    tangent,
)

_FILES = itertools.count(1)


def _compile(func: ast.FunctionDef, module: str):
    """The function ``func`` defines, its source readable by ``inspect``."""
    func.decorator_list = []
    module_tree = ast.Module(body=[func], type_ignores=[])
    source = ast.unparse(ast.fix_missing_locations(module_tree)) + "\n"
    filename = f"<srcgrad rule {module}.{func.name} {next(_FILES)}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = dict(RULE_GLOBALS)
    exec(compile(source, filename, "exec"), namespace)  # noqa: S102 - our own text
    fn = namespace[func.name]
    fn.__module__ = module
    return fn


def _function(name, params, body) -> ast.FunctionDef:
    """``def name(*params): body`` (parsed, so every Python version fills its fields)."""
    func = ast.parse(f"def {name}({', '.join(params)}): pass").body[0]
    func.body = body
    return func


def _name(primitive, name) -> str:
    base = (name or display_name(primitive)).rpartition(".")[2]
    return base if base.isidentifier() else "rule"


# -- pointwise -------------------------------------------------------------------------

def pointwise(primitive, derivative, *, name: str | None = None, singular=False) -> None:
    """Register both rules of a unary elementwise ``primitive`` from its
    ``derivative``, a one-line lambda of the argument (any name) and,
    optionally, ``out``.

    The derivative multiplies into the cotangent for the adjoint and into the
    tangent for the tangent rule (``singular``: a derivative infinite somewhere,
    ``np.sqrt``'s at 0, whose tangent term is ``only_where(term, d_x != 0)``,
    so that a zero tangent -- the input not moving, below a ``np.maximum``
    that cut it off -- stays exactly 0 rather than ``0 * inf = NaN``), written
    as a person would: a leading
    ``1 /`` becomes a division, a leading minus moves onto the cotangent, the
    factors of a product that does not start with a number multiply in one by
    one.

        >>> import numpy as np
        >>> from srcgrad.rules import lookup, lookup_tangent, registry
        >>> restore = registry.restore_point()
        >>> pointwise(np.arccos, lambda x: -1 / np.sqrt(1 - x ** 2))
        >>> print(inspect.getsource(lookup(np.arccos).fn).rstrip())
        def arccos(out, d_out, x):
            return -d_out / np.sqrt(1 - x ** 2)
        >>> print(inspect.getsource(lookup_tangent(np.arccos).fn).rstrip())
        def arccos(out, x, d_x):
            return -d_x / np.sqrt(1 - x ** 2)
        >>> float(lookup(np.arccos).fn(0.5, 2.0, 0.0))
        -2.0
        >>> restore()
    """
    lam = _lambda_tree(derivative)
    names = [a.arg for a in lam.args.args]
    primal = [n for n in names if n != "out"]
    label = name or display_name(primitive)
    if len(primal) != 1 or lam.args.vararg or lam.args.kwonlyargs or lam.args.kwarg:
        raise RuleError(f"pointwise rule for {label}: the derivative takes the argument and "
                        f"optionally 'out', not {tuple(names)}")
    x, fname, module = primal[0], _name(primitive, name), derivative.__module__

    def rule(params, grad, guarded=False):
        term = _times(ast.Name(id=grad), copy.deepcopy(lam.body))
        if guarded:  # only_where(d_x / (2 * out), d_x != 0)
            term = ast.Call(func=ast.Name(id="only_where"), args=[term, ast.Compare(
                left=ast.Name(id=grad), ops=[ast.NotEq()], comparators=[ast.Constant(0)])],
                keywords=[])
        return _compile(_function(fname, params, [ast.Return(value=term)]), module)

    adjoint(primitive, name=name)(rule(["out", "d_out", x], "d_out"))
    tangent(primitive, name=name)(rule(["out", x, f"d_{x}"], f"d_{x}", singular))


def _is_unit(node) -> bool:
    """``1`` or ``-1``."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        node = node.operand
    return isinstance(node, ast.Constant) and type(node.value) in (int, float) and node.value == 1


def _times(g, d):
    """``g`` times the derivative ``d``, spelt as by hand."""
    if isinstance(d, ast.Constant) and _is_unit(d):
        return g
    if isinstance(d, ast.UnaryOp) and isinstance(d.op, ast.USub):
        return _times(ast.UnaryOp(op=ast.USub(), operand=g), d.operand)
    if isinstance(d, ast.BinOp) and isinstance(d.op, ast.Div) and _is_unit(d.left):
        return ast.BinOp(left=_times(g, d.left), op=ast.Div(), right=d.right)
    if isinstance(d, ast.BinOp) and isinstance(d.op, ast.Mult) \
            and not isinstance(d.left, ast.Constant):
        return ast.BinOp(left=_times(g, d.left), op=ast.Mult(), right=d.right)
    return ast.BinOp(left=g, op=ast.Mult(), right=d)


def _lambda_tree(fn) -> ast.Lambda:
    code = getattr(fn, "__code__", None)
    if code is None or fn.__name__ != "<lambda>":
        raise RuleError(f"a pointwise derivative must be a lambda, not {fn!r}")
    params = list(code.co_varnames[:code.co_argcount])
    found = [node for node in _lambdas(code.co_filename).get(code.co_firstlineno, ())
             if [a.arg for a in node.args.args] == params]
    if len(found) != 1:
        where = f"{code.co_filename}, line {code.co_firstlineno}"
        raise RuleError(f"{where}: write one pointwise derivative per line" if found
                        else f"{where}: the source of the derivative cannot be read")
    return found[0]


@cache
def _lambdas(filename) -> dict[int, list[ast.Lambda]]:
    """The lambdas of a rules module by first line, read once per module
    (walking the module's tree for each of its lambdas made importing the
    rules quadratic in their number)."""
    by_line = {}
    for node in ast.walk(ast.parse("".join(linecache.getlines(filename)))):
        if isinstance(node, ast.Lambda):
            by_line.setdefault(node.lineno, []).append(node)
    return by_line


# -- linear ------------------------------------------------------------------------------

#: Primitives generated code spells as syntax rather than as a call.
_SYNTAX = {
    operator.getitem: lambda a, b: ast.Subscript(value=a, slice=b, ctx=ast.Load()),
}


def linear(primitive, *wrt: str, name: str | None = None, call: str | None = None,
           keywords=(), unused=()):
    """Register the decorated transpose as the adjoint rule of ``primitive``,
    linear in each parameter of ``wrt`` (the others fixed), and derive its
    tangent rule: the primitive applied with that parameter's tangent in its
    place.

    The tangent calls ``call`` (by default the primitive's display name;
    ``a[index]`` as syntax) with the parameters of the transpose: those
    without a default positionally; those with one positionally, all of them
    where one differs from its default and none otherwise; ``keywords`` (and
    keyword-only parameters) as keywords, up to the last one that differs from
    its default (a flag that defaults to False as ``flag=True``); ``unused``
    not at all.  The ``if`` tests this takes are folded at inlining, so a call
    site gets the call a person would write there.

        >>> import numpy as np
        >>> from srcgrad.rules import lookup_tangent, registry
        >>> from srcgrad.runtime import move_cotangent
        >>> restore = registry.restore_point()
        >>> @linear(np.flip, "m")
        ... def flip(out, d_out, m, axis=None):
        ...     return move_cotangent(d_out, np.flip, axis)
        >>> print(inspect.getsource(lookup_tangent(np.flip).fn).rstrip())
        def flip(out, m, axis=None, *, d_m):
            if axis is None:
                return np.flip(d_m)
            return np.flip(d_m, axis)
        >>> restore()
    """

    def register(transpose):
        adjoint(primitive, *wrt, name=name)(transpose)
        rule = lookup(primitive)
        spell = _SYNTAX.get(primitive) or _caller(call or rule.name)
        func = _linear_tangent(transpose.__name__, rule, spell, keywords, unused)
        tangent(primitive, *rule.wrt, name=name)(_compile(func, transpose.__module__))
        return transpose

    return register


def _caller(dotted):
    func = ast.parse(dotted, mode="eval").body
    return lambda *args, keywords=(): ast.Call(func=copy.deepcopy(func), args=list(args),
                                               keywords=list(keywords))


def _linear_tangent(fname, rule, spell, keywords, unused) -> ast.FunctionDef:
    params = list(rule.signature.parameters.values())
    label = rule.name
    if any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in params) \
            or any(p.default is not p.empty for p in params if p.name in rule.wrt):
        raise RuleError(f"linear rule for {label}: its linear parameters must be plain ones")
    by_name = {p.name: p for p in params}
    unknown = (set(keywords) | set(unused)) - set(by_name)
    if unknown:
        raise RuleError(f"linear rule for {label}: no parameters {sorted(unknown)}")
    positional = [p for p in params if p.kind is not p.KEYWORD_ONLY
                  and p.name not in keywords and p.name not in unused]
    required = [p.name for p in positional if p.default is p.empty]
    optional = [p for p in positional if p.default is not p.empty]
    named = [p for p in params if p.name not in unused
             and (p.name in keywords or p.kind is p.KEYWORD_ONLY)]

    def terms(with_optional, passed):
        out = []
        for w in rule.wrt:
            args = [ast.Name(id=f"d_{n}" if n == w else n) for n in required]
            args += [ast.Name(id=p.name) for p in optional] if with_optional else []
            kws = [ast.keyword(arg=k, value=v) for k, v in passed]
            out.append(spell(*args, keywords=kws) if kws else spell(*args))
        return out[0] if len(out) == 1 else ast.Tuple(elts=out, ctx=ast.Load())

    def leaf(passed):
        if not optional:
            return [ast.Return(value=terms(False, passed))]
        tests = [_at_default(p) for p in optional]
        test = tests[0] if len(tests) == 1 else ast.BoolOp(op=ast.And(), values=tests)
        return [ast.If(test=test, body=[ast.Return(value=terms(False, passed))], orelse=[]),
                ast.Return(value=terms(True, passed))]

    def emit(kws):
        if not kws:
            return leaf([])
        *rest, last = kws
        passed = [(p.name, ast.Name(id=p.name)) for p in rest]
        if last.default is last.empty:  # always passed, and so is every one before it
            return leaf([*passed, (last.name, ast.Name(id=last.name))])
        if last.default is False:  # a flag: passed as flag=True where it is set
            return [ast.If(test=ast.Name(id=last.name), orelse=[],
                           body=leaf([*passed, (last.name, ast.Constant(value=True))])),
                    *emit(rest)]
        return [ast.If(test=_at_default(last), body=emit(rest), orelse=[]),
                *leaf([*passed, (last.name, ast.Name(id=last.name))])]

    func = _function(fname, [], emit(named))
    func.args = _tangent_arguments(params, rule.wrt)
    return func


def _at_default(param):
    if param.default is None or isinstance(param.default, bool):  # where=True: may be an array
        return ast.Compare(left=ast.Name(id=param.name), ops=[ast.Is()],
                           comparators=[ast.Constant(value=param.default)])
    if param.default is None:
        return ast.Compare(left=ast.Name(id=param.name), ops=[ast.Is()],
                           comparators=[ast.Constant(value=None)])
    return ast.Compare(left=ast.Name(id=param.name), ops=[ast.Eq()],
                       comparators=[ast.Constant(value=param.default)])


def _tangent_arguments(params, wrt) -> ast.arguments:
    """``(out, <params>, d_<wrt>...)``; the tangents keyword-only after a default."""
    args = ast.arguments(posonlyargs=[], args=[ast.arg("out")], vararg=None, kwonlyargs=[],
                         kw_defaults=[], kwarg=None, defaults=[])
    for p in params:
        if p.kind is p.KEYWORD_ONLY:
            args.kwonlyargs.append(ast.arg(p.name))
            args.kw_defaults.append(None if p.default is p.empty
                                    else ast.Constant(value=p.default))
            continue
        (args.posonlyargs if p.kind is p.POSITIONAL_ONLY else args.args).append(ast.arg(p.name))
        if p.default is not p.empty:
            args.defaults.append(ast.Constant(value=p.default))
    tangents = [ast.arg(f"d_{w}") for w in wrt]
    if args.defaults or args.kwonlyargs:
        args.kwonlyargs += tangents
        args.kw_defaults += [None] * len(tangents)
    else:
        args.args += tangents
    return args


# -- alias -----------------------------------------------------------------------------

def alias(primitive, twin, *params: str, name: str | None = None) -> None:
    """Give ``primitive`` the rules of ``twin`` in both modes (whichever it
    has), with the twin's parameters renamed to ``params`` where given: an
    operator or method and the NumPy function that computes the same.

    The copies belong to the module that declares the alias (where
    docs/supported.md lists them); a rule registered for ``primitive``
    afterwards replaces its copy (``a @ b``'s tangent stays ``d_a @ b``).

        >>> import operator, numpy as np
        >>> from srcgrad.rules import lookup_tangent, registry
        >>> restore = registry.restore_point()
        >>> alias(operator.sub, np.subtract, "a", "b", name="-")
        >>> print(inspect.getsource(lookup_tangent(operator.sub).fn).rstrip())
        def subtract_tangent(out, a, b, d_a, d_b):
            ...
            return (expand(d_a, out), expand(-d_b, out))
        >>> restore()
    """
    module = inspect.currentframe().f_back.f_globals.get("__name__", __name__)
    rules = [(lookup(twin), adjoint), (lookup_tangent(twin), tangent)]
    if all(rule is None for rule, _ in rules):
        raise RuleError(f"alias of {name or display_name(primitive)}: "
                        f"{display_name(twin)} has no rules")
    for rule, register in rules:
        if rule is None:
            continue
        if len(params) > len(rule.params):
            raise RuleError(f"alias of {rule.name}: more names than parameters {rule.params}")
        renames = dict(zip(rule.params, params))
        if register is tangent:  # and the tangents d_<name>
            renames.update({f"d_{old}": f"d_{new}" for old, new in list(renames.items())})
        func = _renamed(_source_tree(rule.fn), renames, rule.name)
        doc = ast.Expr(value=ast.Constant(value=f"A copy of {rule.name}'s rule."))
        if ast.get_docstring(func) is not None:
            func.body = func.body[1:]
        func.body.insert(0, doc)
        wrt = [renames.get(w, w) for w in rule.wrt]
        register(primitive, *wrt, name=name)(_compile(func, module))


def _source_tree(fn) -> ast.FunctionDef:
    return ast.parse(textwrap.dedent(inspect.getsource(fn))).body[0]


def _renamed(func, renames, label) -> ast.FunctionDef:
    taken = {n.id if isinstance(n, ast.Name) else n.arg for n in ast.walk(func)
             if isinstance(n, (ast.Name, ast.arg))}
    clash = sorted((taken - set(renames)) & set(renames.values()))
    if clash:
        raise RuleError(f"alias of {label}: the rule already uses the names {clash}")
    for node in ast.walk(func):
        if isinstance(node, ast.Name):
            node.id = renames.get(node.id, node.id)
        elif isinstance(node, ast.arg):
            node.arg = renames.get(node.arg, node.arg)
    return func
