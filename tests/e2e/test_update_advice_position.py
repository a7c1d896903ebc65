"""The advice of a "helper updates its argument" refusal passes the copy where
the argument stands (review s35 R3-18): it said ``accumulate(buf.copy(), ...)``
for ``accumulate(x, 1, buf)`` -- the copy in x's place -- and "return the
updated array" of a dict."""

from __future__ import annotations

import numpy as np
import pytest

import srcgrad


def accumulate(x, k, buf):
    buf[k] = np.sin(x) * k
    return buf[k]


def into_a_dict(x):
    buf = {}
    a = accumulate(x, 1, buf)
    b = accumulate(x, 2, buf)
    return np.sum(a * b) + np.sum(buf[1])


def scale_into(x, out):
    out *= 2.0
    return np.sum(out * x)


def into_an_array(x):
    out = x * 1.0
    s = scale_into(x, out)
    return s + np.sum(out)


@pytest.mark.parametrize("fn, advice", [
    (into_a_dict, "pass a copy (accumulate(x, 1, buf.copy())) and return the updated value"),
    (into_an_array, "pass a copy (scale_into(x, out.copy()))"),
])
def test_the_copy_is_advised_in_the_arguments_place(fn, advice):
    with pytest.raises(srcgrad.SrcGradError) as err:
        srcgrad.grad(fn)(np.array([0.3, -0.5, 0.9]))
    assert advice in str(err.value)
    assert "test_update_advice_position.py" in str(err.value)
