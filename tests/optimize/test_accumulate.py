"""optimize/accumulate.py and runtime/accumulate.py: indexing adjoints added in
place into one cotangent buffer.

The pass's soundness conditions ("Sound when" in its docstring), one test
each, on adjoint sweeps written by hand: the buffer is rewritten only when
nothing but the sweep can see it change.  The runtime helper is checked, bit
for bit, against the plain sum it replaces (``acc + getitem_grad(g, a, i)``)
for every kind of index and the dtype rules of ``getitem_grad``.  Whole
programs are in tests/e2e/test_index_accumulation.py.
"""

from __future__ import annotations

import warnings

import gast
import numpy as np
import pytest
from numeric import assert_bit_identical

from srcgrad.ir.emit import show_statements
from srcgrad.optimize.accumulate import accumulate_in_place
from srcgrad.runtime import cotangent_buffer, getitem_grad, scatter_add


def _run(source: str) -> str:
    return show_statements(accumulate_in_place(gast.parse(source).body))


LOOP = "d_X = 0.0\nfor i in reversed(r):\n    d_t = d_s * w\n    d_X = d_X + getitem_grad(d_t, X, i)\n"


def test_a_loop_gets_one_buffer():
    out = _run(LOOP)
    assert out.startswith("d_X = cotangent_buffer(X)\n")
    assert "d_X = scatter_add(d_X, d_t, X, i)  # d_X[i] += d_t, in place" in out


def test_a_copy_in_the_loop_keeps_the_sums():
    out = _run(LOOP + "    d_Y = d_X\n")
    assert "scatter_add" not in out and "cotangent_buffer" not in out


def test_a_read_after_the_loop_is_fine():
    out = _run(LOOP + "d_Z = d_X * 2.0\n")
    assert "scatter_add" in out


def test_a_read_before_the_loop_keeps_the_sums():
    # d_Y may be d_X itself (unbroadcast returns its argument when shapes match)
    out = _run("d_X = 0.0\nd_Y = unbroadcast(d_X, y)\nfor i in reversed(r):\n"
               "    d_X = d_X + getitem_grad(d_t, X, i)\n")
    assert "scatter_add" not in out


def test_a_reset_in_the_loop_keeps_the_sums():
    out = _run(LOOP + "    d_X = 0.0\n")
    assert "scatter_add" not in out


def test_a_zero_start_inside_a_loop_keeps_the_sums():
    out = _run("for j in r:\n    d_X = 0.0\n    for i in r:\n"
               "        d_X = d_X + getitem_grad(d_t, X, i)\n")
    assert "scatter_add" not in out


def test_a_restored_array_keeps_the_sums():
    out = _run(LOOP + "    X = X_tape.pop()\n")
    assert "scatter_add" not in out


def test_two_arrays_keep_the_sums():
    out = _run(LOOP + "    d_X = d_X + getitem_grad(d_t, Y, i)\n")
    assert "scatter_add" not in out


def test_straight_line_sites_are_left_alone():
    out = _run("d_X = 0.0\nd_X = d_X + getitem_grad(d_t, X, 0)\n")
    assert "scatter_add" not in out


def test_a_first_contribution_is_added_to_the_buffer():
    out = _run("d_X = unreduce(d_u, X)\nfor i in reversed(r):\n"
               "    d_X = d_X + getitem_grad(d_t, X, i)\n")
    assert out.startswith("d_X = cotangent_buffer(X)\nd_X = d_X + unreduce(d_u, X)\n"), out
    assert "scatter_add" in out


def test_a_first_indexing_contribution_goes_into_the_buffer_too():
    out = _run("d_X = getitem_grad(d_u, X, 0)\nfor i in reversed(r):\n"
               "    d_X = d_X + getitem_grad(d_t, X, i)\n")
    assert out.startswith("d_X = cotangent_buffer(X)\nd_X = scatter_add(d_X, d_u, X, 0)"), out
    assert out.count("scatter_add") == 2


def test_an_unpacked_result_keeps_the_sums():
    out = _run("d_X, d_w = f_backward(res, d_y)\nfor i in reversed(r):\n"
               "    d_X = d_X + getitem_grad(d_t, X, i)\n")
    assert "scatter_add" not in out


def test_an_element_update_keeps_the_sums():
    out = _run(LOOP + "    d_X[0] = 1.0\n")
    assert "scatter_add" not in out


def test_a_copy_into_the_cotangent_keeps_the_sums():
    out = _run(LOOP + "    d_X = d_Y\n")
    assert "scatter_add" not in out


def test_other_accumulations_and_branches_and_nested_loops():
    out = _run("d_X = 0.0\nfor j in reversed(r):\n    if c:\n"
               "        d_X = d_X + getitem_grad(d_t, X, (j, slice(1, None, None)))\n"
               "    else:\n        d_X = d_X + d_u * X\n    for i in reversed(q):\n"
               "        d_X = d_X + getitem_grad(d_v, X, (j, i))\n")
    assert out.count("scatter_add") == 2
    assert "# d_X[j, 1:] += d_t, in place" in out
    assert "d_X = d_X + d_u * X" in out


