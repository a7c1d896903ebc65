"""Random NumPy programs, as source text, for srcgrad's property tests.

A program is a module holding two functions with the same body::

    def f(x, y, s):          # x: (3, 4) float64, y: (4,) float64, s: a float
        v0 = np.tanh(x) * y
        v1 = np.sum(v0, axis=0, keepdims=True)
        v0 += 0.5 * v1
        return np.sum(v0 * 0.7)

    def f_vec(x, y, s):      # the same body, returning the last value itself
        ...                  # (or a tuple of it and another live value)
        return v0

The body is 2-10 statements: assignments to new names, reassignments of
earlier names (arguments included), augmented assignments, tuple unpacking
(swaps too) and constants, over elementwise arithmetic and ufuncs on safe
domains, reductions, products, shape manipulation, indexing reads, np.where,
math-module functions of scalars and piecewise-constant factors -- and, in about
one statement in four, blocks: branches, loops, helper calls, in-place updates
and lists (:class:`StructuredStatements`).
:data:`CONSTRUCTS` are constructs srcgrad once got wrong, which a program can
be made to contain (``focus``); :data:`GATED` ones are left out otherwise.

The generator tracks every value's shape, whether it is a Python float, a bound
on its magnitude and which buffers it may share memory with, so that every
program it writes runs, stays finite and well scaled (a value whose bound grows
past ``LIMIT`` is multiplied by a power of ten), and never mutates an argument
or a value that another live name still views (``v += ...`` on an array is an
in-place update in NumPy).

Choices go through a *chooser*: :class:`DrawChooser` wraps Hypothesis' ``draw``
(so failing programs shrink), :class:`RandomChooser` a seeded ``random.Random``
(for plain loops outside Hypothesis).  :func:`programs` is the Hypothesis
strategy; :func:`load_program` writes a program to a real file and imports it,
so ``inspect.getsource`` -- and so srcgrad -- can read it.
"""

from __future__ import annotations

import hashlib
import importlib.util
import math
import random
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

ARG_SHAPES = {"x": (3, 4), "y": (4,), "s": ()}
ARGS = tuple(ARG_SHAPES)
INPUT_BOUND = 1.5     # |inputs| <= INPUT_BOUND
LIMIT = 20.0          # values whose magnitude bound passes this are rescaled
MAX_SIZE = 24         # largest intermediate array
CONSTANTS = (0.5, 2.0, -1.5, 3.0, 0.1, -0.7)
INT_CONSTANTS = (2, 3)   # only next to a float value (v * 2, 3 - v): no int arrays

# Python operator precedences (higher binds tighter).
CMP, ADD, MUL, UNARY, POW, ATOM = 10, 13, 14, 15, 16, 100


# --- values ----------------------------------------------------------------------

@dataclass(frozen=True)
class Expr:
    """An expression of the program being built: its text and static facts."""

    text: str
    shape: tuple
    bound: float
    prec: int = ATOM
    py: bool = False                    # a Python float: math.* applies to it
    views: frozenset = frozenset()      # buffers it may share memory with (empty: fresh)
    readonly: bool = False              # a read-only view (np.broadcast_to)
    ops: frozenset = frozenset()        # grammar constructs it uses
    unpacked: bool = False              # a name bound by `a, b = <call>, ...` (or a copy of one)

    @property
    def ndim(self):
        return len(self.shape)


def paren(e: Expr, prec: int) -> str:
    """``e``'s text, parenthesised unless it binds at least as tight as ``prec``."""
    return e.text if e.prec >= prec else f"({e.text})"


def _ops(*parts, tag=None):
    out = frozenset().union(*(p.ops for p in parts if isinstance(p, Expr)))
    return out | {tag} if tag else out


def const(value) -> Expr:
    text = repr(value) if isinstance(value, int) else repr(float(value))
    return Expr(text, (), abs(value), UNARY if value < 0 else ATOM, py=True)


def binop(left: Expr, op: str, right: Expr) -> str:
    if op == "**":
        return f"{paren(left, POW + 1)} ** {paren(right, UNARY)}"
    p = ADD if op in "+-" else MUL
    return f"{paren(left, p)} {op} {paren(right, p + 1)}"


def broadcast(*shapes):
    """The broadcast shape, or None when the shapes do not broadcast or the
    result is too big for the grammar (more than 2 dimensions or MAX_SIZE)."""
    try:
        out = np.broadcast_shapes(*shapes)
    except ValueError:
        return None
    if len(out) > 2 or math.prod(out) > MAX_SIZE:
        return None
    return tuple(out)


def _fits(shape) -> bool:
    return len(shape) <= 2 and 1 <= math.prod(shape) <= MAX_SIZE


# --- choosers --------------------------------------------------------------------

class RandomChooser:
    """Choices from a seeded ``random.Random``."""

    def __init__(self, seed):
        self.rng = random.Random(seed)

    def choice(self, options):
        return options[self.rng.randrange(len(options))]

    def integer(self, lo, hi):
        return self.rng.randint(lo, hi)

    def flag(self):
        return self.rng.random() < 0.5


class DrawChooser:
    """Choices drawn through Hypothesis (they shrink toward the first option)."""

    def __init__(self, draw):
        from hypothesis import strategies as st
        self.draw, self.st = draw, st

    def choice(self, options):
        return self.draw(self.st.sampled_from(options))

    def integer(self, lo, hi):
        return self.draw(self.st.integers(lo, hi))

    def flag(self):
        return self.draw(self.st.booleans())


# --- programs --------------------------------------------------------------------

@dataclass
class Program:
    """A generated program: the body shared by ``f`` and ``f_vec`` and their returns."""

    body: list[str]
    scalar_return: str
    vector_return: str
    ops: frozenset = field(default_factory=frozenset)
    vector_shape: tuple = ()        # the shape the generator expects f_vec to return
    vector_tuple: bool = False      # f_vec returns a tuple; vector_shape is then a
                                    # tuple of the elements' shapes
    helpers: list = field(default_factory=list)   # module-level helper functions (source)

    @property
    def source(self) -> str:
        lines = ["# A random straight-line program generated by tests/data/programs.py.",
                 "import math", "", "import numpy as np", "", ""]
        for helper in self.helpers:
            lines.extend(helper.splitlines())
            lines.extend(["", ""])
        for name, ret in (("f", self.scalar_return), ("f_vec", self.vector_return)):
            lines.append(f"def {name}(x, y, s):")
            lines.extend(f"    {stmt}" for stmt in self.body)
            lines.append(f"    return {ret}")
            lines.extend(["", ""])
        return "\n".join(lines[:-2]) + "\n"

    def __str__(self):
        return self.source


def module_name(source: str) -> str:
    return "srcgrad_fuzz_" + hashlib.sha256(source.encode("utf-8")).hexdigest()[:16]


def load_program(source: str, directory, suffix: str = ""):
    """Write ``source`` to ``directory``/<name>.py and import it as module <name>.

    <name> is derived from a hash of the source (plus ``suffix``, for a second
    copy in another file), so it is deterministic; the module is registered in
    ``sys.modules`` so that ``inspect`` and ``linecache`` find the source.  Each
    call executes the module afresh: its functions are new objects.
    """
    name = module_name(source) + suffix
    path = Path(directory) / f"{name}.py"
    if not path.exists() or path.read_text(encoding="utf-8") != source:
        path.write_text(source, encoding="utf-8")
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module


def unload(module) -> None:
    if sys.modules.get(module.__name__) is module:
        del sys.modules[module.__name__]


def make_inputs(seed: int, scalar_kind: str = "float"):
    """The arguments ``(x, y, s)``: uniform in [-INPUT_BOUND, INPUT_BOUND].

    ``scalar_kind`` is "float" (s a Python float) or "0d" (a 0-d float64 array).
    """
    rng = np.random.default_rng(seed)
    x = rng.uniform(-INPUT_BOUND, INPUT_BOUND, ARG_SHAPES["x"])
    y = rng.uniform(-INPUT_BOUND, INPUT_BOUND, ARG_SHAPES["y"])
    s = float(rng.uniform(-INPUT_BOUND, INPUT_BOUND))
    return x, y, (np.array(s) if scalar_kind == "0d" else s)


@dataclass
class _Var:
    shape: tuple
    bound: float
    py: bool
    views: frozenset
    readonly: bool = False
    unpacked: bool = False


#: Constructs that a program can be made to hold at least once (``focus``): each
#: is where srcgrad had a bug.  tests/e2e/test_programs.py has a focused test per
#: construct.
CONSTRUCTS = {
    "np_matmul": "m = np.matmul(a, a) of a vector a, then m + a (or m * a, m - a)",
    "scalar_abs": "math.fabs(v) and builtin abs(v) of a NumPy scalar or 0-d array "
                  "(math.fabs(np.sum(v)), abs(np.sum(v)))",
    "unpack_method": "a method call on a name bound by tuple unpacking from a call: "
                     "a, b = np.tanh(y), y; a.ravel()",
    "negative_constant": "a name bound to a negative constant that then meets **: "
                         "c = -1.5; v = x * c ** 2",
    "mod": "v % c, np.mod(v, c), np.remainder(v, c), np.fmod(v, c) (piecewise linear in v)",
    "alias_update": "an in-place update of an array another live name views: "
                    "a = b.T; b += 1.0; ... a",
    "enumerate_zip": "a for loop over enumerate(zip(a, b)): "
                     "for i, (p, q) in enumerate(zip(v, w)): out[i] = p * q",
    "arg_index_update": "an indexed update of an argument name rebound to an array the "
                        "program owns: s = x * 1.0; s[0] = 2.0",
    "control_flow": "the structured grammar (StructuredStatements): if/elif/else, x if c "
                    "else y, for/while loops, helper functions, indexed in-place updates, lists",
    "plus_inplace": "an in-place update of +t (a new array) while t, a local name, is read "
                    "later: t = s; u = +t; u *= 2.0; ... t",
}

#: Constructs kept out of the main grammar while srcgrad gets them wrong (or, for
#: alias_update, refuses them by design); a program holds them only when focused on.
GATED = frozenset({"alias_update"})


