"""Assignments to attributes in differentiated code (review s33 F22, F21).

``self.t += 1`` in a method, ``self.t = self.t + 1``, ``c.lr *= 0.5`` on an
object passed, ``s = Sched(0.1)`` built in the function and its methods
called in a loop: srcgrad runs the assignment as written (normalize/
attribute_stores.py), so the object changes as in Python -- the caller's
object too -- and the later reads see the new value.  Each program: value bit
for bit, gradient against differences under every policy, jvp, autograd; in a
loop, a branch and a helper.

Refused, located: a value being differentiated stored in an attribute (an
optimiser's moment ``self.m = 0.9 * self.m + 0.1 * g``, the review's Adam:
the message names the class and says to keep the state in local variables),
``self.w -= g`` on an array (in place in Python: checked as the code runs),
an assignment or a method called for its effect on an object inside a loop
the "sqrt"/"revolve" policies rerun (the rerun changed the object again: a
silently wrong gradient for ``c.tick()`` before), and an attribute of a
global class.
"""

from __future__ import annotations

import numpy as np
import pytest
from numeric import POLICIES, assert_bit_identical, assert_close, numeric_grad
from numeric import check_every_policy as check

import srcgrad
from srcgrad.errors import AliasedUpdateError, UnsupportedSyntaxError

W = np.array([0.3, -0.7, 1.1])


def against_autograd(fn, args, grad):
    autograd = pytest.importorskip("autograd")
    assert_close(grad, autograd.grad(fn)(*args), rtol=1e-10, atol=1e-12,
                 what=f"{fn.__name__}, autograd")


class Counter:
    def __init__(self):
        self.t = 0

    def step(self, w, g):
        self.t += 1  # the review's F22
        return w - 0.1 * g * np.sin(w) / self.t

    def step_rebound(self, w, g):
        self.t = self.t + 1
        return w - 0.1 * g * np.sin(w) / self.t


class Sched:
    """Built in the function from a number: its methods are followed by its class."""

    def __init__(self, lr):
        self.lr = lr
        self.t = 0

    def step(self, w, g):
        self.t += 1
        self.lr *= 0.5
        return w - self.lr * g / self.t

    def swap(self):
        self.lr, self.t = self.t + 1.0, 1


# -- an object passed: the caller's object changes as Python changes it -------------

def counted(w, c):
    for _ in range(3):
        w = c.step(w, 2.0 * w)
    return np.sum(w ** 2)


def counted_rebound(w, c):
    for _ in range(3):
        w = c.step_rebound(w, 2.0 * w)
    return np.sum(w ** 2)


def counted_here(w, c):  # the assignment in the function itself
    s = 0.0
    for _ in range(3):
        c.t += 1
        s = s + np.sum(np.sin(w * c.t))
    return s


def counted_in_branch(w, c):
    s = np.sum(np.sin(w))
    if s > 0.0:
        c.t += 2
    else:
        c.t -= 1
    return s * c.t


def bump(w, c):
    c.t += 1
    return np.cos(w) * c.t


def counted_by_helper(w, c):
    return np.sum(bump(w, c) + bump(w, c))


PASSED = [(counted, POLICIES), (counted_rebound, POLICIES),
          (counted_here, ["save", "recompute"]), (counted_in_branch, POLICIES),
          (counted_by_helper, POLICIES)]


@pytest.mark.parametrize("fn,policies", PASSED, ids=[fn.__name__ for fn, _ in PASSED])
def test_an_object_passed_changes_as_in_python(fn, policies):
    mine = Counter()
    want = fn(W.copy(), mine)
    fd = numeric_grad(lambda w: fn(w, Counter()), [W], 0)
    for policy in policies:
        c = Counter()
        value, grad = srcgrad.value_and_grad(fn, policy=policy)(W.copy(), c)
        assert_bit_identical(value, want, f"{fn.__name__}, {policy!r}")
        assert_close(grad, fd, rtol=1e-6, atol=1e-8, what=f"{fn.__name__}, {policy!r}")
        assert c.t == mine.t, (policy, c.t, mine.t)  # the caller sees the change
    c = Counter()
    direction = np.array([1.0, -0.5, 2.0])
    value, tangent = srcgrad.jvp(fn)(W.copy(), c, direction)
    assert_bit_identical(value, want, f"{fn.__name__}, jvp")
    assert_close(tangent, fd @ direction, rtol=1e-6, atol=1e-8, what=f"{fn.__name__}, jvp")
    assert c.t == mine.t
    against_autograd(lambda w: fn(w, Counter()), (W,), grad)


# -- an object built in the function (F21 with state that has no derivative) --------

def scheduled(w):
    s = Sched(0.2)
    for _ in range(3):
        w = s.step(w, np.tanh(w))
    return np.sum(w ** 2) * s.t


def scheduled_in_branch(w):
    s = Sched(0.2)
    if np.sum(w) > 0.0:
        w = s.step(w, w ** 2)
    else:
        w = s.step(w, -w)
    return np.sum(np.sin(w)) + s.lr


