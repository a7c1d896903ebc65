"""Random NumPy programs written the way people write them, and the checks run on them.

Why a second fuzzer: ``tests/data/programs.py`` builds programs from a typed
expression grammar, one statement at a time.  Users do not write code like
that: they swap variables inside loops (``a, b = b, a``), keep ``x, x_prev =
g(x), x``, glue tuples together before ``np.hstack``, iterate over slices of a
list of arrays that may be empty, carry a dict of mixed types through a loop,
append to a list and then rebind the appended name, return early from a loop,
and put all of that inside helpers that return tuples.  This module writes
programs made of such *constructs*, and lets every construct appear anywhere:
at top level, in ``for`` loops (over ``range`` and over lists), in nested
loops, in ``if``/``else`` branches and ``while`` loops with data-dependent
conditions, and in module-level helpers called from ``f``.

A program is a module::

    import numpy as np

    def helper1(a, b):            # zero to two helpers, maybe returning tuples
        ...

    def f(x, y, s):               # x: (3, 4), y: (4,), s: a float or a 0-d array
        ...
        return <finite scalar>

Every program is produced by :func:`generate` from a seed with a plain
``random.Random`` (deterministic), carries the set of constructs it contains
(:attr:`Program.tags`), and is valid Python that runs under plain NumPy:

* every value stays bounded (|v| <= ``CAP``): each right-hand side whose static
  bound exceeds ``CAP`` is squashed with ``np.tanh`` or scaled by a power of ten,
  so finite differences are meaningful;
* the generator tracks which buffers each name may share memory with, so that
  an in-place update (``h += ...`` on an ndarray is in place!) never touches an
  argument of ``f`` or of a helper -- also across loop iterations, where a swap
  can hand an argument's buffer to a name updated in place on the next pass
  (loop bodies are regenerated until this analysis reaches a fixed point);
* names are rebound only with values of the same shape, so a loop body sees
  the same shapes on every iteration.

:func:`check_program` runs srcgrad on a program and classifies the outcome
(``ok``, ``wrong-gradient``, ``value-mismatch``, ``crash``, ``rejected``,
``modified-input``, ``generator-bug``); checks: for every policy the value of
``value_and_grad`` is bit-identical to ``f``'s own and the gradients of all
policies agree; the gradient agrees with central finite differences (away from
kinks) and with autograd (an independent AD, run on the same source with ``np``
bound to ``autograd.numpy``); srcgrad raises nothing but located
``SrcGradError``\\ s; arguments are left untouched.

Command line (no pytest needed)::

    python tests/data/userprograms.py --count 2000 --seed 0      # summary table
    python tests/data/userprograms.py --show 17                  # print program 17
    python tests/data/userprograms.py --count 500 --failures 3   # + 3 failing programs per class
"""

from __future__ import annotations

import argparse
import ast
import collections
import contextlib
import os
import random
import re
import signal
import sys
import tempfile
import threading
import time
import traceback
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
from numeric import perturbed
from programs import load_program

CAP = 2.0                      # |every value| <= CAP at every statement boundary
ARG_SHAPES = {"x": (3, 4), "y": (4,), "s": ()}
ARRAY_SHAPES = ((3, 4), (4,), (3,))
SHAPES = ARRAY_SHAPES + ((),)
MAX_DEPTH = 3                  # nesting of blocks (loops, branches)
POLICIES = ("save", "recompute", "save_products", "sqrt", ("revolve", 2))
WRT = (0, 1, 2)

#: Every tag a program can carry, for the summary table (in this order).
CONSTRUCTS = (
    "swap", "swap-in-loop", "rotate", "parallel-update", "parallel-update-in-loop",
    "tuple-concat", "list-concat", "chained-assign", "nested-unpack", "enumerate-zip",
    "aug-pyfloat", "aug-npscalar", "aug-int", "aug-array-inplace", "inplace-aliased",
    "view", "view-update", "list-append", "append-then-rebind", "list-reduce",
    "loop-list", "loop-list-slice", "loop-empty-slice", "dict-state",
    "for-range", "nested-loop", "if-data", "if-else", "while", "early-return",
    "early-return-in-loop", "helper-call", "helper-tuple", "helper-in-loop", "helper-calls-helper",
    "ufunc", "reduction", "matmul", "where", "index", "scalar-0d",
    "lambda", "lambda-map", "comprehension", "filter", "sorted-key", "reversed",
    "function-argument", "reduce",
)


# --- the generator's view of a program's state ------------------------------------

@dataclass(frozen=True)
class Var:
    """What the generator knows about one name (or lvalue such as ``st['h']``).

    kind: "arr" (an ndarray of ``shape``), "scalar" (a float, NumPy scalar or 0-d
    array), "int", or "list" (of values of ``shape``).  ``bufs``: the buffers
    the value may share memory with (empty: an immutable scalar).  ``py``: a
    Python float (or int), for the tags.  ``appended``: the value was appended to
    a list and still is that list's element.
    """

    kind: str
    shape: tuple = ()
    bufs: frozenset = frozenset()
    py: bool = False
    appended: bool = False
    length: int | None = None       # a list's length, where the generator knows it


@dataclass(frozen=True)
class Ex:
    """A generated expression: text, bound on its magnitude, whether it is a
    Python number, and the buffers it aliases (None: a fresh value)."""

    text: str
    bound: float
    py: bool = False
    bufs: frozenset | None = None
    atom: bool = True
    tag: str = ""                   # a construct to tag the program with, if chosen


@dataclass
class Scope:
    """Where statements are being generated."""

    env: dict
    protected: frozenset            # buffers that must never be updated in place
    returns: tuple                  # shapes the enclosing function returns
    fn: str                         # "f" or the helper's name
    depth: int = 0                  # block nesting
    loops: int = 0                  # loop nesting
    inplace: bool = True            # in-place updates allowed here
    iterating: frozenset = frozenset()   # lists being iterated (no append)
    loopvars: frozenset = frozenset()

    def child(self, env=None, **kw):
        return replace(self, env=dict(self.env if env is None else env), **kw)


@dataclass
class Helper:
    name: str
    params: tuple                   # (name, shape) pairs
    returns: tuple                  # shapes; one shape: not a tuple
    ret_bufs: list                  # per returned value, buffers (param ids / local ids)


@dataclass
class Program:
    seed: int
    source: str
    tags: frozenset
    scalar_kind: str                # "float" or "0d"


# --- expressions ---------------------------------------------------------------------

CONSTS = (0.5, 1.5, -0.7, 0.3, 2.0, -1.2)


def _p(e: Ex) -> str:
    return e.text if e.atom else f"({e.text})"


