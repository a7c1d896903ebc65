"""What a generated function does with its arguments, as Python would.

- A named tuple's fields read by name (``p.W``) get their gradient like its
  items (``p[0]``): the gradient is the same named tuple type.  A property the
  output depends on is refused (its getter is not differentiated).
- No transformation changes the caller's arrays, whatever name the function
  updates them through (``h = x; h[0] = v``, a view, an array a list holds).
- Two arguments that are one array, where the function updates one in place
  (``f(x, x)``), raise ``AliasedUpdateError`` instead of a value that differs
  from Python's.
- New ``__defaults__`` of the function, or of a function it calls, are seen on
  the next call.

Gradients are checked against central differences (and autograd where it
runs); values bit for bit against the function's own.
"""

from __future__ import annotations

import copy
from collections import namedtuple
from typing import NamedTuple

import numpy as np
import pytest

import srcgrad
from srcgrad import AliasedUpdateError, SrcGradError

Params = namedtuple("Params", ["W", "b"])
Pair = namedtuple("Pair", "a b")


class Typed(NamedTuple):
    W: np.ndarray
    b: np.ndarray

    @property
    def doubled(self):
        return self.W * 2.0


def nt_loss(p, x):
    return np.sum(np.tanh(x @ p.W + p.b))


def nt_simple(p):
    return p.a * p.b


def nt_mixed(p):
    return p.a * p[1] + p.b


def nt_unpack_and_attr(p, x):
    W, b = p
    return np.sum(np.tanh(x @ W + p.b) * b)


def nt_list(ps, x):
    h = x
    for p in ps:
        h = np.tanh(h @ p.W + p.b)
    return np.sum(h)


def nt_dict(d, x):
    return np.sum(np.tanh(x @ d["layer"].W + d["layer"].b)) * d["scale"]


def nt_property(p):
    return np.sum(p.doubled) + np.sum(p.b)


def eigh_fields(a):
    return np.sum(np.linalg.eigh(a).eigenvalues ** 2)


def slogdet_field(a):
    return np.linalg.slogdet(a).logabsdet


def svd_field(a):
    return np.sum(np.linalg.svd(a).S)


def _fd(f, args, position, eps=1e-6):
    """Central differences of scalar ``f`` in every float leaf of argument ``position``."""
    def leaves(v, path=()):
        if isinstance(v, np.ndarray):
            yield path, v
        elif isinstance(v, dict):
            for k in v:
                yield from leaves(v[k], (*path, k))
        elif isinstance(v, (list, tuple)):
            for i, item in enumerate(v):
                yield from leaves(item, (*path, i))

    def value(*args):  # on copies: the function may update its arguments in place
        return f(*copy.deepcopy(args))

    grads = {}
    for path, leaf in leaves(args[position]):
        g = np.zeros_like(leaf)
        for k in np.ndindex(leaf.shape):
            old = leaf[k]
            leaf[k] = old + eps
            up = value(*args)
            leaf[k] = old - eps
            down = value(*args)
            leaf[k] = old
            g[k] = (up - down) / (2 * eps)
        grads[path] = g
    return grads


def _at(g, path):
    for k in path:
        g = g[k]
    return g


RNG = np.random.RandomState(0)
X = RNG.randn(4, 3)
W, B = RNG.randn(3, 2), RNG.randn(2)


@pytest.mark.parametrize("fn,args", [
    (nt_loss, (Params(W.copy(), B.copy()), X)),
    (nt_loss, (Typed(W.copy(), B.copy()), X)),
    (nt_unpack_and_attr, (Params(W.copy(), B.copy()), X)),
    (nt_list, ([Params(W.copy(), B.copy()), Params(RNG.randn(2, 2), RNG.randn(2))], X)),
    (nt_dict, ({"layer": Params(W.copy(), B.copy()), "scale": np.array(1.5)}, X)),
], ids=["namedtuple", "typing.NamedTuple", "unpacked", "list", "dict"])
def test_namedtuple_attributes_have_gradients(fn, args):
    value, g = srcgrad.value_and_grad(fn)(*args)
    assert value == fn(*args)
    for path, expected in _fd(fn, args, 0).items():
        np.testing.assert_allclose(_at(g, path), expected, rtol=1e-6, atol=1e-8)
    assert type(_at(g, ())) is type(args[0])


