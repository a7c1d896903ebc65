"""optimize/inplace_adjoint.py on the forward sweep: a statement writes into the
array of a forward value that NumPy made, that no statement of either sweep
reads afterwards and that nothing but arithmetic has read (``k = j - a``,
``j`` read no more: ``k = into_first(np.subtract, j, a)``).

The aliasing cases on sweeps written by hand -- a value read later (saved for
the adjoint sweep, returned), read through a view, copied to another name,
put in a container, passed to a call, an argument, a value of Python floats
-- and whole programs whose values must be the function's own bit for bit,
whose gradients must be bit-identical to the code generated without the pass,
and whose arguments must come back untouched.
"""

from __future__ import annotations

import gast
import numpy as np
import pytest
from numeric import assert_bit_identical

import srcgrad
from srcgrad import pipeline
from srcgrad.api import compiled
from srcgrad.ir.emit import show_statements
from srcgrad.optimize.inplace_adjoint import forward_values, update_in_place


def _forward(source, params=("x", "a", "w")):
    """The pass on ``source``, every statement of it a forward statement."""
    stmts = gast.parse(source).body
    update_in_place(stmts, set(), {id(s) for s in stmts}, set(), None,
                    forward_values(stmts, params))
    return show_statements(stmts)


# --- which arrays a forward statement may write into ------------------------------------

def test_a_dead_value_numpy_made_lends_its_array():
    out = _forward("j = np.sin(x) * w\nk = j - a\nreturn k")
    assert "k = into_first(np.subtract, j, a)" in out


def test_a_value_read_afterwards_is_not_written():
    for later in ("return k, j", "d_j = d_k * j\nreturn k, d_j", "del j\nreturn k"):
        out = _forward("j = np.sin(x) * w\nk = j - a\n" + later)
        assert "into_first(np.subtract, j" not in out, later


def test_a_value_read_through_a_view_copy_container_or_call_is_not_written():
    for reader in ("v = j[1:]", "v = j.T", "v = j", "v = [j]", "v = (j, 1)", "v = keep(j)",
                   "v = np.sin(j, out=buf)", "v = j.reshape(2, 3)"):
        out = _forward(f"j = np.sin(x) * w\n{reader}\nk = j - a\nreturn k, v")
        assert "into_" not in out.split("\n", 2)[2], reader


def test_arguments_and_python_floats_are_never_written():
    assert "into_" not in _forward("k = x - a\nreturn k")
    assert "into_" not in _forward("j = x * 2.0\nk = j - a\nreturn k")       # no NumPy call
    assert "into_" not in _forward("j = math.sin(a)\nk = j * a\nreturn k")
    assert "into_first(np.add, j" in _forward("j = x @ w\nk = j + a\nreturn k")   # a product


def test_loops_and_branches_end_ownership():
    out = _forward("j = np.sin(x)\nfor i in r:\n    a = a * j\nk = j - a\nreturn k")
    assert "into_first(np.subtract, j" not in out
    # a branch is a block of its own: what was made before it is not owned there
    out = _forward("j = np.sin(x)\nif c:\n    k = j - a\nelse:\n    k = j + a\nreturn k")
    assert "into_" not in out


# --- whole programs ----------------------------------------------------------------------

def _without_forward(monkeypatch):
    monkeypatch.setattr(pipeline, "forward_values", lambda forward, params: set())
    compiled._MEMORY.clear()


def _compare(monkeypatch, fn, args, wrt=0, mode="grad", fired=True):
    """``fn``'s gradient (value and gradient for value_and_grad) on ``args`` with
    and without the forward sweep's writes: bit for bit; the value the
    function's own; the caller's arrays untouched."""
    monkeypatch.setenv("SRCGRAD_CACHE", "0")
    compiled._MEMORY.clear()
    make = getattr(srcgrad, mode)
    copies = [np.copy(a) if isinstance(a, np.ndarray) else a for a in args]
    g = make(fn, wrt=wrt)
    got = g(*copies)
    for a, c in zip(args, copies):
        assert_bit_identical(a, c)
    forward = g.source.split("# Adjoint sweep")[0]
    if fired is not None:
        assert ("into_" in forward) == fired, g.source
    if mode == "value_and_grad":
        assert_bit_identical(got[0], fn(*args))
    with monkeypatch.context() as m:
        _without_forward(m)
        expected = make(fn, wrt=wrt)(*args)
    compiled._MEMORY.clear()
    assert_bit_identical(got, expected)
    return got


def chain(x):
    a = np.sin(x)
    b = a * np.exp(a)
    c = b + x
    d = np.tanh(c) * x
    e = d - a
    f = e * e
    g = f + 1.0
    return np.sum(np.sqrt(g) * a)


