"""A list display beside a value srcgrad cannot tell is an ndarray (reviewer
R1, findings R1-5): ``[a, b] - lst``, ``[a, b] ** n`` raise TypeError in
Python, but normalize/array_operands.py wrote the display as ``np.array(...)``
beside any name, so the generated code returned NumPy's value and a gradient.
The display is still the array NumPy makes of it, and runtime's
``display_operand`` checks the other operand first: beside an ndarray (or a
NumPy scalar that makes the array) the program runs as before, value bit for
bit, under every policy and jvp; beside a list, tuple or number it raises
Python's own TypeError, in grad and jvp; beside a value that gives no array
(``np.int64(2) * [a, b]`` repeats the list) a located refusal.
"""

from __future__ import annotations

import numpy as np
import pytest
from numeric import POLICIES
from numeric import check_every_policy as check

import srcgrad

X = np.array([0.3, -0.7, 1.1, 0.5])


def minus_a_list_name(x):  # R1-5's program
    y = [1.0, 2.0]
    z = [x[0], x[1]] - y
    return np.sum(z)


def power_of_an_int(x):  # R1-5's program
    n = 2
    z = [x[0], x[1]] ** n
    return np.sum(z)


def minus_an_argument(x, t):
    return np.sum([x[0], x[1]] - t)


def power_of_a_length(x):
    return np.sum([x[0], x[1]] ** len(x))


def divided_in_a_loop(x, t):
    s = 0.0
    for i in range(3):
        s = s + np.sum(t / [x[i], x[i + 1]])
    return s


def minus_in_a_branch(x, t):
    if x[0] > 0:
        z = [x[1], x[2]] - t
    else:
        z = t - [x[2], 1.0]
    return np.sum(z ** 2)


def _shifted(a, t):
    return [a[0] * 2.0, a[1]] - t


def minus_in_a_helper(x, t):
    return np.sum(np.sin(_shifted(x, t)))


def power_of_a_numpy_scalar(x):
    s = np.sum(x[2:])  # a NumPy float, which makes the array: NumPy's value
    return np.sum([x[0], x[1]] ** s)


T_ARRAY = np.array([1.5, -0.25])
T_TUPLE = (1.5, -0.25)


@pytest.mark.parametrize("fn", [minus_an_argument, divided_in_a_loop, minus_in_a_branch,
                                minus_in_a_helper], ids=lambda f: f.__name__)
@pytest.mark.parametrize("x", [X, -X], ids=["x", "minus_x"])
def test_beside_an_array(fn, x):
    check(fn, (x, T_ARRAY))


def test_beside_a_numpy_scalar():
    check(power_of_a_numpy_scalar, (np.abs(X),))


def _raises_as_python(fn, args):
    with pytest.raises(TypeError) as theirs:
        fn(*args)
    for policy in POLICIES:
        with pytest.raises(TypeError) as ours:
            srcgrad.value_and_grad(fn, policy=policy)(*args)
        assert str(ours.value) == str(theirs.value), policy
        assert not isinstance(ours.value, srcgrad.SrcGradError)
    with pytest.raises(TypeError) as ours:
        srcgrad.jvp(fn, wrt=[0])(*args, np.ones(4))
    assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("fn", [minus_a_list_name, power_of_an_int, power_of_a_length],
                         ids=lambda f: f.__name__)
def test_python_type_errors(fn):
    _raises_as_python(fn, (X,))


@pytest.mark.parametrize("fn", [minus_an_argument, divided_in_a_loop, minus_in_a_branch,
                                minus_in_a_helper], ids=lambda f: f.__name__)
@pytest.mark.parametrize("t", [T_TUPLE, list(T_TUPLE), 2.0], ids=["tuple", "list", "float"])
def test_beside_a_sequence_or_number(fn, t):
    _raises_as_python(fn, (X, t))


def times_a_numpy_float(x):
    return np.sum(np.floor(x[0]) * [x[1], x[2]])  # Python: can't multiply sequence


def test_a_numpy_float_times_a_list():
    _raises_as_python(times_a_numpy_float, (X,))


def times_a_numpy_int(x):
    k = np.add(1, 1)  # np.int64: k * [...] repeats the list
    return np.sum(k * [x[1], x[2]])


class Shift:
    def __rsub__(self, other):
        return np.asarray(other) - 1.0


def minus_an_object(x, s):
    return np.sum([x[1], x[2]] - s)


def test_no_array_beside_it_refused_located():
    for fn, args in ((times_a_numpy_int, (X,)),):
        fn(*args)  # runs in Python
        for run in (lambda: srcgrad.grad(fn)(*args),
                    lambda: srcgrad.jvp(fn, wrt=[0])(*args, np.ones(4))):
            with pytest.raises(srcgrad.UnsupportedSyntaxError) as info:
                run()
            assert info.value.lineno == fn.__code__.co_firstlineno + 2
            assert "np.array(...)" in str(info.value)


def test_an_objects_reflected_operator_beside_a_list_is_followed():
    """``[x1, x2] - s``, ``s``'s class defining ``__rsub__``: Python calls it (a
    list has no ``-``), and so does srcgrad since the user's operators are
    calls of their methods where the class is known (normalize/user_operators.py;
    refused before, as a list beside no array)."""
    check(minus_an_object, (X, Shift()), 0)


def test_no_check_beside_a_certain_array():
    def certain(x):
        y = np.array(x[:2])
        return np.sum(y - [x[2], x[3]]) + np.sum([x[0], 1.0] ** np.ones(2))
    assert "display_operand" not in srcgrad.grad(certain).source
    gradient = srcgrad.grad(minus_an_argument)
    assert "display_operand('-', list, t," in gradient.source
