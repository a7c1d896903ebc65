"""One array held by several names, containers and views: every write is seen.

``state = [pos, vel]; state[0][i] = v`` changes ``pos`` too; ``[z, z]``,
``[np.zeros(2)] * 3``, ``b = list(a)`` hold one array in several places; a
tuple's item is an array like any other (``t[0][1] = v``); ``np.einsum('ii->i',
Y)`` is a view of ``Y``; ``X.T.ravel('A')`` reads ``X.T`` in memory order.  Each
program here either works -- the value bit for bit, the gradient and the
tangent against central differences, the caller's array untouched, under every
checkpointing policy -- or is refused with a located srcgrad error; never a
silently wrong number (found by review: srcgrad copied ``state[0]`` before
writing it, and ``pos`` kept its old value and a zero gradient)."""

from __future__ import annotations

import copy
import functools

import numpy as np
import pytest
from numeric import assert_close, assert_refused_both_modes, check_both_modes

import srcgrad
from srcgrad.errors import AliasedUpdateError, SrcGradError

X = np.array([0.31, 0.72, 1.13, 0.94])
POLICIES = ["save", "recompute", "sqrt", ("revolve", 2)]


_check = functools.partial(check_both_modes, x=X)
_refused = functools.partial(assert_refused_both_modes, x=X)


# -- lst[i][j] = v: the other names for lst[i] see the write ---------------------------

def state_list(x):  # the simulation idiom: the list's items are pos and vel
    pos = np.zeros(4)
    vel = x * 0.5
    state = [pos, vel]
    for i in range(4):
        state[0][i] = x[i] * 2.0 + vel[i]
    return np.sum(pos * x) + np.sum(state[1])


def state_list_branch(x):
    pos = x * 1.0
    state = [pos, x * 2.0]
    if x[0] > 0:
        state[0][1] = x[2] ** 2
    else:
        state[1][1] = x[3]
    return np.sum(pos * state[1]) + pos[1]


def _stepped(x):  # a helper whose own list holds its array
    pos = x * 3.0
    state = [pos, x * 1.0]
    state[0][0] = np.sin(x[1])
    return pos


def state_list_helper(x):
    total = 0.0
    for k in range(2):
        total = total + np.sum(_stepped(x * (k + 1.0)) ** 2)
    return total


def list_copy_follows(x):  # b = list(a) holds a's arrays: a[0] sees b[0][0] = v
    a = [x * 1.0, x * 2.0]
    b = list(a)
    b[0][0] = x[1] ** 2
    return np.sum(a[0] * x) + b[0][1]


def list_slice_copy_follows(x):
    a = [x * 1.0, x * 2.0]
    b = a[:]
    b[1][2] = x[0] * x[3]
    return np.sum(a[1] * x)


def copy_copy_follows(x):  # copy.copy(a) of a list is list(a) (it was refused, no rule)
    a = [x * 1.0, x * 2.0]
    b = copy.copy(a)
    b[0][3] = x[2]
    return np.sum(a[0] * b[0])


def appended_name_follows(x):
    z = x * 1.5
    hist = []
    hist.append(z)
    hist[0][0] = x[3] * 4.0
    return np.sum(z * x)


def same_list_two_names(x):  # u is the very list: it sees the write through itself
    a = [x * 1.0, x * 2.0]
    u = a
    a[0][1] = x[0] ** 2
    return np.sum(u[0]) + np.sum(a[1])


def slot_write_in_loop_read_each_step(x):
    pos = x * 1.0
    state = [pos, x * 0.0]
    total = 0.0
    for i in range(3):
        state[0][i] = pos[i + 1] * x[i]
        total = total + np.sum(pos) * x[i]
    return total


@pytest.mark.parametrize("policy", POLICIES, ids=str)
@pytest.mark.parametrize("fn", [state_list, state_list_branch, state_list_helper,
                                list_copy_follows, list_slice_copy_follows, copy_copy_follows,
                                appended_name_follows, same_list_two_names,
                                slot_write_in_loop_read_each_step], ids=lambda f: f.__name__)
