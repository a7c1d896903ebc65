"""Generic tests of the adjoint rules, driven by the spec table (tests/spec.py).

For every entry and dtype the rule function is called directly on the
primitive's output, a random cotangent ``u`` and the primitive's arguments; its
cotangents must have their arguments' shapes and dtypes, satisfy the
dot-product identity ``<u, J v> = <J^T u, v>`` (``J v`` by central differences
in float64) and, for small inputs, match ``J^T u`` element by element.
"""

from __future__ import annotations

import ast
import inspect
import math
import operator
import warnings
import zlib

import numpy as np
import pytest

import spec
import srcgrad
from srcgrad.ir import Builder
from srcgrad.runtime import keys_of, sequence, snapshot
from srcgrad.errors import RuleError
from srcgrad.rules import registry

BINOPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
          ast.Div: operator.truediv, ast.Pow: operator.pow, ast.MatMult: operator.matmul,
          ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.BitAnd: operator.and_,
          ast.BitOr: operator.or_, ast.BitXor: operator.xor, ast.LShift: operator.lshift,
          ast.RShift: operator.rshift}
UNARY = {ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Not: operator.not_,
         ast.Invert: operator.invert}
COMPARE = {ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
           ast.Gt: operator.gt, ast.GtE: operator.ge, ast.Is: operator.is_,
           ast.IsNot: operator.is_not}
TOL = {"float64": 1e-5, "float32": 2e-3}
H = 1e-6


class _Index:
    def __getitem__(self, index):
        return index


def _eval(node, env):
    return eval(compile(ast.Expression(node), "<spec>", "eval"),  # noqa: S307
                {"np": np, "math": math, "srcgrad": srcgrad, "_Index": _Index(),
                 "keys_of": keys_of, "sequence": sequence, "snapshot": snapshot}, env)


def resolve(source, env):
    """The primitive a call expression applies, with its argument values and
    the AST nodes they come from: ``(primitive, args, kwargs, arg_nodes, kw_nodes)``."""
    node = ast.parse(source, mode="eval").body
    if isinstance(node, ast.BinOp):
        prim, nodes, kw = BINOPS[type(node.op)], [node.left, node.right], {}
    elif isinstance(node, ast.UnaryOp):
        prim, nodes, kw = UNARY[type(node.op)], [node.operand], {}
    elif isinstance(node, ast.Compare):
        op = node.ops[0]
        if isinstance(op, ast.In):
            prim, nodes, kw = operator.contains, [node.comparators[0], node.left], {}
        else:
            prim, nodes, kw = COMPARE[type(op)], [node.left, node.comparators[0]], {}
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


def _flat(value):
    if isinstance(value, (tuple, list)):
        return np.concatenate([_flat(v) for v in value]) if value else np.zeros(0)
    return np.ravel(np.asarray(value, dtype=np.float64))


def _cotangent(out, rng):
    if isinstance(out, (tuple, list)):
        return tuple(_cotangent(o, rng) for o in out)
    if isinstance(out, float):
        return float(rng.standard_normal())
    out = np.asarray(out)
    return rng.standard_normal(out.shape).astype(out.dtype)[()]


def _as64(value):
    return value if isinstance(value, float) else np.asarray(value, dtype=np.float64)


def _env64(env):
    """The inputs with every floating array in float64 (finite differences)."""
    return {k: (v.astype(np.float64) if isinstance(v, np.ndarray) and v.dtype.kind == "f" else v)
            for k, v in env.items()}


def call_rule(entry, dtype):
    """Run the entry's rule; return (inputs, u, {input name: cotangent})."""
    env = entry.make(dtype)
    prim, args, kwargs, nodes, kw_nodes = resolve(entry.source, env)
    assert prim is entry.primitive, f"{entry.source} calls {prim!r}"
    rule = registry.lookup(prim)
    assert rule is not None, f"no rule for {entry.source}"
    out = apply(prim, args, kwargs)
    u = _cotangent(out, np.random.default_rng(zlib.crc32(entry.id.encode()) + 1))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ret = rule.fn(out, u, *args, **kwargs)
    if len(rule.wrt) > 1:
        assert isinstance(ret, tuple) and len(ret) == len(rule.wrt), ret
    results = ret if len(rule.wrt) > 1 else (ret,)
    bound = rule.signature.bind(*nodes, **kw_nodes)
    grads = {}
    for w, g in zip(rule.wrt, results):
        if w not in bound.arguments:
            continue
        node = bound.arguments[w]
        if rule.signature.parameters[w].kind is inspect.Parameter.VAR_POSITIONAL:
            pairs = list(zip(node, g, strict=True))
        elif isinstance(node, (ast.List, ast.Tuple)):
            assert isinstance(g, (list, tuple)), f"{w}: a sequence needs a sequence of cotangents"
            pairs = list(zip(node.elts, g, strict=True))
        else:
            pairs = [(node, g)]
        for n, gn in pairs:
            if isinstance(n, ast.Name) and n.id in entry.wrt:
                check_kind(entry, n.id, gn, env[n.id])
                grads[n.id] = grads.get(n.id, 0) + _as64(gn)
    assert set(grads) == set(entry.wrt), f"rule gave cotangents for {sorted(grads)}"
    return env, u, grads


