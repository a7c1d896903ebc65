"""The shared corpus: ordinary NumPy functions every check runs on.

Each entry is a function defined in this file (srcgrad reads its source) and a
factory of inputs inside the function's domain.  ``test_corpus.py``
parametrises every check -- finite differences, the dot-product identity,
value_and_grad, float32, untouched inputs, deterministic source, optimize on
and off -- over this one list, so a new construct is covered by adding one
function here.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

import helpers_module

@dataclass
class Case:
    name: str
    fn: Callable
    make_args: Callable[[np.random.Generator], tuple]
    float32: bool = True        # also checked with float32 inputs


CORPUS: list[Case] = []


def case(make_args, float32=True):
    def register(fn):
        CORPUS.append(Case(fn.__name__, fn, make_args, float32))
        return fn
    return register


def _normal(*shape):
    return lambda rng: rng.standard_normal(shape)


def _args(*factories):
    return lambda rng: tuple(f(rng) for f in factories)


def _positive(*shape):
    return lambda rng: rng.uniform(0.5, 2.0, shape)


def _spd(n):
    def make(rng):
        a = rng.standard_normal((n, n))
        return a @ a.T + n * np.eye(n)
    return make


# -- the corpus ----------------------------------------------------------------

@case(_args(_normal(4, 3), _normal(3), _normal(5, 4), _normal(5, 3)))
def mlp_loss(W, b, x, y):
    h = np.tanh(x @ W + b)
    return np.mean((h - y) ** 2)


@case(_args(_normal(6, 4), lambda rng: np.eye(4)[rng.integers(0, 4, 6)]))
def softmax_cross_entropy(logits, onehot):
    z = logits - np.max(logits, axis=1, keepdims=True)
    logp = z - np.log(np.sum(np.exp(z), axis=1, keepdims=True))
    return -np.mean(np.sum(onehot * logp, axis=1))


@case(_args(_positive(7)))
def elementwise_chain(x):
    a = np.sin(x) * np.cos(x) + np.exp(-x)
    b = np.log1p(x) / np.sqrt(x) - np.expm1(x * 0.1)
    c = np.arctan(a) * np.tanh(b) + np.square(a - b)
    return np.sum(c * np.reciprocal(1.0 + x))


@case(_args(_normal(3, 1), _normal(1, 4), _normal(4)))
def broadcasting(col, row, v):
    m = col * row + v
    n = m / (1.0 + row ** 2)
    return np.sum(n * m) + np.sum(col) * 2.0


@case(_args(_normal(3, 4, 2)))
def reductions(x):
    a = np.sum(x, axis=0)
    b = np.mean(x, axis=(1, 2), keepdims=True)
    c = np.var(x, axis=1)
    d = np.std(x)
    e = np.max(x, axis=2)
    f = np.min(x, axis=-1, keepdims=True)
    return np.sum(a ** 2) + np.sum(b * x) + np.sum(c) + d + np.sum(e * 1.5) + np.sum(f)


@case(_args(_positive(3, 4)))
def products_and_norms(x):
    p = np.prod(x, axis=1)
    n = np.linalg.norm(x)
    r = np.linalg.norm(x, axis=0)
    return np.sum(p) + n + np.sum(r ** 2)


@case(_args(_normal(6, 5)))
def indexing(x):
    a = x[1:4, ::2]
    b = x[-1]
    c = x[:, 0]
    d = x[[0, 2, 2], 1]
    e = x[x > 0.5]
    f = x[1, -2]
    return np.sum(a ** 2) + np.sum(b * c[:5]) + np.sum(d) * 3.0 + np.sum(e) + f


@case(_args(_spd(4), _normal(4), _normal(4, 2)))
def linear_algebra(a, v, m):
    inv = np.linalg.inv(a)
    s = np.linalg.solve(a, v)
    t = np.linalg.solve(a, m)
    sign, logdet = np.linalg.slogdet(a)
    return np.sum(inv) + v @ s + np.sum(t * m) + logdet + np.trace(a) * 0.1 \
        + np.linalg.det(a) * 0.001


@case(_args(_normal(2, 3), _normal(3, 4), _normal(4)))
def contractions(a, b, v):
    e = np.einsum("ij,jk->ik", a, b)
    d = np.dot(a, b @ v)
    o = np.outer(v, v)
    i = np.inner(v, v)
    t = np.tensordot(a, b, axes=1)
    return np.sum(e * t) + np.sum(d ** 2) + np.sum(o) * 0.5 + i + np.sum(np.matmul(a, b))


@case(_args(_normal(2, 6), _normal(2, 6)))
def shape_ops(x, y):
    r = np.reshape(x, (3, 4))
    t = np.transpose(r) @ np.ones(3)
    c = np.concatenate([x, y], axis=0)
    s = np.stack([x, y])
    h = np.hstack([x, y])
    v = np.vstack([x, y])
    f = np.flip(x, axis=1)
    e = np.expand_dims(np.ravel(x), 0)
    q = np.squeeze(e)
    w = np.swapaxes(s, 0, 2)
    m = np.moveaxis(s, 0, -1)
    return (np.sum(t ** 2) + np.sum(c * v) + np.sum(s[1] * f) + np.sum(h) + np.sum(q * q)
            + np.sum(w[0] ** 2) + np.sum(m[..., 0] * x))


@case(_args(_normal(3), _normal(2, 3)))
def tile_repeat_broadcast(v, m):
    t = np.tile(v, 2)
    r = np.repeat(v, 2)
    b = np.broadcast_to(v, (2, 3))
    return np.sum(t * r) + np.sum(b * m)


@case(_args(lambda rng: float(rng.uniform(0.5, 1.5)), lambda rng: float(rng.uniform(0.5, 1.5))))
def python_floats(a, b):
    c = math.sin(a) * math.exp(b) + math.log(a) / math.sqrt(b)
    d = math.tanh(c) + math.atan2(a, b) + a ** 3 - 2.0 * b
    return d * math.cos(a * b) + math.hypot(a, b)


@case(_args(_normal(4), _normal(4)))
def reassignment(x, y):
    h = x * y
    h = h + np.sin(h)
    h *= 2.0
    h -= y
    a, b = h, x
    a, b = b, a
    return np.sum(a * b)


@case(_args(_normal(3, 4)))
def methods(x):
    a = x.sum(axis=0)
    b = x.T @ x
    c = x.reshape(4, 3).mean()
    d = x.dot(x.T)
    e = x.copy().max(axis=1)
    f = x.ravel()
    return np.sum(a) + np.sum(b) + c + np.trace(d) + np.sum(e) + np.sum(f[:3] ** 2) \
        + x.astype(np.float64).std()


@case(_args(lambda rng: float(rng.standard_normal()), _normal(3)))
def array_construction(s, v):
    a = np.array([s, 2.0 * s, v[0]])
    f = np.full((3,), s)
    z = np.zeros_like(v) + np.ones_like(v)
    return np.sum(a * v) + np.sum(f * f) + np.sum(z * v)


@case(_args(_normal(5), _normal(5)))
def selections(x, y):
    a = np.where(x > 0, x * y, y ** 2)
    b = np.maximum(x, y) + np.minimum(x, 0.2)
    c = np.clip(x, -0.5, 0.5)
    d = np.abs(x) + np.hypot(x, y)
    return np.sum(a + b * c + d)


@case(_args(_positive(4)))
def more_ufuncs(x):
    a = np.exp2(x) + np.log2(x) + np.log10(x)
    b = np.arcsin(x / 3.0) + np.arccos(x / 3.0) + np.tan(x / 2.0)
    c = np.sinh(x) * np.cosh(x) + np.power(x, 1.5) + np.power(2.0, x)
    d = np.arctan2(x, 1.0 + x) + np.sign(x) * x
    return np.sum(a * b + c + d)


@case(_args(_normal(3), _normal(3)))
def unused_argument_and_constants(x, y):
    k = np.arange(3) * 2.0
    return np.sum(x * k) + 4.0


@case(_args(_normal(2, 2)), float32=False)
def scalar_output_of_array_ops(a):
    d = np.linalg.det(a + 3.0 * np.eye(2))
    return d ** 2 + a[0, 1] * a[1, 0]


def by_name(name: str) -> Case:
    return next(c for c in CORPUS if c.name == name)


# -- control flow ------------------------------------------------------------------

@case(_args(_normal(3, 3), _normal(3, 2), _normal(5, 2), _normal(3)))
def rnn_tanh(W, U, xs, h0):
    h = h0
    for x in xs:
        h = np.tanh(W @ h * 0.5 + U @ x)
    return np.sum(h ** 2)


@case(_args(_positive(3, 4)))
def newton_sqrt(x):
    """A carried value that keeps its argument's shape (Heron's square root):
    every step's h has x's shape, so the adjoint needs no unbroadcast."""
    h = x
    for i in range(6):
        h = 0.5 * (h + x / h)
    return np.sum(h)


@case(_args(_normal(4), lambda rng: 5))
def loop_over_range(x, n):
    s = 0.0
    for i in range(n):
        s = s + np.sum(np.sin(x * i))
        x = x * 0.9
    return s


@case(_args(lambda rng: float(rng.uniform(0.2, 0.8)), lambda rng: 5))
def float_loop_with_an_int(a, n):
    for i in range(n):
        a = a * 0.9 + math.sin(a) / n
    return a * n


@case(_args(_normal(5)))
def branches(x):
    if np.sum(x) > 0:
        y = np.sin(x)
    elif np.sum(x) > -1:
        y = np.cos(x) * 2.0
    else:
        y = x ** 2
    z = y * 3.0 if np.max(x) > 0 else y - 1.0
    return np.sum(z * x)


@case(_args(_normal(6)))
def branch_inside_loop(x):
    total = 0.0
    for i in range(6):
        if x[i] > 0:
            total = total + x[i] ** 2
        else:
            total = total - np.sin(x[i])
    return total


@case(_args(_positive(3)))
def while_loop(x):
    y = x
    k = 0
    while np.sum(y) < 20.0 and k < 10:
        y = y * 1.5 + np.sqrt(y)
        k += 1
    return np.sum(y)


@case(_args(_normal(8)))
def break_and_continue(x):
    s = 0.0
    for i in range(8):
        if x[i] < -1.5:
            break
        if x[i] < 0:
            continue
        s = s + x[i] * np.exp(-x[i])
    return s + np.sum(x) * 0.1


@case(_args(_normal(4)))
def early_return(x):
    if np.sum(x) > 10:
        return np.sum(x)
    y = np.tanh(x)
    if np.min(y) < -0.99:
        return np.sum(y * 2.0)
    return np.sum(y ** 3)


@case(_args(_normal(5), _normal(5)))
def return_inside_loop(x, y):
    acc = 0.0
    for a, b in zip(x, y):
        acc = acc + a * b
        if acc > 100.0:
            return acc
    return acc * 2.0


@case(_args(_normal(3, 2)))
def nested_loops(m):
    s = 0.0
    for i in range(3):
        row = m[i]
        for j in range(2):
            s = s + row[j] * (i + 1) * np.cos(s)
    return s


@case(_args(_normal(4), _normal(4, 3)))
def enumerate_rows(w, rows):
    out = 0.0
    for i, r in enumerate(rows):
        out = out + np.sum(r * r) * w[i]
    return out


@case(_args(_normal(3)))
def loop_carried_reassignment(x):
    h = x
    for _ in range(3):
        h = h * 2.0
        h = np.sin(h) + h
    return np.sum(h)


# -- in-place updates -----------------------------------------------------------

@case(_args(_normal(3, 3), _normal(4, 3)))
def rows_filled_in_a_loop(W, xs):
    n = xs.shape[0]
    out = np.zeros((n, 3))
    h = np.zeros(3)
    for i in range(n):
        h = np.tanh(W @ h * 0.5 + xs[i])
        out[i] = h * 2.0
    out[0, 1] += 5.0 * np.sum(W)
    out[:, 2] -= xs[:, 0]
    return np.sum(out ** 2)


@case(_args(_normal(5)))
def argument_updated_in_place(x):
    x[0] = x[1] * x[2]
    x[1:] *= 3.0
    x[-1] += np.sin(x[0])
    return np.sum(x ** 2)


@case(_args(_normal(4, 3), _normal(3)))
def column_updates(M, v):
    M = M * 1.0
    for j in range(3):
        M[:, j] -= v[j] * M[:, (j + 1) % 3]
    return np.sum(np.tanh(M))


@case(_args(_normal(4)))
def augmented_assignment_on_arrays(x):
    y = x * 2.0
    y += np.sin(x)
    y *= x
    y /= 2.0
    y **= 2
    return np.sum(y)


@case(_args(_normal(6)))
def masked_and_fancy_updates(x):
    y = np.exp(x)
    y[[0, 2]] = x[[1, 3]] * 2.0
    y[x > 0.5] = 0.0
    return np.sum(y * x)


# -- subroutines ------------------------------------------------------------------

SCALE = 3.0


def _layer(W, x, scale=1.0):
    return np.tanh(W @ x) * scale


def _norms(v):
    return np.sum(v ** 2), np.max(np.abs(v))


def _power(x, n):
    if n <= 1:
        return x
    return x * _power(x, n - 1)


@case(_args(_normal(3, 4), _normal(2, 3), _normal(4)))
def calls_a_function_twice(W1, W2, x):
    h = _layer(W1, x)
    y = _layer(W2, h, scale=2.0)
    return np.sum(y ** 2) * SCALE


@case(_args(_normal(5)))
def calls_a_tuple_returning_function(x):
    sq, peak = _norms(x)
    m, s = helpers_module.split_stats(x)
    return sq * peak + m * s


@case(_args(_normal(4)))
def calls_another_module(x):
    return np.sum(helpers_module.smooth(x) + helpers_module.smooth(x, sharpness=3.0)) * SCALE


@case(_args(_normal(3)))
def bounded_recursion(x):
    return np.sum(_power(x, 4))


@case(_args(_normal(3, 3), _normal(4, 3)))
def call_inside_a_loop(W, xs):
    h = np.zeros(3)
    for i in range(xs.shape[0]):
        h = _layer(W, h + xs[i], scale=0.5)
    return np.sum(h)


# -- closures, lambdas, partial ------------------------------------------------------

def _make_scaled(k):
    def scaled(v):
        return v * k
    return scaled


_TRIPLE = _make_scaled(3.0)
_HALF_LAYER = functools.partial(_layer, scale=0.5)


@case(_args(_normal(3, 3), _normal(3)))
def closures_and_lambdas(W, x):
    k = 2.0

    def inner(v, power=2):
        y = v * k
        if np.sum(y) > 100:
            return y
        return y ** power

    square = lambda v: v * v  # noqa: E731
    a = inner(x)
    b = inner(a * 0.1, power=3) + square(x)
    c = _HALF_LAYER(W, b)
    d = _TRIPLE(c)
    return np.sum(d) + np.sum((lambda z: z * 2.0)(x))


@case(_args(_normal(4)))
def loop_with_break_in_a_local_function(x):
    def accumulate(v):
        total = 0.0
        for i in range(4):
            total = total + v[i] ** 2
            if total > 2.0:
                break
        return total

    y = x * 1.0
    for j in range(2):
        y[j] = accumulate(y) * 0.5
    return accumulate(y) + np.sum(y)


def _weighted_sum(scale, *terms):
    total = 0.0
    for t in terms:
        total = total + np.sum(t) * scale
    return total


@case(_args(_normal(3), _normal(3)))
def calls_with_star_args(x, y):
    return _weighted_sum(2.0, x, y * y, np.sin(x)) + _weighted_sum(0.5, y)


@case(_args(_normal(3), lambda rng: 3, lambda rng: 7))
def non_differentiable_values(x, steps, seed):
    rng = np.random.default_rng(seed)
    noise = rng.standard_normal(3) * 0.1
    mode = "train"
    flag = steps > 2
    n = x.shape[0]
    y = x
    for _ in range(steps):
        if mode == "train" and flag:
            y = np.tanh(y + noise) * (n / 3)
    return np.sum(y ** 2)


@case(_args(_normal(3, 4), lambda rng: float(rng.uniform(0.2, 0.8))))
def view_read_by_the_adjoint_after_an_update(x, s):
    """Found by the fuzzer: t = v[:, ::2] is a view that the adjoint of t * s reads
    after v[:, ::2] = ... overwrote it; v's elements must be restored first."""
    v = np.array(x)
    v[:, ::2] *= np.tanh(s)
    total = np.zeros((3, 4))
    for i, row in enumerate(x):
        total = total + 0.3 * np.tanh(0.1 * np.linalg.norm(v.dot(row)))
    return np.mean(total)


