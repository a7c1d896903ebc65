"""Effects: which statements a recompute or a rerun must not execute again.

The memory policies run forward statements a second time -- a recompute in the
adjoint sweep, the rerun of a checkpointed loop's iterations, the rerun of a
block marked with :func:`srcgrad.checkpoint`.  That is sound for a pure
operation only.  A random draw (``rng.normal()``, ``np.random.rand(3)``,
``random.gauss(0, 1)``) gives another number the second time, ``next(it)``
another item, ``lst.pop()`` another element (and changes ``lst`` again).  So a
value computed by a call is recomputed only when the call is *known* pure: a
rule of srcgrad's, a NumPy function outside ``numpy.random`` that changes none
of its arguments, ``math``, a builtin without effects, an array's method that
changes nothing.  An unknown method or function is taken to have effects.

This module is the purity table.  :func:`call_effect` says why a call may not
run twice (None when it may); :func:`value_effect` does it for a statement's
value, whatever its primitive; :func:`mutated_names` lists the names a call
may change in place (``lst.remove(c)`` changes ``lst``).

    >>> import gast, numpy as np
    >>> expr = lambda s: gast.parse(s).body[0].value
    >>> call_effect(expr("np.random.normal(size=3)"), {"np": np})
    'a random draw'
    >>> call_effect(expr("rng.normal()"), {"np": np})
    'a random draw'
    >>> call_effect(expr("next(it)"), {})
    'next() advances an iterator'
    >>> call_effect(expr("lst.remove(c)"), {})
    'a method that changes its object'
    >>> call_effect(expr("np.tanh(x).sum()"), {"np": np}) is None
    True
"""

from __future__ import annotations

import ast
import builtins
import inspect
import random
import textwrap
import types
import weakref

import gast
import numpy as np

from .. import ir
from ..frontend.linker import CalleePair, is_library_module
from ..ir.syntax import walk_nodes
from ..rules import registry

RANDOM = "a random draw"
NEXT = "next() advances an iterator"
MUTATES = "a method that changes its object"
UNKNOWN = "a call with unknown effects"
CHANGES_ARGUMENT = "a call that changes its argument"
STORES_ATTRIBUTE = "an assignment to an attribute of an object it is given"

#: Methods that change their object in place.
MUTATING = frozenset({"append", "extend", "insert", "pop", "remove", "clear", "update",
                      "add", "discard", "setdefault", "popitem", "sort", "reverse", "fill",
                      "put", "resize", "itemset", "setflags", "partition", "shuffle",
                      "difference_update", "intersection_update",
                      "symmetric_difference_update", "__setitem__", "__delitem__"})

#: Method names of NumPy's and Python's generators: ``rng.normal()`` on a name whose
#: object srcgrad does not know is still recognised as a draw.
_DRAWS = frozenset({
    "random", "rand", "randn", "randint", "random_sample", "random_integers", "normal",
    "standard_normal", "uniform", "integers", "choice", "permutation", "permuted", "shuffle",
    "exponential", "standard_exponential", "gamma", "standard_gamma", "beta", "binomial",
    "poisson", "multivariate_normal", "lognormal", "laplace", "logistic", "gumbel",
    "chisquare", "dirichlet", "geometric", "multinomial", "negative_binomial", "pareto",
    "rayleigh", "standard_cauchy", "standard_t", "triangular", "vonmises", "wald",
    "weibull", "zipf", "bytes", "gauss", "normalvariate", "randrange", "sample",
    "betavariate", "expovariate", "gammavariate", "lognormvariate", "paretovariate",
    "weibullvariate", "getrandbits", "bit_generator", "spawn", "jumped"})

#: Builtins that compute a value and change nothing.
_PURE_BUILTINS = frozenset({
    abs, len, min, max, sum, float, int, bool, round, pow, range, tuple, list, sorted,
    reversed, zip, enumerate, any, all, divmod, isinstance, complex, str, map, filter, iter,
    dict, set, frozenset, slice, hash, repr, type, callable, getattr, hasattr, id, ord, chr})