def check_kind(entry, name, g, x):
    assert np.shape(g) == np.shape(x), f"cotangent of {name}: shape {np.shape(g)} != {np.shape(x)}"
    if isinstance(x, float):
        assert isinstance(g, float), f"cotangent of Python float {name} is {type(g)}"
        if getattr(entry.primitive, "__module__", "") == "math":
            assert type(g) is float, f"math rule returned {type(g)}"
    else:
        assert np.result_type(g) == x.dtype, f"{name}: {np.result_type(g)} != {x.dtype}"


def _phi(entry, env, u, name, delta):
    """<u, F(env with env[name] += delta)> in float64."""
    env = _env64(env)
    env[name] = env[name] + delta
    _, args, kwargs, _, _ = resolve(entry.source, env)
    return float(_flat(u) @ _flat(apply(entry.primitive, args, kwargs)))


PARAMS = [pytest.param(e, d, id=f"{e.id}-{d}") for e in spec.SPECS for d in e.dtypes]


@pytest.mark.parametrize(("entry", "dtype"), PARAMS)
def test_rule(entry, dtype):
    env, u, grads = call_rule(entry, dtype)
    tol = TOL[dtype]
    rng = np.random.default_rng(7)
    vs = {n: (float(rng.standard_normal()) if isinstance(env[n], float)
              else rng.standard_normal(np.shape(env[n]))) for n in entry.wrt}
    plus = _phi_multi(entry, env, u, vs, H)
    minus = _phi_multi(entry, env, u, vs, -H)
    lhs = (plus - minus) / (2 * H)
    rhs = sum(float(np.sum(grads[n] * vs[n])) for n in entry.wrt)
    scale = sum(float(np.linalg.norm(_flat(grads[n])) * np.linalg.norm(_flat(vs[n])))
                for n in entry.wrt) + 1.0
    assert abs(lhs - rhs) <= tol * scale, f"<u, Jv> = {lhs} but <J^T u, v> = {rhs}"
    if sum(np.size(env[n]) for n in entry.wrt) <= 40:
        for n in entry.wrt:
            fd = np.zeros(np.shape(env[n]))
            for j in np.ndindex(fd.shape):
                e = np.zeros(fd.shape)
                e[j] = H
                delta = float(e) if isinstance(env[n], float) else e
                fd[j] = (_phi(entry, env, u, n, delta) - _phi(entry, env, u, n, -delta)) / (2 * H)
            np.testing.assert_allclose(grads[n], fd, rtol=tol, atol=tol * (1 + np.abs(fd).max()),
                                       err_msg=f"J^T u for {n}")


def _phi_multi(entry, env, u, vs, h):
    env = {k: (v + h * vs[k] if k in entry.wrt else v) for k, v in _env64(env).items()}
    _, args, kwargs, _, _ = resolve(entry.source, env)
    return float(_flat(u) @ _flat(apply(entry.primitive, args, kwargs)))


@pytest.mark.parametrize("entry", spec.NONDIFF, ids=lambda e: e.id)
def test_nondifferentiable(entry):
    env = entry.make()
    prim, args, kwargs, _, _ = resolve(entry.source, env)
    assert prim is entry.primitive, f"{entry.source} calls {prim!r}"
    assert registry.is_nondifferentiable(prim) and registry.lookup(prim) is None
    apply(prim, args, kwargs)


def test_ids_unique():
    ids = [e.id for e in spec.SPECS + spec.NONDIFF]
    assert len(ids) == len(set(ids)), sorted({i for i in ids if ids.count(i) > 1})


