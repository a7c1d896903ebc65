"""The spec table: one entry per differentiable primitive and variant.

Each :class:`Spec` names a primitive (the key of its rule in
``srcgrad.rules.registry``), a Python expression ``expr`` that calls it in terms
of named arguments (``"x.sum(axis=1, keepdims=True)"``, ``"x[[0, 2, 0], 1:]"``),
and for each argument a generator of inputs inside the primitive's domain:
positive values for ``log``, ``|x| < 1`` for ``arcsin``, well-conditioned
matrices for ``inv``, distinct values for ``max`` (no ties), values away from
the kinks of ``abs`` and ``clip``.  Arguments made with :func:`fixed` (index
arrays, masks, shapes) are constants; the others are differentiable.

``call`` is the primitive's own call when ``expr`` wraps it
(``np.linalg.slogdet(x)[1]`` calls ``np.linalg.slogdet(x)``); the rule tests
evaluate ``call``, call the rule directly and compare with finite differences,
while ``expr`` is what the compiler tests compile end to end.  ``NONDIFF``
lists expressions of the primitives registered as non-differentiable.
:func:`resolve` reads an entry's expression back into the primitive it
applies and the argument values, and :func:`apply` calls it, for the tests
that call rules directly.

Inputs are drawn in float64 and cast to the dtype under test (floating inputs
only; integer and boolean constants stay as they are).  Entries of the
``math`` module use Python floats and run in float64 only.
"""

from __future__ import annotations

import ast
import collections
import copy
import math
import operator
import statistics
import zlib
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

import srcgrad
import srcgrad.runtime
from srcgrad.runtime import keys_of, sequence, snapshot

try:  # SciPy is optional: its entries are in the table when it is installed
    import scipy.linalg
    import scipy.signal
    import scipy.special
    import scipy.stats
except ImportError:  # pragma: no cover - the test extra installs SciPy
    scipy = None
SCIPY = scipy is not None

FLOATS = ("float64", "float32")


@dataclass(frozen=True)
class Input:
    draw: Callable[[np.random.Generator], object]
    diff: bool = True


@dataclass(frozen=True)
class Spec:
    id: str
    primitive: object
    expr: str
    inputs: dict = field(default_factory=dict)
    call: str | None = None
    dtypes: tuple = FLOATS

    @property
    def args(self) -> tuple[str, ...]:
        return tuple(self.inputs)

    @property
    def wrt(self) -> tuple[str, ...]:
        return tuple(n for n, i in self.inputs.items() if i.diff)

    @property
    def source(self) -> str:
        return self.call or self.expr

    def make(self, dtype: str = "float64") -> dict:
        """Fresh inputs (reproducible per entry) in ``dtype``."""
        rng = np.random.default_rng(zlib.crc32(self.id.encode()))
        values = {}
        for name, inp in self.inputs.items():
            v = inp.draw(rng)
            if isinstance(v, np.ndarray) and v.dtype.kind == "f":
                v = v.astype(dtype)
            values[name] = v
        return values


def normal(*shape):
    return Input(lambda rng: rng.standard_normal(shape))


def uniform(low, high, *shape):
    return Input(lambda rng: rng.uniform(low, high, shape))


def positive(*shape):
    return uniform(0.5, 2.0, *shape)


def away(*shape):
    """|x| >= 0.3: away from the kink of abs and sign."""
    return Input(lambda rng: rng.choice([-1.0, 1.0], shape) * rng.uniform(0.3, 1.5, shape))


def distinct(*shape):
    """Values at least 0.2 apart, in random order: no ties for max/min."""
    n = math.prod(shape)
    return Input(lambda rng: (rng.permutation(n) * 0.3 - 0.15 * n
                              + rng.uniform(0, 0.1, n)).reshape(shape))


def clipped(low, high, *shape):
    """Uniform in [-1, 1] but at least 0.05 from the bounds ``low`` and ``high``."""
    def draw(rng):
        x = rng.uniform(-1, 1, shape)
        for b in (low, high):
            x = np.where(np.abs(x - b) < 0.05, x + 0.1, x)
        return x
    return Input(draw)


def wellcond(n, *batch):
    """Matrices 2 I + 0.3 N(0, 1): comfortably invertible."""
    return Input(lambda rng: 2 * np.eye(n) + 0.3 * rng.standard_normal(batch + (n, n)))


def with_zeros(shape, *positions):
    """Normal values with exact zeros at ``positions`` (for np.prod)."""
    def draw(rng):
        x = rng.standard_normal(shape)
        for p in positions:
            x[p] = 0.0
        return x
    return Input(draw)


def pyfloat(low, high):
    return Input(lambda rng: float(rng.uniform(low, high)))


def fixed(value):
    return Input(lambda rng: value, diff=False)


# --- reading an entry's expression ----------------------------------------------------

_BINOPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
           ast.Div: operator.truediv, ast.Pow: operator.pow, ast.MatMult: operator.matmul,
           ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.BitAnd: operator.and_,
           ast.BitOr: operator.or_, ast.BitXor: operator.xor, ast.LShift: operator.lshift,
           ast.RShift: operator.rshift}
_UNARY_OPS = {ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Not: operator.not_,
              ast.Invert: operator.invert}
_COMPARE = {ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt,
            ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge,
            ast.Is: operator.is_, ast.IsNot: operator.is_not}


class _Index:
    def __getitem__(self, index):
        return index


def _eval(node, env):
    return eval(compile(ast.Expression(node), "<spec>", "eval"),  # noqa: S307
                {"np": np, "math": math, "copy": copy, "srcgrad": srcgrad, "_Index": _Index(),
                 "scipy": scipy, "statistics": statistics,
                 "keys_of": keys_of, "sequence": sequence, "snapshot": snapshot}, env)


def resolve(source, env):
    """The primitive a call expression applies, with its argument values and
    the AST nodes they come from: ``(primitive, args, kwargs, arg_nodes, kw_nodes)``."""
    node = ast.parse(source, mode="eval").body
    if isinstance(node, ast.BinOp):
        prim, nodes, kw = _BINOPS[type(node.op)], [node.left, node.right], {}
    elif isinstance(node, ast.UnaryOp):
        prim, nodes, kw = _UNARY_OPS[type(node.op)], [node.operand], {}
    elif isinstance(node, ast.Compare):
        op = node.ops[0]
        if isinstance(op, ast.In):
            prim, nodes, kw = operator.contains, [node.comparators[0], node.left], {}
        else:
            prim, nodes, kw = _COMPARE[type(op)], [node.left, node.comparators[0]], {}
    elif isinstance(node, ast.Subscript):
        index = ast.fix_missing_locations(ast.copy_location(ast.Subscript(
            ast.Name("_Index", ast.Load()), node.slice, ast.Load()), node))
        prim, nodes, kw = operator.getitem, [node.value, index], {}
    elif isinstance(node, ast.Attribute):
        prim, nodes, kw = getattr(type(_eval(node.value, env)), node.attr), [node.value], {}
    else:
        assert isinstance(node, ast.Call), source
        kw = {k.arg: k.value for k in node.keywords}
        func = node.func
        if isinstance(func, ast.Attribute) and isinstance(_eval(func.value, env), np.ndarray):
            prim, nodes = getattr(np.ndarray, func.attr), [func.value, *node.args]
        else:
            prim, nodes = _eval(func, env), list(node.args)
    args = [_eval(n, env) for n in nodes]
    return prim, args, {k: _eval(v, env) for k, v in kw.items()}, nodes, kw


def apply(prim, args, kwargs):
    """Call a primitive; an attribute descriptor (``np.ndarray.T``) is read."""
    if not callable(prim):
        return prim.__get__(args[0])
    return prim(*args, **kwargs)


# --- the table -------------------------------------------------------------------------

SPECS: list[Spec] = []
NONDIFF: list[Spec] = []


def S(id, primitive, expr, call=None, dtypes=FLOATS, **inputs):  # noqa: A002, N802
    SPECS.append(Spec(id, primitive, expr, inputs, call, dtypes))


def N(id, primitive, expr, **inputs):  # noqa: A002, N802
    NONDIFF.append(Spec(id, primitive, expr, inputs, dtypes=("float64",)))


# --- operators -----------------------------------------------------------------------
for op, sym in ((operator.add, "+"), (operator.sub, "-"), (operator.mul, "*")):
    S(f"{op.__name__}", op, f"x {sym} y", x=normal(3, 4), y=normal(3, 4))
    S(f"{op.__name__}-bcast-row", op, f"x {sym} y", x=normal(3, 4), y=normal(4))
    S(f"{op.__name__}-bcast-outer", op, f"x {sym} y", x=normal(3, 1), y=normal(1, 4))
    S(f"{op.__name__}-scalar", op, f"x {sym} y", x=normal(2, 3), y=normal())
S("truediv", operator.truediv, "x / y", x=normal(3, 4), y=away(3, 4))
S("truediv-bcast", operator.truediv, "x / y", x=normal(2, 3), y=away(2, 1))
S("neg", operator.neg, "-x", x=normal(3))
S("pos", operator.pos, "+x", x=normal(3))
S("pow-2", operator.pow, "x ** 2", x=normal(3, 2))
S("pow-3", operator.pow, "x ** 3", x=normal(4))
S("pow-half", operator.pow, "x ** 0.5", x=positive(4))
S("pow-xy", operator.pow, "x ** y", x=positive(2, 3), y=normal(2, 3))
S("pow-bcast", operator.pow, "x ** y", x=positive(2, 3), y=normal(3))
MATMUL_SHAPES = {"2d": ((3, 4), (4, 2)), "vec-vec": ((4,), (4,)), "vec-mat": ((4,), (4, 3)),
                 "mat-vec": ((3, 4), (4,)), "batched": ((2, 3, 4), (2, 4, 5)),
                 "batch-bcast": ((2, 1, 3, 4), (3, 4, 2)), "vec-batch": ((4,), (2, 4, 3)),
                 "batch-vec": ((2, 3, 4), (4,))}
for key, (sa, sb) in MATMUL_SHAPES.items():
    S(f"matmul-op-{key}", operator.matmul, "x @ y", x=normal(*sa), y=normal(*sb))
    S(f"np.matmul-{key}", np.matmul, "np.matmul(x, y)", x=normal(*sa), y=normal(*sb))

# --- ufuncs --------------------------------------------------------------------------
UNARY = {
    np.exp: normal, np.exp2: normal, np.expm1: normal, np.log: positive, np.log2: positive,
    np.log10: positive, np.log1p: positive, np.sqrt: positive, np.cbrt: positive,
    np.square: normal, np.reciprocal: away, np.absolute: away, np.fabs: away,
    np.negative: normal, np.positive: normal, np.sin: normal, np.cos: normal,
    np.tan: lambda *s: uniform(-1.2, 1.2, *s), np.arcsin: lambda *s: uniform(-0.9, 0.9, *s),
    np.arccos: lambda *s: uniform(-0.9, 0.9, *s), np.arctan: normal, np.sinh: normal,
    np.cosh: normal, np.tanh: normal, np.arcsinh: normal,
    np.arccosh: lambda *s: uniform(1.2, 3.0, *s), np.arctanh: lambda *s: uniform(-0.9, 0.9, *s),
    np.deg2rad: normal, np.rad2deg: normal,
}
for uf, gen in UNARY.items():
    S(f"np.{uf.__name__}", uf, f"np.{uf.__name__}(x)", x=gen(3, 4))
S("np.abs", np.abs, "np.abs(x)", x=away(5))
BINARY = {np.add: (normal, normal), np.subtract: (normal, normal),
          np.multiply: (normal, normal), np.divide: (normal, away),
          np.power: (positive, normal), np.arctan2: (away, away), np.hypot: (away, away),
          np.logaddexp: (normal, normal), np.logaddexp2: (normal, normal)}
for uf, (gx, gy) in BINARY.items():
    S(f"np.{uf.__name__}", uf, f"np.{uf.__name__}(x, y)", x=gx(3, 4), y=gy(3, 4))
    S(f"np.{uf.__name__}-bcast", uf, f"np.{uf.__name__}(x, y)", x=gx(2, 3), y=gy(3, 1, 1))
S("np.copysign", np.copysign, "np.copysign(x, y)", x=away(3, 4),
  y=fixed(np.array([1.0, -1.0, -0.0, 2.0])))
S("np.copysign-bcast", np.copysign, "np.copysign(x, y)", x=away(2, 3), y=fixed(-1.5))
S("np.nextafter", np.nextafter, "np.nextafter(x, y)", dtypes=("float64",), x=away(3, 4),
  y=away(3, 4))
S("np.nextafter-bcast", np.nextafter, "np.nextafter(x, y)", dtypes=("float64",), x=away(3),
  y=away(2, 3))
S("np.copysign-sign-moves", np.copysign, "np.copysign(x, y)", x=away(2, 3), y=away(3))
S("np.true_divide", np.true_divide, "np.true_divide(x, y)", x=normal(4), y=away(4))
S("np.power-2", np.power, "np.power(x, 2)", x=normal(3))
for uf in (np.maximum, np.minimum, np.fmax, np.fmin):
    S(f"np.{uf.__name__}", uf, f"np.{uf.__name__}(x, y)", x=distinct(2, 3), y=distinct(2, 3))
    S(f"np.{uf.__name__}-bcast", uf, f"np.{uf.__name__}(x, y)", x=distinct(2, 3),
      y=distinct(3))
S("np.where", np.where, "np.where(c, x, y)", c=fixed(np.array([[True, False, True, True],
                                                                [False, False, True, False],
                                                                [True, True, False, False]])),
  x=normal(3, 4), y=normal(3, 4))
S("np.where-bcast", np.where, "np.where(c, x, y)",
  c=fixed(np.array([True, False, True])), x=normal(2, 3), y=normal(1))
S("np.clip", np.clip, "np.clip(x, -0.5, 0.5)", x=clipped(-0.5, 0.5, 3, 4))
S("np.clip-lower", np.clip, "np.clip(x, -0.2, None)", x=clipped(-0.2, 2.0, 6))
S("ndarray.clip", np.ndarray.clip, "x.clip(-0.5, 0.5)", x=clipped(-0.5, 0.5, 6))
# the arithmetic dunders written as calls (review s34, R2-14)
for _name, _expr in (("__add__", "x.__add__(y)"), ("__radd__", "x.__radd__(y)"),
                     ("__sub__", "x.__sub__(y)"), ("__mul__", "x.__mul__(y)"),
                     ("__rmul__", "x.__rmul__(y)"), ("__matmul__", "x.__matmul__(y)")):
    S(f"ndarray.{_name}", getattr(np.ndarray, _name), _expr, x=normal(3, 3), y=normal(3, 3))
S("ndarray.__truediv__", np.ndarray.__truediv__, "x.__truediv__(y)", x=normal(3, 4), y=away(3, 4))
S("ndarray.__pow__", np.ndarray.__pow__, "x.__pow__(y)", x=positive(2, 3), y=normal(2, 3))
S("ndarray.__pow__-2", np.ndarray.__pow__, "x.__pow__(2)", x=normal(4))
S("ndarray.__neg__", np.ndarray.__neg__, "x.__neg__()", x=normal(3))
S("ndarray.repeat", np.ndarray.repeat, "x.repeat(2)", x=normal(2, 3))
S("ndarray.repeat-axis", np.ndarray.repeat, "x.repeat([1, 0, 2], axis=1)", x=normal(2, 3))

# --- reductions ----------------------------------------------------------------------
VARIANTS = ("", "axis=0", "axis=1", "axis=-1", "axis=(0, 2)", "keepdims=True",
            "axis=1, keepdims=True", "axis=(0, 1), keepdims=True")
for fn, gen in ((np.sum, normal), (np.mean, normal), (np.prod, normal), (np.max, distinct),
                (np.min, distinct), (np.amax, distinct), (np.amin, distinct),
                (np.var, normal), (np.std, normal)):
    for v in VARIANTS:
        args = f"x, {v}" if v else "x"
        S(f"np.{fn.__name__}({v})", fn, f"np.{fn.__name__}({args})", x=gen(2, 3, 4))
for fn in ("var", "std"):
    S(f"np.{fn}-ddof", getattr(np, fn), f"np.{fn}(x, axis=0, ddof=1)", x=normal(3, 4))
    S(f"np.{fn}-ddof-all", getattr(np, fn), f"np.{fn}(x, ddof=1)", x=normal(3, 4))
S("np.prod-one-zero", np.prod, "np.prod(x)", x=with_zeros((5,), 2))
# a 0-d array reduced over axis 0 or -1, as NumPy allows (raised ZeroDivisionError)
for fn in (np.sum, np.prod, np.max):
    for v in ("axis=0", "axis=-1"):
        S(f"np.{fn.__name__}-0d-{v}", fn, f"np.{fn.__name__}(x, {v})", x=normal())
S("np.prod-zeros-axis", np.prod, "np.prod(x, axis=1)", x=with_zeros((3, 4), (0, 1), (1, 0), (1, 3)))
S("np.sum-0d", np.sum, "np.sum(x)", x=normal())
METHOD_CALLS = {"sum": ("x.sum()", "x.sum(1)", "x.sum(axis=(0, 1), keepdims=True)"),
                "mean": ("x.mean()", "x.mean(0)", "x.mean(axis=-1, keepdims=True)"),
                "prod": ("x.prod()", "x.prod(axis=1)"),
                "max": ("x.max()", "x.max(axis=0)", "x.max(1, keepdims=True)"),
                "min": ("x.min()", "x.min(axis=(0, 2))"),
                "var": ("x.var()", "x.var(axis=1, ddof=1)"),
                "std": ("x.std()", "x.std(0, ddof=1, keepdims=True)"),
                "cumsum": ("x.cumsum()", "x.cumsum(axis=1)")}
for meth, exprs in METHOD_CALLS.items():
    for e in exprs:
        S(f"ndarray.{e[2:]}", getattr(np.ndarray, meth), e,
          x=distinct(2, 3, 4) if meth in ("max", "min") else normal(2, 3, 4))
