"""``a.sort()`` and ``rng.shuffle(a)`` of a local array as the element writes they are.

NumPy changes ``a`` in place, which srcgrad differentiates as an element write
``a[...] = v``: the alias check of :mod:`.aliasing` then follows every other
name for ``a``'s memory (a view of ``a``, the array ``a`` is a view of), and
the adjoint saves the overwritten contents.  Kept as written, such a call was
opaque: refused where a value being differentiated flows into it
(:mod:`srcgrad.ad.in_place`), or where the adjoint reads what it changed
(:mod:`srcgrad.memory.remat`), though valid code (review 5).

- ``a.sort(axis, kind, order)`` is ``a[...] = np.sort(a, axis, kind, order)``,
  bit for bit: ``np.sort`` sorts a copy by ``a.sort`` itself;
- NumPy's ``rng.shuffle(a)`` (``rng`` made by ``np.random.default_rng``,
  ``RandomState`` or ``Generator``, or ``np.random``) is ``a[...] =
  a[rng.permutation(len(a))]``: the same order from the same draws (both
  shuffle the positions by one Fisher-Yates pass), an indexing srcgrad
  differentiates, drawn once, so that a checkpointed loop's rerun reads it
  back with the other draws;
- NumPy's ``t = rng.normal(loc, scale, size)`` is ``z = rng.standard_normal(s);
  t = loc + scale * z``: what ``normal`` computes from the same draws, bit for
  bit, so that ``loc`` and ``scale`` are differentiated (reparameterised);
- another ``x.shuffle(a)`` runs on a copy written back into ``a``, unless
  ``a`` was just made and nothing read it yet (its old contents matter to
  nothing then: left as written).

A name that may hold a list (its bindings are not all NumPy operations) or a
parameter (the caller's array) is left as written.

Before and after (``normalize`` gives the opaque ``a.sort()``):

    >>> import numpy as np
    >>> from ..frontend.parse import parse_function
    >>> from ..normalize.normalizer import normalize, unparse_body
    >>> def f(x):
    ...     a = x * 2.0
    ...     a.sort()
    ...     return np.sum(a)
    >>> program = normalize(parse_function(f))
    >>> sorts_in_place(program)
    True
    >>> print(unparse_body(program))
    a = x * 2.0
    a_1 = np.sort(a)
    a[...] = a_1
    t1 = np.sum(a)
    return t1
"""

from __future__ import annotations

import operator

import gast
import numpy as np

from .. import ir
from ..ir.syntax import clone, helper_ref, source_of
from ..runtime import normal_shape
from . import paths
from .sharing import is_view
from .slot_writes import array_names, bindings

__all__ = ["sorts_in_place"]


#: ``a.sort(axis, kind, order)``'s parameters, which ``np.sort(a, ...)`` takes after ``a``.
_SORT_PARAMETERS = ("axis", "kind", "order", "stable")


#: The location-scale draws reparameterised: ``method -> (parameters, defaults,
#: the standard draw's method and arguments, how the draw is moved and scaled)``.
#: NumPy computes each from its standard draw, bit for bit: ``normal`` as ``loc +
#: scale * standard_normal``, ``uniform`` as ``low + (high - low) * u``,
#: ``exponential`` as ``scale * standard_exponential``, ``gumbel`` as ``loc -
#: scale * log(-log(U))`` (``loc + scale * g``, ``g = gumbel(0.0, 1.0) =
#: -log(-log(U))``: a negation is exact).  The standard draws ``uniform(0.0,
#: 1.0)``, ``exponential(1.0)``, ``gumbel(0.0, 1.0)`` are NumPy's draws
#: themselves (``0.0 + 1.0 * u`` is ``u``), from the same state.
_FAMILIES = {
    "normal": (("loc", "scale"), (0.0, 1.0), "standard_normal", (), "shift"),
    "uniform": (("low", "high"), (0.0, 1.0), "uniform", (0.0, 1.0), "between"),
    "gumbel": (("loc", "scale"), (0.0, 1.0), "gumbel", (0.0, 1.0), "shift"),
    "exponential": (("scale",), (1.0,), "exponential", (1.0,), "scale"),
}

#: The methods whose calls this module rewrites.
_METHODS = ("sort", "shuffle", *_FAMILIES)


