"""A global read by any function the differentiated one calls is watched.

``g`` calls ``helpers_module.smooth``, which reads ``helpers_module.SCALE``:
rebinding ``SCALE`` (or ``helpers_module.smooth`` itself) after the gradient
was made must regenerate the code, as rebinding one of ``g``'s own globals
does (found by review: the gradient object kept the old value, silently).  The
remembered short call path notices it as well as the first call does."""

from __future__ import annotations

import called_arrays
import helpers_module
import numpy as np
import pytest
from called_arrays import weighted
from numeric import assert_bit_identical, assert_close, jvp_fd, numeric_grad, pure

import srcgrad
from srcgrad import AliasedUpdateError
from srcgrad.rules.registry import GENERATION

X = np.array([0.3, 0.7, 1.1])
K = 2.0


def calls_other_module(x):
    return np.sum(helpers_module.smooth(x) ** 2)


def scaled(v):  # a helper of this module reading this module's global
    return np.sin(v) * K


def calls_same_module(x):
    return np.sum(scaled(x) ** 2)


def middle(v):  # a helper calling a helper of another module
    return helpers_module.smooth(v) * 2.0


def calls_through_a_helper(x):
    return np.sum(middle(x) ** 2)


SOFTPLUS = helpers_module.make_softplus(3.0)  # a closure reading helpers_module.SCALE


def calls_a_closure_of_another_module(x):
    return np.sum(SOFTPLUS(x))


def _agree(made, fn):
    """The remembered path (called twice) and a fresh look both give fn's value."""
    for _ in range(2):
        assert_bit_identical(made(X)[0], fn(X))


def test_a_global_of_another_module_rebound(monkeypatch):
    for fn in (calls_other_module, calls_through_a_helper, calls_a_closure_of_another_module):
        made = srcgrad.value_and_grad(fn)
        _agree(made, fn)
        monkeypatch.setattr(helpers_module, "SCALE", 0.25)
        _agree(made, fn)
        value, tangent = srcgrad.jvp(fn, (X,), (np.ones(3),))
        assert_bit_identical(value, fn(X))
        monkeypatch.undo()
        _agree(made, fn)


def test_a_function_of_another_module_rebound(monkeypatch):
    made = srcgrad.value_and_grad(calls_other_module)
    _agree(made, calls_other_module)
    monkeypatch.setattr(helpers_module, "smooth", lambda v: v * 2.0)
    _agree(made, calls_other_module)
    assert list(made(X)[1]) == list(8.0 * X)


def test_a_global_read_by_a_helper_of_this_module_rebound(monkeypatch):
    made = srcgrad.value_and_grad(calls_same_module)
    _agree(made, calls_same_module)
    monkeypatch.setitem(globals(), "K", 3.0)
    _agree(made, calls_same_module)


def test_a_plain_function_watches_nothing_more():
    def plain(x):
        return np.sum(np.tanh(x))

    made = srcgrad.grad(plain)
    made(X)
    made(X)
    # its code object and defaults, and the rules' generation: no more per call
    assert {holder for holder, _ in made._watch} == {id(plain), id(GENERATION)}


# -- an argument updated in place that a called helper reads as its global -----------
#
# f(called_arrays.W) with ``x[0] = v; return called_arrays.weighted(x)``: Python's
# helper sees the update through its global W, srcgrad's code works on a copy of x
# (review 5: 17.0 for 29.0, silently, where the helper lived in another module or
# read the array through its closure; the same-module case was refused).  Now
# refused where it runs, located at the update, naming the array; the valid
# neighbours (another array passed, the helper called before the update) run.

TABLE = np.array([0.5, -1.0, 2.0])
READER = called_arrays.make_reader(TABLE)  # reads TABLE through its closure


def updates_then_calls(x):
    x[0] = x[1] * 2.0
    return called_arrays.weighted(x)


def updates_then_calls_imported(x):
    x[0] = x[1] * 2.0
    return weighted(x)


def updates_then_calls_deep(x):  # five calls down to the reader of W
    x[0] = x[1] * 2.0
    return called_arrays.lvl5(x) + 1.0


def adds_then_calls(x):  # x += v: the guard where the update runs
    x += 1.0
    return called_arrays.weighted(x)


