"""Starred expressions, builtins on containers, validation code and unreachable
branches (normalize/sugar.py, frontend/reachable.py): what each becomes, that
gradients flow through it, and the located errors of what is left out.  The
corpus (tests/data/corpus.py) runs every check on whole programs using them."""

from __future__ import annotations

import sys

import gast
import numpy as np
import pytest
from numeric import assert_close, numeric_grad

import srcgrad
from srcgrad.frontend import fence
from srcgrad.frontend.parse import parse_function
from srcgrad.normalize.normalizer import normalize, unparse_body

X = np.array([0.3, -0.2, 0.5])


def _check(fn, *args, wrt=0):
    g = srcgrad.grad(fn, wrt=wrt)(*args)
    assert_close(g, numeric_grad(fn, args, wrt), rtol=1e-6, atol=1e-8)
    return g


def _normalized(fn) -> str:
    return unparse_body(normalize(parse_function(fn)))


# -- starred arguments and displays ---------------------------------------------------

def _affine(x, a, b):
    return x * a + b


def _weighted(scale, *terms):
    total = 0.0
    for t in terms:
        total = total + np.sum(t) * scale
    return total


def _passes_its_rest_on(*terms):
    return _weighted(2.0, *terms)


def starred_of_known_length(x):
    args = (2.0, np.sin(x))
    return np.sum(_affine(x, *args)) + _weighted(0.5, *[x, x * x])


def test_a_starred_tuple_built_in_the_function_is_its_elements():
    assert "t2 = args[0]\nt3 = args[1]\nt4 = _affine(x, t2, t3)" in \
        _normalized(starred_of_known_length)
    _check(starred_of_known_length, X)


COEFFICIENTS = (2.0, 0.5)


def starred_global_tuple(x):
    return np.sum(_affine(x, *COEFFICIENTS))


def test_a_starred_global_tuple_is_its_elements_until_it_is_rebound():
    global COEFFICIENTS
    g = srcgrad.grad(starred_global_tuple)
    np.testing.assert_allclose(g(X), 2.0)
    COEFFICIENTS = (3.0, 1.0, 7.0)
    try:
        with pytest.raises(srcgrad.UnsupportedSyntaxError, match="too many positional"):
            g(X)  # three arguments now, where _affine takes two
        COEFFICIENTS = (4.0, 1.0)
        np.testing.assert_allclose(g(X), 4.0)
    finally:
        COEFFICIENTS = (2.0, 0.5)


def rest_passed_on(x):
    return _passes_its_rest_on(x, x ** 2, np.tanh(x))


def test_a_rest_parameter_passed_on_whole():
    _check(rest_passed_on, X)


def shape_of_unknown_length(x):
    noise = np.random.RandomState(0).randn(*x.shape)
    grid = np.ones((*x.shape, 2))
    return np.sum(x * noise) + np.sum(grid[:, 0] * x)


def test_a_starred_value_of_unknown_length_stays_where_no_rule_needs_it():
    text = _normalized(shape_of_unknown_length)
    assert "t2 = x.shape\nnoise = t1.randn(*t2)\n" in text
    # (*x.shape, 2) -> tuple(x.shape) + (2,)
    assert "t4 = tuple(t3)\nt5 = (2,)\nt6 = t4 + t5\ngrid = np.ones(t6)" in text
    _check(shape_of_unknown_length, X)


def starred_into_a_rule(x):
    return np.sum(np.maximum(*x))


def starred_into_a_user_function(x, args):
    return np.sum(_affine(x, *args))


@pytest.mark.parametrize("fn", [starred_into_a_rule, starred_into_a_user_function])
def test_a_starred_value_of_unknown_length_where_positions_matter_is_refused(fn):
    args = (np.ones((2, 3)), (1.0, 2.0))[:fn.__code__.co_argcount]  # what fn takes
    with pytest.raises(srcgrad.UnsupportedSyntaxError, match="how many arguments") as info:
        srcgrad.grad(fn)(*args)
    assert info.value.lineno == fn.__code__.co_firstlineno + 1
    assert info.value.source_line[info.value.col] == "*"