S("np.cumsum", np.cumsum, "np.cumsum(x)", x=normal(3, 4))
S("np.bincount", np.bincount, "np.bincount(i, weights=w, minlength=5)",
  i=fixed(np.array([0, 2, 2, 1, 0, 2])), w=normal(6))
S("np.cumsum-axis", np.cumsum, "np.cumsum(x, axis=0)", x=normal(3, 4))


def with_nans(shape, *positions):
    """Normal values with NaN at ``positions`` (for the nan-reductions)."""
    def draw(rng):
        x = rng.standard_normal(shape)
        for p in positions:
            x[p] = np.nan
        return x
    return Input(draw)


for e, gen, what in (("np.cumprod(x)", normal(5), ""), ("np.cumprod(x)", normal(2, 3), ""),
                     ("np.cumprod(x, axis=1)", normal(2, 4), ""),
                     ("np.cumprod(x, 0)", normal(3, 2, 2), ""),
                     ("np.cumprod(x)", with_zeros((5,), 2), "-one-zero"),
                     ("np.cumprod(x)", with_zeros((6,), 1, 4), "-two-zeros"),
                     ("np.cumprod(x, axis=-1)", with_zeros((2, 4), (0, 1), (1, 0), (1, 2)),
                      "-zeros"),
                     ("x.cumprod()", normal(2, 3), ""), ("x.cumprod(axis=0)", normal(3, 2), "")):
    prim = np.ndarray.cumprod if e.startswith("x.") else np.cumprod
    S(f"{e}-{gen.draw(np.random.default_rng(0)).shape}{what}", prim, e, x=gen)
NAN1 = with_nans((3, 4), (0, 1), (2, 3))
for fn in ("nansum", "nanmean", "nanprod", "nanvar", "nanstd", "nanmax", "nanmin"):
    gen = Input(lambda rng: np.where(np.isnan(NAN1.draw(rng)), np.nan, distinct(3, 4).draw(rng))) \
        if fn in ("nanmax", "nanmin") else NAN1
    for v in ("", "axis=0", "axis=1, keepdims=True", "keepdims=True"):
        args = f"x, {v}" if v else "x"
        S(f"np.{fn}({v})", getattr(np, fn), f"np.{fn}({args})", x=gen)
    S(f"np.{fn}-no-nan", getattr(np, fn), f"np.{fn}(x, axis=(0, 2))",
      x=distinct(2, 3, 2) if fn in ("nanmax", "nanmin") else normal(2, 3, 2))
for fn in ("nanvar", "nanstd"):
    S(f"np.{fn}-ddof", getattr(np, fn), f"np.{fn}(x, axis=1, ddof=1)", x=NAN1)
S("np.nanprod-zero", np.nanprod, "np.nanprod(x, axis=1)",
  x=Input(lambda rng: np.where(np.eye(3, 4) > 0, np.nan, np.where(np.eye(3, 4, 1) > 0, 0.0,
                                                                   rng.standard_normal((3, 4))))))
S("np.nancumsum", np.nancumsum, "np.nancumsum(x)", x=NAN1)
S("np.nancumsum-axis", np.nancumsum, "np.nancumsum(x, axis=1)", x=NAN1)
for e, gen in (("np.linalg.norm(x)", normal(5)), ("np.linalg.norm(x)", normal(3, 4)),
               ("np.linalg.norm(x, axis=1)", normal(3, 4)),
               ("np.linalg.norm(x, axis=-1, keepdims=True)", normal(2, 3, 4)),
               ("np.linalg.norm(x, axis=(0, 2))", normal(2, 3, 4)),
               ("np.linalg.norm(x, 'fro')", normal(3, 4)), ("np.linalg.norm(x, 2)", normal(4)),
               ("np.linalg.norm(x, 1)", away(5)), ("np.linalg.norm(x, np.inf)", distinct(5)),
               ("np.linalg.norm(x, -np.inf)", distinct(5)), ("np.linalg.norm(x, 3)", away(5)),
               ("np.linalg.norm(x, ord=1, axis=0)", away(3, 4)),
               ("np.linalg.norm(x, 'nuc')", normal(3, 4)), ("np.linalg.norm(x, 2)", normal(3, 4)),
               ("np.linalg.norm(x, -2)", normal(4, 3)), ("np.linalg.norm(x, 1)", away(3, 4)),
               ("np.linalg.norm(x, -1)", away(4, 3)), ("np.linalg.norm(x, np.inf)", away(3, 4)),
               ("np.linalg.norm(x, -np.inf)", away(3, 3)),
               ("np.linalg.norm(x, 2, axis=(1, 2))", normal(2, 3, 4)),
               ("np.linalg.norm(x, 'nuc', (0, 2), keepdims=True)", normal(3, 2, 4)),
               ("np.linalg.norm(x, 1, axis=(2, 0))", away(3, 2, 4)),
               ("np.linalg.norm(x, ord=np.inf, axis=(-2, -1), keepdims=True)", away(2, 3, 3))):
    S(f"{e}-{gen.draw(np.random.default_rng(0)).shape}", np.linalg.norm, e, x=gen)

# --- linear algebra ------------------------------------------------------------------
DOT_SHAPES = {"2d": ((3, 4), (4, 2)), "vec-vec": ((4,), (4,)), "mat-vec": ((3, 4), (4,)),
              "vec-mat": ((4,), (4, 3)), "nd-mat": ((2, 3, 4), (4, 2)),
              "nd-nd": ((2, 3, 4), (5, 4, 2)), "nd-vec": ((2, 3, 4), (4,)),
              "scalar": ((), (2, 3))}
for key, (sa, sb) in DOT_SHAPES.items():
    S(f"np.dot-{key}", np.dot, "np.dot(x, y)", x=normal(*sa), y=normal(*sb))
S("ndarray.dot", np.ndarray.dot, "x.dot(y)", x=normal(3, 4), y=normal(4, 2))
for key, (sa, sb) in {"vec": ((4,), (4,)), "2d": ((3, 4), (2, 4)), "nd": ((2, 3, 4), (5, 4)),
                      "scalar": ((), (3,))}.items():
    S(f"np.inner-{key}", np.inner, "np.inner(x, y)", x=normal(*sa), y=normal(*sb))
S("np.vdot", np.vdot, "np.vdot(x, y)", x=normal(4), y=normal(4))
S("np.vdot-flatten", np.vdot, "np.vdot(x, y)", x=normal(2, 3), y=normal(3, 2))
S("np.outer", np.outer, "np.outer(x, y)", x=normal(3), y=normal(4))
S("np.outer-flatten", np.outer, "np.outer(x, y)", x=normal(2, 3), y=normal(4))
for axes, sa, sb in (("", (3, 4, 5), (4, 5, 2)), (", axes=1", (3, 4), (4, 2)),
                     (", axes=0", (3,), (2,)), (", axes=([1, 0], [0, 1])", (3, 4, 2), (4, 3)),
                     (", axes=(1, 0)", (3, 4), (4, 2)),
                     (", axes=([0, 2], [2, 0])", (3, 4, 2), (2, 5, 3))):
    S(f"np.tensordot{axes}", np.tensordot, f"np.tensordot(x, y{axes})", x=normal(*sa),
      y=normal(*sb))
EINSUMS = (("ij,jk->ik", (3, 4), (4, 2)), ("ij,jk", (3, 4), (4, 2)), ("i,i->", (4,), (4,)),
           ("i,j->ij", (3,), (4,)), ("bij,bjk->bik", (2, 3, 4), (2, 4, 2)),
           ("...ij,...jk->...ik", (2, 3, 4), (4, 2)), ("ij,ij->ij", (3, 4), (3, 4)),
           ("ij,k->ik", (2, 3), (4,)), ("...i,i", (2, 3, 4), (4,)), ("ij,j", (3, 4), (4,)))
for sub, sa, sb in EINSUMS:
    S(f"np.einsum('{sub}')", np.einsum, f"np.einsum('{sub}', x, y)", x=normal(*sa), y=normal(*sb))
for sub, sa in (("ij->ji", (3, 4)), ("ij->", (3, 4)), ("ij->j", (3, 4)), ("ijk->kij", (2, 3, 4))):
    S(f"np.einsum('{sub}')", np.einsum, f"np.einsum('{sub}', x)", x=normal(*sa))
S("np.einsum-3-operands", np.einsum, "np.einsum('ijk,jl,lk->i', x, y, z)",
  x=normal(2, 3, 4), y=normal(3, 5), z=normal(5, 4))
for e, shape in (("np.trace(x)", (3, 3)), ("np.trace(x)", (3, 4)), ("np.trace(x, 1)", (4, 4)),
                 ("np.trace(x, offset=-1)", (4, 3)), ("np.trace(x, 0, 1, 2)", (2, 3, 3)),
                 ("np.trace(x, axis1=2, axis2=0)", (3, 2, 4))):
    S(f"{e}-{shape}", np.trace, e, x=normal(*shape))
S("ndarray.trace", np.ndarray.trace, "x.trace()", x=normal(3, 3))
S("np.transpose", np.transpose, "np.transpose(x)", x=normal(3, 4))
S("np.transpose-axes", np.transpose, "np.transpose(x, (1, 2, 0))", x=normal(2, 3, 4))
S("np.transpose-neg-axes", np.transpose, "np.transpose(x, axes=(-1, 0, 1))", x=normal(2, 3, 4))
S("np.linalg.inv", np.linalg.inv, "np.linalg.inv(x)", x=wellcond(3))
S("np.linalg.inv-batched", np.linalg.inv, "np.linalg.inv(x)", x=wellcond(3, 2))
S("np.linalg.solve-vec", np.linalg.solve, "np.linalg.solve(x, y)", x=wellcond(3), y=normal(3))
S("np.linalg.solve-mat", np.linalg.solve, "np.linalg.solve(x, y)", x=wellcond(3), y=normal(3, 2))
S("np.linalg.solve-batched", np.linalg.solve, "np.linalg.solve(x, y)", x=wellcond(3, 2),
  y=normal(2, 3, 2))
S("np.linalg.solve-batch-bcast", np.linalg.solve, "np.linalg.solve(x, y)", x=wellcond(3),
  y=normal(2, 3, 2))
S("np.linalg.solve-batched-vec", np.linalg.solve, "np.linalg.solve(x, y)", x=wellcond(3, 2),
  y=normal(3))
S("np.linalg.det", np.linalg.det, "np.linalg.det(x)", x=wellcond(3))
S("np.linalg.det-batched", np.linalg.det, "np.linalg.det(x)", x=wellcond(3, 2))
S("np.linalg.slogdet", np.linalg.slogdet, "np.linalg.slogdet(x)[1]",
  call="np.linalg.slogdet(x)", x=wellcond(3))
S("np.linalg.slogdet-batched", np.linalg.slogdet, "np.linalg.slogdet(x)[1]",
  call="np.linalg.slogdet(x)", x=wellcond(3, 2))
# det's tangent reads the cofactors (singular matrices too), differentiated again by hvp
S("det_cofactor", srcgrad.runtime.det_cofactor, "srcgrad.runtime.det_cofactor(x)",
  x=wellcond(3))
S("det_cofactor-batched", srcgrad.runtime.det_cofactor, "srcgrad.runtime.det_cofactor(x)",
  x=wellcond(3, 2))
# slogdet's tangent (inf or nan at a singular matrix), differentiated again by hvp
S("slogdet_tangent_part", srcgrad.runtime.slogdet_tangent_part,
  "srcgrad.runtime.slogdet_tangent_part(x, y)", x=wellcond(3), y=normal(3, 3))
S("slogdet_tangent_part-batched", srcgrad.runtime.slogdet_tangent_part,
  "srcgrad.runtime.slogdet_tangent_part(x, y)", x=wellcond(3, 2), y=normal(2, 3, 3))


# --- matrix factorisations -----------------------------------------------------------
def spd(n, *batch):
    """Symmetric positive definite matrices with eigenvalues about 1, 2, ..., n
    (well apart: eigenvectors are unique)."""
    def draw(rng):
        q = np.linalg.qr(rng.standard_normal(batch + (n, n)))[0]
        w = np.arange(1.0, n + 1) + rng.uniform(0, 0.3, batch + (n,))
        return (q * w[..., None, :]) @ np.swapaxes(q, -1, -2)
    return Input(draw)


for e, gen in (("np.linalg.cholesky(x)", spd(3)), ("np.linalg.cholesky(x)", spd(4, 2)),
               ("np.linalg.cholesky(x, upper=True)", spd(3)),
               ("np.linalg.eigh(x)", spd(3)), ("np.linalg.eigh(x)", spd(3, 2)),
               ("np.linalg.eigh(x, 'U')", spd(4)), ("np.linalg.eigh(x, UPLO='U')", spd(3, 2)),
               ("np.linalg.eigvalsh(x)", spd(4)), ("np.linalg.eigvalsh(x, 'U')", spd(3, 2)),
               ("np.linalg.svd(x)", normal(3, 3)), ("np.linalg.svd(x)", normal(2, 3, 3)),
               ("np.linalg.svd(x, full_matrices=False)", normal(4, 3)),
               ("np.linalg.svd(x, full_matrices=False)", normal(3, 5)),
               ("np.linalg.svd(x, full_matrices=False)", normal(2, 4, 3)),
               ("np.linalg.svd(x, compute_uv=False)", normal(4, 3)),
               ("np.linalg.svd(x, False, False)", normal(2, 3, 4)),
               ("np.linalg.qr(x)", normal(3, 3)), ("np.linalg.qr(x)", normal(5, 3)),
               ("np.linalg.qr(x)", normal(3, 5)), ("np.linalg.qr(x, mode='reduced')", normal(2, 4, 3)),
               ("np.linalg.pinv(x)", wellcond(3)), ("np.linalg.pinv(x)", normal(4, 3)),
               ("np.linalg.pinv(x)", normal(3, 5)), ("np.linalg.pinv(x)", normal(2, 3, 4)),
               ("np.linalg.matrix_power(x, 0)", wellcond(3)),
               ("np.linalg.matrix_power(x, 1)", wellcond(3)),
               ("np.linalg.matrix_power(x, 3)", wellcond(3)),
               ("np.linalg.matrix_power(x, 2)", wellcond(3, 2)),
               ("np.linalg.matrix_power(x, -2)", wellcond(3))):
    prim = eval(e.split("(")[0], {"np": np})  # noqa: S307 - trusted table
    S(f"{e}-{gen.draw(np.random.default_rng(0)).shape}", prim, e, x=gen)
S("np.linalg.eigh-values", np.linalg.eigh, "np.linalg.eigh(x)[0]", call="np.linalg.eigh(x)",
  x=spd(4))
S("np.linalg.eigh-vectors", np.linalg.eigh, "np.linalg.eigh(x)[1]", call="np.linalg.eigh(x)",
  x=spd(3))
def real_spectrum(n, *batch):
    """Non-symmetric matrices ``Q diag(1..n) Q^-1`` with a well-conditioned ``Q``:
    real eigenvalues well apart, so ``np.linalg.eig`` returns real eigenvectors
    that move smoothly (each fixed up to its sign, which a small step keeps)."""
    def draw(rng):
        q = np.eye(n) + 0.3 * rng.standard_normal(batch + (n, n))
        w = np.arange(1.0, n + 1) + rng.uniform(0, 0.3, batch + (n,))
        return np.linalg.solve(np.swapaxes(q, -1, -2), np.swapaxes(q * w[..., None, :], -1, -2)).swapaxes(-1, -2)
    return Input(draw)


S("np.linalg.eig-values", np.linalg.eig, "np.linalg.eig(x)[0]", call="np.linalg.eig(x)",
  x=real_spectrum(4))
S("np.linalg.eig-vectors", np.linalg.eig, "np.linalg.eig(x)[1]", call="np.linalg.eig(x)",
  x=real_spectrum(3))
S("np.linalg.eig-batched", np.linalg.eig, "np.linalg.eig(x)[1]", call="np.linalg.eig(x)",
  x=real_spectrum(3, 2))
S("np.linalg.eigvals", np.linalg.eigvals, "np.linalg.eigvals(x)", x=real_spectrum(4))
S("np.linalg.eigvals-batched", np.linalg.eigvals, "np.linalg.eigvals(x)", x=real_spectrum(3, 2))
S("np.linalg.svd-s", np.linalg.svd, "np.linalg.svd(x, full_matrices=False)[1]",
  call="np.linalg.svd(x, full_matrices=False)", x=normal(5, 3))
S("np.linalg.qr-r", np.linalg.qr, "np.linalg.qr(x)[1]", call="np.linalg.qr(x)", x=normal(4, 3))
if hasattr(np.linalg, "svdvals"):  # NumPy 2
    S("np.linalg.svdvals", np.linalg.svdvals, "np.linalg.svdvals(x)", x=normal(4, 3))
    S("np.linalg.svdvals-batched", np.linalg.svdvals, "np.linalg.svdvals(x)", x=normal(2, 3, 4))
for sa, sb in (((5, 3), (5,)), ((5, 3), (5, 2)), ((3, 5), (3,)), ((4, 4), (4, 2))):
    S(f"np.linalg.lstsq-{sa}-{sb}", np.linalg.lstsq, "np.linalg.lstsq(x, y, rcond=None)[:2]",
      call="np.linalg.lstsq(x, y, rcond=None)", x=normal(*sa), y=normal(*sb))
S("np.linalg.lstsq-s", np.linalg.lstsq, "np.linalg.lstsq(x, y, rcond=None)[3]",
  call="np.linalg.lstsq(x, y, rcond=None)", x=normal(5, 3), y=normal(5))
S("np.linalg.lstsq-x", np.linalg.lstsq, "np.linalg.lstsq(x, y, rcond=None)[0]",
  call="np.linalg.lstsq(x, y, rcond=None)", x=normal(6, 3), y=normal(6))
