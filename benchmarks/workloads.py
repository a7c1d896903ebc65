"""Benchmark workloads (issues 7 and 16), each written once as plain NumPy source.

Every workload has

* a loss function in plain NumPy / ``math`` -- what srcgrad differentiates
  (and what autograd / jax / torch differentiate when they are installed);
* a careful hand-written gradient (issue 16): the best plain NumPy can do --
  one batched product where a loop would make many, in-place updates into
  buffers that are read no more, no value computed that the gradient does not
  read, the structure of the loss exploited (the cotangent of ``np.sum`` is a
  broadcast scalar: ``ones @ C.T`` is a row sum).  "Ratio 1.0" means "as fast as
  a careful person's NumPy";
* for some, also the naive hand gradient the suite used before (issue 7): the
  textbook reverse sweep with ordinary temporaries, kept to show the gap;
* ``make_args(rng)``, the arguments, and ``wrt``, the differentiated positions.

The functions must live in a file: srcgrad reads their source with ``inspect``.
Nothing here imports srcgrad.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

# --- 1. two-layer MLP: batch 128, 784-256-10, tanh, softmax cross-entropy --------------


def mlp_loss(W1, b1, W2, b2, x, y):
    """Mean softmax cross-entropy of a 784-256-10 tanh MLP; ``y`` is one-hot."""
    h = np.tanh(x @ W1 + b1)
    z = h @ W2 + b2
    m = np.max(z, axis=1, keepdims=True)
    s = z - m
    lse = np.log(np.sum(np.exp(s), axis=1, keepdims=True))
    logp = s - lse
    return -np.sum(y * logp) / x.shape[0]


def mlp_naive(W1, b1, W2, b2, x, y):
    h = np.tanh(x @ W1 + b1)
    z = h @ W2 + b2
    e = np.exp(z - np.max(z, axis=1, keepdims=True))
    p = e / np.sum(e, axis=1, keepdims=True)
    dz = (p - y) / x.shape[0]
    dW2 = h.T @ dz
    db2 = np.sum(dz, axis=0)
    da = (dz @ W2.T) * (1 - h * h)
    dW1 = x.T @ da
    db1 = np.sum(da, axis=0)
    return dW1, db1, dW2, db2


def mlp_hand(W1, b1, W2, b2, x, y):
    n = x.shape[0]
    h = x @ W1
    h += b1
    np.tanh(h, out=h)
    z = h @ W2
    z += b2
    z -= z.max(axis=1, keepdims=True)
    np.exp(z, out=z)
    s = z.sum(axis=1, keepdims=True)
    s *= n
    z /= s                       # softmax / n
    z -= y * (1.0 / n)           # dz = (p - y) / n: every row of the one-hot y sums to 1
    dW2 = h.T @ z
    db2 = z.sum(axis=0)
    da = z @ W2.T
    h *= h                       # h is read no more: 1 - h^2 in its buffer
    np.subtract(1.0, h, out=h)
    da *= h
    dW1 = x.T @ da
    db1 = da.sum(axis=0)
    return dW1, db1, dW2, db2


def mlp_args(rng):
    x = rng.standard_normal((128, 784))
    y = np.eye(10)[rng.integers(0, 10, 128)]
    W1 = rng.standard_normal((784, 256)) / np.sqrt(784)
    b1 = 0.1 * rng.standard_normal(256)
    W2 = rng.standard_normal((256, 10)) / np.sqrt(256)
    b2 = 0.1 * rng.standard_normal(10)
    return (W1, b1, W2, b2, x, y)


# --- 2. tanh RNN: hidden 32, T=50, batch 8, input 16 ---------------------------------


def rnn_loss(W, U, xs, h0):
    """Sum of squares of the final hidden state of h = tanh(x_t W + h U)."""
    h = h0
    for t in range(xs.shape[0]):
        h = np.tanh(xs[t] @ W + h @ U)
    return np.sum(h * h)


def rnn_naive(W, U, xs, h0):
    hs = [h0]
    h = h0
    for t in range(xs.shape[0]):
        h = np.tanh(xs[t] @ W + h @ U)
        hs.append(h)
    dW = np.zeros_like(W)
    dU = np.zeros_like(U)
    dh = 2 * h
    for t in range(xs.shape[0] - 1, -1, -1):
        h = hs[t + 1]
        da = dh * (1 - h * h)
        dW += xs[t].T @ da
        dU += hs[t].T @ da
        dh = da @ U.T
    return dW, dU


def rnn_hand(W, U, xs, h0):
    T, B, I = xs.shape
    H = U.shape[0]
    x2 = xs.reshape(T * B, I)
    hs = np.empty((T + 1, B, H))          # every hidden state, h0 first
    hs[0] = h0
    np.matmul(x2, W, out=hs[1:].reshape(T * B, H))   # x_t W of all steps: one product
    dot, tanh = np.dot, np.tanh
    for t in range(T):
        h = hs[t + 1]
        h += dot(hs[t], U)
        tanh(h, out=h)
    das = hs[1:] * hs[1:]                 # tanh' of all steps at once, in the (T, B, H)
    np.subtract(1.0, das, out=das)        # array that then holds the cotangents
    dh = 2.0 * hs[T]
    UT = U.T
    for t in range(T - 1, 0, -1):
        da = das[t]
        da *= dh                          # pre-activation cotangent of step t
        dh = dot(da, UT)
    das[0] *= dh                          # (h0 is not differentiated: no dh for it)
    d2 = das.reshape(T * B, H)
    return x2.T @ d2, hs[:T].reshape(T * B, H).T @ d2   # both weights: one product each


def rnn_args(rng):
    xs = rng.standard_normal((50, 8, 16))
    h0 = np.zeros((8, 32))
    W = rng.standard_normal((16, 32)) / 4
    U = rng.standard_normal((32, 32)) / np.sqrt(32)
    return (W, U, xs, h0)


# --- 3. scalar loop on Python floats: 200 iterations of math.sin / math.cos ----------


def scalar_loop(a, b):
    """Two coupled Python floats updated 200 times with math.sin / math.cos."""
    for i in range(200):
        a = a + 0.1 * math.sin(b)
        b = b + 0.1 * math.cos(a)
    return a * b


def scalar_naive(a, b):
    a_s = []
    b_s = []
    for i in range(200):
        b_s.append(b)
        a = a + 0.1 * math.sin(b)
        a_s.append(a)
        b = b + 0.1 * math.cos(a)
    ga = b
    gb = a
    for i in range(199, -1, -1):
        # b_new = b + 0.1 cos(a_new)
        ga = ga - gb * 0.1 * math.sin(a_s[i])
        # a_new = a + 0.1 sin(b_old)
        gb = gb + ga * 0.1 * math.cos(b_s[i])
    return ga, gb


def scalar_hand(a, b):
    sin, cos = math.sin, math.cos
    sa = [0.0] * 200                      # the tape holds what the reverse sweep reads:
    cb = [0.0] * 200                      # sin(a_new) and cos(b_old), preallocated
    for i in range(200):
        cb[i] = cos(b)
        a += 0.1 * sin(b)
        sa[i] = sin(a)
        b += 0.1 * cos(a)
    ga, gb = b, a
    for s, c in zip(reversed(sa), reversed(cb)):
        ga -= 0.1 * gb * s
        gb += 0.1 * ga * c
    return ga, gb


def scalar_args(rng):
    return (float(rng.uniform(0.2, 1.0)), float(rng.uniform(0.2, 1.0)))


# --- 4. chain of 1024x1024 matrix products with tanh ---------------------------------


def chain_loss(W1, W2, W3, x):
    """Three 1024x1024 layers h = tanh(h @ W_i), float64; loss sum(h)."""
    h = np.tanh(x @ W1)
    h = np.tanh(h @ W2)
    h = np.tanh(h @ W3)
    return np.sum(h)


def chain_naive(W1, W2, W3, x):
    h1 = np.tanh(x @ W1)
    h2 = np.tanh(h1 @ W2)
    h3 = np.tanh(h2 @ W3)
    d3 = 1 - h3 * h3
    dW3 = h2.T @ d3
    d2 = (d3 @ W3.T) * (1 - h2 * h2)
    dW2 = h1.T @ d2
    d1 = (d2 @ W2.T) * (1 - h1 * h1)
    dW1 = x.T @ d1
    return dW1, dW2, dW3


def chain_hand(W1, W2, W3, x):
    h1 = x @ W1
    np.tanh(h1, out=h1)
    h2 = h1 @ W2
    np.tanh(h2, out=h2)
    d3 = h2 @ W3
    np.tanh(d3, out=d3)
    d3 *= d3                    # the cotangent of sum is 1: d3 = 1 - h3^2
    np.subtract(1.0, d3, out=d3)
    dW3 = h2.T @ d3
    d2 = d3 @ W3.T
    h2 *= h2
    np.subtract(1.0, h2, out=h2)
    d2 *= h2
    dW2 = h1.T @ d2
    d1 = d2 @ W2.T
    h1 *= h1
    np.subtract(1.0, h1, out=h1)
    d1 *= h1
    dW1 = x.T @ d1
    return dW1, dW2, dW3


def chain_args(rng):
    n = 1024
    Ws = [rng.standard_normal((n, n)) / np.sqrt(n) for _ in range(3)]
    x = rng.standard_normal((n, n))
    return (*Ws, x)


# --- 4b. sum(tanh(A @ B) @ C), 1024x1024 (issue 16) ----------------------------------


def tanh_chain_loss(A, B, C):
    """sum(tanh(A @ B) @ C) for 1024x1024 float64 A, B, C."""
    return np.sum(np.tanh(A @ B) @ C)


def tanh_chain_naive(A, B, C):
    X = np.tanh(A @ B)
    dY = np.ones((A.shape[0], C.shape[1]))
    dC = X.T @ dY
    dX = dY @ C.T
    dZ = dX * (1 - X * X)
    return dZ @ B.T, A.T @ dZ, dC


def tanh_chain_hand(A, B, C):
    # the cotangent of sum(X @ C) is a broadcast 1: X.T @ ones and ones @ C.T are
    # sums, so three products (A @ B and the two of the tanh's adjoint), not six
    X = A @ B
    np.tanh(X, out=X)
    dC = np.empty_like(C)
    dC[...] = X.sum(axis=0)[:, None]     # X.T @ ones: X's column sums, repeated
    X *= X
    np.subtract(1.0, X, out=X)
    X *= C.sum(axis=1)                   # ones @ C.T: C's row sums, on every row
    return X @ B.T, A.T @ X, dC


def tanh_chain_args(rng):
    n = 1024
    return tuple(rng.standard_normal((n, n)) / np.sqrt(n) for _ in range(3))


# --- 5. 30-op elementwise chain on 1e6 floats ---------------------------------------


def elementwise_loss(x):
    """30 elementwise operations (plus the final sum) on 1e6 float64s."""
    a = np.sin(x)           # 1
    b = np.exp(a)           # 2
    c = a * b               # 3
    d = c + x               # 4
    e = np.tanh(d)          # 5
    f = e * x               # 6
    g = np.cos(f)           # 7
    h = g + 2.0             # 8
    i = np.log(h)           # 9
    j = i * e               # 10
    k = j - a               # 11
    l = k * k               # 12
    m = np.sqrt(l + 1.0)    # 13, 14
    n = m / h               # 15
    o = np.exp(-n)          # 16, 17
    p = o * c               # 18
    q = np.sin(p)           # 19
    r = q + d               # 20
    s = np.tanh(r)          # 21
    t = s * s               # 22
    u = t + g               # 23
    v = u * 0.5             # 24
    w = np.cos(v)           # 25
    z = w * b               # 26
    y = z + k               # 27
    aa = np.sin(y)          # 28
    bb = aa * m             # 29
    cc = bb + s             # 30
    return np.sum(cc)


def elementwise_naive(x):
    a = np.sin(x)
    b = np.exp(a)
    c = a * b
    d = c + x
    e = np.tanh(d)
    f = e * x
    g = np.cos(f)
    h = g + 2.0
    i = np.log(h)
    j = i * e
    k = j - a
    l = k * k
    m = np.sqrt(l + 1.0)
    n = m / h
    o = np.exp(-n)
    p = o * c
    q = np.sin(p)
    r = q + d
    s = np.tanh(r)
    t = s * s
    u = t + g
    v = u * 0.5
    w = np.cos(v)
    z = w * b
    y = z + k
    # reverse sweep: dcc = 1
    dy = np.cos(y) * m                    # bb = sin(y) * m
    dm = np.sin(y)
    ds = 1.0                              # cc = bb + s
    dk = dy                               # y = z + k
    dz = dy
    dw = dz * b                           # z = w * b
    db = dz * w
    dv = -np.sin(v) * dw                  # w = cos(v)
    du = 0.5 * dv                         # v = u * 0.5
    dg = du                               # u = t + g
    ds = ds + du * 2 * s                  # t = s * s
    dr = ds * (1 - s * s)                 # s = tanh(r)
    dd = dr                               # r = q + d
    dp = dr * np.cos(p)                   # q = sin(p)
    do = dp * c                           # p = o * c
    dc = dp * o
    dn = -do * o                          # o = exp(-n)
    dm = dm + dn / h                      # n = m / h
    dh = -dn * n / h
    dk = dk + dm * k / m                  # m = sqrt(k*k + 1)
    dj = dk                               # k = j - a
    da = -dk
    di = dj * e                           # j = i * e
    de = dj * i
    dh = dh + di / h                      # i = log(h)
    dg = dg + dh                          # h = g + 2
    df = -np.sin(f) * dg                  # g = cos(f)
    de = de + df * x                      # f = e * x
    dx = df * e
    dd = dd + de * (1 - e * e)            # e = tanh(d)
    dc = dc + dd                          # d = c + x
    dx = dx + dd
    da = da + dc * b                      # c = a * b
    db = db + dc * a
    da = da + db * b                      # b = exp(a)
    dx = dx + da * np.cos(x)              # a = sin(x)
    return (dx,)


def elementwise_hand(x):
    # forward: only what the reverse sweep reads (aa, bb, cc are not needed)
    a = np.sin(x)
    b = np.exp(a)
    c = a * b
    d = c + x
    e = np.tanh(d)
    f = e * x
    g = np.cos(f)
    h = g + 2.0
    i = np.log(h)
    k = i * e
    k -= a                              # k = j - a with j = i * e
    m = k * k
    m += 1.0
    np.sqrt(m, out=m)
    n = m / h
    o = np.negative(n)
    np.exp(o, out=o)
    p = o * c
    s = np.sin(p)
    s += d                              # r = q + d
    np.tanh(s, out=s)
    v = s * s
    v += g
    v *= 0.5
    w = np.cos(v)
    y = w * b
    y += k
    # reverse sweep (cc = sin(y) m + s, dcc = 1); each cotangent goes into the
    # buffer of a value read no more
    dm = np.sin(y)
    dy = np.cos(y, out=y)
    dy *= m                             # = dk = dz
    dw = dy * b
    db = w
    db *= dy
    dg = np.sin(v, out=v)
    dg *= dw
    dg *= -0.5                          # = du = dv / 2
    ds = np.multiply(s, dg, out=dw)
    ds *= 2.0
    ds += 1.0
    dd = s
    dd *= s
    np.subtract(1.0, dd, out=dd)
    dd *= ds                            # dr = ds (1 - s^2) = dd
    dp = np.cos(p, out=p)
    dp *= dd
    dc = o
    dc *= dp                            # dc = dp o
    dnn = np.multiply(dc, c, out=dp)    # -dn = dp c o
    dnn /= h
    dm -= dnn                           # dm += dn / h
    dh = dnn
    dh *= n                             # dh = -dn n / h
    dk = dm
    dk *= k
    dk /= m
    dk += dy
    di = np.multiply(dk, e, out=n)
    di /= h
    dh += di                            # dh += di / h
    de = i
    de *= dk
    dg += dh
    dfn = np.sin(f, out=f)
    dfn *= dg                           # -df
    dx = np.multiply(dfn, e, out=dg)
    np.negative(dx, out=dx)             # dx = df e
    dfn *= x
    de -= dfn                           # de += df x
    e *= e
    np.subtract(1.0, e, out=e)
    e *= de
    dd += e                             # dd += de (1 - e^2)
    dx += dd
    dc += dd
    da = np.multiply(dc, b, out=h)
    da -= dk                            # da = -dk + dc b
    dc *= a
    db += dc                            # db += dc a
    db *= b
    da += db                            # da += db b
    np.cos(x, out=a)
    a *= da
    dx += a
    return (dx,)


def elementwise_args(rng):
    return (rng.uniform(-1.0, 1.0, 1_000_000),)


# --- the suite ----------------------------------------------------------------------


@dataclass
class Workload:
    name: str
    fn: Callable
    hand: Callable           # the careful hand-written gradient: ratios are against it
    make_args: Callable
    wrt: tuple
    target: float            # ratio srcgrad / careful hand gradient to reach
    repeats: int             # timed repetitions of each contestant
    inner: int = 1           # calls per repetition (for fast workloads)
    rtol: float = 1e-6
    atol: float = 1e-9
    description: str = ""
    naive: Callable | None = None   # the textbook hand gradient, timed for comparison
    issue: int = 16          # the issue whose target ``target`` is
    extra: dict = field(default_factory=dict)


WORKLOADS = [
    Workload("mlp", mlp_loss, mlp_hand, mlp_args, wrt=(0, 1, 2, 3), target=0.95,
             repeats=41, inner=5, naive=mlp_naive,
             description="2-layer MLP, batch 128, 784-256-10, tanh, softmax x-entropy"),
    Workload("rnn", rnn_loss, rnn_hand, rnn_args, wrt=(0, 1), target=1.0,
             repeats=41, inner=5, naive=rnn_naive,
             description="tanh RNN, hidden 32, T=50, batch 8, input 16"),
    Workload("scalar_loop", scalar_loop, scalar_hand, scalar_args, wrt=(0, 1), target=1.0,
             repeats=41, inner=20, naive=scalar_naive,
             description="200 iterations of math.sin/math.cos on two Python floats"),
    Workload("elementwise", elementwise_loss, elementwise_hand, elementwise_args, wrt=(0,),
             target=1.0, repeats=11, inner=1, naive=elementwise_naive,
             description="30-op elementwise chain on 1e6 float64"),
    Workload("tanh_chain", tanh_chain_loss, tanh_chain_hand, tanh_chain_args, wrt=(0, 1, 2),
             target=1.05, repeats=7, inner=1, rtol=1e-7, atol=1e-7, naive=tanh_chain_naive,
             description="sum(tanh(A @ B) @ C), A, B, C 1024x1024 float64"),
    Workload("matrix_chain", chain_loss, chain_hand, chain_args, wrt=(0, 1, 2), target=2.05,
             repeats=3, inner=1, rtol=1e-7, atol=1e-7, naive=chain_naive, issue=7,
             description="3 layers tanh(h @ W), 1024x1024 float64"),
]


# --- gradient time / function time over sizes (issue 16, item 5) ---------------------
#
# Loops that index the array being differentiated.  The cheap gradient principle
# says a gradient costs a small constant times the function, whatever n is; an
# adjoint that rebuilds a full-size cotangent per iteration is quadratic instead.


def index_loop(X, w):
    """sum_i tanh(X[i] @ w) by a loop over row numbers."""
    s = 0.0
    for i in range(X.shape[0]):
        s = s + np.tanh(X[i] @ w)
    return s


def iter_loop(X, w):
    """The same by a loop over the rows themselves."""
    s = 0.0
    for x in X:
        s = s + np.tanh(x @ w)
    return s


def conv_loop(x, w):
    """A 1-D convolution over slices of a signal, through tanh, summed."""
    k = w.shape[0]
    s = 0.0
    for i in range(x.shape[0] - k):
        s += np.tanh(x[i:i + k] @ w)
    return s


def append_loop(X, w):
    """The same, each step's value appended to a list, stacked and summed after
    the loop: the adjoint pops the list's cotangent once per step."""
    ys = []
    for i in range(X.shape[0]):
        ys.append(np.tanh(X[i] @ w))
    return np.sum(np.stack(ys))


