"""Forward mode accepts what reverse mode accepts, and gives the same derivative.

A cold review found forward mode (``jvp``, and what is built on it: ``hvp``,
``hessian``, ``jacobian``) running code reverse mode refuses and returning a
wrong tangent for it: every call that may change an array in place where
srcgrad cannot follow it (``y.sort()``, ``np.put``, ``np.add.at``,
``y[1:].fill(v)``, ``np.copyto`` into a view or with ``where=``, a ufunc's
``out=`` with ``where=`` or into a view, ``np.place``, ``np.putmask``,
``np.cumsum(out=)``) gave ``0.0`` for ``18.0``.  Both modes now make one check
(srcgrad/ad/in_place.py), so for each form here either both derivatives match
central differences or both modes raise the same located SrcGradError.

Second order through ``np.gradient`` with a moving float spacing raised
MissingRuleError naming srcgrad's internal TupleCotangent; every function of
tests/data/constant_param_fns.py with a constant-parameter rule now runs
through ``hvp``.  The singular values of a non-square matrix (``svd(a).S``,
or ``u, s, vt = svd(a)`` with only ``s`` used) are differentiable whatever
``full_matrices`` says, in both modes; the singular vectors' refusal is a
located MissingRuleError in both, never a raw AssertionError.
"""

from __future__ import annotations

import numpy as np
import pytest

import srcgrad

W = np.arange(1.0, 5.0)
W2 = np.arange(1.0, 5.0).reshape(2, 2)
X = np.array([0.9, 0.3, 1.1, 0.7])
D = np.array([0.5, -1.0, 2.0, 1.0])


# -- every in-place form of the review's reproductions ----------------------------

def s_sort(x):
    y = x * 1.0
    y.sort()
    return np.sum(y * W)


def s_put(x):
    y = np.zeros(4)
    np.put(y, [0, 2], x[:2])
    return np.sum(y * W)


def s_addat(x):
    y = np.zeros(4)
    np.add.at(y, np.array([0, 0]), x[:2])
    return np.sum(y * W * y)


def s_viewfill(x):
    y = np.zeros(4)
    y[1:].fill(x[2])
    return np.sum(y * W)


def s_copyto_view(x):
    y = np.zeros(4)
    np.copyto(y[1:], x[:3])
    return np.sum(y * W)


def s_out_where(x):
    y = np.zeros(4)
    np.exp(x, out=y, where=x > 0.5)
    return np.sum(y * W)


def s_putmask(x):
    y = np.zeros(4)
    np.putmask(y, x > 0.5, x)
    return np.sum(y * W)


def s_cumsum_out(x):
    y = np.zeros(4)
    np.cumsum(x, out=y)
    return np.sum(y * W)


def s_place(x):
    y = np.zeros(4)
    np.place(y, x > 0.5, x[:3])
    return np.sum(y * W)


def s_out_view(x):
    y = np.zeros(5)
    np.exp(x, out=y[1:])
    return np.sum(y[1:] * W)


def s_fill_rows(x):
    y = np.empty((2, 2))
    y.fill(x[0])
    y[0].fill(x[1])
    return np.sum(y * W2)


def s_copyto_where(x):
    y = np.zeros(4)
    np.copyto(y, x, where=x > 0.5)
    return np.sum(y * y)


def s_copyto_casting(x):
    y = np.zeros(4)
    np.copyto(y, x, casting='no')
    return np.sum(y * x)


def s_fill(x):
    y = np.empty(4)
    y.fill(x[0])
    return np.sum(y * W)


def s_copyto(x):
    y = np.zeros(4)
    np.copyto(y, x)
    return np.sum(y * x)


def s_out(x):
    y = np.zeros(4)
    np.exp(x, out=y)
    return np.sum(y * W)


def s_sort_in_loop(x):
    total = 0.0
    for k in range(2):
        y = x * (k + 1.0)
        if k > 0:
            y.sort()
        total = total + np.sum(y * W)
    return total


def _put_first(y, v):
    np.put(y, [0], v)
    return y


def s_put_in_helper(x):
    y = np.zeros(4)
    y = _put_first(y, x[1])
    return np.sum(y * W) + np.sum(x)


def a_fill(x, y):
    y.fill(x[0])
    return np.sum(y * x)


def a_out(x, y):
    np.exp(x, out=y)
    return np.sum(y * x)


LOCAL = [s_sort, s_put, s_addat, s_viewfill, s_copyto_view, s_out_where, s_putmask,
         s_cumsum_out, s_place, s_out_view, s_fill_rows, s_copyto_where, s_copyto_casting,
         s_fill, s_copyto, s_out, s_sort_in_loop, s_put_in_helper]


def _central(fn, x, d, eps=1e-6):
    return (fn(x + eps * d) - fn(x - eps * d)) / (2 * eps)


def _outcome(call):
    try:
        return call(), None
    except srcgrad.SrcGradError as error:
        return None, error


@pytest.mark.parametrize("fn", LOCAL, ids=lambda f: f.__name__)
def test_in_place_forms_right_in_both_modes_or_refused_by_both(fn):
    fd = _central(fn, X, D)
    grad, grad_error = _outcome(lambda: srcgrad.grad(fn)(X.copy()))
    both, jvp_error = _outcome(lambda: srcgrad.jvp(fn, (X.copy(),), (D,)))
    assert (grad_error is None) == (jvp_error is None), (fn.__name__, grad_error, jvp_error)
    if grad_error is not None:
        assert type(grad_error) is type(jvp_error)
        assert grad_error.message == jvp_error.message
        for error in (grad_error, jvp_error):
            assert error.filename == __file__ and error.lineno is not None \
                and error.col is not None, error
        return
    value, tangent = both
    assert value == fn(X.copy())                             # bit for bit
    np.testing.assert_allclose(grad @ D, fd, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(tangent, fd, rtol=1e-6, atol=1e-8)


def test_refused_forms_say_which_array_and_what_to_write():
    with pytest.raises(srcgrad.UnsupportedSyntaxError) as caught:
        srcgrad.jvp(s_viewfill, (X,), (D,))
    message = str(caught.value)
    assert "'y[1:].fill(x[2])' may change 'y[1:]' in place" in message
    assert "write the update as an assignment" in message
    assert caught.value.lineno == s_viewfill.__code__.co_firstlineno + 2


@pytest.mark.parametrize("fn", [a_fill, a_out], ids=lambda f: f.__name__)
def test_in_place_on_an_argument_refused_by_both(fn):
    x, y = np.array([0.3, 0.7]), np.array([1.0, 2.0])
    with pytest.raises(srcgrad.UnsupportedSyntaxError) as by_grad:
        srcgrad.grad(fn)(x, y.copy())
    with pytest.raises(srcgrad.UnsupportedSyntaxError) as by_jvp:
        srcgrad.jvp(fn, (x, y.copy()), (np.ones(2), np.zeros(2)))
    assert by_grad.value.message == by_jvp.value.message
    assert by_jvp.value.lineno == fn.__code__.co_firstlineno + 1


@pytest.mark.parametrize("make", [lambda f: srcgrad.jacobian(f)(X),
                                  lambda f: srcgrad.hvp(f)(X, D),
                                  lambda f: srcgrad.hessian(f)(X)],
                         ids=["jacobian", "hvp", "hessian"])
def test_what_builds_on_forward_mode_refuses_too(make):
    for fn in (s_put, s_viewfill, s_copyto_where):
        with pytest.raises(srcgrad.UnsupportedSyntaxError):
            make(fn)
