"""Adjoint arithmetic written into arrays the adjoint sweep owns: no fresh
array per operation.

On large arrays the adjoint sweep's cost is mostly memory: ``d_m = d_m +
d_n / h`` makes a new array for the sum, ``d_y = d_aa * np.cos(y)`` one for
the product although ``np.cos(y)`` is a new array read by nothing else, and
new arrays of megabytes are page-faulted in on first touch (2,600 faults a
call of the benchmark's 30-operation chain on 1e6 floats; none with this
pass).  This pass writes each statement's result into an array already there:

* ``d_a = d_a + e`` -> ``d_a = into_first(np.add, d_a, e)``, that is
  ``d_a += e``, where ``d_a`` is *owned* (below); ``-``, ``*``, ``/`` too;
* ``a op f`` -> ``into_second(np.op, a, f)``, the result written into
  ``f``'s array, where ``f`` is an unnamed fresh array (an arithmetic
  result or a NumPy ufunc call's: ``np.cos(y)``, ``1 - h ** 2``) or an
  owned cotangent that this statement reads once and no later statement
  mentions; ``f op a`` -> ``into_first``.

Only a statement's outermost operation: the arrays of inner temporaries,
freed at once, are reused by the allocator without new pages, and one
helper call a statement keeps the code readable.  The operands keep their
order and operation, so each element is the same IEEE operation on the
same numbers; the helpers (:mod:`srcgrad.runtime.inplace`) check at run
time that the array written into has the plain result's exact type, shape,
dtype and memory order (no broadcast: a ``(3, 1)`` cotangent plus a ``(3,
4)`` term gets a new array; no promotion: a float32 array never receives a
float64 sum), and else compute the plain ``a op b``.  So the gradient is
bit for bit the one without this pass.

Sound when the array written into is read by nothing afterwards but the
result's name.  An unnamed fresh array is read by its one operation.  A
cotangent ``d_a`` is owned at a statement when it was last assigned earlier
in the same block an arithmetic result (an operator's, a ufunc call's, or
a helper's, which is an owned array or a fresh one), and every statement
since, this one included, read ``d_a`` only as an operand of arithmetic or
of a ufunc call (which keep no reference).  A copy ``d_s = d_a`` (both
names would share the array), an attribute or element read (a view), a
call of anything else (``grad_like``, a tape push, ``unreduce``), a
container, a ``return``, a ``del``, any mention inside a loop or a branch
in between: each ends ownership.  Arguments, tape entries, forward values,
the seed and ``unreduce``'s read-only views are never owned: they are not
arithmetic results of the block.  That arithmetic and ufuncs return a new
array is NumPy's contract (an object whose operators return an array held
elsewhere would break it).

The forward sweep's statements too, where the array written into is a
forward value NumPy made that nothing reads afterwards (:func:`forward_values`:
``k = j - a``, ``j`` read no more, ``k = into_first(np.subtract, j, a)``;
``d_m = d_cc * aa``, ``aa`` read no more, into ``aa``'s array): the same
ownership proof, over both sweeps in order, so a value the adjoint sweep
reads, the output, or one a view, copy, container or call holds is never
written into; the forward sweep's values stay bit for bit the function's
(tests/optimize/test_inplace_forward.py).  A value read afterwards for its
shape alone (:mod:`.shape_reads`) is read no more: ``np.tanh(t1 + b1)`` takes
``into_first(np.add, t1, b1)``, which keeps the array's type, shape and dtype.

Not touched: loop bodies (arrays there are
often small, where a helper call costs more than the allocation it saves);
statements on cotangents whose value is a scalar by its shape class, or
that call ``math`` (Python floats: nothing to write into).  A branch's body
is a block of its own.  The pass runs for the NumPy backend only (numba
would not compile the helpers) and where ``optimize`` is on.  The
higher-order transformations differentiate generated forward-mode code,
which this pass leaves alone; generated reverse-mode code is not
differentiated again (its ``grad_seed`` has no rule either).  Tested by
tests/optimize/test_inplace_adjoint.py.

    >>> import gast
    >>> from ..ir.emit import show_statements
    >>> sweep = gast.parse(
    ...     "d_m = d_cc * aa\\n"
    ...     "d_y = d_aa * np.cos(y)\\n"
    ...     "d_m = d_m + d_n / h\\n"
    ...     "d_s = d_m\\n"
    ...     "d_m = d_m + d_k\\n"
    ...     "return grad_like(d_m, m), d_s, d_y").body
    >>> print(show_statements(update_in_place(sweep, {"d_m", "d_y", "d_s"})))
    d_m = d_cc * aa
    d_y = into_second(np.multiply, d_aa, np.cos(y))  # d_aa * np.cos(y), written into the new array of np.cos(y)
    d_m = into_first(np.add, d_m, d_n / h)  # d_m += d_n / h, in place
    d_s = d_m
    d_m = d_m + d_k
    return grad_like(d_m, m), d_s, d_y
"""

