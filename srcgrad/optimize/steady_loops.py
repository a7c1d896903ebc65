"""An adjoint loop run without its shape checks where one guard, before it,
shows that every step sees the same shapes.

The adjoint of ``for t in t1: h = np.tanh(xs[t] @ W + h @ U)`` calls, in each
step, runtime helpers that look at their operands before doing the work:
``unbroadcast(d_t5, t3)`` returns ``d_t5`` itself where the shapes match (it
was taped ``t3`` to read that shape), ``matmul_grad_a(d_t4, h, U)`` is
``d_t4 @ U.T`` for three 2-D arrays.  Those checks, repeated fifty times,
cost a tenth of the RNN benchmark's gradient; a careful hand gradient makes
none, because its author knows the shapes.  Shapes are not known when the
code is compiled, but a loop whose carried values keep their shape from
step to step (a recurrent state ``h`` of one shape, the steps' slices of one
array) has them known once the tapes are written: this pass reads the
loop's body symbolically, each array value described by an expression for
its shape in terms of the values the loop starts from (``h.shape``,
``U.shape``, ``xs.shape[1:]``), and emits

    if <guard>:
        for t in reversed(t1):   # the helpers' fast branches, written out
            ...
    else:
        for t in reversed(t1):   # the loop as it was
            ...

The guard, evaluated once, checks that every value the body starts from is
an ``np.ndarray`` (of at least one dimension; of two where a product reads
it), that every tape entry a step restores is an array of its name's shape
(:func:`srcgrad.runtime.steps.steady_tape`), that the shapes the helpers
compare are equal, and that each carried value ends a step with the shape
it started with.  By induction over the steps, each helper then takes, at
every step, the branch its fast form writes out: ``unbroadcast(g, x)`` is
``g`` (the same object), ``matmul_grad_a(g, a, b)`` is ``g @ b.T``,
``matmul_grad_b(g, a, b)`` is ``a.T @ g`` -- the same operations on the same
arrays, so the gradient is bit for bit the loop's.  Values the fast body no
longer reads (the shape-only restores ``t3 = t3_tape[t]``, a recomputed
``t3 = t2 @ W``) are left out of it.  Where the guard fails (a value of
another shape at some step, a Python float, a subclass of ndarray) the loop
runs as it was.

Sound because the guard covers every value the fast body reads:

* the body is straight-line: assignments to one name and ``append`` calls
  (which change a list, never an array's shape or type); anything else
  (a branch, a nested loop, an element write, a call that may resize an
  array) leaves the loop alone;
* a name the body reads before assigning it is described by its value at
  the guard (``x.shape``); where the body also assigns it, the guard checks
  that the step's end value has that description again;
* a restore ``x = x_tape[t]`` (an indexed tape, :mod:`srcgrad.memory.
  indexed_tapes`) gives step ``t`` the value the tape holds at ``t``, and a
  read before the restore the value at ``t + 1`` (or the value at the guard,
  in the first step): the guard checks those entries;
* the value operations whose result it describes keep an exact
  ``np.ndarray`` exact (``+ - * / **`` and negation with Python numbers or
  arrays of the same shape -- or a loop-invariant array that broadcasts to
  the other operand's shape, checked by
  :func:`srcgrad.runtime.steps.broadcasts_to` --, a row ``X[t]`` of a 2-D or higher array,
  ``@`` of two 2-D arrays, ``X.T`` of a 2-D array, NumPy's unary math functions); anything else is
  described as unknown, and a helper with an unknown operand is kept;
* only what a written-out helper rests on is checked: ``unbroadcast(g, b)``
  of a loop-invariant ``b`` (a bias, which broadcasts) stays a call, and a
  sum it feeds (``d_b = d_b + unbroadcast(d_t6, b)``, from ``0.0``) needs no
  description.

Runs in reverse mode for the NumPy backend when optimising, after the
indexed tapes, for the policies that keep a loop's steps (``save``,
``recompute``); a checkpointed loop (``sqrt``, ``revolve``) is a schedule,
left alone.  Tested by tests/optimize/test_steady_loops.py.

    >>> import gast
    >>> from ..ir.emit import show_statements
    >>> sweep = gast.parse(
    ...     "for t in reversed(t1):\\n"
    ...     "    d_t5 = d_h * (1 - h ** 2)\\n"
    ...     "    h = h_tape[t]\\n"
    ...     "    d_t3 = unbroadcast(d_t5, t3)\\n"
    ...     "    d_h = matmul_grad_a(d_t5, h, U)\\n"
    ...     "    d_U_steps.append((d_t5, h))\\n"
    ...     "    d_W_steps.append((d_t3, t))\\n"
    ...     "    t3 = t3_tape[t]\\n").body
    >>> print(show_statements(steady_adjoint_loops(sweep, {"h_tape", "t3_tape"}, set())))
    # where every step of the loop sees the shapes checked here, the loop without its helpers' shape checks
    if len(t1) and type(d_h) is np.ndarray and (type(h) is np.ndarray) and (type(t3) is np.ndarray) and (type(U) is np.ndarray) and (t3.ndim >= 1) and (U.ndim == 2) and (d_h.ndim == 2) and (h.ndim == 2) and steady_tape(h_tape, h.shape, 0) and steady_tape(t3_tape, t3.shape, 1) and (d_h.shape == h.shape) and (d_h.shape == t3.shape) and ((d_h.shape[0], U.shape[0]) == d_h.shape):
        for t in reversed(t1):
            d_t5 = d_h * (1 - h ** 2)
            h = h_tape[t]
            d_t3 = d_t5
            d_h = d_t5 @ U.T
            d_U_steps.append((d_t5, h))
            d_W_steps.append((d_t3, t))
    else:
        for t in reversed(t1):
            d_t5 = d_h * (1 - h ** 2)
            h = h_tape[t]
            d_t3 = unbroadcast(d_t5, t3)
            d_h = matmul_grad_a(d_t5, h, U)
            d_U_steps.append((d_t5, h))
            d_W_steps.append((d_t3, t))
            t3 = t3_tape[t]

A loop with a branch in its body is left alone:

    >>> sweep = gast.parse(
    ...     "for t in reversed(t1):\\n"
    ...     "    h = h_tape[t]\\n"
    ...     "    if c:\\n"
    ...     "        d_h = matmul_grad_a(d_h, h, U)\\n").body
    >>> isinstance(steady_adjoint_loops(sweep, {"h_tape"}, set())[0], gast.For)
    True
"""

