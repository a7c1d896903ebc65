"""A second name for a container's array, then ``d[k] += v`` more than once.

``snap = state["x"]``, then ``state["x"] += 0.1 * x`` in a loop (or two, three
times in a row): NumPy changes the array in place, so ``snap`` sees every update.
The first update was followed (``snap`` bound to the updated array where it is
one), the next ones refused -- in a loop naming srcgrad's temporary 't5' (the
update's own result, taken for a second name of the old array), in a row naming
'snap' (outside tester t3 #4; list items alike).  Each update now follows the
name the one before it bound.  A list passed in: appending to it changes no
array, and an item updated through the loop's variable is refused in the user's
names (outside tester t2 C1/D1, below)."""

from __future__ import annotations

import numpy as np
import pytest
from numeric import assert_bit_identical, assert_close, jvp_fd, numeric_grad, pure

import srcgrad

POLICIES = ["save", "recompute", "sqrt", ("revolve", 2)]
X = np.array([0.5, -1.0, 0.25])


def dict_in_loop(x):
    state = {"x": x * 1.0}
    snap = state["x"]
    for i in range(3):
        state["x"] += 0.1 * x
    return np.sum(snap * 2) + np.sum(state["x"] * x)


def dict_in_a_row(x):
    state = {"x": x * 1.0}
    snap = state["x"]
    state["x"] += 0.1 * x
    state["x"] *= x
    state["x"] += 0.1 * snap
    return np.sum(snap * 2)


def list_in_loop(x):
    ps = [x * 1.0]
    snap = ps[0]
    for i in range(3):
        ps[0] += 0.1 * x
    return np.sum(snap * ps[0])


def in_a_branch(x):
    d = {"x": x * 1.0, "y": x * 2.0}
    s = d["x"]
    for i in range(3):
        if i > 0:
            d["x"] += d["y"] * x
        d["y"] *= 0.5
    return np.sum(s * d["y"]) + np.sum(s)


def step(d, x):  # in a helper
    s = d["h"]
    for _ in range(2):
        d["h"] *= np.tanh(x)
    return np.sum(s)


def helper_caller(x):
    return step({"h": x * 1.0}, x)


@pytest.mark.parametrize("policy", POLICIES, ids=str)
@pytest.mark.parametrize("fn", [dict_in_loop, dict_in_a_row, list_in_loop, in_a_branch,
                                helper_caller], ids=lambda f: f.__name__)
def test_a_second_name_sees_every_item_update(fn, policy):
    expected = pure(fn)(X)
    given = X.copy()
    value, grad = srcgrad.value_and_grad(fn, policy=policy)(given)
    assert_bit_identical(value, expected)
    assert_close(grad, numeric_grad(pure(fn), [X], 0), what=f"{fn.__name__} gradient")
    np.testing.assert_array_equal(given, X)
    direction = np.linspace(0.5, 1.5, X.size)
    value, tangent = srcgrad.jvp(fn, (X.copy(),), (direction,))
    assert_bit_identical(value, expected)
    assert_close(tangent, jvp_fd(pure(fn), [X], [0], [direction]),
                 what=f"{fn.__name__} tangent")


def test_autograd_agrees_with_the_loop():
    autograd = pytest.importorskip("autograd")
    anp = pytest.importorskip("autograd.numpy")

    def plain(x):  # dict_in_loop without updates in place: snap is the final array
        final = x * 1.0 + 0.30000000000000004 * x
        return anp.sum(final * 2) + anp.sum(final * x)

    assert_close(srcgrad.grad(dict_in_loop)(X.copy()), autograd.grad(plain)(X),
                 what="autograd")


# -- a list passed as an argument (outside tester t2 C1/D1) ---------------------------
#
# ws[0][0, 0] = x[0]; ws.append(np.eye(3)): refused, "'ws' is updated in place while
# 'x' shares its memory" -- ws holds an array that took a value of x's, and the append
# was taken to change what ws holds.  Appending changes the list alone (no array has an
# append).  for w in ws: w *= 0.5 with ws passed in stays refused, now in the user's
# names and with advice that works (the message named srcgrad's 't1' and 'sequence(ws)').

def set_and_append(ws, x):
    ws[0][0, 0] = x[0]
    ws.append(np.eye(3))
    h = x
    for w in ws:
        h = np.sin(w @ h)
    return np.sum(h)


W = np.random.default_rng(0).normal(size=(3, 3))


@pytest.mark.parametrize("policy", POLICIES, ids=str)
def test_appending_to_a_list_argument_changes_no_array(policy):
    def with_x(x):
        return set_and_append([W.copy()], x)

    expected = set_and_append([W.copy()], X.copy())
    given = [W.copy()]
    value, grad = srcgrad.value_and_grad(set_and_append, wrt=1, policy=policy)(given, X.copy())
    assert_bit_identical(value, expected)
    assert_close(grad, numeric_grad(with_x, [X], 0), what="gradient")
    assert len(given) == 1
    np.testing.assert_array_equal(given[0], W)  # the caller's list and array untouched
    direction = np.linspace(0.5, 1.5, X.size)
    value, tangent = srcgrad.jvp(set_and_append, wrt=1)([W.copy()], X.copy(), direction)
    assert_bit_identical(value, expected)
    assert_close(tangent, jvp_fd(with_x, [X], [0], [direction]), what="tangent")


def scale_layers(ws, x):
    for w in ws:
        w *= 0.5
    return np.sum(ws[0] @ x)


def scale_layers_by_index(ws, x):  # what the refusal advises
    for i in range(len(ws)):
        ws[i] *= 0.5
    return np.sum(ws[0] @ x)


def test_an_item_of_a_list_argument_updated_through_the_loop_variable():
    # refused until the generated code worked on its own copy of such an argument
    # (normalize/held_items.py; tests/e2e/test_argument_items_updated_by_name.py)
    for fn in (scale_layers, scale_layers_by_index):
        given = [W.copy()]
        value, grad = srcgrad.value_and_grad(fn, wrt=1)(given, X.copy())
        assert_bit_identical(value, scale_layers([W.copy()], X.copy()))
        assert_close(grad, numeric_grad(lambda x: scale_layers([W.copy()], x), [X], 0),
                     what="gradient")
        np.testing.assert_array_equal(given[0], W)
