"""runtime/gradients.py grad_like on a tuple of gradients: the check that every
one is already what grad_like returns for its argument (then the tuple itself,
without a call per array) must give exactly what the general path gives --
the same arrays where those are fresh, a copy where one is a view, read-only,
of another dtype or shape, or there twice."""

from __future__ import annotations

import numpy as np
from numeric import assert_bit_identical

from srcgrad.runtime import gradients


def _both(g, x):
    fast = gradients.grad_like(g, x)
    slow = gradients._grad_like(g, x, set())
    assert type(fast) is type(slow) and len(fast) == len(slow)
    for f, s, gi in zip(fast, slow, g):
        assert_bit_identical(f, s)
        assert (f is gi) == (s is gi)
    return fast


def test_fresh_arrays_come_back_as_they_are():
    g = (np.ones((3, 2)), np.zeros(2), np.ones(4, np.float32), np.ones(2, np.complex128))
    x = (np.ones((3, 2)), np.ones(2), np.ones(4, np.float32), np.ones(2, np.complex128))
    out = _both(g, x)
    assert out is g


def test_anything_else_takes_the_general_path():
    a = np.arange(6.0).reshape(2, 3)
    frozen = np.ones(3)
    frozen.flags.writeable = False
    cases = [
        ((a, a), (np.ones((2, 3)), np.ones((2, 3)))),         # one array twice: a copy
        ((a[0],), (np.ones(3),)),                               # a view
        ((frozen,), (np.ones(3),)),                             # read-only
        ((np.ones(3),), (np.ones(3, np.float32),)),             # float64 for a float32 argument
        ((np.ones(3),), (np.arange(3),)),                       # an integer argument
        ((np.ones(3),), (np.ones((1, 3)),)),                    # another shape
        ((np.ones(3) + 1j,), (np.ones(3),)),                    # complex for a real argument
        ((1.5, np.ones(2)), (2.0, np.ones(2))),                 # a Python float
        ((np.float64(2.0),), (np.float64(1.0),)),               # NumPy scalars
    ]
    for g, x in cases:
        out = _both(g, x)
        assert out is not g