from __future__ import annotations

from dataclasses import KW_ONLY, dataclass

import gast

from .. import ir
from ..ir.syntax import clone, walk, walk_nodes

#: NumPy's unary math functions whose result, for an exact ``np.ndarray`` of
#: at least one dimension, is an exact ``np.ndarray`` of the same shape.
_UNARY = frozenset({"sin", "cos", "tan", "exp", "log", "sqrt", "tanh", "sinh", "cosh",
                    "square", "abs", "absolute", "negative", "sign", "log1p", "expm1",
                    "arctan", "reciprocal", "conj", "conjugate"})
_ELEMENTWISE = (gast.Add, gast.Sub, gast.Mult, gast.Div, gast.Pow)
_FAST = {"unbroadcast", "matmul_grad_a", "matmul_grad_b"}
_COMMENT = ("where every step of the loop sees the shapes checked here, the loop without its "
            "helpers' shape checks")


@dataclass(frozen=True)
class _Array:
    """An exact ``np.ndarray`` of at least one dimension whose shape is the
    value of ``shape`` (an expression evaluated at the guard); ``ndim``
    where it is known when the code is compiled (a product's 2).  ``needs``:
    the guard's checks that make the description true (``(order, text)``);
    ``carried``: the names the loop assigns whose description at the step's
    start it rests on."""

    shape: str
    ndim: int | None = None
    _: KW_ONLY
    base: str | None = None   # the name whose shape[skip:] this is, if any
    skip: int = 0
    needs: frozenset = frozenset()
    carried: frozenset = frozenset()


_NUMBER = "number"   # a Python int, float, complex or bool written in the code
_TYPES, _RANKS, _TAPES, _SHAPES = range(4)   # the order of the guard's checks