from __future__ import annotations

import copy

import gast
import numpy as np

from .. import ir
from ..analysis.activity import SCALAR
from ..ir.syntax import call_to, load_name, source_of, walk, walk_nodes
from .shape_reads import note_shape_read, shape_reads

#: The operators written into an array, and the ufunc each one is.
_UFUNCS = {gast.Add: "add", gast.Sub: "subtract", gast.Mult: "multiply", gast.Div: "true_divide"}
#: Operators whose result is a new array when an operand is one.
_FRESH_OPS = (gast.Add, gast.Sub, gast.Mult, gast.Div, gast.Pow, gast.MatMult, gast.FloorDiv,
              gast.Mod)
_SYMBOLS = {gast.Add: "+", gast.Sub: "-", gast.Mult: "*", gast.Div: "/"}
_HELPERS = ("into_first", "into_second", "into_operand")
#: Unary ufuncs whose result on an array of real floats has the array's dtype:
#: ``np.f(a)`` may be written into ``a``'s array (``into_operand``).
_UNARY = frozenset({
    "sin", "cos", "tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh", "arcsinh",
    "arccosh", "arctanh", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt",
    "cbrt", "square", "reciprocal", "negative", "positive", "absolute", "fabs", "rint",
    "floor", "ceil", "trunc", "deg2rad", "rad2deg", "sign"})
_COMPOUND = (gast.If, gast.For, gast.While, gast.With, gast.Try, gast.FunctionDef)


def update_in_place(stmts, cotangents, skip=frozenset(), scalars=frozenset(),
                    classes=None, values=frozenset()) -> list:
    """The adjoint sweep ``stmts`` with arithmetic written into owned arrays
    (see the module docstring); ``cotangents`` are the names whose sums may
    be updated in place, ``skip`` the ids of statements to leave alone (the
    forward sweep's), ``scalars`` cotangents known to be scalars (of values
    whose shape class is a scalar), whose statements are left alone too, as
    are those calling ``math``.  ``classes``: the shape classes of the names
    whose shape never changes (see :func:`keep_scalar`), None for none.
    ``values``: the forward sweep's names whose arrays may be written into
    too (see :func:`forward_values`); where there are any, the forward
    sweep's statements are rewritten as well.
    ``stmts`` is changed in place and returned."""
    skip = set(skip)
    walks = [walk_nodes(stmt) for stmt in stmts]  # (each statement's nodes, for both steps)
    if classes:
        keep_scalar(stmts, skip, classes, walks)
    _block(stmts, set(cotangents) | set(values), set() if values else skip, set(),
           set(scalars), walks)
    return stmts


def forward_values(forward, params) -> set[str]:
    """The names the forward sweep's statements ``forward`` assign (its own
    values, not the parameters ``params``): where one is a fresh array that
    nothing reads after a statement, that statement may write into it, as an
    adjoint statement into a cotangent's (``k = j - a``, ``j`` read no more:
    ``k = into_first(np.subtract, j, a)``).  The same ownership proof holds
    (see the module docstring): a forward value is owned from an assignment
    of fresh arithmetic on, until anything but arithmetic reads it, and dead
    where no later statement -- of either sweep -- mentions it, so a value
    the adjoint sweep reads, the output, a tape's entry or a value a later
    statement reads through a view is never written into.

    Only names whose values come from NumPy -- an ``np.`` call or a matrix
    product ``@``, or arithmetic on such a name -- are offered: code on
    Python floats (``d = t9 + a ** 3``) would call a helper for nothing.

        >>> body = gast.parse("a = np.sin(x)\\nb = a * 2.0\\nc = x * 2.0\\n"
        ...                   "d = math.cos(c)\\ne = x @ w").body
        >>> sorted(forward_values(body, ["x", "w"]))
        ['a', 'b', 'e']
    """
    made: set[str] = set()
    for stmt in forward:
        if isinstance(stmt, gast.Assign) and any(
                isinstance(n, gast.Name) and n.id in made
                or isinstance(n, gast.BinOp) and isinstance(n.op, gast.MatMult)
                or isinstance(n, gast.Call) and isinstance(n.func, gast.Attribute)
                and isinstance(n.func.value, gast.Name) and n.func.value.id == "np"
                for n in walk_nodes(stmt.value)):
            made.update(ir.target_names(stmt))
    return made - set(params)