#: NumPy functions that write into an argument.
NUMPY_WRITERS = frozenset({"copyto", "put", "place", "putmask", "fill_diagonal",
                           "put_along_axis", "seterr", "set_printoptions"})

_MISSING = object()


def _resolve(node, free):
    """The object a call's callee names (a free name, an attribute chain on one,
    a builtin), or ``_MISSING`` -- a method of a local variable."""
    if isinstance(node, gast.Name):
        if node.id in free:
            return free[node.id]
        return getattr(builtins, node.id, _MISSING)
    if isinstance(node, gast.Attribute):
        base = _resolve(node.value, free)
        if base is _MISSING or not isinstance(base, (types.ModuleType, type)):
            return _MISSING
        return getattr(base, node.attr, _MISSING)
    return _MISSING


def _random_owner(obj) -> bool:
    return isinstance(obj, (np.random.RandomState, np.random.Generator, random.Random,
                            np.random.BitGenerator))


def function_effect(fn) -> str | None:
    """Why calling the Python function or other object ``fn`` may not be done twice,
    or None when it is known pure."""
    try:
        if registry.lookup(fn) is not None or registry.is_nondifferentiable(fn):
            return None
    except TypeError:
        pass
    if isinstance(fn, np.ufunc):
        return None
    if fn is next:
        return NEXT
    if hashable(fn) and fn in _PURE_BUILTINS:
        return None
    owner = getattr(fn, "__self__", None)
    if owner is not None and not isinstance(owner, types.ModuleType):
        if _random_owner(owner):
            return RANDOM
        name = getattr(fn, "__name__", "")
        if isinstance(owner, np.ndarray) and name not in MUTATING and hasattr(np.ndarray, name):
            return None
        return MUTATES if name in MUTATING else UNKNOWN
    module = getattr(fn, "__module__", None) or ""
    if module.startswith("numpy.random") or module == "random" or fn is random \
            or (isinstance(fn, type) and issubclass(fn, (np.random.RandomState,
                                                         np.random.Generator))):
        return RANDOM
    if module.split(".")[0] == "numpy":
        return CHANGES_ARGUMENT if getattr(fn, "__name__", "") in NUMPY_WRITERS else None
    if module in ("math", "cmath") or module.startswith("srcgrad.runtime."):
        return None  # srcgrad's runtime helpers compute values
    if inspect.isfunction(fn) and not is_library_module(module):
        return _source_effect(fn)
    return UNKNOWN


def hashable(obj) -> bool:
    """Whether ``obj`` can be looked up in a dict or set: a callable met in user
    code may be unhashable (an instance defining ``__eq__`` alone), and asking
    ``fn in _PURE_BUILTINS`` of it would raise TypeError instead of answering
    no.  One definition for the lookups here and in api/explain.py."""
    try:
        hash(obj)
    except TypeError:
        return False
    return True


def call_effect(call, free) -> str | None:
    """Why the call expression ``call`` may not be made twice, or None.

    ``free`` maps the function's free names to their objects."""
    fn = _resolve(call.func, free)
    if fn is not _MISSING:
        return function_effect(fn)
    if isinstance(call.func, gast.Attribute):  # a method of a local value
        name = call.func.attr
        if name in _DRAWS:
            return RANDOM
        if name in MUTATING:
            return MUTATES
        if hasattr(np.ndarray, name) or name in ("copy", "get", "keys", "values", "items",
                                                   "index", "count"):
            return None
    return UNKNOWN


def expression_effect(node, free) -> str | None:
    """The first effect of a call inside the expression ``node``, or None."""
    for sub in walk_nodes(node):
        if isinstance(sub, gast.Call):
            why = call_effect(sub, free)
            if why is not None:
                return why
    return None


