"""An argument updated in place whose memory the function can also reach by
another path than the other arguments (review 4, H13 and H14).

srcgrad's code works on a copy of an argument it updates in place (it never
changes the caller's arrays).  Python's update shows wherever else that memory
is reached: another item of the same list, tuple or dict argument (``f([w,
w])``, tied weights; ``f([y[:2], y[1:]])``), or a global or closure array the
function reads (``f(W)`` where ``f`` reads ``W``).  Those gave another value
and gradient than Python's, silently; they are refused at run time with a
located ``AliasedUpdateError`` naming both.  Their valid neighbours -- distinct
arrays, a global that is only read and is not the argument, a number, a read
only before the update -- run: value bit for bit the function's own, gradient
against central differences, tangent against differences.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from numeric import assert_bit_identical

import srcgrad
from srcgrad import AliasedUpdateError

Y = np.array([0.7, -1.3, 0.4])
W = np.array([0.3, 1.1, -0.6])
WS = [np.array([0.2, -0.4, 0.9]), np.array([1.5, 0.1, -0.2])]


def _copied(ps):
    if isinstance(ps, dict):
        return {k: v.copy() for k, v in ps.items()}
    return [p.copy() for p in ps]


def _items(ps):
    return list(ps.items()) if isinstance(ps, dict) else list(enumerate(ps))


def _fd(fn, ps, eps=1e-6):
    """Central differences of fn at the list or dict ps, item by item."""
    grads = {}
    for key, item in _items(ps):
        g = np.zeros_like(item)
        for i in np.ndindex(item.shape):
            up, down = _copied(ps), _copied(ps)
            up[key][i] += eps
            down[key][i] -= eps
            g[i] = (fn(up) - fn(down)) / (2 * eps)
        grads[key] = g
    return grads


def _check_container(fn, ps):
    """Value bit for bit, gradient and tangent against differences; the caller's
    arrays unchanged."""
    before = _copied(ps)
    value, grad = srcgrad.value_and_grad(fn)(ps)
    assert_bit_identical(value, fn(_copied(ps)), fn.__name__)
    expected = _fd(fn, ps)
    for key, item in _items(ps):
        np.testing.assert_allclose(grad[key], expected[key], rtol=1e-6, atol=1e-8)
        np.testing.assert_array_equal(item, before[key])
    tangents = type(ps)((k, np.linspace(0.5, -0.5, v.size)) for k, v in _items(ps)) \
        if isinstance(ps, dict) else [np.linspace(0.5, -0.5, v.size) for v in ps]
    tangent_value, tangent = srcgrad.jvp(fn, (ps,), (tangents,))
    assert_bit_identical(tangent_value, fn(_copied(ps)), fn.__name__)
    expected_tangent = sum(np.sum(expected[k] * t) for k, t in _items(tangents))
    np.testing.assert_allclose(tangent, expected_tangent, rtol=1e-6, atol=1e-8)


def _check_array(fn, x):
    before = x.copy()
    value, grad = srcgrad.value_and_grad(fn)(x)
    assert_bit_identical(value, fn(x.copy()), fn.__name__)
    expected = _fd(lambda ps: fn(ps[0]), [x])[0]
    np.testing.assert_allclose(grad, expected, rtol=1e-6, atol=1e-8)
    np.testing.assert_array_equal(x, before)
    direction = np.linspace(0.5, -0.5, x.size)
    tangent_value, tangent = srcgrad.jvp(fn, (x,), (direction,))
    assert_bit_identical(tangent_value, fn(x.copy()), fn.__name__)
    np.testing.assert_allclose(tangent, np.sum(expected * direction), rtol=1e-6, atol=1e-8)


def _refused(fn, args, line_of, word):
    """grad and jvp both raise a located AliasedUpdateError naming ``word``."""
    line = fn.__code__.co_firstlineno + line_of
    for run in (lambda: srcgrad.value_and_grad(fn)(*args),
                lambda: srcgrad.jvp(fn, args, tuple(
                    [np.ones_like(v) for v in a] if isinstance(a, list) else
                    {k: np.ones_like(v) for k, v in a.items()} if isinstance(a, dict)
                    else np.ones_like(a) for a in args))):
        with pytest.raises(AliasedUpdateError) as info:
            run()
        message = str(info.value)
        assert word in message and "copy" in message, message
        assert f"line {line}" in message, message


# -- H13: items of one list, tuple or dict argument --------------------------------

def unpacked_update(ps):
    a, b = ps
    a[0] = a[1] * 3.0
    return np.sum(a * b)


def indexed_update_in_a_loop(ps):
    for i in range(2):
        ps[0][i] = ps[0][i] * 2.0 + ps[1][i]
    return np.sum(ps[1] * ps[1])


def dict_update_in_a_branch(d):
    if d["a"][0] > -5.0:
        d["a"][1] = np.sin(d["a"][2])
    return np.sum(d["a"] * d["b"])


def augmented_item(ps):
    a, b = ps
    a += 1.0
    return np.sum(a * b)


def helper_updating(ps):
    a = ps[0]
    a[2] = a[0] * a[1]
    return np.sum(ps[1] ** 2)


def through_a_helper(ps):
    return helper_updating(ps) * 2.0


def loop_over_items(ps):
    s = 0.0
    for p in ps:  # the next iteration's p is the other item: Python shows it the update
        p[0] = p[0] * 2.0 + 1.0
        s = s + np.sum(p)
    return s


def read_only_before(ps):
    a, b = ps
    s = np.sum(b * b)
    a[0] = a[1] * 3.0
    return s + np.sum(a)


@pytest.mark.parametrize("fn, make, line_of", [
    (unpacked_update, lambda z: [z, z], 2),
    (unpacked_update, lambda z: (z, z), 2),
    (indexed_update_in_a_loop, lambda z: [z, z], 2),
    (indexed_update_in_a_loop, lambda z: [z[:2], z[1:]], 2),
    (dict_update_in_a_branch, lambda z: {"a": z, "b": z}, 2),
    (augmented_item, lambda z: [z, z], 2),
    (augmented_item, lambda z: [z[:2], z[1:]], 2),
    (loop_over_items, lambda z: [z, z], 3),
])
def test_items_sharing_memory_are_refused(fn, make, line_of):
    z = Y.copy()
    _refused(fn, (make(z),), line_of, "ps" if fn is not dict_update_in_a_branch else "d")
    np.testing.assert_array_equal(z, Y)


def test_items_sharing_memory_through_a_helper_are_refused():
    z = Y.copy()
    with pytest.raises(AliasedUpdateError) as info:
        srcgrad.value_and_grad(through_a_helper)([z, z])
    # located at the call: the caller copies the list and its arrays, which the
    # helper updates, so it checks them apart first (a copy would hide the sharing)
    assert f"line {through_a_helper.__code__.co_firstlineno + 1}" in str(info.value)
    np.testing.assert_array_equal(z, Y)


@pytest.mark.parametrize("fn", [unpacked_update, indexed_update_in_a_loop, augmented_item,
                                through_a_helper, read_only_before, loop_over_items])
def test_distinct_items_run(fn):
    _check_container(fn, [Y.copy(), Y * 0.5 + 0.1])


def test_distinct_dict_items_run():
    _check_container(dict_update_in_a_branch, {"a": Y.copy(), "b": Y * 0.5 + 0.1})


def test_same_item_read_only_before_the_update_runs():
    z = Y.copy()
    value = srcgrad.value_and_grad(read_only_before)([z, z])[0]
    assert_bit_identical(value, read_only_before([Y.copy()] * 2), "read_only_before")
    assert srcgrad.jvp(read_only_before, ([z, z],), ([Y, Y],))[0] \
        == read_only_before([Y.copy()] * 2)
    np.testing.assert_array_equal(z, Y)


def numbers_added(ps):
    a, b = ps
    a += 1.0
    return a * b


def test_numbers_in_a_list_run():
    value, grad = srcgrad.value_and_grad(numbers_added)([0.5, 0.5])
    assert value == numbers_added([0.5, 0.5])
    assert np.allclose(grad, [0.5, 1.5])


# -- H14: the argument is a global or closure array the function reads --------------

def reads_global(x):
    x[0] = x[1] * 3.0
    return np.sum(x * W)


def reads_global_list(x):
    for k in range(2):
        x[k] = x[k] * WS[k][k]
    return np.sum(x) + np.sum(WS[0] * WS[1])


def adds_to_global(x):
    x += 1.0
    return np.sum(x * W)


def element_of_global(x):
    t = x[2]  # a number: t *= v rebinds it, nothing changes in place
    t *= 2.0
    return np.sum(x * W) + t


def reads_global_before(x):
    s = np.sum(W * W)
    x[0] = x[1] * 3.0
    return s + np.sum(x)


def make_closure(v):
    def closure_reader(x):
        if x[0] < 10.0:
            x[1] = np.cos(x[2])
        return np.sum(x * v)
    return closure_reader


@pytest.mark.parametrize("fn, arg, line_of, word", [
    (reads_global, lambda: W, 1, "'W'"),
    (reads_global, lambda: W[:], 1, "'W'"),
    (reads_global_list, lambda: WS[0], 2, "'WS'"),
    (adds_to_global, lambda: W, 1, "'W'"),
])
def test_an_argument_that_is_a_global_is_refused(fn, arg, line_of, word):
    keep = (W.copy(), [w.copy() for w in WS])
    _refused(fn, (arg(),), line_of, word)
    np.testing.assert_array_equal(W, keep[0])
    np.testing.assert_array_equal(WS[0], keep[1][0])


def test_an_argument_that_is_a_closure_value_is_refused():
    v = Y.copy()
    fn = make_closure(v)
    _refused(fn, (v,), 2, "'v'")
    _refused(fn, (v[::-1],), 2, "'v'")
    np.testing.assert_array_equal(v, Y)


@pytest.mark.parametrize("fn", [reads_global, reads_global_list, adds_to_global,
                                element_of_global, reads_global_before,
                                make_closure(Y * 2.0)])
def test_a_global_only_read_runs(fn):
    _check_array(fn, Y.copy())


def test_an_element_of_the_global_itself_runs():
    # t = x[2] is a number: nothing changes in place, W may be the argument
    keep = W.copy()
    value = srcgrad.value_and_grad(element_of_global)(W)[0]
    np.testing.assert_array_equal(W, keep)
    assert_bit_identical(value, element_of_global(W), "element_of_global")
    np.testing.assert_array_equal(W, keep)
    assert srcgrad.jvp(element_of_global, (W,), (np.ones(3),))[0] == value


def test_the_global_read_only_before_the_update_runs():
    keep = W.copy()
    value = srcgrad.value_and_grad(reads_global_before)(W)[0]
    np.testing.assert_array_equal(W, keep)
    expected = reads_global_before(W)
    W[:] = keep
    assert_bit_identical(value, expected, "reads_global_before")


def weighted(x):
    return np.sum(x * W)


def through_a_reading_helper(x):
    x[0] = x[1] * 3.0
    return weighted(x) + weighted(x * 0.5)


def passes_its_argument_on(x):
    return reads_global(x) * 2.0


def test_a_global_read_by_a_called_helper_is_checked():
    keep = W.copy()
    _refused(through_a_reading_helper, (W,), 1, "'W'")
    np.testing.assert_array_equal(W, keep)
    _check_array(through_a_reading_helper, Y.copy())


def test_a_helper_passed_the_global_it_reads_is_refused():
    keep = W.copy()
    for run in (lambda: srcgrad.value_and_grad(passes_its_argument_on)(W),
                lambda: srcgrad.jvp(passes_its_argument_on, (W,), (np.ones(3),))):
        with pytest.raises(AliasedUpdateError) as info:
            run()
        assert "'W'" in str(info.value)
        # at the call: the caller copies x, which the helper updates, and checks it first
        assert f"line {passes_its_argument_on.__code__.co_firstlineno + 1}" in str(info.value)
    np.testing.assert_array_equal(W, keep)
    _check_array(passes_its_argument_on, Y.copy())


@pytest.mark.parametrize("policy", ["save", "recompute", "sqrt", ("revolve", 2)])
def test_every_policy(policy):
    z = Y.copy()
    for fn, args in ((loop_over_items, ([z, z],)), (reads_global, (W,))):
        with pytest.raises(AliasedUpdateError):
            srcgrad.value_and_grad(fn, policy=policy)(*args)
    ps = [Y.copy(), Y * 0.5 + 0.1]
    value, grad = srcgrad.value_and_grad(loop_over_items, policy=policy)(ps)
    assert_bit_identical(value, loop_over_items(_copied(ps)), "loop_over_items")
    expected = _fd(loop_over_items, ps)
    for k in range(2):
        np.testing.assert_allclose(grad[k], expected[k], rtol=1e-6, atol=1e-8)
    value, grad = srcgrad.value_and_grad(reads_global, policy=policy)(Y.copy())
    assert_bit_identical(value, reads_global(Y.copy()), "reads_global")
    np.testing.assert_allclose(grad, _fd(lambda ps: reads_global(ps[0]), [Y])[0],
                               rtol=1e-6, atol=1e-8)


# -- tied items the update does not reach run ---------------------------------------

def tied_weights_bias_updated(ps):
    w1, w2, b = ps
    b[0] = b[1] * 2.0
    return np.sum(np.tanh(w1 * w2)) + np.sum(b * w1)


def tied_weights_bias_indexed(ps):
    ps[2][0] = np.sin(ps[2][1])
    return np.sum(ps[0] * ps[1]) + np.sum(ps[2] * ps[0])


def tied_weights_bias_by_key(d):
    b = d["b"]
    b[1] = b[0] * b[2]
    return np.sum(d["w1"] * d["w2"] * b)


def test_tied_items_the_update_does_not_reach_run():
    w, b = Y.copy(), Y * 0.5 + 0.1
    _check_container(tied_weights_bias_updated, [w, w, b])
    _check_container(tied_weights_bias_indexed, [w, w, b])
    _check_container(tied_weights_bias_by_key, {"w1": w, "w2": w, "b": b})
    # the updated item shared with another is refused still
    for fn, ps in ((tied_weights_bias_updated, [w, b, b]),
                   (tied_weights_bias_indexed, [b[1:], w, b]),
                   (tied_weights_bias_by_key, {"w1": b, "w2": w, "b": b})):
        with pytest.raises(AliasedUpdateError):
            srcgrad.value_and_grad(fn)(ps)


# -- an attribute of another argument object ------------------------------------------

def reads_an_attribute(x, p):
    x[0] = x[1] * 3.0
    return np.sum(x * p.W)


class Holder:
    def __init__(self, w):
        self.W = w


@pytest.mark.parametrize("make", [lambda w: SimpleNamespace(W=w), Holder])
def test_an_attribute_of_another_argument(make):
    w = Y.copy()
    p = make(w)
    for run in (lambda: srcgrad.value_and_grad(reads_an_attribute)(w, p),
                lambda: srcgrad.jvp(reads_an_attribute, (w, p), (np.ones(3), None))):
        with pytest.raises(AliasedUpdateError) as info:
            run()
        assert "'p'" in str(info.value)
    np.testing.assert_array_equal(w, Y)
    q = make(W.copy())
    _check_array(lambda x: reads_an_attribute(x, q), Y.copy())


# -- a helper updates the argument, the function reads the global afterwards ----------

def sets_first(a):
    a[0] = a[1] * 3.0
    return np.sum(a)


def global_read_after_a_helper(x):
    s = 0.0
    if x[2] < 10.0:
        s = sets_first(x)
    return s * np.sum(W)


def test_a_global_read_after_a_helper_updated_the_argument():
    keep = W.copy()
    _refused(global_read_after_a_helper, (W,), 3, "'W'")  # at the call
    np.testing.assert_array_equal(W, keep)
    _check_array(global_read_after_a_helper, Y.copy())
