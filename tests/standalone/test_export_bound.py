"""Exporting the gradient of a callable object, a bound method or a functools.partial.

The code generated for them takes the object or the partial's fixed arguments
first (``grad_loss(self, x)``), which the gradient's call passes in; an
outside tester found the exported entry points kept that signature, so the
"standalone" module could not be called as the gradient is (``E.grad_loss(x)``:
a TypeError) and, for an object, needed the user's class.  The entry points
now take the gradient's own arguments, with the bound values written into the
module (an object as a namespace of the attributes its code reads), or the
export fails naming what it cannot write."""

from __future__ import annotations

import functools
import inspect
import textwrap

import numpy as np
import pytest
from numeric import assert_bit_identical, assert_close
from test_export import lint, load_file, run_without_srcgrad

import srcgrad

MODELS = textwrap.dedent("""
    import numpy as np

    class Model:
        def __init__(self, W):
            self.W = W

        def __call__(self, x):
            return np.sum(np.tanh(self.W @ x) ** 2)

        def loss(self, x):
            return np.sum(np.tanh(self.W @ x) ** 2)

    class Net:
        scale = 2.0  # a class attribute, read as self.scale

        def __init__(self, W, b):
            self.W, self.b = W, b
            self.log = open  # not read by the code: not written

        def layer(self, x):
            return np.tanh(self.W @ x + self.b)

        def __call__(self, x):
            h = x
            for _ in range(2):  # a method called in a loop
                h = self.layer(h[:3]) * self.scale + h[:3]
            return np.sum(h ** 2)

    class Config:
        k = 2.0

    class Configured(Model):
        def __init__(self, W):
            super().__init__(W)
            self.cfg = Config()

        def loss(self, x):
            return np.sum(self.W @ x) * self.cfg.k

    def scaled(a, w, scale=1.0):
        return a * scale * np.sum(np.exp(-w ** 2))
""")

X = np.array([0.3, -0.2, 0.5])


@pytest.fixture
def models(tmp_path):
    (tmp_path / "bound_models.py").write_text(MODELS)
    return load_file(tmp_path / "bound_models.py", "export_bound_models")


def _gradients(m):
    model = m.Model(np.arange(9.0).reshape(3, 3) / 9)
    net = m.Net(np.arange(9.0).reshape(3, 3) / 7 - 0.5, np.array([0.1, -0.2, 0.3]))
    return {
        "callable_object": srcgrad.grad(model),
        "bound_method": srcgrad.grad(model.loss),
        "value_and_grad_of_a_method": srcgrad.value_and_grad(net),
        "partial": srcgrad.grad(functools.partial(m.scaled, 3.0)),
        "partial_keywords": srcgrad.grad(functools.partial(m.scaled, 3.0, scale=0.5)),
    }


def test_entry_points_take_the_gradients_own_arguments(tmp_path, models):
    gradients = _gradients(models)
    out = tmp_path / "exported.py"
    entries = srcgrad.export(out, *gradients.values())
    lint(out)
    exported = load_file(out, "exported_bound_here")
    signatures = [str(inspect.signature(getattr(exported, entry))) for entry in entries]
    assert signatures == ["(x)", "(x)", "(x)", "(w, scale=1.0)", "(w)"]
    text = out.read_text()
    assert "bound_self = types.SimpleNamespace(W=np.array(" in text
    assert "scale=2.0" in text and "log=" not in text  # read attributes only
    assert "bound_a = 3.0" in text and "bound_scale = 0.5" in text
    results = run_without_srcgrad(out, [(e, (X,)) for e in entries])
    for (name, g), got in zip(gradients.items(), results):
        want = g(X)
        if name.startswith("value_and_grad"):
            assert_bit_identical(got[0], want[0], name)
            got, want = got[1], want[1]
        assert_close(got, want, rtol=1e-13, what=name)


def test_a_pullback_and_a_jvp_of_a_bound_method(tmp_path, models):
    model = models.Model(np.arange(9.0).reshape(3, 3) / 9)
    value, pullback = srcgrad.vjp(model.loss, X)
    tangent = np.array([1.0, 0.5, -2.0])
    out = tmp_path / "exported.py"
    forward, backward, jvp = srcgrad.export(out, pullback, srcgrad.jvp(model, wrt=0))
    lint(out)
    exported = load_file(out, "exported_pullback_here")
    got, residuals = exported.__dict__[forward](X)
    assert_bit_identical(got, value, "the exported forward function")
    assert_close(exported.__dict__[backward](residuals, 1.0)[0], pullback(1.0)[0], rtol=1e-13)
    want = srcgrad.jvp(model, wrt=0)(X, tangent)
    got = exported.__dict__[jvp](X, tangent)
    assert_bit_identical(got[0], want[0], "the exported jvp's value")
    assert_close(got[1], want[1], rtol=1e-13)


def test_a_bound_value_that_cannot_be_written_is_named(tmp_path, models):
    configured = models.Configured(np.eye(3))
    with pytest.raises(srcgrad.SrcGradError) as info:
        srcgrad.export(tmp_path / "out.py", srcgrad.grad(configured.loss))
    message = str(info.value)
    assert "'self.cfg' is an object of type" in message and "self bound" in message
    assert not (tmp_path / "out.py").exists()
    with pytest.raises(srcgrad.SrcGradError, match="'a' is an array of 20000 elements"):
        srcgrad.export(tmp_path / "out.py", srcgrad.grad(functools.partial(models.scaled,
                                                                            np.ones(20000))))