def value_effect(stmt, free) -> str | None:
    """Why the value a forward statement assigns may differ when computed again,
    or None.  A statement without ``op`` (kept whole) is looked at as an
    expression."""
    if not isinstance(stmt, gast.Assign):
        return None
    op = getattr(stmt, "op", None)
    prim = getattr(op, "primitive", None)
    if isinstance(prim, CalleePair):
        return function_effect(prim.fn)
    if isinstance(prim, ir.UnknownMember):
        if not prim.is_call:
            return None
        return RANDOM if prim.name in _DRAWS else MUTATES if prim.name in MUTATING else UNKNOWN
    if op is None or prim is ir.OPAQUE or isinstance(prim, ir.Builder):
        return expression_effect(stmt.value, free)
    try:
        if registry.lookup(prim) is not None or registry.is_nondifferentiable(prim):
            return expression_effect(stmt.value, free) if prim is ir.OPAQUE else None
    except TypeError:
        pass
    return function_effect(prim)


def mutated_names(stmt, free) -> set[str]:
    """Names a statement's calls may change in place: the object of a method with
    effects (``lst.remove(c)``, ``it`` of ``next(it)``), the arguments of a
    function that writes into them (``np.random.shuffle(a)``)."""
    out: set[str] = set()
    value = getattr(stmt, "value", None)
    if value is None or isinstance(stmt, (gast.If, gast.For, gast.While)) or ir.is_update(stmt) \
            or isinstance(getattr(getattr(stmt, "op", None), "primitive", None), CalleePair):
        return out  # tracked as updates; a user function's are made explicit
    for sub in walk_nodes(value):
        if not isinstance(sub, gast.Call) \
                or isinstance(sub.func, gast.Name) and _resolve(sub.func, free) is _MISSING:
            continue
        why = call_effect(sub, free)
        if why is None or why == RANDOM and _resolve(sub.func, free) is _MISSING \
                and getattr(sub.func, "attr", "") not in ("shuffle", "permuted"):
            continue
        if isinstance(sub.func, gast.Attribute) and isinstance(sub.func.value, gast.Name) \
                and why != RANDOM:
            out.add(sub.func.value.id)
        if why in (NEXT, CHANGES_ARGUMENT, UNKNOWN) or getattr(sub.func, "attr", "") in (
                "shuffle", "permuted"):
            out.update(a.id for a in sub.args if isinstance(a, gast.Name))
    return out


def passed_to_writers(stmt, free) -> set[str]:
    """The names ``stmt`` passes to a call that may write into them, on top of
    :func:`mutated_names`: a user function run as it is (``bump(a)``, whose
    ``v[1] += 1.0`` is no call this table sees, so that it counts as pure for
    running twice), wherever the statement calls it.  (Used where a copy too
    many costs only time: the draws a checkpointed loop keeps.)"""
    if isinstance(stmt, (gast.If, gast.For, gast.While)) or ir.is_update(stmt):
        return set()
    op = getattr(stmt, "op", None)
    prim = getattr(op, "primitive", None)
    if isinstance(prim, CalleePair):
        return set()  # a differentiated user function's updates are made explicit
    out = set(mutated_names(stmt, free))
    if op is not None and prim is not ir.OPAQUE and _writer(prim):
        out.update(n for a in [*op.args, *op.kwargs.values()] for n in ir.names_in(a))
    for sub in walk_nodes(getattr(stmt, "value", None) or gast.Pass()):
        if isinstance(sub, gast.Call) and _writer(_resolve(sub.func, free)):
            out.update(n for a in [*sub.args, *(k.value for k in sub.keywords)]
                       for n in ir.names_in(a))
    return out


def _writer(fn) -> bool:
    """A user function (its source may write into what it is given) or a call
    that changes an argument or whose effects are unknown."""
    if fn is _MISSING or not callable(fn):
        return False
    if inspect.isfunction(fn) and not is_library_module(getattr(fn, "__module__", None) or ""):
        return True
    return function_effect(fn) in (UNKNOWN, CHANGES_ARGUMENT)


