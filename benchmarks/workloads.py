"""Benchmark workloads (issue 7), each written once as plain NumPy source.

Every workload has

* a loss function in plain NumPy / ``math`` -- what srcgrad differentiates
  (and what autograd / jax / torch differentiate when they are installed);
* a hand-written gradient: the NumPy code a careful person writes by hand,
  reusing forward values (``1 - h*h`` for tanh, ``e`` for exp, ...) but with no
  in-place tricks, so that "ratio 1.0" means "as fast as ordinary hand-written
  NumPy";
* ``make_args(rng)``, the arguments, and ``wrt``, the differentiated positions.

The functions must live in a file: srcgrad reads their source with ``inspect``.
Nothing here imports srcgrad.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

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


def mlp_hand(W1, b1, W2, b2, x, y):
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


def rnn_hand(W, U, xs, h0):
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


def scalar_hand(a, b):
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


def scalar_args(rng):
    return (float(rng.uniform(0.2, 1.0)), float(rng.uniform(0.2, 1.0)))


# --- 4. chain of 1024x1024 matrix products with tanh ---------------------------------


def chain_loss(W1, W2, W3, x):
    """Three 1024x1024 layers h = tanh(h @ W_i), float64; loss sum(h)."""
    h = np.tanh(x @ W1)
    h = np.tanh(h @ W2)
    h = np.tanh(h @ W3)
    return np.sum(h)


def chain_hand(W1, W2, W3, x):
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


def chain_args(rng):
    n = 1024
    Ws = [rng.standard_normal((n, n)) / np.sqrt(n) for _ in range(3)]
    x = rng.standard_normal((n, n))
    return (*Ws, x)


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


def elementwise_hand(x):
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


def elementwise_args(rng):
    return (rng.uniform(-1.0, 1.0, 1_000_000),)


# --- the suite ----------------------------------------------------------------------


@dataclass
class Workload:
    name: str
    fn: Callable
    hand: Callable
    make_args: Callable
    wrt: tuple
    target: float            # issue 7: ratio srcgrad / hand-written to reach
    repeats: int             # timed repetitions of each contestant
    inner: int = 1           # calls per repetition (for fast workloads)
    rtol: float = 1e-6
    atol: float = 1e-9
    description: str = ""
    extra: dict = field(default_factory=dict)


WORKLOADS = [
    Workload("mlp", mlp_loss, mlp_hand, mlp_args, wrt=(0, 1, 2, 3), target=1.05,
             repeats=61, inner=5,
             description="2-layer MLP, batch 128, 784-256-10, tanh, softmax x-entropy"),
    Workload("rnn", rnn_loss, rnn_hand, rnn_args, wrt=(0, 1), target=1.3,
             repeats=61, inner=5,
             description="tanh RNN, hidden 32, T=50, batch 8, input 16"),
    Workload("scalar_loop", scalar_loop, scalar_hand, scalar_args, wrt=(0, 1), target=1.5,
             repeats=61, inner=20,
             description="200 iterations of math.sin/math.cos on two Python floats"),
    Workload("elementwise", elementwise_loss, elementwise_hand, elementwise_args, wrt=(0,),
             target=1.05, repeats=21, inner=1,
             description="30-op elementwise chain on 1e6 float64"),
    Workload("matrix_chain", chain_loss, chain_hand, chain_args, wrt=(0, 1, 2), target=2.05,
             repeats=7, inner=1, rtol=1e-7, atol=1e-7,
             description="3 layers tanh(h @ W), 1024x1024 float64"),
]


# --- the cached-call overhead benchmark --------------------------------------------


def trivial(x):
    """The cheapest differentiable function: what remains is srcgrad's wrapper."""
    return x * 2.0
