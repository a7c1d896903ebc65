"""A function whose file was edited after Python loaded it (an editor's save
while a notebook holds the module, a reload with an object of the old class
kept) has new text on disk and old code in memory.  srcgrad read the text and
differentiated the new code, silently (review s34, R2-1: value 9.16 where
f(x) is 2.32); now the frontend compares the text's instructions with the
function's code and refuses, located, saying to reload -- and the disk cache,
keyed on the code's instructions too, never hands a stale function the code
generated from the new text.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import textwrap

import numpy as np
import pytest

import srcgrad
from srcgrad.errors import SourceNotFoundError

X = np.array([0.3, 0.5])
FIRST = textwrap.dedent('''\
    import numpy as np


    def loss(x):
        return np.sum(np.sin(x) * 3.0)


    class Model:
        def __init__(self):
            self.scale = 2.0

        def loss(self, x):
            return np.sum(np.tanh(x) * self.scale)


    def make(c):
        def inner(x):
            return np.sum(x ** 2) * c
        return inner
''')


@pytest.fixture
def module(tmp_path, monkeypatch):
    """A module written to a file and imported, with a function to edit its file."""
    path = tmp_path / "edited_model.py"
    path.write_text(FIRST)
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("edited_model", None)
    loaded = importlib.import_module("edited_model")
    yield loaded, path
    sys.modules.pop("edited_model", None)


def _edit(path, old, new):
    path.write_text(path.read_text().replace(old, new))


def test_an_unedited_module_is_differentiated(module):
    mod, _ = module
    np.testing.assert_allclose(srcgrad.grad(mod.loss)(X), 3.0 * np.cos(X))
    np.testing.assert_allclose(srcgrad.grad(mod.Model().loss, wrt=0)(X),
                               2.0 * (1 - np.tanh(X) ** 2))  
    np.testing.assert_allclose(srcgrad.grad(mod.make(3.0))(X), 6.0 * X)   # a closure


@pytest.mark.parametrize("transform", [srcgrad.grad, srcgrad.value_and_grad])
def test_an_edited_function_is_refused_saying_to_reload(module, transform):
    mod, path = module
    _edit(path, "np.sin(x) * 3.0", "np.cos(x) * 5.0")
    with pytest.raises(SourceNotFoundError, match="changed after it was loaded.*reload"):
        transform(mod.loss)(X)
    importlib.reload(mod)
    np.testing.assert_allclose(srcgrad.grad(mod.loss)(X), -5.0 * np.sin(X))


def test_lines_added_above_it_are_refused_too(module):
    mod, path = module
    path.write_text(FIRST.replace("def loss(x):", "def other(x):\n    return x\n\n\ndef loss(x):", 1))
    with pytest.raises(SourceNotFoundError, match="changed after it was loaded"):
        srcgrad.grad(mod.loss)(X)


def test_an_object_of_the_class_before_a_reload(module):
    mod, path = module
    model = mod.Model()
    _edit(path, "np.tanh(x) * self.scale", "np.sin(x) * self.scale")
    importlib.reload(mod)
    with pytest.raises(SourceNotFoundError, match="changed after it was loaded"):
        srcgrad.grad(model.loss, wrt=0)(X)
    np.testing.assert_allclose(srcgrad.grad(mod.Model().loss, wrt=0)(X), 2.0 * np.cos(X))


def test_the_disk_cache_does_not_give_a_stale_function_the_new_code(module, tmp_path,
                                                                     monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("SRCGRAD_CACHE", "1")
    mod, path = module
    _edit(path, "np.sin(x) * 3.0", "np.cos(x) * 5.0")
    # another process loads the new file and fills the cache from its text
    spec = importlib.util.spec_from_file_location("edited_model_again", path)
    again = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(again)
    np.testing.assert_allclose(srcgrad.grad(again.loss)(X), -5.0 * np.sin(X))
    with pytest.raises(SourceNotFoundError, match="changed after it was loaded"):
        srcgrad.grad(mod.loss)(X)


def leapfrog(q0, p0, eps):
    q = q0.copy()
    p = p0.copy()
    p -= 0.5 * eps * np.sin(q)
    for i in range(12):
        q += eps * p
        if i != 11:
            p -= eps * np.sin(q)
    p -= 0.5 * eps * np.sin(q)
    return 0.5 * np.sum(p ** 2) - np.sum(np.cos(q))


def test_srcgrads_own_generated_code_is_not_taken_for_a_stale_file():
    # hvp with respect to a Python float differentiates generated tangent code
    # whose name stands for several versions: it was refused as 'changed'
    rng = np.random.default_rng(2)
    q0, p0 = rng.standard_normal(3), rng.standard_normal(3)
    h = 1e-4
    g = srcgrad.grad(leapfrog, wrt=2)
    want = (g(q0, p0, 0.1 + h) - g(q0, p0, 0.1 - h)) / (2 * h)
    np.testing.assert_allclose(srcgrad.hvp(leapfrog, wrt=2)(q0, p0, 0.1, 1.0), want, rtol=1e-5)


NAMES = textwrap.dedent('''\
    import numpy as np


    def outer(x):
        return np.sum(x ** 3)


    def uses_outer(x):
        return outer(x) * 2.0


    class Solver:
        def outer(self, x):
            return np.sum(np.sin(x) * 2.0)


    class Model:
        def Model(self, x):
            return np.sum(x ** 2)


    def step(x):
        def step(v):
            return v * 2.0
        return np.sum(step(x) ** 2)
''')


def test_functions_named_like_the_checks_own_wrapper_are_not_stale(tmp_path, monkeypatch):
    """Review s35 R3-15: the check compiled the definition inside a function it
    named ``outer`` and then looked for the user's code by name -- a user's
    ``outer`` (or a method named like its class) found the wrapper, and every
    call was refused as edited after loading."""
    (tmp_path / "named_outer.py").write_text(NAMES)
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("named_outer", None)
    mod = importlib.import_module("named_outer")
    try:
        x = np.array([0.3, -0.5, 0.9])
        path = tmp_path / "named_outer.py"
        path.write_text(NAMES.replace("x ** 3", "x ** 4"))   # an edit is still seen
        with pytest.raises(SourceNotFoundError, match="reload"):
            srcgrad.grad(mod.outer)(x)
        mod = importlib.reload(mod)
        np.testing.assert_allclose(srcgrad.grad(mod.outer)(x), 4 * x ** 3)
        np.testing.assert_allclose(srcgrad.grad(mod.uses_outer)(x), 8 * x ** 3)
        np.testing.assert_allclose(srcgrad.grad(mod.Solver().outer)(x), 2 * np.cos(x))
        np.testing.assert_allclose(srcgrad.grad(mod.Model().Model)(x), 2 * x)
        np.testing.assert_allclose(srcgrad.grad(mod.step)(x), 8 * x)
    finally:
        sys.modules.pop("named_outer", None)
