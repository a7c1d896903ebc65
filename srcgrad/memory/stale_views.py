"""Refuse a call that changes an array in place after the adjoint sweep's
values were taken from it (a view of it, or the array itself).

``s = np.sum(np.sin(w * x[0])); x.sort()`` with ``x`` an argument srcgrad does
not differentiate: ``x[0]`` is a view of ``x``'s memory, which the adjoint of
``*`` reads, and ``x.sort()`` -- run as written, on the copy of ``x`` the
generated code works on -- changes its elements, so the adjoint reads the
sorted row and the gradient is silently wrong (outside tester T2, session 30:
every row of an RNN's gradient came out equal).  The same for a helper that
writes into its argument (``zero_(x)``, ``def zero_(a): a[...] = 0.0``),
``np.put(x, i, v)``, ``np.add.at(x, idx, v)``, ``np.copyto(x[1:], v)`` or a
ufunc's ``out=x[1:]``.
(``np.copyto(x, v)``, ``x.fill(v)``, ``out=x`` and ``a.sort()`` of a local
array are the element write ``x[...] = v``, whose adjoint puts the old
elements back: see ``whole_write`` in :mod:`..normalize.statements`.)

The same for a method of an object called for what it does (``h.halve()``
with ``self.a *= 0.5``) after a field of the object (``h.a``) was read.
No tape keeps the old elements of an array changed by a call srcgrad runs as
written, so such a program is refused, located at the call, naming the view
as the user wrote it.  Where the view is taken after the call (``x.sort();
s = np.sum(w * x[0])``), or the call changes only a new array nothing read
before it, nothing is stale and nothing is refused.  The array itself read by
the adjoint for a value computed before such a call (``s = np.sum(np.sin(x *
y)); scale_(x, 0.5)``) is refused the same way (after a method's change,
``x.sort()``, by :func:`.remat._refuse_stale_reads`).  And the memory policies
compute nothing again from what such a call may change (:func:`changed_by_calls`):
a recompute would read the new elements, or take a new copy of the caller's.

    >>> import numpy as np
    >>> from ..pipeline import Options, generate
    >>> def f(w, x):
    ...     s = np.sum(np.sin(w * x[0]))
    ...     x.sort()
    ...     return s
    >>> try:
    ...     generate(f, Options())
    ... except UnsupportedSyntaxError as error:
    ...     print(error.message.split(":")[0])
    'x.sort()' changes the elements of 'x' in place after 'x[0]' (line 2), which shares its memory, was read, and the adjoint sweep reads 'x[0]' as it was then
"""

from __future__ import annotations

import inspect
import operator

import gast
import numpy as np

from .. import ir
from ..analysis.sharing import is_view
from ..analysis.slot_writes import user_names
from ..errors import SrcGradError, UnsupportedSyntaxError
from ..frontend.linker import CalleePair, is_library_module
from ..frontend.parse import parse_function
from ..ir.syntax import source_of, walk_nodes
from ..normalize.argument_updates import (
    augmented_parameters,
    deep_parameters,
    updated_arguments,
)
from .effects import CHANGES_ARGUMENT, call_effect, changed_in_place
from .helper_state import (
    helper_of,
    how_it_writes,
    names_changed,
    namespace_helper_read,
    outside_writes,
    returns_outside,
    state_changing_call,
)

__all__ = ["changed_by_calls", "refuse_rebound_globals", "refuse_stale_views"]


