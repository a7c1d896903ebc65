"""What a call to a user function does to its caller's arguments.

A called function that changes its parameter's memory through another name
(:func:`deeply_updated`), or with ``p += v`` where srcgrad's code makes a new
array, leaves the caller reading other values than Python's afterwards; the
caller asks here whether it reads that memory after the call
(:func:`read_after_call`) and gets the check to place there
(:func:`call_guard`).  Apart from :mod:`.argument_updates`, whose look at one
function's own updates it uses, because it concerns the caller of a call.
"""

from __future__ import annotations

import gast

from .. import ir
from ..errors import SrcGradError
from ..frontend.parse import parse_function
from ..ir.syntax import clone, constant, helper_ref, source_of, walk
from .argument_updates import deep_parameters
from .helper_depth import HELD
from .memory_scan import Order, Scan, held_below


def deeply_updated(fn) -> frozenset:
    """The parameters of the user function ``fn`` whose memory it may change
    through another name (an element, a view), or below its items, itself or
    in a function it passes them to at any depth: a copy of a list passed there
    (``helper(xs.copy())``) still shares its arrays with the caller's, and a
    list made to be passed (``helper([y])``) holds the caller's ``y``."""
    return deep_parameters(fn)


def read_described(read) -> str:
    """What a refusal says the caller does with ``read``, the name read after the
    call: ``reads 'y' (line 12)``, or, for a name the normaliser made where the
    user wrote none (``result`` of a ``return`` on several paths), ``returns
    a value`` -- never srcgrad's name at 'line ?'.

        >>> import gast
        >>> read_described(gast.Name(id="result", ctx=gast.Load(), annotation=None,
        ...                          type_comment=None))
        'returns a value'
    """
    line = getattr(read, "lineno", None)
    if line is None:
        return "returns a value"
    return f"reads '{read.id}' (line {line})"


def copy_passed(call, arg) -> str:
    """The text of ``call`` with ``arg`` (one of its arguments) passed as
    ``arg.copy()``, where it stands -- the advice of a refusal::

        >>> call = gast.parse("accumulate(x, 1, buf)").body[0].value
        >>> copy_passed(call, call.args[2])
        'accumulate(x, 1, buf.copy())'
    """
    copied = gast.Call(func=gast.Attribute(value=clone(arg), attr="copy", ctx=gast.Load()),
                       args=[], keywords=[])
    args = [copied if a is arg else a for a in call.args]
    keywords = [gast.keyword(arg=k.arg, value=copied) if k.value is arg else k
                for k in call.keywords]
    return source_of(gast.Call(func=call.func, args=args, keywords=keywords))


def call_guard(arg, fn, param, read, filename, call=None):
    """``untouched(y, y, None, message, where)`` before ``fn(y, ...)``, whose
    ``param += v`` changes an array or list ``y`` in place (a number it
    rebinds), while this function reads ``read`` -- that memory -- after the
    call: raises where ``y`` turns out an array or a list.  ``arg`` is the
    argument as written; the caller puts the name it is computed into in the
    first two places; ``message`` is the statement's, for a refusal."""
    shown = source_of(arg)
    symbol = _augmented_symbol(fn, param)
    message = (
        f"{fn.__name__}() updates its argument '{param}' in place ('{param} {symbol}= ...' on "
        f"an array, there or in a function it passes '{param}' to), and this function "
        f"{read_described(read)}, which shares the memory of '{shown}', after the "
        f"call: srcgrad's code for {fn.__name__} makes a new array there, so that change "
        f"would be lost; pass a copy ("
        f"{copy_passed(call, arg) if call is not None else f'{fn.__name__}({shown}.copy(), ...)'}"
        f") and return the updated array")
    where = constant((filename, getattr(arg, "lineno", None),
                      getattr(arg, "col_offset", None)))
    call = gast.Call(func=helper_ref("untouched"), args=[
        None, None, gast.Constant(value=None, kind=None),
        gast.Constant(value=message, kind=None), where], keywords=[])
    check = gast.copy_location(gast.Expr(value=call), arg)
    check.op = ir.Op(ir.OPAQUE, [], {}, arg, "statement")
    check.comment = f"{fn.__name__} may change {shown} in place; it is read afterwards"
    check.message = message
    return check


_SYMBOLS = {gast.Add: "+", gast.Sub: "-", gast.Mult: "*", gast.Div: "/", gast.FloorDiv: "//",
            gast.Mod: "%", gast.Pow: "**", gast.MatMult: "@", gast.BitOr: "|"}


def _augmented_symbol(fn, param) -> str:
    """The operator of the callee's ``param op= v`` (``g *= 0.5``): the first one
    in its source, or ``op`` where it is made in a function it passes ``param``
    to."""
    try:
        func = parse_function(fn).node
    except SrcGradError:
        return "op"
    for node in walk(func):
        if isinstance(node, gast.AugAssign) and isinstance(node.target, gast.Name) \
                and node.target.id == param:
            return _SYMBOLS.get(type(node.op), "op")
    return "op"


