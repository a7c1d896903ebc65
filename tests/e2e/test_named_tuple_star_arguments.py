"""A named tuple built from a star-unpacked argument, ``Pair(*p)``, with ``p`` a
tuple passed to the function or a loop's item over a list of them (the usual
``[Layer(*p) for p in params]``).

It was refused with a plain SrcGradError claiming "Pair() missing required
argument 'b'" (outside tester T1 #2, session 29; Python calls it fine): the
star's length is only known when the code runs, and the call was read as
one positional argument.  Where the class's fields leave the star one length
(no defaults, or keywords that fix it) it is now spelt out as ``p[0], p[1]``
behind a check that raises Python's TypeError when ``p`` holds another
number; where the defaults allow several lengths, it is refused with a
located UnsupportedSyntaxError saying how to write it.

Each program: value bit for bit under every policy and in jvp, gradient and
tangent against central differences (numeric.check_every_policy), the
gradient of the tuple's arrays against differences under every policy, hvp
against differences of the gradient, and autograd.
"""

from __future__ import annotations

import typing
from collections import namedtuple

import numpy as np
import pytest
from numeric import POLICIES, assert_bit_identical, assert_close, check_every_policy, numeric_grad

import srcgrad
from srcgrad import UnsupportedSyntaxError

Pair = namedtuple("Pair", ["a", "b"])
Triple = namedtuple("Triple", ["x", "a", "b"])
WithDefault = namedtuple("WithDefault", ["a", "b"], defaults=[1.0])


class Typed(typing.NamedTuple):
    a: np.ndarray
    b: np.ndarray

    def apply(self, h):
        return np.tanh(self.a * h + self.b)


P = (np.array([1.0, 2.0]), np.array([3.0, -4.0]))
PS = [(np.array([0.5, -1.0]), np.array([0.2, 0.1])),
      (np.array([1.5, 0.3]), np.array([-0.4, 0.6]))]
X = np.array([0.3, 0.7])


def pair_of_argument(p, x):  # the tester's program (x added to differentiate along)
    q = Pair(*p)
    return np.sum(q.a * q.b * np.sin(x))


def loop_item(ps, x):
    s = 0.0
    for p in ps:
        q = Pair(*p)
        s = s + np.sum(np.tanh(q.a * x) * q.b)
    return s


def comprehension_of_layers(ps, x):
    layers = [Pair(*p) for p in ps]
    h = x
    for layer in layers:
        h = np.tanh(layer.a * h + layer.b)
    return np.sum(h ** 2)


def method_of_a_typed_tuple(ps, x):
    h = x
    for p in ps:
        layer = Typed(*p)
        h = layer.apply(h)
    return np.sum(h ** 2)


def star_after_a_field(p, x):
    t = Triple(x * 2.0, *p)
    return np.sum(t.x * t.a + np.cos(t.b * x))


def _made(p):
    return Pair(*p)


def in_a_helper_and_branch(p, x):
    if np.sum(x) > 0:
        q = _made(p)
    else:
        q = Pair(p[1], p[0])
    return np.sum(np.exp(q.a * x) * q.b)


def default_fixed_by_keyword(p, x):
    q = WithDefault(*p[:1], b=x * 3.0)
    return np.sum(q.a * q.b ** 2)


PROGRAMS = [(pair_of_argument, P), (loop_item, PS), (comprehension_of_layers, PS),
            (method_of_a_typed_tuple, PS),
            (star_after_a_field, P), (in_a_helper_and_branch, P),
            (default_fixed_by_keyword, P)]
IDS = [fn.__name__ for fn, _ in PROGRAMS]


def _leaves(p):
    return [a for item in p for a in (item if isinstance(item, tuple) else (item,))]


def _rebuilt(p, leaves):
    it = iter(leaves)
    return type(p)(tuple(next(it) for _ in item) if isinstance(item, tuple) else next(it)
                   for item in p)


@pytest.mark.parametrize(("fn", "p"), PROGRAMS, ids=IDS)
def test_star_unpacked_argument(fn, p):
    check_every_policy(fn, (p, X.copy()), wrt=1)
    leaves = _leaves(p)
    for policy in POLICIES:
        value, grad = srcgrad.value_and_grad(fn, wrt=0, policy=policy)(p, X)
        assert_bit_identical(value, fn(p, X), f"{fn.__name__}, {policy!r}")
        got = _leaves(grad)
        for k, leaf in enumerate(leaves):
            def along(v, k=k):
                return fn(_rebuilt(p, [v if j == k else a for j, a in enumerate(leaves)]), X)
            assert_close(got[k], numeric_grad(along, [leaf], 0), rtol=1e-6, atol=1e-8,
                         what=f"{fn.__name__}, item {k}, policy {policy!r}")
    v = np.array([0.7, -0.4])
    hv = srcgrad.hvp(fn, wrt=1)(p, X, v)
    eps, g = 1e-6, srcgrad.grad(fn, wrt=1)
    assert_close(hv, (g(p, X + eps * v) - g(p, X - eps * v)) / (2 * eps), rtol=1e-6,
                 atol=1e-8, what=f"{fn.__name__} hvp")


def test_another_length_raises_python_s_type_error():
    g = srcgrad.grad(pair_of_argument, wrt=1)
    for wrong in (P[:1], P + (P[0],)):
        with pytest.raises(TypeError):
            pair_of_argument(wrong, X)
        with pytest.raises(TypeError, match=r"Pair\(\) takes 2 items from \*p here"):
            g(wrong, X)


def several_lengths(p, x):
    q = WithDefault(*p)
    return np.sum(q.a * x)


def keywords_unpacked(d, x):
    q = Pair(**d)
    return np.sum(q.a * x)


def test_unknown_length_is_refused_located():
    for fn, arg, words in ((several_lengths, P, ("WithDefault(*p)", "any of [1, 2]", "p[0]")),
                           (keywords_unpacked, {"a": X, "b": X}, ("'**' arguments",))):
        with pytest.raises(UnsupportedSyntaxError) as info:
            srcgrad.grad(fn, wrt=1)(arg, X)
        err = info.value
        assert err.filename.endswith("test_named_tuple_star_arguments.py") and err.lineno
        for word in words:
            assert word in err.message, err.message


def test_autograd_agrees():
    autograd = pytest.importorskip("autograd")
    anp = pytest.importorskip("autograd.numpy")

    def plain(ps, x):  # loop_item, in autograd's NumPy
        s = 0.0
        for a, b in ps:
            s = s + anp.sum(anp.tanh(a * x) * b)
        return s

    assert_close(srcgrad.grad(loop_item, wrt=1)(PS, X), autograd.grad(plain, 1)(PS, X),
                 rtol=1e-12, what="autograd, x")
    ours, theirs = srcgrad.grad(loop_item)(PS, X), autograd.grad(plain)(PS, X)
    assert_close(_leaves(ours), _leaves(theirs), rtol=1e-12, what="autograd, ps")


def from_a_mapping(x, q):
    p = Pair(*q)  # Python's *q runs over a dict's keys
    return x[0] * len(p[0]) + x[1]


@pytest.mark.parametrize("q", [{"ab": 1.0, "c": 2.0}, {"ab", "c"}], ids=["dict", "set"])
def test_star_of_a_dict_or_set_refused_located(q):
    """Found by review: *q spelt q[0], q[1] raised a raw KeyError (a dict) or
    TypeError (a set) inside the generated code; refused, located, saying what to pass."""
    with pytest.raises(srcgrad.UnsupportedSyntaxError, match="by position") as info:
        srcgrad.value_and_grad(from_a_mapping)(np.array([0.7, 1.3]), q)
    assert info.value.lineno