def refuse_stale_views(program: ir.Program, backward) -> None:
    """Raise, located at the call, where a call run as written may change the
    memory of a name the adjoint sweep (``backward``) reads that was bound,
    as a view sharing that memory, before the call (or in a loop around
    both)."""
    free = program.free
    statements = list(ir.walk_statements(program.body))
    refuse_rebound_globals(program, statements)
    handed = _refuse_written_returns(program, statements)
    if handed:
        _refuse_stale_handed(program, statements, handed, backward)
    changes = [(stmt, names) for stmt in statements
               if not isinstance(stmt, (gast.If, gast.For, gast.While))
               for names in [_may_change(stmt, free)] if names]
    methods = _changing_methods(program, statements)
    if not changes and not methods:
        return
    read = {n for stmt in ir.walk_statements(backward) for n in ir.names_in(stmt)}
    groups = _memory_groups(statements)
    order = _Order(program.body)
    if methods:
        _refuse_stale_fields(program, statements, methods, read, groups, order)
    fields = _fields(statements)
    user = None
    for stmt, names in changes:
        listed = changed_in_place(stmt, free)
        outside = names_changed(stmt.value, free)
        for name in sorted(names):
            if name in outside:
                _refuse_outside(program, stmt, name, read, groups.get(name, set()) | set(
                    fields.get(name, ())), backward, order)
                continue
            if name in read and name not in listed and order.read_before(name, stmt) \
                    and _read_for_before(name, stmt, backward, order):
                # zero_(x) after s = np.sum(w * x): the adjoint reads x itself for
                # what was computed before the call (a method's change of x is
                # _refuse_stale_reads's)
                user = user or user_names(program, statements)
                raise _refused(program, stmt, (
                    f"'{_shown_call(stmt)}' changes the elements of '{user(name)}' in place "
                    f"after a value was computed from it, and the adjoint sweep reads "
                    f"'{user(name)}' as it was then: srcgrad keeps no copy of the old "
                    f"elements of an array a call changes.  Compute from a copy where you "
                    f"read it ('{user(name)}.copy()'), or write the change as an assignment "
                    f"({user(name)}[...] = v, {user(name)}[i] = v), whose adjoint puts the "
                    f"old elements back"))
            for other in sorted(groups.get(name, ())):
                view = None if other == name or other not in read \
                    else order.bound_before(other, stmt, name)
                if view is None:
                    continue
                user = user or user_names(program, statements)
                raise _refused(program, stmt, (
                    f"'{_shown_call(stmt)}' changes the elements of '{user(name)}' in place "
                    f"after '{user(other)}' (line {getattr(view, 'lineno', '?')}), which "
                    f"shares its memory, was read, and the adjoint sweep reads "
                    f"'{user(other)}' as it was then: srcgrad keeps no copy of the old "
                    f"elements of an array a call changes.  Read a copy there "
                    f"('{user(other)}.copy()'), or write the change as an assignment "
                    f"({user(name)}[...] = v, {user(name)}[...] = np.sort({user(name)}), "
                    f"{user(name)}[i] = v), whose adjoint puts the old elements back"))


def refuse_rebound_globals(program, statements=None) -> None:
    """Raise, located at the call, where a helper run as written rebinds a
    name the function reads (``tick()`` with ``global T; T = T + 1``, ``T``
    read in the function): the generated module binds the globals it reads
    when it is compiled, so it would go on reading the old value -- a wrong
    value and gradient.  (Reverse mode asks from :func:`refuse_stale_views`,
    forward mode from the pipeline.)"""
    free = program.free
    for stmt in statements if statements is not None else ir.walk_statements(program.body):
        value = getattr(stmt, "value", None)
        if isinstance(stmt, (gast.If, gast.For, gast.While)) or value is None:
            continue
        for call in walk_nodes(value):
            fn = helper_of(call.func, free)[0] if isinstance(call, gast.Call) else None
            rebound = sorted(n for n in outside_writes(fn).rebound if n in free) \
                if fn is not None else ()
            if rebound:
                raise _refused(program, stmt, (
                    f"'{_shown_call(stmt)}' rebinds '{rebound[0]}' (a 'global' or "
                    f"'nonlocal' name of {getattr(fn, 'func', fn).__name__}), which the function reads: srcgrad "
                    f"binds the globals the function reads when it compiles it, and the "
                    f"generated code would go on reading the old value.  Pass "
                    f"'{rebound[0]}' to the function as an argument, or have the helper "
                    f"return the new value"))


