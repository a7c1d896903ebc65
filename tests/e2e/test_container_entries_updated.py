"""An array held by a dict or list, updated in place through another name for it.

Found by review (findings F28-F30 of session 33), each valid code srcgrad refused:

- F30, the most frequent refusal of the container fuzzer: a helper that updates
  the array it is given, called on a container's entry -- ``apply_bc(state["u"],
  s)`` with ``u[0] = s; u[1:] *= 0.9`` in its body.  The first write was followed
  into ``state``, the second refused (AliasedUpdateError with advice naming
  ``state``, which the helper cannot see, once naming srcgrad's ``u_1``).  Each
  write through the entry is now followed, so ``state["u"]`` -- and another name
  for the entry, ``u0 = state["u"]`` or the array stored, ``state = {"u": u}`` --
  sees them all, as in Python (also ``u *= 0.9; u[0] = s``, the first update
  stored back into ``state`` by the alias check, the second written through it);
- F28: ``np.add.at(S["acc"], idx, v)``, the target an entry of a dict or list, was
  refused where ``np.add.at(acc, idx, v)`` works: it is now the whole write
  ``S["acc"][...] = added_at(S["acc"], idx, v)``, followed like any write into an
  entry;
- F29: ``box = [h]; box[0] *= 3.0`` changes ``h``'s array, and ``h`` read afterwards
  was refused with advice that changed the result: ``h`` is now bound to the
  updated array where it is that very array (checked as the code runs).

Each program: the value bit for bit, the gradient and the tangent against central
differences under every policy (``check_every_policy``), in a loop, a branch, a
helper, two entries, the entry read before and after.  autograd runs none of them
(it has no item assignment): it checks the functional rewrite of three.  What stays
refused -- a view of the entry kept across the update, a helper that returns a
result besides updating an entry -- is refused, located, in the user's names,
with advice that keeps what the program computes (the advice followed works).
Found on the way: an item of a list held by a list, written through a name for
it (``u = L[0][1]; u[0] = v``, or ``bump(L[0][1], s)``), with another name for the
array read afterwards, gave a wrong gradient (the change went unseen); it is
refused, located, now.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest
from numeric import (assert_bit_identical, assert_close, assert_refused_both_modes,
                     check_every_policy, numeric_grad)

import srcgrad
from srcgrad.errors import AliasedUpdateError, UnsupportedSyntaxError

X = np.array([0.3, -0.7, 1.1])
IDX = np.array([0, 2, 2])
POLICIES = ["save", "recompute", "sqrt", ("revolve", 2)]


# -- F30: a helper updating the entry it is given ----------------------------------------

def apply_bc(u, s):
    u[0] = s
    u[1:] *= 0.9


def bump(u, s):  # (the container fuzzer's helper)
    u[0] = u[0] * 0.5 + s
    u[1:] *= 0.9


def helper_on_dict_entry(x):  # the review's repro
    state = {"u": np.sin(x)}
    apply_bc(state["u"], x[1] ** 2)
    return np.sum(state["u"] ** 2)


def helper_on_list_entry(x):
    L = [x * 1.0, np.sin(x)]
    bump(L[1], x[0] ** 2)
    return np.sum(L[1] ** 2) + np.sum(L[0] * x)


def helper_in_a_loop(x):
    state = {"u": np.sin(x)}
    for k in range(3):
        apply_bc(state["u"], x[k] ** 2)
    return np.sum(state["u"] ** 2)


def helper_on_list_entry_in_a_loop(x):
    L = [None, np.sin(x)]
    for k in range(3):
        bump(L[1], np.tanh(x[k]))
    return np.sum(L[1] * x)


def helper_in_a_branch(x):
    state = {"u": np.sin(x)}
    if x[0] > 0:
        apply_bc(state["u"], x[1] ** 2)
    else:
        state["u"] = state["u"] * 2.0
    return np.sum(state["u"] ** 2)


def two_entries(x):
    state = {"u": np.sin(x), "v": np.cos(x)}
    apply_bc(state["u"], x[1] ** 2)
    bump(state["v"], x[2])
    return np.sum(state["u"] * state["v"])


def entry_read_before_and_after(x):
    state = {"u": np.sin(x)}
    before = np.sum(state["u"] * x)
    apply_bc(state["u"], x[1] ** 2)
    return before + np.sum(state["u"] ** 2)


def entry_named_before(x):  # u0 is the entry's array: it sees both writes
    state = {"u": np.sin(x)}
    u0 = state["u"]
    apply_bc(state["u"], x[1] ** 2)
    return np.sum(u0 * x) + np.sum(state["u"])


def array_stored_then_passed(x):  # (the message named srcgrad's 'u_1')
    u = np.sin(x)
    state = {"u": u}
    apply_bc(state["u"], x[1] ** 2)
    return np.sum(u * x)


def scale_then_set(u, s):
    u *= 0.9
    u[0] = s


def scaled_then_written(x):  # u *= 0.9 stored back into state, then written through
    state = {"u": np.sin(x)}
    scale_then_set(state["u"], x[1] ** 2)
    return np.sum(state["u"] ** 2)


def scaled_then_written_named_before(x):
    state = {"u": np.sin(x)}
    u0 = state["u"]
    scale_then_set(state["u"], x[1] ** 2)
    return np.sum(u0 * x)


def scaled_then_written_in_a_loop(x):
    L = [x * 1.0, np.sin(x)]
    for k in range(2):
        scale_then_set(L[1], np.tanh(x[k]))
    return np.sum(L[1] * L[0])


def number_entry_scaled(x):  # u *= 0.9 on a float rebinds u: state["u"] keeps its value
    state = {"u": x[0] * 1.0, "v": np.sin(x)}
    u = state["u"]
    u *= 0.9
    return u * np.sum(state["v"]) + state["u"]


def written_out(x):  # the helper's body as the caller would write it
    state = {"u": np.sin(x)}
    u = state["u"]
    u[0] = x[1] ** 2
    u[1:] *= 0.9
    return np.sum(u ** 2) + np.sum(state["u"])


def written_through_the_entry_in_a_loop(x):  # (refused before, the same cause)
    state = {"u": np.sin(x)}
    for k in range(3):
        state["u"][0] = x[k] ** 2
        state["u"][1:] *= 0.9
    return np.sum(state["u"] ** 2)


def slice_update_seen_by_another_name(x):  # (refused before: u0 = d[k]; d[k][1:] *= c)
    state = {"u": np.sin(x)}
    u0 = state["u"]
    state["u"][1:] *= 0.9
    return np.sum(u0 * x) + np.sum(state["u"])


# -- F28: np.add.at into an entry -------------------------------------------------------

def scatter(acc, idx, v):
    np.add.at(acc, idx, v)


def add_at_dict_entry(x):  # the review's repro
    S = {"acc": np.zeros(3)}
    np.add.at(S["acc"], IDX, np.tanh(x))
    return np.sum(S["acc"] ** 2)


def add_at_list_entry(x):
    L = [None, np.sin(x)]
    np.add.at(L[1], IDX, np.tanh(x) * 0.5)
    return np.sum(L[1] ** 2)


def add_at_in_a_loop(x):
    S = {"acc": np.zeros(3)}
    for k in range(3):
        np.add.at(S["acc"], IDX, np.tanh(x * k))
    return np.sum(S["acc"] ** 2)


def add_at_in_a_branch(x):
    S = {"acc": x * 1.0}
    if x[0] > 0:
        np.add.at(S["acc"], IDX, np.tanh(x))
    return np.sum(S["acc"] ** 2)


def add_at_in_a_helper(x):
    S = {"acc": np.zeros(3)}
    for k in range(2):
        scatter(S["acc"], IDX, np.sin(x + k))
    return np.sum(S["acc"] ** 2)


def add_at_two_entries(x):
    S = {"a": np.zeros(3), "b": x * 1.0}
    np.add.at(S["a"], IDX, np.tanh(x))
    np.subtract.at(S["b"], IDX, x ** 2)
    return np.sum(S["a"] * S["b"])


def add_at_read_before_and_after(x):
    S = {"acc": x * 1.0}
    before = np.sum(S["acc"] ** 2)
    np.add.at(S["acc"], IDX, np.tanh(x))
    return before * np.sum(S["acc"] ** 2)


def multiply_at_seen_by_another_name(x):
    S = {"acc": x * 1.0}
    acc = S["acc"]
    np.multiply.at(S["acc"], IDX, np.tanh(x))
    return np.sum(acc * x)


def add_at_literal_indices(x):
    L = [x * 1.0]
    np.add.at(L[0], [0, 2, 2], np.tanh(x))
    return np.sum(L[0] ** 2)


# -- F29: the update through the list, the read through the other name ------------------

def list_item_updated(x):  # the review's repro
    h = x * 2
    box = [h]
    box[0] *= 3.0
    return np.sum(h ** 2)


def dict_item_updated(x):
    h = np.sin(x)
    d = {"h": h, "g": x * 1.0}
    d["h"] += d["g"] * x
    return np.sum(h ** 2) + np.sum(d["h"])


def appended_item_updated(x):
    h = np.sin(x)
    hist = []
    hist.append(h)
    hist[0] *= x
    return np.sum(h * x)


def item_updated_in_a_loop(x):
    h = x * 2
    box = [h]
    for k in range(3):
        box[0] *= np.tanh(x)
    return np.sum(h ** 2)


def item_updated_in_a_branch(x):
    h = x * 2
    box = [h]
    if x[1] < 0:
        box[0] *= 3.0
    return np.sum(h ** 2)


def scale_first(box, c):
    box[0] *= c


def item_updated_by_a_helper(x):
    h = x * 2
    box = [h, x * 1.0]
    for k in range(2):
        scale_first(box, x[k])
    return np.sum(h ** 2) + np.sum(box[1])


def number_item_updated(x):  # box[0] *= 3.0 on a float rebinds box[0]: h keeps its value
    h = x[0] * 2.0
    box = [h, x * 1.0]
    box[0] *= 3.0
    return h * x[1] + box[0] * np.sum(box[1])


def item_of_a_nested_list_updated(x):  # (refused, located, before)
    h = x * 2.0
    d = {'h': [x * 1.0, h]}
    d['h'][1] *= 3.0
    return np.sum(h * x)


def two_items_updated(x):
    h = x * 2
    g = np.sin(x)
    box = [h, g]
    box[0] *= 3.0
    box[1] += h
    return np.sum(h ** 2) + np.sum(g * x)


PROGRAMS = [
    helper_on_dict_entry, helper_on_list_entry, helper_in_a_loop,
    helper_on_list_entry_in_a_loop, helper_in_a_branch, two_entries,
    entry_read_before_and_after, entry_named_before, array_stored_then_passed,
    scaled_then_written, scaled_then_written_named_before, scaled_then_written_in_a_loop,
    number_entry_scaled, written_out,
    written_through_the_entry_in_a_loop, slice_update_seen_by_another_name,
    add_at_dict_entry, add_at_list_entry, add_at_in_a_loop, add_at_in_a_branch,
    add_at_in_a_helper, add_at_two_entries, add_at_read_before_and_after,
    multiply_at_seen_by_another_name, add_at_literal_indices,
    list_item_updated, dict_item_updated, appended_item_updated, item_updated_in_a_loop,
    item_updated_in_a_branch, item_updated_by_a_helper, number_item_updated,
    item_of_a_nested_list_updated, two_items_updated,
]


@pytest.mark.parametrize("sign", [1.0, -1.0], ids=["x", "-x"])  # (both branches taken)
@pytest.mark.parametrize("fn", PROGRAMS, ids=lambda f: f.__name__)
def test_every_write_is_seen_through_the_container(fn, sign):
    check_every_policy(fn, (sign * X,), 0)


def test_the_review_gradients():
    # f(x) = sum(u ** 2), u = [x1 ** 2, 0.9 sin x1, 0.9 sin x2]; h = 6x: 72x
    x = X.copy()
    expected = np.array([0.0, 4 * x[1] ** 3 + 0.81 * np.sin(2 * x[1]), 0.81 * np.sin(2 * x[2])])
    assert_close(srcgrad.grad(helper_on_dict_entry)(x), expected, what="F30")
    assert_close(srcgrad.grad(list_item_updated)(x), 72 * x, what="F29")


# -- a container passed in: the caller's is left alone -----------------------------------

def entry_of_a_dict_argument(x, state):
    apply_bc(state["u"], x[0] ** 2)
    return np.sum(state["u"] * x)


def add_at_into_a_list_argument(x, L):
    np.add.at(L[0], IDX, np.tanh(x))
    return np.sum(L[0] * x)


@pytest.mark.parametrize("policy", POLICIES, ids=str)
@pytest.mark.parametrize("fn, container", [
    (entry_of_a_dict_argument, {"u": np.cos(X)}),
    (add_at_into_a_list_argument, [np.cos(X)]),
], ids=["dict", "list"])
def test_a_container_argument_is_copied(fn, container, policy):
    expected = fn(X.copy(), copy.deepcopy(container))
    given = copy.deepcopy(container)
    value, grad = srcgrad.value_and_grad(fn, policy=policy)(X.copy(), given)
    assert_bit_identical(value, expected)
    assert_close(grad, numeric_grad(lambda x: fn(x, copy.deepcopy(container)), [X], 0),
                 what=f"{fn.__name__} gradient")
    for kept, was in zip(*(c.values() if isinstance(c, dict) else c
                           for c in (given, container))):
        np.testing.assert_array_equal(kept, was)


# -- autograd, on the functional rewrite --------------------------------------------------

def test_autograd_agrees():
    autograd = pytest.importorskip("autograd")
    anp = pytest.importorskip("autograd.numpy")

    def bc(x):  # helper_on_dict_entry without the writes in place
        u = anp.sin(x)
        return anp.sum(anp.concatenate([anp.array([x[1] ** 2]), u[1:] * 0.9]) ** 2)

    def added(x):  # add_at_dict_entry: the scatter as a sum of rows
        ones = np.zeros((3, 3))
        ones[IDX, np.arange(3)] = 1.0
        return anp.sum(anp.dot(ones, anp.tanh(x)) ** 2)

    def scaled(x):  # list_item_updated: h is the scaled array
        return anp.sum((x * 2 * 3.0) ** 2)

    for fn, plain in ((helper_on_dict_entry, bc), (add_at_dict_entry, added),
                      (list_item_updated, scaled)):
        assert_close(srcgrad.grad(fn)(X.copy()), autograd.grad(plain)(X.copy()),
                     what=f"{fn.__name__} vs autograd")


# -- what stays refused: located, in the user's names, with advice that keeps the meaning --

def view_of_the_entry_kept(x):  # v sees both writes in Python
    state = {"u": np.sin(x)}
    v = state["u"][1:]
    apply_bc(state["u"], x[1] ** 2)
    return np.sum(v * x[1:]) + np.sum(state["u"])


def view_of_the_entry_taken_after(x):  # the advice followed
    state = {"u": np.sin(x)}
    apply_bc(state["u"], x[1] ** 2)
    v = state["u"][1:]
    return np.sum(v * x[1:]) + np.sum(state["u"])


def view_kept_across_add_at(x):
    S = {"acc": x * 1.0}
    tail = S["acc"][1:]
    np.add.at(S["acc"], IDX, np.tanh(x))
    return np.sum(tail * x[1:])


def view_of_h_held(x):  # box holds a view of h
    h = x * 2
    box = [h[1:]]
    box[0] *= 3.0
    return np.sum(h ** 2)


def view_of_h_held_updated_through_h(x):  # the advice followed
    h = x * 2
    h[1:] *= 3.0
    box = [h[1:]]
    return np.sum(h ** 2) + np.sum(box[0])


def item_of_a_nested_list(x):  # (a wrong gradient before: h's change went unseen)
    h = x * 2.0
    L = [[x * 1.0, h]]
    bump(L[0][1], x[0])
    return np.sum(h * x)


def item_of_a_nested_list_written_out(x):  # (the same, 0.9 for 0.6 in the gradient)
    h = x * 2.0
    L = [[x * 1.0, h]]
    u = L[0][1]
    u[0] = x[0]
    return np.sum(h * x)


def view_of_an_array_passed(x):  # L holds a view of u: u sees bump's writes
    u = np.sin(x)
    L = [u[1:]]
    bump(L[0], x[0])
    return np.sum(u)


def nested_item_sliced(x):  # (the message named srcgrad's 'part')
    h = x * 2.0
    d = {'h': [x * 1.0, h]}
    d['h'][1][1:] *= 3.0
    return np.sum(h * x) + np.sum(d['h'][1])


def total_of(u, s):  # a helper that returns a result besides updating u: not inlined
    u[0] = s
    u[1:] *= 0.9
    return np.sum(u)


def helper_with_a_result(x):
    state = {"u": np.sin(x)}
    total = total_of(state["u"], x[1] ** 2)
    return total * np.sum(state["u"] ** 2)


@pytest.mark.parametrize("fn, kind, words", [
    (view_of_the_entry_kept, AliasedUpdateError, ["'v'", "take 'v' from 'state['u']' after"]),
    (view_kept_across_add_at, AliasedUpdateError, ["'tail'", "take 'tail' from 'S['acc']'"]),
    (view_of_h_held, AliasedUpdateError, ["'box[0] *= ...'", "update 'h' itself",
                                          "store into 'box' after"]),
    (view_of_an_array_passed, AliasedUpdateError, ["'L[0][...] = ...'",
                                                   "write into 'u' itself"]),
    (nested_item_sliced, AliasedUpdateError, ["'d['h'][1][...] = ...'"]),
    (item_of_a_nested_list, AliasedUpdateError, ["'h'"]),
    (item_of_a_nested_list_written_out, AliasedUpdateError, ["'h'"]),
    (helper_with_a_result, UnsupportedSyntaxError, ["total_of()", "'state'",
                                                    "total_of(state['u'].copy(), x[1] ** 2)"]),
], ids=lambda v: getattr(v, "__name__", ""))
def test_what_stays_refused_is_located_in_the_users_names(fn, kind, words):
    assert_refused_both_modes(fn, kind, *words, x=X)
    with pytest.raises(kind) as info:
        srcgrad.grad(fn)(X.copy())
    assert "part" not in info.value.message and "u_1" not in info.value.message


@pytest.mark.parametrize("fn", [view_of_the_entry_taken_after, view_of_h_held_updated_through_h],
                         ids=lambda f: f.__name__)
def test_the_advice_given_works(fn):
    check_every_policy(fn, (X,), 0)