S("np.linalg.lstsq-x-a", np.linalg.lstsq, "np.linalg.lstsq(x, b, rcond=None)[0]",
  call="np.linalg.lstsq(x, b, rcond=None)", x=normal(6, 3), b=fixed(np.arange(6.0)))

# --- Fourier transforms, convolution, interpolation ----------------------------------
# Real inputs here (complex outputs are compared through their real parts);
# tests/rules/test_fft_rules.py checks complex inputs in both directions.
for e, shape in (("np.fft.fft(x)", (6,)), ("np.fft.fft(x, axis=0)", (4, 3)),
                 ("np.fft.fft(x, 8)", (5,)), ("np.fft.fft(x, n=3, norm='ortho')", (2, 5)),
                 ("np.fft.ifft(x)", (5,)), ("np.fft.ifft(x, 7, axis=0, norm='forward')", (4, 2)),
                 ("np.fft.rfft(x)", (6,)), ("np.fft.rfft(x)", (7,)), ("np.fft.rfft(x, 10)", (6,)),
                 ("np.fft.rfft(x, axis=0, norm='ortho')", (5, 3)),
                 ("np.fft.irfft(x)", (4,)), ("np.fft.irfft(x, 7)", (4,)),
                 ("np.fft.irfft(x, n=4, axis=0, norm='ortho')", (5, 2)),
                 ("np.fft.fft2(x)", (3, 4)), ("np.fft.fft2(x, s=(4, 2))", (2, 3, 3)),
                 ("np.fft.ifft2(x, norm='ortho')", (2, 3, 4)),
                 ("np.fft.fftn(x)", (2, 3, 2)), ("np.fft.ifftn(x, axes=(0, 2))", (3, 2, 4)),
                 ("np.fft.rfft2(x)", (4, 4)), ("np.fft.rfft2(x, s=(3, 5))", (2, 4, 4)),
                 ("np.fft.irfft2(x)", (3, 3)), ("np.fft.irfftn(x, s=(4, 5), axes=(0, 1))", (3, 3)),
                 ("np.fft.rfftn(x, axes=(0, 1), norm='forward')", (4, 3, 2)),
                 ("np.fft.fftshift(x)", (5,)), ("np.fft.fftshift(x, axes=1)", (2, 4)),
                 ("np.fft.ifftshift(x)", (3, 4))):
    prim = eval(e.split("(")[0], {"np": np})  # noqa: S307 - trusted table
    S(f"{e}-{shape}", prim, e, x=normal(*shape))
S("np.fft.rfft-abs", np.fft.rfft, "np.abs(np.fft.rfft(x)) ** 2", call="np.fft.rfft(x)",
  x=normal(8))
S("np.fft.fft-abs", np.fft.fft, "np.abs(np.fft.fft(x, axis=0))", call="np.fft.fft(x, axis=0)",
  x=normal(5, 2))
for mode in ("full", "same", "valid"):
    for sa, sb in (((5,), (3,)), ((3,), (5,)), ((4,), (4,)), ((6,), (2,))):
        S(f"np.convolve-{mode}-{sa}-{sb}", np.convolve, f"np.convolve(x, y, '{mode}')",
          x=normal(*sa), y=normal(*sb))
S("np.convolve", np.convolve, "np.convolve(x, y)", x=normal(4), y=normal(3))
S("np.convolve-mode", np.convolve, "np.convolve(x, y, mode='same')", x=normal(2), y=normal(4))
KNOTS = np.array([-1.0, -0.25, 0.3, 1.0, 1.8])
S("np.interp", np.interp, "np.interp(x, xp, fp)", x=Input(lambda rng: rng.choice(
    [-1.5, -0.6, 0.0, 0.7, 1.2, 2.4], 6) + rng.uniform(-0.05, 0.05, 6)), xp=fixed(KNOTS),
  fp=normal(5))
S("np.interp-scalar", np.interp, "np.interp(x, xp, fp)", dtypes=("float64",),
  x=pyfloat(0.35, 0.95), xp=fixed(KNOTS), fp=normal(5))
S("np.interp-left-right", np.interp, "np.interp(x, xp, fp, left=0.0, right=2.0)",
  x=Input(lambda rng: np.array([[-1.5, 0.1], [0.5, 2.2]]) + rng.uniform(-0.05, 0.05, (2, 2))),
  xp=fixed(KNOTS), fp=normal(5))
S("np.interp-fp-only", np.interp, "np.interp(xs, xp, fp)", xs=fixed(np.linspace(-2, 2, 7)),
  xp=fixed(KNOTS), fp=normal(5))

# --- SciPy (when installed) ----------------------------------------------------------
def registered(primitive):
    """The registry's own key for ``primitive``: a bound method such as
    ``scipy.stats.norm.logpdf`` is a new (equal) object at each access."""
    from srcgrad.rules import registry  # noqa: PLC0415
    return next((p for p in registry.all_rules() if p is primitive or p == primitive), primitive)


if SCIPY:
    SP = scipy.special
    for name, gen in (("expit", normal), ("log_expit", normal), ("erf", normal),
                      ("erfc", normal), ("ndtr", normal), ("log_ndtr", normal),
                      ("logit", lambda *s: uniform(0.1, 0.9, *s)),
                      ("erfinv", lambda *s: uniform(-0.9, 0.9, *s)),
                      ("erfcinv", lambda *s: uniform(0.1, 1.9, *s)),
                      ("ndtri", lambda *s: uniform(0.1, 0.9, *s)), ("gammaln", positive),
                      ("gamma", positive), ("digamma", positive), ("entr", positive)):
        if hasattr(SP, name):  # log_expit: SciPy 1.8
            S(f"scipy.special.{name}", getattr(SP, name), f"scipy.special.{name}(x)",
              x=gen(3, 4))
    S("scipy.special.gammaln-neg", SP.gammaln, "scipy.special.gammaln(x)",
      x=uniform(-2.8, -2.2, 4))
    S("scipy.special.expit-0d", SP.expit, "scipy.special.expit(x)", x=normal())
    ST, F64_ONLY = scipy.stats, ("float64",)  # these compute in float64, whatever the input
    S("scipy.special.polygamma", SP.polygamma, "scipy.special.polygamma(1, x)",
      dtypes=F64_ONLY, x=positive(4))
    S("scipy.special.polygamma-0", SP.polygamma, "scipy.special.polygamma(0, x)",
      dtypes=F64_ONLY, x=positive(3))
    S("scipy.special.polygamma-orders", SP.polygamma, "scipy.special.polygamma(n, x)",
      dtypes=F64_ONLY, n=fixed(np.array([0, 1, 2])), x=positive(2, 3))
    S("psi", srcgrad.runtime.psi, "srcgrad.runtime.psi(2, x)", x=positive(4))
    S("psi-0", srcgrad.runtime.psi, "srcgrad.runtime.psi(0, x)", x=positive(2, 2))
    for name, gy in (("xlogy", positive), ("xlog1py", lambda *s: uniform(-0.5, 2.0, *s))):
        S(f"scipy.special.{name}", getattr(SP, name), f"scipy.special.{name}(x, y)",
          x=normal(3, 4), y=gy(3, 4))
        S(f"scipy.special.{name}-bcast", getattr(SP, name), f"scipy.special.{name}(x, y)",
          x=normal(2, 3), y=gy(3))
    S("scipy.special.xlogy-zero", SP.xlogy, "scipy.special.xlogy(x, y)",
      x=Input(lambda rng: np.array([0.0, 1.5, 0.0, -0.5])), y=positive(4))
    S("scipy.special.betaln", SP.betaln, "scipy.special.betaln(x, y)", x=positive(3, 4),
      y=positive(3, 4))
    S("scipy.special.betaln-bcast", SP.betaln, "scipy.special.betaln(x, y)", x=positive(2, 3),
      y=positive(1))
    for v in ("", "axis=0", "axis=1, keepdims=True", "axis=(0, 2)", "keepdims=True", "-1"):
        args = f"x, {v}" if v else "x"
        S(f"scipy.special.logsumexp({v})", SP.logsumexp, f"scipy.special.logsumexp({args})",
          x=normal(2, 3, 4))
    S("scipy.special.logsumexp-b", SP.logsumexp, "scipy.special.logsumexp(x, axis=1, b=w)",
      x=normal(3, 4), w=positive(3, 4))
    S("scipy.special.logsumexp-b-bcast", SP.logsumexp, "scipy.special.logsumexp(x, 0, w)",
      x=normal(3, 4), w=positive(4))
    S("scipy.special.logsumexp-b-all", SP.logsumexp, "scipy.special.logsumexp(x, b=w)",
      x=normal(5), w=positive(5))
    for name in ("softmax", "log_softmax"):
        for v in ("", ", axis=0", ", axis=-1", ", 1"):
            S(f"scipy.special.{name}{v}", getattr(SP, name), f"scipy.special.{name}(x{v})",
              x=normal(3, 4))
    NORM = registered(ST.norm.logpdf)
    S("scipy.stats.norm.logpdf", NORM, "scipy.stats.norm.logpdf(x)", dtypes=F64_ONLY,
      x=normal(3, 4))
    S("scipy.stats.norm.logpdf-loc-scale", NORM, "scipy.stats.norm.logpdf(x, m, s)",
      dtypes=F64_ONLY, x=normal(3, 4), m=normal(4), s=positive(3, 1))
    S("scipy.stats.norm.logpdf-keywords", NORM, "scipy.stats.norm.logpdf(x, loc=m, scale=s)",
      dtypes=F64_ONLY, x=normal(5), m=normal(), s=positive())
    S("scipy.stats.norm.logpdf-float", NORM, "scipy.stats.norm.logpdf(x, 0.5, s)",
      dtypes=F64_ONLY, x=pyfloat(-1, 1), s=pyfloat(0.5, 2))
    for method in ("pdf", "cdf", "sf", "logcdf"):
        prim = registered(getattr(ST.norm, method))
        S(f"scipy.stats.norm.{method}", prim, f"scipy.stats.norm.{method}(x)", dtypes=F64_ONLY,
          x=normal(3, 4))
        S(f"scipy.stats.norm.{method}-loc-scale", prim, f"scipy.stats.norm.{method}(x, m, s)",
          dtypes=F64_ONLY, x=normal(3, 4), m=normal(4), s=positive(3, 1))
        S(f"scipy.stats.norm.{method}-keywords", prim,
          f"scipy.stats.norm.{method}(x, loc=m, scale=s)", dtypes=F64_ONLY, x=normal(5),
          m=normal(), s=positive())
    T = registered(ST.t.logpdf)
    S("scipy.stats.t.logpdf", T, "scipy.stats.t.logpdf(x, df)", dtypes=F64_ONLY,
      x=normal(3, 4), df=uniform(1.5, 6.0, 3, 4))
    S("scipy.stats.t.logpdf-all", T, "scipy.stats.t.logpdf(x, df, m, s)", dtypes=F64_ONLY,
      x=normal(2, 3), df=uniform(1.5, 6.0), m=normal(3), s=positive(2, 1))
    S("scipy.stats.t.logpdf-keywords", T, "scipy.stats.t.logpdf(x, df=4.0, loc=m, scale=s)",
      dtypes=F64_ONLY, x=normal(4), m=normal(), s=positive())
    GAMMA = registered(ST.gamma.logpdf)
    S("scipy.stats.gamma.logpdf", GAMMA, "scipy.stats.gamma.logpdf(x, a)", dtypes=F64_ONLY,
      x=positive(3, 4), a=uniform(1.5, 4.0, 3, 4))
    S("scipy.stats.gamma.logpdf-all", GAMMA, "scipy.stats.gamma.logpdf(x, a, m, s)",
      dtypes=F64_ONLY, x=uniform(2.0, 4.0, 2, 3), a=uniform(1.5, 4.0), m=uniform(-1.0, 1.0, 3),
      s=positive(2, 1))
    S("scipy.stats.gamma.logpdf-keywords", GAMMA,
      "scipy.stats.gamma.logpdf(x, a=2.5, loc=m, scale=s)", dtypes=F64_ONLY,
      x=uniform(2.0, 4.0, 4), m=uniform(-1.0, 1.0), s=positive())
    MVN = registered(ST.multivariate_normal.logpdf)
    S("scipy.stats.multivariate_normal.logpdf", MVN,
      "scipy.stats.multivariate_normal.logpdf(x, m, c)", dtypes=F64_ONLY, x=normal(4, 3),
      m=normal(3), c=spd(3))
    S("scipy.stats.multivariate_normal.logpdf-one", MVN,
      "scipy.stats.multivariate_normal.logpdf(x, mean=m, cov=c)", dtypes=F64_ONLY,
      x=normal(2), m=normal(2), c=spd(2))
    S("scipy.stats.multivariate_normal.logpdf-batch", MVN,
      "scipy.stats.multivariate_normal.logpdf(x, m, c)", dtypes=F64_ONLY, x=normal(2, 3, 2),
      m=normal(2), c=positive(2))
    S("scipy.stats.multivariate_normal.logpdf-scalar-cov", MVN,
      "scipy.stats.multivariate_normal.logpdf(x, m, c)", dtypes=F64_ONLY, x=normal(3, 2),
      m=normal(2), c=positive())
    CONV = registered(scipy.signal.convolve)
    for mode in ("full", "same", "valid"):
        for sa, sb in (((5,), (3,)), ((3, 4), (2, 2)), ((2, 3), (3, 4))):
            if mode == "valid" and sa == (2, 3):
                continue  # neither input fits in the other
            S(f"scipy.signal.convolve-{mode}-{sa}-{sb}", CONV,
              f"scipy.signal.convolve(x, y, '{mode}')", x=normal(*sa), y=normal(*sb))
    S("scipy.signal.convolve-method", CONV, "scipy.signal.convolve(x, y, method='fft')",
      x=normal(6), y=normal(3))
    for name, sa, sb in (("fftconvolve", (5,), (3,)), ("oaconvolve", (3, 4), (2, 2)),
                         ("convolve2d", (3, 4), (2, 3))):
        prim = registered(getattr(scipy.signal, name))
        for mode in ("full", "same", "valid"):
            S(f"scipy.signal.{name}-{mode}-{sa}-{sb}", prim,
              f"scipy.signal.{name}(x, y, '{mode}')", x=normal(*sa), y=normal(*sb))
    S("scipy.signal.convolve2d-keyword", registered(scipy.signal.convolve2d),
      "scipy.signal.convolve2d(x, y, mode='same')", x=normal(2, 3), y=normal(3, 3))
    S("signal_convolve", srcgrad.runtime.signal_convolve,
      "srcgrad.runtime.signal_convolve(x, y, 'same')", x=normal(3, 3), y=normal(2, 3))
    SINV = registered(scipy.linalg.inv)
    S("scipy.linalg.inv", SINV, "scipy.linalg.inv(x)", x=wellcond(3))
    S("scipy.linalg.inv-batched", SINV, "scipy.linalg.inv(x, check_finite=False)",
      x=wellcond(3, 2))
    SDET = registered(scipy.linalg.det)
    S("scipy.linalg.det", SDET, "scipy.linalg.det(x)", x=wellcond(3))
    S("scipy.linalg.det-batched", SDET, "scipy.linalg.det(x)", x=wellcond(3, 2))
    TRSV = registered(scipy.linalg.solve_triangular)
    for args, sy in (("lower=True", (3,)), ("", (3, 2)), ("trans=1, lower=True", (3,)),
                     ("trans='T'", (3, 2)), ("lower=True, unit_diagonal=True", (3, 2))):
        S(f"scipy.linalg.solve_triangular-{args}-{sy}", TRSV,
          f"scipy.linalg.solve_triangular(x, y, {args})", x=wellcond(3), y=normal(*sy))
    SEIGH = registered(scipy.linalg.eigh)  # review s37 R5-21: the eigenvalues alone
    S("scipy.linalg.eigh-eigvals_only", SEIGH, "scipy.linalg.eigh(x, eigvals_only=True)",
      x=normal(3, 3))
    S("scipy.linalg.eigh-eigvals_only-upper", SEIGH,
      "scipy.linalg.eigh(x, lower=False, eigvals_only=True)", x=normal(3, 3))
    N("srcgrad.runtime.eigenvalues_only", registered(srcgrad.runtime.eigenvalues_only),
      "srcgrad.runtime.eigenvalues_only(None, True, 1, None, None)")
    TOEP = registered(scipy.linalg.toeplitz)  # review s37 R5-21
    S("scipy.linalg.toeplitz", TOEP, "scipy.linalg.toeplitz(x)", x=normal(4))
    S("scipy.linalg.toeplitz-row", TOEP, "scipy.linalg.toeplitz(x, y)", x=normal(3), y=normal(5))
    S("scipy.linalg.toeplitz-batched", TOEP, "scipy.linalg.toeplitz(x, y)", x=normal(2, 3),
      y=normal(2, 2))
    S("scipy.linalg.toeplitz-batched-column", TOEP, "scipy.linalg.toeplitz(x)", x=normal(2, 3))
    SSOLVE = registered(scipy.linalg.solve)  # review s37 R5-2: each structure's entries
    for args, sx, sy in (("", wellcond(3), (3,)), ("assume_a='gen'", wellcond(3), (3, 2)),
                         ("assume_a='pos'", spd(3), (3,)),
                         ("assume_a='pos', lower=True", spd(3), (3, 2)),
                         ("assume_a='sym'", wellcond(3), (3,)),
                         ("assume_a='her', lower=True", wellcond(3), (3,)),
                         ("assume_a='diagonal'", wellcond(3), (3,)),
                         ("assume_a='upper triangular'", wellcond(3), (3, 2)),
                         ("assume_a='lower triangular', transposed=True", wellcond(3), (3,)),
                         ("assume_a='tridiagonal'", wellcond(4), (4,)),
                         ("transposed=True", wellcond(3), (3, 2))):
        S(f"scipy.linalg.solve-{args}-{sy}", SSOLVE,
          f"scipy.linalg.solve(x, y{', ' + args if args else ''})", x=sx, y=normal(*sy))
    CHOL = registered(scipy.linalg.cholesky)
    S("scipy.linalg.cholesky", CHOL, "scipy.linalg.cholesky(x)", x=spd(3))
    S("scipy.linalg.cholesky-lower", CHOL, "scipy.linalg.cholesky(x, lower=True)", x=spd(3))
    CHOF = registered(scipy.linalg.cho_factor)
    S("scipy.linalg.cho_factor", CHOF, "scipy.linalg.cho_factor(x)[0]",
      call="scipy.linalg.cho_factor(x)", x=spd(3))
    S("scipy.linalg.cho_factor-lower", CHOF, "scipy.linalg.cho_factor(x, lower=True)[0]",
      call="scipy.linalg.cho_factor(x, lower=True)", x=spd(3))
    CHOS = registered(scipy.linalg.cho_solve)
    for low, sy in (("False", (3,)), ("True", (3, 2))):
        S(f"scipy.linalg.cho_solve-{low}-{sy}", CHOS, f"scipy.linalg.cho_solve((x, {low}), y)",
          x=wellcond(3), y=normal(*sy))


