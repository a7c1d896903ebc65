"""Every rule in both modes, driven by the spec table (tests/spec.py).

For every entry and dtype:

* the adjoint rule is called directly on the primitive's output, a random
  cotangent ``u`` and the primitive's arguments; its cotangents must have their
  arguments' shapes and dtypes, satisfy the dot-product identity
  ``<u, J v> = <J^T u, v>`` (``J v`` by central differences in float64) and,
  for small inputs, match ``J^T u`` element by element;
* the tangent rule is called directly the same way with a random tangent per
  differentiable argument; the sum of its terms must match ``J v`` and have
  the output's shape (and its dtype, for floating arrays);
* the entry, compiled end to end (test_spec_compiled.py), runs through
  ``srcgrad.jvp``: the tangent must match ``J v``, agree with reverse mode
  through the dot-product identity, have the output's shape and stay float32
  for float32 inputs.

The rest checks the registry: every rule has an entry and a rule in the other
mode, the required primitives are there, malformed rules and declarations are
refused, and the conventions (ties, subgradients at 0, exact products with
zeros) hold.
"""

from __future__ import annotations

import ast
import collections
import inspect
import math
import operator
import warnings
import zlib

import numpy as np
import pytest
import spec
from numeric import assert_close, inner, jvp_fd, random_like
from spec import apply, resolve
from test_spec_compiled import COMPILED, _entry

import srcgrad
from srcgrad.errors import RuleError
from srcgrad.ir import Builder
from srcgrad.rules import alias, linear, pointwise, registry

TOL = {"float64": 1e-5, "float32": 2e-3}
H = 1e-6
PARAMS = [pytest.param(e, d, id=f"{e.id}-{d}") for e in spec.SPECS for d in e.dtypes]


def _flat(value):
    if isinstance(value, (tuple, list)):
        return np.concatenate([_flat(v) for v in value]) if value else np.zeros(0)
    # a complex output (an FFT's, a Python complex) is compared through its real part
    return np.ravel(np.real(np.asarray(value)).astype(np.float64))


def _random_like(value, rng):
    if isinstance(value, (tuple, list)):
        return tuple(_random_like(o, rng) for o in value)
    if isinstance(value, float):
        return float(rng.standard_normal())
    value = np.asarray(value)
    return rng.standard_normal(value.shape).astype(value.dtype)[()]


def _as64(value):
    return value if isinstance(value, float) else np.asarray(value, dtype=np.float64)


def _env64(env):
    """The inputs with every floating array in float64 (finite differences)."""
    return {k: (v.astype(np.float64) if isinstance(v, np.ndarray) and v.dtype.kind == "f" else v)
            for k, v in env.items()}


def _value_at(entry, env, steps):
    """The primitive's output, in float64, at ``env`` moved by ``steps``."""
    env = _env64(env)
    for name, delta in steps.items():
        env[name] = env[name] + delta
    _, args, kwargs, _, _ = resolve(entry.source, env)
    return apply(entry.primitive, args, kwargs)


def _operands(rule, nodes, kw_nodes, values, kw_values):
    """For each differentiable parameter of ``rule`` the entry passes: the
    argument nodes and values it holds (several for a sequence), and whether it
    is a sequence."""
    bound = rule.signature.bind(*nodes, **kw_nodes)
    held = rule.signature.bind(*values, **kw_values)
    for w in rule.wrt:
        if w not in bound.arguments:
            continue
        node, value = bound.arguments[w], held.arguments[w]
        if rule.signature.parameters[w].kind is inspect.Parameter.VAR_POSITIONAL:
            yield w, list(node), list(value), True
        elif isinstance(node, (ast.List, ast.Tuple)):
            yield w, list(node.elts), list(value), True
        else:
            yield w, [node], [value], False


def _is_input(entry, node) -> bool:
    return isinstance(node, ast.Name) and node.id in entry.wrt


# -- the adjoint rule, called directly ------------------------------------------------