def _refuse_written_returns(program, statements) -> dict:
    """Raise, located at the call, where a helper run as written hands out
    module-level or closed-over state (``b = get_buf()`` with ``return BUF``)
    and the function writes into it (``b[:] = np.sin(x)``): srcgrad cannot
    tell which other names -- the global itself, the result of a second call
    -- are that array, so it cannot follow the write (outside review, session
    34, R2-9: a silently wrong gradient under every policy).  Returns the
    names bound to such state: ``name -> the call``."""
    handed = {}
    for stmt in statements:
        call = getattr(stmt, "value", None)
        if isinstance(stmt, gast.Assign) and isinstance(call, gast.Call) \
                and isinstance(stmt.targets[0], gast.Name):
            fn, _ = helper_of(call.func, program.free)
            if fn is not None and returns_outside(fn):
                handed[stmt.targets[0].id] = stmt
    if not handed:
        return handed
    groups = _memory_groups(statements)
    for stmt in statements:
        if not ir.is_update(stmt):
            continue
        for name in ir.target_names(stmt):
            for held in sorted({name} | set(groups.get(name, ()))):
                call = handed.get(held)
                if call is None:
                    continue
                user = user_names(program, statements)
                raise _refused(program, call, (
                    f"'{_shown_call(call)}' returns a module-level or closed-over value, and "
                    f"'{user(held)}' is written in place (line {getattr(stmt, 'lineno', '?')}): "
                    f"srcgrad cannot tell which other names (the global itself, the result of "
                    f"another call) are that array, so it cannot follow the write.  Write into "
                    f"a copy ('{user(held)} = {_shown_call(call, 40)}.copy()') or a new array "
                    f"of the function's own (np.empty_like(x))"))
    return handed


def _refuse_stale_handed(program, statements, handed, backward) -> None:
    """Raise, located at the call, where a helper run as written that changes
    module-level or closed-over state (``decay()``) comes after a helper
    handed out such state (``t = weights()`` with ``return W``) and the
    adjoint sweep reads that name for a value computed before the call."""
    free = program.free
    order = _Order(program.body)
    read = {n for stmt in ir.walk_statements(backward) for n in ir.names_in(stmt)}
    groups = _memory_groups(statements)
    for stmt in statements:
        if isinstance(stmt, (gast.If, gast.For, gast.While)) \
                or state_changing_call(stmt, free)[0] is None:
            continue
        for name in sorted(handed):
            for other in sorted({name} | set(groups.get(name, ()))):
                if other in read and order.bound_before(other, stmt, other) is not None \
                        and _read_for_before(other, stmt, backward, order):
                    user = user_names(program, statements)
                    raise _refused(program, stmt, (
                        f"'{_shown_call(stmt)}' may change module-level or closed-over state "
                        f"in place after the array '{_shown_call(handed[name])}' returned (line "
                        f"{getattr(handed[name], 'lineno', '?')}) was read, and the adjoint "
                        f"sweep reads it as it was then -- srcgrad keeps no copy of state a "
                        f"helper changes.  Read a copy "
                        f"('{_shown_call(handed[name], 40)}.copy()'), or pass the array to "
                        f"the function as an argument"))


def _refuse_outside(program, call, name, read, views, backward, order) -> None:
    """Raise, located at ``call`` -- a helper run as written that may change
    the module-level or closed-over ``name`` in place (``decay()`` with
    ``W[...] *= 0.8``) -- where the adjoint sweep reads ``name``, or a part of
    it read before the call (``t = P['W']``, ``t = GM.W``), as it was then."""
    stale = name if name in read and order.read_before(name, call) \
        and _read_for_before(name, call, backward, order) else None
    for other in sorted(views - {name}):
        if stale is None and other in read and order.bound_before(other, call, name) is not None:
            stale = other
    if stale is None:
        return
    user = user_names(program, list(ir.walk_statements(program.body)))
    shown = _shown_call(call)
    raise _refused(program, call, (
        f"'{shown}' may change '{name}' (a module-level or closed-over value) in place: "
        f"{how_it_writes(call.value, program.free)}, after '{user(stale)}' was read, "
        f"and the adjoint sweep reads '{user(stale)}' as it was then -- srcgrad keeps no "
        f"copy of state a helper changes.  Read a copy before the call "
        f"('{user(stale)}.copy()'), or pass the array to the function as an argument "
        f"and have the helper return the new value"))