# --- shapes --------------------------------------------------------------------------
for e, shape in (("np.reshape(x, (3, 4))", (2, 6)), ("np.reshape(x, -1)", (2, 3)),
                 ("np.reshape(x, (4, 3), order='F')", (2, 6)), ("np.ravel(x)", (2, 3)),
                 ("np.ravel(x, order='F')", (2, 3)), ("np.squeeze(x)", (1, 3, 1, 2)),
                 ("np.squeeze(x, axis=2)", (1, 3, 1, 2)), ("np.expand_dims(x, 0)", (2, 3)),
                 ("np.expand_dims(x, (0, 2))", (2, 3)), ("np.atleast_1d(x)", ()),
                 ("np.atleast_2d(x)", (3,)), ("np.swapaxes(x, 0, 2)", (2, 3, 4)),
                 ("np.moveaxis(x, 0, -1)", (2, 3, 4)), ("np.flip(x)", (2, 3)),
                 ("np.moveaxis(x, (0, 1), (2, 0))", (2, 3, 4)), ("np.flip(x, 0)", (2, 3)),
                 ("np.flip(x, axis=(0, 2))", (2, 3, 4)), ("np.tile(x, 2)", (2, 3)),
                 ("np.broadcast_to(x, (2, 3))", (3,)), ("np.broadcast_to(x, (2, 3, 4))", (3, 1)),
                 ("np.tile(x, (2, 1))", (2, 3)), ("np.tile(x, (2, 1, 2))", (2, 3)),
                 ("np.repeat(x, 2)", (2, 3)), ("np.repeat(x, 3, axis=1)", (2, 3)),
                 ("np.repeat(x, [1, 0, 2], axis=-1)", (2, 3)), ("np.repeat(x, [2, 1])", (2,))):
    prim = eval(e.split("(")[0], {"np": np})  # noqa: S307 - trusted table
    S(f"{e}-{shape}", prim, e, x=normal(*shape))
S("np.broadcast_arrays", np.broadcast_arrays, "np.broadcast_arrays(x, y)", x=normal(3, 1),
  y=normal(4))
S("np.broadcast_arrays-three", np.broadcast_arrays, "np.broadcast_arrays(x, y, z)", x=normal(2, 3),
  y=normal(), z=normal(1, 3))
for e, sx, sv in (("np.insert(x, 1, v)", (2, 3), ()), ("np.insert(x, 2, v, axis=1)", (2, 3), (2,)),
                  ("np.insert(x, [0, 2, 2], v, axis=0)", (3, 2), (3, 2)),
                  ("np.insert(x, [1, 3], v)", (4,), (2,)),
                  ("np.insert(x, 0, v, axis=0)", (2, 3), (1, 3)),
                  ("np.insert(x, slice(0, 2), v, axis=-1)", (2, 3), (2, 1))):
    S(f"{e}-{sx}-{sv}", np.insert, e, x=normal(*sx), v=normal(*sv))
for e, shape in (("np.asfortranarray(x)", (2, 3)), ("np.ascontiguousarray(x)", (3, 2)),
                 ("np.asfortranarray(x, dtype=x.dtype)", (2, 3))):
    prim = eval(e.split("(")[0], {"np": np})  # noqa: S307 - trusted table
    S(f"{e}-{shape}", prim, e, x=normal(*shape))
S("np.ascontiguousarray-transposed", np.ascontiguousarray, "np.ascontiguousarray(x.T)",
  call="np.ascontiguousarray(x)", x=normal(2, 3))
S("np.atleast_1d-multi", np.atleast_1d, "np.atleast_1d(x, y)", x=normal(), y=normal(2))
S("np.atleast_2d-multi", np.atleast_2d, "np.atleast_2d(x, y)", x=normal(3), y=normal(2, 2))
for e, sx, sy in (("np.concatenate([x, y])", (2, 3), (4, 3)),
                  ("np.concatenate([x, y], axis=1)", (2, 3), (2, 1)),
                  ("np.concatenate((x, y), axis=None)", (2, 3), (4,)),
                  ("np.concatenate([x, y, x2], axis=-1)", (2, 3), (2, 2)),
                  ("np.stack([x, y])", (2, 3), (2, 3)),
                  ("np.stack((x, y), axis=-1)", (2, 3), (2, 3)),
                  ("np.hstack([x, y])", (3,), (2,)), ("np.hstack([x, y])", (2, 3), (2, 1)),
                  ("np.hstack((x, y))", (), ()), ("np.vstack([x, y])", (3,), (3,)),
                  ("np.vstack([x, y])", (2, 3), (1, 3))):
    extra = {"x2": normal(2, 4)} if "x2" in e else {}
    prim = eval(e.split("(")[0], {"np": np})  # noqa: S307 - trusted table
    S(f"{e}-{sx}-{sy}", prim, e, x=normal(*sx), y=normal(*sy), **extra)

# --- indexing ------------------------------------------------------------------------
for e, shape in (("x[1]", (4,)), ("x[-1]", (3, 2)), ("x[1:3]", (5,)), ("x[::2]", (5,)),
                 ("x[::-1]", (4,)), ("x[4:0:-2]", (6,)), ("x[:, 0]", (3, 4)), ("x[1, 2]", (3, 4)),
                 ("x[[0, 2, 0]]", (4,)), ("x[[0, 2, 0], 1:]", (3, 4)), ("x[None, :, 1]", (3, 4)),
                 ("x[..., 0]", (2, 3, 4)), ("x[1, ..., None]", (2, 3)),
                 ("x[np.array([1, 1, 0]), np.array([0, 2, 2])]", (3, 4)),
                 ("x[:, [2, 2]]", (3, 4)), ("x[()]", ())):
    S(f"getitem-{e}", operator.getitem, e, x=normal(*shape))
S("getitem-mask", operator.getitem, "x[m]", x=normal(3, 4),
  m=fixed(np.array([[True, False, True, False], [False] * 4, [True] * 4])))
S("getitem-int-array", operator.getitem, "x[i]", x=normal(5), i=fixed(np.array([4, 0, 4, 4])))
S("getitem-mask-tuple", operator.getitem, "x[m, 1:]", x=normal(3, 4),
  m=fixed(np.array([True, False, True])))

# --- construction --------------------------------------------------------------------
S("np.array-scalars", np.array, "np.array([x, y, z])", x=normal(), y=normal(), z=normal())
S("np.array-rows", np.array, "np.array((x, y))", x=normal(3), y=normal(3))
S("np.array-array", np.array, "np.array(x)", x=normal(2, 3))
S("np.asarray", np.asarray, "np.asarray(x)", x=normal(2, 3))
S("np.asarray-list", np.asarray, "np.asarray([x, y])", x=normal(2), y=normal(2))
S("np.full", np.full, "np.full((2, 3), c)", c=normal())
S("np.full-bcast", np.full, "np.full((2, 3), c)", c=normal(3))
S("np.full_like", np.full_like, "np.full_like(a, c)", a=fixed(np.zeros((2, 3))), c=normal())
S("np.full_like-dtype", np.full_like, "np.full_like(a, c, dtype=np.float64)",
  a=fixed(np.zeros((2, 3), dtype=int)), c=normal())
S("np.copy", np.copy, "np.copy(x)", x=normal(2, 3))

# --- ndarray methods and attributes --------------------------------------------------
for e, shape in (("x.T", (3, 4)), ("x.T", (2, 3, 4)), ("x.mT", (2, 3, 4)),
                 ("x.reshape(3, 4)", (2, 6)), ("x.reshape((3, 4))", (2, 6)),
                 ("x.reshape(-1, order='F')", (2, 3)), ("x.ravel()", (2, 3)),
                 ("x.flatten()", (2, 3)), ("x.squeeze()", (1, 3, 1)), ("x.squeeze(0)", (1, 3)),
                 ("x.transpose()", (2, 3, 4)), ("x.transpose(1, 0, 2)", (2, 3, 4)),
                 ("x.transpose((2, 0, 1))", (2, 3, 4)), ("x.swapaxes(0, 1)", (2, 3)),
                 ("x.copy()", (2, 3)), ("x.astype(np.float64)", (2, 3)),
                 ("x.astype(np.float64, copy=False)", (2, 3)),
                 ("x.astype(np.float64, order='C', casting='same_kind')", (2, 3))):
    S(f"ndarray-{e}-{shape}", getattr(np.ndarray, e[2:].split("(")[0]), e, x=normal(*shape))
S("np.astype-float64", np.astype, "np.astype(x, np.float64)", x=normal(2, 3))
S("ndarray-item", np.ndarray.item, "x.item()", x=normal(1, 1))
S("np.astype-copy", np.astype, "np.astype(x, np.float64, copy=False)", x=normal(2, 3))

# --- math module and builtins (Python floats) ----------------------------------------
MATH = {"exp": (-1, 1), "expm1": (-1, 1), "log": (0.5, 2), "log1p": (0.5, 2), "log2": (0.5, 2),
        "log10": (0.5, 2), "sqrt": (0.5, 2), "sin": (-2, 2), "cos": (-2, 2), "tan": (-1, 1),
        "asin": (-0.9, 0.9), "acos": (-0.9, 0.9), "atan": (-2, 2), "sinh": (-1, 1),
        "cosh": (-1, 1), "tanh": (-1, 1), "asinh": (-1, 1), "acosh": (1.2, 3),
        "atanh": (-0.9, 0.9), "fabs": (0.3, 2), "erf": (-1, 1), "erfc": (-1, 1),
        "lgamma": (0.2, 6), "gamma": (0.3, 4), "radians": (-90, 90), "degrees": (-2, 2)}
F64 = ("float64",)
for fn, (lo, hi) in MATH.items():
    S(f"math.{fn}", getattr(math, fn), f"math.{fn}(x)", dtypes=F64, x=pyfloat(lo, hi))
S("math.fabs-neg", math.fabs, "math.fabs(x)", dtypes=F64, x=pyfloat(-2, -0.3))
S("math.log-base", math.log, "math.log(x, 2)", dtypes=F64, x=pyfloat(0.5, 2))
S("math.lgamma-neg", math.lgamma, "math.lgamma(x)", dtypes=F64, x=pyfloat(-2.9, -2.1))
for fn in ("pow", "atan2", "hypot"):
    S(f"math.{fn}", getattr(math, fn), f"math.{fn}(x, y)", dtypes=F64, x=pyfloat(0.5, 2),
      y=pyfloat(-1, 1))
S("math.prod", math.prod, "math.prod([x, y, z])", dtypes=F64, x=pyfloat(0.5, 2),
  y=pyfloat(-1, 1), z=pyfloat(1, 3))
S("math.prod-arrays", math.prod, "math.prod([x, y], start=s)", x=normal(3), y=normal(2, 3),
  s=normal())
S("math.fmod", math.fmod, "math.fmod(x, y)", dtypes=F64, x=pyfloat(1.1, 1.9), y=pyfloat(0.5, 0.55))
S("math.copysign", math.copysign, "math.copysign(x, y)", dtypes=F64, x=pyfloat(0.5, 2),
  y=pyfloat(-1, -0.2))
S("abs-float", abs, "abs(x)", dtypes=F64, x=pyfloat(-2, -0.3))
S("abs-array", abs, "abs(x)", x=away(2, 3))
S("float-float", float, "float(x)", dtypes=F64, x=pyfloat(-1, 1))
S("complex-builtin", complex, "np.abs(complex(x, y) * (0.5 - 1.5j) + 1j) ** 2",
  call="complex(x, y)", dtypes=F64, x=normal(), y=normal())
S("float-0d", float, "float(x)", x=normal())
S("pow-builtin", pow, "pow(x, 3)", x=normal(3))
S("pow-builtin-xy", pow, "pow(x, y)", dtypes=F64, x=pyfloat(0.5, 2), y=pyfloat(-1, 1))
S("max-builtin", max, "max(x, y)", dtypes=F64, x=pyfloat(0, 1), y=pyfloat(2, 3))
S("min-builtin", min, "min(x, y)", dtypes=F64, x=pyfloat(0, 1), y=pyfloat(2, 3))
S("sum-builtin", sum, "sum([x, y, x])", x=normal(3), y=normal(3))
S("np.float64", np.float64, "np.float64(x)", dtypes=F64, x=pyfloat(-1, 1))
S("list-builtin", list, "list(x)", x=normal(3, 2))
S("tuple-builtin", tuple, "tuple(x)", x=normal(2, 3))
S("sorted-builtin", sorted, "sorted([x, y, z])", dtypes=F64, x=pyfloat(0, 1), y=pyfloat(2, 3),
  z=pyfloat(-2, -1))
S("sequence", sequence, "sequence(x)", x=normal(3, 2))
S("sequence_to_stop", srcgrad.runtime.sequence_to_stop,
  "srcgrad.runtime.sequence_to_stop(x)", x=normal(3, 2))
S("snapshot", snapshot, "snapshot(x)", x=normal(3, 2))
# x += v on an array: x + v in x's type and dtype (a 0-d array stays one; float32 stays)
S("in_place", srcgrad.runtime.in_place, "srcgrad.runtime.in_place(t, y)", t=normal(2, 3),
  y=fixed(np.zeros((2, 3))))
S("in_place-0d", srcgrad.runtime.in_place, "srcgrad.runtime.in_place(t, y)", t=normal(),
  y=fixed(np.zeros(())))
S("in_place-float32", srcgrad.runtime.in_place, "srcgrad.runtime.in_place(t, y)", dtypes=F64,
  t=normal(3), y=fixed(np.zeros(3, np.float32)))
S("in_place-number", srcgrad.runtime.in_place, "srcgrad.runtime.in_place(t, y)", dtypes=F64,
  t=pyfloat(-1, 1), y=fixed(0.5))
# the helpers generated tangent code calls (differentiated again for Hessians)
S("expand", srcgrad.runtime.expand, "srcgrad.runtime.expand(t, y)", t=normal(3),
  y=fixed(np.zeros((2, 3))))
S("fresh_tangent", srcgrad.runtime.fresh_tangent, "srcgrad.runtime.fresh_tangent(t, y)",
  t=normal(3), y=fixed(np.zeros((2, 3))))
S("tangent_like", srcgrad.runtime.tangent_like, "srcgrad.runtime.tangent_like(t, y)",
  t=normal(2, 3), y=fixed(np.zeros((2, 3))))
S("add_parts", srcgrad.runtime.add_parts, "srcgrad.runtime.add_parts(t, y)", t=normal(2, 3),
  y=normal(2, 3))
S("memory_ravel", srcgrad.runtime.memory_ravel, "srcgrad.runtime.memory_ravel(t, y, 'K')",
  t=normal(2, 3, 2), y=fixed(np.zeros((3, 4, 2))[:, ::2].transpose(2, 0, 1)))
S("memory_unravel", srcgrad.runtime.memory_unravel,
  "srcgrad.runtime.memory_unravel(t, y, 'A')", t=normal(6), y=fixed(np.zeros((2, 3)).T))
S("periodic_knots", srcgrad.runtime.periodic_knots, "srcgrad.runtime.periodic_knots(x, 2.0)[0]",
  call="srcgrad.runtime.periodic_knots(x, 2.0)", dtypes=F64, x=distinct(5))
S("sequence_tangent", srcgrad.runtime.sequence_tangent,
  "srcgrad.runtime.sequence_tangent(t, y)", t=normal(2, 3), y=fixed((0.0, 0.0)))
S("written_tangent", srcgrad.runtime.written_tangent, "srcgrad.runtime.written_tangent(t, y)",
  t=normal(3), y=fixed(np.zeros(3)))
S("written_tangent-int", srcgrad.runtime.written_tangent,
  "srcgrad.runtime.written_tangent(t, y)", t=normal(3), y=fixed(np.zeros(3, dtype=int)))
# np.r_[...] / np.c_[...] as normalize/index_tricks.py writes them (review s36 R4-8)
S("index_joined-r", srcgrad.runtime.index_joined,
  "srcgrad.runtime.index_joined(np.r_, (x, c, y))", x=normal(3), c=normal(), y=normal(2))
S("index_joined-c", srcgrad.runtime.index_joined,
  "srcgrad.runtime.index_joined(np.c_, (x, y))", x=normal(3), y=normal(3, 2))
S("joined_tangent", srcgrad.runtime.joined_tangent,
  "srcgrad.runtime.joined_tangent(np.r_, (a, slice(0, 2, None)), (t, 0.0))", dtypes=F64,
  t=normal(3), a=fixed(np.zeros(3)))
# p._replace(w=x) on a named tuple whose class is known when the code runs
Pair = collections.namedtuple("Pair", "w b")
PAIR = Pair(np.array([1.0, -2.0, 0.5]), np.array([0.5, 1.5, -1.0]))
S("replaced", srcgrad.runtime.replaced, "srcgrad.runtime.replaced(('w',), p, x).w",
  call="srcgrad.runtime.replaced(('w',), p, x)", dtypes=F64, p=fixed(PAIR), x=normal(3))