def steady_adjoint_loops(backward, tapes, live_after) -> list:
    """The adjoint sweep ``backward`` with each top-level ``for t in
    reversed(t1)`` loop that can be, duplicated under a guard (see the
    module docstring).  ``tapes``: the indexed tapes' names; ``live_after``:
    the names read after the sweep (its result)."""
    # the names read after each loop: one walk of each statement, from the end
    # (each loop walked every statement after it: quadratic in a sweep of loops)
    after, running = {}, set(live_after)
    if not any(_reversed_loop(stmt) for stmt in backward):
        return list(backward)
    for k in range(len(backward) - 1, -1, -1):
        if _reversed_loop(backward[k]):
            after[k] = set(running)
        running.update(n.id for n in walk_nodes(backward[k]) if isinstance(n, gast.Name))
    out = []
    for k, stmt in enumerate(backward):
        made = _specialise(stmt, tapes, after[k]) if k in after else None
        out.append(made if made is not None else stmt)
    return out


def _reversed_loop(stmt) -> bool:
    return isinstance(stmt, gast.For) and isinstance(stmt.target, gast.Name) \
        and not stmt.orelse and isinstance(stmt.iter, gast.Call) \
        and isinstance(stmt.iter.func, gast.Name) and stmt.iter.func.id == "reversed" \
        and len(stmt.iter.args) == 1 and isinstance(stmt.iter.args[0], gast.Name) \
        and not stmt.iter.keywords


def _union(*described):
    arrays = [d for d in described if isinstance(d, _Array)]
    return (frozenset().union(*(a.needs for a in arrays)),
            frozenset().union(*(a.carried for a in arrays)))


def _joined(*described) -> dict:
    """The checks and carried names of a result of ``described``, as keywords of
    :class:`_Array` (never positionally: its third and fourth fields are others)."""
    needs, carried = _union(*described)
    return {"needs": needs, "carried": carried}


