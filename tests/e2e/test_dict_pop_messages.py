"""dict.pop / dict.setdefault on a dict built in the function: refused with
the message for a *list*, whose rewrite (``d = d[:'c'] + d['c':][1:]``) is no
valid code for a dict, or "write the update as an assignment (y[...] = v)"
(review s35, R3-3).  The refusal now names the dict and advises the rewrite
for one, which srcgrad follows (checked here under every policy).

Since session 37 srcgrad makes that rewrite itself where only the dict's name
can reach it (normalize/dict_pops.py): ``d.pop(k)`` and ``d.pop(k, default)``
on such a dict are followed (here and in e2e/test_refusals_fixed_s37.py), and
the refusal with the advice is what a pop on a dict another name, a call or
the caller may see still gets.  ``setdefault`` is refused with its advice."""

from __future__ import annotations

import inspect

import numpy as np
import pytest
from numeric import check_every_policy

import srcgrad
from srcgrad.errors import UnsupportedSyntaxError

X = np.array([0.3, -0.5, 0.9])


def popped(x):
    d = {"a": x * 2, "c": x ** 3}
    v = d.pop("c")
    return np.sum(v) + np.sum(d["a"])


def popped_with_default(x):
    d = {"a": x * 2}
    v = d.pop("c", x)
    return np.sum(v * d["a"])


def set_by_default(x):
    d = {}
    d.setdefault("a", x * 2)
    return np.sum(d["a"] ** 2)


def popped_as_a_statement(x):
    cache = {"h": np.sin(x), "tmp": x}
    cache.pop("tmp")
    return np.sum(cache["h"])


def popped_from_an_alias(x):
    d = {"a": x * 2, "c": x ** 3}
    e = d
    v = d.pop("c", x)
    return np.sum(v) + np.sum(e["a"])


def popped_with_default_from_a_list(x):
    d = {"a": x * 2}
    ds = [d]
    v = d.pop("c", x)
    return np.sum(v * ds[0]["a"])


def popped_as_a_statement_from_a_held_dict(x):
    cache = {"h": np.sin(x), "tmp": x}
    state = {"cache": cache}
    cache.pop("tmp")
    return np.sum(state["cache"]["h"])


@pytest.mark.parametrize("fn, advice", [
    (popped_from_an_alias,
     "'v = d.get('c', x); d = {k: w for k, w in d.items() if k != 'c'}'"),
    (popped_with_default_from_a_list,
     "'v = d.get('c', x); d = {k: w for k, w in d.items() if k != 'c'}'"),
    (set_by_default, "'if 'a' not in d: d['a'] = x * 2'"),
    (popped_as_a_statement_from_a_held_dict,
     "cache = {k: w for k, w in cache.items() if k != 'tmp'}'"),
], ids=lambda v: getattr(v, "__name__", None))
@pytest.mark.parametrize("mode", ["grad", "jvp"])
def test_the_refusal_advises_the_rewrite_for_a_dict(fn, advice, mode):
    with pytest.raises(UnsupportedSyntaxError) as caught:
        if mode == "grad":
            srcgrad.grad(fn)(X)
        else:
            srcgrad.jvp(fn, (X,), (np.ones(3),))
    error = caught.value
    lines = inspect.getsource(fn).splitlines()
    at = next(i for i, line in enumerate(lines) if ".pop(" in line or ".setdefault(" in line)
    assert (error.filename, error.lineno) == (__file__, fn.__code__.co_firstlineno + at)
    assert "changes the dict" in error.message and advice in error.message
    assert "[1:]" not in error.message


def popped_rewritten(x):
    d = {"a": x * 2, "c": x ** 3}
    v = d["c"]
    d = {k: w for k, w in d.items() if k != "c"}
    return np.sum(v) + np.sum(d["a"]) + len(d)


def popped_with_default_rewritten(x):
    d = {"a": x * 2}
    v = d.get("c", x)
    d = {k: w for k, w in d.items() if k != "c"}
    return np.sum(v * d["a"])


def set_by_default_rewritten(x):
    d = {}
    if "a" not in d:
        d["a"] = x * 2
    return np.sum(d["a"] ** 2)


@pytest.mark.parametrize("fn", [popped_rewritten, popped_with_default_rewritten,
                                set_by_default_rewritten], ids=lambda f: f.__name__)
def test_the_advised_rewrites_are_followed(fn):
    check_every_policy(fn, (X,), 0)


@pytest.mark.parametrize("fn, rewritten", [
    (popped, popped_rewritten), (popped_with_default, popped_with_default_rewritten)],
    ids=lambda f: f.__name__)
def test_a_pop_from_a_dict_only_its_name_reaches_is_followed(fn, rewritten):
    """The pop srcgrad rewrites itself gives the gradient of the rewrite advised."""
    grad = check_every_policy(fn, (X,), 0)
    assert np.array_equal(grad, srcgrad.grad(rewritten)(X))
    check_every_policy(popped_as_a_statement, (X,), 0)


def test_a_lists_pop_keeps_the_list_advice():
    def listed(x):
        xs = [x, 2.0 * x, x ** 2]
        xs.reverse()
        v = xs.pop(0)
        return np.sum(v)

    with pytest.raises(UnsupportedSyntaxError) as caught:
        srcgrad.grad(listed)(X)
    assert "changes the dict" not in caught.value.message