S("replaced_tangent", srcgrad.runtime.replaced_tangent,
  "srcgrad.runtime.replaced_tangent(p, ('w',), (p, p.w), (p, t)).w",
  call="srcgrad.runtime.replaced_tangent(p, ('w',), (p, p.w), (p, t))", dtypes=F64,
  p=fixed(PAIR), t=normal(3))
S("private_copy", srcgrad.runtime.private_copy, "srcgrad.runtime.private_copy(x)", x=normal(3, 2))
S("kept_apart", srcgrad.runtime.kept_apart, "srcgrad.runtime.kept_apart(x)", x=normal(3, 2))
S("on_grad", srcgrad.on_grad, "srcgrad.on_grad(x, srcgrad.stop_gradient)", x=normal(3, 2))
S("op-mod", operator.mod, "x % y", x=uniform(0.1, 0.9, 3, 4), y=uniform(1.5, 2.0, 3, 4))
S("np.remainder", np.remainder, "np.remainder(x, y)", x=uniform(2.1, 2.9, 3), y=uniform(1.5, 2.0, 3))
S("np.fmod", np.fmod, "np.fmod(x, y)", x=uniform(-2.9, -2.1, 3), y=uniform(1.5, 2.0, 3))

# --- non-differentiable primitives ---------------------------------------------------
_X, _Y = normal(3, 4), normal(3, 4)
_I, _J = fixed(np.array([3, 5, 6])), fixed(np.array([1, 2, 3]))
for op, sym in ((operator.floordiv, "//"), (operator.eq, "=="),
                (operator.ne, "!="), (operator.lt, "<"), (operator.le, "<="),
                (operator.gt, ">"), (operator.ge, ">="), (operator.is_, "is"),
                (operator.is_not, "is not")):
    N(f"op-{op.__name__}", op, f"x {sym} y", x=_X, y=_Y)
for op, e in ((operator.and_, "i & j"), (operator.or_, "i | j"), (operator.xor, "i ^ j"),
              (operator.lshift, "i << j"), (operator.rshift, "i >> j"), (operator.invert, "~i")):
    N(f"op-{op.__name__}", op, e, i=_I, j=_J)
N("op-not_", operator.not_, "not x", x=fixed(0.5))
N("op-contains", operator.contains, "y in x", x=_X, y=fixed(0.5))
for uf in (np.sign, np.floor, np.ceil, np.rint, np.trunc, np.isnan, np.isfinite, np.isinf,
           np.signbit, np.logical_not, np.round, np.around, np.nonzero, np.flatnonzero,
           np.argmax, np.argmin, np.argsort, np.count_nonzero, np.any, np.all, np.shape,
           np.ndim, np.size, np.zeros_like, np.ones_like, np.empty_like):
    N(f"np.{uf.__name__}", uf, f"np.{uf.__name__}(x)", x=_X)
for uf in (np.nanargmax, np.nanargmin):
    N(f"np.{uf.__name__}", uf, f"np.{uf.__name__}(x)", x=_X)
N("np.fix", np.fix, "np.fix(x)", x=_X)
N("np.spacing", np.spacing, "np.spacing(x)", x=_X)
N("np.lexsort", np.lexsort, "np.lexsort((x, y))", x=_X, y=_Y)
N("ndarray.round", np.ndarray.round, "x.round(1)", x=_X)
N("np.searchsorted", np.searchsorted, "np.searchsorted(k, x)", k=fixed(np.arange(-2.0, 3.0)),
  x=_X)
for uf in (np.greater, np.greater_equal, np.less, np.less_equal, np.equal, np.not_equal,
           np.logical_and, np.logical_or, np.logical_xor, np.floor_divide,
           np.heaviside, np.isclose, np.allclose, np.array_equal):
    N(f"np.{uf.__name__}", uf, f"np.{uf.__name__}(x, y)", x=_X, y=_Y)
for uf in (np.bitwise_and, np.bitwise_or, np.bitwise_xor, np.left_shift, np.right_shift):
    N(f"np.{uf.__name__}", uf, f"np.{uf.__name__}(i, j)", i=_I, j=_J)
N("np.invert", np.invert, "np.invert(i)", i=_I)
for e in ("np.zeros((2, 3))", "np.ones(3)", "np.empty(2)", "np.eye(3)", "np.identity(2)"):
    N(e, eval(e.split("(")[0], {"np": np}), e)  # noqa: S307 - trusted table
for attr in ("shape", "ndim", "size", "dtype", "itemsize", "nbytes", "strides"):
    N(f"ndarray.{attr}", getattr(np.ndarray, attr), f"x.{attr}", x=_X)
for meth in ("argmax", "argmin", "argsort", "nonzero", "any", "all"):
    N(f"ndarray.{meth}", getattr(np.ndarray, meth), f"x.{meth}()", x=_X)
for fn in ("floor", "ceil", "trunc", "isnan", "isinf", "isfinite"):
    N(f"math.{fn}", getattr(math, fn), f"math.{fn}(x)", x=pyfloat(-2, 2))
N("round", round, "round(x)", x=pyfloat(-2, 2))
N("int", int, "int(x)", x=pyfloat(-2, 2))
N("len", len, "len(x)", x=_X)
N("range", range, "range(n)", n=fixed(3))
N("stop_gradient", srcgrad.stop_gradient, "srcgrad.stop_gradient(x)", x=_X)
N("keys_of", keys_of, "keys_of(d)", d=fixed({"a": 1.0}))
N("layout_order", srcgrad.runtime.layout_order, "srcgrad.runtime.layout_order(x, 'A')",
  x=normal(2, 3))
N("sorted_order", srcgrad.runtime.sorted_order, "srcgrad.runtime.sorted_order(x)",
  x=normal(4))
N("zero_tangent", srcgrad.runtime.zero_tangent, "srcgrad.runtime.zero_tangent(x)", x=_X)
N("missing_tangent", srcgrad.runtime.missing_tangent,  # a tangent that does not exist
  "srcgrad.runtime.missing_tangent('no derivative')")
N("along_axis_index", srcgrad.runtime.along_axis_index,
  "srcgrad.runtime.along_axis_index(x, i, 1)", x=_X, i=fixed(np.array([[0], [1], [3]])))
N("normal_shape", srcgrad.runtime.normal_shape, "srcgrad.runtime.normal_shape(x, 1.0)", x=_X)
N("size_of", srcgrad.runtime.size_of, "srcgrad.runtime.size_of(x)", x=_X)  # np.size, Dask lazy
# what tangent code calls, differentiated again by hvp (tests/api/test_hvp_coverage.py)
N("np.result_type", np.result_type, "np.result_type(x)", x=_X)
N("same_window", srcgrad.runtime.same_window, "srcgrad.runtime.same_window(x, x[1:])",
  x=normal(4))
N("taken_again", srcgrad.runtime.taken_again,
  "srcgrad.runtime.taken_again(x, x, x, None, 'never raised')", x=normal(4))
N("held_at", srcgrad.runtime.held_at, "srcgrad.runtime.held_at([x], x, x, None, 'never raised')",
  x=normal(3))
N("index_of_max", srcgrad.runtime.index_of_max, "srcgrad.runtime.index_of_max(x)", x=normal(4))
N("index_of_min", srcgrad.runtime.index_of_min, "srcgrad.runtime.index_of_min(x)", x=normal(4))
S("signum", srcgrad.runtime.signum, "srcgrad.runtime.signum(x)", x=away(3, 4))  # complex: test_numpy_breadth
S("only_where", srcgrad.runtime.only_where, "srcgrad.runtime.only_where(x, c)", x=normal(2, 3),
  c=fixed(np.array([[True, False, True], [False, False, True]])))
S("only_where-bcast", srcgrad.runtime.only_where, "srcgrad.runtime.only_where(x, c)",
  x=normal(3), c=fixed(np.array([[True, False, True], [False, False, True]])))

# --- the rest of the NumPy functions autograd differentiates (issue 15) -------------------
for e, shape in (("np.radians(x)", (3, 4)), ("np.degrees(x)", (3, 4)), ("np.sinc(x)", (3, 4)),
                 ("np.real(x)", (3, 4)), ("np.imag(x)", (3, 4)), ("np.conj(x)", (3, 4)),
                 ("np.conjugate(x)", (2,)), ("np.real_if_close(x)", (3, 4)),
                 ("np.nan_to_num(x)", (3, 4)), ("np.nan_to_num(x, nan=1.0, posinf=2.0)", (5,))):
    prim = eval(e.split("(")[0], {"np": np})  # noqa: S307 - trusted table
    S(f"{e}-{shape}", prim, e, x=normal(*shape))
S("np.sinc-at-zero", np.sinc, "np.sinc(x)", x=with_zeros((5,), 2))
# the derivatives of np.sinc (its rule's helper): a series where |pi x| < 1, a closed form beyond
for k in (1, 2, 3):
    S(f"sinc_derivative-{k}", srcgrad.runtime.sinc_derivative,
      f"srcgrad.runtime.sinc_derivative({k}, x)", x=with_zeros((3, 4), (0, 1)))
S("np.angle", np.angle, "np.angle(x)", x=away(3, 4))
S("np.angle-deg", np.angle, "np.angle(x, deg=True)", x=away(5))
S("np.nan_to_num-nonfinite", np.nan_to_num, "np.nan_to_num(x, posinf=9.0, neginf=-9.0)",
  x=Input(lambda rng: np.array([1.5, np.nan, -0.5, np.inf, -np.inf, 0.25])))
for e, shape in (("x.real", (3, 4)), ("x.imag", (3, 4)), ("x.conj()", (3, 4)),
                 ("x.conjugate()", (2, 3)), ("x.diagonal()", (3, 4)),
                 ("x.diagonal(1, 1, 2)", (2, 3, 4))):
    S(f"ndarray-{e}-{shape}", getattr(np.ndarray, e[2:].split("(")[0]), e, x=normal(*shape))
# a float32 result rounds: tiny inputs keep the rounding below the differences' step, and
# one element keeps it from cancelling in the dot-product identity
S("np.float32-cast", np.float32, "np.float32(x)", dtypes=F64, x=uniform(-1e-5, 1e-5, 1))
S("np.float32-cast-float", np.float32, "np.float32(x)", dtypes=F64, x=pyfloat(-1e-5, 1e-5))
for e, shape in (("np.atleast_3d(x)", ()), ("np.atleast_3d(x)", (3,)),
                 ("np.atleast_3d(x)", (2, 3)), ("np.fliplr(x)", (2, 3)),
                 ("np.flipud(x)", (3,)), ("np.flipud(x)", (2, 3)), ("np.rot90(x)", (2, 3)),
                 ("np.rot90(x, 2)", (2, 3)), ("np.rot90(x, -1, axes=(1, 2))", (2, 3, 4)),
                 ("np.roll(x, 1)", (5,)), ("np.roll(x, 3)", (2, 3)),
                 ("np.roll(x, -2, axis=0)", (4, 3)), ("np.roll(x, (1, 2), axis=(0, 1))", (3, 4)),
                 ("np.rollaxis(x, 2)", (2, 3, 4)), ("np.rollaxis(x, 0, 3)", (2, 3, 4)),
                 ("np.rollaxis(x, -1, 1)", (2, 3, 4)),
                 ("np.diag(x)", (4,)), ("np.diag(x, 1)", (3,)), ("np.diag(x, k=-2)", (2,)),
                 ("np.diag(x)", (3, 3)), ("np.diag(x, 1)", (3, 4)), ("np.diag(x, -1)", (4, 2)),
                 ("np.diagonal(x)", (3, 3)), ("np.diagonal(x, -1)", (4, 3)),
                 ("np.diagonal(x, 0, 2, 0)", (3, 2, 4)),
                 ("np.diagonal(x, axis1=1, axis2=2)", (2, 3, 3)),
                 ("np.tril(x)", (3, 4)), ("np.tril(x, 1)", (4, 3)), ("np.tril(x, k=-1)", (2, 3, 3)),
                 ("np.tril(x)", (3,)), ("np.triu(x)", (3, 3)), ("np.triu(x, -1)", (3, 4)),
                 ("np.triu(x, 2)", (4,)),
                 ("np.take_along_axis(x, np.array([[0, 2, 2], [1, 0, 1]]), 1)", (2, 4)),
                 ("np.take_along_axis(x, np.array([[1], [0], [0]]), axis=0)", (3, 2)),
                 ("np.take_along_axis(x, np.array([3, 3, 0]), None)", (2, 2)),
                 ("np.pad(x, 1)", (2, 3)), ("np.pad(x, ((1, 2), (0, 1)))", (2, 3)),
                 ("np.pad(x, (2, 1), constant_values=3.0)", (4,)),
                 ("np.pad(x, 2, 'constant', constant_values=(1.0, -1.0))", (3,)),
                 ("np.pad(x, 2, mode='edge')", (2, 3)), ("np.pad(x, (1, 3), 'wrap')", (2, 3)),
                 ("np.pad(x, 2, 'reflect')", (4, 3)),
                 ("np.pad(x, ((3, 0), (1, 2)), 'symmetric')", (2, 3)),
                 ("np.diff(x)", (5,)), ("np.diff(x, 2)", (6,)), ("np.diff(x, axis=0)", (3, 4)),
                 ("np.diff(x, n=2, axis=1)", (2, 5)), ("np.diff(x, prepend=0.5)", (2, 4)),
                 ("np.diff(x, append=np.array([[1.0], [2.0]]), axis=-1)", (2, 3)),
                 ("np.diff(x, 2, 0, prepend=np.zeros((1, 3)), append=1.0)", (3, 3)),
                 ("np.gradient(x)", (6,)), ("np.gradient(x, 0.5)", (4,)),
                 ("np.gradient(x, edge_order=2)", (7,)),
                 ("np.gradient(x, np.array([0.0, 0.5, 1.5, 1.75, 3.0]))", (5,)),
                 ("np.gradient(x, np.array([0.0, 0.5, 1.5, 1.75, 3.0]), edge_order=2)", (5,)),
                 ("np.gradient(x, axis=1)", (3, 6)),
                 ("np.gradient(x, 2.0, axis=0, edge_order=2)", (5, 2)),
                 ("np.sort(x)", (6,)), ("np.sort(x, axis=0)", (4, 3)),
                 ("np.sort(x, axis=None)", (2, 3)),
                 ("np.partition(x, 2)", (6,)), ("np.partition(x, (0, 3), axis=0)", (5, 2)),
                 ("np.partition(x, 4, axis=None)", (3, 3)),
                 ("np.diagflat(x)", (3,)), ("np.diagflat(x, 1)", (2, 2)),
                 ("np.diagflat(x, k=-2)", (3,)),
                 ("np.delete(x, 1)", (4,)), ("np.delete(x, [0, 2], axis=1)", (3, 4)),
                 ("np.delete(x, slice(0, 2), 0)", (3, 2)), ("np.delete(x, 3)", (2, 3)),
                 ("np.delete(x, np.array([True, False, True]), axis=-1)", (2, 3))):
    prim = eval(e.split("(")[0], {"np": np})  # noqa: S307 - trusted table
    S(f"{e}-{shape}", prim, e, x=distinct(*shape) if "sort" in e or "partition" in e
      else normal(*shape))
for e, shape in (("np.gradient(x)", (3, 4)), ("np.gradient(x, 0.5, 2.0)", (4, 3)),
                 ("np.gradient(x, axis=(0, 2))", (3, 2, 4)),
                 ("np.gradient(x, 1.0, np.array([0.0, 1.0, 3.0, 3.5]), edge_order=2)", (3, 4))):
    S(f"{e}-{shape}", np.gradient, f"tuple({e})", call=e, x=normal(*shape))
for e, shape in (("np.split(x, 2)", (4, 3)), ("np.split(x, [1, 3], axis=1)", (2, 5)),
                 ("np.array_split(x, 3)", (7,)), ("np.array_split(x, [2], axis=-1)", (2, 3)),
                 ("np.hsplit(x, 2)", (4,)), ("np.hsplit(x, [1])", (2, 3)),
                 ("np.vsplit(x, 2)", (4, 2)), ("np.dsplit(x, [1, 2])", (2, 2, 4))):
    prim = eval(e.split("(")[0], {"np": np})  # noqa: S307 - trusted table
    S(f"{e}-{shape}", prim, f"tuple({e})", call=e, x=normal(*shape))
for e, sx, sy in (("np.column_stack([x, y])", (3,), (3, 2)),
                  ("np.column_stack((x, y))", (3,), (3,)),
                  ("np.dstack([x, y])", (2, 3), (2, 3, 2)), ("np.dstack((x, y))", (3,), (3,)),
                  ("np.row_stack([x, y])", (3,), (2, 3)),
                  ("np.append(x, y)", (2, 3), (4,)), ("np.append(x, y, axis=0)", (2, 3), (1, 3)),
                  ("np.append(x, y, 1)", (2, 3), (2, 2)),
                  ("np.kron(x, y)", (2, 3), (2, 2)), ("np.kron(x, y)", (3,), (2,)),
                  ("np.kron(x, y)", (2,), (3, 2)), ("np.kron(x, y)", (), (3,)),
                  ("np.kron(x, y)", (2, 1, 2), (2, 3)),
                  ("np.cross(x, y)", (3,), (3,)), ("np.cross(x, y)", (4, 3), (3,)),
                  ("np.cross(x, y, axis=0)", (3, 4), (3, 4)),
                  ("np.cross(x, y, axisa=0, axisc=0)", (3, 2), (2, 3))):
    prim = eval(e.split("(")[0], {"np": np})  # noqa: S307 - trusted table
    S(f"{e}-{sx}-{sy}", prim, e, x=normal(*sx), y=normal(*sy))