def _pair_with_product(a, b):
    b = a[:-1] @ a[:-1].T
    return b, a


@case(_args(_normal(3, 4)))
def unused_output_of_a_callee(x):
    """Found by the fuzzer: the callee's unused output still needs a cotangent of its
    shape (a matrix product's adjoint cannot take a scalar 0.0)."""
    product, same = _pair_with_product(x, x)
    return np.sum(np.sin(same) * same)


def _constant_pair(a, scale=0.5):
    return 0.1, scale


@case(_args(_normal(2, 3), _normal(3, 4)))
def product_into_a_callee_that_ignores_it(a, b):
    """Found by the fuzzer: the callee gives no cotangent (0.0) for its argument,
    and the product's adjoint must accept that."""
    p = a @ b
    c, k = _constant_pair(p)
    return np.sum(a * b[:, 0]) * c


@case(_args(_normal(3, 4), _normal(4)))
def shape_ops_into_a_callee_that_ignores_them(x, y):
    """Found by the fuzzer: the callee gives no cotangent (0.0) for its argument,
    and every shape operation's adjoint (reshapes, transposes, joins, copies)
    must accept that."""
    total = np.sum(x * x) + np.sum(y)
    for view in (np.reshape(x, (2, 6)), np.ravel(x), x.ravel(), x.flatten(),
                  x.reshape(6, 2), np.squeeze(x[None]), x[None].squeeze(),
                  np.expand_dims(y, 0), np.atleast_1d(y), np.atleast_2d(y),
                  np.transpose(x, (1, 0)), x.transpose(1, 0), x.T, x.mT,
                  np.swapaxes(x, 0, 1), x.swapaxes(0, 1), np.moveaxis(x, 0, 1),
                  np.flip(x, 0), np.stack([y, y], axis=1), np.concatenate([x, x], axis=1),
                  np.hstack([y, y]), np.vstack([x, y]), np.tile(y, 2), np.repeat(y, 2)):
        c, _ = _constant_pair(view)
        total = total * c * 10.0
    return total