def test_slot_write_is_seen_by_every_name(fn, policy):
    _check(fn, policy=policy)


def repeated_list(x):  # one array three times: Python changes bufs[2] too
    bufs = [np.zeros(2)] * 3
    bufs[0][0] = x[0]
    return np.sum(bufs[2] * np.array([1.0, 2.0]))


def repeated_nested_list(x):
    m = [[0.0] * 2] * 2
    m[0][0] = x[0]
    return m[1][0] * 3.0


def same_array_twice(x):
    z = np.zeros(2)
    lst = [z, z]
    lst[0][0] = x[0]
    return lst[1][0] * 3


def appended_twice(x):
    z = np.zeros(2)
    hist = []
    hist.append(z)
    hist.append(z)
    hist[0][0] = x[0]
    return hist[1][0] * 5


def view_in_list(x):  # another item is a view of the item written
    y = x * 1.0
    lst = [y, y[1:]]
    lst[0][2] = x[0]
    return np.sum(lst[1])


@pytest.mark.parametrize("fn", [repeated_list, repeated_nested_list, same_array_twice,
                                appended_twice, view_in_list], ids=lambda f: f.__name__)
def test_one_array_in_two_items_is_refused_located(fn):
    _refused(fn, SrcGradError)
    if fn is not appended_twice:  # (appending z twice is refused as the list is built)
        _refused(fn, AliasedUpdateError, "another item of", "srcgrad cannot follow")


def separate_items_work(x):  # what the refusal suggests (one array per item)
    bufs = [np.zeros(2), np.zeros(2), np.zeros(2)]
    bufs[0][0] = x[0]
    return np.sum(bufs[2] * np.array([1.0, 2.0])) + np.sum(bufs[0]) * x[1]


def test_separate_items_work():
    _check(separate_items_work)


# -- np.einsum of one operand may be a view of it ------------------------------------

M = np.arange(1.0, 10.0).reshape(3, 3) * 0.1


def einsum_diagonal_then_update(x):  # d is Y's diagonal: Y[0, 0] = 5.0 changes d[0]
    y = x * 1.0
    d = np.einsum('ii->i', y)
    s = np.sum(d ** 2)
    y[0, 0] = 5.0
    return s + np.sum(d * np.array([1.0, 2.0, 3.0]))


def einsum_transpose_then_update(x):
    y = x * 1.0
    t = np.einsum('ij->ji', y)
    y[0, 1] = 0.0
    return np.sum(t * np.arange(9.0).reshape(3, 3))


def einsum_view_updated(x):  # the other way round: d[1] = v changes y[1, 1]
    y = x * 1.0
    d = np.einsum('ii->i', y)
    d[1] = 3.0
    return np.sum(y * x)


def einsum_view_in_loop(x):
    y = x * 1.0
    total = 0.0
    for k in range(2):
        t = np.einsum('ij', y)
        y[k, k] = 0.5
        total = total + np.sum(t * x)
    return total


@pytest.mark.parametrize("fn", [einsum_diagonal_then_update, einsum_transpose_then_update,
                                einsum_view_updated, einsum_view_in_loop],
                         ids=lambda f: f.__name__)
def test_einsum_view_updated_is_refused_located(fn):
    _refused(fn, AliasedUpdateError, "shares its memory", x=M)


def einsum_read_before_update(x):
    y = x * 1.0
    t = np.einsum('ij->ji', y)
    s = np.sum(t * x)
    y[0, 1] = 0.0
    return s + np.sum(y * x)


def einsum_two_operands_is_new(x):  # a product of two operands is a new array
    y = x * 1.0
    d = np.einsum('ij,jk->ik', y, x)
    y[0, 0] = 5.0
    return np.sum(d) + np.sum(y * x)


def einsum_copied(x):
    y = x * 1.0
    d = np.einsum('ii->i', y).copy()
    for k in range(2):
        y[k, k] = 5.0
    return np.sum(d * np.array([1.0, 2.0, 3.0])) + np.sum(y * x)