S("np.append-constant", np.append, "np.append(x, 1.0)", x=normal(3))
_CONDS = fixed([np.array([[True, False, False], [False, True, False]]),
                np.array([True, True, False])])
S("np.select", np.select, "np.select(c, [x, y])", c=_CONDS, x=normal(2, 3), y=normal(2, 3))
S("np.select-default", np.select, "np.select(c, [x, y], z)", c=_CONDS, x=normal(2, 3), y=normal(3),
  z=normal(2, 1))
S("np.select-default-only", np.select, "np.select(c, [np.ones((2, 3)), np.zeros(3)], z)",
  dtypes=F64, c=_CONDS, z=normal(2, 3))
for sub, shape in (("ii->i", (3, 3)), ("ii", (4, 4)), ("iij->j", (3, 3, 2)),
                   ("jii->ij", (2, 3, 3)), ("...ii->...i", (2, 3, 3)), ("iii->", (2, 2, 2)),
                   ("ijij->ij", (2, 3, 2, 3))):
    S(f"np.einsum('{sub}')", np.einsum, f"np.einsum('{sub}', x)", x=normal(*shape))
S("np.einsum('ii,i->')", np.einsum, "np.einsum('ii,i->', x, y)", x=normal(3, 3), y=normal(3))
S("np.einsum('ij,jj->i')", np.einsum, "np.einsum('ij,jj->i', x, y)", x=normal(2, 3),
  y=normal(3, 3))
for kind in ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "bool"):
    N(f"np.{kind}-cast", getattr(np, kind), f"np.{kind}(x)", x=_X)
for fn in ("iscomplexobj", "isrealobj", "iscomplex", "isreal"):
    N(f"np.{fn}", getattr(np, fn), f"np.{fn}(x)", x=_X)
N("np.argpartition", np.argpartition, "np.argpartition(x, 1)", x=_X)
N("ndarray.argpartition", np.ndarray.argpartition, "x.argpartition(1)", x=_X)
S("match_complex", srcgrad.runtime.match_complex, "srcgrad.runtime.match_complex(t, y)",
  t=normal(2, 3), y=fixed(np.zeros((2, 3))))
N("permutation_of", srcgrad.runtime.permutation_of, "srcgrad.runtime.permutation_of(x, y)",
  x=_X, y=_Y)


# --- statistics code: quantiles, weighted means, covariances, polynomials ---------------
for e, shape in (("np.median(x)", (5,)), ("np.median(x)", (2, 4)), ("np.median(x, axis=0)", (4, 3)),
                 ("np.median(x, axis=1, keepdims=True)", (3, 4)),
                 ("np.median(x, axis=(0, 2))", (2, 3, 3)),
                 ("np.quantile(x, 0.3)", (6,)), ("np.quantile(x, [0.1, 0.5, 1.0], axis=1)", (2, 5)),
                 ("np.quantile(x, 0.75, axis=0, keepdims=True)", (4, 2)),
                 ("np.percentile(x, 40)", (3, 3)), ("np.percentile(x, [25, 90], axis=-1)", (2, 6))):
    prim = eval(e.split("(")[0], {"np": np})  # noqa: S307 - trusted table
    S(f"{e}-{shape}", prim, e, x=distinct(*shape))
for e, shape in (("np.quantile(x, 0.3, method='lower')", (6,)),
                 ("np.quantile(x, [0.1, 0.5, 0.8], axis=1, method='higher')", (2, 5)),
                 ("np.quantile(x, 0.4, axis=0, method='nearest', keepdims=True)", (6, 2)),
                 ("np.quantile(x, [0.25, 0.5], axis=(0, 2), method='midpoint')", (2, 3, 3)),
                 ("np.quantile(x, 0.7, method='hazen')", (3, 3)),
                 ("np.percentile(x, [30, 75], axis=-1, method='midpoint')", (2, 6)),
                 ("np.percentile(x, 60, method='lower')", (7,)),
                 ("np.percentile(x, 10, axis=0, method='weibull')", (5, 2))):
    S(f"{e}-{shape}", eval(e.split("(")[0], {"np": np}), e, x=distinct(*shape))  # noqa: S307
for e, sx, sw in (("np.average(x)", (2, 3), None), ("np.average(x, axis=1)", (2, 3), None),
                  ("np.average(x, weights=w)", (4,), (4,)),
                  ("np.average(x, axis=0, weights=w)", (3, 2), (3,)),
                  ("np.average(x, axis=1, weights=w, keepdims=True)", (2, 3), (2, 3)),
                  ("np.average(x, weights=w)", (2, 3), (2, 3))):
    S(f"{e}-{sx}", np.average, e, x=normal(*sx), **({"w": positive(*sw)} if sw else {}))
for e, sx, sy in (("np.cov(x)", (3, 5), None), ("np.cov(x)", (6,), None),
                  ("np.cov(x, rowvar=False)", (5, 2), None), ("np.cov(x, bias=True)", (2, 4), None),
                  ("np.cov(x, ddof=0)", (2, 5), None), ("np.cov(x, y)", (5,), (5,)),
                  ("np.cov(x, y, rowvar=False)", (4, 2), (4,)),
                  ("np.corrcoef(x)", (3, 5), None), ("np.corrcoef(x, y)", (6,), (6,)),
                  ("np.corrcoef(x, rowvar=False)", (6, 2), None)):
    prim = eval(e.split("(")[0], {"np": np})  # noqa: S307 - trusted table
    S(f"{e}-{sx}-{sy}", prim, e, x=normal(*sx), **({"y": normal(*sy)} if sy else {}))
for e, sp, sx in (("np.polyval(p, x)", (3,), (4,)), ("np.polyval(p, x)", (1,), (2, 2)),
                  ("np.polyval(p, x)", (4,), ())):
    S(f"{e}-{sp}-{sx}", np.polyval, e, p=normal(*sp), x=normal(*sx))
S("np.polyfit", np.polyfit, "np.polyfit(t, y, 2)", t=fixed(np.linspace(-1.0, 2.0, 6)),
  y=normal(6))
S("np.polyfit-columns", np.polyfit, "np.polyfit(t, y, 1)", t=fixed(np.arange(4.0)),
  y=normal(4, 3))
for e, shape in (("np.vander(x)", (3,)), ("np.vander(x, 4)", (3,)),
                 ("np.vander(x, 2, increasing=True)", (4,))):
    S(f"{e}-{shape}", np.vander, e, x=normal(*shape))
for e, sx, sy in (("np.correlate(x, y)", (5,), (3,)), ("np.correlate(x, y, 'full')", (3,), (4,)),
                  ("np.correlate(x, y, mode='same')", (4,), (4,))):
    S(f"{e}-{sx}-{sy}", np.correlate, e, x=normal(*sx), y=normal(*sy))
for e, sx, sy in (("np.meshgrid(x, y)", (3,), (2,)), ("np.meshgrid(x, y, indexing='ij')", (3,), (4,)),
                  ("np.meshgrid(x, y, sparse=True)", (2,), (3,))):
    S(f"{e}-{sx}-{sy}", np.meshgrid, f"tuple({e})", call=e, x=normal(*sx), y=normal(*sy))
S("np.meshgrid-3", np.meshgrid, "tuple(np.meshgrid(x, y, z))", call="np.meshgrid(x, y, z)",
  x=normal(2), y=normal(3), z=normal(2))
for e, sx, sy, sz in (("np.linalg.multi_dot([x, y, z])", (2, 3), (3, 4), (4, 2)),
                      ("np.linalg.multi_dot([x, y, z])", (3,), (3, 4), (4,)),
                      ("np.linalg.multi_dot([x, y])", (2, 3), (3,)) + ((),)):
    S(f"{e}-{sx}-{sy}-{sz}", np.linalg.multi_dot, e, x=normal(*sx), y=normal(*sy),
      **({"z": normal(*sz)} if sz else {}))
N("np.digitize", np.digitize, "np.digitize(x, [-0.5, 0.0, 0.5])", x=_X)
# f-strings become str.format calls (frontend/fstrings.py): text, no derivative
N("str.format", str.format, "str.format('{:.3f}', x[0, 0])", x=_X)
N("str", str, "str(x)", x=_X)
N("repr", repr, "repr(x)", x=_X)
N("format", format, "format(x[0, 0], '.2f')", x=_X)
S("in_dtype_of", srcgrad.runtime.in_dtype_of, "srcgrad.runtime.in_dtype_of(d, x)", d=normal(2, 3),
  x=fixed(np.zeros(3)))
# the linear helpers of np.average's, np.cov's and np.corrcoef's tangent rules (hvp differentiates those)
for e, sw, sa in (("srcgrad.runtime.weights_like(w, a, 1)", (3,), (2, 3)),
                  ("srcgrad.runtime.weights_like(w, a, 0)", (3,), (3, 2)),
                  ("srcgrad.runtime.weights_like(w, a, None)", (2, 3), (2, 3))):
    S(f"{e}-{sw}-{sa}", srcgrad.runtime.weights_like, e, w=normal(*sw), a=fixed(np.zeros(sa)))
for e, shape in (("srcgrad.runtime.cov_rows(x, True)", (3, 4)), ("srcgrad.runtime.cov_rows(x, False)", (4, 2)),
                 ("srcgrad.runtime.cov_rows(x, False)", (5,)), ("srcgrad.runtime.cov_rows(x, True)", (5,))):
    S(f"{e}-{shape}", srcgrad.runtime.cov_rows, e, x=normal(*shape))
S("cov_product", srcgrad.runtime.cov_product, "srcgrad.runtime.cov_product(t, xc)", t=normal(3, 5),
  xc=normal(3, 5))
S("np.histogram-weights", np.histogram, "np.histogram(x, bins=3, weights=w)", x=distinct(6),
  w=normal(6))
S("np.histogram-edges", np.histogram, "np.histogram(x, bins=[-2.0, -0.05, 0.25, 2.0], weights=w)",
  x=distinct(2, 3), w=normal(2, 3))
S("binned", srcgrad.runtime.binned, "srcgrad.runtime.binned(v, a, e)", v=normal(5),
  a=fixed(np.array([0.1, -0.7, 0.45, 0.9, 2.5])), e=fixed(np.array([-1.0, 0.0, 0.5, 1.0])))
S("quantile_jvp", srcgrad.runtime.quantile_jvp, "srcgrad.runtime.quantile_jvp(t, a, 0.3, 0, o)",
  t=normal(4, 3), a=distinct(4, 3), o=fixed(np.zeros(3)))
S("quantile_jvp-scalar", srcgrad.runtime.quantile_jvp,
  "srcgrad.runtime.quantile_jvp(t, a, [0.5, 0.9], None, o)", t=normal(5), a=distinct(5),
  o=fixed(np.zeros(2)))

# --- values passed where a constant usually goes (tests/rules/test_constant_parameters.py) ----
def near(value, *shape, spread=0.02):
    """``value`` moved by at most ``spread``: a bound near the ones ``clipped`` keeps away from."""
    return Input(lambda rng: value + rng.uniform(-spread, spread, shape) if shape
                 else float(value + rng.uniform(-spread, spread)))


S("np.clip-bounds", np.clip, "np.clip(x, lo, hi)", dtypes=F64, x=clipped(-0.5, 0.5, 3, 4),
  lo=near(-0.5), hi=near(0.5))
S("np.clip-bounds-bcast", np.clip, "np.clip(x, lo, hi)", x=clipped(-0.5, 0.5, 3, 4),
  lo=near(-0.5, 4), hi=near(0.5, 3, 1))
S("np.clip-lower-bound", np.clip, "np.clip(x, lo, None)", dtypes=F64, x=clipped(-0.2, 2.0, 6),
  lo=near(-0.2))
S("np.clip-upper-bound", np.clip, "np.clip(x, None, hi)", x=clipped(-0.5, 0.5, 2, 3),
  hi=near(0.5, 3))
S("ndarray.clip-bounds", np.ndarray.clip, "x.clip(lo, hi)", dtypes=F64, x=clipped(-0.5, 0.5, 6),
  lo=near(-0.5), hi=near(0.5))
S("math.log-base-moves", math.log, "math.log(x, b)", dtypes=F64, x=pyfloat(0.5, 3.0),
  b=pyfloat(1.5, 4.0))
S("np.interp-knots", np.interp, "np.interp(x, xp, fp)", x=Input(lambda rng: rng.choice(
    [-1.5, -0.6, 0.0, 0.7, 1.2, 2.4], 6) + rng.uniform(-0.05, 0.05, 6)),
  xp=Input(lambda rng: KNOTS + rng.uniform(-0.02, 0.02, 5)), fp=normal(5))
S("np.interp-left-right-move", np.interp, "np.interp(x, xp, fp, left=a, right=b)", dtypes=F64,
  x=Input(lambda rng: np.array([[-1.5, 0.1], [0.5, 2.2]]) + rng.uniform(-0.05, 0.05, (2, 2))),
  xp=fixed(KNOTS), fp=normal(5), a=pyfloat(-1, 1), b=pyfloat(-1, 1))
S("np.pad-constant-moves", np.pad, "np.pad(x, (2, 1), constant_values=c)", dtypes=F64,
  x=normal(4), c=pyfloat(-1, 1))
S("np.pad-constant-pairs", np.pad, "np.pad(x, ((1, 2), (0, 1)), constant_values=c)",
  x=normal(2, 3), c=normal(2, 2))
S("np.pad-constant-pair", np.pad, "np.pad(x, 1, 'constant', constant_values=c)",
  x=normal(2, 3), c=normal(2))
S("np.diff-prepend-moves", np.diff, "np.diff(x, prepend=p)", dtypes=F64, x=normal(2, 4),
  p=pyfloat(-1, 1))
S("np.diff-prepend-append-move", np.diff, "np.diff(x, 2, 0, prepend=p, append=q)",
  x=normal(3, 3), p=normal(1, 3), q=normal(2, 3))
S("np.diff-append-moves", np.diff, "np.diff(x, append=q)", dtypes=F64, x=normal(5),
  q=pyfloat(-1, 1))
# (vjp and jvp do not specialise on Python floats: float(h) tells srcgrad h is a number)
S("np.gradient-spacing", np.gradient, "np.gradient(x, float(h))", call="np.gradient(x, h)",
  dtypes=F64, x=normal(6), h=pyfloat(0.3, 2.0))
S("np.gradient-spacing-axis", np.gradient, "np.gradient(x, float(h), axis=0, edge_order=2)",
  call="np.gradient(x, h, axis=0, edge_order=2)", dtypes=F64, x=normal(5, 2),
  h=pyfloat(0.3, 2.0))
S("np.gradient-spacing-2d", np.gradient, "tuple(np.gradient(x, float(h)))",
  call="np.gradient(x, h)", dtypes=F64, x=normal(3, 4), h=pyfloat(0.3, 2.0))
S("np.gradient-spacings-2d", np.gradient, "tuple(np.gradient(x, float(h), float(k)))",
  call="np.gradient(x, h, k)", dtypes=F64, x=normal(4, 3), h=pyfloat(0.3, 2.0),
  k=pyfloat(0.3, 2.0))
S("np.linspace", np.linspace, "np.linspace(a, b, 5)", dtypes=F64, a=pyfloat(-1, 1),
  b=pyfloat(1, 3))
S("np.linspace-open", np.linspace, "np.linspace(a, b, 4, endpoint=False)", dtypes=F64,
  a=pyfloat(-1, 1), b=pyfloat(1, 3))
S("np.linspace-one", np.linspace, "np.linspace(a, b, 1)", dtypes=F64, a=pyfloat(-1, 1),
  b=pyfloat(1, 3))
S("np.linspace-arrays", np.linspace, "np.linspace(a, b, 3, axis=1)", a=normal(2),
  b=normal(3, 2))
S("np.linspace-retstep", np.linspace, "np.linspace(a, b, 6, retstep=True)", dtypes=F64,
  a=pyfloat(-1, 1), b=pyfloat(1, 3))
S("np.logspace", np.logspace, "np.logspace(a, b, 5)", dtypes=F64, a=pyfloat(-1, 1),
  b=pyfloat(1, 2))
S("np.logspace-base-open", np.logspace, "np.logspace(a, b, 4, endpoint=False, base=2.0)",
  dtypes=F64, a=pyfloat(-1, 1), b=pyfloat(1, 2))
S("np.logspace-arrays", np.logspace, "np.logspace(a, b, 3, axis=1)", a=normal(2),
  b=normal(3, 2))
S("np.geomspace", np.geomspace, "np.geomspace(a, b, 5)", dtypes=F64, a=pyfloat(0.5, 1),
  b=pyfloat(2, 4))
S("np.geomspace-negative-open", np.geomspace, "np.geomspace(a, b, 4, endpoint=False)",
  dtypes=F64, a=pyfloat(-2, -1), b=pyfloat(-4, -3))
S("np.geomspace-arrays", np.geomspace, "np.geomspace(a, b, 3, axis=-1)", a=positive(2),
  b=positive(3, 2))
S("np.arange", np.arange, "np.arange(a, 2.0, s)", dtypes=F64, a=pyfloat(-0.95, -0.55),
  s=pyfloat(0.31, 0.33))
S("np.arange-start", np.arange, "np.arange(a, 3.0)", dtypes=F64, a=pyfloat(0.1, 0.9))
S("np.nan_to_num-values", np.nan_to_num, "np.nan_to_num(x, nan=c, posinf=p, neginf=q)",
  dtypes=F64, x=fixed(np.array([1.5, np.nan, -0.5, np.inf, -np.inf, np.nan])),
  c=pyfloat(-1, 1), p=pyfloat(5, 9), q=pyfloat(-9, -5))


