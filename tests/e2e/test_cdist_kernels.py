"""``scipy.spatial.distance.cdist`` (review s37 R5-21): the usual way to write
an RBF kernel, ``np.exp(-cdist(X, Y, "sqeuclidean"))``, was refused
("no adjoint rule for 'scipy.spatial.distance.cdist'").  Rules for the
'euclidean' and 'sqeuclidean' metrics (rules/scipy_spatial.py); any other
metric is refused as the code runs, naming it.  ``squareform(pdist(X))``
(the pairwise form) too.
"""

from __future__ import annotations

import numpy as np
import pytest
from numeric import assert_close, check_every_policy

import srcgrad

distance = pytest.importorskip("scipy.spatial.distance")

RS = np.random.RandomState(0)
Y = RS.randn(3, 2)
T = RS.randn(3)
X = RS.randn(4, 2)


def rbf_fit(x):
    K = np.exp(-distance.cdist(x, Y, "sqeuclidean") / 2.0)
    return np.sum((K @ T) ** 2)


def lengthscales(theta):
    total = 0.0
    for k in range(2):
        scaled = X * np.exp(theta[k])
        D = distance.cdist(scaled, scaled[:2], metric="euclidean")
        total = total + np.sum(np.exp(-D) * (k + 1))
    return total


def pairwise_kernel(x):
    K = np.exp(-distance.squareform(distance.pdist(x, "sqeuclidean")) / 2.0)
    return np.sum((K @ np.arange(4.0)) ** 2) + np.sum(distance.pdist(x) ** 3)


def condensed_again(x):
    M = np.exp(-distance.squareform(distance.pdist(x)))
    total = 0.0
    for k in range(2):
        total = total + np.sum(distance.squareform(M * (k + 1), checks=False) ** 2)
    return total


def manhattan(x):
    return np.sum(distance.cdist(x, Y, "cityblock"))


@pytest.mark.parametrize("fn, arg", [(rbf_fit, X), (lengthscales, np.array([0.1, -0.4])),
                                     (pairwise_kernel, X), (condensed_again, X)],
                         ids=["rbf_fit", "lengthscales", "pairwise_kernel", "condensed_again"])
def test_kernels_written_with_cdist(fn, arg):
    check_every_policy(fn, (arg,), 0)


@pytest.mark.parametrize("fn", [rbf_fit, pairwise_kernel], ids=lambda f: f.__name__)
def test_hvp_of_a_kernel(fn):
    v = np.linspace(-1.0, 1.0, X.size).reshape(X.shape)
    gradient = srcgrad.grad(fn)
    eps = 1e-6
    want = (gradient(X + eps * v) - gradient(X - eps * v)) / (2 * eps)
    assert_close(srcgrad.hvp(fn)(X, v), want, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("mode", ["grad", "jvp"])
def test_another_metric_is_refused_naming_it(mode):
    with pytest.raises(srcgrad.MissingRuleError, match="the metric 'cityblock' has no "
                                                        "derivative rule"):
        if mode == "grad":
            srcgrad.grad(manhattan)(X)
        else:
            srcgrad.jvp(manhattan, (X,), (X,))