def views(x):
    a = np.sin(x) * x
    v = a[1:]                 # a view of a: a is never written into
    b = a + 1.0
    c = b * np.cos(x)
    return np.sum(c[1:] * v + c[:-1])


def aliases(x):
    a = np.sin(x) * x
    s = a                     # a second name for a's array
    b = a * 2.0
    c = b + x
    u = s * c
    return np.sum(u * u)


def containers(x, w):
    a = np.sin(x) * w
    kept = [a, w]
    b = a * a
    c = b - x
    return np.sum(c * kept[0] + kept[1])


def returned(x):
    a = np.sin(x) * x
    b = a * a
    c = b + 1.0
    return c * np.cos(x)      # the output itself: value_and_grad returns it


def broadcasting(a, b):
    c = np.sin(a) * 2.0       # (3, 1)
    d = c + b                 # (3, 4): c's array cannot hold it
    e = np.cos(b) * 3.0       # (3, 4)
    f = e + a                 # fits e's array
    return np.sum(d * f)


W64 = np.linspace(0.5, 1.5, 20)


def mixed(x):
    a = np.sin(x) * 2.0       # float32
    b = a + W64               # float64: a's float32 array cannot hold it
    c = np.cos(x) * x         # float32
    d = c - 1.0               # fits c's array
    return np.sum(b * d)


@pytest.mark.parametrize("mode", ["grad", "value_and_grad"])
def test_a_chain_writes_into_its_dead_values(monkeypatch, mode):
    _compare(monkeypatch, chain, [np.linspace(-1.0, 1.5, 301)], mode=mode)


@pytest.mark.parametrize("fn", [views, aliases])
def test_views_and_aliases(monkeypatch, fn):
    _compare(monkeypatch, fn, [np.linspace(-1.0, 1.0, 40)], fired=None)


def test_views_keep_their_array():
    g = srcgrad.grad(views)
    g(np.linspace(-1.0, 1.0, 5))
    forward = g.source.split("# Adjoint sweep")[0]
    assert "into_first(np.add, a" not in forward and "into_second(np.add, a" not in forward
    g = srcgrad.grad(aliases)
    g(np.linspace(-1.0, 1.0, 5))
    assert "into_first(np.multiply, a" not in g.source.split("# Adjoint sweep")[0]


def test_a_container_keeps_its_item(monkeypatch):
    x, w = np.linspace(-1.0, 1.0, 30), np.linspace(0.5, 1.0, 30)
    _compare(monkeypatch, containers, [x, w], wrt=(0, 1), fired=None)


def test_the_returned_value(monkeypatch):
    x = np.linspace(-1.0, 1.0, 30)
    _compare(monkeypatch, lambda x: np.sum(returned(x)), [x], fired=None)
    monkeypatch.setenv("SRCGRAD_CACHE", "0")
    value, back = srcgrad.vjp(returned, x)
    assert_bit_identical(value, returned(x))
    assert_bit_identical(back(np.ones_like(x))[0],
                         srcgrad.grad(lambda x: np.sum(returned(x)))(x))


def test_broadcasting_float32_and_0d(monkeypatch):
    a = np.linspace(0.1, 0.3, 3).reshape(3, 1)
    b = np.linspace(-1.0, 1.0, 12).reshape(3, 4)
    _compare(monkeypatch, broadcasting, [a, b], wrt=(0, 1))
    g = _compare(monkeypatch, mixed, [np.linspace(-1.0, 1.0, 20).astype(np.float32)])
    assert g.dtype == np.float32
    _compare(monkeypatch, chain, [np.array(0.7)], mode="value_and_grad")
    _compare(monkeypatch, chain, [0.7], mode="value_and_grad")


@pytest.mark.parametrize("policy", ["save", "recompute", "sqrt", ("revolve", 2)])
def test_every_policy(monkeypatch, policy):
    monkeypatch.setenv("SRCGRAD_CACHE", "0")
    x = np.linspace(-1.0, 1.5, 50)
    compiled._MEMORY.clear()
    got = srcgrad.value_and_grad(chain, policy=policy)(x)
    with monkeypatch.context() as m:
        _without_forward(m)
        expected = srcgrad.value_and_grad(chain, policy=policy)(x)
    compiled._MEMORY.clear()
    assert_bit_identical(got, expected)
    assert_bit_identical(got[0], chain(x))


def test_the_gradient_is_right():
    x = np.linspace(-1.0, 1.5, 7)
    assert srcgrad.gradcheck(chain, x)
    assert srcgrad.gradcheck(views, x) and srcgrad.gradcheck(aliases, x)
    assert srcgrad.gradcheck(broadcasting, np.linspace(0.1, 0.3, 3).reshape(3, 1),
                             np.linspace(-1.0, 1.0, 12).reshape(3, 4), wrt=1)


