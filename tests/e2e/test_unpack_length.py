"""Unpacking checks its length, as Python does: ``a, b = t`` for a ``t`` of
unknown length became ``a = t[0]; b = t[1]``, so three columns from
``zip(*rows)`` silently gave a gradient of the first two where the function
itself raises ``ValueError``."""

from __future__ import annotations

import numpy as np
import pytest

import srcgrad


def columns(rows):
    a, b = zip(*rows)
    return np.sum(np.array(a) * np.array(b))


def pairs(x, items):
    total = 0.0
    for item in items:
        w, v = item
        total = total + w * np.sum(x * v)
    return total


def head_and_rest(x, parts):
    first, *rest = parts
    return np.sum(x * first) + len(rest)


def _rows(width):
    return [tuple(np.array(float(i + j)) for j in range(width)) for i in range(3)]


def test_columns_of_the_right_count_differentiate():
    rows = _rows(2)
    got = srcgrad.grad(columns)(rows)
    assert [(float(a), float(b)) for a, b in got] == [(float(b), float(a)) for a, b in rows]


@pytest.mark.parametrize("fn,args,message", [
    (columns, (_rows(3),), "too many values to unpack (expected 2)"),
    (columns, (_rows(1),), "not enough values to unpack (expected 2, got 1)"),
    (pairs, (np.ones(2), [(1.0, np.ones(2)), (2.0, np.ones(2), 3.0)]),
     "too many values to unpack (expected 2)"),
    (head_and_rest, (np.ones(2), []), "not enough values to unpack (expected at least 1, got 0)"),
])
def test_a_length_python_refuses_is_refused_at_the_line(fn, args, message):
    with pytest.raises(ValueError, match=r"unpack"):
        fn(*args)  # Python's own behaviour
    with pytest.raises(ValueError) as info:
        srcgrad.grad(fn)(*args)
    assert message in str(info.value)
    assert __file__ in str(info.value)


def test_starred_targets_take_any_longer_sequence():
    x = np.array([1.0, 2.0])
    parts = [np.array([3.0, 4.0]), np.ones(2), np.ones(2)]
    assert np.array_equal(srcgrad.grad(head_and_rest)(x, parts), parts[0])
    assert srcgrad.grad(head_and_rest).source.count("unpacked(") == 1


def test_the_exported_module_checks_too(tmp_path):
    g = srcgrad.grad(columns)
    g(_rows(2))
    path = tmp_path / "exported_columns.py"
    srcgrad.export(str(path), g)
    namespace: dict = {}
    exec(compile(path.read_text(), str(path), "exec"), namespace)
    with pytest.raises(ValueError, match="too many values to unpack"):
        namespace["grad_columns"](_rows(3))
