"""``L.append(v)`` on a list (or deque) the function does not own -- a
module-level list, one of an enclosing function, one a helper appends to --
is refused with what it is, located at the append (review s34, R2-4: the
message described an element assignment, "only elements of a local variable
can be assigned (x[i] = v ...)", where nothing is assigned).  A local list
built the same way is differentiated."""

from __future__ import annotations

import collections
import inspect

import numpy as np
import pytest
from numeric import check_every_policy

import srcgrad
from srcgrad.errors import UnsupportedSyntaxError

LOG = []
QUEUE = collections.deque()
X = np.array([0.3, -0.5, 0.9])


def module_list_in_a_loop(x):
    for i in range(3):
        LOG.append(i)
        x = np.sin(x) * (1.0 + 0.05 * len(LOG))
    return np.sum(x ** 2)


def module_deque(x):
    QUEUE.append(1)
    return np.sum(x * len(QUEUE))


def record(v):
    LOG.append(v)
    return v * 2.0


def through_a_helper(x):
    return np.sum(record(x))


def _closure():
    box = []

    def enclosing_list(x):
        if x[0] > 0.0:
            box.append(1)
        return np.sum(x * 2.0)
    return enclosing_list


enclosing_list = _closure()

# (enclosing_list appends a number to a closure list it never reads back: since
# review s37 R5-5 such a record runs as written, tests/e2e/test_records_outside.py;
# test_a_record_in_an_enclosing_list_runs_as_written below)
REFUSED = [(module_list_in_a_loop, "LOG", module_list_in_a_loop),
           (module_deque, "QUEUE", module_deque),
           (through_a_helper, "LOG", record)]


@pytest.mark.parametrize("fn, name, where", REFUSED, ids=[r[0].__name__ for r in REFUSED])
def test_refused_as_a_change_of_an_outside_container(fn, name, where):
    lines, first = inspect.getsourcelines(where)
    line = first + next(i for i, text in enumerate(lines) if f"{name}.append(" in text)
    for run in (lambda: srcgrad.grad(fn)(X.copy()),
                lambda: srcgrad.grad(fn, policy="sqrt")(X.copy()),
                lambda: srcgrad.jvp(fn, (X.copy(),), (np.ones(3),))):
        with pytest.raises(UnsupportedSyntaxError) as info:
            run()
        err = info.value
        assert err.lineno == line and err.filename == inspect.getsourcefile(where), err
        assert f"'{name}.append(...)' changes '{name}'" in err.message, err.message
        assert "not a local variable" in err.message and "ys = []" in err.message
        assert "element" not in err.message and "x[i] = v" not in err.message
    assert LOG == [] and not QUEUE


def local_list(x):  # what the advice says
    log = []
    for i in range(3):
        log.append(i)
        x = np.sin(x) * (1.0 + 0.05 * len(log))
    return np.sum(x ** 2)


def test_local_list_differentiated():
    check_every_policy(local_list, [X])


def test_a_record_in_an_enclosing_list_runs_as_written():
    box = enclosing_list.__closure__[0].cell_contents
    box.clear()
    check_every_policy(enclosing_list, (X.copy(),), 0)
    box.clear()
    srcgrad.grad(enclosing_list)(X.copy())
    assert box == [1]  # once, as the function's own call appends

