"""What makes two names share memory: the facts the alias check reasons with.

A view (``r = x[1:]``, ``x.T``, ``y = x``) is the same memory as its base; a
list, tuple or dict display, an appended item, a concatenation or an element
copy (``list(xs)``) *holds* its elements without joining them to each other; a
call to a user function may return one of its arguments.  Everything here is
static and conservative: where the compiler cannot tell, it assumes sharing,
and the generated code checks at run time (see :mod:`.aliasing`).

    >>> import gast
    >>> from ..frontend.parse import parse_function
    >>> from ..normalize.normalizer import normalize
    >>> def f(x):
    ...     r = x[1:]
    ...     ps = [r, x * 2.0]
    ...     return ps
    >>> program = normalize(parse_function(f))
    >>> [is_view(s) for s in program.body[:1]], held_names(program.body[2])
    ([True], ['r', 't1'])
"""

from __future__ import annotations

import copy
import functools
import operator

import gast
import numpy as np

from .. import ir, runtime
from ..frontend.linker import is_user_function
from ..frontend.parse import parse_function
from ..normalize.normalizer import normalize
from ..normalize.sequences import type_sequence_operators
from ..rules import registry

__all__ = ["IDENTITIES", "VIEWS", "affected_groups", "container_names", "copies_elements",
           "held_names", "helper_results", "is_identity", "is_view", "may_return_an_argument",
           "operand_names"]


#: Primitives whose result may share memory with their first operand.
VIEWS = {
    operator.pos, operator.getitem, np.reshape, np.ravel, np.transpose, np.squeeze,
    np.expand_dims, np.swapaxes, np.moveaxis, np.asarray, np.broadcast_to, np.atleast_1d,
    np.atleast_2d, np.ndarray.T, np.ndarray.reshape, np.ndarray.ravel, np.ndarray.transpose,
    np.ndarray.squeeze, np.ndarray.swapaxes, np.ndarray.view,
    np.flip, np.fliplr, np.flipud, np.rot90, np.rollaxis, np.atleast_3d, np.diagonal, np.diag,
    np.ndarray.diagonal, np.real, np.imag, np.ndarray.real, np.ndarray.imag, np.real_if_close,
    np.float64, np.float32,  # a cast to the array's own dtype returns the array
    np.split, np.array_split, np.hsplit, np.vsplit, np.dsplit,  # lists of views
    runtime.sequence,  # what a for loop runs over: the list, tuple or array itself
    np.ndarray.flat,  # an iterator whose items are y's elements: z[0] = v changes y
    np.lib.stride_tricks.sliding_window_view,  # read-only, but y[0] = v changes its windows
} | {np.asanyarray, np.ascontiguousarray, np.asfortranarray, np.require} | {
    f for f in (getattr(np.ndarray, "mT", None), getattr(np, "unstack", None),
                getattr(np, "permute_dims", None), getattr(np, "matrix_transpose", None),
                getattr(np.linalg, "matrix_transpose", None), getattr(np.linalg, "diagonal", None))
    if f is not None}  # NumPy 2's

#: Calls that return their first operand itself where it needs no conversion
#: (``np.asarray(y)``, ``y.conj()`` of a real array, ``np.float64(y)`` of a
#: float64 array), else a new array (or, for the last few, a view): a name
#: they bind may be the very same array (see :func:`is_identity`).
IDENTITIES = {
    np.asarray, np.asanyarray, np.ascontiguousarray, np.asfortranarray, np.require,
    np.real_if_close, np.real, np.ndarray.real, np.float64, np.float32,
    np.ndarray.conj, np.ndarray.conjugate, np.ndarray.astype, np.array,
    # the operand itself where there is nothing to do, else a view: an update
    # through that view is refused as the code runs, where it is one
    np.squeeze, np.ndarray.squeeze, np.atleast_1d, np.atleast_2d, np.atleast_3d,
} | ({np.astype} if hasattr(np, "astype") else set())