@pytest.mark.parametrize("policy", POLICIES, ids=str)
@pytest.mark.parametrize("fn", [einsum_read_before_update, einsum_two_operands_is_new,
                                einsum_copied], ids=lambda f: f.__name__)
def test_einsum_without_a_view_updated_works(fn, policy):
    _check(fn, x=M, policy=policy)


# -- ravel, flatten, reshape with order='A' or 'K' read the array's memory order -----

W6 = np.arange(6.0)
XS = np.arange(1.0, 7.0).reshape(2, 3) * 0.3


def ravel_a_transposed(x):
    return np.sum(x.T.ravel('A') * W6)


def np_ravel_a_transposed(x):
    return np.sum(np.ravel(x.T, order='A') * W6)


def flatten_a_transposed(x):
    return np.sum(x.T.flatten('A') * W6)


def reshape_a_transposed(x):
    return np.sum(x.T.reshape(6, order='A') * W6)


def np_reshape_a_fortran(x):
    return np.sum(np.reshape(x, (3, 2), order='F').ravel('A') * W6)


def copy_fortran_ravel_a(x):  # the copy is Fortran-ordered; its tangent is not
    return np.sum(x.copy(order='F').ravel('A') * W6)


def astype_fortran_ravel_a(x):
    return np.sum(x.T.astype(float, order='F').ravel('A') * W6)


def ravel_k(x):
    return np.sum(np.ravel(x, order='K') * W6)


def ravel_k_transposed(x):
    return np.sum(np.ravel(x.T, order='K') * W6)


def ravel_k_strided(x):  # neither C- nor Fortran-contiguous: memory order of a view
    y = np.stack([x, x * 2.0]).transpose(2, 0, 1)[::2]
    return np.sum(np.ravel(y, order='K') * np.arange(8.0))


def ravel_a_in_loop(x):
    total = 0.0
    y = x * 1.0
    for k in range(2):
        y = y.T.copy(order='F') if k else y.T
        total = total + np.sum(y.ravel('A') * W6) * (k + 1.0)
    return total


def _flat_a(m):
    return m.T.ravel('A')


def ravel_a_in_helper_branch(x):
    if x[0, 0] > 0:
        v = _flat_a(x)
    else:
        v = x.ravel()
    return np.sum(np.sin(v) * W6)


@pytest.mark.parametrize("policy", POLICIES, ids=str)
@pytest.mark.parametrize("fn", [ravel_a_transposed, np_ravel_a_transposed, flatten_a_transposed,
                                reshape_a_transposed, np_reshape_a_fortran,
                                copy_fortran_ravel_a, astype_fortran_ravel_a, ravel_k,
                                ravel_k_transposed, ravel_k_strided, ravel_a_in_loop,
                                ravel_a_in_helper_branch], ids=lambda f: f.__name__)
def test_memory_order_reads(fn, policy):
    _check(fn, x=XS, policy=policy)


@pytest.mark.parametrize("fn", [ravel_a_transposed, copy_fortran_ravel_a, ravel_k_strided,
                                ravel_a_in_helper_branch], ids=lambda f: f.__name__)
def test_memory_order_reads_second_order(fn):
    """hvp differentiates the tangent code, whose memory_ravel has rules too."""
    v = np.linspace(0.5, 1.5, 6).reshape(2, 3)
    h = 1e-5
    expected = (srcgrad.grad(fn)(XS + h * v) - srcgrad.grad(fn)(XS - h * v)) / (2 * h)
    assert_close(srcgrad.hvp(fn)(XS, v), expected, rtol=1e-5, atol=1e-6)


def test_memory_order_matches_autograd():
    autograd = pytest.importorskip("autograd")
    anp = autograd.numpy

    def ag(x):
        return anp.sum(anp.ravel(x.T, order='F') * W6)  # x.T in memory order is x in C order

    np.testing.assert_allclose(srcgrad.grad(ravel_a_transposed)(XS), autograd.grad(ag)(XS))


# -- t[0][j] = v into an array a tuple holds: the tuple is built again -----------------

def tuple_item_written(x):
    state = (np.zeros(4), x * 1.0)
    state[0][1] = x[1]
    return state[0][1] * 8.0 + np.sum(state[1])


