"""Builtins and calls as people write them: ``max``/``min`` (NaN, ``key=``,
``default=``), ``xs.pop`` on a list that is also read, named tuples built
inside the function, ``np.interp(..., period=)`` and ``np.diff(x,
append=[...])``.

Each case: the value bit for bit, the gradient against central differences
(an exact vector where a NaN makes differences useless), the jvp against
differences of the function, and autograd where it runs the program.  The
reproductions came from last session's cold review (max of a list holding a
NaN gave its derivative to the wrong item -- a silently wrong gradient -- and
the rest was refused)."""

from __future__ import annotations

import collections
import typing

import numpy as np
import pytest
from numeric import assert_bit_identical, assert_close, jvp_fd, numeric_grad, pure

import srcgrad
from srcgrad.errors import NonDifferentiableError, UnsupportedSyntaxError

X = np.array([0.3, 0.7, 1.1])
X4 = np.array([0.3, 0.7, 1.1, 0.9])
NAN = float("nan")


def _check(fn, args, wrt=0, autograd_too=False):
    """The value bit for bit, the gradient against central differences, the jvp
    along a fixed direction against differences of the function."""
    value, grad = srcgrad.value_and_grad(fn, wrt=wrt)(*args)
    assert_bit_identical(value, pure(fn)(*args))
    assert_close(grad, numeric_grad(pure(fn), args, wrt), what=f"{fn.__name__} grad")
    direction = np.linspace(0.3, 1.1, np.size(args[wrt])).reshape(np.shape(args[wrt]))
    if np.ndim(args[wrt]) == 0:
        direction = 0.7
    primal, tangent = srcgrad.jvp(fn, args, tuple(direction if i == wrt else
                                                   np.zeros_like(a) if isinstance(a, np.ndarray)
                                                   else 0.0 for i, a in enumerate(args)))
    assert_bit_identical(primal, pure(fn)(*args))
    assert_close(tangent, jvp_fd(pure(fn), args, (wrt,), (direction,)),
                 what=f"{fn.__name__} jvp")
    if autograd_too:
        try:
            import autograd
        except ImportError:
            return
        assert_close(grad, autograd.grad(fn, wrt)(*args), rtol=1e-9, atol=1e-12)


def _exact(fn, args, expected, wrt=0):
    """A NaN makes differences useless: the gradient is ``expected`` exactly,
    the jvp along each unit vector its entry."""
    value, grad = srcgrad.value_and_grad(fn, wrt=wrt)(*args)
    assert_bit_identical(value, fn(*args))
    np.testing.assert_array_equal(grad, expected)
    for k in range(len(expected)):
        unit = np.zeros(len(expected))
        unit[k] = 1.0
        tangents = tuple(unit if i == wrt else np.zeros_like(a) for i, a in enumerate(args))
        _, tangent = srcgrad.jvp(fn, args, tangents)
        assert tangent == expected[k], (fn.__name__, k, tangent)


# -- (0) a list or tuple display passed to a helper ------------------------------------

def third_(xs):
    return xs[2] * xs[0]


def summed_(pair, scale=1.0):
    return sum(pair) * scale


def display_to_helper(x):
    return third_([x[0] * 1.0, x[1], x[2]]) + summed_((x[1], x[2] ** 2), scale=2.0)


def display_in_loop(x):
    total = 0.0
    for k in range(2):
        total = total + third_([x[k], x[1] * total, np.sin(x[2])])
    return total + summed_(pair=[x[0], x[2]])


class Model:
    def score(self, parts):
        return parts[0] * parts[1]

    def forward(self, x):
        return self.score([x[0], x[1] * 2.0]) + MODEL.score((x[2], x[0]))


MODEL = Model()


def display_to_methods(x):
    return MODEL.forward(x)


@pytest.mark.parametrize("fn", [display_to_helper, display_in_loop, display_to_methods])
def test_display_passed_to_helper(fn):
    """A display passed straight to a user function was taken as a constant:
    its items got a gradient of zero (a silently wrong gradient, in both modes)."""
    _check(fn, (X.copy(),), autograd_too=fn is display_to_helper)