def _object_method_for_effect(stmt) -> bool:
    """Whether ``stmt`` is a call of a method of a named object whose result
    is thrown away (``h.halve()``): called for what it does, which may be to
    change the arrays its object holds (``self.a *= 0.5``).  Methods of
    arrays, lists, dicts and sets are told apart by the rest of this module."""
    call = getattr(stmt, "value", None)
    return isinstance(stmt, gast.Expr) and isinstance(call, gast.Call) \
        and isinstance(call.func, gast.Attribute) and isinstance(call.func.value, gast.Name) \
        and getattr(call.func, "helper", None) is None \
        and not any(hasattr(kind, call.func.attr) for kind in (np.ndarray, list, dict, set))


def _refuse_stale_fields(program, statements, methods, read, groups, order) -> None:
    """Raise, located at the call, where a method of an object run as written
    (``h.halve()``) comes after a field of the object (``t = h.a``), or a view
    of one, was read for the adjoint sweep: the method may change that array
    in place, and the adjoint would read the new elements (outside tester T2,
    session 30: ``self.a *= 0.5`` in the method gave half the gradient)."""
    fields = _fields(statements)
    user = None
    for call in methods:
        owner = call.value.func.value.id
        for field in fields.get(owner, ()):
            for name in sorted({field} | set(groups.get(field, ()))):
                view = order.bound_before(name, call, name) if name in read else None
                if view is None:
                    continue
                user = user or user_names(program, statements)
                raise _refused(program, call, (
                    f"'{_shown_call(call)}' may change the arrays '{user(owner)}' holds in "
                    f"place after '{_shown_call(view, 40)}' (line "
                    f"{getattr(view, 'lineno', '?')}) was read, and the adjoint sweep reads "
                    f"it as it was then: srcgrad runs the method as written and keeps no "
                    f"copy of the old elements.  Read a copy there "
                    f"('{_shown_call(view, 40)}.copy()'), or have the method make a new array "
                    f"(self.a = self.a * 0.5) instead of changing the old one"))


def _changing_methods(program, statements) -> list:
    """The calls of a method of an object, for what it does, that may change
    an array the object holds in place."""
    return [stmt for stmt in statements if _object_method_for_effect(stmt)
            and not namespace_helper_read(stmt.value, program.free)  # names_changed's
            and _may_change_its_object(program, stmt.value.func.value.id,
                                       stmt.value.func.attr)]


def _fields(statements) -> dict:
    """``object name -> the names bound to one of its fields`` (``t = h.a``),
    or to a part of one read in the same statement (``t = omod.PARAMS[0]``:
    the array a module's list holds, review s34 R2-21)."""
    fields: dict = {}
    for stmt in statements:
        op = getattr(stmt, "op", None)
        if not isinstance(stmt, gast.Assign) or not op or not op.args \
                or not isinstance(stmt.targets[0], gast.Name):
            continue
        owner = op.args[0]
        if getattr(op, "primitive", None) is ir.GETATTR and isinstance(owner, gast.Name):
            fields.setdefault(owner.id, []).append(stmt.targets[0].id)
        elif isinstance(owner, gast.Attribute) and op.primitive in (ir.GETATTR, operator.getitem):
            while isinstance(owner, (gast.Attribute, gast.Subscript)):
                owner = owner.value
            if isinstance(owner, gast.Name):
                fields.setdefault(owner.id, []).append(stmt.targets[0].id)
    return fields


