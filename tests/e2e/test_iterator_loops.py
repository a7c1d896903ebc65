"""Loops over iterators that compute their items as the loop runs, and loop exits.

- A generator expression, ``map`` or ``filter`` is pulled one item at a time,
  also inside ``enumerate``, ``zip``, ``iter`` or another generator: its
  condition sees what the body did (found by the cold review: ``for i, w in
  enumerate(v ** 2 for v in x if v > s)`` with ``s`` updated gave 5.34 for
  2.91, and a gradient to an item Python never reached).
- ``itertools.pairwise`` and ``itertools.product`` inside ``enumerate``/``zip``
  were refused with a message that recommended them.
- ``zip(..., strict=True)`` raised before a loop that breaks first.
- ``for ... else`` and ``while ... else`` were refused.

Each case: the value bit for bit, the gradient against central differences
under every policy, the forward mode's tangent, autograd where it runs it."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from numeric import (
    POLICIES,
    assert_bit_identical,
    assert_close,
    jvp_fd,
    numeric_grad,
    pure,
)

import srcgrad
from srcgrad.errors import SrcGradError

X = np.array([0.3, 0.7, 1.1, 0.9])
W = 0.6


# -- generators pulled as the loop runs -------------------------------------------------
def enumerate_filter(x, w):
    s = 0.0
    for i, v in enumerate(u ** 2 for u in x if u > s):
        s = s + v * i * w
    return s


def zip_filter_list(x, w):
    s = 0.0
    for v, c in zip(filter(lambda u: u > s, x), [1.0, 2.0, 3.0, 4.0]):
        s = s + v * c * w
    return s


def iter_of_generator(x, w):
    s = 0.0
    for v in iter(u * w for u in x if u > s):
        s = s + v
    return s


def zip_range_generator(x, w):
    s = 0.0
    for _, v in zip(range(3), (u * s + u * w for u in x)):
        s = s + v
    return s


def enumerate_zip_generator(x, w):
    s = 0.0
    for i, (a, b) in enumerate(zip((u * w for u in x if u * w > s - 0.2), x)):
        s = s + a * b + i
    return s


def zip_filter_map(x, w):
    s = 0.0
    for a, b in zip(filter(lambda u: u > s, x), map(lambda u: u * s + w, x)):  # noqa: C417
        s = s + a * b
    return s


def generator_of_generator(x, w):
    s = 0.0
    for v in (u * w + s for u in (t + s for t in x if t > s) if u < 3.0):
        s = s + v
    return s


def filter_after_list(x, w):
    s = 0.0
    for c, v in zip([1.0, 2.0, 3.0], (u for u in x if u * w > s)):
        s = s + c * v * w
    return s


def enumerate_start_and_count(x, w):
    s = 0.0
    for i, (k, v) in enumerate(zip(itertools.count(2), filter(lambda u: u > s, x)), start=1):
        s = s + v * w * i + k
    return s


def map_in_enumerate(x, w):
    s = 0.0
    for i, v in enumerate(map(lambda u: u * s + w, x)):  # noqa: C417 - map under test
        s = s + v * i
    return s


def _stepped(x, s):
    for i, v in enumerate(u * u for u in x if u > s):
        s = s + v * (i + 1)
        if s > 3.0:
            break
    return s


def in_helper_in_loop(x, w):
    s = 0.0
    for r in range(2):
        if w > 0:
            s = _stepped(x * w, s * 0.5)
        else:
            s = s + w
    return s


LAZY = [enumerate_filter, zip_filter_list, iter_of_generator, zip_range_generator,
        enumerate_zip_generator, zip_filter_map, generator_of_generator, filter_after_list,
        enumerate_start_and_count, map_in_enumerate, in_helper_in_loop]


# -- pairwise and product inside enumerate / zip ----------------------------------------
def enumerate_pairwise(x, w):
    s = 0.0
    for i, (a, b) in enumerate(itertools.pairwise(x)):
        s = s + i * a * b * w
    return s


def zip_pairwise(x, w):
    s = 0.0
    for (a, b), c in zip(itertools.pairwise(x * w), x[::-1]):
        s = s + a * b * c
    return s


def enumerate_product(x, w):
    s = 0.0
    for i, (a, b) in enumerate(itertools.product(x[:2], [w, 2.0])):
        s = s + i * a * b
    return s


def pairwise_in_generator(x, w):
    return sum(i * a * b * w for i, (a, b) in enumerate(itertools.pairwise(x)))


def pairwise_in_comprehension(x, w):
    ys = [v * w for v in x]
    return sum([a * b * c for (a, b), c in zip(itertools.pairwise(ys), x)])


def pairwise_of_a_rebound_name(x, w):
    """The body rebinds ``ys``: the pairs are those of the sequence the loop began with."""
    s = 0.0
    for j in range(2):
        ys = x * (j + w)
        for i, (a, b) in enumerate(itertools.pairwise(ys)):
            s = s + i * a * b
            ys = ys * 0.5
    return s


def dict_views_in_zip_and_enumerate(x, w):
    """``d.items()`` inside ``enumerate``/``zip`` was listed through the method,
    which has no rule: refused where the dict's values are differentiated."""
    d = {"a": x[0] * w, "b": x[1], "c": x[2]}
    s = 0.0
    for i, (k, v) in enumerate(d.items()):
        s = s + v * i
    for a, b in zip(d.values(), x):
        s = s + a * b
    for j, k in enumerate(d.keys()):
        s = s + d[k] * j
    return s


