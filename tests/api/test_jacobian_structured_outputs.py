"""jacobian of a function returning a list or dict (outside tester T1, session 30, #14).

A list output raised NumPy's raw ``ValueError`` (an inhomogeneous shape), a
dict output a message asking for a dict of cotangents the user never gave;
a tuple got the clear "jacobian takes functions returning one array or
float".  All three now get that SrcGradError, naming the function and what it
returned, with the advice to take each output's Jacobian or use vjp / jvp.
One array or float still gives its Jacobian, checked against differences.
"""

from __future__ import annotations

import numpy as np
import pytest
from numeric import assert_close

import srcgrad
from srcgrad.errors import SrcGradError

X = np.array([0.5, -1.0, 2.0])


def as_list(x):
    return [x * 2.0, np.sum(x)]


def as_dict(x):
    return {'a': x * 2.0}


def as_tuple(x):
    return (x * 2.0, np.sum(x))


@pytest.mark.parametrize("fn", [as_list, as_dict, as_tuple], ids=lambda f: f.__name__)
def test_structured_outputs_are_refused_clearly(fn):
    with pytest.raises(SrcGradError) as info:
        srcgrad.jacobian(fn)(X.copy())
    message = str(info.value)
    assert "one array or float" in message and fn.__name__ in message
    assert type(fn(X)).__name__ in message


def test_one_array_still_works():
    def f(x):
        return np.sin(x) * x[0]

    eps = 1e-6
    want = np.stack([(f(X + eps * e) - f(X - eps * e)) / (2 * eps) for e in np.eye(3)], -1)
    assert_close(srcgrad.jacobian(f)(X.copy()), want, rtol=1e-6, atol=1e-8)