def _may_change_its_object(program, owner, attr) -> bool:
    """Whether the method ``attr`` of the object ``owner`` names may change an
    array the object holds in place (``self.a *= 0.5``, ``self.a[...] = v``,
    or through a function it calls); True where its class or source is not
    known.  A method that binds a new array (``self.a = self.a * 0.5``)
    leaves the one read before untouched."""
    cls = getattr(program, "param_classes", {}).get(owner)
    method = getattr(cls, attr, None) if cls is not None else None
    code = getattr(method, "__code__", None)
    if not inspect.isfunction(method) or not code.co_argcount:
        return True
    try:
        changed = augmented_parameters(method) | deep_parameters(method)
        return code.co_varnames[0] in changed or _augments_attribute(method, cls, set())
    except SrcGradError:
        return True


def _augments_attribute(method, cls, seen) -> bool:
    """Whether ``method``, run as written, may apply ``op=`` to an attribute of
    its object (``self.a *= 0.5``: in place on an array), itself or through
    another method of ``cls`` it calls on its object; True where it hands its
    object to any other call (which may do so)."""
    if method in seen:
        return False
    seen.add(method)
    node = parse_function(method).node
    args = node.args.posonlyargs + node.args.args
    if not args:
        return True
    own = args[0].id
    for sub in gast.walk(node):
        if isinstance(sub, gast.AugAssign) and isinstance(sub.target, gast.Attribute):
            return True
        if not isinstance(sub, gast.Call):
            continue
        func = sub.func
        if isinstance(func, gast.Attribute) and isinstance(func.value, gast.Name) \
                and func.value.id == own:
            called = getattr(cls, func.attr, None)
            if not inspect.isfunction(called) or _augments_attribute(called, cls, seen):
                return True
        if any(isinstance(a, gast.Name) and a.id == own
               for a in [*sub.args, *(k.value for k in sub.keywords)]):
            return True
    return False


def changed_by_calls(program: ir.Program) -> set[str]:
    """The names whose elements a call run as written may change (see
    :func:`_may_change`): a value read from one is not computed again in the
    adjoint sweep (``x_1 = private_copy(x)`` recomputed after ``zero_(x_1)``
    would read the caller's elements again), nor one read from a view of one
    (``c = np.sum(x_1[1])`` recomputed after ``scale_(x_1, 0.5)``)."""
    statements = list(ir.walk_statements(program.body))
    changed = {n for stmt in statements if not isinstance(stmt, (gast.If, gast.For, gast.While))
               for n in _may_change(stmt, program.free)}
    methods = _changing_methods(program, statements)
    fields = _fields(statements)
    if methods:  # h.halve(): what was read of h's fields (t = h.a) may change
        changed.update(n for call in methods for n in fields.get(call.value.func.value.id, ()))
    # GM.decay() (helper_state.py): what was read of GM's fields may change
    changed.update(n for name in list(changed) for n in fields.get(name, ()))
    if not changed:
        return changed
    groups = _memory_groups(statements)
    return changed.union(*(groups.get(n, ()) for n in changed))


def _read_for_before(name, call, backward, order) -> bool:
    """Whether the adjoint sweep reads ``name`` for a forward statement before
    ``call`` (or in a loop around it): a recompute of a value bound before it,
    or the adjoint of one (``d_y = d_t1 * x`` for ``t1 = x * y``), whose
    cotangent it reads.  A read for a statement after the call (``t2 = x[0]
    # recompute``) sees the change, as the forward sweep did.  A read srcgrad
    cannot relate to a forward statement counts as one before."""
    for stmt in ir.walk_statements(backward):
        if isinstance(stmt, (gast.If, gast.For, gast.While)) or name not in ir.names_in(stmt):
            continue
        names = ir.names_in(stmt)
        related = set(ir.assigned_by(stmt)) | {n[2:] for n in names if n.startswith("d_")}
        bindings = [b for r in related for b in order.bindings_of(r)]
        if not bindings or any(name in ir.names_in(getattr(b, "value", b))
                               and order.is_before(b, call, name) for b in bindings):
            return True
    return False