class _Reader:
    """The symbolic reading of one loop body: descriptions, the helpers
    written out, and the checks their proofs need."""

    def __init__(self, loop, tapes):
        self.index = loop.target.id
        self.body = loop.body
        self.tapes = tapes
        self.assigned = {n for stmt in self.body for n in ir.target_names(stmt)}
        self.held = _read_first(loop)       # the names the guard may read
        self.proof: list = []               # the checks the guard makes, in order found
        self.needed: set[str] = set()       # carried names a proof rests on
        self.entry: dict[str, _Array] = {}  # names read as they are at the guard
        self.env: dict[str, object] = {}
        self.replaced: dict[int, gast.expr] = {}   # id of a helper call -> its fast form

    def _entry(self, name):
        if name == self.index:
            return None
        if name not in self.entry:
            self.entry[name] = _Array(
                f"{name}.shape", base=name,
                needs=frozenset({(_TYPES, f"type({name}) is np.ndarray"),
                                 (_RANKS, f"{name}.ndim >= 1")}),
                carried=frozenset({name} & self.assigned))
        return self.entry[name]

    def prove(self, *described, check=None):
        """Add the checks that the descriptions ``described`` (and ``check``) need."""
        needs, carried = _union(*described)
        for need in sorted(needs) + ([(_SHAPES, check)] if check else []):
            if need not in self.proof:
                self.proof.append(need)
        self.needed |= carried

    def read(self, name):
        if name in self.env:
            return self.env[name]
        return self._entry(name)

    def same(self, a, b):
        """The description of an elementwise result of ``a`` and ``b``."""
        if a is None or b is None:
            return None
        if a == _NUMBER:
            return b
        if b == _NUMBER:
            return a
        if self._invariant(a) and not self._invariant(b):
            a, b = b, a
        needs, carried = _union(a, b)
        if a.shape != b.shape:   # a loop-invariant operand (a bias, a scale) may broadcast
            needs |= {(_SHAPES, f"broadcasts_to({b.shape}, {a.shape})" if self._invariant(b)
                       else f"{a.shape} == {b.shape}")}
        return _Array(a.shape, a.ndim if a.ndim is not None else b.ndim, base=a.base,
                      skip=a.skip, needs=needs, carried=carried)

    def _invariant(self, a) -> bool:
        """Whether ``a`` describes a name the loop does not assign, as it is."""
        return a.base is not None and a.base not in self.assigned and a.skip == 0 \
            and a.ndim is None

    def matrix(self, a):
        """``a`` described as a 2-D array (the guard checks its rank), or None."""
        if not isinstance(a, _Array):
            return None
        if a.ndim == 2:
            return a
        rank = (_RANKS, f"{a.base}.ndim == {2 + a.skip}" if a.base is not None
                else f"len({a.shape}) == 2")
        return _Array(a.shape, 2, base=a.base, skip=a.skip, needs=a.needs | {rank},
                      carried=a.carried)

    def value(self, node):
        kind = type(node)
        if kind is gast.Name:
            return self.read(node.id)
        if kind is gast.Constant:
            return _NUMBER if type(node.value) in (int, float, complex, bool) else None
        if kind is gast.UnaryOp and isinstance(node.op, gast.USub):
            return self.value(node.operand)
        if kind is gast.BinOp:
            left, right = self.value(node.left), self.value(node.right)
            if isinstance(node.op, _ELEMENTWISE):
                return self.same(left, right)
            left, right = self.matrix(left), self.matrix(right)
            if isinstance(node.op, gast.MatMult) and left is not None and right is not None:
                return _Array(f"({left.shape}[0], {right.shape}[1])", 2,
                              **_joined(left, right))
            return None
        if kind is gast.Subscript:
            return self._row(node)
        if kind is gast.Attribute and node.attr == "T":   # X.T of a 2-D X, recomputed
            a = self.matrix(self.value(node.value))
            return None if a is None else _Array(f"({a.shape}[1], {a.shape}[0])", 2,
                                                 **_joined(a))
        if kind is gast.Call:
            return self._call(node)
        return None

    def _row(self, node):
        """``X[t]``: a row of an array the loop does not assign."""
        if isinstance(node.value, gast.Name) and isinstance(node.slice, gast.Name) \
                and node.slice.id == self.index and node.value.id not in self.assigned \
                and node.value.id not in self.tapes:
            array = node.value.id
            return _Array(f"{array}.shape[1:]", base=array, skip=1, needs=frozenset({
                (_TYPES, f"type({array}) is np.ndarray"), (_RANKS, f"{array}.ndim >= 2")}))
        return None

    def _call(self, node):
        func = node.func
        args = [self.value(a) for a in node.args]
        if isinstance(func, gast.Attribute):   # np.tanh(a): a's description
            return args[0] if isinstance(args[0], _Array) else None
        if func.id == "unbroadcast":
            g, x = args
            # a loop-invariant operand (a bias) is the one that broadcasts: kept
            invariant = isinstance(node.args[1], gast.Name) \
                and node.args[1].id not in self.assigned
            if invariant or not (isinstance(g, _Array) and isinstance(x, _Array)):
                return None
            self.prove(g, x, check=f"{g.shape} == {x.shape}" if g.shape != x.shape else None)
            self.replaced[id(node)] = node.args[0]
            return g
        g, a, b = (self.matrix(d) for d in args)
        if g is None or a is None or b is None:
            return None
        self.prove(g, a, b)
        g_node, a_node, b_node = node.args

        def transposed(n):
            return gast.Attribute(value=clone(n), attr="T", ctx=gast.Load())
        if func.id == "matmul_grad_a":   # g @ b.T
            product = gast.BinOp(left=clone(g_node), op=gast.MatMult(), right=transposed(b_node))
            product.rows = f"{g.shape}[0]"   # g's rows at every step (optimize/steady_products.py)
            self.replaced[id(node)] = product
            return _Array(f"({g.shape}[0], {b.shape}[0])", 2, **_joined(g, a, b))
        self.replaced[id(node)] = gast.BinOp(left=transposed(a_node), op=gast.MatMult(),
                                             right=clone(g_node))  # a.T @ g
        return _Array(f"({a.shape}[1], {g.shape}[1])", 2, **_joined(g, a, b))

    def restore(self, stmt):
        """The tape name if ``stmt`` is ``x = x_tape[t]`` of an indexed tape."""
        value = stmt.value
        if isinstance(value, gast.Subscript) and isinstance(value.value, gast.Name) \
                and value.value.id in self.tapes and isinstance(value.slice, gast.Name) \
                and value.slice.id == self.index:
            return value.value.id
        return None

    def read_body(self) -> bool:
        """Describe the body's values and write out its helpers; False where a
        statement is not one the pass knows, or nothing is written out."""
        for k, stmt in enumerate(self.body):
            if isinstance(stmt, gast.Expr):
                if not _append(stmt):
                    return False
                continue
            if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
                    and isinstance(stmt.targets[0], gast.Name)):
                return False
            target = stmt.targets[0].id
            if target == self.index:
                return False
            tape = self.restore(stmt)
            if tape is not None:
                self.env[target] = self._restored(target, tape, k)
            elif not _known(stmt.value):   # a call the pass does not know may resize
                return False
            else:
                self.env[target] = self.value(stmt.value)
        return self._carried() and bool(self.replaced)

    def _carried(self) -> bool:
        """Check that each carried value a proof rests on ends a step as it began."""
        pending, seen = sorted(self.needed, reverse=True), set()
        while pending:
            name = pending.pop()
            if name in seen:
                continue
            seen.add(name)
            end, start = self.env.get(name), self.entry[name]
            if not isinstance(end, _Array):
                return False
            self.prove(end, check=f"{end.shape} == {start.shape}"
                       if end.shape != start.shape else None)
            pending.extend(sorted(end.carried, reverse=True))
        return True

    def _restored(self, name, tape, k):
        """The description of ``name`` after its restore from ``tape`` (statement
        ``k``): its value at the guard's; the guard checks the entries a step
        reads -- from ``tape[1]`` on, and ``tape[0]`` where the body reads the
        restored value (as step 0 does).  Where the body reads ``name`` only
        after restoring it, the adjoint need not hold it at the guard (a split
        backward function is not given the forward's last ``h``): the tape's
        first entry describes it then, and the guard checks every entry."""
        if name not in self.held:
            first = f"{tape}[0]"   # the loop runs a step, so the tape has a slot
            return _Array(f"{first}.shape", needs=frozenset({
                (_TYPES, f"type({first}) is np.ndarray"), (_RANKS, f"{first}.ndim >= 1"),
                (_TAPES, f"steady_tape({tape}, {first}.shape, 1)")}))
        later = {n.id for stmt in self.body[k + 1:] for n in walk(stmt)
                 if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)}
        first = 0 if name in later else 1
        described = self._entry(name)
        steady = (_TAPES, f"steady_tape({tape}, {described.shape}, {first})")
        return _Array(described.shape, base=described.base, needs=described.needs | {steady},
                      carried=described.carried)

    def proven_entries(self) -> frozenset:
        """The names the guard proves, at the start of every step, exact
        ``np.ndarray`` values of the shape they have at the guard: each read
        as it is at the guard, its description's checks all made, and, where
        the body assigns it, its end-of-step shape checked (:meth:`_carried`)."""
        proof = set(self.proof)
        return frozenset(name for name, described in self.entry.items()
                         if described.needs <= proof
                         and (name not in self.assigned or name in self.needed))

    def guard(self, steps) -> str:
        """Every check, each one safe to evaluate once those before it hold;
        first that the loop runs a step (a loop that runs none reads nothing)."""
        texts = [text for _, text in sorted(self.proof, key=lambda need: need[0])]
        exact = {text.split(".ndim == ")[0]: int(text.split(" == ")[1]) for text in texts
                 if ".ndim == " in text}
        texts = [text for text in texts if not (
            ".ndim >= " in text and text.split(".ndim >= ")[0] in exact
            and exact[text.split(".ndim >= ")[0]] >= int(text.split(" >= ")[1]))]
        return " and ".join([f"len({steps})"] + texts)