def sorts_in_place(program) -> bool:
    """``a.sort()`` on a local array ``a`` (``a = x * w; a.sort()``): the element
    write ``a[...] = np.sort(a)`` that it is, with ``np.sort``'s derivative and
    the alias check's following of every other name for ``a``'s memory (a view
    of ``a``, the array ``a`` is a view of).  Bit for bit the same: ``np.sort``
    sorts a copy by ``a.sort`` itself.  Kept as written, and refused where a
    value being differentiated flows into it (:mod:`srcgrad.ad.in_place`),
    was every ``a.sort()``; a name that may hold a list, or a parameter (the
    caller's array), still is.  Returns whether it changed the program."""
    statements = list(ir.walk_statements(program.body))
    # each form below calls a.sort(), rng.normal(...) or rng.shuffle(a): where no
    # statement does, neither the array names nor the blocks are needed
    if not any(isinstance(getattr(s, "value", None), gast.Call)
               and isinstance(s.value.func, gast.Attribute)
               and s.value.func.attr in _METHODS for s in statements):
        return False
    arrays = array_names(program, statements)
    # (r = Y[1], a row of an array: a view, which the write is written back from)
    arrays |= {n for n, stmts in bindings(statements).items() if n not in program.params
               and all(isinstance(d, gast.Assign) and not ir.is_update(d)
                       and getattr(d, "op", None) is not None
                       and d.op.primitive is operator.getitem
                       and isinstance(d.op.args[0], gast.Name) and d.op.args[0].id in arrays
                       for d in stmts)}
    blocks = paths.blocks_of(program.body)
    defs = bindings(statements)
    changed = False
    for stmt in statements:
        call = getattr(stmt, "value", None)
        if not (isinstance(stmt, gast.Expr) and getattr(stmt, "op", None) is not None
                and stmt.op.primitive is ir.OPAQUE and isinstance(call, gast.Call)
                and isinstance(call.func, gast.Attribute) and call.func.attr == "sort"
                and isinstance(call.func.value, gast.Name) and call.func.value.id in arrays
                and len(call.args) <= len(_SORT_PARAMETERS)
                and all(isinstance(a, (gast.Name, gast.Constant)) for a in call.args)
                and all(k.arg in _SORT_PARAMETERS[len(call.args):]
                        and isinstance(k.value, (gast.Name, gast.Constant))
                        for k in call.keywords)):
            continue
        a, node = call.func.value.id, stmt.op.node
        block = blocks[id(stmt)][0]
        value = program.namer.fresh(a)
        sort = gast.Attribute(value=ir.name("np"), attr="sort", ctx=gast.Load())
        args = [ir.name(a), *(clone(x) for x in call.args)]
        kwargs = {k.arg: clone(k.value) for k in call.keywords}
        made = ir.assign(value, gast.Call(func=sort, args=args, keywords=[
            gast.keyword(arg=k, value=v) for k, v in kwargs.items()]))
        made.op = ir.Op(np.sort, [clone(x) for x in args],
                        {k: clone(v) for k, v in kwargs.items()}, node, f"{a}.sort()")
        write = _whole_write(a, value, node, f"{a}.sort()")
        for made_ in (made, write):
            gast.copy_location(made_, stmt)
        at = block.index(stmt)
        block[at:at + 1] = [made, write]
        changed = True
    for stmt in statements:
        drawn = _normal_draw(stmt, program, defs)
        if drawn is not None:
            _reparameterised(program, stmt, *drawn, blocks[id(stmt)][0])
            changed = True
    for stmt in statements:
        a = _shuffled(stmt, arrays)
        if a is None:
            continue
        if _numpy_generator(stmt.value.func.value, program, defs):
            _permuted(program, stmt, a, blocks[id(stmt)][0])
            changed = True
            continue
        if _unread_since_made(a, stmt, blocks[id(stmt)][0]):
            continue
        # rng.shuffle(a) after a read of a: the shuffle runs on a copy, written back
        # into a, whose old contents the element write saves for the adjoint
        block, node = blocks[id(stmt)][0], stmt.op.node
        value = program.namer.fresh(a)
        made = ir.assign(value, gast.Call(func=gast.Attribute(
            value=ir.name(a), attr="copy", ctx=gast.Load()), args=[], keywords=[]))
        made.op = ir.Op(np.ndarray.copy, [ir.name(a)], {}, node, f"{a}.copy()")
        stmt.value.args = [ir.name(value)]
        write = _whole_write(a, value, node, source_of(node))
        for made_ in (made, write):
            gast.copy_location(made_, stmt)
        at = block.index(stmt)
        block[at:at + 1] = [made, stmt, write]
        changed = True
    return changed


#: What makes a NumPy random generator (``rng = np.random.default_rng(5)``).
_GENERATORS = (np.random.default_rng, np.random.RandomState, np.random.Generator)


