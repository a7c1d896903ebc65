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
  arrays of the same shape, a row ``X[t]`` of a 2-D or higher array,
  ``@`` of two 2-D arrays, NumPy's unary math functions); anything else is
  described as unknown, and a helper with an unknown operand is kept.

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
    if len(t1) and type(d_h) is np.ndarray and (type(h) is np.ndarray) and (type(t3) is np.ndarray) and (type(U) is np.ndarray) and (d_h.ndim == 2) and (h.ndim == 2) and (t3.ndim >= 1) and (U.ndim == 2) and steady_tape(h_tape, h.shape, 0) and steady_tape(t3_tape, t3.shape, 1) and (d_h.shape == h.shape) and (d_h.shape == t3.shape) and ((d_h.shape[0], U.shape[0]) == d_h.shape):
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

import copy
from dataclasses import dataclass

import gast

from .. import ir
from ..ir.syntax import walk

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
    where it is known when the code is compiled (a product's 2)."""

    shape: str
    ndim: int | None = None
    base: str | None = None   # the name whose shape[skip:] this is, if any
    skip: int = 0


_NUMBER = "number"   # a Python int, float, complex or bool written in the code


def steady_adjoint_loops(backward, tapes, live_after) -> list:
    """The adjoint sweep ``backward`` with each top-level ``for t in
    reversed(t1)`` loop that can be, duplicated under a guard (see the
    module docstring).  ``tapes``: the indexed tapes' names; ``live_after``:
    the names read after the sweep (its result)."""
    out = []
    for k, stmt in enumerate(backward):
        made = None
        if _reversed_loop(stmt):
            later = set(live_after)
            for rest in backward[k + 1:]:
                later.update(n.id for n in walk(rest) if isinstance(n, gast.Name))
            made = _specialise(stmt, tapes, later)
        out.append(made if made is not None else stmt)
    return out


def _reversed_loop(stmt) -> bool:
    return isinstance(stmt, gast.For) and isinstance(stmt.target, gast.Name) \
        and not stmt.orelse and isinstance(stmt.iter, gast.Call) \
        and isinstance(stmt.iter.func, gast.Name) and stmt.iter.func.id == "reversed" \
        and len(stmt.iter.args) == 1 and isinstance(stmt.iter.args[0], gast.Name) \
        and not stmt.iter.keywords


class _Reader:
    """The symbolic reading of one loop body: descriptions and the guard."""

    def __init__(self, loop, tapes):
        self.index = loop.target.id
        self.body = loop.body
        self.tapes = tapes
        self.assigned = {n for stmt in self.body for n in ir.target_names(stmt)}
        self.types, self.ndims, self.steady, self.equal = [], [], [], []
        self.ranks: dict[str, list[int | None]] = {}   # name -> [least ndim, exact ndim]
        self.entry: dict[str, _Array] = {}   # names read as they are at the guard
        self.env: dict[str, object] = {}
        self.replaced: dict[int, gast.expr] = {}   # id of a helper call -> its fast form

    def _add(self, kind, condition):
        if condition not in kind:
            kind.append(condition)

    def _entry(self, name):
        if name == self.index:
            return None
        if name not in self.entry:
            self._array(name, 1)
            self.entry[name] = _Array(f"{name}.shape", base=name)
        return self.entry[name]

    def _array(self, name, least):
        """Check that ``name`` is an exact ``np.ndarray`` of ``least`` dimensions or more."""
        self._add(self.types, f"type({name}) is np.ndarray")
        rank = self.ranks.setdefault(name, [0, None])
        rank[0] = max(rank[0], least)

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
        if b == _NUMBER or a.shape == b.shape:
            return a
        self._add(self.equal, f"{a.shape} == {b.shape}")
        return a

    def matrix(self, a):
        if not isinstance(a, _Array):
            return False
        if a.ndim == 2:
            return True
        if a.base is None:
            self._add(self.ndims, f"len({a.shape}) == 2")
        else:
            rank = self.ranks[a.base]
            if rank[1] is not None and rank[1] != 2 + a.skip:
                self._add(self.ndims, f"len({a.shape}) == 2")   # never true: the guard fails
            rank[1] = 2 + a.skip
        return True

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
            if isinstance(node.op, gast.MatMult) and self.matrix(left) and self.matrix(right):
                return _Array(f"({left.shape}[0], {right.shape}[1])", 2)
            return None
        if kind is gast.Subscript:
            return self._row(node)
        if kind is gast.Call:
            return self._call(node)
        return None

    def _row(self, node):
        """``X[t]``: a row of an array the loop does not assign."""
        if isinstance(node.value, gast.Name) and isinstance(node.slice, gast.Name) \
                and node.slice.id == self.index and node.value.id not in self.assigned \
                and node.value.id not in self.tapes:
            array = node.value.id
            self._array(array, 2)
            return _Array(f"{array}.shape[1:]", base=array, skip=1)
        return None

    def _call(self, node):
        func = node.func
        if node.keywords or any(isinstance(a, gast.Starred) for a in node.args):
            return None
        args = [self.value(a) for a in node.args]
        if isinstance(func, gast.Attribute) and isinstance(func.value, gast.Name) \
                and func.value.id == "np" and func.attr in _UNARY and len(args) == 1:
            return args[0] if isinstance(args[0], _Array) else None
        if not (isinstance(func, gast.Name) and func.id in _FAST and len(args) == 2 + (
                func.id != "unbroadcast")):
            return None
        if func.id == "unbroadcast":
            g, x = args
            if not (isinstance(g, _Array) and isinstance(x, _Array)):
                return None
            if g.shape != x.shape:
                self._add(self.equal, f"{g.shape} == {x.shape}")
            self.replaced[id(node)] = node.args[0]
            return g
        g, a, b = args
        if not (self.matrix(g) and self.matrix(a) and self.matrix(b)):
            return None
        g_node, a_node, b_node = node.args

        def transposed(n):
            return gast.Attribute(value=copy.deepcopy(n), attr="T", ctx=gast.Load())
        if func.id == "matmul_grad_a":   # g @ b.T
            self.replaced[id(node)] = gast.BinOp(left=copy.deepcopy(g_node), op=gast.MatMult(),
                                                 right=transposed(b_node))
            return _Array(f"({g.shape}[0], {b.shape}[0])", 2)
        self.replaced[id(node)] = gast.BinOp(left=transposed(a_node), op=gast.MatMult(),
                                             right=copy.deepcopy(g_node))  # a.T @ g
        return _Array(f"({a.shape}[1], {g.shape}[1])", 2)

    def restore(self, stmt):
        """The tape name if ``stmt`` is ``x = x_tape[t]`` of an indexed tape."""
        value = stmt.value
        if isinstance(value, gast.Subscript) and isinstance(value.value, gast.Name) \
                and value.value.id in self.tapes and isinstance(value.slice, gast.Name) \
                and value.slice.id == self.index:
            return value.value.id
        return None

    def read_body(self) -> bool:
        """Describe every value of the body; False where a statement is not one
        the pass knows."""
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
            else:
                self.env[target] = self.value(stmt.value)
                if self.env[target] is None:   # a call the pass does not know may resize
                    return False
        for name, start in self.entry.items():   # carried values keep their description
            if name in self.assigned:
                end = self.env.get(name)
                if not isinstance(end, _Array):
                    return False
                if end.shape != start.shape:
                    self._add(self.equal, f"{end.shape} == {start.shape}")
        return bool(self.replaced)

    def _restored(self, name, tape, k):
        """The description of ``name`` after its restore from ``tape`` (statement
        ``k``): its value at the guard's; the guard checks the entries a step
        reads -- from ``tape[1]`` on, and ``tape[0]`` where the body reads the
        restored value (as step 0 does)."""
        later = {n.id for stmt in self.body[k + 1:] for n in walk(stmt)
                 if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)}
        first = 0 if name in later else 1
        described = self._entry(name)
        self._add(self.steady, f"steady_tape({tape}, {described.shape}, {first})")
        return described

    def guard(self, steps) -> str:
        """Every check, each one safe to evaluate once those before it hold;
        first that the loop runs a step (a loop that runs none reads nothing)."""
        ranks = [f"{name}.ndim == {exact}" if exact is not None else f"{name}.ndim >= {least}"
                 for name, (least, exact) in self.ranks.items() if exact is None or exact >= least]
        ranks += [f"{name}.ndim < 0" for name, (least, exact) in self.ranks.items()
                  if exact is not None and exact < least]   # never true: the guard fails
        return " and ".join([f"len({steps})"] + self.types + ranks + self.ndims + self.steady
                            + self.equal)