@pytest.mark.skipif(sys.version_info < (3, 11), reason="x[*i] is Python 3.11 syntax")
def test_a_starred_index_is_refused_by_the_fence():
    func = gast.parse("def f(x, i):\n    return x[*i]").body[0]
    with pytest.raises(srcgrad.UnsupportedSyntaxError, match="starred") as info:
        fence.check(func, "model.py")
    assert (info.value.lineno, info.value.col) == (2, 13)


# -- starred and nested targets -------------------------------------------------------

def starred_targets(x, rows):
    first, *middle, last = rows
    a, *b = (x, x * 2.0, np.sin(x))
    total = np.sum(first * last) + np.sum(a * b[1]) + len(middle) + len(b)
    for head, *tail in [(x, x * x), (x * 3.0, x, rows[0])]:
        total = total + np.sum(head * tail[-1])
    return total


def test_starred_targets():
    text = _normalized(starred_targets)
    assert "first = rows[0]" in text and "middle = list(" in text and "last = rows[-1]" in text
    rows = np.arange(12.0).reshape(4, 3) / 10
    _check(starred_targets, X, rows, wrt=0)
    _check(starred_targets, X, rows, wrt=1)


def nested_targets(x, y):
    (p, q), r = (x, y), x * y
    total = 0.0
    for i, (a, (b, c)) in enumerate(zip(x, zip(y, r))):
        total = total + a * b * c * (i + 1)
    for (i, a), b in zip(enumerate(p, 2), q):
        total = total + a * b * i
    return total


def test_nested_targets_and_loops_over_nested_zip_and_enumerate():
    assert "zip" not in _normalized(nested_targets)  # the loops run in step over x, y, r
    _check(nested_targets, X, X[::-1] * 2.0)
    _check(nested_targets, X, X[::-1] * 2.0, wrt=1)


# -- builtins on containers ---------------------------------------------------------

def _pair_product(a, b):
    return a * b


def transposed(pairs):
    firsts, seconds = zip(*pairs)
    return np.sum(np.stack(firsts) * np.sin(np.stack(seconds)))


def test_zip_of_a_starred_list_transposes_it():
    pairs = [(X, X * 2.0), (X + 1.0, X - 1.0)]
    grads = srcgrad.grad(transposed)(pairs)
    assert isinstance(grads, list) and isinstance(grads[0], tuple)
    eps = 1e-6
    for i in range(2):
        for j in range(2):
            for k in range(3):
                bumped = [[np.array(v) for v in p] for p in pairs]
                bumped[i][j][k] += eps
                up = transposed([tuple(p) for p in bumped])
                bumped[i][j][k] -= 2 * eps
                down = transposed([tuple(p) for p in bumped])
                assert grads[i][j][k] == pytest.approx((up - down) / (2 * eps), abs=1e-6)


def maps(x, y):
    k = 3.0
    a = list(map(lambda v: np.tanh(v) * k, [x, y]))
    b = sum(map(_pair_product, x, y))
    c = tuple(map(np.sin, x))
    total = 0.0
    for h in map(np.exp, [x, y * 0.5]):
        total = total + np.sum(h)
    return np.sum(a[0] * a[1]) + b + c[2] + total


def test_map_with_a_lambda_a_user_function_and_several_iterables():
    assert "map" not in _normalized(maps)
    _check(maps, X, X * 2.0)
    _check(maps, X, X * 2.0, wrt=1)


def reversals(x, d):
    total = 0.0
    for i in reversed(range(3)):
        total = total * 0.5 + x[i]
    for key in reversed(d):
        total = total * 0.9 + np.sum(d[key] * x)
    return total + np.sum(np.array(list(reversed(x))) * np.arange(3.0))


def test_reversed():
    d = {"a": X * 2.0, "b": X + 1.0}
    np.testing.assert_allclose(srcgrad.grad(reversals)(X, d),
                               numeric_grad(reversals, (X, d), 0), rtol=1e-6)


def zips_and_enumerates_as_values(x, y, z):
    triples = list(zip(x, y, z))
    numbered = list(enumerate(x))
    return triples[0][0] * triples[2][2] + numbered[1][1] * numbered[2][0] * triples[1][1]


def test_zip_and_enumerate_as_values():
    _check(zips_and_enumerates_as_values, X, X * 2.0, X * 3.0)
    _check(zips_and_enumerates_as_values, X, X * 2.0, X * 3.0, wrt=2)