@case(_args(_normal(3, 4), lambda rng: 0))
def reshape_before_a_loop_that_does_not_run(x, n):
    """A loop that runs no iteration leaves the cotangent of what it reads at 0.0,
    which the adjoints of the reshape and the stack before it must accept."""
    h = x.reshape(-1, 2)
    s = np.stack([x, x])
    acc = np.sum(x)
    for i in range(n):
        acc = acc + np.sum(h * h) + np.sum(s)
    return acc


@case(_args(_normal(3, 4), _normal(4), _spd(3)))
def reductions_and_products_into_a_callee_that_ignores_them(x, y, m):
    """Found by the fuzzer: the 0.0 of no cotangent reached the adjoints of
    reductions along an axis, cumsum, dot, where and the linear-algebra functions."""
    total = np.sum(x * x) + np.sum(y * m[0, :1])
    keep = np.sum(y, keepdims=True) > -100.0
    for value in (np.sum(x, axis=1), np.max(x, axis=0), np.mean(x, axis=-1), np.var(x, 0),
                  np.cumsum(x, axis=1), np.cumsum(x), x @ x.T, np.dot(x, y), x.dot(y),
                  np.tensordot(x, x, ([1], [1])), np.einsum("ij,j->i", x, y),
                  np.outer(y, y), np.array([y[0], y[1]]), np.where(keep, np.tile(y, 2), 0.0),
                  np.linalg.inv(m), np.linalg.solve(m, x[:, 0]), np.linalg.solve(m, x),
                  np.trace(m)):
        c, _ = _constant_pair(value)
        total = total * c * 10.0
    return total


