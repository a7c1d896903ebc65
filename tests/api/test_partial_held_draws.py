"""A generator held only by a ``functools.partial``, under check=True and reruns.

check=True runs the function itself after the generated code, from the
generators' states that code started from (api/draws.py); Jacobians and
Hessians rerun it likewise.  The generators were looked for among the
arguments, the globals and closure contents and one level inside them -- a
partial's fixed arguments and keywords, and the object of a partial of a
generator's method, were not: ``noisy = partial(add_noise, rng=RNG)`` read by
the function (a global, a closure, an argument) or ``draw = partial(RNG.normal,
0.0, 1.0)`` drew again, and srcgrad reported its own bug (TranslationError) on
correct code, and a Hessian's columns came from different noise.  A partial
now counts as what it holds, through partials of partials."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from numeric import assert_bit_identical, assert_close, numeric_grad
from test_check_mode_draws import states

import srcgrad

X = np.array([0.5, -1.0, 0.25])


def add_noise(x, rng, s):
    return x + s * rng.normal(size=x.shape)


RNG = np.random.default_rng(1)
draw = functools.partial(RNG.normal, 0.0, 1.0)                    # a generator's method
noisy = functools.partial(functools.partial(add_noise, s=0.1), rng=RNG)  # partial of partial


def method_in_a_global(x):
    h = x
    for _ in range(2):
        h = np.tanh(h * (1.0 + 0.1 * draw(size=3)))
    return np.sum(h ** 2)


def partial_in_a_global(x):
    y = noisy(x)
    if y[0] > 0:
        y = noisy(y)
    return np.sum(np.tanh(y) ** 2)


def passed(x, nz):
    return np.sum(np.sin(nz(x)) * x)


class Model:
    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)

    def jitter(self, x):
        return x * (1.0 + 0.1 * self.rng.normal(size=x.shape))


def in_a_closure(seed):
    """The function, and the generators it draws from."""
    rng, model = np.random.default_rng(seed), Model(seed + 1)
    nz = functools.partial(add_noise, rng=rng, s=0.1)
    jitter = functools.partial(model.jitter)  # an object's generator, through its method

    def f(x):
        return np.sum(np.tanh(jitter(nz(x))) ** 2)
    return f, (rng, model.rng)


def _cases():
    """(function, its extra arguments, the generators it draws from), made anew."""
    closure, inside = in_a_closure(3)
    held = functools.partial(add_noise, rng=np.random.default_rng(5), s=0.1)
    return [(method_in_a_global, (), (RNG,)), (partial_in_a_global, (), (RNG,)),
            (closure, (), inside), (passed, (held,), (held.keywords["rng"],))]


def _rewinder(generators):
    """Sets the generators back to their states now."""
    start = [g.bit_generator.state for g in generators]

    def rewind():
        for g, state in zip(generators, start):
            g.bit_generator.state = state
    return rewind


@pytest.mark.parametrize("case", range(4), ids=["method_in_a_global", "partial_in_a_global",
                                                "in_a_closure", "passed"])
def test_check_mode_and_reruns_draw_what_one_run_draws(case):
    fn, extra, generators = _cases()[case]
    rewind = _rewinder(generators)
    want = fn(X, *extra)
    after = states(*generators)  # what one run leaves

    def at_the_start(x):
        rewind()
        return fn(x, *extra)
    fd = numeric_grad(at_the_start, [X], 0)
    for policy in ("save", "sqrt", ("revolve", 2)):
        rewind()
        value, grad = srcgrad.value_and_grad(fn, policy=policy, check=True)(X, *extra)
        assert_bit_identical(value, want, f"{policy!r}")
        assert_close(grad, fd, rtol=1e-5, atol=1e-7, what=f"{policy!r}")
        assert states(*generators) == after, "the generators moved on twice"
    rewind()
    hessian = srcgrad.hessian(fn)(X, *extra)  # a Hessian-vector product per column
    assert states(*generators) == after
    h, columns = 1e-5, []
    for e in np.eye(3):
        rewind()
        plus = srcgrad.grad(fn)(X + h * e, *extra)
        rewind()
        columns.append((plus - srcgrad.grad(fn)(X - h * e, *extra)) / (2 * h))
    assert_close(hessian, np.array(columns).T, rtol=1e-4, atol=1e-6, what="hessian")
