"""How far a called function's updates of its arguments reach, through the
functions it calls in turn.

A helper that passes its argument on (``def mid(a): return setter(a)``)
changes its caller's array as much as ``setter`` does, however many calls
down; so does one passing a part of it (``setter(a[0])``) or a list holding
it (``viaitem([a])``, where ``viaitem`` sets ``lst[0][0]``).  Python shows the
caller the change, srcgrad's code for the helper works on a copy: the caller
must know, to refuse a read afterwards or to check it as it runs.

Every function reachable from the one asked about is summarised once
(:class:`Summary`: its own updates, and which of its parameters each call
passes where), by a ``summarize`` the caller supplies -- it knows how to read
one function's own updates (:func:`.argument_updates.call_summary`).  A
function that calls one of its parameters (``def apply(g, a): return g(a)``)
is summarised for what each call passes it (``apply(setter, y)``: a
``binding`` of ``g`` to ``setter``), as srcgrad specialises its code.  The
effects are the least fixed point over that call graph: a chain of any length
is followed to its end, and recursion stops where nothing new turns up, not
at some depth.  What cannot be followed -- a function whose source cannot be
read, a call whose arguments cannot be matched to its parameters
(``g(*args)``), a parameter called with no function known for it -- counts as
updating, deeply, everything passed to it: a wrong guess costs a copy, a
check or a refusal, never a wrong value.

    >>> s = {"setter": Summary(("p",), item=frozenset({"p"})),
    ...      "mid": Summary(("a",), calls=(("setter", (("p", "a", SAME),), ()),)),
    ...      "viaitem": Summary(("lst",), calls=(("setter", (("p", "lst", PART),), ()),)),
    ...      "top": Summary(("b", "c"), calls=(("mid", (("a", "b", SAME),), ()),
    ...                                        ("viaitem", (("lst", "c", HELD),), ())))}
    >>> found = effects("top", lambda f, binding: s.get(f))
    >>> sorted(found.item), sorted(found.deep)
    (['b', 'c'], ['c'])
    >>> sorted(effects("mid", lambda f, binding: {"mid": s["mid"]}.get(f)).item)
    ['a']
"""

from __future__ import annotations

import functools
import inspect
import types
from dataclasses import dataclass

import gast
import numpy as np

from ..frontend.linker import is_user_function
from ..frontend.parse import MISSING

#: How an argument expression relates to a parameter's memory: the same memory
#: (``a``, ``h`` with ``h = a``), a part of it -- a view or an element (``a[0]``,
#: ``a[1:]``) -- or a container holding it (``[a]``).
SAME, PART, HELD = "same", "part", "held"


@dataclass(frozen=True)
class Summary:
    """One function on its own: ``params``, its parameters; ``item``, those
    whose elements it sets (through any name); ``deep``, those whose held
    arrays (or deeper parts) it may change; ``augmented``, those it changes
    with ``p += v``; ``calls``, for each call to a user function, ``(callee,
    ((callee_param, own_param, relation), ...), binding)`` -- ``callee`` None
    where the call cannot be followed, ``binding`` the ``(callee_param,
    function)`` pairs of the functions it passes (or :data:`PURE`)."""

    params: tuple
    item: frozenset = frozenset()
    deep: frozenset = frozenset()
    augmented: frozenset = frozenset()
    calls: tuple = ()


@dataclass(frozen=True)
class Effects:
    """What a function may do to its parameters, its calls included."""

    item: frozenset = frozenset()
    deep: frozenset = frozenset()
    augmented: frozenset = frozenset()


#: A function passed that changes nothing it is given (a lambda of arithmetic):
#: its calls need no following.
PURE = type("Pure", (), {"__repr__": lambda self: "PURE"})()