def steady_classes(program, classes) -> dict:
    """``classes`` (:func:`..analysis.activity.shape_classes` of ``program``)
    restricted to the names that hold one value all along: arguments never
    assigned and names assigned once, by a top-level statement, whose class
    is a scalar or such a name; empty where the program updates anything in
    place (an ``append`` may grow a list)."""
    body = program.body
    if any(ir.is_update(stmt) for stmt in ir.walk_statements(body)):
        return {}
    counts, _ = ir.definitions(body)
    once = {n for stmt in body if not isinstance(stmt, _COMPOUND)
            for n in ir.assigned_by(stmt) if counts.get(n) == 1}
    steady = {p for p in program.params if not counts.get(p)} | once
    return {n: c for n, c in classes.items()
            if n in steady and (c == SCALAR or c in steady)}


def keep_scalar(stmts, skip, classes, walks=None) -> None:
    """``d = unreduce(g, x)`` -> ``d = unreduced(g, x)``, ``g`` kept a scalar,
    where every reader of ``d`` is an elementwise ``+ - * /`` whose other
    operand has ``x``'s shape: the broadcast array of ``x``'s size is never
    made, and each reader's result has the shape, dtype and numbers it had.

    Sound when: ``d`` is assigned once, at the top level, and read only there,
    after, each time as an operand of ``+ - * /`` whose other operand is an
    expression of ``x``'s shape class (``classes``: the program's
    :func:`..analysis.activity.shape_classes`, restricted by the caller to
    the arguments never assigned and the names assigned once, at the top
    level, whose class is one of those, in a program that updates nothing in
    place; a name the adjoint sweep assigns is dropped here: each name then
    holds one array, of its class's shape, all along the sweep; the other
    operand reads no candidate, which may itself become a scalar) -- a
    scalar broadcasts against it to the
    very shape ``x``'s array had; and a NumPy scalar promotes as an array of
    its dtype (NumPy 2, NEP 50: the helper keeps ``unreduce`` otherwise).
    ``walks``: :func:`walk` of each statement, where the caller has them (those
    of the statements rewritten here are made again).

        >>> import gast
        >>> from ..ir.emit import show_statements
        >>> sweep = gast.parse("d_c = unreduce(d_t, x)\\nd_a = d_c * m\\n"
        ...                    "d_b = d_c + np.sin(x) * 2.0\\nreturn d_a, d_b").body
        >>> keep_scalar(sweep, set(), {"x": "x", "m": "x"})
        >>> print(show_statements(sweep))
        d_c = unreduced(d_t, x)  # a scalar: its readers broadcast it
        d_a = d_c * m
        d_b = d_c + np.sin(x) * 2.0
        return d_a, d_b
    """
    # each statement's names, walked once (three walks per statement were a
    # tenth of a long function's compile)
    if walks is None:
        walks = [walk_nodes(stmt) for stmt in stmts]
    names = [[n for n in nodes if isinstance(n, gast.Name)] for nodes in walks]
    stored = {n.id for stmt, mentioned in zip(stmts, names) if id(stmt) not in skip
              for n in mentioned if isinstance(n.ctx, gast.Store)}
    steady = {n: c for n, c in classes.items() if n not in stored}
    counts: dict[str, int] = {}
    for mentioned in names:
        for n in mentioned:
            if isinstance(n.ctx, (gast.Store, gast.Del)):
                counts[n.id] = counts.get(n.id, 0) + 1
    env: dict[str, str | None] = {}   # the class of each cotangent made so far at top level
    candidates: dict[str, tuple] = {}  # d -> (its statement, x's class, its readers so far)
    for stmt, mentioned in zip(stmts, names):
        if id(stmt) in skip or not isinstance(stmt, (gast.Assign, gast.Return)) \
                or isinstance(stmt, gast.Assign) \
                and not (len(stmt.targets) == 1 and isinstance(stmt.targets[0], gast.Name)):
            for n in mentioned:
                candidates.pop(n.id, None)
                env.pop(n.id, None)
            continue
        value = stmt.value
        ids = {n.id for n in mentioned}
        read = [d for d in candidates if d in ids]
        unknown = _Unknown(env, set(candidates) if read else ())  # a candidate may become a scalar
        for d in read:
            if not _read_elementwise(value, d, candidates[d][1], unknown, steady):
                del candidates[d]
        if isinstance(stmt, gast.Return):
            continue
        target = stmt.targets[0].id
        env[target] = _class_of(value, env, steady)
        if is_unreduce(value) and counts.get(target) == 1 and value.args[1].id in steady \
                and steady[value.args[1].id] is not None:
            candidates[target] = (stmt, steady[value.args[1].id])
    if candidates:
        at = {id(stmt): i for i, stmt in enumerate(stmts)}
    for d, (stmt, _) in candidates.items():
        stmt.value.func = load_name("unreduced")
        walks[at[id(stmt)]] = walk_nodes(stmt)
        if not getattr(stmt, "comment", None):
            stmt.comment = "a scalar: its readers broadcast it"


