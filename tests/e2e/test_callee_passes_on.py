"""A helper chain passing its argument on to a function that updates it in place.

``d5(y)`` five calls down to ``setter(p)`` with ``p[0] = v``, or ``viaitem([y])``
passing ``lst[0]`` on to ``setter``: Python changes the caller's ``y``, while
srcgrad's code for the helpers works on copies.  The look that follows helpers
gave up four calls deep, and on a list item, and took "no update" -- a caller
reading ``y`` afterwards got the old values (review 5: 0.1 for 3.2, a wrong
gradient, in grad and jvp).  The calls are now followed to the end (recursion
stops where nothing new turns up) and what cannot be followed counts as an
update: such a caller is refused, located at the call, and runs where it never
reads ``y`` again."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from numeric import assert_bit_identical, assert_close, jvp_fd, numeric_grad, pure

import srcgrad
from srcgrad.errors import AliasedUpdateError, SrcGradError

X = np.array([0.5, 1.2, -0.7])
POLICIES = ["save", "recompute", "sqrt", ("revolve", 2)]
WEIGHTS = np.arange(1, 4)


def setter(p):
    p[0] = p[1] * 3.0
    return p[2]


def d1(a):
    return setter(a)


def d2(a):
    return d1(a)


def d3(a):
    return d2(a)


def d4(a):
    return d3(a)


def d5(a):
    return d4(a)


def d7(a):
    return d5(a) * 1.0


def viaitem(lst):
    return setter(lst[0])


def via_held(lst):  # deeper: a list holding the list
    return viaitem([lst[0]])


def rec(a, n):  # recursion: followed until nothing new turns up
    if n <= 0:
        return setter(a)
    return rec(a, n - 1)


def shift(p):
    p += 1.0
    return np.sum(p)


def s1(a):
    return shift(a)


def s2(a):
    return s1(a)


def s3(a):
    return s2(a)


def s4(a):
    return s3(a)


def s5(a):
    return s4(a)


def deep_caller(x):
    y = x * 1.0
    r = d5(y)
    return r + np.sum(y * WEIGHTS)


def seven_deep_caller(x):
    y = x * 1.0
    r = d7(y)
    return r + np.sum(y * WEIGHTS)


def item_caller(x):
    y = x * 1.0
    r = viaitem([y])
    return r + np.sum(y * WEIGHTS)


def named_list_caller(x):
    y = x * 1.0
    held = [y]
    r = viaitem(held)
    return r + np.sum(y * WEIGHTS)


def held_twice_caller(x):
    y = x * 1.0
    r = via_held([y])
    return r + np.sum(y * WEIGHTS)


def recursive_caller(x):
    y = x * 1.0
    r = rec(y, 3)
    return r + np.sum(y * WEIGHTS)


def in_loop_caller(x):
    y = x * 1.0
    s = 0.0
    for _ in range(2):
        s = s + np.sum(y * WEIGHTS)
        s = s + d5(y)
    return s


def in_branch_caller(x):
    y = x * 1.0
    if x[0] > 0:
        r = viaitem([y])
    else:
        r = 0.0
    return r + np.sum(y * WEIGHTS)


def helper_calling(v):  # the reading caller is itself a helper
    y = v * 1.0
    r = d5(y)
    return r + np.sum(y * WEIGHTS)


def caller_of_helper(x):
    return helper_calling(x) * 2.0


def augmented_caller(x):
    y = np.outer(x, x)
    r = s5(y)
    return r + np.sum(y)


def _expected(fn):
    """Python's value: the caller's own function, run on a copy."""
    return pure(fn)(X)


@pytest.mark.parametrize("fn", [
    deep_caller, seven_deep_caller, item_caller, named_list_caller, held_twice_caller,
    recursive_caller, in_loop_caller, in_branch_caller, caller_of_helper],
    ids=lambda f: f.__name__)
def test_a_read_after_an_update_passed_on_is_refused_located(fn):
    for run in (lambda: srcgrad.value_and_grad(fn)(X.copy()),
                lambda: srcgrad.jvp(fn, (X.copy(),), (np.ones(3),))):
        with pytest.raises(SrcGradError) as info:
            run()
        err = info.value
        assert err.filename == __file__ and err.lineno, err
        assert "updates its argument" in err.message and ".copy()" in err.message, err.message


def test_an_augmented_update_passed_on_five_deep_is_checked_as_it_runs():
    for run in (lambda: srcgrad.value_and_grad(augmented_caller)(X.copy()),
                lambda: srcgrad.jvp(augmented_caller, (X.copy(),), (np.ones(3),))):
        with pytest.raises(AliasedUpdateError) as info:
            run()
        assert info.value.filename == __file__ and "passes 'a' to" in info.value.message


# -- the same chains where the caller never reads the array again: differentiated --

def deep_forgets(x):
    y = x * 1.0
    return d5(y) + d7(x * 2.0)


def item_forgets(x):
    y = x * 1.0
    return viaitem([y]) * 2.0 + via_held([x * 3.0])


def loop_forgets(x):
    s = 0.0
    for k in range(2):
        s = s + d5(x * (k + 1.0))
    return s


def augmented_forgets(x):
    return s5(np.outer(x, x))


def fixed(x):  # what the refusal says to write: pass a copy, read the updated copy
    y = x * 1.0
    z = y.copy()
    r = d5(z)
    return r + np.sum(y * WEIGHTS)


@pytest.mark.parametrize("policy", POLICIES, ids=str)
@pytest.mark.parametrize("fn", [deep_forgets, item_forgets, loop_forgets,
                                augmented_forgets, fixed], ids=lambda f: f.__name__)
def test_no_read_afterwards_differentiates(fn, policy):
    expected = _expected(fn)
    given = X.copy()
    value, grad = srcgrad.value_and_grad(fn, policy=policy)(given)
    assert_bit_identical(value, expected)
    assert_close(grad, numeric_grad(pure(fn), [X], 0), what=f"{fn.__name__} gradient")
    np.testing.assert_array_equal(given, X)
    direction = np.linspace(0.5, 1.5, X.size)
    value, tangent = srcgrad.jvp(fn, (given,), (direction,))
    assert_bit_identical(value, expected)
    assert_close(tangent, jvp_fd(pure(fn), [X], [0], [direction]),
                 what=f"{fn.__name__} tangent")


# -- a function passed to a helper that calls it (srcgrad specialises on it) ----------
#
# apply(setter, y): the helper's g(a) is setter(a), which updates y in place; the
# look did not follow a call of a parameter and took "no update" (0.1 for 3.2).
# Now the functions a call passes are followed; a lambda or local function is
# followed where it calls only NumPy, and otherwise counts as an update.

def apply(g, a):
    return g(a)


def forwards(g, a):  # passes the function on
    return apply(g, a) * 1.0


def through_apply(a):
    return apply(setter, a)


def apply_setter_caller(x):
    y = x * 1.0
    r = apply(setter, y)
    return r + np.sum(y * WEIGHTS)


def forwarded_caller(x):
    y = x * 1.0
    r = forwards(setter, y)
    return r + np.sum(y * WEIGHTS)


def nested_caller(x):
    y = x * 1.0
    r = through_apply(y)
    return r + np.sum(y * WEIGHTS)


def lambda_setter_caller(x):
    y = x * 1.0
    r = apply(lambda p: setter(p), y)
    return r + np.sum(y * WEIGHTS)


def apply_pure_caller(x):  # np.tanh, a pure lambda, a pure local function: run
    def scaled(v):
        t = np.tanh(v) * 2.0
        return np.sum(t)

    y = x * 1.0
    r = np.sum(apply(np.tanh, y)) + np.sum(apply(lambda v: v * v, y))
    return r + forwards(scaled, y) + np.sum(y * WEIGHTS)


@pytest.mark.parametrize("fn", [apply_setter_caller, forwarded_caller, nested_caller,
                                lambda_setter_caller], ids=lambda f: f.__name__)
def test_a_function_passed_that_updates_is_followed(fn):
    test_a_read_after_an_update_passed_on_is_refused_located(fn)


@pytest.mark.parametrize("policy", POLICIES, ids=str)
def test_a_function_passed_that_updates_nothing_runs(policy):
    test_no_read_afterwards_differentiates(apply_pure_caller, policy)


# -- what a helper calls other than a plain function ---------------------------------
#
# A bound method of a module-level object, a functools.partial, an object with
# __call__, a function defined inside the helper: each was taken as "no update".

class Box:
    def set(self, p):
        p[0] = p[1] * 3.0
        return p[2]

    def __call__(self, p):
        return self.set(p)


BOX = Box()
PARTIAL = functools.partial(setter)


def via_method(a):
    return BOX.set(a)


def via_partial(a):
    return PARTIAL(a)


def via_object(a):
    return BOX(a)


def via_local_def(a):
    def inner(q):
        q[0] = q[1] * 3.0
        return q[2]

    return inner(a)


def method_caller(x):
    y = x * 1.0
    r = via_method(y)
    return r + np.sum(y * WEIGHTS)


def partial_caller(x):
    y = x * 1.0
    r = via_partial(y)
    return r + np.sum(y * WEIGHTS)


def object_caller(x):
    y = x * 1.0
    r = via_object(y)
    return r + np.sum(y * WEIGHTS)


def local_def_caller(x):
    y = x * 1.0
    r = via_local_def(y)
    return r + np.sum(y * WEIGHTS)


def via_called_lambda(a):
    return (lambda p: setter(p))(a)  # noqa: PLC3002 (the form under test)


def called_lambda_caller(x):
    y = x * 1.0
    r = via_called_lambda(y)
    return r + np.sum(y * WEIGHTS)


def others_forget(x):
    return via_method(x * 1.0) + via_partial(x * 2.0) + via_local_def(x * 3.0) \
        + via_called_lambda(x * 4.0)


@pytest.mark.parametrize("fn", [method_caller, partial_caller, local_def_caller,
                                called_lambda_caller],
                         ids=lambda f: f.__name__)
def test_a_method_partial_or_local_function_that_updates_is_followed(fn):
    test_a_read_after_an_update_passed_on_is_refused_located(fn)


def test_a_callable_object_that_updates_is_not_differentiated_silently():
    # (calling an object is not differentiated at all yet: refused, never wrong)
    for run in (lambda: srcgrad.value_and_grad(object_caller)(X.copy()),
                lambda: srcgrad.jvp(object_caller, (X.copy(),), (np.ones(3),))):
        with pytest.raises(SrcGradError):
            run()


@pytest.mark.parametrize("policy", POLICIES, ids=str)
def test_those_helpers_run_where_nothing_is_read_afterwards(policy):
    test_no_read_afterwards_differentiates(others_forget, policy)


# -- a list made by + or * of a list display holds the same arrays --------------------

def set_deep(lst):
    lst[0][0] = lst[0][1] * 3.0
    return lst[0][2]


def concatenated_caller(x):  # ws + [] holds y: set_deep changes y (3.2 expected, 0.1 given)
    y = x * 1.0
    ws = [y]
    r = set_deep(ws + [])
    return r + np.sum(y * WEIGHTS)


def repeated_caller(x):
    y = x * 1.0
    r = set_deep([y] * 2)
    return r + np.sum(y * WEIGHTS)


def concatenated_forgets(x):
    ws = [x * 1.0]
    return set_deep(ws + [x * 2.0]) + set_deep([x * 3.0] * 1)


@pytest.mark.parametrize("fn", [concatenated_caller, repeated_caller],
                         ids=lambda f: f.__name__)
def test_a_list_concatenated_holds_the_same_arrays(fn):
    test_a_read_after_an_update_passed_on_is_refused_located(fn)


@pytest.mark.parametrize("policy", POLICIES, ids=str)
def test_a_list_concatenated_and_not_read_again_runs(policy):
    test_no_read_afterwards_differentiates(concatenated_forgets, policy)


def test_autograd_agrees_where_it_runs():
    autograd = pytest.importorskip("autograd")
    anp = pytest.importorskip("autograd.numpy")

    def plain(x):  # augmented_forgets written without in-place updates
        return anp.sum(anp.outer(x, x) + 1.0)

    assert_close(srcgrad.grad(augmented_forgets)(X.copy()), autograd.grad(plain)(X),
                 what="autograd")


# -- a lambda or local function calling a user function that changes nothing --------
#
# 09bb7af took every call of a user function in a lambda passed to a helper as an
# update: apply(lambda v: act(v) + 1.0, y) with y read afterwards was refused with
# "apply() updates its argument 'a' in place" (outside reviewer r1 #9; db716b8 gave
# the right gradient).  The user function is now followed, with what it is passed.

def act(v):
    return np.tanh(v) * 2.0


def twice(g, a):
    return g(g(a))


def lambda_calling_pure(x):
    y = x * 2.0
    z = apply(lambda v: act(v) + 1.0, y)
    return np.sum(z * y)


def local_def_calling_pure(x):
    y = x * 2.0

    def shifted(v):
        return act(v) + 1.0
    return np.sum(apply(shifted, y) * y)


def lambdas_in_a_loop(x):
    y = x * 1.0
    g = lambda v: act(act(v))  # noqa: E731 (the form under test)
    total = 0.0
    for k in range(3):
        total = total + np.sum(twice(lambda v: np.sin(v) + act(v), y) * y)
        if k > 0:
            total = total + np.sum(apply(g, y) * y)
    return total


def lambda_calling_an_updater(x):  # still refused: the update reached through act-like code
    y = x * 1.0
    r = apply(lambda p: d1(p) + 1.0, y)
    return r + np.sum(y * WEIGHTS)


@pytest.mark.parametrize("policy", POLICIES, ids=str)
@pytest.mark.parametrize("fn", [lambda_calling_pure, local_def_calling_pure, lambdas_in_a_loop],
                         ids=lambda f: f.__name__)
def test_a_lambda_calling_a_pure_user_function_runs(fn, policy):
    test_no_read_afterwards_differentiates(fn, policy)


def test_a_lambda_calling_a_pure_user_function_agrees_with_autograd():
    autograd = pytest.importorskip("autograd")
    anp = pytest.importorskip("autograd.numpy")

    def plain(x):
        y = x * 2.0
        return anp.sum((anp.tanh(y) * 2.0 + 1.0) * y)

    assert_close(srcgrad.grad(lambda_calling_pure)(X.copy()), autograd.grad(plain)(X),
                 what="autograd")


def test_a_lambda_calling_an_updating_user_function_stays_refused():
    test_a_read_after_an_update_passed_on_is_refused_located(lambda_calling_an_updater)


# -- f(y, t, *args) in an odeint-style helper: the documented refusal, its own reason --
#
# Outside tester t3 #7: called in a loop, 'step' was said to update 'y' in place and
# the caller told to pass step(y.copy(), ...), which gave step(y.copy().copy(), ...).
# A starred call's arguments before the star are matched to their parameters, the
# rest to every parameter left: nothing updates y, and the refusal says why it is one.

def pend(y, t, g):
    return np.array([y[1], -g * np.sin(y[0])])


def ode_step(f, y, t, args):
    k1 = f(y, t, *args)
    return y + 0.1 * k1


def ode_in_loop(y0, g):
    y = y0
    for _ in range(3):
        y = ode_step(pend, y, 0.0, (g,))
    return np.sum(y ** 2)


def ode_once(y0, g):
    return np.sum(ode_step(pend, y0, 0.0, (g,)) ** 2)


def write_third(y, t, p):
    p[0] = y[1] * t
    return y[0]


def star_updater_caller(x):  # the starred items still reach an updating parameter
    y = x * 1.0
    args = (2.0, y)
    r = write_third(x * 2.0, *args)
    return r + np.sum(y * WEIGHTS)


def ode_of_a_list(y0, gs):  # *args of a list whose length the call does not fix
    return np.sum(ode_step(pend, y0, 0.0, gs) ** 2)


@pytest.mark.parametrize("fn", [ode_in_loop, ode_once], ids=lambda f: f.__name__)
def test_a_starred_tuple_of_known_length_is_followed(fn):
    # (refused, "cannot tell how many arguments '*args'", until ode_step's code was
    # specialised on the length of the tuple display passed: frontend/linker.Packed)
    from numeric import check_every_policy  # noqa: PLC0415
    check_every_policy(fn, (np.array([0.5, 0.1]), 9.8))


@pytest.mark.parametrize("fn", [ode_of_a_list], ids=lambda f: f.__name__)
def test_a_starred_call_of_unknown_length_is_refused_for_that_reason(fn):
    y0 = np.array([0.5, 0.1])
    for run in (lambda: srcgrad.value_and_grad(fn)(y0, [9.8]),
                lambda: srcgrad.jvp(fn, (y0, [9.8]), (np.ones(2), [0.0]))):
        with pytest.raises(SrcGradError) as info:
            run()
        assert "cannot tell how many arguments '*args'" in info.value.message, info.value
        assert "in place" not in info.value.message
        assert info.value.filename == __file__ and info.value.lineno


def test_starred_items_passed_to_an_updating_parameter_count():
    test_a_read_after_an_update_passed_on_is_refused_located(star_updater_caller)
