"""In-place updates seen through an alias (analysis/aliasing.py, analysis/refresh.py):
an update that another name, a view, a list of views or an attribute sees is
either followed (the alias is written back or bound again) or refused at the
update with a clear error; updates no alias sees are accepted."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import srcgrad

from numeric import assert_close, numeric_grad

RNG = np.random.default_rng(7)


# -- in-place updates seen through an alias ---------------------------------------------
#
# Each of these was compiled without complaint and gave a silently wrong gradient:
# the alias read after the update sees the new values, which the dataflow srcgrad
# differentiates does not.  They must be refused at the update.

def update_through_a_view_read_via_its_base(x):
    """Not refused any more: the view is written back into its base (refresh.py)."""
    v = x * 1.0
    r = v[1:]
    r[0] = 5.0
    return np.sum(v * v)


def update_through_a_second_name_read_via_the_first(x):
    """Not refused any more: ``v`` is bound to the updated array again (refresh.py)."""
    v = x * 1.0
    w = v
    w[0] = 5.0
    return np.sum(v * v)


def view_remade_only_in_a_branch(x):
    v = x * 1.0
    total = 0.0
    r = v[1:]
    for i in range(3):
        if i == 0:
            r = v[1:]
        total = total + np.sum(r * r)
        v[1] = 2.0  # <- refused
    return total


def views_held_in_a_list(x):
    v = x * 1.0
    s = 0.0
    for r in [v[1:], v[:2]]:
        s = s + np.sum(r * r)
        v[1] = 2.0  # <- refused
    return s


def _same(a):
    return a


def update_of_what_a_function_returned(x):
    v = x * 1.0
    w = _same(v)
    w[0] = 5.0  # <- refused
    return np.sum(v * v)


@pytest.mark.parametrize("fn", [update_through_a_view_read_via_its_base,
                                update_through_a_second_name_read_via_the_first])
def test_an_update_seen_through_another_name_is_followed(fn):
    x = RNG.standard_normal(3)
    value, g = srcgrad.value_and_grad(fn, check=True)(x)
    assert value == fn(x.copy())
    expected = [0.0, 2 * x[1], 2 * x[2]] if fn is update_through_a_second_name_read_via_the_first \
        else [2 * x[0], 0.0, 2 * x[2]]
    np.testing.assert_allclose(g, expected)


@pytest.mark.parametrize("fn", [view_remade_only_in_a_branch, views_held_in_a_list,
                                update_of_what_a_function_returned], ids=lambda f: f.__name__)
def test_an_update_read_through_an_alias_is_refused(fn):
    lines, first = inspect.getsourcelines(fn)
    marked = first + next(i for i, line in enumerate(lines) if "# <- refused" in line)
    with pytest.raises(srcgrad.UnsupportedSyntaxError, match="shares its memory") as info:
        srcgrad.grad(fn)(RNG.standard_normal(3))
    assert info.value.lineno == marked


def _fresh(a):
    return a * 2.0


def update_of_a_fresh_result_and_of_a_stacked_array(a, b):
    a = a * 1.0
    s = np.stack([a, b])  # holds copies: a and b stay independent
    w = _fresh(a)         # a new array: updating it changes nothing else
    w[0] = 5.0
    a[0] = 1.0
    return np.sum(s) + np.sum(b * a) + np.sum(w * b)


def test_updates_that_no_alias_sees_are_accepted():
    a, b = RNG.standard_normal(3), RNG.standard_normal(3)
    g = srcgrad.grad(update_of_a_fresh_result_and_of_a_stacked_array, wrt=(0, 1))(a, b)
    numeric = [numeric_grad(update_of_a_fresh_result_and_of_a_stacked_array, (a, b), i)
               for i in (0, 1)]
    assert_close(g[0], numeric[0], rtol=1e-6, atol=1e-8)
    assert_close(g[1], numeric[1], rtol=1e-6, atol=1e-8)


def _same_twice(a):
    b = a + 2.0
    return b, b


def update_of_one_of_two_names_for_one_array(x):
    v, w = _same_twice(x)
    v += w  # <- refused
    return np.sum(v * w)


def test_an_update_of_a_tuple_part_shared_with_another_is_refused():
    fn = update_of_one_of_two_names_for_one_array
    lines, first = inspect.getsourcelines(fn)
    marked = first + next(i for i, line in enumerate(lines) if "# <- refused" in line)
    with pytest.raises(srcgrad.UnsupportedSyntaxError, match="shares its memory") as info:
        srcgrad.grad(fn)(RNG.standard_normal(3))
    assert info.value.lineno == marked


class _Holder:
    def __init__(self, W):
        self.W = W


def update_of_an_attribute_read_again(p, x):
    w = p.W
    w[0] = x[0] * 3.0  # <- refused
    return np.sum(p.W * x)


def update_of_an_attribute_not_read_again(p, x):
    w = p.W
    w[0] = x[0] * 3.0
    return np.sum(w * x)


def test_an_attribute_updated_and_read_again_is_refused():
    fn = update_of_an_attribute_read_again
    lines, first = inspect.getsourcelines(fn)
    marked = first + next(i for i, line in enumerate(lines) if "# <- refused" in line)
    with pytest.raises(srcgrad.AliasedUpdateError) as info:
        srcgrad.grad(fn, wrt=1)(_Holder(np.ones(3)), RNG.standard_normal(3))
    assert info.value.lineno == marked


def test_an_updated_attribute_is_copied_and_the_callers_object_left_alone():
    p, x = _Holder(np.ones(3)), RNG.standard_normal(3)
    gp, gx = srcgrad.grad(update_of_an_attribute_not_read_again, wrt=(0, 1))(p, x)
    assert np.array_equal(p.W, np.ones(3))
    assert_close(gp.W, np.concatenate([[0.0], x[1:]]), rtol=1e-12, atol=0)
    assert_close(gx, numeric_grad(lambda x: update_of_an_attribute_not_read_again(
        _Holder(np.ones(3)), x), (x,), 0), rtol=1e-6, atol=1e-8)
    _, t = srcgrad.jvp(update_of_an_attribute_not_read_again, (p, x), (None, np.ones(3)))
    assert np.array_equal(p.W, np.ones(3))
    assert t == pytest.approx(float(np.sum(gx)), rel=1e-10)


# -- a list made afresh in every iteration is not the one an earlier iteration kept ----

def comprehension_in_a_loop_read_after_it(x, y):
    ps = [x, y]
    for k in range(3):
        hist = [np.tanh(v) * x for v in ps]   # t = []; t.append(...); hist = t
    for h in hist:
        y = y + h
    return np.sum(y)


def list_rebuilt_by_appends_in_a_loop(x, y):
    kept = []
    for k in range(3):
        acc = []
        for v in (x, y * k):
            acc.append(np.sin(v))
        kept = acc
    return np.sum(kept[0] * kept[1])


@pytest.mark.parametrize("fn", [comprehension_in_a_loop_read_after_it,
                                list_rebuilt_by_appends_in_a_loop])
def test_a_list_rebuilt_each_iteration_shares_nothing_with_the_last(fn):
    """Was refused ('... is updated in place while hist shares its memory', with no
    line): the copy ``hist = t`` made last iteration was taken to share the new
    list that ``t = []`` binds before the appends."""
    x, y = RNG.normal(size=3), RNG.normal(size=3)
    value, grads = srcgrad.value_and_grad(fn, wrt=(0, 1))(x, y)
    assert value == fn(x, y)
    for i, g in enumerate(grads):
        assert_close(g, numeric_grad(fn, (x, y), i))


def list_rebound_after_its_alias_is_taken(x):
    s = 0.0
    t = [x]
    for i in range(3):
        hist = t
        t = []
        t.append(x * i)
        s = s + sum(hist)
    return s


def list_swapped_after_its_alias_is_taken(x):
    s = 0.0
    t = [x]
    u = [x * x]
    for i in range(3):
        hist = t
        t, u = u, t          # u now holds hist's list: u.append changes hist
        u.append(x * i)
        s = s + sum(hist)
    return s


def test_an_alias_broken_before_the_update_is_no_alias():
    """Was refused: ``hist = t; t = []; t.append(v)`` -- t is a new list when it
    is appended to.  The swap that hands the old list on to ``u`` stays refused
    (accepting it, the first version of this fix gave 3.4 where differences give
    6.4)."""
    x = 0.7
    value, g = srcgrad.value_and_grad(list_rebound_after_its_alias_is_taken)(x)
    assert value == list_rebound_after_its_alias_is_taken(x)
    assert_close(g, numeric_grad(list_rebound_after_its_alias_is_taken, (x,), 0))
    with pytest.raises(srcgrad.AliasedUpdateError):
        srcgrad.grad(list_swapped_after_its_alias_is_taken)(x)
