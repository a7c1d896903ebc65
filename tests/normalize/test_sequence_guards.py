"""``+`` and ``*`` with a tuple or list on one side and an operand of unknown
type on the other (normalize/sequences.py): concatenation and repetition where
the operand turns out to be a sequence or an int, a located error where it is an
array -- NumPy then computes elementwise arithmetic of the sequence as an array,
which the sequence rules would differentiate wrongly (found by review: the
gradient of ``np.sum(list(x) * w)`` was silently wrong)."""

from __future__ import annotations

import numpy as np
import pytest

import srcgrad


def times_array(x, w):
    return np.sum(list(x) * w)


def plus_array(x, w):
    return np.sum(list(x) + w)


def repeated(x, n):
    ys = [x] * n
    return np.sum(np.hstack(ys + [x]))


def repeated_len(x):
    ys = [x] * len(x)
    return np.sum(np.stack(ys))


def concatenated(x, extra):
    return np.sum(np.hstack([x] + extra))


@pytest.mark.parametrize("fn", [times_array, plus_array])
def test_an_array_operand_of_a_sequence_operator_is_a_located_error(fn):
    x, w = np.arange(3.0), np.array([1.0, 2.0, 3.0])
    with pytest.raises(srcgrad.UnsupportedSyntaxError) as info:
        srcgrad.grad(fn)(x, w)
    assert info.value.lineno == fn.__code__.co_firstlineno + 1
    assert "'w'" in str(info.value) and "np.asarray" in str(info.value)


def _fd(fn, x, *rest, eps=1e-6):
    g = np.zeros_like(x)
    for i in range(x.size):
        e = np.zeros_like(x)
        e.flat[i] = eps
        g.flat[i] = (fn(x + e, *rest) - fn(x - e, *rest)) / (2 * eps)
    return g


@pytest.mark.parametrize("fn, rest", [(repeated, (2,)), (repeated_len, ()),
                                      (concatenated, ([np.ones(2)],))])
def test_sequences_with_operands_checked_at_run_time(fn, rest):
    x = np.array([0.3, -1.2, 2.0])
    got = srcgrad.grad(fn)(x, *rest)
    assert np.allclose(got, _fd(fn, x, *rest), atol=1e-6)


def test_a_count_from_len_needs_no_check():
    assert "sequence_operand" not in srcgrad.grad(repeated_len).source
    assert "sequence_operand(n, True" in srcgrad.grad(repeated).source