def any_and_all(x):
    v = x * 2.0
    flags = [any(x > 0.0), all(v), any(w > 10.0 for w in x)]
    if any(v > 10.0 for v in x) or not all(np.isfinite(x)):
        return np.sum(x)
    return np.sum(v ** 2) * (1.0 if flags[1] else 2.0)


def test_any_and_all_are_values_without_derivative():
    """``all(v)`` of a differentiated array, and a generator whose variable is
    also a local name, evaluated as written."""
    text = _normalized(any_and_all)
    assert "(v > 10.0 for v in x)" in text  # the generator's own v, not the local
    np.testing.assert_allclose(_check(any_and_all, X), 8 * X)


# -- validation code and unreachable branches -----------------------------------------

def _validated(x):
    if x.ndim != 1:
        raise ValueError(f"expected a vector, got shape {x.shape}")
    return np.sum(x ** 2)


def validates(x, kind):
    if kind not in ("sum", "max"):
        raise ValueError
    total = 0.0
    for row in x:
        if not np.all(np.isfinite(row)):
            raise FloatingPointError(f"row {row} is not finite")
        total = total + _validated(row) if kind == "sum" else max(total, _validated(row))
    return total


def test_raise_is_forward_only_control_flow():
    m = np.arange(6.0).reshape(2, 3) / 10
    for policy in ("save", "recompute", "sqrt"):
        np.testing.assert_allclose(srcgrad.grad(validates, policy=policy)(m, "sum"), 2 * m)
    with pytest.raises(ValueError, match="^$"):
        srcgrad.grad(validates)(m, "mean")
    with pytest.raises(FloatingPointError, match="not finite"):
        srcgrad.grad(validates)(m * np.array([1.0, np.inf, 1.0]), "sum")
    with pytest.raises(ValueError, match=r"expected a vector, got shape \(3, 1\)"):
        srcgrad.grad(validates)(m.reshape(2, 3, 1), "sum")
    _, tangent = srcgrad.jvp(validates, (m, "sum"), (np.ones_like(m), None))
    assert tangent == pytest.approx(2 * m.sum())


DEBUG = False


def unreachable(x):
    if False:
        with open("never") as f:
            f.write("x")
    while 0:
        del x
    if DEBUG:
        try:
            x = x * 2.0
        finally:
            pass
    if not DEBUG:
        x = x * 3.0
    return np.sum(x ** 2)


def test_unreachable_branches_are_not_errors_and_follow_the_global():
    global DEBUG
    g = srcgrad.grad(unreachable)
    np.testing.assert_allclose(g(X), 18 * X)
    DEBUG = True
    try:
        with pytest.raises(srcgrad.UnsupportedSyntaxError, match="'try'"):
            g(X)
    finally:
        DEBUG = False
    np.testing.assert_allclose(g(X), 18 * X)


# -- a parameter whose default is a function ----------------------------------------

def _softplus(z):
    return np.log1p(np.exp(z))


def layer(x, nonlinearity=np.tanh, last=_softplus, scale=2.0):
    h = nonlinearity(x * scale)
    hs = list(map(nonlinearity, [h, h * 0.5]))
    return np.sum(last(hs[0]) + hs[1])


def calls_layer(x):
    return layer(x) + layer(x * 2.0, scale=3.0)


def test_a_function_valued_default_is_called_as_that_function():
    source = srcgrad.grad(layer).source
    assert "def grad_layer(x, nonlinearity=np.tanh, last=_softplus, scale=2.0):" in source
    assert "if nonlinearity is not np.tanh:" in source and "np.tanh(" in source
    _check(layer, X)
    _check(calls_layer, X)
    _, tangent = srcgrad.jvp(layer, (X,), (np.ones(3),))
    assert tangent == pytest.approx(np.sum(srcgrad.grad(layer)(X)))


def test_another_function_passed_there_is_refused_when_the_code_runs():
    # The code made for the default refuses another function when it runs directly
    # (or exported); a gradient called with one generates code for it (API.md:
    # functions passed as arguments are resolved when it is called).
    direct = srcgrad.grad(layer)._get().functions[0]
    with pytest.raises(TypeError, match="layer was differentiated for nonlinearity=np.tanh"):
        direct(X, np.sin)
    assert srcgrad.grad(layer)(X, np.tanh) == pytest.approx(srcgrad.grad(layer)(X))
    _check(layer, X, np.sin)