#: Calls that copy unless told not to: ``y.astype(t, copy=False)`` and
#: ``np.array(y, copy=False)`` (or ``copy=None``) return ``y`` itself where ``y``
#: already has the dtype asked for.  With the position of ``copy`` among the
#: positional arguments (the array counted).
_COPY_UNLESS_TOLD = {np.ndarray.astype: 5, np.array: 2,
                     **({np.astype: 99} if hasattr(np, "astype") else {})}


def _told_not_to_copy(op) -> bool:
    """Whether a call of :data:`_COPY_UNLESS_TOLD` may return its operand: a
    ``copy`` argument that is not the literal True."""
    position = _COPY_UNLESS_TOLD[op.primitive]
    copy = op.kwargs.get("copy", op.args[position] if len(op.args) > position else None)
    return copy is not None and not (isinstance(copy, gast.Constant) and copy.value is True)


#: Attributes that are a window on an array's memory (``x.T``), read as a field
#: where the object may be no array (normalize/attribute_reads.py): ``ir.GETATTR``.
_VIEW_ATTRIBUTES = frozenset(("T", "mT", "real", "imag"))


def is_view(stmt) -> bool:
    """Whether ``stmt``'s result may be a window on its first operand's memory
    (``x[1:]``, ``x.T``, ``y = x``; not ``x[[0, 2]]``, which copies)."""
    op = getattr(stmt, "op", None)
    if op is None or not op.args or not isinstance(op.args[0], gast.Name):
        return False
    if op.primitive is ir.GETATTR:  # v = d['h'].T: a field, or the array's view (as it runs)
        name = op.args[1].value if len(op.args) > 1 and isinstance(op.args[1], gast.Constant) \
            else None
        return name in _VIEW_ATTRIBUTES
    try:
        if op.primitive in _COPY_UNLESS_TOLD:
            return _told_not_to_copy(op)
        if op.primitive not in VIEWS and op.primitive not in IDENTITIES:
            return False
    except TypeError:
        return False
    if op.primitive is operator.pos:  # y = x shares x; y = +x is a new array
        return isinstance(stmt.value, gast.Name)
    if op.primitive is operator.getitem:  # x[[0, 2]] and x[mask] copy; x[1:], x[0] do not
        if getattr(stmt, "element_copy", False):
            return False  # hs[::-1] of a list: a new list of the same items (held)
        return not any(isinstance(n, gast.List) for n in gast.walk(op.args[1]))
    return True


def is_identity(stmt) -> bool:
    """Whether ``stmt`` binds a name to its operand itself or to a new array --
    ``z = y``, ``z = np.asarray(y)``, ``z = y.astype(t, copy=False)`` -- never to
    another window on ``y``'s memory.  An update through either name is then
    followed by binding the other to the updated array where, as the code runs,
    they are one object (``same_or_untouched``, see :mod:`.refresh`)."""
    if not is_view(stmt):
        return False
    if stmt.op.primitive is operator.pos:
        return True
    try:
        return stmt.op.primitive in IDENTITIES
    except TypeError:
        return False


def operand_names(op) -> list[str]:
    """The names an operation reads as operands (not the function it calls)."""
    return [n for arg in [*op.args, *op.kwargs.values()] for n in ir.names_in(arg)]


#: Builtins that return a new container of their argument's elements.
_ELEMENT_COPIES = (sorted, list, tuple, reversed, set, frozenset, enumerate, zip, dict,
                   ir.DICT_COPY, copy.copy)  # copy.copy(xs): a new list of xs's items

#: Calls whose result is always a list, tuple or dict: ``np.split(y, 2)`` is a
#: list of views of ``y``, ``dict(a=y)`` a dict holding ``y``.
_CONTAINER_CALLS = (np.split, np.array_split, np.hsplit, np.vsplit, np.dsplit, dict, ir.DICT_COPY,
                    *([np.unstack] if hasattr(np, "unstack") else []))


def copies_elements(stmt) -> bool:
    """Whether ``stmt`` builds a new container of its operand's elements
    (``list(xs)``, ``sorted(d)``, ``xs[::-1]`` of a list): it holds those
    elements, not the container."""
    if getattr(stmt, "element_copy", False):
        return True  # (normalize/container_copies.py)
    prim = getattr(getattr(stmt, "op", None), "primitive", None)
    return any(prim is c for c in _ELEMENT_COPIES)


