"""A call of a library's callable object refused by the user's name (review s36 R4-15).

``CS = CubicSpline(xs, ys)`` at module level and ``CS(t)`` with ``t``
differentiated was refused as "no adjoint rule for
'scipy.interpolate._cubic.<scipy.interpolate._cubic.CubicSpline object at
0x7fd9...>'" -- a memory address, different at every run, and advice to
register a rule for one instance.  The message now names ``'CS'`` and its
class, and says what to do; one built in the function names it too.
"""

from __future__ import annotations

import numpy as np
import pytest

import srcgrad

VEC = np.vectorize(lambda v: v * 2.0 if v > 0 else -v)


def through_vectorize(t):
    return np.sum(VEC(t))


def test_a_module_level_callable_object_is_named_as_written():
    with pytest.raises(srcgrad.MissingRuleError) as info:
        srcgrad.grad(through_vectorize)(np.array([0.3, -0.2]))
    message = info.value.message
    assert "'VEC' (a numpy.vectorize object)" in message, message
    assert " at 0x" not in message and "custom_vjp" in message and "stop_gradient" in message
    assert info.value.lineno == through_vectorize.__code__.co_firstlineno + 1


def test_a_spline_is_named_as_written():
    interpolate = pytest.importorskip("scipy.interpolate")
    xs = np.linspace(0.0, 1.0, 5)
    spline = interpolate.CubicSpline(xs, xs ** 2)

    def smooth(t):
        return np.sum(spline(t))

    with pytest.raises(srcgrad.MissingRuleError) as info:
        srcgrad.grad(smooth)(np.array([0.3, 0.6]))
    assert "'spline' (a scipy.interpolate.CubicSpline object)" in info.value.message


def built_here(t):
    smooth = np.vectorize(np.tanh)
    return np.sum(smooth(t))


def test_an_object_built_in_the_function_is_named_with_its_class():
    with pytest.raises(srcgrad.SrcGradError) as info:
        srcgrad.grad(built_here)(np.array([0.3, 0.6]))
    assert "'smooth', an object of the class vectorize this function builds" \
        in info.value.message, info.value.message
    assert info.value.lineno == built_here.__code__.co_firstlineno + 2
