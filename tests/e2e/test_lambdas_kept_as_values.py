"""Lambdas kept in a list (reviewer s33, F6).

``fs = [lambda t, k=k: t * k for k in range(1, 4)]`` and ``fs.append(lambda
t: t * k)`` were refused with "'Lambda' expressions are not supported" -- the
name of a class of srcgrad's parser, and untrue: a lambda bound to a name is
supported.  What srcgrad cannot do is call a function taken from a list when
the code runs; the message now says so, located at the lambda, and how to
write it (one function, what differs passed as an argument), which is
followed: value bit for bit and gradient against differences under every
policy, jvp against differences, in a loop, a branch and a helper too.
"""

from __future__ import annotations

import numpy as np
import pytest
from numeric import POLICIES
from numeric import check_every_policy as check

import srcgrad

X = np.array([1.0, 2.0, -0.5])


def comprehension(x):  # the reviewer's programs
    fs = [lambda t, k=k: t * k for k in range(1, 4)]
    return sum(np.sum(g(x)) for g in fs)


def appended(x):
    fs = []
    for k in range(1, 4):
        fs.append(lambda t: t * k)
    return sum(np.sum(g(x)) for g in fs)


def in_a_tuple(x):
    fs = (lambda t: t * 2.0, lambda t: t ** 2)
    return np.sum(fs[0](x) + fs[1](x))


@pytest.mark.parametrize("fn", [comprehension, appended, in_a_tuple], ids=lambda f: f.__name__)
def test_refused_located_saying_what_is_not_supported(fn):
    runs = [lambda: srcgrad.jvp(fn, (X.copy(),), (np.ones(3),))]
    runs += [lambda p=p: srcgrad.grad(fn, policy=p)(X.copy()) for p in POLICIES]
    for run in runs:
        with pytest.raises(srcgrad.UnsupportedSyntaxError) as info:
            run()
        err = info.value
        assert err.filename == __file__ and "lambda" in err.source_line, err
        assert err.col == err.source_line.index("lambda"), err
        assert "'Lambda'" not in err.message
        assert "a lambda kept as a value" in err.message, err.message
        assert "g = lambda t, k: t * k" in err.message


def advised(x):  # what the message says to write
    g = lambda t, k: t * k  # noqa: E731
    return sum(np.sum(g(x, k)) for k in range(1, 4))


def advised_in_a_loop(x):
    g = lambda t, k: np.sin(t) * k  # noqa: E731
    s = 0.0
    for k in range(1, 4):
        s = s + np.sum(g(x, k) * x)
    return s


def advised_in_a_branch(x):
    g = lambda t, k: t ** 2 * k  # noqa: E731
    if x[0] > 0:
        return np.sum(g(x, 2.0))
    return np.sum(g(x, -1.0) * x)


def _summed(x, ks):
    g = lambda t, k: t * k + t ** 3  # noqa: E731
    return sum(np.sum(g(x, k)) for k in ks)


def advised_in_a_helper(x):
    return _summed(x, (1.0, 2.0)) * _summed(x * x, (0.5,))


@pytest.mark.parametrize("fn", [advised, advised_in_a_loop, advised_in_a_branch,
                                advised_in_a_helper], ids=lambda f: f.__name__)
def test_the_advised_form_is_followed(fn):
    check(fn, (X.copy(),))
    check(fn, (-X,))