class _Unknown:
    """The classes ``env`` knows, with every name in ``candidates`` unknown (None):
    a view, not a merged copy per statement (which grew with the sweep)."""

    def __init__(self, env, candidates):
        self.env, self.candidates = env, candidates

    def __contains__(self, name):
        return name in self.candidates or name in self.env

    def __getitem__(self, name):
        return None if name in self.candidates else self.env[name]


def is_unreduce(node) -> bool:
    """``unreduce(g, x)``, ``x`` a name: the cotangent ``g`` of a full reduction of
    ``x`` (no axis), one scalar broadcast to ``x``'s shape."""
    return isinstance(node, gast.Call) and isinstance(node.func, gast.Name) \
        and node.func.id == "unreduce" and len(node.args) == 2 and not node.keywords \
        and isinstance(node.args[1], gast.Name)


def _read_elementwise(node, d, cls, env, steady) -> bool:
    """Whether every read of ``d`` in ``node`` is an operand of ``+ - * /``
    whose other operand has the shape class ``cls``."""
    if isinstance(node, gast.Name):
        return node.id != d
    if isinstance(node, gast.BinOp) and type(node.op) in _UFUNCS:
        for mine, other in ((node.left, node.right), (node.right, node.left)):
            if isinstance(mine, gast.Name) and mine.id == d:
                return cls != SCALAR and _class_of(other, env, steady) == cls \
                    and not any(isinstance(n, gast.Name) and n.id == d for n in walk_nodes(other))
    return all(_read_elementwise(child, d, cls, env, steady)
               for child in gast.iter_child_nodes(node))


def _class_of(node, env, steady):
    """The shape class of ``node``'s value, None where unknown."""
    if isinstance(node, gast.Constant):
        ok = isinstance(node.value, (int, float)) and not isinstance(node.value, bool)
        return SCALAR if ok else None
    if isinstance(node, gast.Name):
        return env[node.id] if node.id in env else steady.get(node.id)
    if isinstance(node, gast.BinOp) and isinstance(node.op, (*_UFUNCS, gast.Pow)):
        return _joined(_class_of(node.left, env, steady), _class_of(node.right, env, steady))
    if isinstance(node, gast.UnaryOp) and isinstance(node.op, (gast.USub, gast.UAdd)):
        return _class_of(node.operand, env, steady)
    if _ufunc_call(node) and len(node.args) in (1, 2) \
            and getattr(np, node.func.attr).signature is None:
        classes = [_class_of(a, env, steady) for a in node.args]
        return classes[0] if len(classes) == 1 else _joined(*classes)
    if is_unreduce(node):
        return steady.get(node.args[1].id)
    return None


def _joined(a, b):
    """The class of an elementwise operation's result on operands of classes ``a``, ``b``."""
    if a is None or b is None:
        return None
    if a == b or b == SCALAR:
        return a
    return b if a == SCALAR else None