class StructuredStatements:
    """Statements with blocks: if/elif/else and conditional expressions on data, for
    loops (range, rows, zip, enumerate; nested; break/continue), while loops with a
    literal bound, module-level helper functions, in-place updates of owned arrays
    and lists built with append or comprehensions.  Mixed into :class:`Generator`.

    Names bound inside a block that are not bound on every path (branch and loop
    temporaries) are forgotten when the block ends; a name assigned in a branch
    keeps its shape on every path.  Loops only rebind names through *carried*
    updates that stay bounded however often they run (``h = np.tanh(h * c + e)``,
    ``acc = acc + 0.3 * np.tanh(e)``, ...).
    """

    # -- blocks ------------------------------------------------------------------------
    def open_block(self, header, ops=frozenset()):
        self.emit(header, ops)
        self.indent += "    "
        self.level += 1

    def close_block(self):
        self.indent = self.indent[:-4]
        self.level -= 1

    def restore(self, before, keep=()):
        """Forget names bound since ``before`` was taken, except those in ``keep``."""
        self.env = {n: (self.env[n] if n in keep or n in before else None)
                    for n in self.env if n in before or n in keep}
        for n, v in before.items():
            if n not in keep:
                self.env[n] = v

    def condition(self, names=None):
        names = names or self.names()
        a = self.var_expr(self.ch.choice(names))
        cmp, c = self.ch.choice((">", "<")), self.ch.choice((0.0, 0.5, -0.5, 1.0))
        if a.shape == ():
            text = f"{a.text} {cmp} {c!r}"
        else:
            red = self.ch.choice(("np.sum", "np.mean", "np.max", "np.min"))
            text = f"{red}({a.text}) {cmp} {c!r}"
        if self.ch.integer(0, 4) == 0:
            other = self.condition(names)
            text = f"({text} {self.ch.choice(('and', 'or'))} {other})"
            self.ops.add("cond:boolop")
        return text

    def filler(self, shape) -> Expr:
        return const(0.5) if shape == () else Expr(f"np.full({shape!r}, 0.5)", shape, 0.5)

    def shaped_expr(self, depth, shape) -> Expr:
        e = self.expr(depth, lambda sh: sh == shape)
        return e if e.shape == shape else self.filler(shape)

    def into_expr(self, depth, shape) -> Expr:
        """An expression broadcasting into ``shape`` (a constant at worst)."""
        e = self.expr(depth, lambda sh: broadcast(shape, sh) == shape)
        if e.shape != () and broadcast(shape, e.shape) != shape:
            return const(0.5)
        return e

    @staticmethod
    def merged(text, exprs) -> Expr:
        views = frozenset().union(*(e.views for e in exprs))
        return Expr(text, exprs[0].shape, max(e.bound for e in exprs), py=all(e.py for e in exprs),
                    views=views, readonly=any(e.readonly for e in exprs))

    # -- if / elif / else --------------------------------------------------------------
    def if_statement(self):
        form = self.ch.choice(("if", "if_else", "elif"))
        existing = [n for n in self.names() if n not in ARGS]
        fresh = form != "if" and (not existing or self.ch.flag())
        if form == "if" and not existing:
            form = "if_else"
            fresh = True
        target = self.fresh_name() if fresh else self.ch.choice(existing)
        shape = None if fresh else self.env[target].shape
        headers = [f"if {self.condition()}:"]
        if form == "elif":
            headers.append(f"elif {self.condition()}:")
        if form != "if":
            headers.append("else:")
        before = dict(self.env)
        results = [] if fresh else ([self.var_expr(target)] if form == "if" else [])
        for header in headers:
            self.open_block(header, {f"if:{form}"})
            if self.ch.integer(0, 2) == 0:   # temporaries bound in this branch only
                self.branch_statement()
            depth = self.ch.integer(1, 2)
            e = self.expr(depth) if shape is None else self.shaped_expr(depth, shape)
            shape = e.shape
            self.emit(f"{target} = {e.text}", e.ops)
            results.append(e)
            self.close_block()
            self.restore(before)
        self.bind(target, self.merged(target, results))
        return target

    def branch_statement(self):
        """A statement binding only fresh names (a branch's temporaries)."""
        kind = self.ch.choice(("new", "for", "while", "list", "call", "ifexp"))
        if self.level >= 2 or kind == "call" and self.in_helper:
            kind = "new"
        if kind != "new":
            return getattr(self, f"{kind}_statement")()
        name = self.fresh_name()
        e = self.expr(self.ch.integer(1, 2))
        self.emit(f"{name} = {e.text}", e.ops)
        self.bind(name, e)
        return name

    def ifexp_statement(self):
        name = self.fresh_name()
        a = self.expr(self.ch.integer(1, 2))
        b = self.shaped_expr(self.ch.integer(0, 2), a.shape)
        cond = self.condition()
        self.emit(f"{name} = {paren(a, CMP)} if {cond} else {paren(b, CMP)}",
                  _ops(a, b, tag="ifexp"))
        self.bind(name, self.merged(name, [a, b]))
        return name

    # -- loops -------------------------------------------------------------------------
    def carried(self):
        """A fresh name bound before a loop, updated in it."""
        name = self.fresh_name()
        if self.ch.integer(0, 3) == 0:
            shape = self.ch.choice(((), (4,), (3, 4)))
            text = "0.0" if shape == () else f"np.zeros({shape!r})"
            e = const(0.0) if shape == () else Expr(text, shape, 0.0)
            self.emit(f"{name} = {text}", {"loop:init_zeros"})
        else:
            e = self.expr(self.ch.integer(1, 2))
            self.emit(f"{name} = {e.text}", e.ops)
        self.bind(name, e)
        return name

    def loop_update(self, h, forms=("tanh", "acc", "decay", "aug")):
        """A bounded update of the carried name ``h``."""
        v = self.env[h]
        e = self.into_expr(self.ch.integer(0, 2), v.shape)
        form = self.ch.choice(forms)
        if form == "aug" and (self.shared(h) or v.py or v.shape == () or h in self.no_aug):
            form = "acc"
        c = self.ch.choice((0.5, -0.7, 1.5))
        if form == "tanh":
            self.emit(f"{h} = np.tanh({h} * {c!r} + {paren(e, ADD + 1)})", _ops(e, tag="loop:tanh"))
        elif form == "acc":
            self.emit(f"{h} = {h} + 0.3 * np.tanh({e.text})", _ops(e, tag="loop:acc"))
        elif form == "decay":
            self.emit(f"{h} = 0.5 * {h} + np.sin({e.text})", _ops(e, tag="loop:decay"))
        else:   # in place: later statements of the body must not take views of h
            self.emit(f"{h} += 0.3 * np.tanh({e.text})", _ops(e, tag="loop:aug"))
            self.hidden.add(h)
        py = v.py and e.py and form != "aug"
        if not py and v.py:
            self.env[h] = replace(v, py=False)

    def loop_body(self, carried, may_break=True):
        """1-3 statements, among them at least one update of a carried name."""
        n = self.ch.integer(1, 3)
        updated = False
        for k in range(n):
            kind = self.ch.choice(("update", "update", "temp", "break", "continue", "if",
                                   "nested", "call"))
            if k == n - 1 and not updated:
                kind = "update"
            if kind == "update":
                self.loop_update(self.ch.choice(carried))
                updated = True
            elif kind == "temp":
                name = self.fresh_name()
                e = self.expr(self.ch.integer(1, 2))
                self.emit(f"{name} = {e.text}", e.ops)
                self.bind(name, e)
            elif kind in ("break", "continue"):
                if not may_break:
                    continue
                self.open_block(f"if {self.condition()}:")
                self.emit(kind, {f"loop:{kind}"})
                self.close_block()
            elif kind == "if":
                h = self.ch.choice(carried)
                self.open_block(f"if {self.condition()}:", {"loop:if"})
                self.loop_update(h, ("tanh", "acc", "decay"))
                self.close_block()
                if self.ch.flag():
                    self.open_block("else:")
                    self.loop_update(h, ("tanh", "acc", "decay"))
                    self.close_block()
            elif kind == "nested" and self.level < 3:
                self.for_loop(carried)
            elif kind == "call" and not self.in_helper:
                self.call_statement()

    def iteration(self):
        """A for header over range / rows / zip / enumerate: (header, loop names, trips)."""
        form = self.ch.choice(("range", "rows", "zip", "enumerate", "range_len"))
        arrays = self.names(lambda sh: len(sh) >= 1 and 2 <= sh[0] <= 4)
        if form == "range" or not arrays:
            n = self.ch.integer(2, 4)
            i = self.fresh_name()
            return f"for {i} in range({n}):", [(i, None)], n, "range"
        src = self.var_expr(self.ch.choice(arrays))
        n, row = src.shape[0], src.shape[1:]
        r = self.fresh_name()
        row_var = (r, Expr(r, row, src.bound, views=src.views, readonly=src.readonly))
        if form == "rows":
            return f"for {r} in {src.text}:", [row_var], n, form
        if form == "range_len":
            i = self.fresh_name()
            e = Expr(f"{src.text}[{i}]", row, src.bound, views=src.views, readonly=src.readonly)
            return f"for {i} in range(len({src.text})):", [(i, None), (r, e)], n, form
        if form == "enumerate":
            i = self.fresh_name()
            return f"for {i}, {r} in enumerate({src.text}):", [(i, None), row_var], n, form
        others = [m for m in self.names(lambda sh: len(sh) >= 1 and sh[0] == n)]
        other = self.var_expr(self.ch.choice(others))
        q = self.fresh_name()
        return (f"for {r}, {q} in zip({src.text}, {other.text}):",
                [row_var, (q, Expr(q, other.shape[1:], other.bound, views=other.views,
                                   readonly=other.readonly))], n, form)

    def bind_loop_names(self, names):
        first = None
        for name, e in names:
            if e is None:   # an int index: only read as 0.1 * i
                continue
            if e.text != name:   # `r = v[i]`, the first statement of the body
                self.emit(f"{name} = {e.text}", {"loop:index_row"})
            self.bind(name, replace(e, text=name))
            first = first or name
        return first

    def for_loop(self, carried):
        header, names, trips, form = self.iteration()
        before, hidden, no_aug = dict(self.env), set(self.hidden), set(self.no_aug)
        self.no_aug |= {n for n in self.env if n in header.split("(")[-1]
                        or f" in {n}:" in header}
        self.trips *= trips
        self.raise_bounds(carried)
        self.open_block(header, {f"for:{form}"} | ({"loop:nested"} if self.level else set()))
        self.bind_loop_names(names)
        index = next((n for n, e in names if e is None), None)
        if index is not None and self.ch.flag():   # the index as a float
            t = self.fresh_name()
            self.emit(f"{t} = 0.1 * {index}", {"loop:index"})
            self.bind(t, Expr(t, (), 0.1 * trips, py=True))
        self.loop_body(carried)
        self.close_block()
        self.trips //= trips
        self.restore(before, keep=carried)
        self.hidden, self.no_aug = hidden, no_aug

    def raise_bounds(self, carried):
        """Bounds of carried names valid for however often the loops run."""
        for h in carried:
            v = self.env[h]
            self.env[h] = replace(v, bound=max(v.bound, 2.0) + 0.3 * self.trips)

    def for_statement(self):
        carried = [self.carried()]
        if self.ch.integer(0, 2) == 0:
            carried.append(self.carried())
        self.for_loop(carried)
        return carried[0]

    def while_statement(self):
        h = self.carried()
        k = self.fresh_name()
        self.emit(f"{k} = 0")
        bound = self.ch.integer(2, 5)
        self.trips *= bound
        before, hidden = dict(self.env), set(self.hidden)
        self.raise_bounds([h])
        cond = self.condition([h] + self.names())
        self.open_block(f"while {cond} and {k} < {bound}:", {"while"})
        n = self.ch.integer(0, 1)
        for _ in range(n):
            name = self.fresh_name()
            e = self.expr(1)
            self.emit(f"{name} = {e.text}", e.ops)
            self.bind(name, e)
        if self.ch.integer(0, 3) == 0:
            self.open_block(f"if {self.condition()}:")
            self.emit("break", {"while:break"})
            self.close_block()
        self.loop_update(h)
        self.emit(f"{k} += 1")
        self.close_block()
        self.trips //= bound
        self.restore(before, keep=[h])
        self.hidden = hidden
        return h

    # -- helper functions --------------------------------------------------------------
    def call_statement(self):
        """``p = helper_k(...)`` or ``p, q = helper_k(...)``, defining helper_k."""
        fname = f"helper_{len(self.helpers)}"
        params = ("a", "b")[:self.ch.integer(1, 2)]
        args = [self.var_expr(self.ch.choice(self.names())) for _ in params]
        default = self.ch.choice((2.0, 0.5, -0.7))
        sub = Generator(self.ch, max_statements=3)
        sub.in_helper = True
        sub.helpers = self.helpers
        sub.env = {p: _Var(a.shape, a.bound, a.py, frozenset({f"arg:{p}"}), a.readonly)
                   for p, a in zip(params, args)}
        sub.env["scale"] = _Var((), 2.0, True, frozenset({"arg:scale"}))
        last = None
        for _ in range(self.ch.integer(1, 3)):
            last = sub.statement()
        returns = [sub.var_expr(last)]
        if self.ch.flag():
            returns.append(sub.var_expr(self.ch.choice(sub.names())))
        texts = [r.text for r in returns]
        scale = sub.env["scale"]   # the body may have rebound it (`a, scale = scale, a`)
        if self.ch.flag() and scale.shape == ():
            texts[0] = f"{texts[0]} * scale"
            returns[0] = replace(returns[0], bound=returns[0].bound * max(2.0, scale.bound),
                                 py=False)
        lines = [f"def {fname}({', '.join(params)}, scale={default!r}):"]
        lines += [f"    {line}" for line in sub.body]
        lines.append(f"    return {', '.join(texts)}")
        self.helpers.append("\n".join(lines))
        self.ops.update(sub.ops)
        # the call
        form = self.ch.choice(("positional", "keyword", "scale", "scale_positional"))
        parts = [a.text for a in args]
        if form == "keyword":
            parts = parts[:1] + [f"{p}={a.text}" for p, a in zip(params[1:], args[1:])]
        if form == "scale":
            parts.append(f"scale={self.ch.choice((0.5, 2.0, -0.7))!r}")
        elif form == "scale_positional":
            parts.append(repr(self.ch.choice((0.5, 2.0, -0.7))))
        call = f"{fname}({', '.join(parts)})"
        arg_views = frozenset().union(*(a.views for a in args))
        outs = []
        for r in returns:
            v = sub.env.get(r.text.split(" ")[0])
            views = arg_views if (v is None or any(b.startswith("arg:") for b in v.views)) \
                else frozenset()
            outs.append(Expr("", r.shape, r.bound, py=r.py, views=views,
                             readonly=r.readonly or any(
                                 self.env.get(a.text, _Var((), 0, False, frozenset())).readonly
                                 for a in args)))
        names = [self.fresh_name() for _ in outs]
        self.emit(f"{', '.join(names)} = {call}",
                  {f"call:{form}"} | ({"call:tuple"} if len(outs) > 1 else set()))
        for name, e in zip(names, outs):
            self.bind(name, replace(e, text=name))
        return names[0]

    # -- in-place updates of arrays the program owns --------------------------------------
    def update_index(self, name):
        shape = self.env[name].shape
        options = [(t, i) for t, i, _, kind in self.index_options(shape)
                   if kind == "basic" and "None" not in t]
        text, index = self.ch.choice(options)
        return text, np.zeros(shape)[index].shape

    def indexed_update(self, name):
        text, shape = self.update_index(name)
        op = self.ch.choice(("=", "+=", "-=", "*="))
        e = self.into_expr(self.ch.integer(0, 2), shape)
        v = self.env[name]
        if op == "*=":
            self.emit(f"{name}[{text}] *= np.tanh({e.text})", _ops(e, tag="inplace:*="))
            bound = v.bound
        else:
            self.emit(f"{name}[{text}] {op} {e.text}", _ops(e, tag=f"inplace:{op}"))
            bound = max(v.bound, e.bound) if op == "=" else v.bound + e.bound
        self.env[name] = replace(v, bound=bound, py=False)
        if bound > LIMIT:
            factor = 10.0 ** -math.ceil(math.log10(bound / LIMIT))
            self.emit(f"{name} = {factor!r} * {name}", {"rescale"})
            self.bind(name, Expr(name, v.shape, bound * factor))

    def inplace_statement(self):
        form = self.ch.choice(("copy", "copy", "existing", "fill"))
        if form == "existing":
            names = [n for n in self.names(lambda sh: len(sh) >= 1) if not self.shared(n)
                     and (n not in ARGS or "arg_index_update" in self.enabled)]   # see GATED
            if names:
                name = self.ch.choice(names)
                self.indexed_update(name)
                return name
            form = "copy"
        if form == "copy" and not self.names(lambda sh: len(sh) >= 1):
            form = "fill"
        if form == "copy":
            src = self.var_expr(self.ch.choice(self.names(lambda sh: len(sh) >= 1)))
            name = self.fresh_name()
            text = self.ch.choice((f"{paren(src, MUL)} * 1.0", f"np.copy({src.text})",
                                   f"np.array({src.text})", f"{paren(src, ATOM)}.copy()"))
            self.emit(f"{name} = {text}", {"inplace:copy"})
            self.bind(name, Expr(name, src.shape, src.bound))
            for _ in range(self.ch.integer(1, 2)):
                self.indexed_update(name)
            return name
        # rows filled in a loop
        name = self.fresh_name()
        header, names, trips, how = self.iteration()
        row = next((e.shape for n, e in names if e is not None), None)
        if row is None or row == ():
            row = self.ch.choice(((), (4,), (3,)))
        shape = (trips,) + row
        self.emit(f"{name} = np.zeros({shape!r})", {"inplace:zeros"})
        if how == "zip" and "enumerate_zip" not in self.enabled:   # see GATED
            header, names, how = f"for {names[0][0]} in range({trips}):", [(names[0][0], None)], \
                "range"
        if how in ("rows", "zip"):   # needs an index
            header = header.replace(" in ", " in enumerate(", 1)[:-1] + "):"
            first = header.split()[1]
            i = self.fresh_name()
            header = header.replace(f"for {first}", f"for {i}, ({first}", 1)
            parts = header.split(" in enumerate(")
            header = parts[0] + ") in enumerate(" + parts[1]
            if how == "rows":
                header = header.replace(f"({first})", first)
            names = [(i, None)] + names
        index = next(n for n, e in names if e is None)
        before = dict(self.env)
        self.open_block(header, {f"fill:{how}"})
        self.bind_loop_names(names)
        e = self.into_expr(self.ch.integer(1, 2), row)
        wrap = self.ch.choice(("np.tanh", "np.sin", ""))
        value = f"{wrap}({e.text})" if wrap else e.text
        bound = 1.0 if wrap else e.bound
        op = self.ch.choice(("=", "=", "+="))
        self.emit(f"{name}[{index}] {op} {value}", _ops(e, tag="fill:row"))
        self.close_block()
        self.restore(before)
        self.bind(name, Expr(name, shape, bound))
        return name

    # -- lists ---------------------------------------------------------------------------
    def list_statement(self):
        hs = self.fresh_name()
        form = self.ch.choice(("append", "comprehension"))
        header, names, trips, how = self.iteration()
        before = dict(self.env)
        if form == "append":
            self.emit(f"{hs} = []", {"list:append"})
            self.open_block(header)
            self.bind_loop_names(names)
            e = self.expr(self.ch.integer(1, 2))
            self.emit(f"{hs}.append(np.tanh({e.text}))", e.ops)
            self.close_block()
        else:
            if any(e is not None and e.text != n for n, e in names):   # range(len(v)): v[i]
                names = [(n, e) for n, e in names if e is None or e.text == n]
                header = header  # the element is read as v[i] in the expression
            self.bind_loop_names(names)
            e = self.expr(self.ch.integer(1, 2))
            clause = header[len("for "):-1]
            self.emit(f"{hs} = [np.tanh({e.text}) for {clause}]", _ops(e, tag="list:comp"))
        self.restore(before)
        elem = e.shape
        name = self.fresh_name()
        a = self.fresh_name()
        use = self.ch.choice(("stack", "sum_gen", "map", "index"))
        if use == "stack" and _fits((trips,) + elem):
            self.emit(f"{name} = np.stack({hs})", {"list:stack"})
            self.bind(name, Expr(name, (trips,) + elem, 1.0))
        elif use == "sum_gen":
            c = self.ch.choice((0.5, -0.7, 1.5))
            self.emit(f"{name} = sum(np.sum({a} * {c!r}) for {a} in {hs})", {"list:sum_gen"})
            self.bind(name, Expr(name, (), trips * max(1, math.prod(elem)) * abs(c)))
        elif use == "map":
            gs = self.fresh_name()
            self.emit(f"{gs} = [np.sin({a}) * 0.5 + {a} for {a} in {hs}]", {"list:map"})
            self.emit(f"{name} = {gs}[0] * {gs}[-1] + {hs}[1]", {"list:index"})
            self.bind(name, Expr(name, elem, 3.0))
        else:
            self.emit(f"{name} = {hs}[-1] - 0.5 * {hs}[0]", {"list:index"})
            self.bind(name, Expr(name, elem, 1.5))
        return name


