"""Private names in methods (``self.__w``, ``self.__scale(x)``), which Python
mangles to ``self._Model__w`` inside the class: the generated code read
``self.__w`` and raised a raw AttributeError ("'Model' object has no attribute
'__w'") for grad of the method, of a function calling it, and of the method
with respect to its object.  frontend/mangle.py gives the parsed method the
names Python gave its code.
"""

from __future__ import annotations

import numpy as np
import pytest
from numeric import assert_close, check_every_policy, numeric_grad

import srcgrad

X = np.array([1.0, 2.0, -0.5])
_Model__OFFSET = 0.25   # the global a method's __OFFSET reads (mangled as Python does)


class Model:
    def __init__(self):
        self.__w = np.array([0.5, -0.2, 0.3])

    def loss(self, x):
        return np.sum(self.__w * x)

    def deep(self, x):
        return np.sum(np.tanh(self.__scale(x)) + __OFFSET)  # noqa: F821

    def __scale(self, x):
        return self.__w * x

    def looped(self, x):
        h = x
        for _ in range(3):
            if np.sum(h) > 0:
                h = np.tanh(self.__w * h)
            else:
                h = np.sin(self.__w + h)
        return np.sum(h ** 2)

    def rebinding(self, x):
        __v = self.__w * 2.0
        return np.sum(__v * x)


class _Hidden:
    def __init__(self):
        self.__w = np.array([0.1, 0.2, 0.3])

    def loss(self, x):
        return np.sum(np.exp(self.__w * x))


MODEL = Model()


def calls_the_method(x):
    return MODEL.loss(x) ** 2 + MODEL.deep(x)


@pytest.mark.parametrize("fn", [MODEL.loss, MODEL.deep, MODEL.looped, MODEL.rebinding,
                                calls_the_method, _Hidden().loss],
                         ids=["attribute", "private method and global", "loop and branch",
                              "private local", "function calling it", "class with underscore"])
def test_a_method_reading_private_names_is_differentiated(fn):
    check_every_policy(fn, (X,), 0)


def test_the_gradient_with_respect_to_the_object_has_the_mangled_field():
    grad = srcgrad.grad(Model.looped)(MODEL, X)
    w = MODEL._Model__w
    fd = numeric_grad(lambda w_: _with_w(w_).looped(X), [w.copy()], 0)
    assert_close(grad._Model__w, fd)


def _with_w(w):
    model = Model()
    model._Model__w = w
    return model