def call_rule(entry, dtype):
    """Run the entry's adjoint rule; return (inputs, u, {input name: cotangent})."""
    env = entry.make(dtype)
    prim, args, kwargs, nodes, kw_nodes = resolve(entry.source, env)
    # == for a bound method (scipy.stats.norm.logpdf), made anew at each access
    assert prim == entry.primitive, f"{entry.source} calls {prim!r}"
    rule = registry.lookup(prim)
    assert rule is not None, f"no rule for {entry.source}"
    out = apply(prim, args, kwargs)
    u = _random_like(out, np.random.default_rng(zlib.crc32(entry.id.encode()) + 1))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ret = rule.fn(out, u, *args, **kwargs)
    if len(rule.wrt) > 1:
        assert isinstance(ret, tuple) and len(ret) == len(rule.wrt), ret
    results = dict(zip(rule.wrt, ret if len(rule.wrt) > 1 else (ret,)))
    grads = {}
    for w, parts, _, sequence in _operands(rule, nodes, kw_nodes, args, kwargs):
        g = results[w]
        if sequence:
            assert isinstance(g, (list, tuple)), f"{w}: a sequence needs a sequence of cotangents"
            pairs = list(zip(parts, g, strict=True))
        else:
            pairs = [(parts[0], g)]
        for n, gn in pairs:
            if _is_input(entry, n):
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


@pytest.mark.parametrize(("entry", "dtype"), PARAMS)
def test_adjoint_rule(entry, dtype):
    env, u, grads = call_rule(entry, dtype)
    tol = TOL[dtype]
    rng = np.random.default_rng(7)
    vs = {n: (float(rng.standard_normal()) if isinstance(env[n], float)
              else rng.standard_normal(np.shape(env[n]))) for n in entry.wrt}

    def phi(steps):
        return float(_flat(u) @ _flat(_value_at(entry, env, steps)))

    lhs = (phi({n: H * v for n, v in vs.items()}) - phi({n: -H * v for n, v in vs.items()})) \
        / (2 * H)
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
                fd[j] = (phi({n: delta}) - phi({n: -delta})) / (2 * H)
            np.testing.assert_allclose(grads[n], fd, rtol=tol, atol=tol * (1 + np.abs(fd).max()),
                                       err_msg=f"J^T u for {n}")


# -- the tangent rule, called directly ------------------------------------------------

def _add(a, b):
    """Terms of a structured output add part by part."""
    if a is None:
        return b
    if isinstance(a, (tuple, list)):
        return type(a)(_add(x, y) for x, y in zip(a, b, strict=True))
    return a + b