@case(_args(_normal(3, 4), _normal(4), lambda rng: 0))
def adjoints_after_a_branch_not_taken(x, y, flag):
    """Found by the fuzzer: an adjoint after an `if` that was not taken receives the
    0.0 its cotangent was accumulated from."""
    rows = np.sum(x, axis=1)
    product = x @ y
    stacked = np.stack([y, y])
    acc = np.sum(x)
    if flag > 0:
        acc = acc + np.sum(rows * product) + np.sum(stacked)
    return acc


@case(_args(_normal(3)))
def in_place_updates_of_names_rebound_in_branches(x):
    """Found by the fuzzer: `v += ...` after `v = v + ...` in a branch (normalized
    `t = v + ...; v = t`) was refused because 't' "shares its memory and is read
    afterwards", though the next read of 't' comes after it is assigned afresh."""
    v = x * 1.0
    h = x * 1.0
    for i in range(3):
        if np.sum(v) > 0.0:
            v = v + 0.3 * np.tanh(x)
        else:
            v = v * 0.5
        v += 0.3 * np.sin(v)
        h[i] = np.tanh(h[i] + v[i])
        if np.sum(h) > 0.0:
            h = h + 0.3 * np.tanh(x)
    return np.sum(v * h)


@case(_args(_normal(3, 4), _normal(3, 4)))
def loops_over_enumerate_of_zip(x, y):
    """`enumerate(zip(...))` was refused (no adjoint rule for 'builtins.zip'); so was
    a zip whose pairs are not unpacked."""
    out = np.zeros((3, 4))
    for i, (a, b) in enumerate(zip(x, y)):
        out[i] = np.tanh(b) * 0.5 + np.sum(a) * 0.1
    total = np.sum(out * out)
    for i, pair in enumerate(zip(x, y), 1):
        total = total + np.sum(pair[0] * pair[1]) * i
    for pair in zip(y, x):
        total = total + np.sum(np.sin(pair[0]) * pair[1])
    rows = [np.tanh(a) * b * i for i, (a, b) in enumerate(zip(x, y))]
    return total + np.sum(np.stack(rows) ** 2)


