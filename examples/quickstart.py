"""srcgrad quick start.

Part 1 prints the gradient code srcgrad generates for a small function and
checks it against finite differences.  Part 2 trains a two-layer perceptron on
the 8x8 handwritten digits in examples/data/ with gradients from
``srcgrad.value_and_grad``.

Run it with ``make demo`` (or ``python examples/quickstart.py``).
"""

import time
from pathlib import Path

import numpy as np

import srcgrad

DATA = Path(__file__).resolve().parent / "data" / "digits.csv.gz"


# ---------------------------------------------------------------------------
# Part 1: look at the generated code
# ---------------------------------------------------------------------------

def loss(W, b, x, y):
    h = np.tanh(x @ W + b)
    return np.mean((h - y) ** 2)


def part1():
    dloss = srcgrad.grad(loss, wrt=(0, 1))
    print("Generated backward code:")
    print(dloss.source)

    rng = np.random.default_rng(0)
    W = rng.normal(size=(3, 2))
    b = rng.normal(size=2)
    x = rng.normal(size=(4, 3))
    y = rng.normal(size=(4, 2))
    gW, gb = dloss(W, b, x, y)

    # Central finite difference on one entry of W and one of b.
    eps = 1e-6
    E = np.zeros_like(W)
    E[1, 0] = eps
    fd_W = (loss(W + E, b, x, y) - loss(W - E, b, x, y)) / (2 * eps)
    e = np.zeros_like(b)
    e[1] = eps
    fd_b = (loss(W, b + e, x, y) - loss(W, b - e, x, y)) / (2 * eps)
    print(f"dL/dW[1,0]: srcgrad {gW[1, 0]:+.8f}   finite difference {fd_W:+.8f}")
    print(f"dL/db[1]:   srcgrad {gb[1]:+.8f}   finite difference {fd_b:+.8f}")
    assert np.isclose(gW[1, 0], fd_W, rtol=1e-5, atol=1e-8)
    assert np.isclose(gb[1], fd_b, rtol=1e-5, atol=1e-8)


# ---------------------------------------------------------------------------
# Part 2: train an MLP on handwritten digits
# ---------------------------------------------------------------------------

def mlp_loss(W1, b1, W2, b2, X, Y):
    """Softmax cross-entropy of a 64-32-10 tanh network, plus L2 on weights."""
    h = np.tanh(X @ W1 + b1)
    logits = h @ W2 + b2
    z = logits - np.max(logits, axis=1, keepdims=True)
    logp = z - np.log(np.sum(np.exp(z), axis=1, keepdims=True))
    nll = -np.mean(np.sum(Y * logp, axis=1))
    l2 = 1e-4 * (np.sum(W1 ** 2) + np.sum(W2 ** 2))
    return nll + l2


def predict(params, X):
    W1, b1, W2, b2 = params
    return np.argmax(np.tanh(X @ W1 + b1) @ W2 + b2, axis=1)


def load_digits():
    data = np.loadtxt(DATA, delimiter=",")
    X = data[:, :64] / 16.0
    y = data[:, 64].astype(int)
    return X, y


def part2():
    rng = np.random.default_rng(1234)

    X, y = load_digits()
    order = rng.permutation(len(X))
    X, y = X[order], y[order]
    n_train = int(0.8 * len(X))
    X_train, y_train = X[:n_train], y[:n_train]
    X_test, y_test = X[n_train:], y[n_train:]
    Y_train = np.eye(10)[y_train]
    print(f"\nDigits: {len(X_train)} training and {len(X_test)} test images, "
          f"{X.shape[1]} pixels each")

    params = [
        rng.normal(0.0, 1.0 / np.sqrt(64), size=(64, 32)),   # W1
        np.zeros(32),                                         # b1
        rng.normal(0.0, 1.0 / np.sqrt(32), size=(32, 10)),   # W2
        np.zeros(10),                                         # b2
    ]
    velocity = [np.zeros_like(p) for p in params]

    step = srcgrad.value_and_grad(mlp_loss, wrt=(0, 1, 2, 3))

    lr, momentum, batch, epochs = 0.1, 0.9, 32, 30
    start = time.perf_counter()
    for epoch in range(1, epochs + 1):
        perm = rng.permutation(n_train)
        total = 0.0
        for i in range(0, n_train, batch):
            idx = perm[i:i + batch]
            value, grads = step(*params, X_train[idx], Y_train[idx])
            total += value * len(idx)
            for p, v, g in zip(params, velocity, grads):
                v *= momentum
                v -= lr * g
                p += v
        if epoch == 1 or epoch % 5 == 0:
            acc = np.mean(predict(params, X_train) == y_train)
            print(f"epoch {epoch:3d}   loss {total / n_train:.4f}   "
                  f"train accuracy {acc:.2%}")
    elapsed = time.perf_counter() - start

    test_acc = np.mean(predict(params, X_test) == y_test)
    print(f"Test accuracy: {test_acc:.2%}  ({elapsed:.1f} s of training)")
    assert test_acc > 0.90, "training did not converge"


if __name__ == "__main__":
    part1()
    part2()
