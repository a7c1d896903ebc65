"""``on_grad`` hooks learn where they are: a hook with a second parameter gets
the :class:`~srcgrad.runtime.GradSite` (file, line, column, expression) of the
watched value, so one hook logs gradient norms per layer or per step of a
recurrence (exploding/vanishing gradients) and tells the sites apart."""

from __future__ import annotations

import numpy as np

import srcgrad
from srcgrad.runtime import GradSite

LOG: list = []


def _watch(g, site):
    LOG.append((site, float(np.linalg.norm(g))))
    return g


def _double(g):
    return 2 * g


def rnn(W, xs):
    h = np.zeros(W.shape[0])
    for x in xs:
        h = srcgrad.on_grad(np.tanh(W @ h + x), _watch)
    return np.sum(h)


def two_layers(W1, W2, x):
    a = srcgrad.on_grad(np.tanh(W1 @ x), _watch)
    b = srcgrad.on_grad(np.tanh(W2 @ a), _watch)
    return np.sum(b ** 2)


def scaled(x):
    return np.sum(srcgrad.on_grad(np.sin(x), _double))


def test_a_hook_sees_every_step_of_a_long_recurrence_with_its_line():
    rs = np.random.RandomState(0)
    W, xs = 0.3 * rs.randn(4, 4), rs.randn(200, 4)
    LOG.clear()
    g = srcgrad.grad(rnn)(W, xs)
    assert len(LOG) == 200
    site = LOG[0][0]
    line = rnn.__code__.co_firstlineno + 3
    assert isinstance(site, GradSite)
    assert (site.file, site.line, site.expr) == (__file__, line, "np.tanh(W @ h + x)")
    assert str(site).startswith(f"{__file__}:{line}:")
    norms = [n for _, n in LOG]
    assert norms[-1] < norms[0]  # the cotangent of early steps vanishes
    LOG.clear()
    np.testing.assert_array_equal(g, srcgrad.grad(rnn)(W, xs))  # the hook changes nothing


def test_two_sites_are_told_apart():
    rs = np.random.RandomState(1)
    W1, W2, x = rs.randn(3, 3), rs.randn(3, 3), rs.randn(3)
    LOG.clear()
    srcgrad.grad(two_layers, wrt=(0, 1))(W1, W2, x)
    assert [s.expr for s, _ in LOG] == ["np.tanh(W2 @ a)", "np.tanh(W1 @ x)"]
    assert LOG[0][0].line == LOG[1][0].line + 1


def test_a_one_argument_hook_is_called_as_before_and_forward_mode_ignores_it():
    x = np.array([0.3, -1.2])
    np.testing.assert_allclose(srcgrad.grad(scaled)(x), 2 * np.cos(x))
    _, tangent = srcgrad.jvp(scaled, (x,), (np.ones(2),))
    np.testing.assert_allclose(tangent, np.sum(np.cos(x)))


def test_the_site_is_visible_in_the_generated_code():
    source = srcgrad.grad(two_layers).source
    assert f"_watch(d_b, GradSite(({__file__!r}, " in source
    assert "'np.tanh(W1 @ x)')))" in source
    assert "_double(d_" in srcgrad.grad(scaled).source  # a one-argument hook: as written


def _scale_with_default(g, factor=2.0):
    return g * factor


def _site_required(g, site):
    assert isinstance(site, GradSite)
    return 2 * g


def hook_with_a_default(x):
    return np.sum(srcgrad.on_grad(np.sin(x), _scale_with_default))


def hook_by_keyword(x):
    return np.sum(srcgrad.on_grad(np.sin(x), hook=_site_required))


def numpy_function_as_hook(x):
    return np.sum(srcgrad.on_grad(np.sin(x), np.copy))


def test_only_a_required_second_parameter_receives_the_site():
    """A hook whose second parameter has a default (``lambda g, s=s:``, a
    ``clip(g, limit=0.1)``, NumPy's functions) is called with the cotangent alone."""
    x = np.array([0.3, -1.2])
    np.testing.assert_allclose(srcgrad.grad(hook_with_a_default)(x), 2 * np.cos(x))
    np.testing.assert_allclose(srcgrad.grad(numpy_function_as_hook)(x), np.cos(x))
    np.testing.assert_allclose(srcgrad.grad(hook_by_keyword)(x), 2 * np.cos(x))