# --- a unary ufunc written into its operand's array (into_operand) ---------------------

from srcgrad.optimize.inplace_adjoint import _UNARY  # noqa: E402
from srcgrad.runtime import into_operand  # noqa: E402


def test_a_unary_ufunc_of_a_dead_or_fresh_operand_writes_into_it():
    out = _forward("j = np.sin(x) * w\nk = np.tanh(j)\nm = np.sqrt(k * k + 1.0)\n"
                   "n = np.exp(-m)\nreturn n")
    assert "k = into_operand(np.tanh, j)" in out
    assert "m = into_operand(np.sqrt, k * k + 1.0)" in out
    assert "n = into_operand(np.exp, -m)" in out


def test_a_unary_ufunc_of_a_live_shared_or_twice_read_operand_makes_a_new_array():
    for program in ("j = np.sin(x) * w\nk = np.tanh(j)\nreturn k, j",         # read later
                    "j = np.sin(x) * w\nv = j[1:]\nk = np.tanh(j)\nreturn k, v",  # a view
                    "j = np.sin(x) * w\nk = np.tanh(j) * j\nreturn k",        # read twice
                    "k = np.tanh(x)\nreturn k",                               # an argument
                    "j = np.sin(x) * w\nk = np.arctan2(j, 1.0)\nreturn k",    # not unary
                    "j = np.sin(x) * w\nk = np.isnan(j)\nreturn k"):          # bool result
        assert "into_operand" not in _forward(program), program


def test_nested_in_an_adjoint_product():
    stmts = gast.parse("y = np.sin(x) * w\nd_y = d_a * np.cos(y)\nreturn d_y").body
    update_in_place(stmts, {"d_y"}, {id(stmts[0])}, set(), None, forward_values(stmts[:1], ["x"]))
    assert show_statements(stmts).splitlines()[1] == (
        "d_y = into_second(np.multiply, d_a, into_operand(np.cos, y))  "
        "# d_a * np.cos(y), written into y's array")


@pytest.mark.parametrize("name", sorted(_UNARY))
def test_into_operand_gives_the_plain_result_bit_for_bit(name):
    ufunc = getattr(np, name)
    rng = np.random.default_rng(len(name))
    for dtype in (np.float64, np.float32, np.float16):
        for n in (1, 3, 7, 8, 15, 16, 17, 31, 64, 100, 1000, 4099):
            x = (rng.uniform(-3.0, 3.0, n) * 10.0 ** rng.integers(-3, 3, n)).astype(dtype)
            if name in ("arccos", "arcsin", "arctanh"):
                x = np.clip(x, -0.99, 0.99)
            x[::5] = np.abs(x[::5]) + 1.0
            with np.errstate(all="ignore"):
                want = ufunc(x)
                buffer = x.copy()
                got = into_operand(ufunc, buffer)
            assert got is buffer and got.dtype == want.dtype
            assert got.tobytes() == want.tobytes() or np.array_equal(got, want, equal_nan=True)


def test_into_operand_makes_a_new_array_where_the_operand_cannot_hold_the_result():
    ints = np.arange(4)
    assert into_operand(np.sqrt, ints).dtype == np.float64 and ints.dtype.kind == "i"
    zero_d = np.array(0.5)
    got = into_operand(np.sin, zero_d)
    assert type(got) is np.float64 and zero_d == 0.5       # a scalar, as np.sin(zero_d)
    strided = np.arange(8.0)[::2]
    assert into_operand(np.exp, strided) is not strided and strided[1] == 2.0
    frozen = np.ones(3)
    frozen.flags.writeable = False
    assert into_operand(np.exp, frozen) is not frozen
    assert into_operand(np.sin, 0.5) == np.sin(0.5)
    cplx = np.ones(2, complex)
    assert into_operand(np.exp, cplx) is not cplx


def unary_chain(x):
    a = np.sin(x) * x
    b = np.tanh(a + 1.0)
    c = np.exp(-b) * np.cos(x)
    d = np.sqrt(c * c + 1.0)
    return np.sum(np.log(d) * a)


@pytest.mark.parametrize("mode", ["grad", "value_and_grad"])
def test_a_unary_chain_bit_for_bit(monkeypatch, mode):
    for x in (np.linspace(-1.0, 1.5, 301), np.linspace(-1.0, 1.5, 20).astype(np.float32),
              np.array(0.3), 0.3):
        got = _compare(monkeypatch, unary_chain, [x], mode=mode)
    assert srcgrad.gradcheck(unary_chain, np.linspace(-1.0, 1.5, 7))
    g = srcgrad.grad(unary_chain)
    g(np.ones(3))
    assert "into_operand(np.tanh, a + 1.0)" in g.source
    assert got is not None