def _is_math(node) -> bool:
    return isinstance(node, gast.Attribute) and isinstance(node.value, gast.Name) \
        and node.value.id == "math"


def _block(stmts, cotangents, skip, after, scalars, walked=None) -> None:
    """Rewrite one block; ``after``: the names mentioned after it (in the
    enclosing blocks' later statements); ``walked``: :func:`walk` of each of
    its statements, where the caller has them."""
    owned: set[str] = set()
    last = {}  # name -> the last statement mentioning it, but for its shape (shape_reads)
    shaped, defined = {}, {}  # name -> the last statement reading its shape; assigning it
    # each statement walked once, here (an assignment is rewritten only when
    # its turn comes, so its nodes are still these then)
    if walked is None:
        walked = [walk_nodes(stmt) for stmt in stmts]
    for i, nodes in enumerate(walked):
        shape_only = shape_reads(nodes)
        for n in nodes:
            if isinstance(n, gast.Name):
                if id(n) in shape_only:
                    shaped[n.id] = i
                else:
                    last[n.id] = i

    def later(at):
        """The names mentioned after ``stmts[at]`` (a set for a nested block)."""
        return after | {n for n, i in last.items() if i > at}

    for at, stmt in enumerate(stmts):
        if id(stmt) in skip:
            owned.clear()
            continue
        if isinstance(stmt, gast.If):
            _block(stmt.body, cotangents, skip, later(at), scalars)
            _block(stmt.orelse, cotangents, skip, later(at), scalars)
        if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], gast.Name)):
            # loops, branches, calls, del, return: what they mention, read or assigned
            owned.difference_update(n.id for n in walk_nodes(stmt) if isinstance(n, gast.Name))
            continue
        target = stmt.targets[0].id
        owned.difference_update(_kept_reads(stmt.value))
        value, comment = stmt.value, None
        commented = bool(getattr(stmt, "comment", None))  # keeps its own comment
        # walk(stmt) is [stmt, its target, then the value's nodes and the target's ctx]
        nodes = walked[at][2:]
        # an owned array this statement reads once and nothing reads later
        reads = [n.id for n in nodes if isinstance(n, gast.Name)]
        dead = {n for n in set(reads) if n in owned and n in cotangents and n not in scalars
                and reads.count(n) == 1 and n not in after and last.get(n, -1) <= at}
        if target in scalars or any(_is_math(n) for n in nodes):
            pass  # Python floats: nothing to write into, a helper call for nothing
        elif target in owned and target in cotangents and _is_sum_into(value, target):
            if not commented:
                comment = f"{target} {_SYMBOLS[type(value.op)]}= {source_of(value.right)}, " \
                    "in place"
            value = _into(value, first=True)
            value.args[2] = _unary_into_operand(value.args[2], dead)
        else:
            original = value
            value = _unary_into_operand(_reuse_fresh(value, dead), dead)
            if _is_helper(value) and not commented:
                # the arithmetic as written, then where its result goes
                buffer = _buffer(value)
                if _is_helper(buffer) and buffer.func.id == "into_operand":
                    buffer = buffer.args[1]  # np.f(a) written into a's array
                elif isinstance(original, gast.BinOp) and value.func.id != "into_operand":
                    # the operand as written (an into_operand inside it is news to no one)
                    buffer = original.left if value.func.id == "into_first" else original.right
                while _is_helper(buffer):  # np.tanh(t1 + b1) into t1's array, through t1 + b1
                    buffer = _buffer(buffer)
                where = f"{buffer.id}'s array" if isinstance(buffer, gast.Name) \
                    else f"the new array of {source_of(buffer)}"
                comment = f"{source_of(original)}, written into {where}"
        if comment and not getattr(stmt, "comment", None):
            stmt.comment = comment
        stmt.value = value
        for name in _written_names(value):
            if shaped.get(name, -1) > at and name in defined:
                note_shape_read(defined[name], stmt, name)
            owned.discard(name)  # its array is the target's now
        owned.discard(target)
        if _fresh(value) or _is_helper(value):
            owned.add(target)
        defined[target] = stmt


def _written_names(value) -> list[str]:
    """The names whose arrays the helper calls in ``value`` write into."""
    return [_buffer(n).id for n in walk_nodes(value)
            if _is_helper(n) and isinstance(_buffer(n), gast.Name)]


