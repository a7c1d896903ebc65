"""Methods, classes and combinations of constructs, checked numerically.

In-place updates seen through an alias are in tests/analysis/test_aliasing.py."""

from __future__ import annotations

import numpy as np
import pytest

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


# -- the scalar 0.0 that stands for "no cotangent yet" ---------------------------------

def _zero_kinds(out):
    """The forms the zero of no cotangent takes on its way to an adjoint: the 0.0
    itself, and for an array output what NumPy makes of it (``0.0 * s`` is a NumPy
    float, ``np.transpose(0.0)`` a 0-d array)."""
    if isinstance(out, (np.ndarray, np.generic)) and np.ndim(out) > 0:
        return [0.0, np.float64(0.0), np.array(0.0)]
    return [0.0]


def _all_zero(g) -> bool:
    if g is None:
        return True
    if isinstance(g, (list, tuple)):
        return all(_all_zero(e) for e in g)
    return not np.any(np.asarray(g))


def test_every_adjoint_rule_accepts_the_zero_of_no_cotangent():
    """Inside loops and after calls, an adjoint may receive the scalar 0.0 for an
    array's cotangent (a branch not taken, a callee that ignores an argument): every
    rule of the spec table must take it and give zero cotangents."""
    import warnings

    import spec

    from srcgrad.rules import registry

    failures = []
    for entry in spec.SPECS:
        env = entry.make("float64")
        prim, args, kwargs, _, _ = spec.resolve(entry.source, env)
        rule = registry.lookup(prim)
        out = spec.apply(prim, args, kwargs)
        for zero in _zero_kinds(out):
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    grads = rule.fn(out, zero, *args, **kwargs)
            except Exception as exc:  # noqa: BLE001 - collected and reported below
                failures.append(f"{entry.id} ({zero!r}): {type(exc).__name__}: {exc}")
                continue
            if not _all_zero(grads):
                failures.append(f"{entry.id} ({zero!r}): nonzero cotangents {grads!r}")
    assert not failures, "\n".join(failures)


def locals_named_like_helpers(x, y):
    unbroadcast = x * y
    grad_like = np.sum(unbroadcast + x)
    for i in range(2):
        expand = grad_like * 2.0
        grad_like = expand
    return grad_like


def test_locals_named_like_runtime_helpers_are_renamed():
    x, y = RNG.standard_normal((2, 3)), RNG.standard_normal(3)
    g = srcgrad.grad(locals_named_like_helpers, wrt=(0, 1))(x, y)
    for i in (0, 1):
        assert_close(g[i], numeric_grad(locals_named_like_helpers, (x, y), i),
                     rtol=1e-6, atol=1e-8)
    _, t = srcgrad.jvp(locals_named_like_helpers, (x, y), (np.ones((2, 3)), None))
    assert t == pytest.approx(float(np.sum(g[0])), rel=1e-10)


def loop_over_a_local_dict(x):
    d = {"a": x * 2.0, "b": np.sin(x)}
    s = 0.0
    for key in d:
        s = s + np.sum(d[key] * x)
    return s


def loop_over_dict_values(x):
    d = {"a": x * 2.0, "b": np.sin(x)}
    s = 0.0
    for v in d.values():
        s = s + np.sum(v * v)
    return s


@pytest.mark.parametrize("fn", [loop_over_a_local_dict, loop_over_dict_values],
                         ids=lambda f: f.__name__)
def test_loops_over_local_dicts(fn):
    x = RNG.standard_normal(3)
    assert_close(srcgrad.grad(fn)(x), numeric_grad(fn, (x,), 0), rtol=1e-6, atol=1e-8)
    v = RNG.standard_normal(3)
    _, t = srcgrad.jvp(fn, (x,), (v,))
    assert t == pytest.approx(float(srcgrad.grad(fn)(x) @ v), rel=1e-10)