@case(_args(_normal(4)))
def overwrite_in_a_branch_after_one_on_every_path(x):
    """Found by the fuzzer: `v` is bound in both branches of an if/else, then
    overwritten in another branch; its tape's `v = None` initialisation went right
    before that branch and clobbered `v`."""
    if np.sum(x) > 0.0:
        v = np.sin(x)
    else:
        v = np.cos(x)
    w = v * v
    if np.min(x) > -10.0:
        v = x * 2.0
    return np.sum(w * v)


@case(_args(_normal(4)))
def element_assignment_from_the_array_itself(x):
    """Found by the fuzzer: in `v[::-1] = v` the old `v` gets the cotangent of the
    elements written after the rest of `v`'s cotangent lost them (it came out zero)."""
    v = x * 1.0
    v[::-1] = v
    v[1:] = v[:-1] * 2.0
    v[:2] = v[2:]
    return np.sum(np.sin(v) * np.arange(1.0, 5.0))


@case(_args(_normal(3, 4), _normal(4)))
def shape_reads_of_arguments(x, b):
    """unbroadcast/unreduce read `y`, `z` and `w` only for their shapes, which are
    those of the arguments: the adjoint reads `x` and `b` instead (and the
    broadcast `x + b` keeps its own shape read)."""
    y = np.sin(x) * 2.0
    z = y * y + 1.0
    w = np.tanh(b) - 0.5
    s = z + b
    return np.sum(z) + np.sum(w) * np.sum(s) / x.shape[0]