def test_every_rule_has_an_entry():
    """Every rule of a callable primitive; displays and attribute reads (ir.Builder)
    are not calls, and the corpus covers them (containers, objects)."""
    tested = {id(e.primitive) for e in spec.SPECS}
    tested.add(id(srcgrad.runtime.tangent_attr))  # reads a tangent object: test_higher.py
    missing = [r.name for p, r in registry.all_rules().items()
               if id(p) not in tested and not isinstance(p, Builder) and r.called is None]
    assert not missing, f"rules without a spec entry: {missing}"
    marked = {id(e.primitive) for e in spec.NONDIFF}
    missing = [n for p, n in registry.all_nondifferentiable().items() if id(p) not in marked]
    assert not missing, f"non-differentiable primitives without an entry: {missing}"


REQUIRED = [
    operator.add, operator.sub, operator.mul, operator.truediv, operator.neg, operator.pos,
    operator.pow, operator.matmul, operator.getitem, operator.eq, operator.lt, operator.gt,
    np.exp, np.log, np.log1p, np.expm1, np.sqrt, np.sin, np.cos, np.tan, np.arcsin, np.arccos,
    np.arctan, np.arctan2, np.sinh, np.cosh, np.tanh, np.abs, np.absolute, np.sign, np.square,
    np.reciprocal, np.power, np.maximum, np.minimum, np.exp2, np.log2, np.log10, np.hypot,
    np.add, np.subtract, np.multiply, np.divide, np.true_divide, np.negative, np.fmax, np.fmin,
    np.arcsinh, np.arccosh, np.arctanh, np.logaddexp, np.where, np.clip,
    np.sum, np.mean, np.prod, np.max, np.min, np.amax, np.amin, np.var, np.std, np.linalg.norm,
    np.dot, np.matmul, np.outer, np.inner, np.tensordot, np.einsum, np.trace, np.transpose,
    np.linalg.inv, np.linalg.solve, np.linalg.det, np.linalg.slogdet,
    np.reshape, np.ravel, np.squeeze, np.expand_dims, np.concatenate, np.stack, np.hstack,
    np.vstack, np.broadcast_to, np.tile, np.repeat, np.flip, np.swapaxes, np.moveaxis,
    np.atleast_1d, np.atleast_2d, np.array, np.asarray, np.full, np.copy, np.cumsum,
    np.zeros_like, np.ones_like, np.empty_like, np.zeros, np.ones, np.empty, np.arange,
    np.linspace, np.eye, np.identity, np.greater, np.greater_equal, np.less, np.less_equal,
    np.equal, np.not_equal, np.floor, np.ceil, np.round, np.around, np.rint, np.trunc,
    np.isnan, np.isfinite, np.isinf, np.argmax, np.argmin, np.argsort, np.shape, np.ndim,
    np.size, np.logical_and, np.logical_or, np.logical_not, np.logical_xor, np.floor_divide,
    np.mod, np.remainder,
    *(getattr(np.ndarray, m) for m in (
        "T", "sum", "mean", "prod", "max", "min", "var", "std", "reshape", "ravel", "flatten",
        "squeeze", "transpose", "swapaxes", "dot", "copy", "astype", "clip", "cumsum", "trace",
        "shape", "ndim", "size", "dtype", "argmax", "argmin", "argsort")),
    *(getattr(math, f) for f in (
        "exp", "log", "log1p", "expm1", "sqrt", "sin", "cos", "tan", "asin", "acos", "atan",
        "atan2", "sinh", "cosh", "tanh", "pow", "hypot", "fabs", "erf", "floor", "ceil", "trunc")),
    abs, float, pow, max, min,
]


def test_required_primitives_are_registered_and_tested():
    entries = {id(e.primitive) for e in spec.SPECS + spec.NONDIFF}
    for prim in REQUIRED:
        name = registry.display_name(prim)
        assert registry.lookup(prim) or registry.is_nondifferentiable(prim), f"{name} unregistered"
        assert id(prim) in entries, f"{name} has no spec entry"


def _prim(a, b=1):
    return a


FORBIDDEN = 1.0