PAIRS = [dict_views_in_zip_and_enumerate, enumerate_pairwise, zip_pairwise, enumerate_product, pairwise_in_generator,
         pairwise_in_comprehension, pairwise_of_a_rebound_name]


# -- zip(..., strict=True) --------------------------------------------------------------
def strict_break(x, y):
    s = 0.0
    for a, b in zip(x, y, strict=True):
        s = s + a * b
        if s > 0.1:
            break
    return s


def strict_enumerate_break(x, y):
    s = 0.0
    for i, (a, b) in enumerate(zip(x, y * 2.0, strict=True)):
        s = s + a * b * (i + 1)
        if i == 1:
            break
    return s


def strict_nested_not_reached(x, y):
    """The outer zip ends on ``x[:1]`` first: the inner zip never ends."""
    s = 0.0
    for a, (b, c) in zip(x[:1], zip(x, y, strict=True)):
        s = s + a * b * c
    return s


def strict_equal(x, y):
    s = 0.0
    for a, b in zip(x[:2], y, strict=True):
        s = s + a * b
    return s


STRICT = [strict_break, strict_enumerate_break, strict_nested_not_reached, strict_equal]
Y = np.array([1.0, 2.0])


# -- for ... else, while ... else -------------------------------------------------------
def for_else(x, w):
    s = 0.0
    for v in x:
        s = s + v * w
        if s > 1.0:
            break
    else:
        s = s * 3.0
    return s


def for_else_nested(x, w):
    s = 0.0
    for a in x:
        for b in x:
            s = s + a * b * w
            if s > 2.0:
                break
        else:
            s = s * 0.5
            continue
        s = s - w
        break
    else:
        s = -s
    return s


def while_else(x, w):
    s, i = 0.0, 0
    while i < len(x):
        s = s + x[i] * w
        i = i + 1
        if s > 0.5:
            break
    else:
        s = s * 2.0
    return s


def for_else_return(x, w):
    for v in x:
        if v * w > 0.5:
            return v * w
    else:  # noqa: PLW0120 - the form under test
        return w * 10.0
    return w


def for_else_no_break(x, w):
    s = 0.0
    for i, v in enumerate(x):
        s = s + v * w * i
    else:  # noqa: PLW0120 - the form under test
        s = s + 1.0
    return s


ELSE = [for_else, for_else_nested, while_else, for_else_return, for_else_no_break]


def _check(fn, args, policies=POLICIES, autograd_too=True):
    """Value bit for bit, gradients wrt every argument against central
    differences (each policy), forward mode against central differences."""
    expected = pure(fn)(*args)
    for policy in policies:
        value, grads = srcgrad.value_and_grad(fn, wrt=(0, 1), policy=policy)(*args)
        assert_bit_identical(value, expected, what=f"{fn.__name__} {policy}")
        for i, g in enumerate(grads):
            assert_close(g, numeric_grad(pure(fn), list(args), i), rtol=1e-5, atol=1e-7,
                         what=f"{fn.__name__} wrt {i}, policy {policy!r}")
    directions = [np.linspace(0.5, -0.5, np.size(a)).reshape(np.shape(a)) + 0.25
                  for a in args]
    value, tangent = srcgrad.jvp(fn, tuple(args), tuple(directions))
    assert_bit_identical(value, expected, what=f"{fn.__name__} jvp")
    assert_close(tangent, jvp_fd(pure(fn), list(args), [0, 1], directions),
                 what=f"{fn.__name__} jvp")
    if autograd_too:
        _autograd(fn, args)


