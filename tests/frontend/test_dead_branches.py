"""A branch Python never runs may name what does not exist.

An outside tester's version check, ``if hasattr(np, "trapezoid"): return
np.trapezoid(...)`` then ``return np.trapz(...)``, was refused as a whole
("name 'np.trapz' is not defined") on NumPy 2.4, which has no ``np.trapz``,
though Python runs it.  A module's ``hasattr`` is known when srcgrad compiles,
so the dead branch is dropped (:mod:`srcgrad.frontend.reachable`), in a
statement or a conditional expression.  A name or module attribute that does
not exist under a condition only known as the code runs is refused there, as
the code runs, located, with Python's own message
(:mod:`srcgrad.frontend.unresolved`); where every call reaches it, when
srcgrad compiles."""

from __future__ import annotations

import numpy as np
import pytest
from numeric import assert_bit_identical, assert_close, check_policies, jvp_fd

import srcgrad
from srcgrad.errors import SrcGradError

Y = np.array([1.0, 2.0, 0.5])
POLICIES = ["save", "recompute", "sqrt", ("revolve", 2)]
assert not hasattr(np, "no_such_function")


def energy(y):  # the tester's program: 4.625, gradient [1, 4, 0.5]
    if hasattr(np, "trapezoid"):
        return np.trapezoid(y ** 2)
    return np.no_such_function(y ** 2)


def as_an_expression(y):
    return np.trapezoid(y ** 2) if hasattr(np, "trapezoid") else np.no_such_function(y ** 2)


def negated(y):
    if not hasattr(np, "no_such_function"):
        z = np.sin(y) * y
    else:
        z = np.no_such_function(y)
    return np.sum(z * 2.0)


def _integrate(v):
    if hasattr(np.linalg, "no_such_function"):
        return np.linalg.no_such_function(v)
    return np.trapezoid(v)


def in_a_loop_and_helper(y):
    s = 0.0
    for k in range(3):
        if hasattr(np, "trapezoid"):
            s = s + _integrate(y * s + y[k]) * (y[k] if hasattr(np, "sin") else np.nope)
        else:
            s = np.no_such_function(s)
    return s


def by_shape(y):  # a condition only known as the code runs
    if y.ndim == 1:
        return np.trapezoid(y ** 2)
    return np.no_such_function(y ** 2)


def name_in_a_loop(y):
    s = 0.0
    for k in range(3):
        if y[k] > 5.0:
            s = s + undefined_helper(y[k])  # noqa: F821 -- the point of the test
        else:
            s = s + np.sin(y[k]) * s + y[k]
    return s


def always(y):
    z = y * 2.0
    return np.sum(np.no_such_function(z))


PROGRAMS = [energy, as_an_expression, negated, in_a_loop_and_helper, by_shape, name_in_a_loop]


@pytest.mark.parametrize("fn", PROGRAMS)
def test_a_branch_never_run_may_name_what_does_not_exist(fn):
    check_policies(fn, (Y,), policies=POLICIES)
    value, tangent = srcgrad.jvp(fn, (Y,), (np.ones(3),))
    assert_bit_identical(value, fn(Y))
    assert_close(tangent, jvp_fd(fn, [Y], [0], [np.ones(3)]))


def test_the_testers_values_and_autograd():
    value, grad = srcgrad.value_and_grad(energy)(Y)
    assert value == 4.625
    np.testing.assert_allclose(grad, [1.0, 4.0, 0.5], rtol=1e-15)
    v = np.array([1.0, -1.0, 0.5])
    g = srcgrad.grad(in_a_loop_and_helper)
    want = (g(Y + 1e-6 * v) - g(Y - 1e-6 * v)) / 2e-6
    np.testing.assert_allclose(srcgrad.hvp(in_a_loop_and_helper)(Y, v), want, rtol=1e-6)
    autograd = pytest.importorskip("autograd")
    np.testing.assert_allclose(srcgrad.grad(negated)(Y), autograd.grad(negated)(Y), rtol=1e-14)


def _line_of(fn, text):
    import inspect
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


@pytest.mark.parametrize("fn, arg, message, text", [
    (by_shape, np.ones((2, 2)), "module 'numpy' has no attribute 'no_such_function'",
     "return np.no_such_function"),
    (name_in_a_loop, np.array([1.0, 6.0, 0.0]), "name 'undefined_helper' is not defined",
     "undefined_helper(y[k])"),
])
def test_reached_as_the_code_runs_it_is_refused_there_located(fn, arg, message, text):
    for run in (lambda: srcgrad.grad(fn)(arg), lambda: srcgrad.jvp(fn, (arg,), (np.ones_like(arg),)),
                lambda: srcgrad.value_and_grad(fn, policy="sqrt")(arg)):
        with pytest.raises(SrcGradError) as info:
            run()
        err = info.value
        assert message in str(err)
        assert err.filename.endswith("test_dead_branches.py")
        assert err.lineno == _line_of(fn, text)


def test_reached_by_every_call_it_is_refused_when_compiled():
    with pytest.raises(SrcGradError) as info:
        srcgrad.grad(always)(Y)
    err = info.value
    assert "module 'numpy' has no attribute 'no_such_function'" in str(err)
    assert err.filename.endswith("test_dead_branches.py")
    assert err.lineno == _line_of(always, "np.no_such_function(z)")


def test_hasattr_of_an_object_is_not_decided_in_advance():
    # hasattr of something that is not a module is not known in advance
    class Box:
        pass

    def read(y, box=Box()):
        if hasattr(box, "scale"):
            return np.sum(y * box.scale)
        return np.sum(y * y)
    value, grad = srcgrad.value_and_grad(read)(Y)
    assert value == read(Y)
    np.testing.assert_allclose(grad, 2 * Y)