class Generator:
    """Writes one program; all choices come from ``random.Random(seed)``."""

    def __init__(self, seed: int):
        self.seed = seed
        self.r = random.Random(seed)
        self.n = 0
        self.tags: set = set()
        self.helpers: list[Helper] = []
        self.scalar_kind = "0d" if self.r.random() < 0.3 else "float"
        self.apply_helper = False       # a helper calling the function it is given

    # -- small utilities -------------------------------------------------------------
    def chance(self, p):
        return self.r.random() < p

    def pick(self, seq):
        return seq[self.r.randrange(len(seq))]

    def fresh(self, prefix):
        self.n += 1
        return f"{prefix}{self.n}"

    def newbuf(self):
        self.n += 1
        return f"buf{self.n}"

    def name_for(self, kind, shape):
        if kind == "list":
            return self.fresh(self.pick(("ps", "ys", "hist")))
        if kind == "int":
            return self.fresh(self.pick(("k", "n", "cnt")))
        prefix = {(3, 4): ("h", "m", "z"), (4,): ("v", "w", "g"), (3,): ("u", "r"),
                  (): ("t", "c", "acc")}[shape]
        return self.fresh(self.pick(prefix))

    def vars_of(self, sc, kind=None, shape=None, pred=None):
        out = []
        for name, v in sc.env.items():
            if kind is not None and v.kind != kind:
                continue
            if shape is not None and v.shape != shape:
                continue
            if pred is not None and not pred(name, v):
                continue
            out.append(name)
        return out

    def values(self, sc, shape):
        """Names holding an array or scalar of ``shape``."""
        return [n for n, v in sc.env.items() if v.kind in ("arr", "scalar") and v.shape == shape]

    # -- expressions -------------------------------------------------------------------
    def leaf(self, sc, shape) -> Ex:
        r = self.r
        opts = []
        names = self.values(sc, shape)
        for n in names:
            v = sc.env[n]
            opts.append(Ex(n, CAP, v.py, v.bufs))
            opts.append(Ex(n, CAP, v.py, v.bufs))   # plain names twice as likely
        lists = [n for n in self.vars_of(sc, "list", shape)]
        for n in lists:
            b = sc.env[n].bufs
            opts.append(Ex(f"{n}[{r.choice(('0', '-1'))}]", CAP, False, b))
            opts.append(Ex(r.choice((f"sum({n}) / len({n})", f"np.mean(np.stack({n}), axis=0)"
                                     if shape else f"np.mean({n})")), CAP, atom=False,
                           tag="list-reduce"))
        if shape == ():
            c = r.choice(CONSTS)
            opts.append(Ex(repr(c), 2.0, True, atom=c >= 0))
            for k in self.vars_of(sc, "int"):
                opts.append(Ex(f"0.5 ** {k}", 1.0, True, atom=False))
            for n in self.values(sc, (4,)) + self.values(sc, (3,)):
                self.tags.add("index")
                opts.append(Ex(f"{n}[{r.randrange(3)}]", CAP))
                opts.append(Ex(f"np.{r.choice(('sum', 'mean', 'max'))}({n})",
                               CAP * 4, atom=True))
            for n in self.values(sc, (3, 4)):
                opts.append(Ex(f"{n}[{r.randrange(3)}, {r.randrange(4)}]", CAP))
                opts.append(Ex(f"np.mean({n})", CAP))
            vs = self.values(sc, (4,))
            if vs:
                a, b = r.choice(vs), r.choice(vs)
                opts.append(Ex(r.choice((f"{a} @ {b}", f"np.dot({a}, {b})")), 4 * CAP * CAP,
                               atom=False))
        elif shape == (4,):
            for m in self.values(sc, (3, 4)):
                opts.append(Ex(f"{m}[{r.randrange(3)}]", CAP, False, sc.env[m].bufs))
                opts.append(Ex(f"np.{r.choice(('mean', 'max'))}({m}, axis=0)", CAP))
                for k in self.vars_of(sc, "int"):
                    opts.append(Ex(f"{m}[{k} % 3]", CAP, False, sc.env[m].bufs))
                for u in self.values(sc, (3,)):
                    opts.append(Ex(r.choice((f"{u} @ {m}", f"{m}.T @ {u}")), 3 * CAP * CAP,
                                   atom=False))
            for n in self.values(sc, (4,)):
                opts.append(Ex(f"{n}[::-1]", CAP, False, sc.env[n].bufs))
        elif shape == (3,):
            for m in self.values(sc, (3, 4)):
                opts.append(Ex(f"{m}[:, {r.randrange(4)}]", CAP, False, sc.env[m].bufs))
                opts.append(Ex(f"np.sum({m}, axis=1)", 4 * CAP))
                for v in self.values(sc, (4,)):
                    opts.append(Ex(r.choice((f"{m} @ {v}", f"np.dot({m}, {v})")),
                                   4 * CAP * CAP, atom=False))
        elif shape == (3, 4):
            us, vs = self.values(sc, (3,)), self.values(sc, (4,))
            if us and vs:
                opts.append(Ex(f"np.outer({r.choice(us)}, {r.choice(vs)})", CAP * CAP))
            for m in self.values(sc, (3, 4)):
                opts.append(Ex(f"{m}[::-1]", CAP, False, sc.env[m].bufs))
            for v in vs:
                opts.append(Ex(f"np.ones((3, 4)) * {v}", CAP, atom=False))
        if not opts:   # nothing of this shape in scope (in a helper): a constant
            return Ex(f"np.full({shape}, {r.choice(CONSTS)!r})", 2.0)
        e = r.choice(opts)
        if e.tag:
            self.tags.add(e.tag)
        if "@" in e.text or "dot(" in e.text:
            self.tags.add("matmul")
        if any(k in e.text for k in ("np.sum", "np.mean", "np.max")):
            self.tags.add("reduction")
        if "[" in e.text:
            self.tags.add("index")
        return e

    def operand(self, sc, shape, depth) -> Ex:
        """An expression broadcasting to ``shape`` (a smaller shape, sometimes)."""
        r = self.r
        if shape == (3, 4) and r.random() < 0.25:
            sub_shape = r.choice(((4,), (), (3,)))
            sub = self.expr(sc, sub_shape, depth)
            return Ex(f"{_p(sub)}[:, None]", sub.bound) if sub_shape == (3,) else sub
        if shape != () and r.random() < 0.2:
            return self.expr(sc, (), depth)
        return self.expr(sc, shape, depth)

    def expr(self, sc, shape, depth=2) -> Ex:
        r = self.r
        if depth <= 0 or r.random() < 0.3:
            e = self.leaf(sc, shape)
        else:
            c = r.random()
            if c < 0.3:
                a = self.expr(sc, shape, depth - 1)
                fn = r.choice(("tanh", "sin", "cos", "exp", "log", "sqrt", "abs", "sq"))
                self.tags.add("ufunc")
                if fn in ("tanh", "sin", "cos"):
                    e = Ex(f"np.{fn}({a.text})", 1.0)
                elif fn == "exp":
                    e = r.choice((Ex(f"np.exp(-{_p(a)} ** 2)", 1.0),
                                  Ex(f"np.exp(0.5 * {_p(a)})", float(np.exp(0.5 * a.bound)))))
                elif fn == "log":
                    e = Ex(f"np.log(1.0 + {_p(a)} ** 2)", float(np.log1p(a.bound ** 2)))
                elif fn == "sqrt":
                    e = Ex(f"np.sqrt({_p(a)} ** 2 + 1.0)", float(np.sqrt(a.bound ** 2 + 1)))
                elif fn == "abs":
                    e = Ex(f"np.abs({a.text})", a.bound)
                else:
                    e = Ex(f"{_p(a)} ** 2", a.bound ** 2, a.py, atom=False)
            elif c < 0.75:
                a = self.expr(sc, shape, depth - 1)
                b = self.operand(sc, shape, depth - 1)
                if r.random() < 0.5:
                    a, b = b, a
                op = r.choice("+-*")
                bound = a.bound * b.bound if op == "*" else a.bound + b.bound
                e = Ex(f"{_p(a)} {op} {_p(b)}", bound, a.py and b.py, atom=False)
            elif c < 0.85:
                a = self.expr(sc, shape, depth - 1)
                k = r.choice((0.5, 0.1, 2.0, -1.5))
                e = Ex(f"{k} * {_p(a)}", abs(k) * a.bound, a.py, atom=False)
            elif c < 0.95 and shape != ():
                cond = self.operand(sc, shape, depth - 1)
                a = self.operand(sc, shape, depth - 1)
                b = self.expr(sc, shape, depth - 1)
                self.tags.add("where")
                e = Ex(f"np.where({_p(cond)} > {r.choice((0.0, 0.5, -0.3))}, {a.text}, {b.text})",
                       max(a.bound, b.bound))
            else:
                a = self.expr(sc, shape, depth - 1)
                b = self.operand(sc, shape, depth - 1)
                e = Ex(f"{_p(a)} / (1.0 + {_p(b)} ** 2)", a.bound, a.py and b.py, atom=False)
        return e

    def fit(self, e: Ex) -> Ex:
        """``e`` squashed or scaled so that its bound is at most CAP."""
        if e.bound <= CAP:
            return e
        if self.chance(0.5):
            self.tags.add("ufunc")
            return Ex(f"np.tanh({e.text})", 1.0)
        k = 0.5
        while k * e.bound > CAP:
            k /= 10
        return Ex(f"{k!r} * {_p(e)}", k * e.bound, e.py, atom=False)

    def rhs(self, sc, shape, depth=2) -> Ex:
        return self.fit(self.expr(sc, shape, depth))

    def small(self, sc, shape) -> Ex:
        """An increment for an update: bound <= CAP / 2."""
        e = self.expr(sc, shape, 2)
        if e.bound > CAP / 2:
            self.tags.add("ufunc")
            return Ex(r"np.tanh(%s)" % e.text, 1.0) if self.chance(0.5) else \
                Ex(f"0.5 * np.tanh({e.text})", 0.5, atom=False)
        return e

    def cond(self, sc) -> str:
        r = self.r
        e = self.expr(sc, (), 1)
        text = f"{_p(e)} {r.choice(('>', '<'))} {r.choice((0.0, 0.1, -0.2, 0.5))}"
        if r.random() < 0.15:
            e2 = self.expr(sc, (), 1)
            text += f" {r.choice(('and', 'or'))} {_p(e2)} > {r.choice((0.0, -0.5))}"
        return text

    # -- binding names -----------------------------------------------------------------
    def value_var(self, e: Ex, shape) -> Var:
        kind = "scalar" if shape == () else "arr"
        bufs = e.bufs if e.bufs is not None else (
            frozenset({self.newbuf()}) if kind == "arr" else frozenset())
        return Var(kind, shape, bufs, e.py and shape == ())

    def bind(self, sc, name, var: Var):
        old = sc.env.get(name)
        if old is not None and old.appended:
            self.tags.add("append-then-rebind")
        sc.env[name] = var

    def target(self, sc, shape, new_p=0.5):
        """A name to assign a value of ``shape`` to: a new one, or an existing one
        of that shape (never a loop's own list, never an int)."""
        existing = [n for n in self.values(sc, shape) if n not in sc.iterating]
        if existing and not self.chance(new_p):
            return self.pick(existing)
        return self.name_for("scalar" if shape == () else "arr", shape)

    # -- statements ----------------------------------------------------------------------
    def block(self, sc, count) -> list:
        lines = []
        for _ in range(count):
            lines += self.statement(sc)
        return lines or ["pass"]

    def statement(self, sc) -> list:
        r = self.r
        kinds = ["assign", "assign", "update", "aug", "swap", "parallel", "chained", "unpack",
                 "concat", "list", "append", "view", "scalar", "lambda", "map", "reduce"]
        if self.helpers:
            kinds += ["call", "call"]
        if sc.depth < MAX_DEPTH:
            kinds += ["for", "for", "if", "forlist", "while", "dict", "zip"]
        if sc.depth > 0 or sc.fn != "f":
            kinds += ["return"]
        kind = r.choice(kinds)
        return getattr(self, "st_" + kind)(sc)

    def st_assign(self, sc):
        shape = self.pick(SHAPES)
        name = self.target(sc, shape, new_p=0.7)
        e = self.rhs(sc, shape)
        self.bind(sc, name, self.value_var(e, shape))
        return [f"{name} = {e.text}"]

    def st_update(self, sc):
        """``x = g(x, ...)``: rebind an existing name from its own value."""
        names = [n for n in self.values(sc, self.pick(SHAPES)) if n not in sc.iterating]
        if not names:
            return self.st_assign(sc)
        name = self.pick(names)
        shape = sc.env[name].shape
        other = self.small(sc, shape)
        e = self.fit(Ex(f"{self.pick(('0.5 *', '0.9 *', '-0.5 *'))} {name} + {_p(other)}",
                        0.9 * CAP + other.bound, atom=False))
        self.bind(sc, name, self.value_var(e, shape))
        return [f"{name} = {e.text}"]

    def st_aug(self, sc):
        """Augmented assignment: in place on a (non-argument) array, rebinding on a
        scalar.  ``v *= 0.5`` first keeps the bound."""
        shape = self.pick(SHAPES)
        cands = [n for n in self.values(sc, shape) if n not in sc.iterating]
        if not sc.inplace:
            cands = [n for n in cands if sc.env[n].kind == "scalar" and not sc.env[n].bufs]
        cands = [n for n in cands if not (sc.env[n].bufs & sc.protected)]
        if not cands:
            name = self.name_for("scalar" if shape == () else "arr", shape)
            lines = []
            if shape == ():   # a Python float accumulator, or a NumPy scalar from an array
                src = self.values(sc, (4,)) + self.values(sc, (3,))
                if src and self.chance(0.5):
                    lines.append(f"{name} = {self.pick(src)}[{self.r.randrange(3)}]")
                    var = Var("scalar", (), frozenset(), False)
                else:
                    lines.append(f"{name} = {self.pick(('0.0', '1.0', '0.5'))}")
                    var = Var("scalar", (), frozenset(), True)
            else:
                e = self.rhs(sc, shape)
                lines.append(f"{name} = {e.text} + 0.0" if e.bufs is not None else
                             f"{name} = {e.text}")
                var = Var("arr", shape, frozenset({self.newbuf()}))
            self.bind(sc, name, var)
            return lines + self._aug(sc, name)
        return self._aug(sc, self.pick(cands))

    def _aug(self, sc, name):
        v = sc.env[name]
        if v.kind == "arr":
            self.tags.add("aug-array-inplace")
            if any(o != name and (w.bufs & v.bufs) for o, w in sc.env.items()):
                self.tags.add("inplace-aliased")
        else:
            self.tags.add("aug-pyfloat" if v.py else "aug-npscalar")
        inc = self.small(sc, v.shape)
        op = self.pick(("+=", "-="))
        lines = [f"{name} *= 0.5", f"{name} {op} {inc.text}"] if self.chance(0.7) else \
            [f"{name} *= {self.pick(('np.tanh', 'np.cos', 'np.sin'))}({inc.text})"]
        if v.kind == "scalar":
            self.bind(sc, name, replace(v, py=v.py and inc.py, appended=False))
        return lines

    def st_scalar(self, sc):
        """A NumPy scalar taken from an array, updated by augmented assignment."""
        src = [n for n in self.values(sc, (4,)) + self.values(sc, (3,)) + self.values(sc, (3, 4))]
        if not src:
            return self.st_aug(sc)
        n = self.pick(src)
        idx = f"[{self.r.randrange(3)}]" if sc.env[n].shape != (3, 4) else \
            f"[{self.r.randrange(3)}, {self.r.randrange(4)}]"
        name = self.name_for("scalar", ())
        self.bind(sc, name, Var("scalar", (), frozenset(), False))
        self.tags.add("index")
        return [f"{name} = {n}{idx}"] + self._aug(sc, name)

    def st_swap(self, sc):
        shape = self.pick(SHAPES)
        names = [n for n in self.values(sc, shape) if n not in sc.iterating]
        if len(names) < 2:
            a = self.target(sc, shape, new_p=1.0)
            e = self.rhs(sc, shape)
            self.bind(sc, a, self.value_var(e, shape))
            return [f"{a} = {e.text}"] + self.st_swap_names(sc, [a] + names)
        return self.st_swap_names(sc, names)

    def st_swap_names(self, sc, names):
        if len(names) < 2:
            return []
        if len(names) >= 3 and self.chance(0.35):
            a, b, c = self.r.sample(names, 3)
            self.tags.add("rotate")
            va, vb, vc = sc.env[a], sc.env[b], sc.env[c]
            sc.env[a], sc.env[b], sc.env[c] = vb, vc, va
            return [f"{a}, {b}, {c} = {b}, {c}, {a}"]
        a, b = self.r.sample(names, 2)
        self.tags.add("swap")
        if sc.loops:
            self.tags.add("swap-in-loop")
        sc.env[a], sc.env[b] = sc.env[b], sc.env[a]
        return [f"{a}, {b} = {b}, {a}"]

    def st_parallel(self, sc):
        """``a, a_prev = g(a, a_prev), a`` and other parallel assignments."""
        shape = self.pick(SHAPES)
        names = [n for n in self.values(sc, shape) if n not in sc.iterating]
        if not names:
            return self.st_assign(sc)
        a = self.pick(names)
        prevs = [n for n in names if n != a]
        prev = self.pick(prevs) if prevs and self.chance(0.6) else self.name_for(
            "scalar" if shape == () else "arr", shape)
        old_a = sc.env[a]
        e = self.rhs(sc, shape)
        self.tags.add("parallel-update")
        if sc.loops:
            self.tags.add("parallel-update-in-loop")
        self.bind(sc, a, self.value_var(e, shape))
        self.bind(sc, prev, replace(old_a, appended=False))
        if self.chance(0.5):
            return [f"{a}, {prev} = {e.text}, {a}"]
        return [f"{prev}, {a} = {a}, {e.text}"]

    def st_chained(self, sc):
        shape = self.pick(SHAPES)
        a = self.target(sc, shape)
        b = self.target(sc, shape, new_p=1.0)
        e = self.rhs(sc, shape)
        var = self.value_var(e, shape)
        self.bind(sc, a, var)
        self.bind(sc, b, var)
        self.tags.add("chained-assign")
        return [f"{a} = {b} = {e.text}"]

    def st_unpack(self, sc):
        """``(p, q), r = (e1, e2), e3``."""
        shapes = [self.pick(SHAPES) for _ in range(3)]
        exprs = [self.rhs(sc, s) for s in shapes]
        names = []
        for s in shapes:
            n = self.target(sc, s)
            while n in names:
                n = self.name_for("scalar" if s == () else "arr", s)
            names.append(n)
        for n, s, e in zip(names, shapes, exprs):
            self.bind(sc, n, self.value_var(e, s))
        self.tags.add("nested-unpack")
        if self.chance(0.5):
            return [f"({names[0]}, {names[1]}), {names[2]} = ({exprs[0].text}, {exprs[1].text}), "
                    f"{exprs[2].text}"]
        return [f"{names[0]}, ({names[1]}, {names[2]}) = {exprs[0].text}, ({exprs[1].text}, "
                f"{exprs[2].text})"]

    def st_concat(self, sc):
        """Tuples and lists glued with ``+`` and fed to hstack/concatenate/stack."""
        r = self.r
        lines = []
        c = r.random()
        if c < 0.4:   # np.stack of three (4,) values -> (3, 4)
            parts = [self.rhs(sc, (4,), 1) for _ in range(3)]
            tup = self.fresh("parts")
            lines.append(f"{tup} = ({parts[0].text},) + ({parts[1].text},)")
            name = self.target(sc, (3, 4))
            if r.random() < 0.5:
                lines.append(f"{name} = np.stack({tup} + ({parts[2].text},))")
            else:
                lines.append(f"{name} = np.stack(list({tup}) + [{parts[2].text}])")
                self.tags.add("list-concat")
            self.bind(sc, name, Var("arr", (3, 4), frozenset({self.newbuf()})))
            self.tags.add("tuple-concat")
        elif c < 0.75:   # hstack(args + (np.ones(3),)), sliced back to (4,)
            p, q = self.rhs(sc, (4,), 1), self.rhs(sc, (3,), 1)
            tup = self.fresh("args")
            lines.append(f"{tup} = ({p.text}, {q.text})" if r.random() < 0.5 else
                         f"{tup} = ({p.text},) + ({q.text},)")
            big = self.fresh("flat")
            fn = r.choice(("np.hstack", "np.concatenate"))
            lines.append(f"{big} = {fn}({tup} + (np.ones(3),))")
            name = self.target(sc, (4,))
            lines.append(f"{name} = {big}[{r.randrange(7)}:][:4]" if r.random() < 0.5 else
                         f"{name} = {big}[{r.randrange(6)}:{big}.size][:4]")
            self.bind(sc, name, Var("arr", (4,), frozenset({self.newbuf()})))
            self.tags.add("tuple-concat")
        else:   # list concatenation [p] + [q]
            p, q = self.rhs(sc, (4,), 1), self.rhs(sc, (4,), 1)
            name = self.target(sc, (4,))
            lines.append(f"{name} = np.concatenate([{p.text}] + [{q.text}])[{r.randrange(5)}:][:4]")
            self.bind(sc, name, Var("arr", (4,), frozenset({self.newbuf()})))
            self.tags.add("list-concat")
        return lines

    def st_list(self, sc):
        """A list of values: literal, ``[p] + [q]`` or ``ys = ys + [e]``."""
        shape = self.pick(SHAPES)
        lists = [n for n in self.vars_of(sc, "list") if n not in sc.iterating]
        if lists and self.chance(0.3):
            n = self.pick(lists)
            e = self.rhs(sc, sc.env[n].shape, 1)
            v = sc.env[n]
            self.tags.add("list-concat")
            self.bind(sc, n, replace(v, bufs=v.bufs | (e.bufs or frozenset()),
                                     length=self._grown(sc, v)))
            return [f"{n} = {n} + [{e.text}]"]
        count = self.r.choice((2, 2, 3, 4))
        exprs = [self.rhs(sc, shape, 1) for _ in range(count)]
        name = self.name_for("list", shape)
        bufs = frozenset().union(*[e.bufs or frozenset({self.newbuf()}) for e in exprs])
        self.bind(sc, name, Var("list", shape, bufs, length=count))
        if count == 2 and self.chance(0.4):
            self.tags.add("list-concat")
            return [f"{name} = [{exprs[0].text}] + [{exprs[1].text}]"]
        return [f"{name} = [{', '.join(e.text for e in exprs)}]"]

    def st_append(self, sc):
        """``ys.append(y)`` (a name, sometimes rebound later) or an expression."""
        lists = [n for n in self.vars_of(sc, "list") if n not in sc.iterating]
        if not lists:
            shape = self.pick(SHAPES)
            names = self.values(sc, shape)
            if not names:
                return self.st_list(sc)
            y = self.pick(names)
            ys = self.name_for("list", shape)
            self.bind(sc, ys, Var("list", shape, sc.env[y].bufs or frozenset({self.newbuf()}),
                                  length=1))
            sc.env[y] = replace(sc.env[y], appended=True)
            return [f"{ys} = [{y}]"]
        ys = self.pick(lists)
        shape = sc.env[ys].shape
        names = [n for n in self.values(sc, shape) if n not in sc.iterating]
        self.tags.add("list-append")
        if names and self.chance(0.7):
            y = self.pick(names)
            lines = []
            if self.chance(0.5):     # rebind it first, then append: ys = [y]; y = ...; ys.append(y)
                e = self.rhs(sc, shape)
                self.bind(sc, y, self.value_var(e, shape))
                lines.append(f"{y} = {e.text}")
            v = sc.env[y]
            sc.env[ys] = replace(sc.env[ys], bufs=sc.env[ys].bufs | (v.bufs or frozenset()),
                                 length=self._grown(sc, sc.env[ys]))
            sc.env[y] = replace(v, appended=True)
            return lines + [f"{ys}.append({y})"]
        e = self.rhs(sc, shape, 1)
        sc.env[ys] = replace(sc.env[ys], bufs=sc.env[ys].bufs | (e.bufs or frozenset()),
                             length=self._grown(sc, sc.env[ys]))
        return [f"{ys}.append({e.text})"]

    @staticmethod
    def _grown(sc, v):
        """The length of list ``v`` after one more element (unknown in a block)."""
        return v.length + 1 if v.length is not None and sc.depth == 0 else None

    def st_view(self, sc):
        """A view of a local array, read before and after an in-place update of
        its base; or a view kept as a name."""
        r = self.r
        bases = [n for n in self.values(sc, (3, 4)) + self.values(sc, (4,))
                 if sc.env[n].kind == "arr" and n not in sc.iterating]
        self.tags.add("view")
        if not bases:
            return self.st_assign(sc)
        base = self.pick(bases)
        bv = sc.env[base]
        if bv.shape == (3, 4):
            view = r.choice(("[1:]", ".T", ".reshape(12)", ".reshape(4, 3)", "[:, ::2]", "[2]"))
        else:
            view = r.choice(("[1:]", "[::-1]", ".reshape(2, 2)", "[:, None]"))
        w = self.fresh("view")
        t1, t2 = self.name_for("scalar", ()), self.name_for("scalar", ())
        form, bound = r.choice(((" ** 2", CAP * CAP), ("", CAP), (" * 0.5", CAP / 2)))
        lines = [f"{w} = {base}{view}",
                 f"{t1} = np.{r.choice(('mean', 'max'))}({w}{form})"]
        if sc.inplace and not (bv.bufs & sc.protected):
            inc = self.small(sc, bv.shape)
            lines += [f"{base} *= 0.5", f"{base} += {inc.text}"]
            self.tags.add("view-update")
            self.tags.add("aug-array-inplace")
        else:
            e = self.rhs(sc, bv.shape)
            lines.append(f"{base} = {e.text}")
            self.bind(sc, base, self.value_var(e, bv.shape))
        t2e = self.fit(Ex(f"np.mean({w}) - {t1}", CAP + bound, atom=False))
        lines.append(f"{t2} = {t2e.text}")
        self.bind(sc, t2, Var("scalar", (), frozenset()))
        if bound > CAP:
            lines.append(f"{t1} = np.tanh({t1})")
        self.bind(sc, t1, Var("scalar", (), frozenset()))
        return lines

    def st_call(self, sc):
        """A call of a helper defined earlier: one result, a tuple, or nested."""
        h = self.pick(self.helpers)
        args, arg_bufs = [], {}
        for pname, shape in h.params:
            e = self.rhs(sc, shape, 1)
            args.append(e.text)
            arg_bufs[f"P:{h.name}:{pname}"] = e.bufs if e.bufs is not None else frozenset(
                {self.newbuf()})
        mapping = {}

        def caller_bufs(bufs):
            out = set()
            for b in bufs:
                if b in arg_bufs:
                    out |= arg_bufs[b]
                else:
                    mapping.setdefault(b, self.newbuf())
                    out.add(mapping[b])
            return frozenset(out)

        call = f"{h.name}({', '.join(args)})"
        self.tags.add("helper-call")
        if sc.loops:
            self.tags.add("helper-in-loop")
        if sc.fn != "f":
            self.tags.add("helper-calls-helper")
        outs = []
        for shape, bufs in zip(h.returns, h.ret_bufs):
            kind = "scalar" if shape == () else "arr"
            b = caller_bufs(bufs)
            outs.append((shape, Var(kind, shape, b)))
        extra = self.rhs(sc, (), 1)   # read before the call's targets are bound
        names = []
        for shape, var in outs:
            n = self.target(sc, shape)
            while n in names:
                n = self.name_for(var.kind, shape)
            names.append(n)
        if len(outs) == 1:
            self.bind(sc, names[0], outs[0][1])
            return [f"{names[0]} = {call}"]
        self.tags.add("helper-tuple")
        for n, (shape, var) in zip(names, outs):
            self.bind(sc, n, var)
        if self.chance(0.25):   # keep the tuple, index it
            tup = self.fresh("res")
            return [f"{tup} = {call}"] + [f"{n} = {tup}[{i}]" for i, n in enumerate(names)]
        if self.chance(0.3):    # nested unpacking around the call
            t = self.name_for("scalar", ())
            self.bind(sc, t, self.value_var(extra, ()))
            self.tags.add("nested-unpack")
            return [f"({', '.join(names)}), {t} = {call}, {extra.text}"]
        return [f"{', '.join(names)} = {call}"]

    def st_return(self, sc):
        """An early return guarded by a data condition."""
        exprs = [self.rhs(sc, shape) for shape in sc.returns]
        self.tags.add("early-return")
        if sc.loops:
            self.tags.add("early-return-in-loop")
        return [f"if {self.cond(sc)}:",
                f"    return {', '.join(e.text for e in exprs)}"]

    # -- blocks ------------------------------------------------------------------------
    def loop_body(self, sc, extra_env, count, **kw):
        """Generate a loop body until the buffer analysis is stable: a name updated
        in place must not hold an argument's buffer on a later iteration."""
        entry = dict(sc.env)
        entry.update(extra_env)
        tags, n = set(self.tags), self.n
        for attempt in range(5):
            inner = sc.child(entry, depth=sc.depth + 1, loops=sc.loops + 1,
                             inplace=sc.inplace and attempt < 4, **kw)
            lines = self.block(inner, count)
            widened, changed = dict(entry), False
            for name, v in inner.env.items():
                if name in entry and entry[name].kind == v.kind:
                    new = (v.bufs | entry[name].bufs)
                    if (v.bufs & sc.protected) - entry[name].bufs:
                        widened[name] = replace(entry[name], bufs=new)
                        changed = True
            if not changed or attempt == 4:
                return lines, inner, entry
            entry = widened
            self.tags = set(tags)
        raise AssertionError("unreachable")

    def after_loop(self, sc, inner, entry, runs_once, drop=()):
        """The environment after a loop: names the body bound survive when the body
        runs at least once; buffers of names bound before are merged (with those
        the fixed point of :meth:`loop_body` assumed on entry)."""
        out = {}
        for name, v in inner.env.items():
            if name in drop:
                continue
            if name in sc.env:
                old = entry.get(name, sc.env[name])
                if old.kind == v.kind and old.shape == v.shape:
                    out[name] = replace(v, bufs=v.bufs | old.bufs, py=v.py and old.py,
                                        appended=v.appended or old.appended,
                                        length=v.length if v.length == old.length else None)
            elif runs_once:
                out[name] = v
        sc.env.clear()
        sc.env.update(out)

    def st_for(self, sc):
        n = self.r.choice((1, 2, 3, 3, 4))
        k = self.name_for("int", ())
        self.tags.add("for-range")
        if sc.loops:
            self.tags.add("nested-loop")
        body, inner, entry = self.loop_body(sc, {k: Var("int", ())}, self.r.randint(1, 3))
        self.after_loop(sc, inner, entry, runs_once=True)
        return [f"for {k} in range({n}):"] + ["    " + l for l in body]

    def st_forlist(self, sc):
        lists = [n for n in self.vars_of(sc, "list")]
        if not lists:
            lines = self.st_list(sc)
            lists = [n for n in self.vars_of(sc, "list")]
        else:
            lines = []
        ps = self.pick(lists)
        pv = sc.env[ps]
        kind = "scalar" if pv.shape == () else "arr"
        w = self.fresh("w" if kind == "arr" else "a")
        sl = self.r.choice(("", "", "[1:-1]", "[1:]", "[:-1]", "[::-1]"))
        self.tags.add("loop-list")
        if sl == "[1:-1]":
            self.tags.add("loop-list-slice")
            if pv.length == 2:
                self.tags.add("loop-empty-slice")
        elif sl:
            self.tags.add("loop-list-slice")
        if sc.loops:
            self.tags.add("nested-loop")
        # appending to the list a loop runs over never ends; to a slice of it, inside
        # another loop, grows it exponentially (nested loops over ps[:-1], each
        # appending to ps): only an outermost loop over a slice may append
        iterating = sc.iterating | ({ps} if not sl or sc.loops else set())
        source = f"{ps}{sl}"
        if not sl and self.chance(0.4):
            source = self._iterable(sc, ps)
        body, inner, entry = self.loop_body(sc, {w: Var(kind, pv.shape, pv.bufs)}, self.r.randint(1, 3),
                                     iterating=frozenset(iterating))
        self.after_loop(sc, inner, entry, runs_once=False, drop={w})
        return lines + [f"for {w} in {source}:"] + ["    " + l for l in body]

    def _iterable(self, sc, ps):
        """The elements of list ``ps`` through a builtin taking a function:
        ``filter(lambda v: ..., ps)`` (a data-dependent count, maybe none),
        ``sorted(ps, key=lambda v: ...)``, or ``reversed(ps)``."""
        v = self.fresh("v")
        how = self.r.choice(("filter", "sorted", "reversed"))
        self.tags.add({"filter": "filter", "sorted": "sorted-key", "reversed": "reversed"}[how])
        if how == "reversed":
            return f"reversed({ps})"
        self.tags.add("lambda")
        scalars = self.values(sc, ())
        if how == "filter":
            bound = self.pick(scalars) if scalars and self.chance(0.4) else \
                repr(self.r.choice((0.0, 0.1, -0.2)))
            return f"filter(lambda {v}: np.sum({v}) {self.r.choice(('>', '<'))} {bound}, {ps})"
        order = ", reverse=True" if self.chance(0.3) else ""
        return f"sorted({ps}, key=lambda {v}: np.sum({v}){order})"

    def _lambda(self, sc, shape):
        """``(text, v, vbuf, body)``: a lambda of one parameter of ``shape`` whose body
        may read the parameter and, by closure, any name in scope."""
        v = self.fresh("v")
        vbuf = self.newbuf()
        kind = "scalar" if shape == () else "arr"
        inner = sc.child(env={**sc.env, v: Var(kind, shape, frozenset({vbuf}))})
        out = self.pick((shape, shape, self.pick(SHAPES)))
        body = self.rhs(inner, out, 2)
        if v not in body.text and self.chance(0.8):
            # mostly a function of its parameter: v scales the body
            body = self.fit(Ex(f"{_p(body)} * np.tanh({v})" if out == shape or shape == ()
                               else f"{_p(body)} * np.tanh(np.sum({v}))", body.bound,
                               atom=False))
        self.tags.add("lambda")
        return f"lambda {v}: {body.text}", vbuf, out, body

    @staticmethod
    def _applied(body, vbuf, arg_bufs):
        """The buffers a lambda's result shares: those of its body, the parameter's
        replaced by the argument's (None: a fresh value)."""
        if body.bufs is None:
            return None
        out = body.bufs - {vbuf}
        return out | arg_bufs if vbuf in body.bufs else out

    def st_lambda(self, sc):
        """``fn = lambda v: ...`` bound to a name, then called once or twice."""
        shape = self.pick(SHAPES)
        text, vbuf, out, body = self._lambda(sc, shape)
        fn = self.fresh("fn")
        lines = [f"{fn} = {text}"]
        for _ in range(self.r.choice((1, 1, 2))):
            arg = self.rhs(sc, shape, 1)
            bufs = self._applied(body, vbuf, arg.bufs if arg.bufs is not None
                                 else frozenset({self.newbuf()}))
            name = self.target(sc, out)
            self.bind(sc, name, self.value_var(Ex(name, CAP, bufs=bufs), out))
            call = f"{fn}({arg.text})"
            if self.chance(0.3):
                # the function handed to a helper that calls it (specialised on it)
                self.tags.add("function-argument")
                self.apply_helper = True
                call = f"apply_to({fn}, {arg.text})"
            lines.append(f"{name} = {call}")
        return lines

    def st_reduce(self, sc):
        """``functools.reduce(lambda acc, v: ..., ps, init)``: a fold over a list."""
        lists = self.vars_of(sc, "list")
        if not lists:
            return self.st_list(sc)
        ps = self.pick(lists)
        shape = sc.env[ps].shape
        acc, v = self.fresh("acc"), self.fresh("v")
        kind = "scalar" if shape == () else "arr"
        inner = sc.child(env={**sc.env, v: Var(kind, shape, frozenset({self.newbuf()}))})
        step = self.small(inner, shape)
        self.tags.add("reduce")
        self.tags.add("lambda")
        init = self.rhs(sc, shape, 1)
        name = self.target(sc, shape)
        self.bind(sc, name, self.value_var(Ex(name, CAP), shape))
        # |acc| stays within CAP: halved, plus a step of at most CAP / 2
        return [f"{name} = functools.reduce(lambda {acc}, {v}: 0.5 * {acc} + {_p(step)} * "
                f"np.tanh({v}), {ps}, {init.text})"]

    def st_map(self, sc):
        """A new list from a list: ``list(map(lambda v: ..., ps))`` or ``[... for v in ps]``."""
        lists = self.vars_of(sc, "list")
        if not lists:
            return self.st_list(sc)
        ps = self.pick(lists)
        pv = sc.env[ps]
        text, vbuf, out, body = self._lambda(sc, pv.shape)
        bufs = self._applied(body, vbuf, pv.bufs)
        name = self.name_for("list", out)
        self.bind(sc, name, Var("list", out, bufs if bufs is not None
                                else frozenset({self.newbuf()}), length=pv.length))
        if self.chance(0.5):
            self.tags.add("lambda-map")
            return [f"{name} = list(map({text}, {ps}))"]
        self.tags.add("comprehension")
        v, expr = text[len("lambda "):].split(": ", 1)
        return [f"{name} = [{expr} for {v} in {ps}]"]

    def st_zip(self, sc):
        """``for i, (a, b) in enumerate(zip(ps, qs))``."""
        lines = []
        lists = self.vars_of(sc, "list")
        while len(lists) < 2:
            lines += self.st_list(sc)
            lists = self.vars_of(sc, "list")
        ps, qs = self.r.sample(lists, 2)
        i, a, b = self.name_for("int", ()), self.fresh("a"), self.fresh("b")
        env = {i: Var("int", ())}
        for n, lst in ((a, ps), (b, qs)):
            lv = sc.env[lst]
            env[n] = Var("scalar" if lv.shape == () else "arr", lv.shape, lv.bufs)
        self.tags.add("enumerate-zip")
        self.tags.add("nested-unpack")
        if sc.loops:
            self.tags.add("nested-loop")
        body, inner, entry = self.loop_body(sc, env, self.r.randint(1, 3),
                                     iterating=sc.iterating | {ps, qs})
        self.after_loop(sc, inner, entry, runs_once=False, drop={i, a, b})
        return lines + [f"for {i}, ({a}, {b}) in enumerate(zip({ps}, {qs})):"] + \
            ["    " + l for l in body]

    def st_while(self, sc):
        it = self.name_for("int", ())
        cap = self.r.choice((2, 3, 4))
        self.tags.add("while")
        self.tags.add("aug-int")
        if sc.loops:
            self.tags.add("nested-loop")
        sc.env[it] = Var("int", ())
        head = self.cond(sc)
        body, inner, entry = self.loop_body(sc, {}, self.r.randint(1, 3))
        self.after_loop(sc, inner, entry, runs_once=False)
        return [f"{it} = 0", f"while ({head}) and {it} < {cap}:"] + \
            ["    " + l for l in body] + [f"    {it} += 1"]

    def st_dict(self, sc):
        """A dict of mixed types carried through a loop: ``st['h']``, ``st['k']``."""
        shape = self.pick(ARRAY_SHAPES + ((),))
        init = self.rhs(sc, shape, 1)
        d = self.fresh("state")
        hk, kk = f"{d}['h']", f"{d}['k']"
        self.tags.add("dict-state")
        self.tags.add("aug-int")
        self.tags.add("for-range")
        if sc.loops:
            self.tags.add("nested-loop")
        hv = self.value_var(init, shape)
        lines = [f"{d} = {{'h': {init.text}, 'k': 0}}"]
        sc.env[hk] = hv
        sc.env[kk] = Var("int", ())
        j = self.name_for("int", ())
        n = self.r.choice((1, 2, 3))
        body, inner, entry = self.loop_body(sc, {j: Var("int", ())}, self.r.randint(0, 2))
        upd = self.fit(Ex(f"0.5 * {hk} + {_p(self.small(inner, shape))}", CAP + 1, atom=False))
        self.after_loop(sc, inner, entry, runs_once=True)
        sc.env[hk] = self.value_var(upd, shape)
        body = [l for l in body if l != "pass"] + [f"{hk} = {upd.text}", f"{kk} += 1"]
        return lines + [f"for {j} in range({n}):"] + ["    " + l for l in body]

    def st_if(self, sc):
        cond = self.cond(sc)
        self.tags.add("if-data")
        then = sc.child(depth=sc.depth + 1)
        a = self.block(then, self.r.randint(1, 3))
        lines = [f"if {cond}:"] + ["    " + l for l in a]
        other = sc.child(depth=sc.depth + 1)
        if self.chance(0.6):
            self.tags.add("if-else")
            b = self.block(other, self.r.randint(1, 3))
            lines += ["else:"] + ["    " + l for l in b]
        out = {}
        for name in [n for n in then.env if n in other.env]:  # not a set: its order varies
            v, w = then.env[name], other.env[name]
            if v.kind == w.kind and v.shape == w.shape:
                out[name] = replace(v, bufs=v.bufs | w.bufs, py=v.py and w.py,
                                    appended=v.appended or w.appended,
                                    length=v.length if v.length == w.length else None)
        sc.env.clear()
        sc.env.update(out)
        return lines

    # -- functions -----------------------------------------------------------------------
    def helper(self, index) -> list:
        name = f"helper{index}"
        nparams = self.r.choice((1, 2, 2, 3))
        params = tuple((p, self.pick(SHAPES)) for p in ("a", "b", "c")[:nparams])
        nret = self.r.choice((1, 2, 2, 3))
        returns = tuple(self.pick(SHAPES) for _ in range(nret))
        env = {p: Var("scalar" if s == () else "arr", s, frozenset({f"P:{name}:{p}"}))
               for p, s in params}
        protected = frozenset(f"P:{name}:{p}" for p, _ in params)
        sc = Scope(env=env, protected=protected, returns=returns, fn=name)
        body = self.block(sc, self.r.randint(1, 3))
        body = [l for l in body if l != "pass"]
        exprs = [self.rhs(sc, s) for s in returns]
        rets = [e.bufs if e.bufs is not None else frozenset() for e in exprs]
        # an early return may hand back other buffers: be conservative, the caller
        # treats every returned array as possibly aliasing any parameter
        if any("return" in l for l in body):
            rets = [r | protected for r in rets]
        self.helpers.append(Helper(name, params, returns, rets))
        return [f"def {name}({', '.join(p for p, _ in params)}):"] + \
            ["    " + l for l in body] + [f"    return {', '.join(e.text for e in exprs)}"]

    def program(self) -> Program:
        lines = ["import functools", "", "import numpy as np", ""]
        for i in range(self.r.choice((0, 1, 1, 2))):
            lines += ["", *self.helper(i + 1), ""]
        env = {n: Var("scalar" if s == () else "arr", s, frozenset({n}) if
                      (s != () or self.scalar_kind == "0d") else frozenset(),
                      py=(s == () and self.scalar_kind == "float"))
               for n, s in ARG_SHAPES.items()}
        sc = Scope(env=env, protected=frozenset(ARG_SHAPES), returns=((),), fn="f")
        body = self.block(sc, self.r.randint(2, 6))
        final = self.rhs(sc, ())
        if self.scalar_kind == "0d":
            self.tags.add("scalar-0d")
        if self.apply_helper:
            lines += ["", "def apply_to(fn, v):", "    return fn(v)", ""]
        lines += ["", "def f(x, y, s):"] + ["    " + l for l in body if l != "pass"] + \
            [f"    return {final.text}", ""]
        return Program(self.seed, "\n".join(lines), frozenset(self.tags), self.scalar_kind)