def effects(fn, summarize, binding=()) -> Effects:
    """The parameters of ``fn`` that it, or a function it calls at any depth,
    updates (:class:`Effects`); ``summarize(f, binding)`` is ``f``'s
    :class:`Summary` where its parameters hold the functions ``binding``
    pairs them with, or None where ``f`` cannot be read."""
    def key(f, pairs):
        return id(f), tuple((p, id(v)) for p, v in pairs)

    summaries, todo = {}, [(fn, tuple(binding))]
    while todo:
        f, pairs = todo.pop()
        if key(f, pairs) in summaries:
            continue
        summary = summarize(f, dict(pairs))
        summaries[key(f, pairs)] = (f, pairs, summary)  # (kept alive: ids stay theirs)
        if summary is not None:
            todo.extend((c, tuple(b)) for c, _, b in summary.calls if c is not None)
    top = key(fn, tuple(binding))
    if summaries[top][2] is None:
        return Effects()
    state = {k: (set(s.item), set(s.deep), set(s.augmented))
             for k, (_, _, s) in summaries.items() if s is not None}
    changed = True
    while changed:
        changed = False
        for k, (_, _, summary) in summaries.items():
            if summary is None:
                continue
            item, deep, augmented = state[k]
            before = len(item) + len(deep) + len(augmented)
            for callee, pairs, passed in summary.calls:
                theirs = None if callee is None else state.get(key(callee, tuple(passed)))
                for param, own, relation in pairs:
                    if theirs is None:  # not followed: it may change anything passed
                        item.add(own)
                        deep.add(own)
                        continue
                    _carry(theirs, param, own, relation, item, deep, augmented)
            changed = changed or len(item) + len(deep) + len(augmented) != before
    item, deep, augmented = state[top]
    return Effects(frozenset(item), frozenset(deep), frozenset(augmented))


def _carry(theirs, param, own, relation, item, deep, augmented) -> None:
    """What the callee doing ``theirs`` to ``param`` does to ``own``, passed
    there with ``relation`` to it."""
    their_item, their_deep, their_augmented = theirs
    if param in their_deep:  # whatever was passed, the memory below it changes
        item.add(own)
        deep.add(own)
    if relation == HELD:  # setter([a]) sets the list's item, never a's elements
        return
    if param in their_item:
        item.add(own)
        if relation == PART:  # setter(a[0]): an element of a changes
            deep.add(own)
    if param in their_augmented:  # shift(a), and conservatively shift(a[0])
        augmented.add(own)


def user_callable(value):
    """``(function, (n, keywords))`` for a callable whose code is a user
    function's, ``n`` the positional arguments and ``keywords`` the keyword
    arguments it is given before the call's own: a function (0, ()); a bound
    method (``BOX.set``: its receiver, 1); ``functools.partial(setter, ...)``;
    an object whose class defines ``__call__``.  ``(MISSING, None)`` for
    anything else (NumPy's functions, classes, what is not known)."""
    if isinstance(value, types.FunctionType):
        return (value, (0, ())) if is_user_function(value) else (MISSING, None)
    if isinstance(value, types.MethodType):
        inner, preset = user_callable(value.__func__)
        return (inner, (preset[0] + 1, preset[1])) if preset else (MISSING, None)
    if isinstance(value, functools.partial):
        inner, preset = user_callable(value.func)
        return (inner, (preset[0] + len(value.args), (*preset[1], *value.keywords))) \
            if preset else (MISSING, None)
    call = next((k.__dict__["__call__"] for k in type(value).__mro__
                 if "__call__" in k.__dict__), None)
    if value is not MISSING and not isinstance(value, type) \
            and isinstance(call, types.FunctionType) and is_user_function(call):
        return call, (1, ())
    return MISSING, None