class Generator(StructuredStatements):
    """Builds one program from a chooser.

    ``focus`` names constructs of :data:`CONSTRUCTS` the program must hold at
    least once; they are then allowed even when :data:`GATED` keeps them out
    of the main grammar.
    """

    def __init__(self, chooser, *, focus=(), max_statements=10):
        unknown = set(focus) - set(CONSTRUCTS)
        if unknown:
            raise ValueError(f"unknown constructs: {sorted(unknown)}")
        self.ch = chooser
        self.focus = frozenset(focus)
        self.enabled = (frozenset(CONSTRUCTS) - GATED) | self.focus
        self.max_statements = max_statements
        self.env: dict[str, _Var] = {
            "x": _Var((3, 4), INPUT_BOUND, False, frozenset({"arg:x"})),
            "y": _Var((4,), INPUT_BOUND, False, frozenset({"arg:y"})),
            "s": _Var((), INPUT_BOUND, True, frozenset({"arg:s"})),
        }
        self.body: list[str] = []
        self.ops: set[str] = set()
        self.counter = 0
        self.buffers = 0
        self.must_read: list[str] = []
        self.indent = ""            # the current block's indentation
        self.level = 0              # nesting depth of blocks (if / for / while)
        self.hidden: set = set()    # names expressions must not read (see loop_update)
        self.helpers: list = []     # helper function sources, shared with sub-generators
        self.in_helper = False
        self.trips = 1              # how many times the current block may run
        self.no_aug: set = set()    # arrays a loop iterates over: never updated in place

    @staticmethod
    def _check(e):
        assert e is None or isinstance(e.shape, tuple), e
        return e

    # -- names and variables ----------------------------------------------------
    def fresh_name(self) -> str:
        name = f"v{self.counter}"
        self.counter += 1
        return name

    def var_expr(self, name: str) -> Expr:
        v = self.env[name]
        return Expr(name, v.shape, v.bound, ATOM, v.py, v.views, v.readonly,
                    unpacked=v.unpacked)

    def method_ok(self, a: Expr) -> bool:
        """Whether ``a.method()`` spellings may be used on ``a`` (see GATED)."""
        return not a.unpacked or "unpack_method" in self.enabled

    def bind(self, name: str, e: Expr) -> None:
        assert e.shape == () or _fits(e.shape), e
        views = e.views
        if not views:
            self.buffers += 1
            views = frozenset({f"buf{self.buffers}"})
        self.env[name] = _Var(e.shape, e.bound, e.py, views, e.readonly, e.unpacked)

    def names(self, want=None):
        """Live names (most recent first, arguments last) whose shape satisfies ``want``."""
        order = [n for n in reversed(list(self.env)) if n not in ARGS] + \
            [n for n in ARGS if n in self.env]
        return [n for n in order if (want is None or want(self.env[n].shape))
                and n not in self.hidden]

    def atom(self, want=None, fallback=None) -> Expr:
        names = self.names(want)
        if names:
            return self.var_expr(self.ch.choice(names))
        if fallback is None:   # broadcasting context: a constant fits anything
            fallback = const(self.ch.choice(CONSTANTS))
        return fallback

    def scaled(self, e: Expr) -> Expr:
        """``e`` multiplied by a power of ten when its bound passes LIMIT."""
        if e.bound <= LIMIT:
            return e
        k = math.ceil(math.log10(e.bound / LIMIT))
        factor = 10.0 ** -k
        return Expr(f"{factor!r} * {paren(e, MUL + 1)}", e.shape, e.bound * factor, MUL,
                    e.py, ops=e.ops)

    # -- expressions ------------------------------------------------------------
    FAMILIES = ("binary", "unary", "const", "reduce", "where", "linalg", "shape", "index",
                "math", "nondiff")

    def expr(self, depth: int, want=None, fallback=None) -> Expr:
        if depth <= 0:
            return self.atom(want, fallback)
        family = self.ch.choice(("atom",) + self.FAMILIES)
        if family == "atom":
            return self.atom(want, fallback)
        e = self._check(getattr(self, f"build_{family}")(depth - 1))
        if e is None or (want is not None and not want(e.shape)):
            return self.atom(want, fallback)
        return self.scaled(e)

    def operand(self, depth, want=None, fallback=None) -> Expr:
        return self.expr(self.ch.integer(0, depth), want, fallback) if depth > 0 \
            else self.atom(want, fallback)

    # binary elementwise -----------------------------------------------------------
    def build_binary(self, depth):
        a = self.operand(depth)
        b = self.operand(depth, lambda sh: broadcast(a.shape, sh) is not None)
        shape = broadcast(a.shape, b.shape)
        op = self.ch.choice(("+", "-", "*", "/", "maximum", "minimum", "hypot", "arctan2",
                             "add", "subtract", "multiply", "logaddexp", "fmax", "fmin",
                             "pow_var", "power_var", "builtin_max", "builtin_min"))
        py = a.py and b.py
        ops = _ops(a, b, tag=f"binary:{op}")
        if op in "+-":
            return Expr(binop(a, op, b), shape, a.bound + b.bound, ADD, py, ops=ops)
        if op == "*":
            return Expr(binop(a, op, b), shape, a.bound * b.bound, MUL, py, ops=ops)
        if op == "/":
            den = f"1.5 + {binop(b, '*', b)}"
            return Expr(f"{paren(a, MUL)} / ({den})", shape, a.bound / 1.5, MUL, py, ops=ops)
        if op in ("maximum", "minimum", "fmax", "fmin"):
            return Expr(f"np.{op}({a.text}, {b.text})", shape, max(a.bound, b.bound), ops=ops)
        if op in ("add", "subtract"):
            return Expr(f"np.{op}({a.text}, {b.text})", shape, a.bound + b.bound, ops=ops)
        if op == "multiply":
            return Expr(f"np.{op}({a.text}, {b.text})", shape, a.bound * b.bound, ops=ops)
        if op == "logaddexp":
            return Expr(f"np.logaddexp({a.text}, {b.text})", shape,
                        max(a.bound, b.bound) + math.log(2), ops=ops)
        if op in ("pow_var", "power_var"):   # a positive base, an exponent in (-1, 1)
            base = f"1.5 + {binop(a, '*', a)}"
            bound = 1.5 + a.bound ** 2
            if op == "pow_var":
                return Expr(f"({base}) ** np.tanh({b.text})", shape, bound, POW, ops=ops)
            return Expr(f"np.power({base}, np.tanh({b.text}))", shape, bound, ops=ops)
        if op in ("builtin_max", "builtin_min"):   # Python's max/min: scalars only;
            if a.shape != () or b.shape != ():      # the result is one of the operands
                return None
            return Expr(f"{op[8:]}({a.text}, {b.text})", (), max(a.bound, b.bound),
                        py=a.py and b.py, views=a.views | b.views, ops=ops)
        if op == "hypot":
            return Expr(f"np.hypot({a.text}, 0.5 + {binop(b, '*', b)})", shape,
                        a.bound + 0.5 + b.bound ** 2, ops=ops)
        return Expr(f"np.arctan2({a.text}, 1.5 + {binop(b, '*', b)})", shape, math.pi / 2,
                    ops=ops)

    # with a constant ----------------------------------------------------------------
    def build_const(self, depth):
        a = self.operand(depth)
        c = const(self.ch.choice(CONSTANTS + INT_CONSTANTS))
        form = self.ch.choice(("a*c", "c*a", "a+c", "c-a", "a-c", "c/(..)", "a/c"))
        ops = _ops(a, tag=f"const:{form}")
        if form == "a*c":
            return Expr(binop(a, "*", c), a.shape, a.bound * c.bound, MUL, a.py, ops=ops)
        if form == "c*a":
            return Expr(binop(c, "*", a), a.shape, a.bound * c.bound, MUL, a.py, ops=ops)
        if form in ("a+c", "a-c"):
            return Expr(binop(a, form[1], c), a.shape, a.bound + c.bound, ADD, a.py, ops=ops)
        if form == "c-a":
            return Expr(binop(c, "-", a), a.shape, a.bound + c.bound, ADD, a.py, ops=ops)
        if form == "c/(..)":
            return Expr(f"{c.text} / (1.5 + {binop(a, '*', a)})", a.shape, c.bound / 1.5, MUL,
                        a.py, ops=ops)
        return Expr(binop(a, "/", c), a.shape, a.bound / c.bound, MUL, a.py, ops=ops)

    # unary elementwise ----------------------------------------------------------------
    UNARY = ("neg", "tanh", "sin", "cos", "arctan", "exp", "log", "sqrt", "log1p", "expm1",
             "sinh", "cosh", "arcsin", "arccos", "square", "pow2", "pow3", "abs", "abs_pow",
             "rsqrt", "clip", "relu", "sign_mul", "plus", "abs_builtin", "negative", "cumsum",
             "copy", "asarray", "logaddexp0")

    def build_unary(self, depth):
        a = self.operand(depth)
        name = self.ch.choice(self.UNARY)
        t, b = a.text, a.bound
        sq = binop(a, "*", a)
        small = b <= 3.0
        tanh_a = t if small else f"np.tanh({t})"
        bt = b if small else 1.0
        table = {
            "tanh": (f"np.tanh({t})", 1.0),
            "sin": (f"np.sin({t})", 1.0),
            "cos": (f"np.cos({t})", 1.0),
            "arctan": (f"np.arctan({t})", math.pi / 2),
            "exp": (f"np.exp({tanh_a})", math.exp(bt)),
            "log": (f"np.log(1.0 + {sq})", math.log1p(b * b)),
            "sqrt": (f"np.sqrt(1.0 + {sq})", math.sqrt(1 + b * b)),
            "log1p": (f"np.log1p({sq})", math.log1p(b * b)),
            "expm1": (f"np.expm1({tanh_a})", math.exp(bt)),
            "sinh": (f"np.sinh({tanh_a})", math.sinh(bt)),
            "cosh": (f"np.cosh({tanh_a})", math.cosh(bt)),
            "arcsin": (f"np.arcsin(0.9 * np.tanh({t}))", math.pi / 2),
            "arccos": (f"np.arccos(0.9 * np.tanh({t}))", math.pi),
            "square": (f"np.square({t})", b * b),
            "abs": (f"np.abs({t})", b),
            "clip": (f"np.clip({t}, -0.5, 0.8)", 0.8),
            "relu": (f"np.maximum({t}, 0.0)", b),
            "sign_mul": (f"np.sign({t}) * {paren(a, MUL + 1)}", b),
            "abs_builtin": (f"abs({t})", b),
            "negative": (f"np.negative({t})", b),
            "logaddexp0": (f"np.logaddexp({t}, 0.0)", b + math.log(2)),
        }
        ops = _ops(a, tag=f"unary:{name}")
        if name == "abs_builtin" and a.ndim == 0 and "scalar_abs" not in self.enabled:
            return None
        if name in table:
            text, bound = table[name]
            prec = MUL if name == "sign_mul" else ATOM
            return Expr(text, a.shape, bound, prec, ops=ops)
        if name == "neg":
            return Expr(f"-{paren(a, UNARY + 1)}", a.shape, b, UNARY, a.py, ops=ops)
        if name == "plus":   # +a is a new array, but see plus_inplace in CONSTRUCTS
            views = {} if "plus_inplace" in self.enabled else \
                {"views": a.views, "readonly": a.readonly}
            return Expr(f"+{paren(a, UNARY + 1)}", a.shape, b, UNARY, a.py, ops=ops, **views)
        if name == "cumsum":
            if a.ndim == 0:
                return None
            axis = self.ch.choice(tuple(range(a.ndim)))
            return Expr(f"np.cumsum({t}, axis={axis})", a.shape, b * a.shape[axis], ops=ops)
        if name == "copy":
            if a.ndim == 0:
                return None
            text = self.ch.choice((f"{paren(a, ATOM)}.copy()", f"np.copy({t})")
                                  if self.method_ok(a) else (f"np.copy({t})",))
            return Expr(text, a.shape, b, ops=ops)
        if name == "asarray":   # the same array when it is one already: a view
            if a.ndim == 0:
                return None
            return Expr(f"np.asarray({t})", a.shape, b, views=a.views, readonly=a.readonly,
                        ops=ops)
        if name == "pow2":
            return Expr(binop(a, "**", const(2)), a.shape, b * b, POW, a.py, ops=ops)
        if name == "pow3":
            return Expr(f"{paren(a, POW + 1)} ** 3", a.shape, b ** 3, POW, a.py, ops=ops)
        if name == "abs_pow":
            return Expr(f"np.abs({t}) ** 1.5", a.shape, b ** 1.5, POW, ops=ops)
        # rsqrt
        return Expr(f"(1.5 + {sq}) ** -0.5", a.shape, 1.0, POW, a.py, ops=ops)

    # math module on scalars -------------------------------------------------------------
    MATH = ("sin", "cos", "tanh", "atan", "exp", "log", "sqrt", "erf", "hypot", "log1p",
            "expm1", "asin", "pow", "builtin_pow", "float", "fabs")

    def build_math(self, depth):
        a = self.operand(depth, lambda sh: sh == ())
        if a.shape != ():
            return None
        name = self.ch.choice(self.MATH if "scalar_abs" in self.enabled else self.MATH[:-1])
        t, b = a.text, a.bound
        sq = binop(a, "*", a)
        table = {
            "sin": (f"math.sin({t})", 1.0),
            "cos": (f"math.cos({t})", 1.0),
            "tanh": (f"math.tanh({t})", 1.0),
            "atan": (f"math.atan({t})", math.pi / 2),
            "exp": (f"math.exp(math.tanh({t}))", math.e),
            "log": (f"math.log(1.0 + {sq})", math.log1p(b * b)),
            "sqrt": (f"math.sqrt(1.0 + {sq})", math.sqrt(1 + b * b)),
            "erf": (f"math.erf({t})", 1.0),
            "hypot": (f"math.hypot({t}, 1.5)", b + 1.5),
            "log1p": (f"math.log1p({sq})", math.log1p(b * b)),
            "expm1": (f"math.expm1(math.tanh({t}))", math.e),
            "asin": (f"math.asin(0.9 * math.tanh({t}))", math.pi / 2),
            "fabs": (f"math.fabs({t})", b),
            "pow": (f"math.pow(1.5 + {sq}, 0.75)", (1.5 + b * b) ** 0.75),
            "builtin_pow": (f"pow({t}, 2)", b * b),
            "float": (f"float({t})", b),
        }
        text, bound = table[name]
        return Expr(text, (), bound, ATOM, True, ops=_ops(a, tag=f"math:{name}"))

    # piecewise constant factors and integers read off shapes ---------------------------------
    def build_nondiff(self, depth):
        a = self.operand(depth)
        b = self.operand(depth, lambda sh: broadcast(a.shape, sh) is not None)
        shape = broadcast(a.shape, b.shape)
        form = self.ch.choice(("compare", "floor", "round", "sign", "shape0", "len", "size",
                               "count", "argmax", "mod"))
        pb = paren(b, MUL + 1)
        ops = _ops(a, b, tag=f"nondiff:{form}")
        threshold = self.ch.choice((0.0, 0.5, -0.5))
        if form == "compare":
            return Expr(f"({a.text} > {threshold!r}) * {pb}", shape, b.bound, MUL, ops=ops)
        if form in ("floor", "round", "sign"):
            return Expr(f"np.{form}({a.text}) * {pb}", shape, (a.bound + 1) * b.bound, MUL,
                        ops=ops)
        if form == "mod":
            if "mod" not in self.enabled:
                return None
            return self.mod_expr(a, b, shape)
        if a.ndim == 0:
            return None
        n = math.prod(a.shape)
        if form == "count":
            return Expr(f"np.sum({a.text} > {threshold!r}) * {pb}", b.shape, n * b.bound, MUL,
                        ops=ops)
        if form == "argmax":   # b[np.argmax(a)] for a vector a as long as b's first axis
            c = self.operand(depth, lambda sh: len(sh) >= 1 and sh[0] == n)
            if a.ndim != 1 or c.ndim == 0 or c.shape[0] != n:
                return None
            return Expr(f"{paren(c, ATOM)}[np.argmax({a.text})]", c.shape[1:], c.bound,
                        views=c.views, readonly=c.readonly,   # an integer index: a view
                        ops=_ops(a, c, tag="nondiff:argmax"))
        size = {"shape0": a.shape[0], "len": a.shape[0], "size": n}[form]
        text = {"shape0": f"{paren(a, ATOM)}.shape[0]", "len": f"len({a.text})",
                "size": f"{paren(a, ATOM)}.size"}[form]
        return Expr(f"{text} * {pb}", b.shape, size * b.bound, MUL, b.py, ops=ops)

    def mod_expr(self, a, b, shape):
        form = self.ch.choice(("%", "mod", "remainder", "fmod"))
        c = self.ch.choice((1.0, 0.7, 2))
        ops = _ops(a, b, tag=f"mod:{form}")
        if form == "%":
            return Expr(f"{paren(a, MUL)} % {c!r} * {paren(b, MUL + 1)}", shape,
                        c * b.bound, MUL, ops=ops)
        return Expr(f"np.{form}({a.text}, {c!r}) * {paren(b, MUL + 1)}", shape,
                    (a.bound + c) * b.bound, MUL, ops=ops)

    def mod_statement(self):
        a = self.var_expr(self.ch.choice(self.names()))
        e = self.scaled(self.mod_expr(a, const(1.5), a.shape))
        name = self.fresh_name()
        self.emit(f"{name} = {e.text}", e.ops)
        self.bind(name, e)
        return name

    # np.where ------------------------------------------------------------------------------
    def build_where(self, depth):
        c = self.operand(depth)
        a = self.operand(depth, lambda sh: broadcast(c.shape, sh) is not None)
        form = self.ch.choice(("var", "zero"))
        if form == "zero":
            b = const(0.0)
        else:
            b = self.operand(depth, lambda sh: broadcast(c.shape, a.shape, sh) is not None)
        shape = broadcast(c.shape, a.shape, b.shape)
        cmp, threshold = self.ch.choice((">", "<")), self.ch.choice((0.0, 0.5, -0.5))
        text = f"np.where({c.text} {cmp} {threshold!r}, {a.text}, {b.text})"
        return Expr(text, shape, max(a.bound, b.bound), ops=_ops(a, b, c, tag=f"where:{form}"))

    # reductions ----------------------------------------------------------------------------
    REDUCTIONS = ("sum", "mean", "max", "min", "prod", "var", "std", "norm", "masked_sum",
                  "trace", "var_ddof")

    def build_reduce(self, depth):
        a = self.operand(depth)
        fn = self.ch.choice(self.REDUCTIONS)
        if fn == "masked_sum":
            cmp, threshold = self.ch.choice((">", "<")), self.ch.choice((0.0, 0.5, -0.5))
            if a.ndim == 0:
                return None
            text = f"np.sum({paren(a, ATOM)}[{a.text} {cmp} {threshold!r}])"
            return Expr(text, (), a.bound * math.prod(a.shape), ops=_ops(a, tag="reduce:mask"))
        if fn == "trace":
            if a.ndim != 2:
                return None
            return Expr(f"np.trace({a.text})", (), a.bound * min(a.shape),
                        ops=_ops(a, tag="reduce:trace"))
        axes = [None] + list(range(a.ndim)) + ([-1] if a.ndim else []) + \
            ([(0, 1)] if a.ndim == 2 else [])
        axis = self.ch.choice(axes)
        ddof = fn == "var_ddof"
        if ddof:
            fn = "var"
            if math.prod(np.zeros(a.shape).sum(axis=axis, keepdims=True).shape) * 2 > \
                    math.prod(a.shape):   # ddof=1 needs at least 2 values per group
                return None
        keepdims = self.ch.flag()
        method = a.ndim >= 1 and fn != "norm" and self.method_ok(a) and self.ch.flag()
        shape = np.sum(np.ones(a.shape), axis=axis, keepdims=keepdims).shape
        count = max(1, math.prod(a.shape) // max(1, math.prod(shape)))
        b = a.bound
        bound = {"sum": b * count, "mean": b, "max": b, "min": b,
                 "prod": max(b, 1.0) ** count, "var": 2 * b * b, "std": b,
                 "norm": b * math.sqrt(count)}[fn]
        kwargs = []
        if axis is not None or self.ch.flag():
            positional = fn != "norm" and not ddof and self.ch.flag()
            kwargs.append(f"{axis!r}" if positional else f"axis={axis!r}")
        if ddof:
            kwargs.append("ddof=1")
        if keepdims:
            kwargs.append("keepdims=True")
        if method:
            text = f"{paren(a, ATOM)}.{fn}({', '.join(kwargs)})"
        else:
            func = "np.linalg.norm" if fn == "norm" else f"np.{fn}"
            text = f"{func}({', '.join([a.text] + kwargs)})"
        tag = f"reduce:{fn}" + (":ddof" if ddof else "") + (":method" if method else "")
        return Expr(text, tuple(shape), bound, ops=_ops(a, tag=tag))

    # products ------------------------------------------------------------------------------
    def build_linalg(self, depth):
        a = self.operand(depth, lambda sh: len(sh) >= 1)
        if a.ndim == 0:
            return None
        forms = ("@", "dot", "method_dot", "outer", "inner", "einsum")
        if "np_matmul" in self.enabled:
            forms += ("matmul",)
        form = self.ch.choice(forms)
        if form in ("@", "dot", "matmul", "method_dot"):
            n = a.shape[-1]
            transposed = a if a.ndim == 1 else Expr(f"{paren(a, ATOM)}.T", a.shape[::-1],
                                                   a.bound, views=a.views, ops=a.ops)
            b = self.operand(depth, lambda sh: len(sh) in (1, 2) and sh[0] == n, transposed)
            shape = np.zeros(a.shape) @ np.zeros(b.shape)
            shape = np.shape(shape)
            if not _fits(shape) and shape != ():
                return None
            bound = a.bound * b.bound * n
            ops = _ops(a, b, tag=f"linalg:{form}")
            if form == "@":
                return Expr(binop(a, "@", b), shape, bound, MUL, ops=ops)
            if form == "method_dot" and self.method_ok(a):
                return Expr(f"{paren(a, ATOM)}.dot({b.text})", shape, bound, ops=ops)
            func = "dot" if form == "method_dot" else form
            return Expr(f"np.{func}({a.text}, {b.text})", shape, bound, ops=ops)
        if form in ("outer", "inner"):
            if a.ndim != 1:
                return None
            if form == "outer":
                b = self.operand(depth, lambda sh: len(sh) == 1 and sh[0] * a.shape[0] <= MAX_SIZE,
                                 a if a.shape[0] ** 2 <= MAX_SIZE else None)
                if b is None or b.ndim != 1 or a.shape[0] * b.shape[0] > MAX_SIZE:
                    return None
                return Expr(f"np.outer({a.text}, {b.text})", (a.shape[0], b.shape[0]),
                            a.bound * b.bound, ops=_ops(a, b, tag="linalg:outer"))
            b = self.operand(depth, lambda sh: sh == a.shape, a)
            return Expr(f"np.inner({a.text}, {b.text})", (), a.bound * b.bound * a.shape[0],
                        ops=_ops(a, b, tag="linalg:inner"))
        # einsum
        if a.ndim == 1:
            spec = self.ch.choice(("i,i->", "i,j->ij", "i->"))
        else:
            spec = self.ch.choice(("ij->ji", "ij->i", "ij->j", "ij,ij->i", "ij,ij->",
                                   "ij,j->i", "ij,kj->ik"))
        inputs, output = spec.split("->")
        letters = inputs.split(",")
        size = dict(zip(letters[0], a.shape))
        operands = [a]
        if len(letters) == 2:
            second = letters[1]
            if second == letters[0]:
                b = self.operand(depth, lambda sh: sh == a.shape, a)
            elif second == "j" and a.ndim == 2:
                b = self.operand(depth, lambda sh: sh == (a.shape[1],))
                if b.shape != (a.shape[1],):
                    return None
            elif second == "j":   # i,j->ij
                b = self.operand(depth, lambda sh: len(sh) == 1 and sh[0] * a.shape[0] <= MAX_SIZE,
                                 a if a.shape[0] ** 2 <= MAX_SIZE else None)
                if b is None or b.ndim != 1 or b.shape[0] * a.shape[0] > MAX_SIZE:
                    return None
            else:                # ij,kj->ik
                b = self.operand(depth, lambda sh: len(sh) == 2 and sh[1] == a.shape[1]
                                 and sh[0] * a.shape[0] <= MAX_SIZE, a)
            operands.append(b)
            size.update(zip(second, b.shape))
        shape = tuple(size[c] for c in output)
        if not _fits(shape) and shape != ():
            return None
        contracted = math.prod(size[c] for c in set("".join(letters)) - set(output))
        bound = math.prod(o.bound for o in operands) * contracted
        text = f"np.einsum({spec!r}, {', '.join(o.text for o in operands)})"
        views = a.views if len(operands) == 1 else frozenset()   # 'ij->ji' is a view
        return Expr(text, shape, bound, views=views, readonly=a.readonly and bool(views),
                    ops=_ops(*operands, tag=f"linalg:einsum:{spec}"))

    # shape manipulation ------------------------------------------------------------------
    def build_shape(self, depth):
        a = self.operand(depth, lambda sh: len(sh) >= 1)
        if a.ndim == 0:
            form = self.ch.choice(("stack_scalars", "array", "full"))
            if form == "full":
                shape = self.ch.choice(((3, 4), (4,), (2, 3)))
                return Expr(f"np.full({shape!r}, {a.text})", shape, a.bound,
                            ops=_ops(a, tag="shape:full"))
            b = self.operand(depth, lambda sh: sh == ())
            if b.shape != ():
                return None
            text = (f"np.stack([{a.text}, {b.text}])" if form == "stack_scalars"
                    else f"np.array([{a.text}, {b.text}, {a.text}])")
            return Expr(text, (2,) if form == "stack_scalars" else (3,), max(a.bound, b.bound),
                        ops=_ops(a, b, tag=f"shape:{form}"))
        n = math.prod(a.shape)
        if a.ndim == 2:
            forms = ("T", "transpose", "swapaxes", "reshape", "method_reshape", "ravel",
                     "flip", "squeeze", "concatenate", "vstack")
        else:
            forms = ("none_index", "expand_dims", "reshape", "method_reshape", "flip",
                     "broadcast_to", "tile", "repeat", "concatenate", "stack", "hstack",
                     "atleast_2d")
        form = self.ch.choice(forms)
        view = {"views": a.views, "readonly": a.readonly}
        ops = _ops(a, tag=f"shape:{form}")
        pa = paren(a, ATOM)
        if form == "T":
            return Expr(f"{pa}.T", a.shape[::-1], a.bound, **view, ops=ops)
        if form == "transpose":
            text = self.ch.choice((f"np.transpose({a.text})", f"np.transpose({a.text}, (1, 0))"))
            return Expr(text, a.shape[::-1], a.bound, **view, ops=ops)
        if form == "swapaxes":
            return Expr(f"np.swapaxes({a.text}, 0, 1)", a.shape[::-1], a.bound, **view, ops=ops)
        if form in ("reshape", "method_reshape"):
            targets = [(n,)] + [(r, n // r) for r in range(1, n + 1) if n % r == 0]
            shape = self.ch.choice(targets)
            spelled = self.ch.choice((shape, tuple(-1 if i == 0 else d for i, d in
                                                   enumerate(shape))))
            if form == "reshape" or not self.method_ok(a):
                text = f"np.reshape({a.text}, {spelled!r})"
            else:
                text = f"{pa}.reshape({', '.join(map(str, spelled))})"
            return Expr(text, shape, a.bound, **view, ops=ops)
        if form == "ravel":
            text = self.ch.choice((f"{pa}.ravel()", f"np.ravel({a.text})")
                                  if self.method_ok(a) else (f"np.ravel({a.text})",))
            return Expr(text, (n,), a.bound, **view, ops=ops)
        if form == "flip":
            axis = self.ch.choice(tuple(range(a.ndim)))
            return Expr(f"np.flip({a.text}, axis={axis})", a.shape, a.bound, **view, ops=ops)
        if form == "squeeze":
            if 1 not in a.shape:
                return None
            shape = tuple(d for d in a.shape if d != 1)
            return Expr(f"np.squeeze({a.text})", shape, a.bound, **view, ops=ops)
        if form == "none_index":
            text, shape = self.ch.choice(((f"{pa}[None]", (1,) + a.shape),
                                          (f"{pa}[:, None]", a.shape + (1,))))
            return Expr(text, shape, a.bound, **view, ops=ops)
        if form == "atleast_2d":
            return Expr(f"np.atleast_2d({a.text})", (1,) + a.shape, a.bound, **view, ops=ops)
        if form == "expand_dims":
            axis = self.ch.choice((0, 1))
            shape = (1,) + a.shape if axis == 0 else a.shape + (1,)
            return Expr(f"np.expand_dims({a.text}, {axis})", shape, a.bound, **view, ops=ops)
        if form == "broadcast_to":
            rows = self.ch.choice((2, 3))
            if rows * n > MAX_SIZE:
                return None
            return Expr(f"np.broadcast_to({a.text}, ({rows}, {n}))", (rows, n), a.bound,
                        views=a.views, readonly=True, ops=ops)
        if form == "tile":
            reps, shape = self.ch.choice(((2, (2 * n,)), ((2, 1), (2, n))))
            if 2 * n > MAX_SIZE:
                return None
            return Expr(f"np.tile({a.text}, {reps!r})", shape, a.bound, ops=ops)
        if form == "repeat":
            if 2 * n > MAX_SIZE:
                return None
            return Expr(f"np.repeat({a.text}, 2)", (2 * n,), a.bound, ops=ops)
        if form in ("concatenate", "vstack", "hstack"):
            axis = 0 if form == "vstack" else (a.ndim - 1 if form == "hstack"
                                               else self.ch.choice(tuple(range(a.ndim))))

            def compatible(sh, axis=axis):
                return len(sh) == a.ndim and all(sh[d] == a.shape[d] for d in range(a.ndim)
                                                 if d != axis) and \
                    math.prod(sh) + n <= MAX_SIZE
            if 2 * n > MAX_SIZE:
                return None
            b = self.operand(depth, compatible, a)
            shape = list(a.shape)
            shape[axis] += b.shape[axis]
            if form == "concatenate":
                text = f"np.concatenate([{a.text}, {b.text}], axis={axis})"
            else:
                text = f"np.{form}([{a.text}, {b.text}])"
            return Expr(text, tuple(shape), max(a.bound, b.bound),
                        ops=_ops(a, b, tag=f"shape:{form}"))
        # stack of two vectors
        if 2 * n > MAX_SIZE:
            return None
        b = self.operand(depth, lambda sh: sh == a.shape, a)
        axis = self.ch.choice((0, 1, -1))
        shape = (2, n) if axis == 0 else (n, 2)
        return Expr(f"np.stack([{a.text}, {b.text}], axis={axis})", shape,
                    max(a.bound, b.bound), ops=_ops(a, b, tag="shape:stack"))

    # indexing reads ------------------------------------------------------------------------
    def build_index(self, depth):
        a = self.operand(depth, lambda sh: len(sh) >= 1 and math.prod(sh) >= 2)
        if a.ndim == 0:
            return None
        options = self.index_options(a.shape)
        if not options:
            return None
        text, index, sliced, kind = self.ch.choice(options)
        shape = np.zeros(a.shape)[index].shape
        if not _fits(shape) and shape != ():
            return None
        view = {"views": a.views, "readonly": a.readonly} if kind == "basic" else {}
        return Expr(f"{paren(a, ATOM)}[{text}]", shape, a.bound,
                    ops=_ops(a, tag=f"index:{kind}" + (":slice" if sliced else "")), **view)

    @staticmethod
    def index_options(shape):
        """(text, index, uses a bounded slice, kind) for indexes valid on ``shape``."""
        n0 = shape[0]
        out = [(str(i), i, False, "basic") for i in (0, 1, -1) if -n0 <= i < n0]
        out.append((f"[0, {n0 - 1}, 0]", [0, n0 - 1, 0], False, "fancy"))
        slices = [("1:", slice(1, None)), (":-1", slice(None, -1)), ("::2", slice(None, None, 2)),
                  ("::-1", slice(None, None, -1)), ("1:3", slice(1, 3)), ("-2:", slice(-2, None)),
                  ("2:0:-1", slice(2, 0, -1)), ("::-2", slice(None, None, -2))]
        out += [(t, sl, True, "basic") for t, sl in slices if len(range(n0)[sl]) >= 1]
        if len(shape) == 1 and n0 > 1:
            out.append(("None, 1:", (None, slice(1, None)), True, "basic"))
        if len(shape) == 2:
            n1 = shape[1]
            out += [(f"{i}, {j}", (i, j), False, "basic") for i, j in ((0, 1), (-1, 0))
                    if i < n0 and j < n1]
            out += [(f":, {j}", (slice(None), j), False, "basic") for j in (0, -1)]
            out += [(f"..., {j}", (Ellipsis, j), False, "basic") for j in (1,) if j < n1]
            out.append(("1, :", (1, slice(None)), False, "basic") if n0 > 1 else
                       ("0, :", (0, slice(None)), False, "basic"))
            out.append((f":, [{n1 - 1}, 0, 0]", (slice(None), [n1 - 1, 0, 0]), False, "fancy"))
            out += [(f":, {t}", (slice(None), sl), True, "basic") for t, sl in slices
                    if len(range(n1)[sl]) >= 1]
            out += [(f"{t}, {u}", (sl, sm), True, "basic")
                    for (t, sl), (u, sm) in ((slices[0], slices[0]), (slices[3], slices[2]),
                                             (slices[6], slices[5]))
                    if len(range(n0)[sl]) >= 1 and len(range(n1)[sm]) >= 1]
        return out

    # -- statements -------------------------------------------------------------------
    STRUCTURED = ("if", "ifexp", "for", "for", "while", "call", "inplace", "list")

    def statement(self):
        kinds = ("new", "new", "reassign", "aug", "unpack", "constant")
        # Blocks, loops and calls: among most statements of a program focused on
        # control_flow; in about one statement in four otherwise, which keeps the main
        # grammar's programs quick to check (and shrinking goes towards no block).
        if self.level < 2 and "control_flow" in self.enabled \
                and ("control_flow" in self.focus or self.ch.integer(0, 3) == 3):
            kinds += tuple(k for k in self.STRUCTURED if k != "call" or not self.in_helper)
        kind = self.ch.choice(kinds)
        depth = self.ch.integer(1, 3)
        if kind in self.STRUCTURED:
            return getattr(self, f"{kind}_statement")()
        if kind == "constant":   # a value no argument flows into
            name = self.fresh_name()
            values = CONSTANTS if "negative_constant" in self.enabled else \
                tuple(c for c in CONSTANTS if c > 0)
            c = const(self.ch.choice(values))
            self.emit(f"{name} = {c.text}", {"statement:constant"})
            self.bind(name, c)
            return name
        if kind == "reassign":
            name = self.ch.choice(self.names())
            e = self.expr(depth)
            self.emit(f"{name} = {e.text}", e.ops)
            self.bind(name, e)
            return name
        if kind == "aug":
            target = self.aug_target()
            if target is not None:
                return self.aug(target, depth)
        if kind == "unpack":
            return self.unpack(depth)
        name = self.fresh_name()
        e = self.expr(depth)
        self.emit(f"{name} = {e.text}", e.ops)
        self.bind(name, e)
        return name

    def emit(self, line, ops=frozenset()):
        self.body.append(self.indent + line)
        self.ops.update(ops)

    def shared(self, name) -> bool:
        """Whether ``name``'s memory may be seen through another name or an argument."""
        v = self.env[name]
        if v.readonly or any(b.startswith("arg:") for b in v.views):
            return True
        return any(other != name and self.env[other].views & v.views for other in self.env)

    def aug_target(self):
        names = [n for n in self.names() if not self.shared(n)]
        return self.ch.choice(names) if names else None

    def aug(self, name, depth):
        t = self.env[name]
        if t.shape == ():
            want = lambda sh: sh == ()
        else:
            want = lambda sh: broadcast(t.shape, sh) == t.shape
        op = self.ch.choice(("+=", "-=", "*=", "/="))
        e = self.expr(depth, want)
        if e.shape != () and broadcast(t.shape, e.shape) != t.shape:
            e = const(0.5)
        if op == "/=":
            text, bound = f"{name} /= 1.5 + {binop(e, '*', e)}", t.bound / 1.5
        elif op == "*=":
            text, bound = f"{name} *= {e.text}", t.bound * e.bound
        else:
            text, bound = f"{name} {op} {e.text}", t.bound + e.bound
        self.emit(text, _ops(e, tag=f"aug:{op}"))
        py = t.py and e.py
        self.env[name] = _Var(t.shape, bound, py, t.views)
        if bound > LIMIT * LIMIT:   # keep magnitudes in range
            factor = 10.0 ** -math.ceil(math.log10(bound / LIMIT))
            self.emit(f"{name} = {factor!r} * {name}", {"rescale"})
            self.bind(name, Expr(name, t.shape, bound * factor, py=py))
        return name

    def unpack(self, depth):
        existing = self.names()
        if len([n for n in existing if n not in ARGS]) >= 2 and self.ch.flag():
            # a swap of two variables: a, b = b, a
            a, b = self.ch.choice([(p, q) for p in existing for q in existing
                                   if p < q and p not in ARGS and q not in ARGS])
            ea, eb = self.var_expr(a), self.var_expr(b)
            self.emit(f"{a}, {b} = {b}, {a}", {"unpack:swap"})
            self.bind(a, eb)
            self.bind(b, ea)
            return a
        targets = []
        for _ in range(2):
            if self.ch.flag() and existing:
                targets.append(self.ch.choice(existing))
            else:
                targets.append(self.fresh_name())
        if targets[0] == targets[1]:
            targets[1] = self.fresh_name()
        e1, e2 = self.expr(depth), self.expr(depth)
        self.emit(f"{targets[0]}, {targets[1]} = {e1.text}, {e2.text}",
                  _ops(e1, e2, tag="unpack"))
        self.bind(targets[0], self.unpacked(e1))
        self.bind(targets[1], self.unpacked(e2))
        return targets[0]

    def unpacked(self, e: Expr) -> Expr:
        """``e`` as bound by tuple unpacking: flagged unless it is a plain name."""
        return e if e.text in self.env else replace(e, unpacked=True)

    # forced constructs (the xfail variants) ------------------------------------------------
    def negative_constant_statement(self):
        """``c = -1.5`` and then ``c ** 2`` in a product with a live value."""
        a = self.var_expr(self.ch.choice(self.names()))
        c, name = self.fresh_name(), self.fresh_name()
        value = self.ch.choice((-1.5, -0.7))
        self.emit(f"{c} = {value!r}", {"statement:negative_constant"})
        self.bind(c, const(value))
        power = self.ch.choice((2, 4, 2.0))
        self.emit(f"{name} = {paren(a, MUL)} * {c} ** {power!r}", {"binary:*"})
        self.bind(name, Expr(name, a.shape, a.bound * abs(value) ** power))
        return name

    def plus_inplace_statement(self):
        """``t = <value>; u = +t; u *= c`` and ``t`` read at the end."""
        a = self.var_expr(self.ch.choice(self.names()))
        t, u = self.fresh_name(), self.fresh_name()
        self.emit(f"{t} = {a.text}", {"statement:copy"})
        self.bind(t, a)
        self.emit(f"{u} = +{t}", {"unary:plus"})
        self.bind(u, Expr(u, a.shape, a.bound))
        op = self.ch.choice(("*=", "+=", "-="))
        self.emit(f"{u} {op} 2.0", {"plus_inplace"})
        self.env[u] = replace(self.env[u], bound=a.bound * 2 + 2)
        self.must_read.append(t)
        return u

    def unpack_method_statement(self):
        """``a, b = <call>, <expr>`` and then a method call on ``a``."""
        names = self.names(lambda sh: len(sh) >= 1)
        if not names:
            return None
        source = self.var_expr(self.ch.choice(names))
        other = self.var_expr(self.ch.choice(self.names()))
        a, b, c = self.fresh_name(), self.fresh_name(), self.fresh_name()
        first = self.ch.choice(("np.tanh", "np.sin", "np.cos"))
        self.emit(f"{a}, {b} = {first}({source.text}), {other.text}", {"unpack"})
        self.bind(a, replace(Expr(a, source.shape, math.e), unpacked=True))
        self.bind(b, other)
        method, shape = self.ch.choice(((".ravel()", (math.prod(source.shape),)),
                                        (".sum()", ()), (".copy()", source.shape),
                                        (".reshape(-1)", (math.prod(source.shape),))))
        self.emit(f"{c} = {a}{method}", {"unpack:method"})
        view = method in (".ravel()", ".reshape(-1)")
        self.bind(c, Expr(c, shape, math.e * max(1, math.prod(source.shape)),
                          views=self.env[a].views if view else frozenset()))
        return c

    def matmul_statement(self):
        """``m = np.matmul(a, a)`` of a vector ``a``, then ``m`` combined with ``a``."""
        names = self.names(lambda sh: len(sh) >= 1)
        if not names:
            return None
        a = self.var_expr(self.ch.choice(names))
        if a.ndim != 1:
            a = Expr(f"np.ravel({a.text})", (math.prod(a.shape),), a.bound)
        name, combined = self.fresh_name(), self.fresh_name()
        e = self.scaled(Expr(f"np.matmul({a.text}, {a.text})", (), a.bound ** 2 * a.shape[0],
                             ops=frozenset({"linalg:matmul"})))
        self.emit(f"{name} = {e.text}", e.ops)
        self.bind(name, e)
        op = self.ch.choice(("+", "*", "-"))
        c = Expr(binop(self.var_expr(name), op, a), a.shape, e.bound * a.bound + e.bound, ADD)
        self.emit(f"{combined} = {c.text}", {f"binary:{op}"})
        self.bind(combined, c)
        return combined

    def alias_statements(self):
        names = self.names(lambda sh: len(sh) >= 1)
        if not names:
            return None
        source = self.var_expr(self.ch.choice(names))
        base, view = self.fresh_name(), self.fresh_name()
        self.emit(f"{base} = np.tanh({source.text})", {"alias:base"})
        self.bind(base, Expr(base, source.shape, 1.0))
        b = self.var_expr(base)
        forms = [(base, b.shape), (f"{base}.reshape(-1)", (math.prod(b.shape),))]
        if b.ndim == 1:
            forms.append((f"{base}[None]", (1,) + b.shape))
        else:
            forms.append((f"{base}.T", b.shape[::-1]))
        text, shape = self.ch.choice(forms)
        self.emit(f"{view} = {text}", {"alias:view"})
        self.bind(view, Expr(view, shape, 1.0, views=self.env[base].views))
        e = self.expr(1, lambda sh: broadcast(b.shape, sh) == b.shape)
        if e.shape != () and broadcast(b.shape, e.shape) != b.shape:
            e = const(0.5)
        op = self.ch.choice(("+=", "-=", "*="))
        self.emit(f"{base} {op} {e.text}", _ops(e, tag="alias:update"))
        bound = 1.0 + e.bound if op != "*=" else e.bound
        self.env[base] = _Var(b.shape, bound, False, self.env[base].views)
        self.env[view] = _Var(shape, bound, False, self.env[base].views)   # sees the update
        self.must_read.append(view)
        return base

    # -- the program -----------------------------------------------------------------
    def program(self) -> Program:
        n = self.ch.integer(2, self.max_statements)
        forced = [(kind, self.ch.integer(0, n - 1)) for kind in sorted(self.focus)]
        last = None
        for k in range(n):
            done = []
            for kind, at in forced:
                if at <= k:
                    result = self.forced_statement(kind)
                    if result is not None:
                        last = result
                        done.append((kind, at))
            forced = [f for f in forced if f not in done]
            last = self.statement()
        for kind, _ in forced:   # not placed yet: every live value had size 1
            name = self.fresh_name()
            a = self.var_expr(self.names()[0])
            total = f"np.sum({a.text})"
            self.emit(f"{name} = np.stack([{total}, {total}, {total}])", {"shape:stack3"})
            self.bind(name, Expr(name, (3,), a.bound))
            last = self.forced_statement(kind) or last
        scalar = self.scalar_return(last)
        if self.ch.integer(0, 3) == 0:   # f_vec returns a tuple: (last, another live value)
            other = self.ch.choice(self.names())
            return Program(list(self.body), scalar, f"{last}, {other}",
                           frozenset(self.ops | {"return:tuple"}),
                           (self.env[last].shape, self.env[other].shape), True,
                           list(self.helpers))
        return Program(list(self.body), scalar, last, frozenset(self.ops), self.env[last].shape,
                       helpers=list(self.helpers))

    def forced_statement(self, kind):
        return {"alias_update": self.alias_statements,
                "np_matmul": self.matmul_statement, "scalar_abs": self.abs_statement,
                "mod": self.mod_statement,
                "unpack_method": self.unpack_method_statement,
                "negative_constant": self.negative_constant_statement,
                "plus_inplace": self.plus_inplace_statement,
                "enumerate_zip": self.enumerate_zip_statement,
                "arg_index_update": self.arg_index_update_statement,
                "control_flow": self.for_statement}[kind]()

    def arg_index_update_statement(self):
        """``s = <array>`` (an argument rebound to a fresh array), then ``s[i] = ...``."""
        names = self.names(lambda sh: len(sh) >= 1)
        if not names:
            return None
        a = self.var_expr(self.ch.choice(names))
        arg = self.ch.choice(ARGS)
        self.emit(f"{arg} = {paren(a, MUL)} * 1.0", {"inplace:copy"})
        self.bind(arg, Expr(arg, a.shape, a.bound))
        self.indexed_update(arg)
        return arg

    def enumerate_zip_statement(self):
        """``out = np.zeros(...)`` filled by ``for i, (p, q) in enumerate(zip(v, w))``."""
        names = self.names(lambda sh: len(sh) >= 1 and 2 <= sh[0] <= 4)
        if not names:
            return None
        v = self.var_expr(self.ch.choice(names))
        w = self.var_expr(self.ch.choice(self.names(lambda sh: len(sh) >= 1
                                                    and sh[0] == v.shape[0])))
        out, i, p, q = (self.fresh_name() for _ in range(4))
        self.emit(f"{out} = np.zeros({v.shape!r})", {"inplace:zeros"})
        self.emit(f"for {i}, ({p}, {q}) in enumerate(zip({v.text}, {w.text})):",
                  {"fill:enumerate_zip"})
        self.emit(f"    {out}[{i}] = np.tanh({p}) * 0.5 + np.sum({q}) * 0.1")
        self.bind(out, Expr(out, v.shape, 0.5 + 0.1 * w.bound * max(1, math.prod(w.shape))))
        return out

    def abs_statement(self):
        a = self.var_expr(self.ch.choice(self.names()))
        arg = a.text if a.shape == () else f"np.sum({a.text})"
        name = self.fresh_name()
        func = self.ch.choice(("math.fabs", "abs"))
        self.emit(f"{name} = {func}({arg})", {"math:fabs" if func == "math.fabs" else
                                              "unary:abs_builtin:scalar"})
        self.bind(name, Expr(name, (), a.bound * max(1, math.prod(a.shape)), py=True))
        return name

    def scalar_return(self, last: str) -> str:
        out = self.var_expr(last)
        form = self.ch.choice(("sum*c", "mean", "sum_sin", "sum*other", "sum+mean", "direct"))
        c = self.ch.choice((0.7, 1.3, -0.4))
        if form == "direct" and out.shape == () and not self.must_read:
            return last      # the value itself: a scalar variable (or argument)
        if form in ("sum*c", "direct"):
            text = f"np.sum({last} * {c!r})"
        elif form == "mean":
            text = f"np.mean({last})"
        elif form == "sum_sin":
            text = f"np.sum(np.sin({last}) * {last})"
        else:
            others = [n for n in self.names(lambda sh: broadcast(out.shape, sh) is not None)
                      if n != last]
            other = self.ch.choice(others) if others else last
            text = (f"np.sum({last} * {other})" if form == "sum*other"
                    else f"np.sum({last}) + np.mean({other} * {other})")
        for name in self.must_read:
            text += f" + np.sum(np.sin({name}))"
        return text


def generate(chooser, **options) -> Program:
    return Generator(chooser, **options).program()


def programs(**options):
    """Hypothesis strategy of :class:`Program` (options as for :class:`Generator`)."""
    from hypothesis import strategies as st

    @st.composite
    def strategy(draw):
        return generate(DrawChooser(draw), **options)

    return strategy()
