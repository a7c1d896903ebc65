"""Messages for dataclasses srcgrad does not build or differentiate (review
s35, R3-20): a @dataclass(slots=True) argument was refused as "it is S, not a
float or a float array", and a @dataclass(kw_only=True) built in the function
with "make K such a @dataclass" (it is one).  Each refusal now says what about
the class is not followed, and what to change.  (A slots=True argument is
differentiated since session 37: e2e/test_refusals_fixed_s37.py.)"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

import srcgrad
from srcgrad.errors import MissingRuleError

W = np.array([[0.5, -0.3], [0.1, 0.8], [-0.4, 0.3]])
X = np.array([[0.3, -0.5, 0.9]])


@dataclass(slots=True)
class Slotted:
    W: np.ndarray
    b: float = 0.5


@dataclass(kw_only=True)
class KeywordOnly:
    W: np.ndarray
    b: float = 0.5


@dataclass
class Checked:
    W: np.ndarray
    b: float = 0.5

    def __post_init__(self):
        assert self.W.ndim == 2


def loss(p, x):
    return np.sum(np.tanh(x @ p.W + p.b) ** 2)


def build_keyword_only(w, x):
    return loss(KeywordOnly(W=w, b=0.2), x)


def build_checked(w, x):
    return loss(Checked(w, 0.2), x)


def test_a_slots_dataclass_argument_is_differentiated():
    """Refused (with the advice to drop slots=True) until session 37, which reads
    a slots dataclass's fields as it reads an object's __dict__ (runtime
    object_fields): its gradient is a Slotted, as that of Checked's twin
    without slots is a dataclass of its own class."""
    got = srcgrad.grad(loss)(Slotted(W, 0.3), X)
    want = srcgrad.grad(loss)(KeywordOnly(W=W, b=0.3), X)
    assert type(got) is Slotted
    assert np.array_equal(got.W, want.W) and got.b == want.b


@pytest.mark.parametrize("fn, words", [
    (build_keyword_only, "keyword-only (kw_only=True), which srcgrad does not build yet"),
    (build_checked, "Checked has a __post_init__"),
], ids=["kw_only", "post_init"])
def test_a_dataclass_built_in_the_function_is_refused_saying_why(fn, words):
    with pytest.raises(MissingRuleError) as caught:
        srcgrad.grad(fn)(W, X)
    error = caught.value
    assert words in error.message and "make " not in error.message
    assert (error.filename, error.lineno) == (__file__, fn.__code__.co_firstlineno + 1)
