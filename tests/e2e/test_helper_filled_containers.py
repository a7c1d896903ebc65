"""A helper that fills a new dict or list with its argument's arrays (session 30, F1).

``def pick(p): out = {}; out['w'] = p['w']; return out`` returns a new dict
holding the caller's array, as ``return {'w': p['w']}`` does; ``q = pick(p);
t = q['w']; t *= 3.0`` then changes that array in place, so ``p['w']`` sees it.
srcgrad followed the display form but not a dict filled by item assignment, a
list filled by ``append``, ``extend`` or ``+=``, or a comprehension over
``p.values()``: the look at what a helper may return (analysis/sharing.py
``_result_shares``) skipped statements that store into a container and never
typed ``list(p)`` / ``out + t`` as sequence operations, so the caller took the
result as new arrays and lost the update (13.18 where Python gives 39.54, no
error).  Those stores now join the stored name to the container, and a
method srcgrad does not know (``out.update(p)``, ``out.setdefault(k, v)``)
joins every name it reads: followed as the code runs, or refused, located.
Each program: value bit for bit under every policy and in jvp, gradient and
tangent against differences, and autograd on the same function written
without the in-place update.
"""

from __future__ import annotations

import numpy as np
import pytest
from numeric import assert_close
from numeric import check_every_policy as check

import srcgrad
from srcgrad.errors import SrcGradError

X = np.array([0.7, 1.3, 2.1])


def pick(p):
    out = {}
    out['w'] = p['w']
    return out


def pick_values(p):
    return [v for v in p.values()]


def pick_items(p):
    return [v for _, v in p.items()]


def first_appended(p):
    out = []
    out.append(p[0])
    return out


def extended(p):
    out = []
    out.extend(p)
    return out


def added(p):
    out = []
    out += [p[0]]
    return out


def through_another(p):
    return first_appended(p)


def the_testers(x):  # Python: 39.54; srcgrad gave 13.18
    p = {'w': x * 2.0}
    q = pick(p)
    t = q['w']
    t *= 3.0
    return np.sum(p['w'] * x)


def by_values(x):
    p = {'w': x * 2.0}
    q = pick_values(p)
    t = q[0]
    t *= 3.0
    return np.sum(p['w'] * x)


def by_items(x):
    p = {'w': x * 2.0}
    q = pick_items(p)
    q[0] *= 3.0
    return np.sum(p['w'] * x)


def by_list(helper):
    def f(x):
        p = [x * 2.0]
        q = helper(p)
        t = q[0]
        t *= 3.0
        return np.sum(p[0] * x)
    f.__name__ = f"by_{helper.__name__}"
    return f


def in_a_loop(x):
    p = {'w': x * 1.0, 'b': x * 0.5}
    for _ in range(3):
        q = pick(p)
        t = q['w']
        t *= 0.9
        p['b'] = p['b'] + t
    return np.sum(p['w'] * x) + np.sum(p['b'])


def in_a_branch(x):
    p = [x * 2.0]
    if np.sum(x) > 0:
        q = first_appended(p)
        q[0] *= 3.0
    else:
        q = extended(p)
        q[0] -= x
    return np.sum(p[0] * x)


def in_a_branch_other_way(x):
    return in_a_branch(-x)


def step(x, p):
    q = pick(p)
    t = q['w']
    t *= 3.0
    return np.sum(p['w'] * x)


def in_a_helper(x):
    return step(x, {'w': x * 2.0})


def updated_then_read_through_the_result(x):  # refused as the display form is
    p = {'w': x * 2.0}
    q = pick(p)
    t = p['w']
    t *= 3.0
    return np.sum(q['w'] * x)


PROGRAMS = [the_testers, by_values, by_items, by_list(first_appended), by_list(extended),
            by_list(added), by_list(through_another), in_a_loop, in_a_branch,
            in_a_branch_other_way, in_a_helper]


@pytest.mark.parametrize("fn", PROGRAMS, ids=lambda f: f.__name__)
def test_the_update_through_a_filled_container_is_followed(fn):
    check(fn, (X,))


def test_the_testers_numbers():
    value, grad = srcgrad.value_and_grad(the_testers)(X.copy())
    assert value == the_testers(X.copy())
    assert_close(value, 39.54)
    assert_close(grad, 12.0 * X)


def updated_by_dict_update(p):
    out = {}
    out.update(p)
    return out


def updated_by_setdefault(p):
    out = {}
    out.setdefault('w', p['w'])
    return out


def by_update(x):
    p = {'w': x * 2.0}
    q = updated_by_dict_update(p)
    t = q['w']
    t *= 3.0
    return np.sum(p['w'] * x)


def by_setdefault(x):
    p = {'w': x * 2.0}
    q = updated_by_setdefault(p)
    t = q['w']
    t *= 3.0
    return np.sum(p['w'] * x)


@pytest.mark.parametrize("fn", [by_update, by_setdefault,
                                updated_then_read_through_the_result], ids=lambda f: f.__name__)
@pytest.mark.parametrize("mode", ["grad", "jvp"])
def test_what_cannot_be_followed_is_refused_located(fn, mode):
    run = (lambda: srcgrad.grad(fn)(X.copy())) if mode == "grad" else \
        (lambda: srcgrad.jvp(fn, (X.copy(),), (np.ones(3),)))
    with pytest.raises(SrcGradError) as info:
        run()
    assert info.value.filename == __file__ and info.value.lineno, info.value
    assert "in place" in info.value.message, info.value.message


def test_autograd_agrees():
    autograd = pytest.importorskip("autograd")
    anp = pytest.importorskip("autograd.numpy")

    def plain(x):  # the_testers, the update written as a new array
        return anp.sum(x * 6.0 * x)

    assert_close(srcgrad.grad(the_testers)(X.copy()), autograd.grad(plain)(X),
                 what="autograd")
