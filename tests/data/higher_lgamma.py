"""A function calling math.lgamma, a C function with no source (tests/api/test_higher.py)."""

import math


def f(x):
    return x * math.lgamma(x)