def container_names(program, statements) -> set[str]:
    """Names that hold a list, tuple or dict on every path: the sequences
    :func:`..normalize.sequences.sequence_names` found (displays, ``list()``, concatenations,
    slices of sequences), dict displays, and what a loop over one of them runs
    over (``sequence(xs[1:])``)."""
    names = set(getattr(program, "sequences", ()))
    for s in statements:
        op = getattr(s, "op", None)
        if not isinstance(s, gast.Assign) or op is None or ir.is_update(s):
            continue
        if op.primitive is ir.BUILD_DICT or any(op.primitive is c for c in _CONTAINER_CALLS) \
                or getattr(s, "element_copy", False) or getattr(s, "container_copy", False):
            names.update(ir.target_names(s))  # (st = private_copy(st): normalize/held_items.py)
        elif op.primitive is runtime.sequence and isinstance(op.args[0], gast.Name) \
                and op.args[0].id in names:
            names.update(ir.target_names(s))  # for w in xs[1:]: the list itself
    return names


def helper_results(program, statements) -> set[str]:
    """Names every binding of which is what a user function returns (``q =
    pack(p)``), no parameter: perhaps a new list or dict holding the caller's
    arrays (``return {'w': p['w']}``), so ``q['w'] *= 2.0`` changes an array
    that other names may hold -- the alias check follows that update as it
    follows one through a container built here (outside tester T1 #15)."""
    found: dict[str, bool] = {}
    for s in statements:
        op = getattr(s, "op", None)
        if ir.is_update(s):
            continue  # q['w'] = t: q is still what it was
        made = isinstance(s, gast.Assign) and op is not None \
            and isinstance(s.targets[0], gast.Name) and is_user_function(op.primitive)
        for n in ir.assigned_by(s):
            found[n] = found.get(n, True) and made
    return {n for n, made in found.items() if made and n not in program.params}


def held_names(stmt) -> list[str]:
    """The names whose memory the value ``stmt`` makes may *hold* without being
    it: the elements of a list, tuple or dict display, an appended item, the
    arguments of a user function (it may return one of them, or a view of one).
    Unlike a view, holding does not join the elements to each other: updating
    one element of ``[a, b]`` changes the list, not ``b``."""
    op = getattr(stmt, "op", None)
    if op is None or not isinstance(stmt, (gast.Assign, gast.Expr)):
        return []
    prim = op.primitive
    if prim is ir.APPEND:  # xs.append(v): xs holds v
        return [a.id for a in op.args[1:] if isinstance(a, gast.Name)]
    if ir.is_update(stmt) and prim is operator.setitem and isinstance(stmt, gast.Assign):
        # xs[k] = v: a list or dict now holds v (an array copies v's values: assuming
        # it holds v only adds a run-time check)
        return ir.names_in(op.args[2])
    if isinstance(stmt, gast.Expr) or ir.is_update(stmt) \
            or isinstance(stmt.targets[0], gast.Tuple):
        return []
    if prim in (ir.BUILD_LIST, ir.BUILD_TUPLE, ir.BUILD_DICT, ir.BUILD_NAMEDTUPLE,
                ir.BUILD_RECORD):
        args = op.args
    elif prim is np.einsum and len(_einsum_operands(op)) == 1:
        # np.einsum('ii->i', y), np.einsum('ij->ji', y): a view of its one operand
        # for a pure rearrangement (found by review: y updated after it, then the
        # view read, was silently differentiated as a new array) -- held, so that
        # an update either side is checked as the code runs
        args = _einsum_operands(op)
    elif prim in (ir.CONCAT, ir.REPEAT) or copies_elements(stmt):
        # xs + [v], 2 * xs, list(xs), sorted(d): a new container of the same elements
        # (holding the operand containers stands for holding their elements)
        args = [*op.args, *op.kwargs.values()]
    elif is_user_function(prim):
        if not may_return_an_argument(prim):
            return []
        args = [*op.args, *op.kwargs.values()]
    elif registry.lookup(prim) is None and not registry.is_nondifferentiable(prim) \
            and prim is not ir.OPAQUE:
        args = [*op.args, *op.kwargs.values()]  # unknown code: it may return an argument
    else:
        return []
    names = []
    for arg in args:
        for n in ir.names_in(arg):
            if n not in names:
                names.append(n)
    return names