def tuple_item_written_in_loop(x):
    state = (np.zeros(4), x * 1.0)
    for i in range(4):
        state[0][i] = x[i] * state[1][i]
    return np.sum(state[0] * x)


def tuple_item_name_follows(x):  # a is state[-2]: it sees the write
    a = np.zeros(4)
    state = (a, x * 1.0)
    state[-2][1] = x[1]
    if x[0] > 0:
        state[1][2] = x[3] ** 2
    return np.sum(a * x) + state[0][1] + np.sum(state[1])


def _tuple_step(x):
    state = (x * 2.0, np.zeros(4))
    state[1][0] = np.sum(state[0])
    return state


def tuple_item_in_helper(x):
    first, second = _tuple_step(x)
    return np.sum(first * second) + second[0]


@pytest.mark.parametrize("policy", POLICIES, ids=str)
@pytest.mark.parametrize("fn", [tuple_item_written, tuple_item_written_in_loop,
                                tuple_item_name_follows, tuple_item_in_helper],
                         ids=lambda f: f.__name__)
def test_tuple_item_written(fn, policy):
    _check(fn, policy=policy)


def tuple_kept_by_another_name(x):  # u holds the old tuple: Python's u[0] changed too
    state = (np.zeros(4), x * 1.0)
    u = state
    state[0][1] = x[1]
    return np.sum(u[0] * x)


def tuple_item_by_variable_index(x):
    state = (np.zeros(4), x * 1.0)
    for i in range(2):
        state[i][0] = x[i]
    return np.sum(state[0] * x)


def tuple_argument_item_written(x):
    return _write_into((x * 1.0, x * 2.0), x)


def _write_into(pair, x):
    pair[0][0] = x[1]
    return np.sum(pair[0] * pair[1])


@pytest.mark.parametrize("fn, kind", [(tuple_kept_by_another_name, AliasedUpdateError),
                                      (tuple_item_by_variable_index, SrcGradError),
                                      (tuple_argument_item_written, SrcGradError)],
                         ids=lambda f: getattr(f, "__name__", ""))
def test_tuple_item_write_it_cannot_follow_is_refused_located(fn, kind):
    _refused(fn, kind)


# -- st["h"][0] = v: an array a dict holds, by a str key -------------------------------

def dict_item_written_in_loop(x):
    st = {"h": x.copy(), "c": np.zeros_like(x)}
    for t in range(3):
        st["c"] = st["c"] + np.sin(st["h"])
        st["h"][0] = st["c"][1]
    return np.sum(st["h"] * st["c"])


def dict_item_name_follows(x):
    h = x * 2.0
    st = {"h": h, "c": x * 1.0}
    if x[1] > 0:
        st["h"][2] = x[0] * x[3]
    return np.sum(h * x) + np.sum(st["h"])


def _dict_step(x):
    st = {"h": x * 1.0}
    st["h"][1] = np.tanh(x[2])
    return st


def dict_item_in_helper(x):
    return np.sum(_dict_step(x)["h"] ** 2)


@pytest.mark.parametrize("policy", POLICIES, ids=str)
@pytest.mark.parametrize("fn", [dict_item_written_in_loop, dict_item_name_follows,
                                dict_item_in_helper], ids=lambda f: f.__name__)
def test_dict_item_written(fn, policy):
    _check(fn, policy=policy)


def dict_same_array_twice(x):
    z = x * 1.0
    st = {"a": z, "b": z}
    st["a"][0] = x[1]
    return np.sum(st["b"] * x)


def test_dict_holding_one_array_twice_is_refused_located():
    _refused(dict_same_array_twice, AliasedUpdateError, "another item of")


# -- a = d['h']; a[0] = v: an element write through another name for the item -------

def dict_item_alias_written(x):
    d = {"h": x * 1.0}
    a = d["h"]
    a[0] = 2.0
    return np.sum(d["h"] * x) + np.sum(a)


def list_items_written_in_loop(x):
    ws = [x * 1.0, x * 2.0]
    for w in ws:
        w[0] = 1.0
    return np.sum(ws[0] * ws[1])


