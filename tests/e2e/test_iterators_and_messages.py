"""Loops over iterators without ``len`` and code srcgrad used to refuse.

Each case either works -- the value bit for bit, the gradient against central
differences (and autograd where it runs the program) -- or is refused with a
located srcgrad error whose message says what to write instead.  The
reproductions came from an adversarial tester's programs."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import srcgrad
from srcgrad.errors import SrcGradError, UnsupportedSyntaxError

from numeric import (assert_bit_identical, assert_close, check_every_policy, numeric_grad,
                     pure)

X = np.array([0.5, -1.0, 2.0, 0.3])
W = 0.7
Y = np.array([0.3, 0.9, 1.0, 0.4])
M = np.array([[1.0, 2.0], [3.0, 4.0]])
V = np.array([0.5, -1.0])


def _check(fn, args, wrts=(0, 1), autograd_too=False):
    """Every position of ``wrts``, alone and together: the value bit for bit,
    gradients against central differences."""
    for wrt in (*wrts, tuple(wrts)):
        value, grads = srcgrad.value_and_grad(fn, wrt=wrt)(*args)
        assert_bit_identical(value, pure(fn)(*args))
        each = grads if isinstance(wrt, tuple) else (grads,)
        for g, i in zip(each, wrt if isinstance(wrt, tuple) else (wrt,)):
            assert_close(g, numeric_grad(pure(fn), args, i), what=f"{fn.__name__} wrt {i}")
    if autograd_too:
        try:
            import autograd
            import autograd.numpy as anp
        except ImportError:
            return
        ours = [srcgrad.grad(fn, wrt=i)(*args) for i in wrts]
        global np
        saved, np = np, anp  # the same code, autograd's numpy: np is this module's
        try:
            theirs = [autograd.grad(fn, i)(*args) for i in wrts]
        finally:
            np = saved
        for a, b in zip(ours, theirs):
            assert_close(a, b, rtol=1e-9, atol=1e-12)


def _refused(fn, args, wrt, kind, *words):
    """``fn`` refused with a located ``kind`` whose message has every word."""
    with pytest.raises(kind) as info:
        srcgrad.grad(fn, wrt=wrt)(*args)
    err = info.value
    assert err.filename and err.filename.endswith(".py") and err.lineno and err.col is not None
    for word in words:
        assert word in err.message, err.message
    return err


# -- (1) for loops over iterators ----------------------------------------------------

def enum_start(X, w):
    total = 0.0
    for i, row in enumerate(X, start=1):
        total += i * np.dot(row, w)
    return total


def zip_strict(X, w):
    t = 0.0
    for a, b in zip(X, X[::-1], strict=True):
        t = t + np.dot(a, w) * np.sum(b)
    return t


def enum_zip_strict(x, w):
    t = 0.0
    for i, (a, b) in enumerate(zip(x, x[::-1], strict=True), start=2):
        t = t + w * a * b * i
    return t


def over_iter(x, w):
    t = 0.0
    for v in iter(x):
        t = t + w * v ** 2
    return t


def count_break(x, w):
    t = 0.0
    for i in itertools.count():
        if i >= 3:
            break
        t = t + w * x[i]
    return t


def count_start_return(x, w):
    t = 0.0
    for i in itertools.count(1):
        t = t + w * x[i] * i
        if i == 2:
            return t
    return t


def count_in_zip(x, w):
    t = 0.0
    for i, v in zip(itertools.count(1, 2), x):
        t = t + w * v * i
    return t


def enumerate_count(x, w):
    t = 0.0
    for i, c in enumerate(itertools.count(5, 2)):
        if i >= len(x):
            break
        t = t + w * x[i] * c
    return t


def zip_of_counts(x, w):
    t = 0.0
    for i, j in zip(itertools.count(), itertools.count(1)):
        if j > 3:
            break
        t = t * w + x[i] * j
    return t


def pairwise(x, w):
    t = 0.0
    for a, b in itertools.pairwise(x):
        t = t + w * (b - a) ** 2
    return t


def pairwise_generator(x, w):
    return sum((b - a) ** 2 * w for a, b in itertools.pairwise(x))


def product(x, w):
    t = 0.0
    for a, b in itertools.product(x, x):
        t = t + w * a * b
    return t


def product_three(x, w):
    t = 0.0
    for a, b, c in itertools.product(x, x[:2], x):
        t = t + w * a * b - c * w
    return t


def product_repeat(x, w):
    t = 0.0
    for p in itertools.product(x, repeat=2):
        t = t + w * p[0] * p[1] ** 2
    return t


def comprehension_enum_start(x, w):
    return sum([w * v * i for i, v in enumerate(x, start=3)])


def listed_enum_start(x, w):
    pairs = list(enumerate(x, start=1))
    return pairs[1][0] * pairs[1][1] * w


@pytest.mark.parametrize("fn, args, autograd_too", [
    (enum_start, (M, V), True),
    (zip_strict, (M, V), True),
    (enum_zip_strict, (X, W), True),
    (over_iter, (X, W), True),
    (count_break, (X, W), True),
    (count_start_return, (X, W), True),
    (count_in_zip, (X, W), True),
    (enumerate_count, (X, W), True),
    (zip_of_counts, (X, W), True),
    (pairwise, (X, W), True),
    (pairwise_generator, (X, W), False),
    (product, (X, W), True),
    (product_three, (X, W), True),
    (product_repeat, (X, W), True),
    (comprehension_enum_start, (X, W), True),
    (listed_enum_start, (X, W), False),
], ids=lambda v: getattr(v, "__name__", ""))
def test_loop_over_iterator(fn, args, autograd_too):
    _check(fn, args, autograd_too=autograd_too)


def test_count_loop_runs_over_a_range_not_a_list():
    """itertools.count() is never listed: the forward loop runs over a range and
    the adjoint over the iterations counted."""
    source = srcgrad.grad(count_break, wrt=(0, 1)).source
    assert "range(0, 9223372036854775807, 1)" in source
    assert "itertools" not in source and "list(" not in source


def zip_strict_unequal(x, w):
    t = 0.0
    for a, b in zip(x, x[1:], strict=True):  # noqa: RUF007 - lengths differ on purpose
        t = t + w * a * b
    return t


def test_zip_strict_raises_as_python_does():
    with pytest.raises(ValueError) as python:
        zip_strict_unequal(X, W)
    with pytest.raises(ValueError) as compiled:
        srcgrad.grad(zip_strict_unequal, wrt=1)(X, W)
    assert str(compiled.value) == str(python.value)  # Python's own words


def chain_(x, w):
    t = 0.0
    for v in itertools.chain(x, x):
        t = t + w * v
    return t


def islice_(x, w):
    t = 0.0
    for v in itertools.islice(x, 2):
        t = t + w * v
    return t


def iterator_name(x, w):
    it = iter(x)
    t = 0.0
    for v in it:
        t = t + v * w
    return t


@pytest.mark.parametrize("fn", [chain_, islice_, iterator_name], ids=lambda f: f.__name__)
def test_other_iterators_work_where_nothing_differentiated_runs_through(fn):
    _check(fn, (X, W), wrts=(1,))


def over_argument(items, w):
    t = 0.0
    for v in items:
        t = t * w + v
    return t


def listed_argument(items, w):
    xs = list(items)
    t = 0.0
    for v in xs:
        t = t * w + v
    return t


def tupled_argument(items, w):
    xs = tuple(items)
    t = 0.0
    for k in range(len(xs)):
        t = t * w + xs[k] * w
    return t


def summed_argument(items, w):
    return sum(items) * w


@pytest.mark.parametrize("policy", ["save", "recompute", "sqrt", ("revolve", 2)], ids=str)
@pytest.mark.parametrize("fn", [over_argument, listed_argument, tupled_argument, summed_argument],
                         ids=lambda f: f.__name__)
def test_generator_argument_is_consumed_once(fn, policy):
    """list(items), tuple(items), sum(items) of a generator argument are kept,
    never recomputed in the adjoint sweep (recomputed, they found it spent: a
    gradient of 0.0 under policy='recompute')."""
    g = srcgrad.grad(fn, wrt=1, policy=policy)((v for v in X), W)
    assert_close(g, numeric_grad(lambda w: fn(iter(X), w), (W,), 0))
    assert_close(srcgrad.grad(fn, wrt=1, policy=policy)(list(X), W),
                 numeric_grad(lambda w: fn(list(X), w), (W,), 0))


@pytest.mark.parametrize("policy", ["save", "recompute", "sqrt", ("revolve", 2)], ids=str)
def test_listed_iterators_are_never_listed_again(policy):
    """The list a loop runs over is kept, never recomputed: listing an iterator
    (a generator argument, zip, iter(xs)) a second time finds it spent, and the
    adjoint loop would run no iteration (a silently wrong gradient)."""
    for fn in (chain_, islice_, iterator_name):
        g = srcgrad.grad(fn, wrt=1, policy=policy)(X, W)
        assert_close(g, numeric_grad(pure(fn), (X, W), 1))


@pytest.mark.parametrize("policy", ["recompute", "sqrt", ("revolve", 2)], ids=str)
@pytest.mark.parametrize("fn", [zip_strict, count_break, count_in_zip, pairwise, product_three,
                                enumerate_count], ids=lambda f: f.__name__)
def test_loop_over_iterator_under_every_policy(fn, policy):
    args = (M, V) if fn is zip_strict else (X, W)
    for wrt in (0, 1):
        g = srcgrad.grad(fn, wrt=wrt, policy=policy)(*args)
        assert_close(g, numeric_grad(pure(fn), args, wrt))


@pytest.mark.parametrize("fn", [chain_, iterator_name], ids=lambda f: f.__name__)
def test_other_iterators_of_differentiated_values_are_refused_with_advice(fn):
    _refused(fn, (X, W), 0, UnsupportedSyntaxError, "cannot follow", "through the iterator",
             "loop over the sequence itself")


def test_islice_is_taken_apart():
    """A loop over itertools.islice counts what it pulls (normalize/iterators.py)."""
    _check(islice_, (X, W))


def cycle_(x, w):
    t = 0.0
    for i, v in enumerate(itertools.cycle(x)):
        if i > 5:
            break
        t = t + w * v
    return t


def count_float(x, w):
    t = 0.0
    for s in itertools.count(0.5, 0.25):
        if s > 1.0:
            break
        t = t + w * s
    return t


def test_endless_iterators_refused_before_anything_runs():
    _refused(cycle_, (X, W), 1, UnsupportedSyntaxError, "itertools.cycle", "xs[k % len(xs)]")
    _refused(count_float, (X, W), 1, UnsupportedSyntaxError, "itertools.count",
             "start + k * step")


# -- (2) code that was refused ----------------------------------------------------------

class Model:
    scale = 2.0

    def __init__(self, w):
        self.w = w

    @staticmethod
    def sq(x):
        return x ** 2

    @classmethod
    def twice(cls, x):
        return cls.scale * x

    @classmethod
    def twice_squared(cls, x):
        return cls.twice(cls.sq(x))

    def loss_static(self, x):
        return np.sum(self.sq(x) * self.w)

    def loss_class(self, x):
        return np.sum(self.twice(x) * self.w)

    def loss_both(self, x):
        return np.sum(self.twice_squared(x) * self.w) + np.sum(self.sq(self.w) * x)


@pytest.mark.parametrize("method", ["loss_static", "loss_class", "loss_both"])
def test_static_and_class_methods_called_through_self(method):
    model = Model(np.array([0.5, -1.0, 2.0]))
    x = np.array([1.0, 2.0, 3.0])
    fn = getattr(model, method)
    value, g = srcgrad.value_and_grad(fn)(x)
    assert_bit_identical(value, fn(x))
    assert_close(g, numeric_grad(fn, [x], 0))


def max_of_list(x):
    return max([x[0] * 2, x[1] ** 2]) + min(x)


def extremes_tied(x):
    xs = [x[0], x[1], x[0]]
    return max(xs) * 2 + min(tuple(xs)) + max(x[0], x[1], x[0]) + max(x)


def test_max_and_min_of_one_iterable():
    _check(max_of_list, (np.array([0.3, 0.9]),), wrts=(0,), autograd_too=True)
    assert_close(srcgrad.grad(max_of_list)(np.array([0.3, 0.9])), [1.0, 1.8])
    _check(extremes_tied, (np.array([1.0, 3.0]),), wrts=(0,))


def test_max_of_tied_items_gives_the_derivative_to_the_first():
    """Python returns the first of tied items: it gets the whole derivative."""
    g = srcgrad.grad(extremes_tied)(np.array([2.0, 2.0]))
    assert_close(g, [5.0, 0.0])
    _, t = srcgrad.jvp(extremes_tied, (np.array([2.0, 2.0]),), (np.array([0.0, 1.0]),))
    assert_close(t, 0.0)


def closure_acc(x):
    acc = [0.0]

    def add(v):
        acc[0] += v
    for v in x:
        add(v ** 2)
    return acc[0]


def closure_put(x):
    y = np.zeros(2)

    def put(i, v):
        y[i] = v * x[i]
    put(0, x[1])
    put(1, 3.0)
    return np.sum(y ** 2)


def test_local_function_called_for_what_it_updates():
    _check(closure_acc, (np.array([0.3, 0.9]),), wrts=(0,))
    assert_close(srcgrad.grad(closure_acc)(np.array([0.3, 0.9])), [0.6, 1.8])
    _check(closure_put, (np.array([0.3, 0.9]),), wrts=(0,))


def stack_pop(x):
    stack = [x[0], x[1]]
    total = 0.0
    while stack:
        total = total * 0.5 + stack.pop() ** 2
    return total


def queue_pop(x):
    q = [x[0], x[1], x[2]]
    total = 0.0
    while len(q) > 0:
        v = q.pop(0)
        total = total * 0.5 + v ** 3
        if v > 0.5 and len(q) < 3:
            q.append(v * 0.1)
    return total


def pop_middle(x):
    q = [x[0], x[1], x[2]]
    v = q.pop(1)
    q.pop()
    return v * q[0] + len(q)


def pop_aliased(x):
    q = [x[0], x[1]]
    r = q
    v = q.pop()
    return v * len(r)


def test_pop_of_a_local_list():
    x = np.array([0.3, 0.9, 1.0])
    for fn in (stack_pop, queue_pop, pop_middle):
        _check(fn, (x,), wrts=(0,))
    _refused(pop_aliased, (x,), 0, UnsupportedSyntaxError, "q.pop()", "v = q[-1]; q = q[:-1]")


def fill_(x, w):
    y = np.empty(3)
    y.fill(w)
    return np.sum(y * x)


def copyto_(x, w):
    y = np.zeros(3)
    np.copyto(y, w * x)
    return np.sum(y * x)


def ufunc_out(x, w):
    y = np.zeros(3)
    np.multiply(x, w, out=y)
    np.sin(y, out=(y,))
    return np.sum(y * x)


@pytest.mark.parametrize("fn", [fill_, copyto_, ufunc_out], ids=lambda f: f.__name__)
def test_whole_array_writes_by_call(fn):
    _check(fn, (np.array([0.3, 0.9, 1.0]), 0.5))


def add_at(x, v):
    y = np.zeros_like(x)
    np.add.at(y, [0, 0, 2], v)
    return np.sum((y + x) ** 2)


def subtract_at_rows(x, v):
    y = np.outer(x, x)
    np.subtract.at(y, [1, -1, 1], v * x)
    return np.sum(np.sin(y))


@pytest.mark.parametrize("fn, args", [(add_at, (Y[:3], Y[1:])), (add_at, (Y[:3], 0.5)),
                                      (subtract_at_rows, (Y[:3], 0.5))],
                         ids=["add_at", "add_at_scalar", "subtract_at_rows"])
def test_add_at_with_literal_indices(fn, args):
    """The unbuffered adds of np.add.at, in order: a repeated index adds twice."""
    _check(fn, args)
    _, t = srcgrad.jvp(fn, args, tuple(np.ones_like(a) if np.ndim(a) else 1.0 for a in args))
    h = 1e-6
    plus = fn(*[a + h for a in args])
    minus = fn(*[a - h for a in args])
    assert_close(t, (plus - minus) / (2 * h))


def add_at_index_argument(x, v, idx):
    y = np.zeros_like(x)
    np.add.at(y, idx, v)
    return np.sum((y + x) ** 2)


def put_(x, w):
    y = np.zeros(3)
    np.put(y, [0, 1], x[:2] * w)
    return np.sum(y)


def fill_parameter(x, w):
    x.fill(w)
    return np.sum(x)


def out_of_parameter(x, w):
    np.multiply(x, w, out=x)
    return np.sum(x)


def upd(acc, v):
    acc[0] += v


def module_helper_updates(x, w):
    acc = [0.0]
    for v in x:
        upd(acc, v * w)
    return acc[0]


def test_in_place_calls_refused_naming_what_they_change():
    x = np.array([0.3, 0.9, 1.0])
    # np.add.at with an index list: refused until session 31, now the loop of
    # element updates it stands for (repeated indices accumulate)
    for wrt in (0, 1):
        check_every_policy(add_at_index_argument, (x, 2.0, [0, 0, 2]), wrt=wrt)
    _refused(put_, (x, 0.5), 1, UnsupportedSyntaxError, "may change 'y'", "y[idx] = v")
    # x.fill(w) and out=x on an argument: refused until session 30, now the element
    # write x[...] = v on the copy of x (tests/e2e/test_argument_whole_writes.py)
    for fn in (fill_parameter, out_of_parameter):
        for wrt in (0, 1):
            check_every_policy(fn, (x, 0.5), wrt=wrt)
    # upd(acc, v * w), a module-level helper called for its update: refused until
    # session 32, now inlined where it is called (normalize/effect_calls.py; the
    # message is checked on a helper srcgrad leaves a call, test_out_parameter_helpers.py)
    for wrt in (0, 1):
        check_every_policy(module_helper_updates, (x, 0.5), wrt=wrt)


def apply_lambda(X, w):
    r = np.apply_along_axis(lambda row: np.sum(row * w), 1, X)
    return np.sum(r ** 2)


def apply_local(X, w):
    def rowf(row):
        return np.sum(row * w)
    r = np.apply_along_axis(rowf, 1, X)
    return np.sum(r ** 2)


def apply_written_out(X, w):
    r = np.stack([np.sum(row * w) for row in X])
    return np.sum(r ** 2)


def test_functions_passed_to_numpy_refused_with_the_loop_to_write():
    X2 = np.arange(6.0).reshape(2, 3)
    w = np.array([0.3, 0.9, 1.0])
    _refused(apply_lambda, (X2, w), 1, UnsupportedSyntaxError, "a lambda can only be called",
             "passed to np.apply_along_axis", "np.stack([f(row) for row in X])")
    _refused(apply_local, (X2, w), 1, UnsupportedSyntaxError, "'rowf' can only be called",
             "passed to np.apply_along_axis")
    _check(apply_written_out, (X2, w))  # the advice works


def chained_slice(x, w):
    y = np.zeros(3)
    y[1:][0] = w * x[0]
    return np.sum(y * x)


def chained_rows(x, w):
    y = np.zeros((2, 3))
    y[1][2] = w * x[0]
    y[0][1:] = x[1:] * w
    z = [np.zeros(2), np.zeros(2)]
    z[1][0] = x[2] ** 2
    return np.sum(y * w) + np.sum(y[0] * x) + z[1][0] * w


def chained_in_loop(x, w):
    y = np.zeros((3, 3))
    for i in range(3):
        y[i][i] = x[i] * w
        y[i][:i] = w
    return np.sum(y @ x)


@pytest.mark.parametrize("fn", [chained_slice, chained_rows, chained_in_loop],
                         ids=lambda f: f.__name__)
def test_chained_element_writes(fn):
    _check(fn, (np.array([0.3, 0.9, 1.0]), 0.5))


@pytest.mark.parametrize("fn, args", [
    (enum_start, (M, V)), (zip_strict, (M, V)), (count_break, (X, W)), (count_in_zip, (X, W)),
    (pairwise, (X, W)), (product_three, (X, W)), (enumerate_count, (X, W)),
    (max_of_list, (Y[:2],)), (extremes_tied, (np.array([1.0, 3.0]),)), (closure_acc, (Y[:2],)),
    (stack_pop, (Y,)), (queue_pop, (Y[:3],)), (pop_middle, (Y[:3],)), (fill_, (Y[:3], 0.5)),
    (copyto_, (Y[:3], 0.5)), (ufunc_out, (Y[:3], 0.5)), (chained_rows, (Y[:3], 0.5)),
    (chained_in_loop, (Y[:3], 0.5)),
], ids=lambda v: getattr(v, "__name__", ""))
def test_forward_mode_matches_central_differences(fn, args):
    """(Away from ties and branch points: Y, not X, whose 2 * X[0] == X[1] ** 2.)"""
    rng = np.random.default_rng(3)
    dirs = tuple(rng.standard_normal(np.shape(a)) if np.ndim(a) else float(rng.standard_normal())
                 for a in args)
    value, tangent = srcgrad.jvp(fn, args, dirs)
    assert_bit_identical(value, pure(fn)(*args))
    h = 1e-6
    plus = pure(fn)(*[a + h * d for a, d in zip(args, dirs)])
    minus = pure(fn)(*[a - h * d for a, d in zip(args, dirs)])
    assert_close(tangent, (plus - minus) / (2 * h))


def test_every_refusal_is_a_srcgrad_error():
    assert issubclass(UnsupportedSyntaxError, SrcGradError)