# --- ufunc methods, NumPy 2's array-API names, np.take, np.trapezoid (review 3) -----------
for e, shape in (("np.add.reduce(x)", (3, 4)), ("np.add.reduce(x, 1)", (3, 4)),
                 ("np.add.reduce(x, axis=None)", (2, 3)),
                 ("np.add.reduce(x, axis=(0, 2), keepdims=True)", (2, 3, 2)),
                 ("np.multiply.reduce(x)", (3, 2)), ("np.multiply.reduce(x, axis=-1)", (2, 4)),
                 ("np.logaddexp.reduce(x)", (4, 3)),
                 ("np.logaddexp.reduce(x, axis=1, keepdims=True)", (2, 3)),
                 ("np.add.accumulate(x)", (4, 2)), ("np.add.accumulate(x, axis=1)", (2, 3)),
                 ("np.multiply.accumulate(x)", (4,)),
                 ("np.multiply.accumulate(x, 1)", (2, 3)),
                 ("np.add.reduceat(x, [0, 2])", (5,)),  # review s37 R5-2
                 ("np.add.reduceat(x, np.array([0, 3, 1, 4]), axis=1)", (2, 6)),
                 ("np.add.reduceat(x, [1, 1, 3], 0)", (4, 3))):
    prim = eval(e.split("(")[0], {"np": np})
    S(f"{e}-{shape}", prim, e, x=normal(*shape))
for e, shape in (("np.maximum.reduce(x)", (4, 3)), ("np.minimum.reduce(x, axis=1)", (2, 5)),
                 ("np.maximum.reduce(x, axis=None)", (2, 3)),
                 ("np.minimum.reduce(x, keepdims=True)", (3, 2))):
    prim = eval(e.split("(")[0], {"np": np})
    S(f"{e}-{shape}", prim, e, x=distinct(*shape))
# running extrema (rules/ufunc_methods.py), values distinct: no ties
for e, shape in (("np.maximum.accumulate(x)", (6,)), ("np.minimum.accumulate(x, axis=1)", (2, 5)),
                 ("np.fmax.accumulate(x)", (4, 3)), ("np.fmin.accumulate(x, 0)", (5,))):
    prim = eval(e.split("(")[0], {"np": np})
    S(f"{e}-{shape}", prim, e, x=distinct(*shape))
_RUN = np.maximum.accumulate(np.array([0.5, 2.0, 1.0, 3.0, 2.5]))
S("running_extremum_tangent", srcgrad.runtime.running_extremum_tangent,
  "srcgrad.runtime.running_extremum_tangent(t, a, r)", t=normal(5),
  a=fixed(np.array([0.5, 2.0, 1.0, 3.0, 2.5])), r=fixed(_RUN))
S("running_extremum_grad", srcgrad.runtime.running_extremum_grad,
  "srcgrad.runtime.running_extremum_grad(t, a, r)", t=normal(5),
  a=fixed(np.array([0.5, 2.0, 1.0, 3.0, 2.5])), r=fixed(_RUN))
# np.add.at(y, idx, v) as y[...] = added_at(y, idx, v) (normalize/statements.py)
S("added_at", srcgrad.runtime.added_at, "srcgrad.runtime.added_at(x, i, v)", x=normal(4),
  i=fixed(np.array([0, 2, 0, 3, 2])), v=normal(5))
S("added_at-bcast", srcgrad.runtime.added_at, "srcgrad.runtime.added_at(x, i, v)",
  x=normal(3, 2), i=fixed(np.array([1, 1, 0])), v=normal(2))
S("subtracted_at", srcgrad.runtime.subtracted_at, "srcgrad.runtime.subtracted_at(x, i, v)",
  x=normal(4), i=fixed((np.array([0, 2, 0]),)), v=normal(3))
S("multiplied_at", srcgrad.runtime.multiplied_at, "srcgrad.runtime.multiplied_at(x, i, v)",
  x=normal(4), i=fixed(np.array([0, 2, 0, 3, 2])), v=normal(5))
S("multiplied_at-rows", srcgrad.runtime.multiplied_at, "srcgrad.runtime.multiplied_at(x, i, v)",
  x=normal(3, 2), i=fixed((np.array([1, 1, 0]), 0)), v=normal(3))
S("np.choose", np.choose, "np.choose(i, [x, y, z])", i=fixed(np.array([[0, 2, 1], [1, 1, 0]])),
  x=normal(2, 3), y=normal(3), z=normal(2, 3))
S("np.choose-wrap", np.choose, "np.choose(i, [x, y], mode='wrap')",
  i=fixed(np.array([0, 3, -1, 2])), x=normal(4), y=normal(4))
S("np.block", np.block, "np.block([x, y, z])", x=normal(2, 2), y=normal(2, 1), z=normal(2, 3))
S("np.block-1d", np.block, "np.block([x, y])", x=normal(3), y=normal(2))
S("block_tangent", srcgrad.runtime.block_tangent, "srcgrad.runtime.block_tangent([t, u], [a, b])",
  t=normal(2), u=normal(3), a=fixed(np.zeros(2)), b=fixed(np.zeros(3)))
S("x.view()", np.ndarray.view, "x.view()", x=normal(2, 3))
S("x.tolist()", np.ndarray.tolist, "x.tolist()", x=normal(2, 3))
S("x.tolist()-vector", np.ndarray.tolist, "x.tolist()", x=normal(4))
S("copy.deepcopy", copy.deepcopy, "copy.deepcopy(x)", x=normal(2, 3))
S("copy.copy", copy.copy, "copy.copy(x)", x=normal(2, 3))
S("np.ptp", np.ptp, "np.ptp(x)", x=distinct(2, 3))
S("np.ptp-axis", np.ptp, "np.ptp(x, axis=1, keepdims=True)", x=distinct(3, 4))
S("np.ediff1d", np.ediff1d, "np.ediff1d(x)", x=normal(2, 3))
S("np.ediff1d-ends", np.ediff1d, "np.ediff1d(x, to_end=[1.0, 2.0], to_begin=0.5)", x=normal(5))
S("np.unwrap", np.unwrap, "np.unwrap(x)", x=uniform(-1.0, 1.0, 6))
# reductions' where, initial and dtype (rules/reductions.py)
_KEPT = fixed(np.array([[True, False, True], [True, True, False]]))
S("np.sum-where", np.sum, "np.sum(x, axis=1, where=m, initial=1.5)", x=normal(2, 3), m=_KEPT)
S("np.sum-dtype", np.sum, "np.sum(x, dtype=np.float64)", dtypes=F64, x=normal(4))
S("np.mean-where", np.mean, "np.mean(x, where=m)", x=normal(2, 3), m=_KEPT)
S("np.prod-where", np.prod, "np.prod(x, axis=0, where=m, initial=2.0)", x=normal(2, 3), m=_KEPT)
S("np.max-where", np.max, "np.max(x, axis=1, where=m, initial=-10.0)", x=distinct(2, 3),
  m=_KEPT)
S("np.min-initial", np.min, "np.min(x, initial=0.1)", x=distinct(2, 3))
for e, sx, sy in (("np.add.outer(x, y)", (3,), (4,)), ("np.add.outer(x, y)", (2, 3), (2,)),
                  ("np.subtract.outer(x, y)", (3,), (2, 2)),
                  ("np.multiply.outer(x, y)", (3,), (4,)),
                  ("np.multiply.outer(x, y)", (2, 2), (3,))):
    prim = eval(e.split("(")[0], {"np": np})
    S(f"{e}-{sx}-{sy}", prim, e, x=normal(*sx), y=normal(*sy))
S("np.divide.outer", np.divide.outer, "np.divide.outer(x, y)", x=normal(3), y=away(2, 2))
for e, shape in (("np.take(x, np.array([0, 2, 2, -1]))", (2, 3)), ("np.take(x, 4)", (5,)),
                 ("np.take(x, [[1, 0], [1, 1]], axis=0)", (3, 2)),
                 ("np.take(x, np.array([2, 0]), axis=-1)", (2, 2, 3)),
                 ("np.take(x, 1, 1)", (2, 3)),
                 ("np.take(x, np.array([0, 7, -1, 3]), mode='wrap')", (2, 3)),
                 ("np.take(x, [[4, -2], [1, 1]], axis=0, mode='wrap')", (3, 2)),
                 ("np.take(x, np.array([-3, 2, 9]), mode='clip')", (5,)),
                 ("np.take(x, np.array([5, 0, -1]), 1, mode='clip')", (2, 3))):
    S(f"{e}-{shape}", np.take, e, x=normal(*shape))
if hasattr(np, "trapezoid"):
    for e, shape in (("np.trapezoid(x)", (5,)), ("np.trapezoid(x, axis=0)", (4, 3)),
                     ("np.trapezoid(x, dx=0.5)", (2, 4))):
        S(f"{e}-{shape}", np.trapezoid, e, x=normal(*shape))
    S("np.trapezoid-points", np.trapezoid, "np.trapezoid(x, t)", x=normal(2, 5),
      t=Input(lambda rng: np.cumsum(rng.uniform(0.2, 1.0, 5))))
    S("np.trapezoid-points-axis", np.trapezoid, "np.trapezoid(x, t, axis=0)", x=normal(4, 3),
      t=Input(lambda rng: np.cumsum(rng.uniform(0.2, 1.0, (4, 3)), axis=0)))
    S("np.trapezoid-dx-moves", np.trapezoid, "np.trapezoid(x, dx=h)", dtypes=F64, x=normal(6),
      h=pyfloat(0.2, 1.0))
if hasattr(np.linalg, "vecdot"):  # NumPy 2's array-API names
    for e, sx, sy in (("np.linalg.matmul(x, y)", (3, 4), (4, 2)),
                      ("np.linalg.matmul(x, y)", (2, 3, 4), (4,)),
                      ("np.linalg.outer(x, y)", (3,), (4,)),
                      ("np.linalg.tensordot(x, y)", (3, 4, 5), (4, 5, 2)),
                      ("np.linalg.tensordot(x, y, axes=1)", (3, 4), (4, 2)),
                      ("np.linalg.tensordot(x, y, axes=([1, 0], [0, 1]))", (3, 4, 2), (4, 3)),
                      ("np.linalg.cross(x, y)", (4, 3), (3,)),
                      ("np.linalg.cross(x, y, axis=0)", (3, 4), (3, 4)),
                      ("np.linalg.vecdot(x, y)", (3, 4), (4,)),
                      ("np.linalg.vecdot(x, y, axis=0)", (3, 2), (3, 2)),
                      ("np.vecdot(x, y)", (2, 3), (2, 3)), ("np.vecdot(x, y)", (4,), (2, 4))):
        prim = eval(e.split("(")[0], {"np": np})
        S(f"{e}-{sx}-{sy}", prim, e, x=normal(*sx), y=normal(*sy))
    for e, shape in (("np.linalg.trace(x)", (3, 3)), ("np.linalg.trace(x, offset=1)", (2, 3, 4)),
                     ("np.linalg.diagonal(x)", (3, 3)), ("np.linalg.diagonal(x, offset=-1)",
                                                          (2, 4, 3)),
                     ("np.linalg.matrix_transpose(x)", (3, 2)),
                     ("np.linalg.matrix_transpose(x)", (2, 3, 4)),
                     ("np.matrix_transpose(x)", (2, 3))):
        prim = eval(e.split("(")[0], {"np": np})
        S(f"{e}-{shape}", prim, e, x=normal(*shape))


# --- ordinary library calls that had no rule (review s36 R4-13) ------------------------------
S("np.float_power", np.float_power, "np.float_power(x, y)", x=positive(3, 4), y=normal(3, 4))
S("np.float_power-bcast", np.float_power, "np.float_power(x, y)", x=positive(2, 3), y=normal(3))
S("np.float_power-2", np.float_power, "np.float_power(x, 2)", x=normal(4))
S("np.ldexp", np.ldexp, "np.ldexp(x, n)", x=normal(3, 4), n=fixed(np.array([0, 1, -2, 3])))
S("np.ldexp-bcast", np.ldexp, "np.ldexp(x, n)", x=normal(3), n=fixed(np.array([[1], [2]])))
S("np.ldexp-int", np.ldexp, "np.ldexp(x, 3)", x=normal(2, 2))
S("np.divmod", np.divmod, "np.divmod(x, y)[1]", call="np.divmod(x, y)",
  x=uniform(2.1, 2.9, 3, 4), y=uniform(1.5, 2.0, 3, 4))
S("np.divmod-both", np.divmod, "np.divmod(x, y)[0] * 0.0 + np.divmod(x, y)[1]",
  call="np.divmod(x, y)", x=uniform(-2.9, -2.1, 2, 3), y=uniform(1.5, 2.0, 3))
S("divmod-builtin", divmod, "divmod(x, y)[1]", call="divmod(x, y)", dtypes=F64,
  x=pyfloat(2.1, 2.9), y=pyfloat(1.5, 2.0))
S("divmod-builtin-array", divmod, "divmod(x, 0.7)[1]", call="divmod(x, 0.7)",
  x=uniform(0.1, 0.6, 3))
S("np.modf", np.modf, "np.modf(x)[0]", call="np.modf(x)", x=uniform(1.1, 1.9, 3, 4))
S("np.frexp", np.frexp, "np.frexp(x)[0]", call="np.frexp(x)", x=uniform(1.1, 1.9, 3, 4))
S("np.frexp-neg", np.frexp, "np.frexp(x)[0]", call="np.frexp(x)", x=uniform(-7.0, -4.5, 5))
if hasattr(math, "cbrt"):
    S("math.cbrt", math.cbrt, "math.cbrt(x)", dtypes=F64, x=pyfloat(0.5, 2))
    S("math.exp2", math.exp2, "math.exp2(x)", dtypes=F64, x=pyfloat(-1, 1))
S("math.fsum", math.fsum, "math.fsum([x, y, z])", dtypes=F64, x=pyfloat(-1, 1),
  y=pyfloat(-1, 1), z=pyfloat(-1, 1))
S("math.fsum-array", math.fsum, "math.fsum(x)", dtypes=F64, x=normal(4))
S("math.dist", math.dist, "math.dist([x, y], [z, 1.0])", dtypes=F64, x=pyfloat(-1, 1),
  y=pyfloat(-1, 1), z=pyfloat(2, 3))
S("math.dist-arrays", math.dist, "math.dist(x, y)", dtypes=F64, x=normal(3), y=normal(3))
S("statistics.mean", statistics.mean, "statistics.mean([x, y, z])", dtypes=F64,
  x=pyfloat(-1, 1), y=pyfloat(-1, 1), z=pyfloat(-1, 1))
S("statistics.mean-array", statistics.mean, "statistics.mean(x)", dtypes=F64, x=normal(4))
S("statistics.fmean", statistics.fmean, "statistics.fmean([x, y])", dtypes=F64,
  x=pyfloat(-1, 1), y=pyfloat(-1, 1))
S("statistics.fmean-array", statistics.fmean, "statistics.fmean(x)", dtypes=F64, x=normal(4))
S("statistics.fmean-weights", statistics.fmean, "statistics.fmean(x, w)", dtypes=F64,
  x=normal(3), w=positive(3))
if hasattr(np.linalg, "vector_norm"):  # NumPy 2
    for e, shape in (("np.linalg.vector_norm(x)", (3, 4)), ("np.linalg.vector_norm(x, axis=1)", (3, 4)),
                     ("np.linalg.vector_norm(x, axis=(0, 2), keepdims=True)", (2, 3, 4)),
                     ("np.linalg.vector_norm(x, ord=3)", (2, 3)),
                     ("np.linalg.vector_norm(x, axis=0, ord=1)", (3, 2)),
                     ("np.linalg.vector_norm(x, axis=-1, ord=np.inf)", (2, 4)),
                     ("np.linalg.vector_norm(x, ord=-np.inf, keepdims=True)", (2, 3)),
                     ("np.linalg.matrix_norm(x)", (3, 4)),
                     ("np.linalg.matrix_norm(x, keepdims=True)", (2, 3, 3)),
                     ("np.linalg.matrix_norm(x, ord=1)", (3, 4)),
                     ("np.linalg.matrix_norm(x, ord=np.inf)", (2, 3, 4)),
                     ("np.linalg.matrix_norm(x, ord=2)", (4, 3)),
                     ("np.linalg.matrix_norm(x, ord='nuc', keepdims=True)", (2, 3, 3))):
        prim = eval(e.split("(")[0], {"np": np})  # noqa: S307 - trusted table
        S(f"{e}-{shape}", prim, e, x=away(*shape) if "inf" in e or "ord=1" in e else normal(*shape))
if hasattr(np, "cumulative_sum"):  # NumPy 2
    for e, shape in (("np.cumulative_sum(x)", (5,)), ("np.cumulative_sum(x, axis=1)", (2, 3)),
                     ("np.cumulative_sum(x, axis=0, include_initial=True)", (3, 2)),
                     ("np.cumulative_prod(x)", (4,)), ("np.cumulative_prod(x, axis=-1)", (2, 3)),
                     ("np.cumulative_prod(x, axis=0, include_initial=True)", (3, 2)),
                     ("np.unstack(x)", (3, 2)), ("np.unstack(x, axis=1)", (2, 3, 2))):
        prim = eval(e.split("(")[0], {"np": np})  # noqa: S307 - trusted table
        S(f"{e}-{shape}", prim, f"tuple({e})" if "unstack" in e else e,
          call=e if "unstack" in e else None, x=normal(*shape))
    S("np.cumulative_prod-zero", np.cumulative_prod, "np.cumulative_prod(x, include_initial=True)",
      x=with_zeros((5,), 2))
for e, shape in (("x.take([0, 2, 2])", (2, 3)), ("x.take(np.array([1, 0]), axis=1)", (2, 3)),
                 ("x.take([5, -1], mode='wrap')", (4,))):
    S(f"ndarray-{e}-{shape}", np.ndarray.take, e, x=normal(*shape))
_SWV = np.lib.stride_tricks.sliding_window_view
for e, shape in (("_SWV(x, 3)", (6,)), ("_SWV(x, (2, 2))", (3, 4)),
                 ("_SWV(x, 2, axis=0)", (4, 3)), ("_SWV(x, (2, 3), axis=(1, 0))", (4, 5)),
                 ("_SWV(x, (2, 2), axis=(0, 0))", (5, 2))):
    full = e.replace("_SWV", "np.lib.stride_tricks.sliding_window_view")
    S(f"{full}-{shape}", _SWV, full, x=normal(*shape))