# -- (1) max/min: the derivative goes to the item Python returns ----------------------

def max_of_array(x):
    return max(x)


def min_of_array(x):
    return min(x)


def max_of_list(x):
    xs = [x[0], x[1], x[2]]
    return 3.0 * max(xs)


def running_max(x):
    m = x[0]
    for v in x[1:]:
        m = max(m, v)
    return m * 2.0


def max_in_helper_(xs):
    return max(xs)


def max_in_helper(x):
    return max_in_helper_([x[0] * 1.0, x[1], x[2]]) + 0.0


@pytest.mark.parametrize("fn, x, expected", [
    (max_of_array, [1.0, NAN, 2.0], [0, 0, 1]),      # Python: 2.0 (nan > 1 is False)
    (max_of_array, [NAN, 1.0, 2.0], [1, 0, 0]),      # Python: nan (nothing compares greater)
    (min_of_array, [3.0, NAN, 2.0], [0, 0, 1]),
    (max_of_list, [1.0, NAN, 2.0], [0, 0, 3]),
    (max_of_array, [2.0, 2.0, 1.0], [1, 0, 0]),      # a tie: the first
    (min_of_array, [1.0, 2.0, 1.0], [1, 0, 0]),
    (running_max, [1.0, NAN, 2.0], [0, 0, 2]),
    (running_max, [NAN, 1.0, 2.0], [2, 0, 0]),
    (max_in_helper, [1.0, NAN, 2.0], [0, 0, 1]),
])
def test_extreme_with_nan_or_tie(fn, x, expected):
    _exact(fn, (np.array(x),), np.array(expected, dtype=float))


def max_two(a, b):
    return max(a, b) * 2.0


def min_two(a, b):
    return min(a, b) * 2.0


@pytest.mark.parametrize("fn, a, b, expected", [
    (max_two, 1.0, NAN, (2.0, 0.0)),   # Python returns a when b > a is False
    (max_two, NAN, 1.0, (2.0, 0.0)),
    (min_two, 1.0, NAN, (2.0, 0.0)),
    (max_two, 1.0, 1.0, (2.0, 0.0)),
    (max_two, 1.0, 3.0, (0.0, 2.0)),
    (min_two, 3.0, 1.0, (0.0, 2.0)),
])
def test_two_values(fn, a, b, expected):
    value, grads = srcgrad.value_and_grad(fn, wrt=(0, 1))(a, b)
    assert_bit_identical(value, fn(a, b))
    assert tuple(grads) == expected
    for k, direction in enumerate(((1.0, 0.0), (0.0, 1.0))):
        assert srcgrad.jvp(fn, (a, b), direction)[1] == expected[k]


def extremes_smooth(x):
    return max(x) * min(x) + max(v * v for v in x) - min([x[1], x[2]])


def test_extremes_smooth():
    _check(extremes_smooth, (X,), autograd_too=True)


# -- (2) default= and key= ---------------------------------------------------------------

def with_defaults(x):
    return max(x, default=0.0) + min([x[0], x[1]], default=1.0)


def default_taken(x):
    big = [v for v in x if v > 10.0]
    return max(big, default=x[0] * 2.0) + min(big, default=0.5)


def key_two(a, b):
    return max(a, b, key=abs) * 3.0


def key_lambda(x):
    c = x[1]
    xs = [x[0], x[1] * 2.0, x[2]]
    return max(xs, key=lambda v: (v - c) ** 2) + min(xs, key=lambda v: -v)


def key_rows(x):
    rows = [x[:2], x[1:]]
    return np.sum(min(rows, key=np.sum) ** 2)


def key_in_loop(x):
    total = 0.0
    for k in range(2):
        total = total + max(x[k:], key=lambda v: np.sin(v)) * (k + 1)
    return total