def run_schedule(w):
    s = Sched(0.1)
    w = s.step(w, np.sin(w))
    return s.step(w, np.cos(w))


def scheduled_by_helper(w):
    return np.sum(run_schedule(w) ** 2)


def swapped(w):  # a tuple of attributes assigned, and a chained assignment
    s = Sched(0.2)
    s.swap()
    s.t = s.lr = s.lr * 2.0
    return np.sum(np.sin(w * s.lr)) + s.t


@pytest.mark.parametrize("fn", [scheduled, scheduled_in_branch, scheduled_by_helper, swapped])
def test_an_object_built_in_the_function(fn):
    against_autograd(fn, (W,), check(fn, (W.copy(),)))


def test_the_store_is_written_as_the_assignment():
    g = srcgrad.grad(counted_here)
    g(W.copy(), Counter())
    assert "c.t = t" in g.source and "setattr" not in g.source
    assert "rebinding(" in g.source  # c.t += 1: checked to rebind a number first


# -- refused, located ----------------------------------------------------------------

class Adam:
    def __init__(self, n):
        self.m = np.zeros(n)
        self.t = 0

    def step(self, w, g):
        self.t = self.t + 1
        self.m = 0.9 * self.m + 0.1 * g  # a value being differentiated
        return w - 0.01 * self.m / (1 - 0.9 ** self.t)


def adam(w0):  # the review's F21
    opt = Adam(len(w0))
    w = w0
    for _ in range(3):
        w = opt.step(w, 2.0 * w)
    return np.sum(w ** 2)


def adam_passed(w, opt):
    return np.sum(opt.step(w, np.sin(w)))


@pytest.mark.parametrize("run", [
    lambda: srcgrad.grad(adam)(W.copy()),
    lambda: srcgrad.jvp(adam)(W.copy(), np.ones(3)),
    lambda: srcgrad.grad(adam_passed)(W.copy(), Adam(3)),
])
def test_a_differentiated_value_stored_in_an_attribute_is_refused(run):
    with pytest.raises(UnsupportedSyntaxError) as info:
        run()
    err = info.value
    assert err.filename.endswith("test_attribute_assignments.py")
    assert err.lineno == Adam.step.__code__.co_firstlineno + 2
    assert "self.m = 0.9 * self.m + 0.1 * g" in err.message and "class Adam" in err.message
    assert "local variables" in err.message and "t1" not in err.message


class Buffer:
    def __init__(self):
        self.buf = np.array([1.0, 2.0, 3.0])

    def shift(self, w):
        self.buf -= 0.25  # in place on the array: Python changes it there
        return w * self.buf


def buffered(w, b):
    s = 0.0
    for _ in range(2):
        s = s + np.sum(np.sin(b.shift(w)))
    return s


def test_an_augmented_assignment_changing_an_array_in_place_is_refused():
    for run in (lambda: srcgrad.grad(buffered)(W.copy(), Buffer()),
                lambda: srcgrad.jvp(buffered)(W.copy(), Buffer(), np.ones(3))):
        with pytest.raises(AliasedUpdateError) as info:
            run()
        err = info.value
        assert err.lineno == Buffer.shift.__code__.co_firstlineno + 1
        assert "self.buf = self.buf - ..." in err.message


class Ticker:
    def __init__(self):
        self.t = 0

    def tick(self):
        self.t = self.t + 1


def ticked(w, c):  # was silently wrong under "sqrt" and "revolve": the rerun ticked again
    s = 0.0
    for _ in range(3):
        c.tick()
        s = s + np.sum(np.sin(w * c.t))
    return s


@pytest.mark.parametrize("policy", ["sqrt", ("revolve", 2)])
@pytest.mark.parametrize("fn", [ticked, counted_here])
def test_an_object_changed_in_a_checkpointed_loop_is_refused(fn, policy):
    with pytest.raises(UnsupportedSyntaxError) as info:
        srcgrad.grad(fn, policy=policy)(W.copy(), Ticker())
    err = info.value
    assert err.filename.endswith("test_attribute_assignments.py")
    assert err.lineno == fn.__code__.co_firstlineno + 3
    assert "checkpointed" in err.message and "'c'" in err.message
    assert "policy='save'" in err.message


@pytest.mark.parametrize("fn", [ticked, counted_here])
def test_the_same_loop_runs_under_save_and_recompute(fn):
    want = fn(W.copy(), Ticker())
    fd = numeric_grad(lambda w: fn(w, Ticker()), [W], 0)
    for policy in ("save", "recompute"):
        value, grad = srcgrad.value_and_grad(fn, policy=policy)(W.copy(), Ticker())
        assert_bit_identical(value, want, policy)
        assert_close(grad, fd, rtol=1e-6, atol=1e-8, what=str(policy))


def class_level(w, c):
    Counter.calls = 1
    return np.sum(w)


def test_an_attribute_of_a_global_is_refused():
    with pytest.raises(UnsupportedSyntaxError) as info:
        srcgrad.grad(class_level)(W.copy(), Counter())
    assert info.value.lineno == class_level.__code__.co_firstlineno + 1
    assert "global" in info.value.message
