"""A helper that updates its argument in place and returns it, called as
``state = step(state, dt)`` -- the common simulation idiom (review 4, L7).

srcgrad's code for ``step`` updates a copy and returns it; the caller's name
``state`` is bound to that result, as in Python it is bound to the updated
object, so reads of ``state`` after the call see the same values.  Only names
that still refer to the old memory after the call (``s0 = state`` before the
loop, read afterwards; a list that holds the old state) would differ, and those
are still refused at the call.  Each case: value bit for bit the function's own,
gradient and tangent against central differences, every checkpoint policy.
"""

from __future__ import annotations

import pathlib
import re

import numpy as np
import pytest
from numeric import assert_bit_identical, assert_close, jvp_fd, numeric_grad, pure

import srcgrad
from srcgrad import SrcGradError

POLICIES = ["save", "recompute", "sqrt", ("revolve", 2)]
X = np.array([0.7, -1.3, 0.4])


def _check(fn, x=X, policy="save"):
    expected = pure(fn)(x)
    given = x.copy()
    value, grad = srcgrad.value_and_grad(fn, policy=policy)(given)
    assert_bit_identical(value, expected)
    assert_close(grad, numeric_grad(pure(fn), [x], 0), what=f"{fn.__name__} gradient")
    np.testing.assert_array_equal(given, x)  # the caller's array is left alone
    direction = np.linspace(0.5, 1.5, x.size)
    value, tangent = srcgrad.jvp(fn, (given,), (direction,))
    assert_bit_identical(value, expected)
    np.testing.assert_allclose(tangent, jvp_fd(pure(fn), (x,), (0,), (direction,)),
                               rtol=1e-6, atol=1e-8)
    np.testing.assert_array_equal(given, x)


# -- the callee updates arrays held in a list and returns the list -------------------

def step(state, dt):
    state[1][0] = state[1][0] - dt * state[0][0]
    state[0][0] = state[0][0] + dt * state[1][0]
    return state


def stepped_in_a_loop(x):  # the reviewer's program
    state = [x[:2] * 1.0, x[1:] * 1.0]
    for i in range(4):
        state = step(state, 0.1)
    return np.sum(state[0] ** 2) + np.sum(state[1])


def stepped_once(x):
    state = [x[:2] * 1.0, x[1:] * 1.0]
    state = step(state, 0.3)
    return np.sum(state[0] * state[1])


def stepped_in_a_branch(x):
    state = [x[:2] * 1.0, x[1:] * 1.0]
    if x[0] > 0:
        state = step(state, 0.2)
    else:
        state = step(state, -0.2)
    return np.sum(state[0] ** 2) + np.sum(state[1])


def stepped_while(x):
    state = [x[:2] * 1.0, x[1:] * 1.0]
    k = 0
    while k < 3:
        state = step(state, 0.1 * (k + 1))
        total = np.sum(state[0])  # the result of this iteration's step
        k += 1
    return total * np.sum(state[1])


def element_step(state, i):
    state[0][i] = np.sin(state[0][i]) * state[1][i]
    return state


def stepped_per_element(x):
    state = [x * 1.0, x ** 2]
    for i in range(3):
        state = element_step(state, i)
    return np.sum(state[0] * state[1])


# -- an array argument updated in place and returned ---------------------------------

def bump(v, c):
    v[0] = v[0] * c + v[1]
    v[2] = np.tanh(v[2]) + v[0]
    return v


def array_bumped_in_a_loop(x):
    y = x * 1.0
    for k in range(3):
        y = bump(y, 0.5 + k)
    return np.sum(y * y)


def argument_bumped(x):  # the function's own argument: srcgrad's code copies it
    x = bump(x, 0.7)
    return np.sum(x ** 3)


# -- a tuple return: (state, e) = step(state) -----------------------------------------

def step_with_energy(state, dt):
    state[1][0] = state[1][0] - dt * state[0][0]
    state[0][0] = state[0][0] + dt * state[1][0]
    return state, np.sum(state[0] ** 2)


def stepped_with_energy(x):
    state = [x[:2] * 1.0, x[1:] * 1.0]
    total = 0.0
    for i in range(3):
        (state, e) = step_with_energy(state, 0.1)
        total = total + e
    return total + np.sum(state[1])


def stepped_with_energy_unpacked(x):
    state = [x[:2] * 1.0, x[1:] * 1.0]
    state, e = step_with_energy(state, 0.25)
    return e * np.sum(state[0] * state[1])


def restarted_each_outer_iteration(x):  # a new state each outer step: nothing old is read
    total = 0.0
    for j in range(2):
        state = [x[:2] * (1.0 + j), x[1:] * 1.0]
        for i in range(2):
            state = step(state, 0.1)
        total = total + np.sum(state[0] * state[1])
    return total