def passed_functions(bound, resolve, local=None, follow=None) -> tuple:
    """The ``(param, function)`` pairs of a call's arguments (``bound``: the
    callee's parameter -> the argument's expression) that are functions known
    at compile time (``setter``, ``np.tanh``, a parameter holding one), or a
    lambda or local function (``local``: name -> its node) that changes
    nothing it is given (:data:`PURE`); ``resolve(call)`` names the object a
    call's function refers to, or MISSING; ``follow(fn, call)``, whether the
    call ``call`` of the user function ``fn`` in such a lambda changes
    nothing it passes (``lambda v: act(v) + 1.0``)."""
    found, local = [], local or {}
    for param, arg in bound:
        if isinstance(arg, gast.Name) and arg.id in local:
            arg = local[arg.id]
        if isinstance(arg, gast.Call) and arg.args and isinstance(
                arg.args[0], (gast.Name, gast.Attribute)) and resolve(arg) is functools.partial:
            # partial(np.multiply, w): what it does is what its call does (partials.py)
            arg = gast.Lambda(args=gast.arguments(
                args=[], posonlyargs=[], vararg=None, kwonlyargs=[], kw_defaults=[],
                kwarg=None, defaults=[]), body=gast.Call(
                func=arg.args[0], args=arg.args[1:], keywords=arg.keywords))
        if isinstance(arg, (gast.Lambda, gast.FunctionDef)):
            if _pure_function(arg, resolve, follow):
                found.append((param, PURE))
            continue
        if not isinstance(arg, (gast.Name, gast.Attribute)):
            continue
        value = resolve(gast.Call(func=arg, args=[], keywords=[]))
        if value is PURE or callable(value) and not isinstance(
                value, (type, np.ndarray, types.ModuleType)):
            found.append((param, value))
    return tuple(found)


def default_functions(fn, bound) -> tuple:
    """The ``(param, function)`` pairs of ``fn``'s parameters a call leaves to
    their defaults (``bound``: the names it passes) where the default is a
    function (``def net(x, last=softplus)``, called ``net(x)``): what the
    callee calls there, followed like a function passed."""
    try:
        parameters = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return ()
    return tuple((p.name, p.default) for p in parameters
                 if p.name not in bound and p.default is not p.empty and callable(p.default)
                 and not isinstance(p.default, (type, np.ndarray, types.ModuleType)))


def _pure_function(node, resolve, follow=None) -> bool:
    """Whether the lambda or local function ``node`` changes nothing it is
    given: it stores only into names, updates nothing with ``op=``, and every
    call in it is to a NumPy, math or builtin function that makes a new value
    (not ``np.copyto``, not ``out=``, not a method of its own values), or to
    a user function that ``follow`` finds changing nothing it is passed."""
    own = {n.id for n in gast.walk(node) if isinstance(n, gast.Name)
           and not isinstance(n.ctx, gast.Load)}
    for sub in gast.walk(node):
        if isinstance(sub, (gast.NamedExpr, gast.AugAssign, gast.Delete)) or isinstance(
                sub, (gast.Subscript, gast.Attribute)) and isinstance(sub.ctx, gast.Store):
            return False
        if not isinstance(sub, gast.Call):
            continue
        root = sub.func
        while isinstance(root, gast.Attribute):
            root = root.value
        if not isinstance(root, gast.Name) or root.id in own:
            return False  # a method of what it is given, or a call of it
        if any(k.arg in ("out", None) for k in sub.keywords):
            return False  # np.add(a, b, out=p) writes into p
        value = resolve(sub)
        module = (getattr(value, "__module__", None) or "").split(".")[0]
        if isinstance(value, np.ufunc) or module in ("numpy", "math") and getattr(
                value, "__name__", "") not in _WRITERS or any(
                value is b for b in (abs, len, float, int, min, max, sum, round, pow)):
            continue
        if follow is not None and isinstance(value, types.FunctionType) \
                and is_user_function(value) and follow(value, sub):
            continue  # lambda v: act(v) + 1.0, act changing nothing
        return False
    return True


#: NumPy functions that write into an argument (``np.copyto``, ``np.put``, ...).
_WRITERS = frozenset({"copyto", "put", "place", "putmask", "fill_diagonal",
                      "put_along_axis", "at"})
