"""Methods, classes and combinations of constructs, checked numerically."""

from __future__ import annotations

import numpy as np

import srcgrad

from numeric import assert_close, numeric_grad

RNG = np.random.default_rng(7)


class RNN:
    """A model written as a class: attribute reads and method calls."""

    def __init__(self, W, U):
        self.W = W
        self.U = U

    def step(self, h, x):
        return np.tanh(self.W @ h + self.U @ x)

    def run(self, xs, limit):
        h = np.zeros(self.W.shape[0])
        for x in xs:
            h = self.step(h, x)
            if np.sum(np.abs(h)) > limit:
                break
        return h

    def loss(self, xs):
        return np.sum(self.run(xs, 100.0) ** 2)

    @srcgrad.grad(wrt=1)
    def loss_grad(self, xs):
        return self.loss(xs)


def _model():
    return RNN(RNG.standard_normal((3, 3)) * 0.5, RNG.standard_normal((3, 2)))


def test_bound_method_differentiates_its_own_arguments():
    model, xs = _model(), RNG.standard_normal((4, 2))
    g = srcgrad.grad(model.loss)(xs)
    assert_close(g, numeric_grad(model.loss, [xs], 0))
    assert "step_forward" in srcgrad.grad(model.loss).source


def test_decorated_method_counts_self():
    model, xs = _model(), RNG.standard_normal((4, 2))
    assert_close(model.loss_grad(xs), srcgrad.grad(model.loss)(xs))


def test_gradient_with_respect_to_the_model_object():
    model, xs = _model(), RNG.standard_normal((4, 2))
    g = srcgrad.grad(RNN.loss)(model, xs)
    assert isinstance(g, RNN)

    def loss_w(W):
        return RNN(W, model.U).loss(xs)

    def loss_u(U):
        return RNN(model.W, U).loss(xs)

    assert_close(g.W, numeric_grad(loss_w, [model.W], 0))
    assert_close(g.U, numeric_grad(loss_u, [model.U], 0))


def combination(x, n):
    """A loop with break inside a method called from a closure, with updates in loops."""
    model = _COMBO_MODEL

    def through_model(v):
        return model.run(v.reshape(2, 2), 3.0)

    out = np.zeros(3)
    for i in range(n):
        out[i % 3] += np.sum(through_model(x * (i + 1)))
    return np.sum(out ** 2)


_COMBO_MODEL = RNN(RNG.standard_normal((3, 3)) * 0.5, RNG.standard_normal((3, 2)))


def test_combination_of_constructs():
    x = RNG.standard_normal(4)
    assert srcgrad.gradcheck(combination, x, 5)


def rebinding_global(x):
    return np.sum(_COMBO_MODEL.W @ x[:3])


def test_generated_code_never_modifies_caller_arrays():
    x = RNG.standard_normal(4)
    copy = x.copy()
    srcgrad.grad(combination)(x, 5)
    np.testing.assert_array_equal(x, copy)


def test_view_read_after_an_update_with_a_partial_wrt():
    """The fuzzer's case: differentiating only with respect to s, nothing else reads
    v after its update, yet the view t = v[:, ::2] does."""
    import corpus

    fn = corpus.by_name("view_read_by_the_adjoint_after_an_update").fn
    x, s = RNG.standard_normal((3, 4)), 0.7
    assert srcgrad.gradcheck(fn, x, s, wrt=1)