@pytest.mark.parametrize("fn", [with_defaults, default_taken, key_lambda, key_rows,
                                key_in_loop])
def test_default_and_key(fn):
    _check(fn, (X,))


def test_key_two_values():
    _check(key_two, (0.5, -2.0), wrt=0)
    _check(key_two, (0.5, -2.0), wrt=1)
    _check(key_two, (-3.0, 2.0), wrt=0)


def multiple_with_default(a, b):
    return max(a, b, default=0.0)


def test_default_with_several_values_is_refused():
    with pytest.raises(srcgrad.SrcGradError) as info:
        srcgrad.grad(multiple_with_default)(1.0, 2.0)
    assert info.value.lineno and "default" in info.value.message


# -- (3) xs.pop on a list that is also read -------------------------------------------

def pop_then_sum(x):
    xs = [x[0] * 1.0, x[1], x[2]]
    a = xs.pop()
    return a + sum(xs)


def sum_then_pop(x):
    xs = [x[0] * 2.0, x[1], x[2]]
    before = sum(xs)            # sees the item popped below
    a = xs.pop(0)
    return before * a + np.sum(np.array(xs) ** 2) + max(xs)


def pop_comprehension(x):
    xs = [v * v for v in x]
    a = xs.pop(-2)
    return a + xs[-1] * xs[0]


def pop_by_index(x):
    xs = [v * 1.5 for v in x]
    total = 0.0
    i = 1
    while xs:
        v = xs.pop(i % len(xs))
        total = total * 0.5 + v * v
        i = i + 1
    return total


def pop_in_branch(x):
    xs = list(x)
    for v in xs:
        pass
    if x[0] > 0:
        a = xs.pop(1)
    else:
        a = xs.pop()
    return a * len(xs) + np.sum(np.stack(xs))


@pytest.mark.parametrize("fn", [pop_then_sum, sum_then_pop, pop_comprehension,
                                pop_by_index, pop_in_branch])
def test_pop_with_reads(fn):
    _check(fn, (X4.copy(),), autograd_too=fn is pop_then_sum)


def pop_aliased(x):
    xs = [x[0], x[1]]
    ys = xs                      # another name for the list: it sees the pop
    a = xs.pop()
    return a + sum(ys)


def pop_iterated(x):
    xs = [x[0], x[1], x[2]]
    total = 0.0
    for v in xs:                 # Python's loop sees the pops
        total = total + xs.pop()
    return total


@pytest.mark.parametrize("fn", [pop_aliased, pop_iterated])
def test_pop_seen_elsewhere_is_refused(fn):
    with pytest.raises(UnsupportedSyntaxError) as info:
        srcgrad.grad(fn)(X.copy())
    assert info.value.lineno and "pop" in info.value.message


# -- (4) named tuples built inside the function ----------------------------------------

Params = collections.namedtuple("Params", "W b")
Defaults = collections.namedtuple("Defaults", "W b scale", defaults=[2.0])


class Layer(typing.NamedTuple):
    W: np.ndarray
    b: float = 0.5

    def apply(self, v):
        return np.tanh(self.W * v + self.b)


def tuple_built(x):
    p = Params(x[:2], x[2])
    return np.sum(p.W * p.b)


def tuple_by_keyword(x):
    p = Defaults(b=x[2], W=x[:2] * 2.0)
    return np.sum(p.W * p.b) * p.scale + p[1]


def make_layer(x):
    return Layer(W=x[:2])


def typed_tuple(x):
    layer = Layer(W=x[:2])
    total = np.sum(make_layer(x).W)
    for k in range(2):
        layer = Layer(layer.W * 0.9, layer.b + x[k])
        total = total + np.sum(layer.apply(x[1:]))
    return total


def tuple_replaced(x):
    p = Defaults(x[:2], x[2])
    for k in range(2):
        p = p._replace(W=p.W * p.b, scale=p.scale + x[k])
    q = Layer(x[1:], b=x[0])
    q = q._replace(b=q.b * 3.0)
    return np.sum(p.W) * p.scale + np.sum(q.apply(x[:2]))