def _refused(program, stmt, message) -> UnsupportedSyntaxError:
    """The refusal of ``stmt``, located at it in the user's file."""
    return UnsupportedSyntaxError(message, filename=program.filename,
                                  lineno=getattr(stmt, "lineno", None),
                                  col=getattr(stmt, "col_offset", None))


def _shown_call(stmt, width=60) -> str:
    """What ``stmt`` computes as the user wrote it, cut to ``width`` characters."""
    node = getattr(getattr(stmt, "op", None), "node", None)
    text = source_of(getattr(node, "value", node) if isinstance(node, gast.stmt) else node) \
        if node is not None else source_of(stmt.value)
    return text if len(text) <= width else text[:width - 3] + "..."


def _may_change(stmt, free) -> set[str]:
    """The names whose elements ``stmt``'s call may change in place: a method
    that changes its object (``x.sort()``, ``x.fill(v)``), a NumPy function
    that writes into its first argument (``np.put``, ``np.copyto``), an
    ``out=`` array, a user function run as written that sets elements of what
    it is given (``zero_(x)``).  A differentiated user function's updates are
    explicit statements (CalleePair) and srcgrad's own checks change nothing."""
    op = getattr(stmt, "op", None)
    if isinstance(getattr(op, "primitive", None), CalleePair) or ir.is_update(stmt):
        return set()
    call = getattr(stmt, "value", None)
    if not isinstance(call, gast.Call) or getattr(call.func, "helper", None) is not None:
        return set()
    # (lst.remove(c), lst.append(v) change the list, never the items read from it)
    out = {n for n in changed_in_place(stmt, free)
           if getattr(call.func, "attr", "shuffle") in _CHANGING_ELEMENTS}
    for keyword in call.keywords:
        if keyword.arg == "out":
            out.update(ir.names_in(keyword.value))
    fn = _callee(call.func, free)
    if fn is None:
        return out | names_changed(call, free)
    at = isinstance(getattr(fn, "__self__", None), np.ufunc) and fn.__name__ == "at"
    if (at or call_effect(call, free) == CHANGES_ARGUMENT) and call.args:
        out.update(ir.names_in(call.args[0]))  # np.put(x, i, v), np.add.at(x, i, v)
    elif inspect.isfunction(fn) and not is_library_module(getattr(fn, "__module__", "") or ""):
        out.update(_passed_to_setters(fn, call))
    # decay() writing the module's W, GM.decay() changing GM.W: helper_state.py
    return out | names_changed(call, free)


#: Methods that change the elements of an array in place (``sort`` and a
#: generator's ``shuffle`` may be a list's: its items, never changed, are then
#: taken as views too -- a refusal too many, never a wrong gradient).
_CHANGING_ELEMENTS = frozenset({"sort", "shuffle", "fill", "put", "partition", "resize",
                                "itemset"})


def _callee(func, free):
    """The object a call's function names through the free names, or None."""
    if isinstance(func, gast.Name):
        return free.get(func.id)
    if isinstance(func, gast.Attribute):
        owner = _callee(func.value, free)
        return getattr(owner, func.attr, None) if owner is not None else None
    return None


def _passed_to_setters(fn, call) -> set[str]:
    """The names ``call`` passes to a parameter of the user function ``fn`` whose
    elements ``fn`` (or a function it calls) may set."""
    try:
        params = augmented_parameters(fn) | deep_parameters(fn) \
            | updated_arguments(parse_function(fn))
    except SrcGradError:  # its source cannot be read: what its code may change
        params = None if outside_writes(fn).readable or outside_writes(fn).params else set()
    code = getattr(fn, "__code__", None)
    positional = code.co_varnames[:code.co_argcount] if code is not None else ()
    out = set()
    for i, arg in enumerate(call.args):
        if isinstance(arg, gast.Starred) or params is None or i >= len(positional) \
                or positional[i] in params:
            out.update(ir.names_in(arg))
    for keyword in call.keywords:
        if params is None or keyword.arg is None or keyword.arg in params:
            out.update(ir.names_in(keyword.value))
    return out