def generate(seed: int) -> Program:
    """The program of ``seed`` (deterministic)."""
    return Generator(seed).program()


def make_inputs(seed: int, scalar_kind: str):
    """``(x, y, s)`` uniform in [-1.5, 1.5]; ``s`` a float or a 0-d array."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1.5, 1.5, (3, 4))
    y = rng.uniform(-1.5, 1.5, (4,))
    s = float(rng.uniform(-1.5, 1.5))
    return x, y, (np.array(s) if scalar_kind == "0d" else s)


# --- loading ---------------------------------------------------------------------------

def load(source: str, directory):
    """Write ``source`` to a real file and import it (srcgrad reads source via
    ``inspect``, which needs the file and the module in ``sys.modules``)."""
    return load_program(source, directory)


class _NoInPlace(ast.NodeTransformer):
    """``a += b`` -> ``a = a + b``: autograd cannot update a plain ndarray in place
    with a traced value.  Where the update was seen through an alias the twin
    computes another function; :func:`_autograd` notices (the values differ)."""

    def visit_AugAssign(self, node):
        load = ast.fix_missing_locations(_as_load(node.target))
        new = ast.Assign(targets=[node.target], value=ast.BinOp(load, node.op, node.value))
        return ast.copy_location(new, node)


def _as_load(target):
    target = ast.parse(ast.unparse(target), mode="eval").body
    return target


def load_autograd(source: str, path: str):
    """The program's ``f`` with ``np`` bound to ``autograd.numpy`` and augmented
    assignments rewritten as plain ones."""
    import autograd.numpy as anp
    namespace = {"__name__": "autograd_twin"}
    tree = ast.fix_missing_locations(_NoInPlace().visit(ast.parse(source)))
    code = compile(tree, path, "exec")
    exec(code, namespace)
    for k, v in list(namespace.items()):
        if callable(v) and hasattr(v, "__globals__"):
            v.__globals__["np"] = _AutogradNumpy(anp)
    return namespace["f"]


class _AutogradNumpy:
    """``autograd.numpy`` with ``where`` fixed: autograd does not sum the cotangent
    of a broadcast operand of ``np.where`` back to its shape, and a cotangent of
    the wrong shape, added to the other cotangents of that value, broadcasts them
    too (``np.sum(np.where(c, s, y)) + s``: the 1 from ``+ s`` is counted once per
    element of ``y``) -- summing the gradient afterwards cannot undo that."""

    def __init__(self, anp):
        self._anp = anp

    def __getattr__(self, name):
        return getattr(self._anp, name)

    def where(self, cond, a, b):
        shape = np.broadcast_shapes(np.shape(cond), np.shape(a), np.shape(b))
        zeros = np.zeros(shape)  # a + zeros: autograd's + sums its cotangent back
        return self._anp.where(cond, a + zeros, b + zeros)


# --- checks ----------------------------------------------------------------------------

EPS = 1e-6
FD_RTOL, FD_ATOL = 1e-4, 1e-6

#: "rejected-shared": refused with an AliasedUpdateError that srcgrad raised after
#: seeing, as the code ran, that another name shares the updated memory (a real
#: alias NumPy makes visible, which srcgrad declines); "rejected": any other refusal.
OUTCOMES = ("ok", "wrong-gradient", "value-mismatch", "crash", "rejected", "rejected-shared",
            "modified-input", "generator-bug")
FAILURES = ("wrong-gradient", "value-mismatch", "crash", "modified-input", "generator-bug")


@dataclass
class Outcome:
    kind: str                       # one of OUTCOMES
    detail: str = ""                # a message: what went wrong
    key: str = ""                   # groups failures of one class (exception type, policy...)
    oracle: str = "compared"        # autograd: "compared", or why it was skipped
    program: Program | None = None


def _copy(a):
    return a.copy() if isinstance(a, np.ndarray) else a


def _same(a, b):
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return type(a) is type(b) and a.shape == b.shape and np.array_equal(a, b)
    return type(a) is type(b) and a == b



class _Fail(Exception):
    def __init__(self, kind, detail, key):
        super().__init__(detail)
        self.kind, self.detail, self.key = kind, detail, _generic(key)


def _generic(key: str) -> str:
    """``key`` with the generator's names (``'ys19'``, ``'y_1'``) and paths replaced,
    so that failures of one class group together."""
    key = re.sub(r"'[A-Za-z]+\d*(_\d+)?'", lambda m: "'N'" if re.search(r"\d", m.group())
                 else m.group(), key)
    key = re.sub(r"\b[a-z]+\d*_\d+\b|\b[a-z]+\d+\b", "N", key)
    return re.sub(r"/\S+\.py", "FILE", key).split(";")[0]


def _tail(exc: BaseException, frames=3) -> str:
    tb = traceback.format_exception(type(exc), exc, exc.__traceback__)
    return "".join(tb[-frames - 1:]).rstrip()


#: A program whose own run takes longer is a generator bug (a loop over a list
#: that its body appends to, nested, grows exponentially: seed 1005009).
F_SECONDS = 5


@contextlib.contextmanager
def _time_limit(seconds):
    """Raise TimeoutError in the block after ``seconds`` (Unix, main thread; else no
    limit)."""
    if not hasattr(signal, "setitimer") or threading.current_thread() is not \
            threading.main_thread():
        yield
        return

    def expired(signum, frame):
        raise TimeoutError(f"f ran longer than {seconds} s")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


#: What the checked gradients run on (``--backend``).
BACKEND = "numpy"


def check_program(program: Program, directory, autograd_oracle=True) -> Outcome:
    """Run every check on ``program`` (inputs from its seed); never raises."""
    try:
        return _check(program, Path(directory), autograd_oracle)
    except _Fail as f:
        return Outcome(f.kind, f.detail, f.key, program=program)


def _check(program, directory, autograd_oracle):
    import srcgrad
    args = make_inputs(program.seed, program.scalar_kind)
    originals = [_copy(a) for a in args]
    try:
        module = load(program.source, directory)
        with np.errstate(all="raise", under="ignore"), _time_limit(F_SECONDS):
            value = module.f(*args)
    except Exception as exc:
        raise _Fail("generator-bug", f"f itself raised: {_tail(exc)}", type(exc).__name__)
    path = module.__file__
    try:
        if not all(_same(a, b) for a, b in zip(args, originals)):
            raise _Fail("generator-bug", "f modifies its arguments", "f-mutates")
        try:
            finite = np.shape(value) == () and bool(np.isfinite(value))
        except TypeError:
            finite = False
        if not finite:
            raise _Fail("generator-bug", f"f returned {value!r}", "not-finite")

        grads = {}
        for policy in POLICIES:
            try:
                vg = srcgrad.value_and_grad(module.f, wrt=WRT, policy=policy,
                                            backend=BACKEND)
                out = vg(*args)
            except srcgrad.SrcGradError as exc:
                where = Path(str(exc.filename)).name if exc.filename else None
                if exc.lineno is None or where != Path(path).name:
                    raise _Fail("crash", f"policy {policy!r}: {type(exc).__name__} without the "
                                f"program's file/line (filename={exc.filename!r}, "
                                f"lineno={exc.lineno!r}): {exc}",
                                f"unlocated {type(exc).__name__}")
                kind = "rejected-shared" if getattr(exc, "verified", False) else "rejected"
                raise _Fail(kind, f"policy {policy!r}: {type(exc).__name__}: {exc}",
                            f"{type(exc).__name__}: {str(exc).splitlines()[0][:90]}")
            except _Fail:
                raise
            except Exception as exc:
                raise _Fail("crash", f"policy {policy!r}: {_tail(exc)}",
                            f"{type(exc).__name__}: {str(exc).splitlines()[0][:90] if str(exc) else ''}")
            if not all(_same(a, b) for a, b in zip(args, originals)):
                raise _Fail("modified-input", f"policy {policy!r} modified an argument",
                            "modified-input")
            got, g = out
            if not (type(got) is type(value) and np.shape(got) == np.shape(value)
                    and np.array_equal(got, value)):
                kind = "type" if type(got) is not type(value) else "value"
                raise _Fail("value-mismatch",
                            f"policy {policy!r}: value {got!r} ({type(got).__name__}), "
                            f"f gives {value!r} ({type(value).__name__})\n--- generated ---\n"
                            f"{getattr(vg, 'source', '?')}", f"{kind} ({policy!r})")
            if not (isinstance(g, tuple) and len(g) == 3 and all(
                    np.shape(gi) == np.shape(a) for gi, a in zip(g, args))):
                raise _Fail("wrong-gradient", f"policy {policy!r}: gradient shapes "
                            f"{[np.shape(gi) for gi in g] if isinstance(g, tuple) else g!r}",
                            "gradient shape")
            grads[policy] = g
        base = grads["save"]
        for policy, g in grads.items():
            for i, (a, b) in enumerate(zip(base, g)):
                if not np.allclose(a, b, rtol=1e-10, atol=1e-12):
                    raise _Fail("wrong-gradient", f"policy {policy!r} gives another gradient of "
                                f"{'xys'[i]} than 'save':\n{b!r}\n{a!r}",
                                f"policies disagree ({policy!r})")

        # finite differences, skipping kinks (one-sided differences disagree)
        for i, a in enumerate(args):
            shape = np.shape(a)
            analytic = np.asarray(base[i], dtype=float)
            for idx in np.ndindex(shape):
                with np.errstate(all="ignore"):
                    plus = module.f(*perturbed(args, i, idx, EPS))
                    minus = module.f(*perturbed(args, i, idx, -EPS))
                central = (plus - minus) / (2 * EPS)
                gap = abs((plus - value) - (value - minus)) / EPS
                tol = FD_ATOL + FD_RTOL * max(abs(central), 1.0)
                if gap > tol:
                    continue
                if not abs(analytic[idx] - central) <= tol:
                    raise _Fail("wrong-gradient", f"d f / d {'xys'[i]}{list(idx)}: srcgrad "
                                f"{analytic[idx]!r}, finite differences {central!r}\n"
                                f"srcgrad gradient of {'xys'[i]}: {analytic!r}",
                                "finite differences")
        oracle = "off"
        if autograd_oracle:
            oracle = _autograd(program, path, args, value, base)
        return Outcome("ok", oracle=oracle, program=program)
    finally:
        sys.modules.pop(module.__name__, None)


def _autograd(program, path, args, value, grads):
    import autograd
    try:
        fa = load_autograd(program.source, path)
    except Exception as exc:   # pragma: no cover - the source imports under numpy
        return f"skipped: {type(exc).__name__}"
    for i in range(3):
        try:
            with np.errstate(all="ignore"):
                v, g = autograd.value_and_grad(fa, i)(*[_copy(a) for a in args])
        except Exception as exc:
            return f"skipped: autograd raised {type(exc).__name__}"
        if not np.allclose(v, value, rtol=1e-12, atol=0):
            return "skipped: autograd computes another function (in-place semantics)"
        if not np.allclose(grads[i], g, rtol=1e-8, atol=1e-10):
            raise _Fail("wrong-gradient", f"gradient of {'xys'[i]}: srcgrad\n{grads[i]!r}\n"
                        f"autograd\n{np.asarray(g)!r}", "autograd disagrees")
    return "compared"


# --- shrinking -------------------------------------------------------------------------

def _blocks(lines):
    """(start, end) of every line with the lines indented under it."""
    out = []
    for i, line in enumerate(lines):
        indent = len(line) - len(line.lstrip())
        j = i + 1
        while j < len(lines) and (not lines[j].strip() or
                                  len(lines[j]) - len(lines[j].lstrip()) > indent):
            j += 1
        out.append((i, j))
    return out


def shrink(program: Program, directory, budget=400) -> tuple[Program, Outcome]:
    """A smaller program with the same failure class (outcome kind and key): delete
    statements and blocks, or replace a block header by its dedented body, while the
    failure stays the same.  Greedy, deterministic, at most ``budget`` checks."""
    target = check_program(program, directory, False)
    if target.kind == "ok":
        return program, target
    want = (target.kind, target.key)
    best, tries = program, 0
    changed = True
    while changed and tries < budget:
        changed = False
        lines = best.source.splitlines()
        for start, end in reversed(_blocks(lines)):
            head = lines[start].strip()
            if not head or head.startswith(("import", "def f(")):
                continue
            candidates = [lines[:start] + lines[end:]]
            if end - start > 1 and head.endswith(":"):
                indent = len(lines[start + 1]) - len(lines[start + 1].lstrip()) - \
                    (len(lines[start]) - len(lines[start].lstrip()))
                candidates.append(lines[:start] + [l[indent:] for l in lines[start + 1:end]] +
                                  lines[end:])
            for cand in candidates:
                tries += 1
                trial = replace(best, source="\n".join(cand) + "\n")
                got = check_program(trial, directory, False)
                if (got.kind, got.key) == want:
                    best, changed = trial, True
                    break
            if changed or tries >= budget:
                break
    return best, check_program(best, directory, False)


# --- running batches -------------------------------------------------------------------

@dataclass
class Summary:
    outcomes: list = field(default_factory=list)

    def add(self, o: Outcome):
        self.outcomes.append(o)

    @property
    def counts(self):
        return collections.Counter(o.kind for o in self.outcomes)

    def failures(self, kinds=FAILURES):
        return [o for o in self.outcomes if o.kind in kinds]

    def table(self) -> str:
        n = len(self.outcomes)
        lines = [f"{n} programs: " + ", ".join(f"{k} {self.counts.get(k, 0)}" for k in OUTCOMES)]
        oracle = collections.Counter(o.oracle for o in self.outcomes if o.kind == "ok")
        lines.append("autograd oracle on ok programs: " +
                     ", ".join(f"{k} {v}" for k, v in oracle.most_common()))
        lines.append("")
        lines.append(f"{'construct':28s} {'programs':>8s} " +
                     " ".join(f"{k[:9]:>9s}" for k in OUTCOMES[1:7]))
        for tag in CONSTRUCTS:
            having = [o for o in self.outcomes if tag in o.program.tags]
            c = collections.Counter(o.kind for o in having)
            lines.append(f"{tag:28s} {len(having):8d} " +
                         " ".join(f"{c.get(k, 0):9d}" for k in OUTCOMES[1:7]))
        lines.append("")
        lines.append("failure classes (outcome | key): count, first seed")
        groups = collections.OrderedDict()
        for o in self.outcomes:
            if o.kind != "ok":
                groups.setdefault((o.kind, o.key), []).append(o.program.seed)
        for (kind, key), seeds in sorted(groups.items(), key=lambda kv: -len(kv[1])):
            lines.append(f"  {kind:15s} | {key}: {len(seeds)}, seed {seeds[0]}")
        return "\n".join(lines)


def run_batch(seeds, directory, autograd_oracle=True, progress=None) -> Summary:
    summary = Summary()
    for i, seed in enumerate(seeds):
        summary.add(check_program(generate(seed), directory, autograd_oracle))
        if progress and (i + 1) % progress == 0:
            print(f"... {i + 1} programs", file=sys.stderr, flush=True)
    return summary


def main(argv=None):
    import warnings

    import srcgrad  # noqa: PLC0415 - imported where the programs are checked, as there
    # random programs often leave an argument unused: the warning is right, and noise here
    warnings.simplefilter("ignore", srcgrad.ZeroGradientWarning)
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--count", type=int, default=200)
    p.add_argument("--seed", type=int, default=0, help="first seed")
    p.add_argument("--show", type=int, metavar="SEED", help="print one program and its tags")
    p.add_argument("--failures", type=int, default=0, metavar="K",
                   help="print K programs (source + detail) of each failure class")
    p.add_argument("--no-autograd", action="store_true")
    p.add_argument("--backend", default="numpy",
                   help="the backend the gradients run on (numba: values must still be the "
                        "function's own, bit for bit)")
    p.add_argument("--shrink", action="store_true",
                   help="with --show: shrink the program while its failure stays the same")
    ns = p.parse_args(argv)
    global BACKEND
    BACKEND = ns.backend
    if ns.show is not None:
        prog = generate(ns.show)
        with tempfile.TemporaryDirectory() as d:
            os.environ.setdefault("SRCGRAD_CACHE_DIR", str(Path(d) / "cache"))
            if ns.shrink:
                prog, o = shrink(prog, d)
            else:
                o = check_program(prog, d, not ns.no_autograd)
            print(prog.source)
            print("# tags:", ", ".join(sorted(prog.tags)), "| s is", prog.scalar_kind,
                  f"| inputs: make_inputs({prog.seed}, {prog.scalar_kind!r})")
            print(f"# outcome: {o.kind} {o.key}\n{o.detail}")
        return 0
    with tempfile.TemporaryDirectory() as d:
        os.environ["SRCGRAD_CACHE_DIR"] = str(Path(d) / "cache")
        start = time.time()
        summary = run_batch(range(ns.seed, ns.seed + ns.count), d, not ns.no_autograd,
                            progress=500)
        print(summary.table())
        print(f"\n{time.time() - start:.1f} s")
        if ns.failures:
            seen = collections.Counter()
            for o in summary.outcomes:
                if o.kind == "ok" or seen[(o.kind, o.key)] >= ns.failures:
                    continue
                seen[(o.kind, o.key)] += 1
                print(f"\n=== seed {o.program.seed}: {o.kind} | {o.key}\n{o.program.source}\n"
                      f"--- {o.detail}")
    return 1 if summary.failures() else 0


if __name__ == "__main__":
    sys.exit(main())