def updates_then_reads_attribute(x):  # the module's array read by this function
    x[0] = x[1] * 2.0
    return np.sum(x * called_arrays.W)


def updates_then_calls_closure(x):
    x[0] = x[1] * 2.0
    return READER(x)


def updates_in_a_loop(x):
    s = 0.0
    for _ in range(2):
        s = s + called_arrays.weighted(x)
        x[2] = x[0] * 0.5
    return s


def _helper_reading(v):  # a helper of this module passing on to the other module's
    v[1] = v[2] * 3.0
    return called_arrays.lvl2(v)


def calls_a_helper_that_updates(x):
    return _helper_reading(x * 1.0) + called_arrays.weighted(x)


def calls_before_update(x):
    s = called_arrays.weighted(x)
    x[0] = x[1] * 2.0
    return s + np.sum(x)


@pytest.mark.parametrize("fn, array, word", [
    (updates_then_calls, lambda: called_arrays.W, "called_arrays.W"),
    (updates_then_calls_imported, lambda: called_arrays.W, "W"),
    (updates_then_calls_deep, lambda: called_arrays.W, "W"),
    (adds_then_calls, lambda: called_arrays.W, "W"),
    (updates_then_reads_attribute, lambda: called_arrays.W, "called_arrays.W"),
    (updates_then_calls_closure, lambda: TABLE, "reader.table"),
    (updates_then_calls_closure, lambda: TABLE[:], "reader.table"),
    (updates_in_a_loop, lambda: called_arrays.W, "W"),
], ids=lambda v: getattr(v, "__name__", "")[:40])
def test_an_argument_a_called_helper_reads_as_its_global_is_refused(fn, array, word):
    keep = (called_arrays.W.copy(), TABLE.copy())
    for run in (lambda: srcgrad.value_and_grad(fn)(array()),
                lambda: srcgrad.jvp(fn, (array(),), (np.ones(3),))):
        with pytest.raises(AliasedUpdateError) as info:
            run()
        err = info.value
        assert err.filename == __file__ and err.lineno > fn.__code__.co_firstlineno, err
        assert word in err.message and "copy" in err.message, err.message
        np.testing.assert_array_equal(called_arrays.W, keep[0])
        np.testing.assert_array_equal(TABLE, keep[1])


@pytest.mark.parametrize("policy", ["save", "recompute", "sqrt", ("revolve", 2)], ids=str)
@pytest.mark.parametrize("fn", [
    updates_then_calls, updates_then_calls_imported, updates_then_calls_deep, adds_then_calls,
    updates_then_reads_attribute, updates_then_calls_closure, updates_in_a_loop,
    calls_before_update], ids=lambda f: f.__name__)
def test_another_array_passed_runs(fn, policy):
    x = np.array([0.4, -0.9, 1.3])
    expected = fn(x.copy())
    given = x.copy()
    value, grad = srcgrad.value_and_grad(fn, policy=policy)(given)
    assert_bit_identical(value, expected)
    np.testing.assert_array_equal(given, x)
    assert_close(grad, numeric_grad(pure(fn), [x], 0), what=f"{fn.__name__} gradient")
    direction = np.linspace(0.5, 1.5, 3)
    value, tangent = srcgrad.jvp(fn, (given,), (direction,))
    assert_bit_identical(value, expected)
    assert_close(tangent, jvp_fd(pure(fn), [x], [0], [direction]),
                 what=f"{fn.__name__} tangent")


def test_the_helper_called_before_the_update_runs_on_the_global_itself():
    keep = called_arrays.W.copy()
    try:
        expected = calls_before_update(called_arrays.W)
    finally:
        called_arrays.W[:] = keep
    value = srcgrad.value_and_grad(calls_before_update)(called_arrays.W)[0]
    np.testing.assert_array_equal(called_arrays.W, keep)
    assert_bit_identical(value, expected)


def test_a_helper_updating_a_new_array_then_passing_it_on_runs():
    # _helper_reading(x * 1.0) updates a new array, which no global is
    x = np.array([0.4, -0.9, 1.3])
    assert_bit_identical(srcgrad.value_and_grad(calls_a_helper_that_updates)(x)[0],
                         calls_a_helper_that_updates(x.copy()))
