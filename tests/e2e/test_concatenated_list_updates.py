"""A helper updating the items of a list built from other lists, in place.

``zs = xs + ys; upd(zs, c)`` where ``upd`` does ``ps[0] *= c``: NumPy changes
the array ``xs[0]`` is, so the caller's ``xs`` sees the update.  srcgrad's code
for ``upd`` works on a copy, and a caller reading ``xs`` afterwards got the old
values -- a silently wrong value and gradient -- on two counts: the look at
what a call changes took ``xs + ys`` of two names for arithmetic, a new value
sharing nothing (a display, ``xs + [y]``, was followed), and it took
``ps[0] *= c`` for a change of the list ``ps`` alone, not of the array it holds
(``state = [h]; step(state)``, ``list(xs)``, ``[xs[0]]``, ``xs * 1`` were as
wrong).  A concatenation (repetition) with a list now holds both lists' items,
and ``ps[k] op= v`` in a helper changes the memory below ``ps``'s items: the
read afterwards is refused, naming it, as it is where ``xs`` itself is passed.
Updates of the items in the function itself, and reads of what is not
shared, run as before."""

from __future__ import annotations

import numpy as np
import pytest
from numeric import assert_refused_both_modes, check_every_policy

import srcgrad
from srcgrad.errors import UnsupportedSyntaxError

X = np.array([0.5, -1.0, 0.25])


def upd(ps, c):
    ps[0] *= c
    ps[1] += c
    return np.sum(ps[0])


def step(s, x):
    s[0] += x
    return np.sum(s[0])


def concatenated_locals(x):
    xs = [x * 1.0, x * 2.0]
    ys = [x * 3.0]
    zs = xs + ys
    s = upd(zs, x)
    return s + np.sum(xs[0] * ys[0]) + np.sum(xs[1])


def concatenated_in_the_call(x):
    xs = [x * 1.0]
    ys = [x * 2.0]
    r = step(xs + ys, x)
    return r + np.sum(xs[0] * x)


def concatenated_in_a_loop(x):
    xs = [x * 1.0]
    ys = [x * 3.0]
    acc = 0.0
    for k in range(2):
        zs = xs + ys
        if k > 0:
            acc = acc + upd(zs, x)
    return acc


def concatenated_in_a_branch(x):
    xs = [x * 1.0]
    ys = [x * 3.0]
    if x[0] > 0:
        zs = xs + ys
    else:
        zs = ys + xs
    s = upd(zs, x)
    return s + np.sum(xs[0])


def repeated(x):
    xs = [x * 1.0, x * 2.0]
    zs = xs * 1
    s = upd(zs, x)
    return s + np.sum(xs[0]) + np.sum(xs[1])


def copied_with_list(x):
    xs = [x * 1.0, x * 2.0]
    zs = list(xs)
    s = upd(zs, x)
    return s + np.sum(xs[0]) + np.sum(xs[1])


def items_listed(x):
    xs = [x * 1.0]
    ys = [x * 2.0]
    zs = [xs[0], ys[0]]
    s = upd(zs, x)
    return s + np.sum(xs[0]) + np.sum(ys[0])


def held_array(x):
    h = x * 1.0
    state = [h]
    r = step(state, x)
    return r + np.sum(h * x)


def through_a_helper(x):  # the concatenation in a helper the function calls
    return _concatenating([x * 1.0], [x * 3.0], x)


def _concatenating(xs, ys, x):
    zs = list(xs) + ys
    s = upd(zs, x)
    return s + np.sum(xs[0] * ys[0])


@pytest.mark.parametrize("fn", [concatenated_locals, concatenated_in_the_call,
                                concatenated_in_a_loop, concatenated_in_a_branch, repeated,
                                copied_with_list, items_listed, held_array, through_a_helper],
                         ids=lambda f: f.__name__)
def test_a_read_of_the_updated_items_afterwards_is_refused(fn):
    # Python: the helper changed xs's (h's) array; srcgrad's code would not have
    assert_refused_both_modes(fn, UnsupportedSyntaxError, "updates its argument",
                              "after the call", x=X)


def test_list_arguments_concatenated_are_followed_too():
    def entry(x, xs, ys):
        zs = xs + ys
        s = upd(zs, x)
        return s + np.sum(xs[0] * ys[0])

    with pytest.raises(UnsupportedSyntaxError) as info:
        srcgrad.grad(entry)(X, [X * 2.0], [X * 3.0])
    assert "'xs'" in info.value.message and info.value.lineno


# -- what runs as before ---------------------------------------------------------------

def updated_here(x):  # the function's own updates through the concatenation
    xs = [x * 1.0]
    ys = [x * 3.0]
    zs = xs + ys
    for i in range(2):
        for p in zs:
            p *= x
        zs[i] *= x
    return np.sum(xs[0] * ys[0])


def nothing_read_afterwards(x):
    xs = [x * 1.0, x * 2.0]
    ys = [x * 3.0]
    zs = xs + ys
    return upd(zs, x)


def arithmetic_of_arrays(x):  # u + du of arrays: a new array, not a list of both
    u = x * 1.0
    du = np.zeros_like(x)
    total = 0.0
    for _ in range(2):
        du = _fill(du, u)
        u = u + du
        total = total + np.sum(u * x)
    return total


def _fill(out, u):
    out[0] = 0.5 * u[1]
    out[1:] = np.tanh(u[:-1])
    return out


@pytest.mark.parametrize("fn", [updated_here, nothing_read_afterwards, arithmetic_of_arrays],
                         ids=lambda f: f.__name__)
def test_the_programs_without_such_a_read_differentiate(fn):
    check_every_policy(fn, [X])