# -- the runtime helpers -----------------------------------------------------------------

A = np.arange(24.0).reshape(6, 4) / 7.0
INDICES = [2, -1, np.int64(3), slice(1, 4), slice(None, None, 2), (1, 2), (slice(0, 3), 1),
           (Ellipsis, 0), (None, 2), [0, 3, 3, -1], np.array([5, 5, 5, 0]),
           np.array([[1, 2], [2, 1]]), np.array([True, False, True, True, False, True]),
           A > 1.5, (np.array([0, 0, 1]), np.array([1, 1, 2])), ([1, 1], slice(None))]


def _cotangent(a, index, dtype=np.float64, seed=0):
    shape = np.shape(a[index])
    g = np.random.default_rng(seed).standard_normal(shape)
    return g.astype(dtype) if np.dtype(dtype).kind != "c" else g + 1j * np.flip(g)


@pytest.mark.parametrize("index", INDICES, ids=repr)
@pytest.mark.parametrize("adtype,gdtype", [(np.float64, np.float64), (np.float32, np.float64),
                                           (np.float32, np.float32),
                                           (np.complex128, np.complex128)])
def test_scatter_add_is_the_plain_sum(index, adtype, gdtype):
    a = A.astype(adtype)
    acc = cotangent_buffer(a)
    plain = 0.0
    for seed in range(3):
        g = _cotangent(a, index, gdtype, seed)
        plain = plain + getitem_grad(g, a, index)
        acc = scatter_add(acc, g, a, index)
    assert_bit_identical(acc, plain, repr(index))


def test_scatter_add_updates_in_place():
    acc = cotangent_buffer(A)
    assert scatter_add(acc, np.ones(4), A, 1) is acc
    assert scatter_add(acc, np.ones(4), A, [1, 1]) is acc


def test_a_promoted_buffer_is_updated_in_place():
    a = A.astype(np.float32)
    acc = cotangent_buffer(a) + np.ones(A.shape)  # float64 after a float64 contribution
    plain = acc.copy() + getitem_grad(np.full(4, 0.1), a, 2)
    assert scatter_add(acc, np.full(4, 0.1), a, 2) is acc
    assert_bit_identical(acc, plain)


def test_complex_cotangent_of_a_real_array_takes_the_real_part_as_before():
    g = np.array([1 + 2j, 3j, 1.0, -1j])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
        plain = 0.0 + getitem_grad(g, A, 1)
        acc = scatter_add(cotangent_buffer(A), g, A, 1)
    assert_bit_identical(acc, plain)


@pytest.mark.parametrize("g", [0.0, 1.5, np.float64(2.0), np.array(3.0)], ids=repr)
def test_scalar_cotangents(g):
    for index in (1, (2, 3), slice(0, 2)):
        assert_bit_identical(scatter_add(cotangent_buffer(A), g, A, index),
                             0.0 + getitem_grad(g, A, index))


def test_what_is_not_a_float_array_keeps_the_plain_sum():
    assert cotangent_buffer([1.0, 2.0]) == 0.0
    assert cotangent_buffer(np.arange(3)) == 0.0
    assert cotangent_buffer(1.5) == 0.0
    rows = [np.ones(2), np.ones(2)]
    got = scatter_add(0.0, np.ones(2), rows, 1)
    assert type(got) is type(0.0 + getitem_grad(np.ones(2), rows, 1))
    ints = np.arange(6).reshape(3, 2)
    acc = scatter_add(0.0, np.array([0.5, 1.5]), ints, 1)  # the plain sum: a fresh array
    assert_bit_identical(scatter_add(acc, np.array([2.5, 1.0]), ints, 1),
                         0.0 + getitem_grad(np.array([0.5, 1.5]), ints, 1)
                         + getitem_grad(np.array([2.5, 1.0]), ints, 1))


def test_zero_d_array():
    a = np.array(2.0)
    assert cotangent_buffer(a) == 0.0  # the plain sums of a 0-d array are NumPy scalars
    assert_bit_identical(scatter_add(cotangent_buffer(a), 1.5, a, ()),
                         0.0 + getitem_grad(1.5, a, ()))


def test_an_index_out_of_range_raises_as_before():
    with pytest.raises(IndexError):
        scatter_add(cotangent_buffer(A), np.ones((2, 4)), A, [0, 6])


def test_a_cotangent_of_another_array_library_keeps_the_plain_sum():
    class Lazy(np.ndarray):  # stands for a Dask or CuPy array: not type np.ndarray
        pass
    g = np.ones(4).view(Lazy)
    acc = cotangent_buffer(A)
    got = scatter_add(acc, g, A, 1)
    assert got is not acc and not acc.any()
    assert_bit_identical(np.asarray(got), np.asarray(0.0 + getitem_grad(np.ones(4), A, 1)))