def part_taken_after_each_step(x):  # pos is state[0] of this step's result
    state = [x[:2] * 1.0, x[1:] * 1.0]
    total = 0.0
    for i in range(3):
        state = step(state, 0.1)
        pos = state[0]
        total = total + np.sum(pos ** 2)
    return total


def unpacked_after_the_loop(x):
    state = [x[:2] * 1.0, x[1:] * 1.0]
    for i in range(3):
        state = step(state, 0.1)
    pos, vel = state
    return np.sum(pos * vel)


def part_taken_in_the_loop_read_after_it(x):
    state = [x[:2] * 1.0, x[1:] * 1.0]
    k = 0
    while k < 3:
        state = step(state, 0.1)
        pos, vel = state
        k += 1
    return np.sum(pos * vel) + np.sum(pos * x[0])


def items_rebound_by_the_call(x):  # pos, vel = step([pos, vel]): the result's items
    pos, vel = x[:2] * 1.0, x[1:] * 1.0
    for i in range(3):
        pos, vel = step([pos, vel], 0.1)
    return np.sum(pos * vel)


FORMS = [part_taken_after_each_step, unpacked_after_the_loop,
         part_taken_in_the_loop_read_after_it, items_rebound_by_the_call,
         restarted_each_outer_iteration, stepped_in_a_loop, stepped_once, stepped_in_a_branch, stepped_while,
         stepped_per_element, array_bumped_in_a_loop, argument_bumped,
         stepped_with_energy, stepped_with_energy_unpacked]


@pytest.mark.parametrize("policy", POLICIES, ids=str)
@pytest.mark.parametrize("fn", FORMS, ids=lambda f: f.__name__)
def test_state_rebound_to_the_result_differentiates(fn, policy):
    _check(fn, policy=policy)


# -- another name for the old memory, read afterwards, is still refused ---------------

def old_state_read_after(x):
    state = [x[:2] * 1.0, x[1:] * 1.0]
    s0 = state
    for i in range(2):
        state = step(state, 0.1)
    return np.sum(state[0]) + np.sum(s0[1])  # Python: s0 is state, updated


def old_array_read_after(x):
    state = [x[:2] * 1.0, x[1:] * 1.0]
    vel = state[1]
    state = step(state, 0.1)
    return np.sum(state[0]) * np.sum(vel)  # Python: vel was updated


def history_of_states(x):
    state = [x[:2] * 1.0, x[1:] * 1.0]
    hist = []
    for i in range(2):
        state = step(state, 0.1)
        hist.append(state)  # Python: every item is the one list, updated each step
    return np.sum(hist[0][0])


def rebound_to_the_old_state(x):
    state = [x[:2] * 1.0, x[1:] * 1.0]
    s0 = state
    state = step(state, 0.1)
    state = s0  # the old memory again: Python shows it updated
    return np.sum(state[1])


def part_taken_before_the_step(x):
    state = [x[:2] * 1.0, x[1:] * 1.0]
    total = 0.0
    for i in range(3):
        pos = state[0]
        state = step(state, 0.1)
        total = total + np.sum(pos ** 2)  # Python: pos is the array step updated
    return total


def part_skipped_by_a_break(x):
    state = [x[:2] * 1.0, x[1:] * 1.0]
    pos = state[0]
    for i in range(3):
        state = step(state, 0.1)
        if i == 1:
            break  # pos is the array this step updated
        pos = state[0]
    return np.sum(pos * x[0])


def part_taken_before_the_loop(x):
    state = [x[:2] * 1.0, x[1:] * 1.0]
    pos = state[0]
    for i in range(3):
        state = step(state, 0.1)
    return np.sum(pos * x[0])  # Python: updated by every step


def returns_another_parameter(state, other):
    state[0][0] = 2.0 * state[0][0]
    return other


def rebound_to_another_argument(x):
    state = [x[:2] * 1.0, x[1:] * 1.0]
    state = returns_another_parameter(state, state)  # Python: the updated list
    return np.sum(state[0])


def returns_array_argument(v, w):
    v[0] = 2.0 * v[0]
    return w


def rebound_to_another_array_argument(x):
    y = x * 1.0
    y = returns_array_argument(y, y)
    return np.sum(y)


@pytest.mark.parametrize("fn", [old_state_read_after, old_array_read_after, history_of_states,
                                rebound_to_the_old_state, rebound_to_another_argument,
                                rebound_to_another_array_argument, part_taken_before_the_step,
                                part_skipped_by_a_break, part_taken_before_the_loop],
                         ids=lambda f: f.__name__)
