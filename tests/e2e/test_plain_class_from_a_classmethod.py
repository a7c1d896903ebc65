"""An object of a plain class built by a ``@classmethod`` constructor from a
value being differentiated (review s37 R5-18).

``m = Net(W * 2)`` is refused at the construction, saying why (srcgrad cannot
see what ``Net.__init__`` does; make Net a dataclass or build it outside).
``m = Net.make(W)`` then ``m.loss(x)`` was refused at the method call with
"no adjoint rule for the method '.loss()' ... register one with
srcgrad.register_vjp": neither the class nor the cause.  Now the message
names the object, the classmethod that made it and the class, with the same
advice, in both modes.
"""

from __future__ import annotations

import numpy as np
import pytest

import srcgrad


class Net:
    def __init__(self, W):
        self.W = W

    def loss(self, x):
        return np.sum(np.tanh(x @ self.W) ** 2)

    @classmethod
    def make(cls, W):
        return cls(W * 2)


def via_classmethod(W, x):
    m = Net.make(W)
    return m.loss(x)


RS = np.random.RandomState(0)
W, X = RS.randn(3, 3), RS.randn(2, 3)


@pytest.mark.parametrize("mode", ["grad", "jvp"])
def test_the_message_names_the_classmethod_and_the_class(mode):
    with pytest.raises(srcgrad.MissingRuleError) as info:
        if mode == "grad":
            srcgrad.grad(via_classmethod)(W, X)
        else:
            srcgrad.jvp(via_classmethod, (W, X), (np.ones_like(W), None))
    error = info.value
    assert error.message == (
        "the method '.loss()' is called on 'm', the object Net.make(...) returned: an object "
        "of the class Net built from a value being differentiated, whose methods srcgrad "
        "cannot follow; srcgrad builds named tuples and dataclasses whose __init__ only "
        "stores its fields (no __init__ of its own, no __post_init__), and cannot see what "
        "Net.__init__ does with its arguments; make Net such a @dataclass, or build it "
        "outside and pass it in (grad(f)(x, obj): its fields are then differentiated)")
    assert error.filename == __file__
    assert error.lineno == via_classmethod.__code__.co_firstlineno + 2
    assert "register_vjp" not in error.message
