"""``x.flat`` and ``v.shape = (2, 2)`` on an array holding differentiated values (review s37
R5-8) is refused -- srcgrad carries derivatives by values, not through an
array's attributes set afterwards -- but the message spoke of "an attribute of
'v'" and dataclass objects.  It now says the array's shape changes in place and
to write ``v = v.reshape(...)``.  ``x.flat`` was refused with "no adjoint
rule for the attribute '.flat' ... register one"; now the message says it is an
iterator object srcgrad does not follow and that ``x.ravel()`` reads the same
elements.
"""

from __future__ import annotations

import numpy as np
import pytest
from numeric import assert_close, numeric_grad

import srcgrad

X = np.array([0.37, -0.81, 1.23, -0.22])


def set_shape(x):
    v = x.copy()
    v.shape = (2, 2)
    return np.sum(v @ v)


def reshaped(x):
    v = x.copy()
    v = v.reshape(2, 2)
    return np.sum(v @ v)


@pytest.mark.parametrize("mode", ["grad", "jvp"])
def test_a_shape_assignment_says_to_reshape(mode):
    with pytest.raises(srcgrad.UnsupportedSyntaxError) as info:
        if mode == "grad":
            srcgrad.grad(set_shape)(X)
        else:
            srcgrad.jvp(set_shape, (X,), (X,))
    error = info.value
    assert error.message.startswith(
        "'v.shape = (2, 2)' changes the shape of the array 'v' in place, which srcgrad does "
        "not follow")
    assert "write v = v.reshape(...)" in error.message
    assert "dataclass" not in error.message
    assert error.lineno == set_shape.__code__.co_firstlineno + 2
    # what the message says to write works
    assert_close(srcgrad.grad(reshaped)(X), numeric_grad(reshaped, [X], 0), rtol=1e-6,
                 atol=1e-8)


def flat_reads(x):
    return x.flat[3] ** 2 + sum(v for v in x.flat)


def raveled(x):
    return x.ravel()[3] ** 2 + sum(v for v in x.ravel())


@pytest.mark.parametrize("mode", ["grad", "jvp"])
def test_flat_says_to_ravel(mode):
    with pytest.raises(srcgrad.MissingRuleError) as info:
        if mode == "grad":
            srcgrad.grad(flat_reads)(X)
        else:
            srcgrad.jvp(flat_reads, (X,), (X,))
    error = info.value
    assert error.message == (
        "'x.flat' is an iterator object over the array, which srcgrad does not follow; "
        "x.ravel() (or x.reshape(-1)) reads the same elements in the same order, by index "
        "(x.ravel()[i]) or in a loop")
    assert error.lineno == flat_reads.__code__.co_firstlineno + 1
    assert_close(srcgrad.grad(raveled)(X), numeric_grad(raveled, [X], 0), rtol=1e-6,
                 atol=1e-8)
