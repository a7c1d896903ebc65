"""An argument of a user's ndarray subclass that defines its own operator
(``__pow__`` returning ten times the power, ``__mul__``, ``__array_ufunc__``)
was differentiated with ndarray's rules: [0.6, -1, 1.8] where differences give
[6, -10, 18], silently (review s34 R2-16b).  Refused now, naming the argument
and the method, located at the function; a subclass that only adds methods or
carries metadata, np.memmap and np.recarray fields are differentiated as before.
"""

from __future__ import annotations

import numpy as np
import pytest
from numeric import assert_close, numeric_grad

import srcgrad
from srcgrad.errors import NonDifferentiableError

X = np.array([0.3, -0.5, 0.9])


def squares(v):
    return np.sum(v ** 2)


class Scaled(np.ndarray):
    def __pow__(self, p):
        return np.asarray(self) ** p * 10.0


class Doubling(np.ndarray):
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        plain = [np.asarray(i) if isinstance(i, Doubling) else i for i in inputs]
        return 2.0 * getattr(ufunc, method)(*plain, **kwargs)


class Summing(np.ndarray):
    def sum(self, *args, **kwargs):
        return 3.0 * np.asarray(self).sum(*args, **kwargs)


class Tagged(np.ndarray):  # metadata only: computes as ndarray does
    def __array_finalize__(self, obj):
        self.tag = getattr(obj, "tag", "none")

    def describe(self):
        return f"tagged {self.tag}"


class Plain(np.ndarray):
    pass


@pytest.mark.parametrize("kind, method", [(Scaled, "__pow__"), (Doubling, "__array_ufunc__"),
                                          (Summing, "sum")], ids=lambda k: str(k))
@pytest.mark.parametrize("transform", ["grad", "value_and_grad", "vjp"])
def test_a_subclass_with_its_own_arithmetic_is_refused_naming_the_argument(
        kind, method, transform):
    v = X.copy().view(kind)
    with pytest.raises(NonDifferentiableError) as caught:
        if transform == "vjp":
            srcgrad.vjp(squares, v)
        else:
            getattr(srcgrad, transform)(squares)(v)
    error = caught.value
    assert f"argument 'v' of squares is a {kind.__qualname__}" in error.message
    assert method in error.message and "np.asarray" in error.message
    assert error.filename == __file__ and error.lineno == squares.__code__.co_firstlineno


def test_a_subclass_passed_where_no_gradient_is_taken_is_refused_too():
    def weighted(x, w):
        return np.sum(x * w)

    with pytest.raises(NonDifferentiableError, match="argument 'w' of weighted is a Scaled"):
        srcgrad.grad(weighted)(X, X.copy().view(Scaled))


@pytest.mark.parametrize("make", [
    lambda: X.copy().view(Tagged),
    lambda: X.copy().view(Plain),
    lambda: _memmap(),
    lambda: np.rec.fromarrays([X], names="a").a,
], ids=["metadata", "plain", "memmap", "recarray field"])
def test_subclasses_computing_as_ndarray_does_are_differentiated(make, tmp_path):
    v = make()
    value, grad = srcgrad.value_and_grad(squares)(v)
    assert value == squares(v)
    assert_close(grad, numeric_grad(squares, [np.asarray(v).copy()], 0))


def _memmap():
    import tempfile
    path = tempfile.NamedTemporaryFile(suffix=".dat", delete=False).name
    mm = np.memmap(path, dtype=np.float64, mode="w+", shape=(3,))
    mm[:] = X
    return mm


@pytest.mark.parametrize("transform", [
    lambda v: srcgrad.jvp(squares, (v,), (np.ones(3),)),
    lambda v: srcgrad.jvp(squares, wrt=0)(v, np.ones(3)),
    lambda v: srcgrad.hvp(squares)(v, np.ones(3)),
    lambda v: srcgrad.hessian(squares)(v),
    lambda v: srcgrad.jacobian(squares)(v),
], ids=["jvp", "tangent function", "hvp", "hessian", "jacobian"])
def test_forward_and_second_order_refuse_it_too(transform):
    with pytest.raises(NonDifferentiableError, match="'v' of squares is a Scaled.*__pow__"):
        transform(X.copy().view(Scaled))