def _memory_groups(statements) -> dict:
    """``name -> the names that may share its memory``: joined through every
    view (``t = x[0]``, ``y = x``, ``x.T``), in either direction; not an item
    of a list display (``c = lst[0]``, a number or an array of its own that
    ``lst.sort()`` moves, never changes)."""
    parent: dict = {}

    def find(n):
        while parent.get(n, n) != n:
            n = parent[n] = parent.get(parent[n], parent[n])
        return n

    lists = {stmt.targets[0].id for stmt in statements if isinstance(stmt, gast.Assign)
             and getattr(getattr(stmt, "op", None), "primitive", None) is ir.BUILD_LIST
             and isinstance(stmt.targets[0], gast.Name)}
    for stmt in statements:
        if isinstance(stmt, gast.Assign) and not ir.is_update(stmt) \
                and isinstance(stmt.targets[0], gast.Name) and is_view(stmt) \
                and not (stmt.op.primitive is operator.getitem and stmt.op.args[0].id in lists):
            a, b = find(stmt.targets[0].id), find(stmt.op.args[0].id)
            if a != b:
                parent[a] = b
    groups: dict = {}
    for n in list(parent):
        groups.setdefault(find(n), set()).update((n, find(n)))
    return {n: group for group in groups.values() for n in group}


class _Order:
    """The statements of a function in source order, and its loops: tells
    whether a name was bound before a statement on some path to it -- earlier
    in the function, or anywhere in a loop around it (the previous
    iteration's)."""

    def __init__(self, body):
        self.at: dict = {}        # id(stmt) -> its position
        self.bindings: dict = {}  # name -> [(position, stmt)]
        self.reads: dict = {}     # name -> [(position, stmt)]
        self.loops: list = []     # (first, last) position of each loop's statements
        self._visit(body)

    def _visit(self, stmts):
        for stmt in stmts:
            if isinstance(stmt, (gast.For, gast.While)):
                first = len(self.at)
                self._visit(stmt.body)
                self.loops.append((first, len(self.at) - 1))
                self._visit(stmt.orelse)
            elif isinstance(stmt, gast.If):
                self._visit(stmt.body)
                self._visit(stmt.orelse)
            else:
                here = self.at[id(stmt)] = len(self.at)
                for name in ir.assigned_by(stmt):
                    self.bindings.setdefault(name, []).append((here, stmt))
                for name in set(ir.names_in(getattr(stmt, "value", stmt))):
                    self.reads.setdefault(name, []).append((here, stmt))

    def bound_before(self, name, stmt, changed):
        """The statement binding ``name`` before ``stmt``, with ``changed``
        not bound anew in between, or None."""
        return self._before(self.bindings, name, stmt, changed)

    def read_before(self, name, stmt):
        """A statement other than ``stmt`` reading ``name`` before it, with
        ``name`` not bound anew in between, or None."""
        return self._before(self.reads, name, stmt, name)

    def bindings_of(self, name):
        """The forward statements binding ``name``."""
        return [stmt for _, stmt in self.bindings.get(name, ())]

    def is_before(self, first, second, changed) -> bool:
        """Whether ``first`` runs before ``second`` on some path on which
        ``changed`` is not bound anew in between (``a = rng.normal(size=3)``
        at the top of a loop: the last iteration's reads were of another
        array): earlier, or in a loop around both."""
        where = self.at.get(id(first))
        return where is not None and self._reaches(where, second, changed)

    def _before(self, table, name, stmt, changed=None):
        for where, binding in table.get(name, ()):
            if binding is not stmt and self._reaches(where, stmt, changed):
                return binding
        return None

    def _reaches(self, where, stmt, changed) -> bool:
        here = self.at.get(id(stmt))
        if here is None:
            return False
        rebound = [at for at, _ in self.bindings.get(changed, ())] if changed else []
        if where < here:
            return not any(where < at < here for at in rebound)
        return any(first <= where <= last and first <= here <= last
                   and not any(where < at <= last or first <= at < here for at in rebound)
                   for first, last in self.loops)