def _read_first(loop) -> set:
    """The names a step of ``loop`` (a straight-line body) reads before it
    assigns them, and the steps' sequence: those the first step reads as they
    are before the loop, so bound there whenever the loop runs a step -- the
    only names its guard, which first checks that it does, may read."""
    held, assigned = set(ir.names_in(loop.iter)), set()
    for stmt in loop.body:
        if not isinstance(stmt, (gast.Assign, gast.Expr)):
            break   # a body read_body refuses: the loop is left alone
        held |= set(ir.names_in(stmt.value)) - assigned
        assigned |= set(ir.target_names(stmt))
    return held


#: What a guard calls besides the loop's names: builtins, NumPy and the runtime's checks.
_GUARD_GLOBALS = frozenset({"len", "type", "np", "steady_tape", "broadcasts_to"})


def _known(value) -> bool:
    """Whether every call in ``value`` is one the pass describes (none changes an array)."""
    for node in walk(value):
        if isinstance(node, gast.Call):
            func = node.func
            if node.keywords or any(isinstance(a, gast.Starred) for a in node.args):
                return False
            if isinstance(func, gast.Attribute):
                if not (isinstance(func.value, gast.Name) and func.value.id == "np"
                        and func.attr in _UNARY and len(node.args) == 1):
                    return False
            elif not (isinstance(func, gast.Name) and func.id in _FAST
                      and len(node.args) == 2 + (func.id != "unbroadcast")):
                return False
    return True


