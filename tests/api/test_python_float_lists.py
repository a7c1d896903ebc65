"""Python-float arithmetic that raises in a derivative, for lists of floats and
in forward mode (review s37 R5-19).

``math.sqrt(s)`` at ``s = 0`` -- the distance between two coinciding points
given as lists -- made the generated gradient and tangent raise a raw
ZeroDivisionError, where the same function of arrays gives NumPy's inf/nan.
The fallback that reruns float-specialised gradients with NumPy's arithmetic
(api/float_errors.py) now also covers lists and tuples holding floats, and
jvp; the value is the function's own and a gradient of a float a float.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

import srcgrad


def dist(p, q):
    s = 0.0
    for a, b in zip(p, q):
        s += (a - b) ** 2
    return math.sqrt(s)


def np_dist(p, q):
    return np.sqrt(np.sum((p - q) ** 2))


def test_coinciding_points_give_numpys_answer_not_a_raw_error():
    p, q = [1.0, 2.0], [1.0, 2.0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        grad = srcgrad.grad(dist)(p, q)
        value, tangent = srcgrad.jvp(dist, (p, q), ([1.0, 0.0], None))
        want = srcgrad.grad(np_dist)(np.array(p), np.array(q))
        _, want_tangent = srcgrad.jvp(np_dist, (np.array(p), np.array(q)),
                                      (np.array([1.0, 0.0]), None))
    assert type(grad) is list and all(type(g) is float for g in grad)
    np.testing.assert_array_equal(grad, want)  # nan, as NumPy's 0 * inf
    # (the tangent of the sum of squares is 0 there: sqrt's keeps a zero tangent zero)
    assert value == 0.0 and type(value) is float and tangent == want_tangent


def test_apart_the_code_runs_as_generated():
    p, q = [1.0, 2.0], [4.0, 6.0]
    grad = srcgrad.grad(dist)(p, q)
    assert type(grad) is list and all(type(g) is float for g in grad)
    np.testing.assert_allclose(grad, [-0.6, -0.8], rtol=1e-15)
    value, tangent = srcgrad.jvp(dist, (p, q), ([1.0, 0.0], None))
    assert value == 5.0 and abs(tangent + 0.6) < 1e-15


def test_the_functions_own_error_is_raised_as_it_is():
    def inverse(x):
        return 1.0 / x

    try:
        srcgrad.jvp(inverse, (0.0,), (1.0,))
    except ZeroDivisionError:
        pass
    else:  # pragma: no cover
        raise AssertionError("1.0 / 0.0 raises in Python: the function's own error")