def _autograd(fn, args):
    try:
        import autograd
        import autograd.numpy as anp
    except ImportError:
        return
    global np
    saved, np = np, anp  # the same code on autograd's numpy
    try:
        theirs = autograd.grad(fn, 0)(*args)
    except Exception:  # noqa: BLE001 - a program autograd cannot run
        return
    finally:
        np = saved
    assert_close(srcgrad.grad(fn)(*args), theirs, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("fn", LAZY, ids=lambda f: f.__name__)
@pytest.mark.parametrize("point", [(X, W), (np.array([0.9, -0.4, 0.2, 1.3]), 1.3)])
def test_generators_in_wrappers_are_pulled_as_the_loop_runs(fn, point):
    _check(fn, point)


def test_lazy_values_are_pythons():
    """The review's reproduction: the listing gave 5.34 and 8.6."""
    assert srcgrad.value_and_grad(enumerate_filter)(X, 1.0)[0] == enumerate_filter(X, 1.0)
    value, grad = srcgrad.value_and_grad(zip_filter_list)(X, 1.0)
    assert value == zip_filter_list(X, 1.0) == pytest.approx(1.7)
    assert_close(grad, [1.0, 2.0, 0.0, 0.0])


def sliced_filter(x, w):
    s = 0.0
    for v in itertools.islice((u for u in x if u > s), 2):
        s = s + v * w
    return s


def every_other_map(x, w):
    s = 0.0
    for i, v in enumerate(itertools.islice(map(lambda u: u * s + w, x), 1, None, 2)):  # noqa
        s = s + v * i
    return s


def taken_while(x, w):
    s = 0.0
    for v in itertools.takewhile(lambda u: u * w < 0.6 + s, x):  # noqa: B023 - read late
        s = s + v * w
    return s


def dropped_while(x, w):
    s = 0.0
    for v in itertools.dropwhile(lambda u: u < 1.0 - s, x):  # noqa: B023 - read late
        s = s + v * w
    return s


def sliced_array(x, w):
    s = 0.0
    n = 3
    for v in itertools.islice(x * w, 1, n):
        s = s + v * s + v
    return s


@pytest.mark.parametrize("fn", [sliced_filter, every_other_map, taken_while, dropped_while,
                                sliced_array], ids=lambda f: f.__name__)
def test_itertools_wrappers_pull_as_the_loop_runs(fn):
    _check(fn, (np.array([0.3, 0.7, 1.1, 0.9, 0.2, 1.5]), W), autograd_too=False)


def sliced_by_arguments(x, w, start, stop, step):
    s = 0.0
    for v in itertools.islice((u * w for u in x if u > s * 0.1), start, stop, step):
        s = s + v
    return s


@pytest.mark.parametrize("bounds", [(None, None, None), (1, None, 2), (None, 3, None),
                                    (2, 5, None), (-1, 3, 1), (0, -2, 1), (0, -1, 1),
                                    (0, 3, 0)], ids=str)
def test_islice_bounds_given_as_arguments(bounds):
    x = np.array([0.3, 0.7, 1.1, 0.9, 0.2, 1.5])
    try:
        expected = sliced_by_arguments(x, W, *bounds)
    except ValueError as python:
        with pytest.raises(ValueError) as compiled:
            srcgrad.grad(sliced_by_arguments, wrt=(0, 1))(x, W, *bounds)
        assert str(compiled.value) == str(python)
        return
    value, grads = srcgrad.value_and_grad(sliced_by_arguments, wrt=(0, 1))(x, W, *bounds)
    assert_bit_identical(value, expected)
    for i, g in enumerate(grads):
        assert_close(g, numeric_grad(lambda *a: sliced_by_arguments(*a, *bounds), [x, W], i))


def two_filters(x, w):
    s = 0.0
    for a, b in zip(filter(lambda u: u > s, x), filter(lambda u: u < s + 1.0, x)):
        s = s + a * b * w
    return s


def three_pulled(x, w):
    s = 0.0
    for i, (a, (b, c)) in enumerate(zip(itertools.islice(x, 1, None),
                                        zip((u * w for u in x if u > s), iter(x)))):
        s = s + a * b + c * i
        if s > 3.0:
            break
    return s


@pytest.mark.parametrize("fn", [two_filters, three_pulled], ids=lambda f: f.__name__)
def test_zip_of_several_that_skip_items(fn):
    _check(fn, (X, W))
    _check(fn, (np.array([0.9, 0.1, 1.4, 0.5]), 1.2))


def two_clauses(x, w):
    s = 0.0
    for v in (a * b for a in x for b in x if a > s):
        s = s + v * w
    return s


def two_clauses_enumerated(x, w):
    s = 0.0
    for i, v in enumerate(a * b + s for a in x if a < 1.0 + s for b in x[:2]):
        s = s + v * w * i
        if s > 4.0:
            break
    else:
        s = -s
    return s


def two_clauses_zipped(x, w):
    s = 0.0
    for c, v in zip([1.0, 2.0, 3.0, 4.0, 5.0], (a * b for a in x for b in (a, w) if b > s)):
        s = s + v * c
        if c > 3.0:
            continue
        s = s * 0.9
    return s


def two_clauses_sliced(x, w):
    """A check that ends the loop (islice's stop, a shorter zip argument pulled
    first) runs before every pull, also inside the loop of the second clause."""
    s = 0.1
    for i, v in enumerate(itertools.islice(
            (u * t for u in x for t in (u, w) if u > s * 0.3), 0, 3), 1):
        s = s + v * (i + 1) * 0.5
    for v, t in zip([x[0] * w, x[1], x[2] + w], (u * t for u in x for t in (u, w) if u > s)):
        s = s + v * t * 0.5
    return s


@pytest.mark.parametrize("fn", [two_clauses, two_clauses_enumerated, two_clauses_zipped,
                                two_clauses_sliced], ids=lambda f: f.__name__)
def test_generators_of_several_clauses(fn):
    _check(fn, (X, W))


def pulled_two_clauses(x, w):
    s = 0.0
    for a, v in zip(filter(lambda u: u > s, x), (p * q for p in x for q in (p, w) if q > s)):
        s = s + a * v
    return s


def test_generator_listed_first_is_refused_where_it_reads_the_body():
    """A generator of several clauses pulled after another that skips items."""
    with pytest.raises(SrcGradError) as info:
        srcgrad.grad(pulled_two_clauses)(X, W)
    err = info.value
    assert err.lineno and err.col is not None and err.filename.endswith(".py")
    assert "'s'" in err.message and "loop's body" in err.message


@pytest.mark.parametrize("fn", PAIRS, ids=lambda f: f.__name__)
def test_pairwise_and_product_inside_enumerate_and_zip(fn):
    _check(fn, (X, W))


@pytest.mark.parametrize("fn", STRICT, ids=lambda f: f.__name__)
def test_strict_zip_checks_only_at_the_end(fn):
    _check(fn, (X[:3], Y), autograd_too=fn is not strict_nested_not_reached)


@pytest.mark.parametrize("lengths", [(3, 2), (2, 3), (3, 3, 2), (2, 2, 3), (3, 2, 2),
                                     (2, 3, 3)])
def test_strict_zip_raises_pythons_error(lengths):
    def three(a, b, c):
        s = 0.0
        for u, v, t in zip(a, b, c, strict=True):
            s = s + u * v * t
        return s

    def two(a, b):
        s = 0.0
        for u, v in zip(a, b, strict=True):
            s = s + u * v
        return s

    fn = three if len(lengths) == 3 else two
    args = [np.linspace(0.1, 0.9, n) for n in lengths]
    with pytest.raises(ValueError) as python:
        fn(*args)
    with pytest.raises(ValueError) as compiled:
        srcgrad.grad(fn)(*args)
    assert str(compiled.value) == str(python.value)
    with pytest.raises(ValueError) as forward:
        srcgrad.jvp(fn, tuple(args), tuple(np.ones_like(a) for a in args))
    assert str(forward.value) == str(python.value)


@pytest.mark.parametrize("fn", ELSE, ids=lambda f: f.__name__)
@pytest.mark.parametrize("point", [(X, W), (X * 0.2, 0.1)])
def test_loop_else(fn, point):
    _check(fn, point, autograd_too=fn is not while_else)