def test_namedtuple_gradient_is_the_same_type():
    assert srcgrad.grad(nt_simple)(Pair(2.0, 3.0)) == Pair(3.0, 2.0)
    assert srcgrad.grad(nt_mixed)(Pair(2.0, 3.0)) == Pair(3.0, 3.0)


def test_namedtuple_pullback_and_jvp():
    value, pullback = srcgrad.vjp(nt_simple, Pair(2.0, 3.0))
    assert value == 6.0
    assert pullback(1.0) == (Pair(3.0, 2.0),)
    assert srcgrad.jvp(nt_simple, (Pair(2.0, 3.0),), (Pair(1.0, 0.0),))[1] == 3.0


def test_namedtuple_matches_autograd():
    autograd = pytest.importorskip("autograd")
    anp = pytest.importorskip("autograd.numpy")
    p = Params(W.copy(), B.copy())

    def by_items(W, b):
        return anp.sum(anp.tanh(anp.dot(X, W) + b))

    dW, db = autograd.grad(by_items, argnum=(0, 1))(p.W, p.b)
    g = srcgrad.grad(nt_loss)(p, X)
    np.testing.assert_allclose(g.W, dW, rtol=1e-12)
    np.testing.assert_allclose(g.b, db, rtol=1e-12)


def test_hvp_through_namedtuple_attributes():
    p = Params(W.copy(), B.copy())
    v = Params(np.ones_like(W), np.zeros_like(B))
    hv = srcgrad.hvp(nt_loss)(p, X, v)
    eps = 1e-6
    up = srcgrad.grad(nt_loss)(Params(W + eps, B), X)
    down = srcgrad.grad(nt_loss)(Params(W - eps, B), X)
    np.testing.assert_allclose(hv.W, (up.W - down.W) / (2 * eps), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(hv.b, (up.b - down.b) / (2 * eps), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("fn", [eigh_fields, slogdet_field, svd_field])
def test_named_results_of_numpy_have_gradients(fn):
    a = RNG.randn(3, 3)
    a = a @ a.T + 3 * np.eye(3)
    g = srcgrad.grad(fn)(a.copy())
    assert np.any(g != 0)
    for k in range(3):  # along symmetric directions (eigh reads one triangle)
        e = np.random.RandomState(k).randn(3, 3)
        e = e + e.T
        eps = 1e-6
        expected = (fn(a + eps * e) - fn(a - eps * e)) / (2 * eps)
        np.testing.assert_allclose(np.sum(g * e), expected, rtol=1e-6, atol=1e-8)


def test_property_read_is_refused_not_zero():
    with pytest.raises(srcgrad.MissingRuleError, match="property Typed.doubled") as info:
        srcgrad.grad(nt_property)(Typed(W.copy(), B.copy()))
    assert info.value.lineno is not None


# -- the caller's arrays never change -----------------------------------------------

def through_a_name(x):
    h = x
    h[0] = h[0] ** 3
    return np.sum(h ** 2)


def through_a_view(x):
    r = x[1:]
    r[0] = r[0] * 3.0
    return np.sum(x ** 2)


def through_a_list_item(xs):
    a = xs[0]
    a[0] = 5.0 * a[1]
    return np.sum(a ** 2)


def returns_updated(x):
    h = x
    h[0] = h[0] ** 3
    return h * 2.0


def _transforms(fn, x):
    """Every transformation of ``fn`` at ``x`` (a float array), as thunks."""
    scalar = np.ndim(fn(x.copy())) == 0
    out = {
        "vjp": lambda: srcgrad.vjp(fn, x)[1](np.ones_like(np.asarray(fn(x.copy())))),
        "vjp value only": lambda: srcgrad.vjp(fn, x)[0],
        "jvp": lambda: srcgrad.jvp(fn, (x,), (np.ones_like(x),)),
        "jvp function": lambda: srcgrad.jvp(fn, wrt=0)(x, np.ones_like(x)),
        "jacobian": lambda: srcgrad.jacobian(fn)(x),
    }
    if scalar:
        out.update({
            "grad": lambda: srcgrad.grad(fn)(x),
            "value_and_grad": lambda: srcgrad.value_and_grad(fn)(x),
            "grad check=True": lambda: srcgrad.grad(fn, check=True)(x),
            "grad recompute": lambda: srcgrad.grad(fn, policy="recompute")(x),
        })
    return out


@pytest.mark.parametrize("fn", [through_a_name, through_a_view, returns_updated])
def test_no_transformation_changes_the_caller_array(fn):
    x0 = np.array([1.5, 2.0, -1.0])
    for name in _transforms(fn, x0.copy()):
        x = x0.copy()
        thunks = _transforms(fn, x)
        first = thunks[name]()
        assert np.array_equal(x, x0), name
        second = thunks[name]()  # the same again: nothing was left changed
        for a, b in zip(np.atleast_1d(np.asarray(first, dtype=object)),
                        np.atleast_1d(np.asarray(second, dtype=object))):
            np.testing.assert_array_equal(np.asarray(a, dtype=float),
                                          np.asarray(b, dtype=float))


def test_jvp_twice_gives_the_same_value():
    x = np.array([1.5, 2.0, -1.0])
    first = srcgrad.jvp(through_a_name, (x,), (np.ones(3),))
    second = srcgrad.jvp(through_a_name, (x,), (np.ones(3),))
    assert first == second
    assert first[0] == through_a_name(x.copy())


def test_list_argument_items_are_not_changed():
    xs = [np.array([1.5, 2.0, -1.0])]
    value, g = srcgrad.value_and_grad(through_a_list_item)(xs)
    assert np.array_equal(xs[0], [1.5, 2.0, -1.0])
    assert value == through_a_list_item([xs[0].copy()])
    expected = _fd(through_a_list_item, ([xs[0].copy()],), 0)[(0,)]
    np.testing.assert_allclose(g[0], expected, rtol=1e-6, atol=1e-8)
    srcgrad.jvp(through_a_list_item, (xs,), ([np.ones(3)],))
    assert np.array_equal(xs[0], [1.5, 2.0, -1.0])


def test_gradient_through_a_name_matches_differences_and_autograd():
    x = np.array([1.5, 2.0, -1.0])
    g = srcgrad.grad(through_a_name)(x)
    np.testing.assert_allclose(g, _fd(through_a_name, (x.copy(),), 0)[()], rtol=1e-6)
    autograd = pytest.importorskip("autograd")
    anp = pytest.importorskip("autograd.numpy")
    np.testing.assert_allclose(
        g, autograd.grad(lambda v: anp.sum(anp.concatenate([v[:1] ** 3, v[1:]]) ** 2))(x),
        rtol=1e-12)


# -- one array passed as two arguments, one updated in place -------------------------

def aliased_args(a, b):
    a[0] = 5.0 * b[1]
    return np.sum(a * b)


def aliased_augmented(a, b):
    a += 1.0
    return np.sum(a * b)


def aliased_through_a_name(a, b):
    h = a
    h[1] = 2.0 * b[0]
    return np.sum(h * b)


def appends(xs, ys):
    xs.append(ys[0] * 2.0)
    return sum(v * v for v in ys)


@pytest.mark.parametrize("fn", [aliased_args, aliased_augmented, aliased_through_a_name])
@pytest.mark.parametrize("how", ["grad", "value_and_grad", "vjp", "jvp"])
def test_one_array_as_two_arguments_is_refused(fn, how):
    x = np.array([1.0, 2.0, 3.0])
    run = {"grad": lambda: srcgrad.grad(fn, wrt=1)(x, x),
           "value_and_grad": lambda: srcgrad.value_and_grad(fn, wrt=(0, 1))(x, x),
           "vjp": lambda: srcgrad.vjp(fn, x, x),
           "jvp": lambda: srcgrad.jvp(fn, (x, x), (np.ones(3), None))}[how]
    with pytest.raises(AliasedUpdateError, match="'a' is updated in place") as info:
        run()
    assert info.value.lineno is not None
    assert np.array_equal(x, [1.0, 2.0, 3.0])


def test_overlapping_views_are_refused_and_distinct_ones_run():
    x = np.array([1.0, 2.0, 3.0, 4.0])
    with pytest.raises(AliasedUpdateError):
        srcgrad.grad(aliased_args, wrt=1)(x[:3], x[1:])
    a, b = x[0::2], x[1::2]  # interleaved, no element shared: as Python
    value, _ = srcgrad.value_and_grad(aliased_args, wrt=1)(a, b)
    assert value == aliased_args(a.copy(), b.copy())


def test_one_list_as_two_arguments_is_refused():
    xs = [1.0, 2.0]
    with pytest.raises(AliasedUpdateError, match="'ys'"):
        srcgrad.grad(appends, wrt=1)(xs, xs)
    assert xs == [1.0, 2.0]


@pytest.mark.parametrize("fn", [aliased_args, aliased_augmented, aliased_through_a_name])
def test_distinct_arrays_give_python_values_and_gradients(fn):
    a, b = np.array([1.0, 2.0, 3.0]), np.array([0.5, -1.0, 2.0])
    value, (ga, gb) = srcgrad.value_and_grad(fn, wrt=(0, 1))(a, b)
    assert value == fn(a.copy(), b.copy())
    assert np.array_equal(a, [1.0, 2.0, 3.0]) and np.array_equal(b, [0.5, -1.0, 2.0])
    np.testing.assert_allclose(ga, _fd(fn, (a.copy(), b.copy()), 0)[()], rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(gb, _fd(fn, (a.copy(), b.copy()), 1)[()], rtol=1e-6, atol=1e-8)


# -- defaults ------------------------------------------------------------------------

def with_default(x, w=np.array([1.0, 2.0])):  # noqa: B008 - the default is the point
    return np.sum(w * x)


def helper_with_default(x, p=2):
    return x ** p


def calls_helper(x):
    return np.sum(helper_with_default(x))


def test_new_defaults_are_seen():
    old = with_default.__defaults__
    x = np.array([1.0, 1.0])
    g = srcgrad.value_and_grad(with_default)
    try:
        assert g(x) == (3.0, pytest.approx([1.0, 2.0]))
        with_default.__defaults__ = (np.array([5.0, -1.0]),)
        value, grad = g(x)
        assert value == with_default(x) and np.array_equal(grad, [5.0, -1.0])
        assert srcgrad.value_and_grad(with_default)(x)[0] == with_default(x)
        assert srcgrad.jvp(with_default, (x,), (np.ones(2),)) == (4.0, 4.0)
    finally:
        with_default.__defaults__ = old


def test_new_defaults_of_a_callee_are_seen():
    old = helper_with_default.__defaults__
    x = np.array([1.0, 2.0])
    g = srcgrad.value_and_grad(calls_helper)
    try:
        assert g(x)[0] == calls_helper(x)
        helper_with_default.__defaults__ = (3,)
        value, grad = g(x)
        assert value == calls_helper(x) == 9.0
        np.testing.assert_allclose(grad, 3 * x ** 2)
    finally:
        helper_with_default.__defaults__ = old


def test_errors_are_srcgrad_errors():
    assert issubclass(AliasedUpdateError, SrcGradError)


def test_exported_module_copies_and_checks_too(tmp_path):
    import importlib.util

    path = tmp_path / "exported_aliasing.py"
    srcgrad.export(str(path), srcgrad.grad(aliased_through_a_name, wrt=1))
    spec = importlib.util.spec_from_file_location("exported_aliasing", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    a, b = np.array([1.0, 2.0, 3.0]), np.array([0.5, -1.0, 2.0])
    np.testing.assert_array_equal(module.grad_aliased_through_a_name(a, b),
                                  srcgrad.grad(aliased_through_a_name, wrt=1)(a, b))
    assert np.array_equal(a, [1.0, 2.0, 3.0])
    with pytest.raises(module.GradientError, match="'a' is updated in place"):
        module.grad_aliased_through_a_name(a, a)


def copies_first(a, b):
    a = a.copy()
    a[0] = 5.0 * b[1]
    return np.sum(a * b)


def test_an_argument_copied_first_may_be_passed_twice():
    x = np.array([1.0, 2.0, 3.0])
    value, g = srcgrad.value_and_grad(copies_first, wrt=1)(x, x)
    assert value == copies_first(x.copy(), x.copy())
    np.testing.assert_allclose(g, _fd(copies_first, (x.copy(), x.copy()), 1)[()], rtol=1e-6)
    assert "unshared" not in srcgrad.grad(copies_first, wrt=1).source


def state_holding_the_argument(x):
    state = {"h": x, "k": 0}
    for k in range(3):
        state["h"] = np.sin(state["h"])
        state["k"] = k
    return np.sum(state["h"]) * state["k"]


def through_a_dict_item(d, x):
    a = d["h"]
    a[0] = 2.0 * x[0]
    return np.sum(a * x)


def element_augmented(y, x):
    xs = [y]
    xs[0] += x
    return np.sum(xs[0] * x)


def test_a_container_holding_the_argument_costs_no_copy():
    """``state['h'] = v`` changes the dict, never the array it held: no copy,
    no check (the generated code is what it was)."""
    source = srcgrad.grad(state_holding_the_argument).source
    assert "private_copy" not in source and "unshared" not in source


def test_array_held_by_a_dict_argument_is_not_changed():
    d, x = {"h": np.array([1.0, 2.0])}, np.array([0.5, 0.25])
    value, g = srcgrad.value_and_grad(through_a_dict_item, wrt=1)(d, x)
    assert np.array_equal(d["h"], [1.0, 2.0])
    assert value == through_a_dict_item({"h": np.array([1.0, 2.0])}, x)
    np.testing.assert_allclose(g, _fd(through_a_dict_item, (d, x.copy()), 1)[()], rtol=1e-6)
    srcgrad.jvp(through_a_dict_item, (d, x), (None, np.ones(2)))
    assert np.array_equal(d["h"], [1.0, 2.0])
    with pytest.raises(AliasedUpdateError, match="'d' is updated in place"):
        srcgrad.grad(through_a_dict_item, wrt=1)({"h": x}, x)


def test_element_augmented_in_place_is_checked():
    y, x = np.array([1.0, 2.0]), np.array([0.5, 0.25])
    value, g = srcgrad.value_and_grad(element_augmented, wrt=(0, 1))(y, x)
    assert value == element_augmented(y.copy(), x.copy())
    assert np.array_equal(y, [1.0, 2.0])
    np.testing.assert_allclose(g[0], _fd(element_augmented, (y.copy(), x.copy()), 0)[()],
                               rtol=1e-6)
    np.testing.assert_allclose(g[1], _fd(element_augmented, (y.copy(), x.copy()), 1)[()],
                               rtol=1e-6)
    with pytest.raises(AliasedUpdateError, match="'y' is updated in place"):
        srcgrad.grad(element_augmented)(y, y)