def _append(stmt) -> bool:
    call = stmt.value
    return isinstance(call, gast.Call) and isinstance(call.func, gast.Attribute) \
        and call.func.attr == "append" and isinstance(call.func.value, gast.Name)


class _Replace(gast.NodeTransformer):
    """Writes the fast form of each helper call into the fast loop's body.  A
    fast form is built from the original loop's nodes (``g`` of
    ``unbroadcast(g, x)`` is the original's ``g``): it goes in as a copy, so
    that the passes after this one, which rewrite the fast loop in place
    (:mod:`.batched_steps` puts its terms' rows there), leave the fallback
    loop as it was -- a shared node made the fallback read ``t4_terms[i]``,
    which only the fast branch binds (review s36 R4-1)."""

    def __init__(self, replaced):
        self.replaced = replaced

    def visit_Call(self, node):
        fast = self.replaced.get(id(node))
        if fast is not None:
            return clone(fast)
        return self.generic_visit(node)


def _specialise(loop, tapes, live_after):
    """The guarded pair of loops for ``loop``, or None."""
    if any(isinstance(n, (gast.Break, gast.Continue, gast.Return)) for n in walk(loop)):
        return None
    reader = _Reader(loop, tapes)
    if not reader.read_body() or not any(reader.restore(s) for s in loop.body
                                         if isinstance(s, gast.Assign)):
        return None
    # ir's clone, not copy.deepcopy: the nodes carry the passes' marks -- the forward
    # statement a restore mirrors (source_stmt, restores), objects the names resolved
    # to (ndarray.T's descriptor, unpicklable) --, which the copy shares, not copies
    body = clone(loop.body)
    copies = {id(old): new for stmt, copied in zip(loop.body, body)
              for old, new in zip(walk(stmt), walk(copied))}
    replace = _Replace({id(copies[k]): fast for k, fast in reader.replaced.items()})
    body = _without_unread([stmt for stmt in map(replace.visit, body) if not _copies_itself(stmt)],
                           live_after)
    fast = gast.For(target=clone(loop.target), iter=clone(loop.iter),
                    body=body, orelse=[], type_comment=None)
    for attr, value in vars(loop).items():   # comments, marks of the passes
        if attr not in ("target", "iter", "body", "orelse", "type_comment") \
                and not attr.startswith("_"):
            setattr(fast, attr, value)
    test = gast.parse(reader.guard(loop.iter.args[0].id)).body[0].value
    if {n.id for n in walk(test) if isinstance(n, gast.Name)} - reader.held - _GUARD_GLOBALS:
        return None   # a value the adjoint may not hold before the loop: left alone
    made = gast.If(test=test, body=[fast], orelse=[loop])
    made.comment_before = [_COMMENT]
    made.steady_loop = True   # the pair optimize/batched_steps.py looks for
    made.steady_entries = reader.proven_entries()   # optimize/step_cotangents.py reads it
    return made


def _copies_itself(stmt) -> bool:
    """``d_w = d_w``: a written-out ``d_w = unbroadcast(d_w, w)``, which does nothing."""
    return isinstance(stmt, gast.Assign) and isinstance(stmt.value, gast.Name) \
        and stmt.value.id == stmt.targets[0].id


def _without_unread(body, live_after) -> list:
    """``body`` without the assignments whose names nothing reads: neither a
    later step (the body, read again) nor the code after the loop."""
    while True:
        read = set(live_after)
        for stmt in body:
            read.update(n.id for n in walk(stmt) if isinstance(n, gast.Name)
                        and isinstance(n.ctx, gast.Load))
        kept = [stmt for stmt in body if not (isinstance(stmt, gast.Assign)
                                              and stmt.targets[0].id not in read)]
        if len(kept) == len(body):
            return body
        body = kept