def extend_loop(X, w):
    """The same with ``ys += [v]``, which Python runs in place."""
    ys = []
    for i in range(X.shape[0]):
        ys += [np.tanh(X[i] @ w)]
    return np.sum(np.stack(ys))


def rows_args(rng, n):
    return (rng.standard_normal((n, 32)), rng.standard_normal(32) / 6)


def signal_args(rng, n):
    return (rng.standard_normal(n), rng.standard_normal(32) / 6)


@dataclass
class Scaling:
    name: str
    fn: Callable
    make_args: Callable      # (rng, n) -> arguments
    sizes: tuple
    description: str
    wrt: tuple = (0, 1)
    target: float = 5.0      # gradient time / function time, at every n


SCALING = [
    Scaling("index_loop", index_loop, rows_args, (1000, 4000, 16000),
            "for i in range(n): s = s + np.tanh(X[i] @ w), X n x 32"),
    Scaling("iter_loop", iter_loop, rows_args, (1000, 4000, 16000),
            "for x in X: s = s + np.tanh(x @ w), X n x 32"),
    Scaling("append_loop", append_loop, rows_args, (1000, 4000, 16000),
            "ys.append(np.tanh(X[i] @ w)) for each row, then np.sum(np.stack(ys))"),
    Scaling("extend_loop", extend_loop, rows_args, (1000, 4000, 16000),
            "ys += [np.tanh(X[i] @ w)] for each row, then np.sum(np.stack(ys))"),
    Scaling("conv_loop", conv_loop, signal_args, (3000, 10000, 30000),
            "for i in range(n - k): s += np.tanh(x[i:i+k] @ w), k = 32"),
]


# --- peak memory of a checkpointed loop (issue 16, item 7) ---------------------------


def revolve_rnn(W, xs):
    """A 64-wide tanh RNN, the loop of tests/memory/test_lazy_schedules.py."""
    h = np.zeros(64)
    for t in range(xs.shape[0]):
        h = np.tanh(W @ h + xs[t])
    return np.sum(h)


# --- the cached-call overhead benchmark --------------------------------------------


def trivial(x):
    """The cheapest differentiable function: what remains is srcgrad's wrapper."""
    return x * 2.0
