"""optimize/owned_lists.py and runtime/owned_lists.py: a list's cotangent
popped in place where no other name can hold it.

Each read that could hand the list to another name keeps ``drop_last`` (a
copy per step), one test each, on adjoint sweeps written by hand; the
runtime helper copies a list it was handed and pops only its own.  Whole
programs are in tests/e2e/test_append_loop_pops.py.
"""

from __future__ import annotations

import gast
import numpy as np
import pytest

from srcgrad.ir.emit import show_statements
from srcgrad.optimize.owned_lists import pop_in_place
from srcgrad.runtime import ListCotangent, OwnedListCotangent, drop_last, drop_last_in_place

LOOP = ("d_ys = unstack(d_t, ys)\nfor t in reversed(r):\n    d_y = cotangent_at(d_ys, -1)\n"
        "    d_ys = drop_last(d_ys)\n    d_w = d_w + d_y * x[t]\n")


def _run(source: str) -> str:
    return show_statements(pop_in_place(gast.parse(source).body))


def test_a_list_read_by_its_elements_is_popped_in_place():
    assert "d_ys = drop_last_in_place(d_ys)" in _run(LOOP)


def test_its_own_sums_are_fine():
    out = _run(LOOP + "    d_ys = d_ys + getitem_grad(d_t2, ys, -1)\n")
    assert "drop_last_in_place" in out


@pytest.mark.parametrize("read", [
    "d_zs = d_zs + d_ys",                 # another sum may be the list itself
    "d_zs = d_ys",                        # a copy of the name
    "d_st = getitem_grad(d_ys, st, 'k')",  # a container holding it
    "d_a, d_b = f_backward(res, d_ys)",   # a callee's backward
    "d_ys = d_t + d_ys",                  # the right operand: t + ys may be ys
    "d_ys += d_t",                        # list.__iadd__ extends the list
    "check_finite(d_ys) or (lambda: d_ys)",  # a closure
])
def test_any_other_read_keeps_the_copy(read):
    out = _run(LOOP + "    " + read + "\n")
    assert "drop_last_in_place" not in out and "d_ys = drop_last(d_ys)" in out


def test_a_returned_list_keeps_the_copy():
    out = _run(LOOP + "return grad_like(d_ys, ys)\n")
    assert "drop_last_in_place" not in out


def test_another_names_drop_is_not_its_own():
    out = _run(LOOP.replace("d_ys = drop_last(d_ys)", "d_zs = drop_last(d_ys)"))
    assert "drop_last_in_place" not in out


def test_each_name_on_its_own():
    out = _run(LOOP + "    d_zs = drop_last(d_zs)\n    d_q = d_q + d_zs\n")
    assert "d_ys = drop_last_in_place(d_ys)" in out and "d_zs = drop_last(d_zs)" in out


def test_the_helper_copies_what_it_is_handed_then_pops_its_own():
    given = ListCotangent([np.ones(2), 2.0, 3.0])
    first = drop_last_in_place(given)
    assert type(first) is OwnedListCotangent and len(given) == 3
    assert first == drop_last(given)
    assert drop_last_in_place(first) is first and len(first) == 1
    assert first[0] is given[0]  # the same elements: bit for bit the same gradient
    assert drop_last_in_place(0.0) == 0.0


def test_the_sum_of_an_owned_list_is_a_new_one():
    owned = drop_last_in_place(ListCotangent([1.0, 2.0, 3.0]))
    other = ListCotangent([10.0, 20.0])
    total = owned + other
    assert total is not owned and total == [11.0, 22.0]
    assert (owned + 0.0) is owned and (0.0 + other) is other


def test_an_item_read_is_added_in_place():
    out = _run(LOOP + "    d_ys = d_ys + getitem_grad(d_t2, ys, -1)\n")
    assert "d_ys = item_added_in_place(d_ys, d_t2, ys, -1)" in out
    assert "d_ys = drop_last_in_place(d_ys)" in out


def test_an_item_read_of_an_escaping_list_stays_a_sum():
    out = _run(LOOP + "    d_ys = d_ys + getitem_grad(d_t2, ys, -1)\n    d_zs = d_ys\n")
    assert "item_added_in_place" not in out and "d_ys + getitem_grad" in out


@pytest.mark.parametrize("index", [0, -1, 2])
def test_the_item_added_in_place_is_the_sum_bit_for_bit(index):
    from srcgrad.runtime import getitem_grad, item_added_in_place
    items = [np.zeros(2), np.zeros(2), np.zeros(2)]
    for cotangent in ([np.ones(2) * 0.1, 0.0, np.full(2, 0.3)], [0.0, 0.0, 0.0]):
        owned = drop_last_in_place(ListCotangent(cotangent + [9.0]))
        want = ListCotangent(cotangent) + getitem_grad(np.full(2, 0.7), items, index)
        got = item_added_in_place(owned, np.full(2, 0.7), items, index)
        assert got is owned and len(got) == len(want)
        for a, b in zip(got, want):
            assert np.array_equal(a, b) and np.asarray(a).dtype == np.asarray(b).dtype


def test_the_item_added_to_anything_else_is_the_plain_sum():
    from srcgrad.runtime import getitem_grad, item_added_in_place
    items = [1.0, 2.0]
    plain = ListCotangent([0.5, 0.25])  # not owned: a new list, the given one unchanged
    got = item_added_in_place(plain, 1.0, items, 0)
    assert got is not plain and got == [1.5, 0.25] and plain == [0.5, 0.25]
    assert item_added_in_place(0.0, 1.0, items, 1) == getitem_grad(1.0, items, 1)
    owned = drop_last_in_place(ListCotangent([0.5, 0.25, 0.0]))
    assert item_added_in_place(owned, 1.0, (1.0, 2.0), 0) is not owned  # a tuple's
    assert item_added_in_place(owned, [1.0], items, slice(0, 1)) is not owned  # a slice