def tuple_unpacked(x):
    W, b = Params(b=x[0], W=x[1:])
    return np.sum(W * b)


@pytest.mark.parametrize("fn", [tuple_built, tuple_by_keyword, typed_tuple, tuple_replaced,
                                tuple_unpacked])
def test_named_tuple_built(fn):
    _check(fn, (X.copy(),))


def replace_argument(p, x):
    q = p._replace(W=p.W * x)
    return np.sum(q.W) * q.b


def test_replace_on_an_argument():
    """An argument's class is known only when the code runs: ``q._replace(W=v)``
    is the runtime primitive ``replaced``, whose rules read the class then (it
    was refused, located, until review 5)."""
    p = Params(X[:2].copy(), 3.0)
    value, (d_p, d_x) = srcgrad.value_and_grad(replace_argument, wrt=(0, 1))(p, 0.5)
    assert_bit_identical(value, replace_argument(p, 0.5))
    assert type(d_p) is Params
    assert_close(d_p.W, np.full(2, 0.5 * 3.0), what="d p.W")
    assert_close(d_p.b, np.sum(p.W * 0.5), what="d p.b")
    assert_close(d_x, np.sum(p.W) * 3.0, what="d x")


# -- (5) np.interp with a period -------------------------------------------------------

XP = np.array([0.0, 0.5, 1.0])
FP = np.array([1.0, 2.0, 0.0])


def interp_period(x):
    return np.sum(np.interp(x, XP, FP, period=1.0) ** 2)


def interp_period_fp(fp):
    return np.sum(np.interp(np.array([0.3, 0.7, 1.15, -0.2]), np.array([0.1, 0.9, 0.4]), fp,
                            period=1.0) * np.array([1.0, 2.0, 3.0, 4.0]))


def interp_period_xp(xp):
    return np.sum(np.interp(np.array([0.3, 0.7, 1.15, -0.2]), xp, FP, period=-1.0) ** 2)


def interp_moving_period(x):
    return np.sum(np.interp(x, XP, FP, period=x[0] + 1.0))


def test_interp_period():
    _check(interp_period, (X4.copy(),))
    _check(interp_period_fp, (np.array([1.0, -2.0, 0.5]),))
    _check(interp_period_xp, (np.array([0.1, 0.9, 0.4]),))


def test_interp_moving_period_is_refused():
    with pytest.raises(NonDifferentiableError) as info:
        srcgrad.grad(interp_moving_period)(X4.copy())
    assert info.value.lineno and "period" in info.value.message


# -- (6) np.diff with a list display as append / prepend -----------------------------

def diff_append_list(x):
    return np.sum(np.diff(x, append=[x[0]]) ** 2)


def diff_prepend_list(x):
    total = 0.0
    for k in range(2):
        total = total + np.sum(np.diff(x * (k + 1), prepend=[x[-1], 0.5]) ** 3)
    return total


@pytest.mark.parametrize("fn", [diff_append_list, diff_prepend_list])
def test_diff_list_display(fn):
    _check(fn, (X4.copy(),))


# -- second order through the picks ---------------------------------------------------

def picks_twice(x):
    return max(x[0] * x[1], x[2] ** 2) + min(x, key=lambda v: abs(v)) ** 3 \
        + max([v * v for v in x], default=0.0) ** 2


def test_hessian_through_picks():
    x = np.array([1.5, 2.0, 0.7])
    grad = srcgrad.grad(picks_twice)
    eps = 1e-5
    expected = np.array([(grad(x + eps * e) - grad(x - eps * e)) / (2 * eps) for e in np.eye(3)])
    assert_close(srcgrad.hessian(picks_twice)(x), expected, atol=1e-6)
    assert_close(srcgrad.hvp(picks_twice)(x, np.ones(3)), expected @ np.ones(3), atol=1e-6)