def call_tangent_rule(entry, dtype):
    """Run the entry's tangent rule; return (inputs, output, {input: direction},
    the sum of the terms of the moving arguments)."""
    env = entry.make(dtype)
    prim, args, kwargs, nodes, kw_nodes = resolve(entry.source, env)
    rule = registry.lookup_tangent(prim)
    assert rule is not None, f"no tangent rule for {entry.source}"
    out = apply(prim, args, kwargs)
    rng = np.random.default_rng(zlib.crc32(entry.id.encode()) + 2)
    vs = {n: _random_like(env[n], rng) for n in entry.wrt}
    tangents, moving = {}, set()
    for w, parts, held, sequence in _operands(rule, nodes, kw_nodes, args, kwargs):
        ts = [vs[n.id] if _is_input(entry, n)  # else a zero, as forward mode passes
              else 0.0 if isinstance(n, ast.Constant) else srcgrad.runtime.zero_tangent(v)
              for n, v in zip(parts, held)]
        if any(_is_input(entry, n) for n in parts):
            moving.add(w)
        tangents[f"d_{w}"] = tuple(ts) if sequence else ts[0]
    for w in rule.wrt:
        tangents.setdefault(f"d_{w}", 0.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ret = rule.fn(out, *args, **kwargs, **tangents)
    if len(rule.wrt) > 1:
        assert isinstance(ret, tuple) and len(ret) == len(rule.wrt), ret
    total = None
    for w, term in zip(rule.wrt, ret if len(rule.wrt) > 1 else (ret,)):
        if w in moving:
            total = _add(total, term)
    assert total is not None, f"no argument of {entry.source} moves"
    return env, out, vs, total


@pytest.mark.parametrize(("entry", "dtype"), PARAMS)
def test_tangent_rule(entry, dtype):
    env, out, vs, total = call_tangent_rule(entry, dtype)
    numeric = (_flat(_value_at(entry, env, {n: H * _as64(v) for n, v in vs.items()}))
               - _flat(_value_at(entry, env, {n: -H * _as64(v) for n, v in vs.items()}))) / (2 * H)
    tol = TOL[dtype]
    np.testing.assert_allclose(_flat(total), numeric, rtol=tol,
                               atol=tol * (1 + np.abs(numeric).max(initial=0)),
                               err_msg=f"J v of {entry.source}")
    several = isinstance(out, (tuple, list))  # np.split's list of arrays too
    for o, t in zip(out if several else (out,), total if several else (total,)):
        assert np.shape(t) == np.shape(o), f"tangent shape {np.shape(t)} != {np.shape(o)}"
        if isinstance(o, np.ndarray) and o.dtype.kind == "f":
            assert np.result_type(t) == o.dtype, f"tangent {np.result_type(t)} != {o.dtype}"


# -- both modes, compiled end to end --------------------------------------------------

def _directions(entry, args, rng):
    wrt = [entry.args.index(name) for name in entry.wrt]
    return wrt, [random_like(rng, a) if i in wrt else None for i, a in enumerate(args)]


@pytest.mark.parametrize("index", range(len(spec.SPECS)), ids=[s.id for s in spec.SPECS])
def test_forward_mode_matches_differences_and_reverse_mode(index):
    entry, fn, args, _ = _entry(COMPILED, spec.SPECS, index)
    rng = np.random.default_rng(index)
    wrt, tangents = _directions(entry, args, rng)
    value, tangent = srcgrad.jvp(fn, args, tangents)
    directions = [tangents[i] for i in wrt]
    numeric = jvp_fd(fn, args, wrt, directions)
    if isinstance(numeric, tuple):
        assert isinstance(tangent, tuple) and len(tangent) == len(numeric), entry.expr
        for t, n in zip(tangent, numeric):
            assert_close(t, n, rtol=1e-5, atol=1e-6, what=entry.expr)
            assert np.shape(t) == np.shape(n), entry.expr
    else:
        assert_close(tangent, numeric, rtol=1e-5, atol=1e-6, what=entry.expr)
        assert np.shape(tangent) == np.shape(value), entry.expr
    u = random_like(rng, value)
    _, pullback = srcgrad.vjp(fn, *args, wrt=tuple(wrt))
    lhs = inner(u, tangent)
    rhs = sum(inner(c, v) for c, v in zip(pullback(u), directions))
    assert lhs == pytest.approx(rhs, rel=1e-6, abs=1e-8), entry.expr


@pytest.mark.parametrize("index", [i for i, s in enumerate(spec.SPECS) if "float32" in s.dtypes],
                         ids=[s.id for s in spec.SPECS if "float32" in s.dtypes])
def test_forward_mode_keeps_float32(index):
    entry, fn, args, values = _entry(COMPILED, spec.SPECS, index, "float32")
    if not any(isinstance(values[n], np.ndarray) for n in entry.wrt):
        pytest.skip("no float32 array argument")
    _, tangents = _directions(entry, args, np.random.default_rng(index))
    tangents = [t if t is None or not isinstance(args[i], np.ndarray)
                else np.asarray(t, np.float32) for i, t in enumerate(tangents)]
    value, tangent = srcgrad.jvp(fn, args, tangents)
    for v, t in zip(value if isinstance(value, tuple) else (value,),
                    tangent if isinstance(tangent, tuple) else (tangent,)):
        if isinstance(v, np.ndarray) and v.dtype == np.float32:
            assert np.asarray(t).dtype == np.float32, entry.expr


# -- the registry ---------------------------------------------------------------------

@pytest.mark.parametrize("entry", spec.NONDIFF, ids=lambda e: e.id)
def test_nondifferentiable(entry):
    env = entry.make()
    prim, args, kwargs, _, _ = resolve(entry.source, env)
    # == for a bound method (scipy.stats.norm.logpdf), made anew at each access
    assert prim == entry.primitive, f"{entry.source} calls {prim!r}"
    assert registry.is_nondifferentiable(prim) and registry.lookup(prim) is None
    assert registry.lookup_tangent(prim) is None
    apply(prim, args, kwargs)


def test_ids_unique():
    ids = [e.id for e in spec.SPECS + spec.NONDIFF]
    assert len(ids) == len(set(ids)), sorted({i for i in ids if ids.count(i) > 1})


def _identity(primitive):
    """``id`` of a primitive; a ufunc's method (``np.add.reduce``), a new bound
    object at each lookup, by its ufunc and name."""
    owner = getattr(primitive, "__self__", None)
    if isinstance(owner, np.ufunc):
        return (id(owner), primitive.__name__)
    return id(primitive)


def test_every_rule_has_an_entry():
    """Every rule of a callable primitive, in either mode; displays and attribute
    reads (ir.Builder) are not calls, and the corpus covers them (containers,
    objects)."""
    tested = {_identity(e.primitive) for e in spec.SPECS}
    tested.add(id(srcgrad.runtime.tangent_attr))  # reads a tangent object: test_higher.py
    # dicts in, dicts out (a | b): the end-to-end tests of e2e/test_containers_more.py, hvp too
    tested |= {id(srcgrad.runtime.merged), id(srcgrad.runtime.merge_tangent)}
    # dict(items) of a mapping or pairs, a dict out: e2e/test_dict_calls.py, hvp too
    tested |= {id(dict), id(srcgrad.runtime.dict_cotangent), id(srcgrad.runtime.dict_tangent)}
    # collections.OrderedDict(items), dict's rules: e2e/test_ordered_dicts.py, hvp too
    tested.add(id(collections.OrderedDict))
    # a dict out, dict.fromkeys(keys, v): tests/api/test_located_user_mistakes.py, both modes
    tested |= {id(p) for t in (registry.all_rules(), registry.all_tangents()) for p in t
               if p == dict.fromkeys}
    for table in (registry.all_rules(), registry.all_tangents()):
        missing = [r.name for p, r in table.items() if _identity(p) not in tested
                   and not isinstance(p, Builder) and r.called is None]
        assert not missing, f"rules without a spec entry: {missing}"
    marked = {id(e.primitive) for e in spec.NONDIFF}
    missing = [n for p, n in registry.all_nondifferentiable().items() if id(p) not in marked]
    assert not missing, f"non-differentiable primitives without an entry: {missing}"


def test_every_rule_has_both_modes():
    rules, tangents = registry.all_rules(), registry.all_tangents()
    missing = sorted(rule.name for prim, rule in rules.items()
                     if prim not in tangents and rule.called is None)
    assert not missing, f"adjoint rules without a tangent rule: {missing}"
    missing = sorted(rule.name for prim, rule in tangents.items()
                     if prim not in rules and rule.called is None)
    assert not missing, f"tangent rules without an adjoint rule: {missing}"


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
    (np.gcd, (), lambda out, d_out, x: d_out, "ufunc takes 2"),
    (_prim, (), lambda out, d_out, a: d_out * FORBIDDEN, "FORBIDDEN"),
], ids=["first-params", "wrt-not-a-param", "param-names", "ufunc-arity", "forbidden-global"])
def test_malformed_rules_are_rejected(primitive, wrt, rule, words):
    name = "bad.prim" if primitive is _prim else "np.gcd"
    with pytest.raises(RuleError) as info:
        registry.adjoint(primitive, *wrt, name=name if primitive is _prim else None)(rule)
    assert name in str(info.value) and words in str(info.value)
    assert registry.lookup(primitive) is None