def _numpy_generator(receiver, program, defs) -> bool:
    """Whether ``receiver`` of ``receiver.shuffle(a)`` is NumPy's: ``np.random``,
    or a local every binding of which makes a NumPy generator.  Its
    ``shuffle(a)`` puts ``a`` in the order ``permutation(len(a))`` gives, from
    the same draws (both shuffle the positions by one Fisher-Yates pass)."""
    if isinstance(receiver, gast.Attribute):
        return receiver.attr == "random" and isinstance(receiver.value, gast.Name) \
            and program.free.get(receiver.value.id) is np
    made = defs.get(receiver.id, []) if isinstance(receiver, gast.Name) else []
    return bool(made) and receiver.id not in program.params and all(
        isinstance(d, gast.Assign) and not ir.is_update(d) and getattr(d, "op", None) is not None
        and any(d.op.primitive is g for g in _GENERATORS) for d in made)


def _permuted(program, stmt, a, block) -> None:
    """``rng.shuffle(a)`` for NumPy's ``rng`` as ``a[...] = a[rng.permutation(len(a))]``:
    the same order from the same draws, bit for bit, a permutation srcgrad
    differentiates (an indexing), drawn once and saved like any draw, so that a
    checkpointed loop's rerun finds it again."""
    node, receiver = stmt.op.node, stmt.value.func.value
    size, order, value = (program.namer.fresh(n) for n in ("size", "order", a))
    count = ir.assign(size, gast.Call(func=ir.name("len"), args=[ir.name(a)], keywords=[]))
    count.op = ir.Op(len, [ir.name(a)], {}, node, "len()")
    draw = ir.assign(order, gast.Call(func=gast.Attribute(
        value=clone(receiver), attr="permutation", ctx=gast.Load()), args=[ir.name(size)],
        keywords=[]))
    if isinstance(receiver, gast.Name):
        draw.op = ir.Op(ir.UnknownMember("permutation", True), [ir.name(receiver.id),
                                                                ir.name(size)], {}, node,
                        ".permutation()")
    else:
        draw.op = ir.Op(np.random.permutation, [ir.name(size)], {}, node,
                        "np.random.permutation")
    taken = ir.assign(value, gast.Subscript(value=ir.name(a), slice=ir.name(order),
                                            ctx=gast.Load()))
    taken.op = ir.Op(operator.getitem, [ir.name(a), ir.name(order)], {}, node, "subscript")
    write = _whole_write(a, value, node, source_of(node))
    made = [count, draw, taken, write]
    for made_ in made:
        gast.copy_location(made_, stmt)
    at = block.index(stmt)
    block[at:at + 1] = made


def _whole_write(a, value, node, shown):
    """``a[...] = value``, the element write every rewrite here ends with: the
    new order written into ``a``'s own memory, which its views see (``shown``:
    what the user wrote, for messages)."""
    every = gast.Constant(value=Ellipsis, kind=None)
    write = ir.assign(gast.Subscript(value=ir.name(a), slice=every, ctx=gast.Store()),
                      ir.name(value))
    write.op = ir.Op(operator.setitem, [ir.name(a), clone(every), ir.name(value)], {},
                     node, "element assignment")
    write.user_target = shown
    return write


def _normal_draw(stmt, program, defs):
    """``(receiver, family, parameters, size)`` for ``t = rng.normal(loc, scale,
    size)`` (``uniform``, ``exponential``, ``gumbel``: :data:`_FAMILIES`; or
    ``np.random.normal``) of NumPy's ``rng`` (:func:`_numpy_generator`), a
    parameter a name; None for any other statement."""
    call = getattr(stmt, "value", None)
    if not (isinstance(stmt, gast.Assign) and not ir.is_update(stmt)
            and isinstance(call, gast.Call) and isinstance(call.func, gast.Attribute)
            and call.func.attr in _FAMILIES):
        return None
    family = _FAMILIES[call.func.attr]
    names = (*family[0], "size")
    if not (len(call.args) <= len(names) and all(k.arg in names for k in call.keywords)
            and _numpy_generator(call.func.value, program, defs)):
        return None
    given = dict(zip(names, call.args))
    given.update({k.arg: k.value for k in call.keywords})
    if not all(isinstance(v, (gast.Name, gast.Constant)) or isinstance(v, gast.Tuple) and all(
            isinstance(e, (gast.Name, gast.Constant)) for e in v.elts) for v in given.values()):
        return None
    if not any(isinstance(given.get(k), gast.Name) for k in family[0]):
        return None  # (numbers alone: nothing to differentiate, left as written)
    params = [given.get(k, gast.Constant(value=d, kind=None)) for k, d in zip(*family[:2])]
    return call.func.value, family, params, given.get("size")