@case(_args(_normal(3, 4), _normal(3, 4)))
def shape_reads_when_an_argument_is_rebound(x, y):
    """`x` is rebound in the loop (to an array of another shape), so nothing is read
    for its shape in its stead; `t` keeps its own shape read."""
    t = np.exp(x) * 0.5
    for _ in range(2):
        x = np.sum(x, axis=0) * y[0]
    return np.sum(t) + np.sum(x * x)


@case(_args(_normal(4, 5), _normal(4, 5)))
def softmax_with_the_max_subtracted(z, w):
    """The row maximum's shift cancels in the softmax: no cotangent for it (see
    simplify.shift_neutral); the gradient must still match finite differences."""
    m = np.max(z, axis=1, keepdims=True)
    e = np.exp(z - m)
    p = e / np.sum(e, axis=1, keepdims=True)
    return np.sum(p * w)


@case(_args(_normal(4, 5), _normal(4, 5)))
def max_subtracted_where_the_shift_matters(z, w):
    """`s * w` sees the shift: the maximum's cotangent is needed here."""
    m = np.max(z, axis=1, keepdims=True)
    s = z - m
    lse = np.log(np.sum(np.exp(s), axis=1, keepdims=True))
    return np.sum((s - lse) * w) + np.sum(s * w)


# -- lambdas, starred expressions, unpacking, builtins on containers (issue 15) ----

