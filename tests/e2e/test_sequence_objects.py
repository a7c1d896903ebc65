"""Sequences of the standard library that are not lists (review s36 R4-20).

``collections.deque(maxlen=k)``, a sliding window, was followed as a list: its
``append`` drops the oldest item once the deque is full, which a list's does
not, and the generated code raised a raw IndexError (TypeError in forward
mode).  It is refused, located, with the list form to write; a deque without
a maxlen is still followed.  An ``array.array`` written through an index raised
a raw TypeError in forward mode (its tangent's dtype came from
``np.result_type``, which refuses it).
"""

from __future__ import annotations

import array
import collections
from collections import deque

import numpy as np
import pytest
from numeric import assert_refused_both_modes, check_every_policy

import srcgrad

X = np.array([0.3, -0.5, 0.8])


def window_sums(x):
    window = collections.deque(maxlen=2)
    s = 0.0
    for i in range(4):
        window.append(x[i % 3] * (i + 1))
        s = s + sum(window)
    return s


def window_by_name(x):
    window = deque([], 2)
    for i in range(4):
        window.append(np.sin(x[i % 3]) * (i + 1))
    return window[0] + 2 * window[-1]


def window_as_a_list(x):  # what the refusal says to write
    window = []
    s = 0.0
    for i in range(4):
        window = (window + [x[i % 3] * (i + 1)])[-2:]
        s = s + sum(window)
    return s


def unbounded(x):
    window = collections.deque(maxlen=None)
    for i in range(3):
        window.append(x[i] * (i + 1.0))
    return window[0] * window[2] + sum(window)


def written_array(x):
    a = array.array("d", [0.0, 0.0])
    a[0] = x[0] * 2
    return a[0] * x[1]


@pytest.mark.parametrize("fn", [window_sums, window_by_name])
def test_a_deque_with_a_maxlen_is_refused(fn):
    assert_refused_both_modes(fn, srcgrad.UnsupportedSyntaxError, "maxlen",
                              "(window + [v])[-k:]", x=X)


@pytest.mark.parametrize("fn", [window_as_a_list, unbounded, written_array])
def test_what_is_followed(fn):
    check_every_policy(fn, (X.copy(),))