@pytest.mark.parametrize(("primitive", "wrt", "rule", "words"), [
    (_prim, (), lambda res, d_out, a: d_out, "(out, d_out)"),
    (_prim, ("zz",), lambda out, d_out, a: d_out, "'zz'"),
    (_prim, (), lambda out, d_out, b: d_out, "do not match"),
    (np.ldexp, (), lambda out, d_out, x: d_out, "ufunc takes 2"),
    (_prim, (), lambda out, d_out, a: d_out * FORBIDDEN, "FORBIDDEN"),
], ids=["first-params", "wrt-not-a-param", "param-names", "ufunc-arity", "forbidden-global"])
def test_malformed_rules_are_rejected(primitive, wrt, rule, words):
    name = "bad.prim" if primitive is _prim else "np.ldexp"
    with pytest.raises(RuleError) as info:
        registry.adjoint(primitive, *wrt, name=name if primitive is _prim else None)(rule)
    assert name in str(info.value) and words in str(info.value)
    assert registry.lookup(primitive) is None


def test_positional_only_parameters_may_be_renamed():
    def prim(x, /, axis=None):
        return x

    @registry.adjoint(prim, name="test.prim")
    def rule(out, d_out, a, axis=None):
        return d_out

    assert registry.lookup(prim).params == ("a", "axis")
    registry._RULES.pop(prim)


def _rule(prim):
    return registry.lookup(prim).fn


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_extremum_ties_split_equally(dtype):
    x = np.array([[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]], dtype)
    g = _rule(np.max)(np.max(x, axis=1), np.ones(2, dtype), x, axis=1)
    np.testing.assert_allclose(g, [[0, 0.5, 0.5], [1 / 3, 1 / 3, 1 / 3]], rtol=1e-6)
    assert g.dtype == dtype
    g = _rule(np.min)(np.min(x), np.array(1.0, dtype)[()], x)
    np.testing.assert_allclose(g, [[1, 0, 0], [0, 0, 0]])
    gx, gy = _rule(np.maximum)(x, np.ones_like(x), x, x)
    np.testing.assert_allclose(gx, 0.5 * np.ones_like(x))
    np.testing.assert_allclose(gy, 0.5 * np.ones_like(x))
    assert _rule(max)(2.0, 1.0, 2.0, 2.0) == (1.0, 0.0)  # builtin max: the first wins


def test_subgradients_at_zero_are_zero():
    z = np.zeros(3)
    for ord_ in (None, 1, 2, np.inf, 3):
        g = _rule(np.linalg.norm)(np.linalg.norm(z, ord_), 1.0, z, ord_)
        np.testing.assert_array_equal(g, z)
    np.testing.assert_array_equal(_rule(np.abs)(z, np.ones(3), z), z)
    np.testing.assert_array_equal(_rule(np.std)(np.std(z + 1), 1.0, z + 1), z)
    assert _rule(abs)(0.0, 1.0, 0.0) == 0.0 and type(_rule(abs)(2.0, 1.0, -2.0)) is float


def test_prod_with_zeros_uses_the_other_factors():
    x = np.array([2.0, 0.0, 3.0, 0.0])
    np.testing.assert_array_equal(_rule(np.prod)(0.0, 1.0, x), [0, 0, 0, 0])
    x[3] = 5.0
    np.testing.assert_array_equal(_rule(np.prod)(0.0, 1.0, x), [0, 30, 0, 0])


def test_getitem_of_a_tuple_gives_a_tuple():
    from srcgrad.runtime import getitem_grad, is_basic_index
    sign, logdet = np.linalg.slogdet(np.eye(2) * 3)
    grads = getitem_grad(np.float64(2.0), (sign, logdet), 1)
    assert isinstance(grads, tuple) and grads[1] == 2.0 and grads[0] == 0.0
    assert getitem_grad([1.0, 2.0], [4.0, 5.0, 6.0], slice(1, None)) == [0.0, 1.0, 2.0]
    assert is_basic_index((0, slice(None), None, Ellipsis)) and is_basic_index(np.int64(2))
    assert not is_basic_index([0, 1]) and not is_basic_index((0, np.array([1])))
    assert not is_basic_index(np.array([True])) and not is_basic_index(True)


def test_unsupported_variants_raise_clearly():
    x = np.ones((3, 3))
    with pytest.raises(srcgrad.MissingRuleError, match="repeated"):
        _rule(np.einsum)(np.einsum("ii->i", x), np.ones(3), "ii->i", x)
    with pytest.raises(srcgrad.MissingRuleError, match="sublist"):
        _rule(np.einsum)(np.einsum(x, [0, 1]), np.ones((3, 3)), x, [0, 1])
    with pytest.raises(srcgrad.MissingRuleError, match="ord=2"):
        _rule(np.linalg.norm)(np.linalg.norm(x, 2), 1.0, x, 2)