# np.polyval's tangent calls np.polyder: hvp differentiates it (review s36 R4-13)
for e, shape in (("np.polyder(p)", (4,)), ("np.polyder(p, 2)", (5,)), ("np.polyder(p, 3)", (2,)),
                 ("np.polyder(p, m=0)", (3,))):
    S(f"{e}-{shape}", np.polyder, e, p=normal(*shape))
S("np.require", np.require, "np.require(x)", x=normal(2, 3))
S("np.require-F", np.require, "np.require(x, requirements=['F', 'W'])", x=normal(2, 3))
S("np.require-float64", np.require, "np.require(x, np.float64, 'C')", dtypes=F64, x=normal(3))
S("np.require-list", np.require, "np.require([x, y])", x=normal(), y=normal())
if SCIPY:  # logsumexp's return_sign (review s36 R4-13)
    S("scipy.special.logsumexp-sign", scipy.special.logsumexp,
      "scipy.special.logsumexp(x, axis=1, b=w, return_sign=True)[0]",
      call="scipy.special.logsumexp(x, axis=1, b=w, return_sign=True)", x=normal(3, 4),
      w=Input(lambda rng: np.array([1.0, -2.0, 0.5, 0.25]) + rng.uniform(0, 0.1, (3, 4))))
    S("scipy.special.logsumexp-sign-all", scipy.special.logsumexp,
      "scipy.special.logsumexp(x, return_sign=True)[0]",
      call="scipy.special.logsumexp(x, return_sign=True)", x=normal(2, 3))
    S("scipy.special.logsumexp-sign-negative", scipy.special.logsumexp,
      "scipy.special.logsumexp(x, axis=0, b=w, keepdims=True, return_sign=True)[0]",
      call="scipy.special.logsumexp(x, axis=0, b=w, keepdims=True, return_sign=True)",
      x=normal(3, 2), w=Input(lambda rng: -rng.uniform(0.5, 1.5, (3, 2))))
if SCIPY:  # scipy.linalg.expm and its Frechet derivative (review s36 R4-13)
    EXPM = registered(scipy.linalg.expm)
    S("scipy.linalg.expm", EXPM, "scipy.linalg.expm(x)", x=uniform(-0.6, 0.6, 3, 3))
    S("scipy.linalg.expm-batched", EXPM, "scipy.linalg.expm(x)", x=uniform(-0.6, 0.6, 2, 2, 2))
    S("expm_frechet", srcgrad.runtime.expm_frechet, "srcgrad.runtime.expm_frechet(x, y)",
      x=uniform(-0.6, 0.6, 3, 3), y=normal(3, 3))
# np.fromiter of items the function computes (a generator srcgrad lists first:
# tests/e2e/test_refusals_fixed_s37.py)
S("np.fromiter", np.fromiter, "np.fromiter(x, float)", dtypes=F64, x=normal(3))
S("np.fromiter-count", np.fromiter, "np.fromiter(x, np.float64, count=2)", dtypes=F64,
  x=normal(4))
S("np.fromiter-list", np.fromiter, "np.fromiter([x, y], dtype=float)", dtypes=F64,
  x=normal(), y=normal())
# joins with dtype= (a list in a name reaches the rule with it: tests/e2e/test_refusals_fixed_s37.py)
for e, sx, sy in (("np.concatenate([x, y], dtype=np.float64)", (2, 3), (4, 3)),
                  ("np.concatenate((x, y), axis=None, dtype=np.float64, casting='same_kind')",
                   (2, 3), (4,)),
                  ("np.stack([x, y], axis=1, dtype=np.float64)", (2, 3), (2, 3)),
                  ("np.hstack([x, y], dtype=np.float64)", (3,), (2,)),
                  ("np.vstack([x, y], dtype=np.float64)", (2, 3), (1, 3))):
    prim = eval(e.split("(")[0], {"np": np})  # noqa: S307 - trusted table
    S(f"{e}-{sx}-{sy}", prim, e, x=normal(*sx), y=normal(*sy))
if SCIPY:  # scipy.linalg.sqrtm and the Sylvester solve of its derivative
    SQRTM = registered(scipy.linalg.sqrtm)

    def _spd(*shape):
        def draw(rng):
            m = rng.standard_normal(shape)
            return m @ np.swapaxes(m, -1, -2) + shape[-1] * np.eye(shape[-1])
        return Input(draw)

    S("scipy.linalg.sqrtm", SQRTM, "scipy.linalg.sqrtm(x)", x=_spd(3, 3))
    S("scipy.linalg.sqrtm-nonsymmetric", SQRTM, "scipy.linalg.sqrtm(x)",
      x=Input(lambda rng: 2.0 * np.eye(3) + 0.3 * rng.standard_normal((3, 3))))
    S("scipy.linalg.sqrtm-batched", SQRTM, "scipy.linalg.sqrtm(x)", x=_spd(2, 2, 2))
    S("sqrtm_frechet", srcgrad.runtime.sqrtm_frechet, "srcgrad.runtime.sqrtm_frechet(x, y)",
      x=Input(lambda rng: 2.0 * np.eye(3) + 0.3 * rng.standard_normal((3, 3))), y=normal(3, 3))
if SCIPY:  # what autograd differentiates in scipy.special and srcgrad lacked (session 37)
    for name, gen in (("i0", normal), ("i1", normal), ("j0", normal), ("j1", normal),
                      ("y0", positive), ("y1", positive), ("rgamma", positive)):
        S(f"scipy.special.{name}", getattr(SP, name), f"scipy.special.{name}(x)", x=gen(3, 4))
    for name, order, gen in (("iv", "1.5", positive), ("ive", "2", normal), ("jv", "0.5", positive),
                             ("yv", "1", positive), ("jn", "3", normal), ("yn", "2", positive)):
        S(f"scipy.special.{name}", getattr(SP, name), f"scipy.special.{name}({order}, x)",
          x=gen(3))
    for name in ("i0e", "i1e"):  # review s37 R5-2
        S(f"scipy.special.{name}", getattr(SP, name), f"scipy.special.{name}(x)", x=away(3, 4))
    for name in ("rel_entr", "kl_div"):
        S(f"scipy.special.{name}", getattr(SP, name), f"scipy.special.{name}(x, y)",
          x=positive(3, 4), y=positive(3, 4))
        S(f"scipy.special.{name}-bcast", getattr(SP, name), f"scipy.special.{name}(x, y)",
          x=positive(2, 3), y=positive(3))
    S("scipy.special.beta", SP.beta, "scipy.special.beta(x, y)", x=positive(3), y=positive(2, 3))
    S("scipy.special.multigammaln", SP.multigammaln, "scipy.special.multigammaln(x, 3)",
      x=uniform(1.5, 3.0, 4))
    S("scipy.special.gammainc", SP.gammainc, "scipy.special.gammainc(2.5, x)", x=positive(4))
    S("scipy.special.gammaincc", SP.gammaincc, "scipy.special.gammaincc(0.7, x)", x=positive(4))
    S("scipy.special.betainc", SP.betainc, "scipy.special.betainc(2.0, 3.5, x)",
      x=uniform(0.1, 0.9, 4))
    S("bessel-i", srcgrad.runtime.bessel, "srcgrad.runtime.bessel('i', 1.5, x)", x=positive(3))
    S("bessel-ie", srcgrad.runtime.bessel, "srcgrad.runtime.bessel('ie', 1, x)", x=normal(3))
    S("bessel-j", srcgrad.runtime.bessel, "srcgrad.runtime.bessel('j', 2, x)", x=normal(3))
    S("bessel-y", srcgrad.runtime.bessel, "srcgrad.runtime.bessel('y', 0.5, x)", x=positive(3))
    S("log_gamma", srcgrad.runtime.log_gamma, "srcgrad.runtime.log_gamma(x)", x=positive(3))
    N("scipy.special.gammasgn", SP.gammasgn, "scipy.special.gammasgn(x)", x=normal(3))
if SCIPY:  # scipy.linalg.solve_sylvester (autograd has it; session 37)
    _SYL = registered(scipy.linalg.solve_sylvester)
    _WELL = Input(lambda rng: 2.0 * np.eye(3) + 0.3 * rng.standard_normal((3, 3)))
    S("scipy.linalg.solve_sylvester", _SYL, "scipy.linalg.solve_sylvester(x, y, z)",
      x=_WELL, y=Input(lambda rng: 1.5 * np.eye(2) + 0.3 * rng.standard_normal((2, 2))),
      z=normal(3, 2))
    S("sylvester", srcgrad.runtime.sylvester, "srcgrad.runtime.sylvester(x, y, z)",
      x=_WELL, y=_WELL, z=normal(3, 3))
if SCIPY:  # what autograd differentiates in scipy.stats and srcgrad lacked (session 37)
    S("scipy.stats.norm.logsf", registered(ST.norm.logsf), "scipy.stats.norm.logsf(x, m, s)",
      dtypes=F64_ONLY, x=normal(3, 4), m=normal(4), s=positive(3, 1))
    S("scipy.stats.t.pdf", registered(ST.t.pdf), "scipy.stats.t.pdf(x, df, m, s)",
      dtypes=F64_ONLY, x=normal(2, 3), df=uniform(1.5, 6.0), m=normal(3), s=positive(2, 1))
    S("scipy.stats.gamma.pdf", registered(ST.gamma.pdf), "scipy.stats.gamma.pdf(x, a, m, s)",
      dtypes=F64_ONLY, x=uniform(2.0, 4.0, 2, 3), a=uniform(1.5, 4.0), m=uniform(-1.0, 1.0, 3),
      s=positive(2, 1))
    for method in ("logpdf", "pdf"):
        S(f"scipy.stats.chi2.{method}", registered(getattr(ST.chi2, method)),
          f"scipy.stats.chi2.{method}(x, df, m, s)", dtypes=F64_ONLY, x=uniform(2.0, 4.0, 2, 3),
          df=uniform(2.5, 5.0, 3), m=uniform(-1.0, 1.0), s=positive(2, 1))
        S(f"scipy.stats.chi2.{method}-df", registered(getattr(ST.chi2, method)),
          f"scipy.stats.chi2.{method}(x, df)", dtypes=F64_ONLY, x=positive(4),
          df=uniform(2.5, 5.0))
        S(f"scipy.stats.beta.{method}", registered(getattr(ST.beta, method)),
          f"scipy.stats.beta.{method}(x, a, b)", dtypes=F64_ONLY, x=uniform(0.2, 0.8, 2, 3),
          a=uniform(1.5, 3.0, 3), b=uniform(1.5, 3.0))
        S(f"scipy.stats.beta.{method}-all", registered(getattr(ST.beta, method)),
          f"scipy.stats.beta.{method}(x, a, b, m, s)", dtypes=F64_ONLY,
          x=uniform(0.4, 1.2, 4), a=uniform(1.5, 3.0), b=uniform(1.5, 3.0),
          m=uniform(0.0, 0.2), s=uniform(1.5, 2.0))
    for method in ("logpmf", "pmf"):
        S(f"scipy.stats.poisson.{method}", registered(getattr(ST.poisson, method)),
          f"scipy.stats.poisson.{method}(k, mu)", dtypes=F64_ONLY,
          k=fixed(np.array([0, 2, 5, 1])), mu=uniform(0.5, 4.0, 4))
    S("scipy.stats.multivariate_normal.pdf", registered(ST.multivariate_normal.pdf),
      "scipy.stats.multivariate_normal.pdf(x, m, c)", dtypes=F64_ONLY, x=normal(4, 3),
      m=normal(3), c=spd(3))
    S("scipy.stats.multivariate_normal.pdf-scalar-cov", registered(ST.multivariate_normal.pdf),
      "scipy.stats.multivariate_normal.pdf(x, m, c)", dtypes=F64_ONLY, x=normal(3, 2),
      m=normal(2), c=positive())
if SCIPY:  # expon, laplace, cauchy log-densities; binom.logpmf in p (review s37 R5-13)
    for family, low in (("expon", 0.2), ("laplace", -1.0), ("cauchy", -1.0)):
        prim = registered(getattr(ST, family).logpdf)
        S(f"scipy.stats.{family}.logpdf", prim, f"scipy.stats.{family}.logpdf(x, m, s)",
          dtypes=F64_ONLY, x=uniform(low + 0.3, 2.0, 2, 3), m=uniform(-0.1, 0.1, 3),
          s=uniform(0.5, 1.5))
        S(f"scipy.stats.{family}.logpdf-x", prim, f"scipy.stats.{family}.logpdf(x)",
          dtypes=F64_ONLY, x=uniform(max(low, 0.1), 2.0, 4))
    S("scipy.stats.laplace.logpdf-negative", registered(ST.laplace.logpdf),
      "scipy.stats.laplace.logpdf(x, 0.5, 2.0)", dtypes=F64_ONLY, x=uniform(-2.0, 0.3, 4))
    S("scipy.stats.binom.logpmf", registered(ST.binom.logpmf),
      "scipy.stats.binom.logpmf(k, n, p)", dtypes=F64_ONLY, k=fixed(np.array([0, 2, 5, 3])),
      n=fixed(np.array([4, 6, 5, 7])), p=uniform(0.2, 0.8, 4))
if SCIPY:  # scipy.spatial.distance.cdist, the RBF kernel's distances (review s37 R5-21)
    import scipy.spatial.distance

    CDIST = registered(scipy.spatial.distance.cdist)
    for args in ("", ", 'euclidean'", ", 'sqeuclidean'", ", metric='sqeuclidean'"):
        S(f"scipy.spatial.distance.cdist{args}", CDIST,
          f"scipy.spatial.distance.cdist(x, y{args})", dtypes=F64_ONLY, x=normal(4, 3),
          y=normal(2, 3))
    PDIST = registered(scipy.spatial.distance.pdist)
    for args in ("", ", 'sqeuclidean'", ", metric='euclidean'"):
        S(f"scipy.spatial.distance.pdist{args}", PDIST,
          f"scipy.spatial.distance.pdist(x{args})", dtypes=F64_ONLY, x=normal(4, 3))
    SQF = registered(scipy.spatial.distance.squareform)
    S("scipy.spatial.distance.squareform-tomatrix", SQF, "scipy.spatial.distance.squareform(x)",
      dtypes=F64_ONLY, x=normal(6))
    S("scipy.spatial.distance.squareform-tovector", SQF,
      "scipy.spatial.distance.squareform(x, checks=False)", dtypes=F64_ONLY, x=normal(4, 4))
    N("srcgrad.runtime.distance_metric", registered(srcgrad.runtime.distance_metric),
      "srcgrad.runtime.distance_metric('euclidean')")
# xs.index(v), xs.count(v) of a list or tuple holding differentiated values (session 37)
N("list.index", list.index, "list.index(x, y)", x=fixed([0.5, 1.5, 2.5]), y=fixed(1.5))
N("list.count", list.count, "list.count(x, y)", x=fixed([0.5, 1.5, 0.5]), y=fixed(0.5))
if SCIPY:  # scipy.stats.dirichlet (autograd has it; session 37)
    def _simplex(*shape, drop=0):
        def draw(rng):
            w = rng.uniform(0.5, 1.5, shape)
            w = w / np.sum(w, axis=0, keepdims=True)
            return w[:shape[0] - drop]
        return Input(draw)

    for method in ("logpdf", "pdf"):  # k - 1 rows (SciPy adds the last): x off the simplex
        prim = registered(getattr(ST.dirichlet, method))  # is refused, so differences need them
        S(f"scipy.stats.dirichlet.{method}", prim, f"scipy.stats.dirichlet.{method}(x, a)",
          dtypes=F64_ONLY, x=_simplex(3, drop=1), a=uniform(1.5, 3.0, 3))
        S(f"scipy.stats.dirichlet.{method}-samples", prim,
          f"scipy.stats.dirichlet.{method}(x, a)", dtypes=F64_ONLY, x=_simplex(4, 3, drop=1),
          a=uniform(1.5, 3.0, 4))
if SCIPY:  # distribution functions in x, loc, scale (poisson's in mu; session 37)
    for e, ins in (("scipy.stats.t.cdf(x, 3.5, m, s)", dict(x=normal(2, 3), m=normal(3),
                                                             s=positive(2, 1))),
                   ("scipy.stats.t.logcdf(x, 4.0, m, s)", dict(x=normal(4), m=normal(),
                                                                s=positive())),
                   ("scipy.stats.gamma.cdf(x, 2.5, m, s)", dict(x=uniform(2.0, 4.0, 2, 3),
                                                                 m=uniform(-1.0, 1.0, 3),
                                                                 s=positive(2, 1))),
                   ("scipy.stats.chi2.cdf(x, 3.0, m, s)", dict(x=uniform(2.0, 4.0, 4),
                                                                m=uniform(-1.0, 1.0),
                                                                s=positive())),
                   ("scipy.stats.beta.cdf(x, 2.0, 3.0, m, s)", dict(x=uniform(0.4, 1.2, 4),
                                                                     m=uniform(0.0, 0.2),
                                                                     s=uniform(1.5, 2.0))),
                   ("scipy.stats.t.cdf(x, 2.0)", dict(x=normal(3))),
                   ("scipy.stats.gamma.cdf(x, 1.5)", dict(x=positive(3)))):
        dist, method = e.split("(")[0].split(".")[2:]
        S(e, registered(getattr(getattr(ST, dist), method)), e, dtypes=F64_ONLY, **ins)
    S("scipy.stats.poisson.cdf", registered(ST.poisson.cdf), "scipy.stats.poisson.cdf(k, mu)",
      dtypes=F64_ONLY, k=fixed(np.array([0, 2, 5, 1])), mu=uniform(0.5, 4.0, 4))
