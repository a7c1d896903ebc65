"""The safe-division idiom, a ufunc with where= and out= (np.divide(a, b,
out=np.zeros_like(a), where=b != 0)), is refused, and the message advised
'z = np.f(..., out=y)' with y a variable, which was refused in turn (review
s35, R3-21).  The refusal now advises the np.where form that computes the same,
which srcgrad follows (checked here under every policy)."""

from __future__ import annotations

import numpy as np
import pytest
from numeric import check_every_policy

import srcgrad
from srcgrad.errors import UnsupportedSyntaxError

A = np.array([0.3, -0.5, 0.9, 1.2])
B = np.array([0.1, -0.8, 0.5, 0.05])


def divided_inline(a, b):
    r = np.divide(a, b, out=np.zeros_like(a), where=np.abs(b) > 0.3)
    return np.sum(r ** 2)


def divided_into_a_variable(a, b):
    out = np.zeros_like(a)
    r = np.divide(a, b, out=out, where=np.abs(b) > 0.3)
    return np.sum(r ** 2)


def logged_as_a_statement(a, b):
    out = np.full_like(a, -5.0)
    np.log(a, out=out, where=a > 0)
    return np.sum(out * b)


@pytest.mark.parametrize("fn, advice", [
    (divided_inline, "r = np.where(m, np.divide(a, np.where(m, b, 1.0)), np.zeros_like(a))"),
    (divided_into_a_variable, "r = np.where(m, np.divide(a, np.where(m, b, 1.0)), out)"),
    (logged_as_a_statement, "r = np.where(m, np.log(np.where(m, a, 1.0)), out)"),
], ids=lambda v: getattr(v, "__name__", None))
def test_the_refusal_advises_the_np_where_form(fn, advice):
    with pytest.raises(UnsupportedSyntaxError) as caught:
        srcgrad.grad(fn)(A, B)
    error = caught.value
    assert error.filename == __file__ and error.lineno is not None
    assert advice in error.message and "out=y" not in error.message


def divided_as_advised(a, b):
    m = np.abs(b) > 0.3
    r = np.where(m, np.divide(a, np.where(m, b, 1.0)), np.zeros_like(a))
    return np.sum(r ** 2)


def logged_as_advised(a, b):
    out = np.full_like(a, -5.0)
    m = a > 0
    r = np.where(m, np.log(np.where(m, a, 1.0)), out)
    return np.sum(r * b)


@pytest.mark.parametrize("fn, reference", [(divided_as_advised, divided_inline),
                                           (logged_as_advised, logged_as_a_statement)],
                         ids=lambda v: getattr(v, "__name__", None))
@pytest.mark.parametrize("wrt", [0, 1])
def test_the_advised_form_computes_the_same_and_is_followed(fn, reference, wrt):
    assert fn(A, B) == reference(A, B)
    check_every_policy(fn, (A, B), wrt)