@pytest.mark.parametrize(("declare", "words"), [
    (lambda: registry.tangent(_prim, name="bad.prim")(lambda res, a, d_a: d_a), "'out'"),
    (lambda: registry.tangent(_prim, name="bad.prim")(lambda out, d_a, a: d_a), "last"),
    (lambda: registry.tangent(_prim, name="bad.prim")(lambda out, a, d_b: d_b), "d_a"),
    (lambda: pointwise(np.spacing, lambda x, y: x), "optionally 'out'"),
    (lambda: pointwise(np.spacing, np.exp), "lambda"),
    (lambda: pointwise(np.spacing, lambda x: FORBIDDEN), "FORBIDDEN"),
    (lambda: pointwise(np.gcd, lambda x: 1), "ufunc takes 2"),
    (lambda: linear(_prim, "a", name="bad.prim", keywords=("c",))(
        lambda out, d_out, a, b=1: d_out), "no parameters ['c']"),
    (lambda: alias(_prim, np.gcd, name="bad.prim"), "has no rules"),
    (lambda: alias(np.gcd, np.clip, "a", "out", "x"), "already uses the names ['out']"),
], ids=["tangent-first-param", "tangent-order", "tangent-names", "pointwise-arity",
        "pointwise-not-a-lambda", "pointwise-forbidden-global", "pointwise-binary", "linear-keyword",
        "alias-no-twin", "alias-clash"])
def test_malformed_declarations_are_rejected(declare, words):
    restore = registry.restore_point()
    try:
        with pytest.raises(RuleError) as info:
            declare()
        assert words in str(info.value)
    finally:
        restore()
    for prim in (np.gcd, np.spacing, _prim):
        assert registry.lookup(prim) is None and registry.lookup_tangent(prim) is None


