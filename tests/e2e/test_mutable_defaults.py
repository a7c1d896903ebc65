"""A helper changing its mutable default argument (outside tester T1 #17).

Python makes a default once, where the ``def`` runs, and every call leaving
the parameter out shares it: ``def helper(x, cache=[]): cache.append(x)``
appends to one list that outlives the call (also ``memo={}``, a scratch
``buf=np.zeros(2)`` written with ``buf[:] = ...``).  srcgrad's code works on a
copy of what a helper changes, so each call saw a fresh default and the
default was left untouched: another value and gradient, no error.  Such a
call is now refused, located at the call (in a loop, a branch, a helper, a
comprehension, a local function too), and srcgrad's code for a function whose
own default is changed refuses, as it runs, to be called without it.  A
default only read, an immutable one and an argument passed still work: value
bit for bit under every policy and in jvp, gradient against differences.
"""

from __future__ import annotations

import numpy as np
import pytest
from numeric import assert_close
from numeric import check_every_policy as check

import srcgrad
from srcgrad.errors import SrcGradError

X = np.array([0.5, -1.0])
W0 = np.array([1.0, 2.0])


def helper(x, cache=[]):  # noqa: B006 (the shared default is the point)
    cache.append(x)
    return x * len(cache)


def appended(x):  # T1 #17: b is 2 * a in Python
    a = helper(x)
    b = helper(a)
    return np.sum(a * b)


def scratch(x, buf=np.zeros(2)):  # noqa: B008
    buf[:] = x * 2.0
    return buf


def buffered(x):  # a is buf: overwritten by the second call
    a = scratch(x)
    b = scratch(x ** 2)
    return np.sum(a * b)


def memo_sq(k, x, memo={}):  # noqa: B006
    if k not in memo:
        memo[k] = np.sin(x) * k
    return memo[k]


def memoised(x):
    return np.sum(memo_sq(1, x) + memo_sq(2, x) + memo_sq(1, x * 2))


def in_a_loop(x):
    s = 0.0
    for i in range(3):
        if i > 0:
            s = s + np.sum(helper(x))
    return s


def twice(x):
    return helper(x) * 2.0


def through_a_helper(x):
    return np.sum(twice(x) * twice(x))


def add(c, v):
    c.append(v)


def passes_on(x, cache=[]):  # noqa: B006
    add(cache, x)
    return x * len(cache)


def passed_on(x):
    return np.sum(passes_on(x) * passes_on(x))


def by_another_name(x, memo={}):  # noqa: B006
    m = memo
    m['a'] = x
    return x * len(memo)


def aliased(x):
    return np.sum(by_another_name(x) * 2.0)


def reset_sometimes(x, cache=[]):  # noqa: B006 (rebound on one path only)
    if len(cache) > 5:
        cache = []
    cache.append(x)
    return x * len(cache)


def sometimes(x):
    return np.sum(reset_sometimes(x) * reset_sometimes(x))


def accumulate(x, acc=np.zeros(2)):  # noqa: B008
    acc += x
    return acc * 1.0


def accumulated(x):
    return np.sum(accumulate(x) * accumulate(x))


def in_a_comprehension(x):
    return sum(np.sum(helper(x * k)) for k in range(2))


def local_default(x):
    def inner(v, acc=[]):  # noqa: B006
        acc.append(v)
        return v * len(acc)
    a = inner(x)
    b = inner(a)
    return np.sum(a * b)


def local_lambda_default(x):
    f = lambda v, acc=[]: v * (acc.append(v) or len(acc))  # noqa: E731, B006
    return np.sum(f(x) * f(x))


REFUSED = [appended, buffered, memoised, in_a_loop, through_a_helper, passed_on, aliased,
           sometimes, accumulated, in_a_comprehension, local_default, local_lambda_default]


@pytest.mark.parametrize("fn", REFUSED, ids=lambda f: f.__name__)
@pytest.mark.parametrize("mode", ["grad", "jvp"])
def test_a_changed_mutable_default_is_refused_located(fn, mode):
    defaults = [helper.__defaults__[0], scratch.__defaults__[0].copy(), memo_sq.__defaults__[0]]
    run = (lambda: srcgrad.grad(fn)(X.copy())) if mode == "grad" else \
        (lambda: srcgrad.jvp(fn, (X.copy(),), (np.ones(2),)))
    with pytest.raises(SrcGradError) as info:
        run()
    err = info.value
    assert err.filename == __file__ and err.lineno, err
    assert "default argument" in err.message and "in place" in err.message, err.message
    # nothing ran: the defaults are as they were
    assert helper.__defaults__[0] == [] and memo_sq.__defaults__[0] == {}
    np.testing.assert_array_equal(scratch.__defaults__[0], defaults[1])


def test_the_message_names_the_helper_and_the_parameter():
    with pytest.raises(SrcGradError) as info:
        srcgrad.grad(appended)(X.copy())
    assert "helper() changes its default argument 'cache'" in info.value.message
    assert info.value.lineno == appended.__code__.co_firstlineno + 1