def _append(stmt) -> bool:
    call = stmt.value
    return isinstance(call, gast.Call) and isinstance(call.func, gast.Attribute) \
        and call.func.attr == "append" and isinstance(call.func.value, gast.Name)


class _Replace(gast.NodeTransformer):
    def __init__(self, replaced):
        self.replaced = replaced

    def visit_Call(self, node):
        fast = self.replaced.get(id(node))
        if fast is not None:
            return fast
        return self.generic_visit(node)


def _specialise(loop, tapes, live_after):
    """The guarded pair of loops for ``loop``, or None."""
    if any(isinstance(n, (gast.Break, gast.Continue, gast.Return)) for n in walk(loop)):
        return None
    reader = _Reader(loop, tapes)
    if not reader.read_body() or not any(reader.restore(s) for s in loop.body
                                         if isinstance(s, gast.Assign)):
        return None
    memo: dict = {}
    body = copy.deepcopy(loop.body, memo)
    replace = _Replace({id(memo[k]): fast for k, fast in reader.replaced.items()})
    body = _without_unread([replace.visit(stmt) for stmt in body], live_after)
    fast = gast.For(target=copy.deepcopy(loop.target), iter=copy.deepcopy(loop.iter),
                    body=body, orelse=[], type_comment=None)
    for attr, value in vars(loop).items():   # comments, marks of the passes
        if attr not in ("target", "iter", "body", "orelse", "type_comment") \
                and not attr.startswith("_"):
            setattr(fast, attr, value)
    test = gast.parse(reader.guard(loop.iter.args[0].id)).body[0].value
    made = gast.If(test=test, body=[fast], orelse=[loop])
    made.comment_before = [_COMMENT]
    return made


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