def list_item_alias_written_twice(x):
    lst = [x * 1.5, x]
    a = lst[0]
    a[0] = x[2] ** 2
    if x[1] > 0:
        lst[0][3] = x[1]
    return np.sum(lst[0]) + np.sum(a * x)


def _item_alias_step(x):
    state = [x * 1.0, x * 2.0]
    p = state[0]
    p[1] = np.cos(x[0])
    return np.sum(p) + np.sum(state[0] * state[1])


def item_alias_in_helper(x):
    return _item_alias_step(x) + _item_alias_step(x * 2.0)


@pytest.mark.parametrize("policy", POLICIES, ids=str)
@pytest.mark.parametrize("fn", [dict_item_alias_written, list_items_written_in_loop,
                                list_item_alias_written_twice, item_alias_in_helper],
                         ids=lambda f: f.__name__)
def test_item_written_through_another_name(fn, policy):
    _check(fn, policy=policy)


def item_alias_view_sees_write(x):  # r is a view of a: a's copy written is not r's
    lst = [x * 1.5, x]
    a = lst[0]
    r = a[1:]
    a[0] = x[2] ** 2
    lst[0][3] = x[1]
    return np.sum(r * x[1:])


def test_item_alias_view_is_refused_located():
    _refused(item_alias_view_sees_write, AliasedUpdateError, "srcgrad cannot follow")


def item_replaced_before_write(x):  # d['h'] no longer holds a: d does not see a[0] = v
    d = {"h": x * 1.0}
    a = d["h"]
    d["h"] = x * 3.0
    a[0] = 2.0
    return np.sum(d["h"] * x) + np.sum(a * x)


def test_item_replaced_before_the_write_is_not_written_back():
    try:
        _check(item_replaced_before_write)
    except SrcGradError as err:  # or refused, located; never the write stored into d
        assert err.lineno, err


# -- for row in Y: row *= 2 -- an augmented update of a view writes into its base ----

def rows_doubled(x):
    y = np.outer(x, x) * 1.0
    for row in y:
        row *= 2
    return np.sum(y * np.outer(x, x))


def row_view_updated(x):
    y = x[:, None] * np.ones((4, 3))
    r = y[1]
    r += x[:3] ** 2
    s = np.sum(r * x[1:])
    if x[0] > 0:
        c = y[:, 2]
        c *= x
    return np.sum(y * y) + s


def _scaled_rows(m, x):
    m = m * 1.0  # (rows of an argument stay refused: the caller's array would change)
    for i in range(len(m)):
        row = m[i]
        row -= x[:3] * 0.5
    return np.sum(np.tanh(m))


def rows_in_helper(x):
    y = x[:, None] * np.arange(1.0, 4.0)
    return _scaled_rows(y, x) + np.sum(y)


def scalar_items_rebound(x):  # items of a 1-D array are numbers: += rebinds them
    y = x * 1.0
    total = 0.0
    for v in y:
        v *= 2.0
        total = total + v
    return total + np.sum(y)


@pytest.mark.parametrize("policy", POLICIES, ids=str)
@pytest.mark.parametrize("fn", [rows_doubled, row_view_updated, rows_in_helper,
                                scalar_items_rebound], ids=lambda f: f.__name__)
def test_augmented_update_of_a_view_writes_its_base(fn, policy):
    _check(fn, policy=policy)


@pytest.mark.parametrize("fn", [state_list, list_copy_follows, tuple_item_written_in_loop,
                                dict_item_written_in_loop, dict_item_alias_written,
                                rows_doubled], ids=lambda f: f.__name__)
def test_followed_writes_second_order(fn):
    """hvp differentiates the generated code again: the checks and rebinds are in it."""
    v = np.linspace(0.5, 1.5, X.size)
    h = 1e-5
    expected = (srcgrad.grad(fn)(X + h * v) - srcgrad.grad(fn)(X - h * v)) / (2 * h)
    assert_close(srcgrad.hvp(fn)(X, v), expected, rtol=1e-4, atol=1e-6)