def _log_lik(params, x):
    return -np.sum((x - params) ** 2) - 0.1 * np.sum(np.tanh(params) ** 2)


_square = lambda v: v * v


lambda_objective = lambda params, x: -_log_lik(params, x) + np.sum(_square(params))
CORPUS.append(Case("lambda_objective", lambda_objective, _args(_normal(4), _normal(4))))

lambda_first_on_a_line, lambda_second_on_a_line = (
    lambda a, b: np.sum(np.sin(a) * b)), (lambda a, b: np.sum(a * np.cos(b) ** 2))
CORPUS.append(Case("lambda_first_on_a_line", lambda_first_on_a_line,
                   _args(_normal(3), _normal(3))))
CORPUS.append(Case("lambda_second_on_a_line", lambda_second_on_a_line,
                   _args(_normal(3), _normal(3))))


@case(_args(_normal(3, 3), _normal(4, 3)))
def lambdas_in_loops_and_branches(W, xs):
    step = lambda h, x, k=0.5: np.tanh(W @ h * k + x)
    h = np.zeros(3)
    for i in range(xs.shape[0]):
        if i % 2 == 0:
            h = step(h, xs[i])
        else:
            h = step(h, xs[i], k=0.25) + _square(h) * 0.1
    scaled = [(lambda v: v * (j + 1.0))(h) for j in range(2)]
    return np.sum(h ** 2) + np.sum(scaled[1])


def _dynamics(y, t, a, b):
    return -a * y + b * np.sin(t)


def _total_of(*terms):
    return _weighted_sum(1.0, *terms)


@case(_args(_normal(3), _normal(3, 3)))
def starred_calls(y0, W):
    args = (0.5, np.tanh(W[0]))
    y = y0
    for i in range(3):
        t = 0.1 * i
        y = y + 0.1 * _dynamics(y, t, *args)
        if i > 0:
            y = y * _weighted_sum(0.5, *(y, W[i]))
    noise = np.random.RandomState(0).randn(*y0.shape) * 0.01
    parts = [*args, y]
    grid = np.zeros((*W.shape, 2)) + 1.0
    return np.sum(y * noise) + np.sum(parts[1] * parts[2]) + np.sum(grid[..., 0] * W) \
        + _total_of(y, W[1] * y)


@case(_args(_normal(4, 3), _normal(3)))
def starred_targets(rows, v):
    first, *middle, last = rows
    total = np.sum(first * last)
    for m in middle:
        total = total + np.sum(np.tanh(m) * v)
    head, *tail = [v, v * 2.0, np.sin(v)]
    a, *b = (v[0], v[1], v[2])
    for i, (p, *qs) in enumerate([(v, v * v), (v * 3.0, v, rows[0])]):
        total = total + np.sum(p * qs[-1]) * (i + 1)
    return total + np.sum(head * tail[1]) + a * b[1] + len(tail)


@case(_args(_normal(3), _normal(3), _normal(3)))
def nested_unpacking(x, y, z):
    (p, q), r = (x, y * 2.0), z
    [a, (b, c)] = [p * q, (r, x)]
    total = np.sum(a * b + c)
    for (u, (v, w)) in [(x, (y, z)), (y, (z, x))]:
        total = total + np.sum(u * v * w)
    for i, (s, (t, o)) in enumerate(zip(x, zip(y, z))):
        total = total + s * t * o * i
    for (i, s), t in zip(enumerate(x, 1), y):
        total = total + s * t * i
    return total