def _into_dead(node, dead):
    """``node``, an ``a op b`` with an operand in ``dead``, written into that
    operand's array: ``np.tanh(t1 + b1)`` takes ``into_first(np.add, t1, b1)``."""
    if isinstance(node, gast.BinOp) and type(node.op) in _UFUNCS:
        for first, operand in ((True, node.left), (False, node.right)):
            if isinstance(operand, gast.Name) and operand.id in dead:
                return _into(node, first)
    return node


def _is_sum_into(value, target) -> bool:
    return isinstance(value, gast.BinOp) and type(value.op) in _UFUNCS \
        and isinstance(value.left, gast.Name) and value.left.id == target


def _is_helper(node) -> bool:
    return isinstance(node, gast.Call) and isinstance(node.func, gast.Name) \
        and node.func.id in _HELPERS


def _buffer(call):
    return call.args[2] if call.func.id == "into_second" else call.args[1]


def _unary_into_operand(node, dead):
    """``node`` with each ``np.f(a)`` in it (``f`` in :data:`_UNARY`), whose
    operand ``a`` is a fresh unnamed array or a name in ``dead`` (an owned
    array read once, here, and never after), written into ``a``'s array:
    ``into_operand(np.f, a)``.  Either way nothing else holds that array,
    and nothing reads it afterwards but through this call's result.

        >>> from ..ir.emit import show_statements
        >>> stmts = gast.parse("m = np.sqrt(l + 1.0) * np.cos(y) + np.exp(w)").body
        >>> stmts[0].value = _unary_into_operand(stmts[0].value, {"y"})
        >>> print(show_statements(stmts))
        m = into_operand(np.sqrt, l + 1.0) * into_operand(np.cos, y) + np.exp(w)

    ``1 - a ** 2`` (tanh's derivative) likewise, as ``one_minus_square(a)``
    (:mod:`srcgrad.runtime.inplace`: ``np.square`` then ``np.subtract``, the
    two operations ``1 - a ** 2`` is), so no array is made for it at all:

        >>> stmts = gast.parse("d_r = d_s * (1 - s ** 2)").body
        >>> stmts[0].value = _unary_into_operand(stmts[0].value, {"s"})
        >>> print(show_statements(stmts))
        d_r = d_s * into_operand(one_minus_square, s)
    """
    if _one_minus_square(node):
        arg = _into_dead(_unary_into_operand(node.right.left, dead), dead)
        if _fresh(arg) or _is_helper(arg) or isinstance(arg, gast.Name) and arg.id in dead:
            return call_to("into_operand", load_name("one_minus_square"), arg)
    elif isinstance(node, gast.Call) and _ufunc_call(node) and node.func.attr in _UNARY \
            and len(node.args) == 1:
        arg = _into_dead(_unary_into_operand(node.args[0], dead), dead)
        if _fresh(arg) or _is_helper(arg) or isinstance(arg, gast.Name) and arg.id in dead:
            func = gast.Attribute(value=load_name("np"), attr=node.func.attr, ctx=gast.Load())
            return call_to("into_operand", func, arg)
    if isinstance(node, (gast.BinOp, gast.UnaryOp, gast.Call)):
        # a changed node is a copy: the statement's original still reads as written
        # (its comment quotes it)
        changed = {}
        for field, child in gast.iter_fields(node):
            if isinstance(child, gast.expr):
                new = _unary_into_operand(child, dead)
                if new is not child:
                    changed[field] = new
            elif isinstance(child, list):
                new = [_unary_into_operand(c, dead) if isinstance(c, gast.expr) else c
                       for c in child]
                if any(a is not b for a, b in zip(new, child)):
                    changed[field] = new
        if changed:
            node = copy.copy(node)
            for field, new in changed.items():
                setattr(node, field, new)
    return node


def _one_minus_square(node) -> bool:
    """``1 - a ** 2`` (or ``1.0 - a ** 2``), as the tanh rule writes it."""
    def number(n, value):
        return isinstance(n, gast.Constant) and type(n.value) in (int, float) \
            and n.value == value
    return isinstance(node, gast.BinOp) and isinstance(node.op, gast.Sub) \
        and number(node.left, 1) and isinstance(node.right, gast.BinOp) \
        and isinstance(node.right.op, gast.Pow) and number(node.right.right, 2) \
        and type(node.right.right.value) is int


