"""hvp of a function linear in its argument, or whose gradient with respect to
it is zero, warned ZeroGradientWarning about srcgrad's own ``tangent_f`` (the
tangent code differentiated again), pointing at ``<srcgrad:tangent_f-...>``
and suggesting ``srcgrad.explain(tangent_f, ...)``, which the user cannot
call -- and under ``-W error`` the hvp raised (outside tester H4, session 32).
Generated code warns no more; the user's own function still warns where its
gradient is asked for."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import srcgrad
from srcgrad import ZeroGradientWarning

W = np.array([0.5, -1.5])


def linear(x, w):  # its Hessian is zero: the tangent code's gradient is
    return np.sum(w * x)


def cut(x, w):  # no path from x: its gradient, and Hessian, are zero
    return np.sum(w ** 2) + 0.0 * np.sum(np.floor(x))


@pytest.mark.parametrize("fn", [linear, cut])
def test_hvp_warns_nothing_about_generated_code(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        hv = srcgrad.hvp(fn)(np.array([0.3, 0.7]), W, np.array([1.0, -2.0]))
    np.testing.assert_array_equal(hv, np.zeros(2))


def test_the_users_function_still_warns_naming_itself():
    with pytest.warns(ZeroGradientWarning, match="the gradient of cut with respect to x") as seen:
        srcgrad.grad(cut)(np.array([0.3, 0.7]), W)
    assert all("tangent_" not in str(w.message) for w in seen)