@case(_args(_normal(3, 2), _normal(3, 2)))
def zip_of_starred_pairs(x, y):
    pairs = [(x[i], y[i] * 2.0) for i in range(3)]
    firsts, seconds = zip(*pairs)
    total = np.sum(np.stack(firsts) * np.stack(seconds))
    for a, b in zip(*pairs[1:]):
        total = total + np.sum(np.sin(a) * b)
    return total


@case(_args(_normal(3), _normal(3), _normal(3)))
def builtins_on_containers(w, b, x):
    params = {"w": w, "b": b, "a": x * 0.5}
    total = 0.0
    for name in sorted(params):
        total = total + np.sum(params[name] ** 2) * len(name)
    hs = list(map(lambda v: np.tanh(v) * 2.0, [w, b]))
    total = total + np.sum(hs[0] * hs[1]) + sum(map(_square, [w[0], b[1]]))
    total = total + sum(map(np.multiply, w, x))
    for u, v, s in zip(w, b, x):
        total = total + u * v * s
    triples = list(zip(w, b, x))
    pairs = list(enumerate(x))
    acc = 0.0
    for i in reversed(range(3)):
        acc = acc * 0.5 + x[i]
    for v in reversed([w, b]):
        acc = acc * 0.9 + np.sum(v) * 0.3
    if any(x > 10.0) or not all(np.isfinite(w)):
        total = total * 0.0
    ok = all([np.all(np.isfinite(v)) for v in (w, b)])
    scale = 1.0 if ok else 0.0
    return (total + acc + triples[1][0] * triples[2][2] + pairs[2][1] * pairs[2][0]) * scale


DEBUG = False


@case(_args(_normal(2, 3), _normal(3)))
def validation_and_unreachable_code(x, v):
    if x.ndim != 2:
        raise ValueError(f"expected a matrix, got shape {x.shape}")
    if x.shape[1] != v.shape[0]:
        raise ValueError("shapes do not match")
    if DEBUG:
        with open("debug.log", "a") as log:
            log.write(str(x))
    if False:
        try:
            x = x * 2.0
        finally:
            pass
    total = 0.0
    for row in x:
        if not np.all(np.isfinite(row)):
            raise FloatingPointError("not finite")
        total = total + np.sum(np.tanh(row) * v)
    return total


def _softplus(z):
    return np.log1p(np.exp(z))


def _net(params, x, nonlinearity=np.tanh, last=_softplus):
    h = x
    for W, b in params:
        h = nonlinearity(W @ h + b)
    return last(h)


@case(_args(_normal(3, 3), _normal(3), _normal(2, 3), _normal(3)))
def function_valued_defaults(W1, b1, W2, x, act=np.sin):
    """A parameter whose default is a function, called in the body: the code is
    specialised on the default (a guard refuses another function passed there)."""
    params = [(W1, b1), (W2, b1[:2])]
    return np.sum(_net(params, x)) + np.sum(act(x * W1[0])) + np.sum(_net(params[:1], x))


@case(_args(_normal(3), _normal(2, 3)))
def dict_views_as_values(w, m):
    params = {"w": w, "m": m, "b": w * 0.5}
    total = 0.0
    for name, value in sorted(params.items()):
        total = total * 0.5 + np.sum(np.tanh(value) * w) * len(name)
    names, values = zip(*sorted(params.items()))
    last = list(params.values())[-1]
    return total + np.sum(values[1] * last) + len(list(params.keys())) * np.sum(values[0])


@case(_args(_normal(4, 5), _normal(5, 5), _normal(6, 3, 4), _normal(3, 5)))
def rnn_steps(W, U, xs, h0):
    """A recurrent loop over the rows of xs whose steps all see one shape: the
    adjoint loop runs without its shape checks (optimize/steady_loops.py)."""
    h = h0
    for t in range(xs.shape[0]):
        h = np.tanh(xs[t] @ W + h @ U)
    return np.sum(h * h)
