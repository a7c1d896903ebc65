"""A helper run as written that changes state of another module (``omod.decay()``
scaling ``omod.W`` in place) or a class attribute (``Cfg.decay()``,
``cls.W *= 0.8``; a staticmethod writing ``Cfg.W[...]``), between two reads
of that state: the adjoint read the state after the change, a silently wrong
gradient ([0.0439, 0.0943, 0.0777] where differences give [0.0549, 0.1179,
0.0971]; review s34, R2-21).  Refused now, located at the call, as the same
helper in the function's own module is (test_helpers_changing_module_state.py);
helpers of another module or class that change nothing f reads still run.
"""

from __future__ import annotations

import importlib
import sys
import textwrap

import numpy as np
import pytest
from numeric import check_every_policy

import srcgrad
from srcgrad.errors import UnsupportedSyntaxError

W0 = np.array([[0.5, 0.2, -0.1], [0.0, 0.4, 0.3], [0.2, -0.3, 0.6]])
X = np.array([1.76405235, 0.40015721, 0.97873798])

OMOD = textwrap.dedent('''\
    import numpy as np
    W0 = np.array([[0.5, 0.2, -0.1], [0.0, 0.4, 0.3], [0.2, -0.3, 0.6]])
    W = W0.copy()


    def reset():
        W[...] = W0


    def decay():
        W[...] *= 0.8


    def decay_nested():
        _scale(W, 0.8)


    def _scale(a, s):
        a *= s
''')
omod = None   # the module of helpers, written to a file and imported (helpers must have a source)


@pytest.fixture(autouse=True)
def _omod(tmp_path, monkeypatch):
    global omod
    (tmp_path / "omod_for_tests.py").write_text(OMOD)
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("omod_for_tests", None)
    omod = importlib.import_module("omod_for_tests")
    yield
    sys.modules.pop("omod_for_tests", None)


class Cfg:
    W = W0.copy()

    @classmethod
    def reset(cls):
        cls.W[...] = W0

    @classmethod
    def decay(cls):
        cls.W *= 0.8

    @staticmethod
    def decay_s():
        Cfg.W[...] *= 0.8


def other_module(x):
    omod.reset()
    a = np.tanh(x @ omod.W)
    omod.decay()
    return np.sum(np.tanh(a @ omod.W) ** 2)


def other_module_nested(x):
    omod.reset()
    a = np.tanh(x @ omod.W)
    omod.decay_nested()
    return np.sum(np.tanh(a @ omod.W) ** 2)


def class_method(x):
    Cfg.reset()
    a = np.tanh(x @ Cfg.W)
    Cfg.decay()
    return np.sum(np.tanh(a @ Cfg.W) ** 2)


def static_method(x):
    Cfg.reset()
    a = np.tanh(x @ Cfg.W)
    Cfg.decay_s()
    return np.sum(np.tanh(a @ Cfg.W) ** 2)


def reset_then_read(x):
    omod.reset()
    Cfg.reset()
    return np.sum(np.tanh(x @ omod.W) * np.tanh(x @ Cfg.W))


@pytest.mark.parametrize("fn", [other_module, other_module_nested, class_method, static_method])
@pytest.mark.parametrize("policy", ["save", "recompute", "sqrt"])
def test_a_helper_changing_state_read_before_and_after_is_refused_at_the_call(fn, policy):
    with pytest.raises(UnsupportedSyntaxError, match="may change .* in place") as caught:
        srcgrad.grad(fn, policy=policy)(X)
    assert caught.value.filename == __file__
    assert caught.value.lineno == fn.__code__.co_firstlineno + 3


def test_a_helper_writing_state_before_any_read_still_runs():
    check_every_policy(reset_then_read, (X,), 0)