# --- a value the adjoint sweep reads for its shape alone (issue 16, item 2) ----------------

from srcgrad.runtime import into_first, into_second  # noqa: E402


def test_a_value_read_afterwards_for_its_shape_alone_lends_its_array():
    out = _forward("t1 = x @ w\nh = np.tanh(t1 + a)\nd_t1 = unbroadcast(d_h, t1)\n"
                   "return h, d_t1")
    assert "h = into_operand(np.tanh, into_first(np.add, t1, a))  # np.tanh(t1 + a), " \
        "written into t1's array; the adjoint sweep reads t1's shape alone" in out
    out = _forward("t1 = x @ w\nz = t1 - a\nd_t1 = unreduce(d_h, t1, 1, True)\nreturn z, d_t1")
    assert "z = into_first(np.subtract, t1, a)" in out


def test_a_value_read_afterwards_for_more_than_its_shape_is_not_written():
    for later in ("d_t1 = unbroadcast(t1, d_h)",          # the cotangent position: values
                  "d_t1 = unbroadcast(d_h, t1) * t1",     # and as an operand
                  "d_t1 = unbroadcast(d_h, t1[0])",       # a view of it
                  "d_t1 = keep(d_h, t1)"):                # any other call
        out = _forward(f"t1 = x @ w\nh = np.tanh(t1 + a)\n{later}\nreturn h, d_t1")
        assert "into_first" not in out, later


def layers(x, W, b, V, c):
    h = np.tanh(x @ W + b)            # x @ W takes + b in its array: the adjoint of +
    z = h @ V + c                     # reads its shape alone
    s = z - np.max(z, axis=1, keepdims=True)
    return np.sum(s * s) / x.shape[0]


@pytest.mark.parametrize("mode", ["grad", "value_and_grad"])
def test_a_layer_adds_its_bias_in_place(monkeypatch, mode):
    rng = np.random.default_rng(3)
    x, W, V = rng.normal(size=(6, 5)), rng.normal(size=(5, 4)), rng.normal(size=(4, 3))
    for b, c in ((rng.normal(size=4), rng.normal(size=3)),              # rows
                 (rng.normal(size=(6, 1)), rng.normal(size=(1, 3))),      # a column, a row
                 (rng.normal(size=(2, 6, 4)), rng.normal(size=3))):       # stretches x @ W
        _compare(monkeypatch, layers, [x, W, b, V, c], wrt=(0, 1, 2, 3, 4), mode=mode)
    f32 = [a.astype(np.float32) for a in (x, W, rng.normal(size=4), V, rng.normal(size=3))]
    got = _compare(monkeypatch, layers, f32, wrt=(1, 2), mode=mode)
    mixed = [*f32[:2], rng.normal(size=4), *f32[3:]]       # a float64 bias: a new array
    _compare(monkeypatch, layers, mixed, wrt=(1, 2), mode=mode)
    assert srcgrad.gradcheck(layers, x, W, rng.normal(size=4), V, rng.normal(size=3),
                             wrt=(1, 2))
    assert (got[1] if mode == "grad" else got[1][1]).dtype == np.float32


def test_a_bias_that_broadcasts_is_written_into_the_product_bit_for_bit():
    rng = np.random.default_rng(5)
    for shape, small in (((7, 9), (9,)), ((7, 9), (7, 1)), ((7, 9), (1, 9)),
                         ((3, 4, 5), (4, 1)), ((1, 9), (9,)), ((0, 3), (3,))):
        for ufunc in (np.add, np.subtract, np.multiply, np.true_divide):
            a, b = rng.normal(size=shape), rng.normal(size=small)
            buffer = a.copy()
            got = into_first(ufunc, buffer, b)
            assert got is buffer and got.flags.c_contiguous
            assert got.tobytes() == ufunc(a, b).tobytes()
            buffer = a.copy()
            got = into_second(ufunc, b, buffer)
            assert got is buffer and got.tobytes() == ufunc(b, a).tobytes()
    column = np.ones((3, 1))
    assert into_first(np.add, column, np.ones((3, 4))) is not column      # stretched
    rows = np.ones((3, 4))
    assert into_first(np.add, rows, np.ones(4)[::-1][::-1][:, None].T[0]) is rows
    assert into_first(np.add, rows, np.ones(8)[::2]) is not rows          # not contiguous
    assert into_first(np.add, np.ones((3, 4), np.float32), np.ones(4)).dtype == np.float64