def test_positional_only_parameters_may_be_renamed():
    def prim(x, /, axis=None):
        return x

    @registry.adjoint(prim, name="test.prim")
    def rule(out, d_out, a, axis=None):
        return d_out

    assert registry.lookup(prim).params == ("a", "axis")
    registry._RULES.pop(prim)


def test_declared_rules_are_written_out_like_hand_written_ones():
    """pointwise, linear and alias write rule functions whose source reads as a
    person would write it (the inliner reads that source)."""
    sources = {prim: inspect.getsource(fn).strip() for prim, fn in (
        (np.sqrt, registry.lookup(np.sqrt).fn), (np.exp2, registry.lookup_tangent(np.exp2).fn),
        (math.erfc, registry.lookup(math.erfc).fn),
        (operator.getitem, registry.lookup_tangent(operator.getitem).fn),
        (operator.pow, registry.lookup(operator.pow).fn))}
    assert sources[np.sqrt].endswith("return d_out / (2 * out)")
    assert sources[np.exp2].endswith("return d_x * out * math.log(2)")
    assert sources[math.erfc].endswith(
        "return -d_out * (2 / math.sqrt(math.pi)) * math.exp(-x * x)")
    assert sources[operator.getitem] == "def getitem(out, a, index, d_a):\n    return d_a[index]"
    assert "def power(out, d_out, a, b):" in sources[operator.pow]
    assert "b * a ** (b - (b != 0))" in sources[operator.pow]  # 0 at b = 0, not 0 * a ** -1
    assert registry.lookup(operator.pow).params == ("a", "b")
    assert registry.lookup(np.ndarray.clip).params == ("a", "min", "max")


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
    t = registry.lookup_tangent(np.max).fn(np.max(x, axis=1), x, axis=1, d_a=np.ones_like(x))
    np.testing.assert_allclose(t, [1, 1], rtol=1e-6)  # the mean of the tied tangents
    tx, ty = registry.lookup_tangent(np.maximum).fn(x, x, x, np.ones_like(x), np.ones_like(x))
    np.testing.assert_allclose(tx + ty, np.ones_like(x))


def test_subgradients_at_zero_are_zero():
    z = np.zeros(3)
    for ord_ in (None, 1, 2, np.inf, 3):
        g = _rule(np.linalg.norm)(np.linalg.norm(z, ord_), 1.0, z, ord_)
        np.testing.assert_array_equal(g, z)
    np.testing.assert_array_equal(_rule(np.abs)(z, np.ones(3), z), z)
    np.testing.assert_array_equal(_rule(np.std)(np.std(z + 1), 1.0, z + 1), z)
    assert _rule(abs)(0.0, 1.0, 0.0) == 0.0 and type(_rule(abs)(2.0, 1.0, -2.0)) is float
    np.testing.assert_array_equal(registry.lookup_tangent(np.abs).fn(z, z, np.ones(3)), z)
    assert registry.lookup_tangent(np.linalg.norm).fn(0.0, z, d_x=np.ones(3)) == 0.0


def test_prod_with_zeros_uses_the_other_factors():
    x = np.array([2.0, 0.0, 3.0, 0.0])
    np.testing.assert_array_equal(_rule(np.prod)(0.0, 1.0, x), [0, 0, 0, 0])
    x[3] = 5.0
    np.testing.assert_array_equal(_rule(np.prod)(0.0, 1.0, x), [0, 30, 0, 0])
    e = np.eye(4)
    terms = [registry.lookup_tangent(np.prod).fn(0.0, x, d_a=e[i]) for i in range(4)]
    np.testing.assert_array_equal(terms, [0, 30, 0, 0])


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
    with pytest.raises(srcgrad.MissingRuleError, match="sublist"):
        _rule(np.einsum)(np.einsum(x, [0, 1]), np.ones((3, 3)), x, [0, 1])
    wide = np.arange(6.0).reshape(2, 3) ** 2
    factors = np.linalg.svd(wide)
    extra = np.zeros((3, 3))
    extra[:, 2] = 1.0  # the third right singular vector, which is not unique
    with pytest.raises(srcgrad.MissingRuleError, match="full_matrices=False"):
        _rule(np.linalg.svd)(factors, (0.0, np.ones(2), extra.T), wide)
    # the singular values alone have a derivative whatever full_matrices says
    reduced = np.linalg.svd(wide, full_matrices=False)
    np.testing.assert_allclose(_rule(np.linalg.svd)(factors, (0.0, np.ones(2), 0.0), wide),
                               reduced[0] @ reduced[2], rtol=1e-12)