def test_a_read_of_the_old_memory_is_refused(fn):
    """Python shows these names the update; srcgrad's code would not: refused at the call."""
    with pytest.raises(SrcGradError, match="updates its argument '(state|v)' in place") as info:
        srcgrad.grad(fn)(X.copy())
    assert info.value.filename == __file__


@pytest.mark.parametrize("fn", [stepped_in_a_loop, array_bumped_in_a_loop, stepped_with_energy,
                                part_taken_after_each_step, items_rebound_by_the_call],
                         ids=lambda f: f.__name__)
def test_hvp_matches_differences_of_the_gradient(fn):
    v = np.array([0.3, -0.2, 0.5])
    grad = srcgrad.grad(fn)
    eps = 1e-5
    expected = (grad(X + eps * v) - grad(X - eps * v)) / (2 * eps)
    np.testing.assert_allclose(srcgrad.hvp(fn)(X, v), expected, rtol=1e-5, atol=1e-7)


# -- a name the state was built from, read after the step (review 5, H0) ---------------
# state = [a, vel]: Python's 'a' and 'vel' are the arrays step updates in place, whatever
# name its result is bound to; srcgrad's code updates copies.  Rebinding 'state' excuses
# reads of 'state' only, so these are refused at the call, as before 472ac6d.

def step_dict(st, dt):
    st['v'][0] = st['v'][0] - dt * st['p'][0]
    return st


def push(state, dt):  # state[0] += ...: the array in the list changes in place
    state[0] += dt * state[1]
    return state, np.sum(state[0] ** 2)


def built_from_a_name_read_after(x):
    a = x[:2] * 1.0
    state = [a, x[1:] * 1.0]
    for i in range(2):
        state = step(state, 0.1)
    return a[0] * 10 + np.sum(state[1])  # Python: a is state[0], updated


def built_from_names_read_in_the_loop(x):
    pos = x[:2] * 1.0
    vel = x[1:] * 1.0
    state = [pos, vel]
    s = 0.0
    for i in range(3):
        state = step(state, 0.1)
        s = s + vel[0]  # Python: vel is state[1], updated
    return s


def dict_built_from_names(x):
    p = x[:2] * 1.0
    v = x[1:] * 1.0
    st = {'p': p, 'v': v}
    for i in range(3):
        st = step_dict(st, 0.1)
    return v[0] * 3.0 + np.sum(st['p'])  # Python: v is st['v'], updated


def tuple_return_built_from_a_name(x):
    p = x[:2] * 1.0
    state = [p, x[1:] * 1.0]
    total = 0.0
    for i in range(2):
        state, e = push(state, 0.1)
        total = total + e
    return total + np.sum(p)  # Python: p is state[0], updated by +=


BUILT_FROM_NAMES = [built_from_a_name_read_after, built_from_names_read_in_the_loop,
                    dict_built_from_names, tuple_return_built_from_a_name]


@pytest.mark.parametrize("mode", ["grad", "jvp"])
@pytest.mark.parametrize("fn", BUILT_FROM_NAMES, ids=lambda f: f.__name__)
def test_a_name_the_state_was_built_from_read_after_the_step_is_refused(fn, mode):
    with pytest.raises(SrcGradError, match=r"updates its argument '(state|st)' in place, and "
                       r"this function reads '(a|vel|v|p)'") as info:
        if mode == "grad":
            srcgrad.grad(fn)(X.copy())
        else:
            srcgrad.jvp(fn, (X.copy(),), (np.ones(X.size),))
    assert info.value.filename == __file__
    lines = pathlib.Path(__file__).read_text().splitlines()
    start = lines.index(f"def {fn.__name__}(x):")
    call = next(i for i in range(start, len(lines))
                if re.search(r"= (step|step_dict|push)\(", lines[i]))
    assert info.value.lineno == call + 1  # at the step's call


def built_from_names_not_read_after(x):  # the names are only read before the steps
    pos = x[:2] * 1.0
    vel = x[1:] * 1.0
    start = np.sum(pos * vel)
    state = [pos, vel]
    for i in range(3):
        state = step(state, 0.1)
    return start + np.sum(state[0] ** 2) + np.sum(state[1])


def dict_built_from_names_not_read_after(x):
    p = x[:2] * 1.0
    v = x[1:] * 1.0
    st = {'p': p, 'v': v}
    for i in range(3):
        st = step_dict(st, 0.1)
    return np.sum(st['v']) * 3.0 + np.sum(st['p'])


@pytest.mark.parametrize("policy", POLICIES, ids=str)
@pytest.mark.parametrize("fn", [built_from_names_not_read_after,
                                dict_built_from_names_not_read_after],
                         ids=lambda f: f.__name__)
def test_a_state_built_from_names_not_read_after_differentiates(fn, policy):
    _check(fn, policy=policy)
