"""A helper whose code object is replaced in place (review s35 R3-16).

Hot-reload tools that patch only what changed (jurigged, an IDE's hot swap,
``%autoreload`` for the functions edited) give the old function object the
new ``__code__``.  The function differentiated is the same object with the
same globals, so the memory cache served the code generated from the old
helper: ``g(x)`` and a fresh ``srcgrad.grad(loss)(x)`` gave the old helper's
gradient while ``value_and_grad`` computed the value with the new one.  The
code objects of the user functions the generated code inlines or calls are
now part of what makes it stale, as the disk cache's provenance already was.
"""

from __future__ import annotations

import importlib
import sys
import textwrap

import numpy as np
import pytest

import srcgrad

HELPERS = textwrap.dedent('''\
    import numpy as np


    def smooth(v):
        return np.tanh(v) * 2.0
''')

MAIN = textwrap.dedent('''\
    import numpy as np

    import swap_helpers


    def helper(v):
        return v * 2.0


    class Layer:
        def __init__(self, w):
            self.w = w

        def forward(self, h):
            return h * self.w


    def loss(x):
        return np.sum(helper(x) ** 2)


    def loss_other_module(x):
        return np.sum(swap_helpers.smooth(x) ** 2)


    def loss_method(layer, x):
        return np.sum(layer.forward(x) ** 2)
''')


def _patched(module, old, new, name, attr=None):
    """Edit ``module``'s file (``old`` -> ``new``) and give ``module.name`` (or its
    class's method ``attr``) the code compiled from the new text, as a hot
    reload that patches only the edited function does."""
    path = module.__file__
    with open(path, encoding="utf-8") as fh:
        text = fh.read().replace(old, new)
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text)
    namespace = {}
    exec(compile(text, path, "exec"), namespace)  # noqa: S102
    target, fresh = getattr(module, name), namespace[name]
    if attr:
        target, fresh = getattr(target, attr), getattr(fresh, attr)
    target.__code__ = fresh.__code__


@pytest.fixture
def modules(tmp_path, monkeypatch):
    (tmp_path / "swap_helpers.py").write_text(HELPERS)
    (tmp_path / "swap_main.py").write_text(MAIN)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("SRCGRAD_CACHE_DIR", str(tmp_path / "cache"))
    for name in ("swap_main", "swap_helpers"):
        sys.modules.pop(name, None)
    yield importlib.import_module("swap_main"), importlib.import_module("swap_helpers")
    for name in ("swap_main", "swap_helpers"):
        sys.modules.pop(name, None)


X = np.array([0.3, -0.5, 0.9])


def test_a_helper_given_new_code_regenerates_the_gradient(modules):
    main, _ = modules
    g = srcgrad.grad(main.loss)
    np.testing.assert_allclose(g(X), 8 * X)
    _patched(main, "v * 2.0", "v * 10.0", "helper")
    assert main.loss(X) == pytest.approx(np.sum((10 * X) ** 2))
    np.testing.assert_allclose(g(X), 200 * X)
    np.testing.assert_allclose(srcgrad.grad(main.loss)(X), 200 * X)
    value, grad = srcgrad.value_and_grad(main.loss)(X)
    assert value == main.loss(X)
    np.testing.assert_allclose(grad, 200 * X)


def test_a_helper_of_another_module_given_new_code(modules):
    main, helpers = modules
    g = srcgrad.grad(main.loss_other_module)
    t = np.tanh(X)
    np.testing.assert_allclose(g(X), 8 * t * (1 - t ** 2))
    _patched(helpers, "np.tanh(v)", "np.sin(v)", "smooth")
    np.testing.assert_allclose(g(X), 8 * np.sin(X) * np.cos(X))


def test_a_method_given_new_code(modules):
    main, _ = modules
    layer = main.Layer(3.0)
    g = srcgrad.grad(main.loss_method, wrt=1)
    np.testing.assert_allclose(g(layer, X), 18 * X)
    _patched(main, "h * self.w", "h * self.w * 2.0", "Layer", attr="forward")
    np.testing.assert_allclose(g(layer, X), 72 * X)