def _einsum_operands(op) -> list:
    """The array operands of ``np.einsum``: after the subscripts (a string, or a
    name that may hold one), or every name of the interleaved form
    ``np.einsum(y, [0, 1], [1, 0])``."""
    first = op.args[0] if op.args else None
    if isinstance(first, gast.Constant) and isinstance(first.value, str):
        return [a for a in op.args[1:] if isinstance(a, gast.Name)]
    return [a for a in op.args if isinstance(a, gast.Name)][1:] \
        if len(op.args) == 2 else [a for a in op.args if isinstance(a, gast.Name)]


def may_return_an_argument(fn) -> bool:
    """Whether ``fn``'s result may share memory with one of its arguments, or one
    part of a tuple it returns with another (see :func:`_result_shares`),
    remembered per version of its code."""
    return _result_shares(fn, fn.__code__)


@functools.lru_cache(maxsize=256)
def _result_shares(fn, code) -> bool:
    """A flow-insensitive look at ``fn``'s source: names joined by views, copies,
    displays and calls; True if a returned name is joined to a parameter or to
    another returned name (``return v, v``), or if the source cannot be read."""
    try:
        program = normalize(parse_function(fn))
        type_sequence_operators(program)  # out + list(p): a new list of p's items
    except Exception:  # noqa: BLE001 - unreadable: assume the worst
        return True
    parent: dict[str, str] = {}

    def find(v):
        while parent.get(v, v) != v:
            v = parent[v]
        return v

    for stmt in ir.walk_statements(program.body):
        if getattr(stmt, "op", None) is None:
            continue
        if isinstance(stmt, gast.Expr) or ir.is_update(stmt):
            # out['w'] = t, out.append(t): a container made here holds t from now
            # on (a helper filling a new dict or list with its argument's arrays);
            # out.update(p), out.setdefault(k, v): a call srcgrad does not know
            # may store any name it reads into any other
            first = stmt.op.args[0] if stmt.op.args else None
            held, into = held_names(stmt), first.id if isinstance(first, gast.Name) else None
            if stmt.op.primitive is ir.OPAQUE and isinstance(stmt, gast.Expr):
                held = ir.names_in(stmt.value)
                into = held[0] if held else None
            for n in held if into is not None else ():
                parent[find(n)] = find(into)
            continue
        if not isinstance(stmt, gast.Assign):
            continue
        targets = ir.target_names(stmt)
        if is_view(stmt):
            joined = [stmt.op.args[0].id]
        elif isinstance(stmt.targets[0], gast.Tuple) or held_names(stmt) \
                or is_user_function(stmt.op.primitive):
            joined = targets[1:] + ir.names_in(stmt.value)
        else:
            continue
        for n in joined:
            parent[find(n)] = find(targets[0])
    output = program.output
    parts = output.elts if isinstance(output, gast.Tuple) else [output]
    roots = [{find(n) for n in ir.names_in(part)} for part in parts]
    params = {find(p) for p in program.params}
    if any(r & params for r in roots):
        return True
    return any(roots[i] & roots[j] for i in range(len(roots)) for j in range(i))


def affected_groups(root, holds, down=True) -> set:
    """The alias groups an update of group ``root`` changes: ``root``; every group
    holding a changed group (up, transitively); and, from ``root`` itself, every
    group it holds (down, transitively; not for an update of a container itself)
    -- but not the siblings of a changed element."""
    affected = {root}
    down = [root] if down else []
    while down:
        g = down.pop()
        for container, elements in holds:
            if container == g:
                for e in elements - affected:
                    affected.add(e)
                    down.append(e)
    changed = True
    while changed:
        changed = False
        for container, elements in holds:
            if container not in affected and elements & affected:
                affected.add(container)
                changed = True
    return affected
