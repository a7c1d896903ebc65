"""A write through another name into an array a global (or a closure variable)
holds: refused, located, where it raised a raw TypeError (review s34, R2-8).

``Wl = P["W"]; Wl[...] = v; ... P["W"]`` with ``P`` a module-level dict: the
alias checks followed the write by storing ``Wl`` back into ``P`` and bound
``P = None`` at the start of the generated function (a global rebound there is
a local), so every transformation raised ``TypeError: 'NoneType' object is not
subscriptable``; with ``Wl = W`` (a global array) the refusal came only by
accident, and a write read back through a global list or dict (``b = P["b"];
b[0] = x[0]``) ran but replaced the user's module-level item with another
array.  analysis/global_writes.py now refuses every such write at compile
time, at the user's update, saying to work on a copy; the module's values
are left as they were.  A read-only alias of a global is differentiated.
"""

from __future__ import annotations

import inspect

import numpy as np
import pytest
from numeric import check_every_policy

import srcgrad
from srcgrad.errors import AliasedUpdateError

P = {"W": np.eye(3) * 0.5, "b": np.zeros(3)}
L = [np.eye(3) * 0.5]
W = np.eye(3) * 0.5
X = np.array([1.76405235, 0.40015721, 0.97873798])


def through_dict_item(x):  # the reviewer's program
    Wl = P["W"]
    Wl[...] = 0.5 * np.eye(3)
    a = np.tanh(x @ P["W"])
    Wl *= 0.8
    b = np.tanh(a @ P["W"])
    return np.sum(b ** 2)


def in_a_loop(x):
    Wl = P["W"]
    Wl[...] = 0.5 * np.eye(3)
    h = x
    for i in range(3):
        h = np.tanh(h @ P["W"])
        Wl *= 0.9
    return np.sum(h ** 2)


def _closure():
    Q = {"W": np.eye(3) * 0.5}

    def in_a_closure(x):
        Wl = Q["W"]
        Wl[...] = 0.5 * np.eye(3)
        a = np.tanh(x @ Q["W"])
        return np.sum(np.tanh(a @ Q["W"]) ** 2)
    return in_a_closure


in_a_closure = _closure()


def element_of_dict_item(x):
    b = P["b"]
    b[0] = x[0]
    return np.sum(P["b"] * x) + np.sum(b)


def element_of_list_item(x):
    Wl = L[0]
    Wl[0, 0] = x[0]
    return np.sum(L[0] @ x)


def whole_global_array(x):
    Wl = W
    Wl[...] = 0.5 * np.eye(3)
    return np.sum(np.tanh(x @ W))


def in_a_branch(x):
    Wl = P["b"]
    if x[0] > 0.0:
        Wl[:] = x
    return np.sum(P["b"] ** 2)


# (the program, the outside name, the advice, the write the error is located at)
REFUSED = [(through_dict_item, "P", "P['W'].copy()", "Wl[...] = 0.5"),
           (in_a_loop, "P", "P['W'].copy()", "Wl[...] = 0.5"),
           (in_a_closure, "Q", "Q['W'].copy()", "Wl[...] = 0.5"),
           (element_of_dict_item, "P", "P['b'].copy()", "b[0] = x[0]"),
           (element_of_list_item, "L", "L[0].copy()", "Wl[0, 0] = x[0]"),
           (whole_global_array, "W", "W.copy()", "Wl[...] = 0.5"),
           (in_a_branch, "P", "P['b'].copy()", "Wl[:] = x")]


def _state():
    return [P["W"], P["b"], L[0], W], [a.copy() for a in (P["W"], P["b"], L[0], W)]


@pytest.mark.parametrize("fn, name, advice, line", REFUSED, ids=[r[0].__name__ for r in REFUSED])
def test_refused_located_in_every_transformation(fn, name, advice, line):
    lines, first = inspect.getsourcelines(fn)
    line = first + next(i for i, text in enumerate(lines) if line in text)
    held, values = _state()
    for run in (lambda: srcgrad.grad(fn)(X.copy()),
                lambda: srcgrad.value_and_grad(fn, policy="sqrt")(X.copy()),
                lambda: srcgrad.jvp(fn, (X.copy(),), (np.ones(3),)),
                lambda: srcgrad.hvp(fn)(X.copy(), np.ones(3))):
        with pytest.raises(AliasedUpdateError) as info:
            run()
        err = info.value
        assert err.filename == __file__ and err.lineno == line, err
        assert f"'{name}' is not a variable of {fn.__name__}" in err.message, err.message
        assert advice in err.message, err.message
    # nothing of the module's state was replaced or changed
    assert all(a is b for a, b in zip(_state()[0], held))
    assert all(np.array_equal(a, v) for a, v in zip(held, values))


def read_only_alias(x):
    Wl = P["W"]
    return np.sum(np.tanh(x @ Wl) * np.tanh(x @ P["W"]))


def local_copy_of_the_item(x):  # what the advice says: a copy, read afterwards
    Wl = P["W"].copy()
    Wl[...] = 0.5 * np.eye(3)
    a = np.tanh(x @ Wl)
    Wl *= 0.8
    return np.sum(np.tanh(a @ Wl) ** 2)


@pytest.mark.parametrize("fn", [read_only_alias, local_copy_of_the_item])
def test_reads_and_copies_differentiated(fn):
    held, values = _state()
    check_every_policy(fn, [X])
    assert all(np.array_equal(a, v) for a, v in zip(held, values))
