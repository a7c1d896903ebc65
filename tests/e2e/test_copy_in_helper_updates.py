"""A helper that copies a list it is passed and updates an item of the copy in
place changes its caller's arrays (found with T2 #4).

``def scaled(hs): ks = list(hs); ks[0] *= 3.0; return ks`` -- Python's
``ks[0]`` is the caller's ``hs[0]``, which the update changes; srcgrad's code
for the helper works on a copy.  The look at what the helper does found that
it changes the memory below ``hs``'s items (deep), but the caller asked only
about helpers setting items of an argument, and read ``hs[0]`` afterwards as
the old array: the value and the gradient were silently wrong (11.0 where
Python gives 21.0).  A read afterwards of what such a helper changes is now
refused, located, in both modes; a caller that reads only what it returns
differentiates under every policy and in jvp.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest
from numeric import assert_refused_both_modes
from numeric import check_every_policy as check

from srcgrad.errors import SrcGradError

X = np.array([0.4, -1.2, 0.9])


def scaled_list(hs):
    ks = list(hs)
    ks[0] *= 3.0
    return ks


def scaled_copy(hs):
    ks = hs.copy()
    ks[0] *= 3.0
    return ks


def scaled_copy_copy(hs):
    ks = copy.copy(hs)
    ks[-1] += 1.0
    return ks


def read_after_list(x):
    hs = [x * 1.0, x * 2.0]
    ks = scaled_list(hs)
    return np.sum(hs[0] * x) + np.sum(ks[1])


def read_after_copy(x):
    hs = [x * 1.0, x * 2.0]
    for _ in range(2):
        ks = scaled_copy(hs)
    return np.sum(hs[0] * x) + np.sum(ks[1])


def read_after_copy_copy(x):
    hs = [x * 1.0, x * 2.0]
    if np.sum(x) < 5.0:
        ks = scaled_copy_copy(hs)
    else:
        ks = hs
    return np.sum(hs[-1] * x) + np.sum(ks[0])


@pytest.mark.parametrize("fn", [read_after_list, read_after_copy, read_after_copy_copy],
                         ids=lambda f: f.__name__)
def test_reading_the_callers_list_afterwards_is_refused_located(fn):
    assert_refused_both_modes(fn, SrcGradError, "updates its argument 'hs'", x=X)


def results_only(x):
    hs = [x * 1.0, x * 2.0]
    ks = scaled_list(hs)
    ms = scaled_copy([np.sin(x), x * 2.0])
    return np.sum(ks[0] * x) + np.sum(ms[0] * ks[1])


def test_reading_only_what_it_returns_differentiates():
    check(results_only, (X,))