def read_after_call(func, params, resolve, call, arg, deep=True, rebound=None,
                    sequences=()):
    """The first read in ``func`` that may run after ``call`` and see the memory
    of ``arg``, one of its argument expressions (``t``, ``y[1:]``, ``h`` with
    ``h = y``: a read of ``y``, of a view of it, of a list holding it); None
    where there is none (a read before the call, of a new array, of what the
    call returns).  Only a read afterwards can tell the callee's update.
    ``sequences``: the parameters passed a list or tuple (``xs + ys`` of them
    concatenates)."""
    scan = Scan(func, params, resolve, sequences)
    order = Order(func, scan)
    if id(call) not in order.position:  # rebuilt by the normaliser: found by place
        call = next((n for n in walk(func) if isinstance(n, gast.Call)
                     and getattr(n, "lineno", None) == getattr(call, "lineno", -1)
                     and getattr(n, "col_offset", None) == getattr(call, "col_offset", -1)),
                    call)
    scan.fresh_calls.add(id(call))  # y = fill(buf): the updated copy, as in Python
    scan.run()
    # what the callee's update reaches: the memory the argument is or is part of
    # (a new list holding the caller's arrays, xs.copy(), only where it updates those)
    shares = [(name, rel) for name, rel in scan.deps(arg) if rel != HELD or deep]
    if not shares:
        return None
    roots = [name for name, _ in shares]
    scan.relate("<argument>", shares)
    groups = scan.reached("<argument>")
    # state[1][0] = v (or state[0] += v) in the callee: the arrays the list was
    # built from change too; rebinding 'state' to the result excuses reads of
    # 'state' alone (and of parts taken from the result), never of those arrays
    if deep or rebound:
        groups |= held_below(scan, "<argument>")
    inside = {id(n) for n in walk(call)}  # its arguments, evaluated first
    loops = order.position.get(id(call), (None, 0, ()))[2]

    def after(read) -> bool:
        if id(read) in inside:  # before the call -- or after it, in a loop
            return id(call) in order.nested or bool(loops) and not order.fresh_again(
                read, order.loops[loops[-1]])
        return order.after(read, call)

    reads = [r for r in scan.seeing(roots[0], groups) if after(r)
             and not _sees_the_result(r, rebound, call, func, order, scan)]
    return min(reads, key=lambda r: order.position[id(r)][1], default=None) \
        if all(id(r) in order.position for r in reads) else (reads[0] if reads else None)


def _sees_the_result(read, rebound, call, func, order, scan) -> bool:
    """Whether ``read`` is of a name in ``rebound``, which the call's own
    statement binds to what the callee returns (``state = step(state)``), and
    no binding of that name other than those ``rebound`` maps it to (the
    updated copy of a callee too) or to a new value (``state = [a * 1.0, b *
    1.0]``) may run after the call: it reads a result, not the old memory."""
    if not rebound or id(call) in order.nested:
        return False
    if read.id not in rebound:
        return _taken_from_the_result(read, rebound, call, func, order, scan)

    def new_value(n) -> bool:
        stmt = order.position.get(id(n), (None,))[0]
        return isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 \
            and stmt.targets[0] is n and not scan.deps(stmt.value)

    def updated(n) -> bool:
        # u = step(u, c); u *= 0.9: the result updated in place (or, a number, a new
        # value), never the old memory (reviewer s33, F19)
        stmt = order.position.get(id(n), (None,))[0]
        return isinstance(stmt, gast.AugAssign) and stmt.target is n

    return not any(isinstance(n, gast.Name) and n.id == read.id
                   and not isinstance(n.ctx, (gast.Load, gast.Param))  # bound at entry
                   and id(n) not in rebound[read.id] and not new_value(n) and not updated(n)
                   and order.after(n, call) for n in walk(func))


def _taken_from_the_result(read, rebound, call, func, order, scan) -> bool:
    """Whether ``read`` is of a name only ever bound to a part of the call's
    result (``pos = state[0]``, ``pos, vel = state``, ``state`` a name of
    ``rebound``), and one of those bindings stands, in one statement list,
    after the statement holding the call and before the one holding the read:
    every way from the call to the read passes it, so the read sees the
    result's part, not the old memory."""
    if id(read) in order.nested:
        return False
    bindings = [n for n in walk(func) if isinstance(n, gast.Name) and n.id == read.id
                and not isinstance(n.ctx, gast.Load)]
    lists = [v for node in walk(func) for _, v in gast.iter_fields(node)
             if isinstance(v, list) and v and isinstance(v[0], gast.stmt)]

    def index_in(body, node):  # the position in ``body`` of the statement holding node
        return next((i for i, stmt in enumerate(body)
                     if any(sub is node for sub in walk(stmt))), None)

    own = order.position.get(id(call), (None,))[0]
    kills = False
    for n in bindings:
        stmt = order.position.get(id(n), (None,))[0]
        if not isinstance(stmt, gast.Assign) or len(stmt.targets) != 1 or not (
                stmt.targets[0] is n or isinstance(stmt.targets[0], (gast.Tuple, gast.List))
                and any(e is n for e in stmt.targets[0].elts)):
            return False
        deps = scan.deps(stmt.value)
        if not deps or any(d not in rebound for d, _ in deps) or any(
                isinstance(sub, (gast.Call, gast.Lambda, gast.NamedExpr, gast.comprehension))
                for sub in walk(stmt.value)) or not all(
                _sees_the_result(sub, rebound, call, func, order, scan)
                for sub in walk(stmt.value) if isinstance(sub, gast.Name) and sub.id in rebound):
            return False  # pos = f(state), pos = s0[0]: not known to be the result's
        body = next((b for b in lists if any(s is stmt for s in b)), None)
        if body is None or own is None:
            continue
        at, called, read_at = (index_in(body, stmt), index_in(body, own),
                               index_in(body, read))
        if called is None or not called < at:
            continue
        if read_at is not None and at < read_at:
            kills = True
        # for ...: state = step(state); pos = state[0] -- then a read after the loop:
        # it leaves only through the end of its body, past the binding
        loop = next((node for node in walk(func) if isinstance(node, (gast.For, gast.While))
                     and node.body is body), None)
        outer = next((b for b in lists if any(s is loop for s in b)), None)
        if loop is not None and outer is not None and not loop.orelse and not any(
                isinstance(sub, (gast.Break, gast.Continue)) for sub in walk(loop)):
            after_loop = index_in(outer, read)
            if after_loop is not None and index_in(outer, loop) < after_loop:
                kills = True
    return kills