@pytest.mark.parametrize("mode", ["grad", "jvp"])
def test_the_function_itself_called_without_its_changed_default_is_refused(mode):
    def total(x, cache=[]):  # noqa: B006
        cache.append(x)
        return np.sum(x * len(cache))
    run = (lambda: srcgrad.grad(total)(X.copy())) if mode == "grad" else \
        (lambda: srcgrad.jvp(total, (X.copy(),), (np.ones(2),)))
    with pytest.raises(SrcGradError) as info:
        run()
    assert "'cache'" in info.value.message and info.value.lineno, info.value.message
    assert total.__defaults__ == ([],)
    # passed explicitly (a new list each call), it is an argument like any other
    value, grad = srcgrad.value_and_grad(total)(X.copy(), [])
    assert value == total(X.copy(), []) and total.__defaults__ == ([],)
    assert_close(grad, np.ones(2))


def read_only(x, w=W0, d={'a': 2.0}, lst=[1.0, 3.0]):  # noqa: B006
    return x * w * d['a'] * lst[1]


def defaults_read(x):
    return np.sum(read_only(x) ** 2)


def counted(x, n=0):
    n += 1
    return x * n


def immutable_default(x):
    return np.sum(counted(x) * counted(x))


def explicit(x):
    c = []
    a = helper(x, c)
    return np.sum(a * 2.0)


def explicit_keyword(x):
    return np.sum(helper(x, cache=[]) * 2.0) + np.sum(scratch(x, buf=np.zeros(2)))


def local_none_default(x):
    def inner(v, acc=None):
        acc = [] if acc is None else acc
        acc.append(v)
        return v * len(acc)
    return np.sum(inner(x) * inner(x))


def top_level_read(x, w=W0):
    return np.sum(np.sin(x * w))


WORKING = [defaults_read, immutable_default, explicit, explicit_keyword, local_none_default]


@pytest.mark.parametrize("fn", WORKING, ids=lambda f: f.__name__)
def test_defaults_read_unchanged_or_passed_still_work(fn):
    check(fn, (X,))
    assert helper.__defaults__[0] == [] and np.all(scratch.__defaults__[0] == 0.0)
    np.testing.assert_array_equal(W0, [1.0, 2.0])


@pytest.mark.parametrize("policy", ["save", "recompute", "sqrt", ("revolve", 2)])
def test_the_function_s_own_default_read(policy):
    value, grad = srcgrad.value_and_grad(top_level_read, policy=policy)(X.copy())
    assert value == top_level_read(X.copy())
    assert_close(grad, np.cos(X * W0) * W0)
    value, tangent = srcgrad.jvp(top_level_read, (X.copy(),), (np.ones(2),))
    assert value == top_level_read(X.copy())
    assert_close(tangent, np.sum(np.cos(X * W0) * W0))


def test_hvp_of_a_read_default():
    v = np.array([0.3, -0.7])
    h = srcgrad.hvp(defaults_read)(X.copy(), v)
    assert_close(h, 2 * (2.0 * 3.0 * W0) ** 2 * v)


def test_autograd_agrees_on_a_read_default():
    autograd = pytest.importorskip("autograd")
    anp = pytest.importorskip("autograd.numpy")

    def plain(x, w=W0):
        return anp.sum((x * w * 2.0 * 3.0) ** 2)

    assert_close(srcgrad.grad(defaults_read)(X.copy()), autograd.grad(plain)(X),
                 what="autograd")


# -- a default the helper copies before it changes anything: the copy changes ------------------
# (found by review of a1c757b: refused, though the default itself is never touched)
def _copied_array(x, buf=np.zeros(3)):
    buf = buf.copy()
    buf += x
    return buf


def _copied_list(x, acc=[]):  # noqa: B006 - the shared default is the point
    acc = list(acc)
    acc.append(x)
    return acc[-1] * len(acc)


def _rebuilt_by_arithmetic(x, buf=np.zeros(3)):
    buf = buf * 1.0
    buf[0] = x[1]
    return buf


def _changed_then_copied(x, buf=np.zeros(3)):
    buf[0] = x[1]
    buf = buf.copy()
    return buf


def _view_is_no_copy(x, buf=np.zeros(3)):
    buf = buf[:]
    buf += x
    return buf


def copies_array_default(x):
    return np.sum(_copied_array(x) * x) + np.sum(_copied_array(x * 2.0))


def copies_list_default(x):
    return np.sum(_copied_list(x) * x)


def rebuilds_default(x):
    return np.sum(_rebuilt_by_arithmetic(x) * x)


def changes_before_copying(x):
    return np.sum(_changed_then_copied(x) * x)


def copies_only_a_view(x):
    return np.sum(_view_is_no_copy(x) * x)


@pytest.mark.parametrize("fn", [copies_array_default, copies_list_default, rebuilds_default],
                         ids=lambda f: f.__name__)
def test_a_default_copied_first_is_never_changed(fn):
    check(fn, (np.array([0.7, 1.3, 2.1]),))


@pytest.mark.parametrize("fn", [changes_before_copying, copies_only_a_view],
                         ids=lambda f: f.__name__)
def test_a_change_before_the_copy_or_through_a_view_is_still_refused(fn):
    with pytest.raises(SrcGradError, match="default argument 'buf'"):
        srcgrad.grad(fn)(np.array([0.7, 1.3, 2.1]))