def _ufunc_call(node) -> bool:
    """``np.f(args)`` with ``np.f`` a NumPy ufunc, positional arguments only, as
    many as it takes (no ``out=``): its result is a new array (or a scalar)."""
    if not (isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute)
            and isinstance(node.func.value, gast.Name) and node.func.value.id == "np"
            and not node.keywords and not any(isinstance(a, gast.Starred) for a in node.args)):
        return False
    ufunc = getattr(np, node.func.attr, None)
    return isinstance(ufunc, np.ufunc) and len(node.args) == ufunc.nin


def _fresh(node) -> bool:
    """Whether ``node`` evaluates to a new object (when it is an array) that
    nothing else holds: an operator's result or a ufunc call's."""
    if isinstance(node, gast.BinOp):
        return isinstance(node.op, _FRESH_OPS)
    if isinstance(node, gast.UnaryOp):
        return isinstance(node.op, gast.USub)
    return _ufunc_call(node)


#: Runtime helpers that keep no reference to (and never return) the arrays
#: passed at these positions: a matrix product's cotangents (a new product,
#: a new array of sums, or 0.0), a seed (a number; its operands and the
#: thunk it may call at once) and, for ``unbroadcast``/``unreduce``, the
#: value read for its shape alone.  Passing an owned array to them keeps it owned.
_READ_ONLY_ARGS = {"matmul_grad_a": (0, 1, 2), "matmul_grad_b": (0, 1, 2),
                   "summed_matmul_grad_a": (0, 1, 2), "summed_matmul_grad_b": (0, 1, 2),
                   "summed_product_seed": (1, 2), "summed_elementwise_seed": (1, 2),
                   "unbroadcast": (1,), "unreduce": (1,)}


def _kept_reads(node) -> set[str]:
    """Names ``node`` reads other than as an operand of arithmetic or of a ufunc
    or as an argument a helper of :data:`_READ_ONLY_ARGS` only reads: where the
    value may be kept (a copy, a call's argument, a container)."""
    kept: set[str] = set()

    def visit(n, consumed):
        if isinstance(n, gast.Name):
            if not consumed:
                kept.add(n.id)
            return
        if isinstance(n, gast.BinOp):
            visit(n.left, True)
            visit(n.right, True)
        elif isinstance(n, gast.UnaryOp):
            visit(n.operand, True)
        elif _ufunc_call(n):
            for a in n.args:
                visit(a, True)
        elif consumed and isinstance(n, gast.Tuple):   # operands, read one by one
            for a in n.elts:
                visit(a, True)
        elif consumed and isinstance(n, gast.Lambda):  # a thunk the helper calls at once
            visit(n.body, True)
        elif isinstance(n, gast.Call) and isinstance(n.func, gast.Name) \
                and n.func.id in _READ_ONLY_ARGS and not n.keywords:
            read = _READ_ONLY_ARGS[n.func.id]
            for i, a in enumerate(n.args):
                visit(a, i in read and not isinstance(a, gast.Starred))
        else:
            for child in gast.iter_child_nodes(n):
                visit(child, False)

    visit(node, False)
    return kept


def _reuse_fresh(node, dead=frozenset()):
    """``node``, an ``a op b``, written into ``a``'s or ``b``'s array where that
    operand is a fresh unnamed array or a name in ``dead`` (owned arrays that
    ``node`` reads once and nothing reads afterwards); else ``node``.  Only the
    outermost operation: an inner temporary's array, freed at once, is reused
    by the allocator for the next one without new pages."""
    if isinstance(node, gast.BinOp) and type(node.op) in _UFUNCS:
        for first, operand in ((True, node.left), (False, node.right)):
            if _fresh(operand):
                return _into(node, first)
        for first, operand in ((True, node.left), (False, node.right)):
            if isinstance(operand, gast.Name) and operand.id in dead:
                return _into(node, first)
    return node


def _into(binop, first):
    ufunc = gast.Attribute(value=load_name("np"), attr=_UFUNCS[type(binop.op)],
                           ctx=gast.Load())
    return call_to("into_first" if first else "into_second", ufunc, binop.left, binop.right)