def changed_in_place(stmt, free) -> list[str]:
    """The names a statement's calls change in place for certain: the object of a
    method that changes it (``lst.remove(c)``), the array ``rng.shuffle(a)``
    shuffles.  (A call of an unknown function is not counted: srcgrad cannot
    tell.)"""
    out = []
    value = getattr(stmt, "value", None)
    if value is None or isinstance(stmt, (gast.If, gast.For, gast.While)) or ir.is_update(stmt) \
            or isinstance(getattr(getattr(stmt, "op", None), "primitive", None), CalleePair):
        return out
    for sub in walk_nodes(value):
        if not isinstance(sub, gast.Call):
            continue
        why = call_effect(sub, free)
        method = getattr(sub.func, "attr", "")
        if why == MUTATES and isinstance(sub.func, gast.Attribute) \
                and isinstance(sub.func.value, gast.Name):
            out.append(sub.func.value.id)
        elif why == RANDOM and method in ("shuffle", "permuted") and sub.args \
                and isinstance(sub.args[0], gast.Name) and method == "shuffle":
            out.append(sub.args[0].id)
    return out


_SOURCE_EFFECTS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_ACTIVE: set = set()


def _stores_attribute(tree, own) -> bool:
    """Whether ``tree`` assigns an attribute (``self.t += 1``, ``opt.lr = v``) of
    an object it did not make itself (``own``: its locals other than its
    parameters): run twice, the object changes twice."""
    for sub in gast.walk(tree):
        targets = sub.targets if isinstance(sub, gast.Assign) else \
            [sub.target] if isinstance(sub, (gast.AugAssign, gast.AnnAssign)) else []
        for target in targets:
            for part in gast.walk(target):
                if isinstance(part, gast.Attribute) and isinstance(part.ctx, gast.Store):
                    root = part.value
                    while isinstance(root, (gast.Attribute, gast.Subscript)):
                        root = root.value
                    if not (isinstance(root, gast.Name) and root.id in own):
                        return True
    return False


def _source_effect(fn) -> str | None:
    """The first effect of a call in the source of the user function ``fn``
    (srcgrad differentiates it by source: its calls are what it does)."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return UNKNOWN
    try:
        return _SOURCE_EFFECTS[fn]
    except (KeyError, TypeError):
        pass
    if code in _ACTIVE:  # recursion: the other calls decide
        return None
    _ACTIVE.add(code)
    try:
        try:
            tree = gast.ast_to_gast(ast.parse(textwrap.dedent(inspect.getsource(fn))))
        except (OSError, TypeError, SyntaxError):
            return UNKNOWN
        free = dict(fn.__globals__)
        closure = inspect.getclosurevars(fn) if fn.__closure__ else None
        if closure is not None:
            free.update(closure.nonlocals)
        local = {n.id for n in gast.walk(tree) if isinstance(n, gast.Name)
                 and isinstance(n.ctx, (gast.Store, gast.Param))}
        local |= {n.name for n in gast.walk(tree) if isinstance(n, gast.FunctionDef)}
        params = {n.id for n in gast.walk(tree) if isinstance(n, gast.Name)
                  and isinstance(n.ctx, gast.Param)}
        for name in local:
            free.pop(name, None)
        found = STORES_ATTRIBUTE if _stores_attribute(tree, local - params) else None
        for sub in gast.walk(tree):
            if found is not None:
                break
            if not isinstance(sub, gast.Call) or isinstance(sub.func, gast.Name) \
                    and sub.func.id in local:  # a local function: its body is walked too
                continue
            found = call_effect(sub, free)
            receiver = sub.func.value if isinstance(sub.func, gast.Attribute) else \
                sub.args[0] if found == NEXT and sub.args else None
            if found in (MUTATES, NEXT) and isinstance(receiver, gast.Name) \
                    and receiver.id in local - params:
                found = None  # a list or iterator of the function's own, made in each call
            if found is not None:
                break
    finally:
        _ACTIVE.discard(code)
    try:
        _SOURCE_EFFECTS[fn] = found
    except TypeError:
        pass
    return found