def _reparameterised(program, stmt, receiver, family, params, size, block) -> None:
    """``t = rng.normal(loc, scale)`` as ``z = rng.standard_normal(s); t = loc +
    scale * z`` (``t = rng.uniform(low, high)`` as ``z = rng.uniform(0.0, 1.0,
    s); w = high - low; t = low + w * z``, ...: :data:`_FAMILIES`), ``s`` the
    size given or the shape of the parameters broadcast (None for numbers):
    NumPy computes the draw that way from the same standard draw, bit for bit,
    so the parameters are differentiated (the reparameterisation), the draw
    drawn once and saved like any draw."""
    node, target = stmt.op.node, stmt.targets[0].id
    _, _, method, standard, combine = family
    made = []
    if size is None:
        size = ir.name(program.namer.fresh("shape"))
        pair = [clone(params[0]), clone(params[-1] if len(params) > 1
                                        else gast.Constant(value=1.0, kind=None))]
        shaped = ir.assign(size.id, gast.Call(func=helper_ref("normal_shape"),
                                              args=pair, keywords=[]))
        shaped.op = ir.Op(normal_shape, [clone(p) for p in pair], {}, node, "normal_shape")
        made.append(shaped)
    z = program.namer.fresh("draw")
    args = [gast.Constant(value=v, kind=None) for v in standard] + [clone(size)]
    draw = ir.assign(z, gast.Call(func=gast.Attribute(value=clone(receiver), attr=method,
                                                      ctx=gast.Load()),
                                  args=args, keywords=[]))
    if isinstance(receiver, gast.Name):
        draw.op = ir.Op(ir.UnknownMember(method, True),
                        [ir.name(receiver.id), *(clone(a) for a in args)], {}, node,
                        f".{method}()")
    else:
        draw.op = ir.Op(getattr(np.random, method), [clone(a) for a in args], {}, node,
                        f"np.random.{method}")
    made.append(draw)

    def binop(name, left, op, right, prim, label):
        made.append(ir.assign(name, gast.BinOp(left=clone(left), op=op, right=clone(right))))
        made[-1].op = ir.Op(prim, [clone(left), clone(right)], {}, node, label)
        return ir.name(name)

    if combine == "scale":
        binop(target, params[0], gast.Mult(), ir.name(z), operator.mul, "*")
    else:
        loc, scale = params
        if combine == "between":
            scale = binop(program.namer.fresh("width"), params[1], gast.Sub(), params[0],
                          operator.sub, "-")
        scaled = binop(program.namer.fresh("scaled"), scale, gast.Mult(), ir.name(z),
                       operator.mul, "*")
        binop(target, loc, gast.Add(), scaled, operator.add, "+")
    for made_ in made:
        gast.copy_location(made_, stmt)
    at = block.index(stmt)
    block[at:at + 1] = made


def _shuffled(stmt, arrays):
    """``a`` for a statement ``rng.shuffle(a)`` (``np.random.shuffle(a)``) of an
    array ``a``, else None."""
    call = getattr(stmt, "value", None)
    if isinstance(stmt, gast.Expr) and getattr(stmt, "op", None) is not None \
            and stmt.op.primitive is ir.OPAQUE and isinstance(call, gast.Call) \
            and isinstance(call.func, gast.Attribute) and call.func.attr == "shuffle" \
            and isinstance(call.func.value, (gast.Name, gast.Attribute)) \
            and len(call.args) == 1 and not call.keywords \
            and isinstance(call.args[0], gast.Name) and call.args[0].id in arrays:
        return call.args[0].id
    return None


def _unread_since_made(name, stmt, block) -> bool:
    """Whether ``name`` was bound earlier in ``block`` to what no other name holds
    (no view, no update) and nothing read it between there and ``stmt``: a
    change in place of it there changes no value computed before
    (:func:`srcgrad.memory.remat` lets it be)."""
    before = block[:block.index(stmt)]
    for i in range(len(before) - 1, -1, -1):
        if name in ir.assigned_by(before[i]) and not ir.is_update(before[i]):
            made = before[i]
            return isinstance(made, gast.Assign) and not is_view(made) and not any(
                isinstance(n, gast.Name) and n.id == name and isinstance(n.ctx, gast.Load)
                for s in before[i + 1:] for n in gast.walk(s))
    return False
