"""Shape classes of names bound more than once (a loop's carried value, a
branch's merged one, an argument assigned in a loop): a class only where every
binding has it all along, so that ``unbroadcast`` goes where the shape cannot
change and stays where it can -- a loop whose first step broadcasts (``h = 0.0``
then ``h = np.tanh(x @ W + h)``) or an argument that changes shape in a loop.

Each program: the class the analysis claims (or not), the value bit for bit
under every policy and in jvp, the gradient and tangent against central
differences (numeric.check_every_policy), and autograd where it runs.
"""

from __future__ import annotations

import numpy as np
import pytest

import srcgrad
from srcgrad.analysis.activity import shape_classes
from srcgrad.frontend.parse import parse_function
from srcgrad.normalize.normalizer import normalize

from numeric import assert_close, check_every_policy



def newton_sqrt(x):
    h = x
    for i in range(6):
        h = 0.5 * (h + x / h)
    return np.sum(h)


def scalar_start(x, W):          # step 0's h is a number, the others arrays
    h = 0.0
    for i in range(3):
        h = np.tanh(x @ W + h)
    return np.sum(h * h)


def vector_start(xs, W, U, h0):  # h0 of shape (H,) becomes (B, H) after a step
    h = h0
    for t in range(xs.shape[0]):
        h = np.tanh(xs[t] @ W + h @ U)
    return np.sum(h * h)


def grows(x, y):                 # h broadcasts against y: its shape may change once
    h = x
    for i in range(3):
        h = h * 0.5 + y
    return np.sum(h * h)


def param_in_loop(x):            # the argument itself changes shape in the loop
    a = x * 1.0
    for i in range(1):
        x = np.outer(x, x)
    b = x * 1.0
    return np.sum(a * b)


def branchy(x, c):
    if c > 0:
        h = x * 2.0
    else:
        h = x + 1.0
    for i in range(3):
        h = h * h * 0.1 + x
    return np.sum(h)


def over_rows(xs, w):            # a loop's target has a new value each step
    h = xs[0]
    for x in xs:
        h = h * 0.5 + np.tanh(x * w)
    return np.sum(h)


def carried_then_scalar(x):
    h = x
    for i in range(3):
        h = h * 0.5 + np.sin(h)
    s = np.sum(h)
    for i in range(2):
        h = h * s
    return np.sum(h ** 2)


def while_loop(x):
    h = x
    n = 0
    while n < 4:
        h = h - 0.1 * h ** 3
        n = n + 1
    return np.sum(h)


def two_carried(x, y):           # a and b swap: each takes the other's shape
    a = x
    b = y
    for i in range(3):
        a, b = b * 0.5, a + 1.0
    return np.sum(a * b)


def swap_shapes(x):
    h = x
    g = x * 1.0
    for i in range(3):
        h = h * g
        g = np.tanh(h)
    return np.sum(h + g)


def classes_of(fn):
    return shape_classes(normalize(parse_function(fn)))


@pytest.mark.parametrize("fn, name, cls", [
    (newton_sqrt, "h", "x"),
    (branchy, "h", "x"),
    (carried_then_scalar, "h", "x"),
    (while_loop, "h", "x"),
    (swap_shapes, "h", "x"),
    (swap_shapes, "g", "x"),
])
def test_a_carried_value_keeps_its_class(fn, name, cls):
    assert classes_of(fn)[name] == cls


@pytest.mark.parametrize("fn, name", [
    (scalar_start, "h"), (vector_start, "h"), (grows, "h"), (param_in_loop, "x"),
    (over_rows, "h"), (two_carried, "a"), (two_carried, "b"),
])
def test_a_value_whose_shape_may_change_gets_no_class(fn, name):
    assert classes_of(fn)[name] == name


def test_a_name_computed_from_an_argument_reassigned_in_a_loop_gets_no_class():
    """x = np.outer(x, x) in a loop: a (from x's first shape) and b (from its
    last) are not of one class; they were, and d_a lost its unbroadcast (the
    gradient failed: 'input operand has more dimensions ...')."""
    classes = classes_of(param_in_loop)
    assert classes["a"] != classes["b"]
    grad = srcgrad.grad(param_in_loop)(np.array([1.0, 2.0, 3.0]))
    assert_close(grad, np.array([26.0, 38.0, 50.0]), rtol=1e-12)


def test_the_adjoint_of_a_shape_keeping_loop_has_no_unbroadcast():
    source = srcgrad.grad(newton_sqrt).source
    assert "unbroadcast" not in source
    assert "d_h = unreduce(d_t4, x)  # h has the shape of x" in source
    assert "h_tape[i] = h" in source   # h is still saved: the adjoint of / reads its value
    source = srcgrad.grad(scalar_start, wrt=(0, 1)).source
    assert "unbroadcast" in source


def _rng_args(seed):
    rng = np.random.default_rng(seed)
    n = rng.standard_normal
    return [
        (newton_sqrt, (np.abs(n((3, 4))) + 1,)), (newton_sqrt, (np.abs(n(5)) + 1,)),
        (scalar_start, (n((4, 3)), n((3, 2)))), (scalar_start, (n(3), n((3, 2)))),
        (vector_start, (n((5, 4, 3)), n((3, 2)), n((2, 2)), n(2))),
        (vector_start, (n((5, 4, 3)), n((3, 2)), n((2, 2)), n((1, 2)))),
        (vector_start, (n((5, 4, 3)), n((3, 2)), n((2, 2)), n((4, 2)))),
        (grows, (n(3), n((2, 3)))), (grows, (n((2, 1)), n((1, 3)))), (grows, (n((2, 3)), n(3))),
        (param_in_loop, (n(3),)),
        (branchy, (n(3), 1.0)), (branchy, (n((2, 2)), -1.0)),
        (over_rows, (n((4, 3)), n(3))), (over_rows, (n((4, 3)), n((2, 1, 3)))),
        (carried_then_scalar, (n((2, 3)),)),
        (while_loop, (n((2, 2)) * 0.5,)),
        (two_carried, (n(3), n((2, 3)))), (two_carried, (n((2, 1)), n(3))),
        (swap_shapes, (n((2, 3)) * 0.3,)),
    ]


@pytest.mark.parametrize("index", range(20))
def test_every_program_against_differences(index):
    fn, args = _rng_args(index)[index]
    args = tuple(np.asarray(a) if not isinstance(a, float) else a for a in args)
    for wrt in [i for i, a in enumerate(args) if not isinstance(a, float)]:
        check_every_policy(fn, args, wrt=wrt)


def test_against_autograd():
    autograd = pytest.importorskip("autograd")
    import autograd.numpy as anp

    def newton_a(x):
        h = x
        for i in range(6):
            h = 0.5 * (h + x / h)
        return anp.sum(h)

    def grows_a(x, y):
        h = x
        for i in range(3):
            h = h * 0.5 + y
        return anp.sum(h * h)

    rng = np.random.default_rng(3)
    x = np.abs(rng.standard_normal((3, 4))) + 1
    assert_close(srcgrad.grad(newton_sqrt)(x), autograd.grad(newton_a)(x), rtol=1e-12)
    x, y = rng.standard_normal(3), rng.standard_normal((2, 3))
    assert_close(srcgrad.grad(grows)(x, y), autograd.grad(grows_a)(x, y), rtol=1e-12)
