"""docs/api.md and the claims of README.md and docs/ about what srcgrad
takes stay true (issue 17).

docs/api.md has one heading per public name, ``### `srcgrad.NAME...` ``: a
function's or a decorator class's signature as ``inspect.signature`` writes it,
an error class's bases as a ``class`` statement writes them, a value's bare
name.  The claims about lambdas, ``functools.partial``, bound methods and
callable objects are checked on functions of this file.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import re
from pathlib import Path

import numpy as np
import pytest

import srcgrad

from numeric import assert_close, numeric_grad

ROOT = Path(__file__).resolve().parents[2]
API_MD = ROOT / "docs" / "api.md"
HEADING = re.compile(r"^### `srcgrad\.([A-Za-z_]\w*)(.*)`$", flags=re.MULTILINE)


def documented() -> dict[str, str]:
    found = {}
    for name, rest in HEADING.findall(API_MD.read_text(encoding="utf-8")):
        assert name not in found, f"docs/api.md documents srcgrad.{name} twice"
        found[name] = rest
    return found


def expected_heading(obj) -> str:
    if isinstance(obj, type) and issubclass(obj, BaseException):
        return "(" + ", ".join(base.__name__ for base in obj.__bases__) + ")"
    if callable(obj):
        return str(inspect.signature(obj, eval_str=True))
    return ""


def test_api_md_documents_exactly_the_public_names():
    names = set(documented())
    assert names - set(srcgrad.__all__) == set(), "documented but not public"
    assert set(srcgrad.__all__) - names == set(), "public but not in docs/api.md"


@pytest.mark.parametrize("name", srcgrad.__all__)
def test_api_md_gives_each_signature(name):
    assert documented()[name] == expected_heading(getattr(srcgrad, name)), (
        f"docs/api.md's heading of srcgrad.{name} is out of date")


def test_api_md_gives_the_error_constructor():
    signature = inspect.signature(srcgrad.SrcGradError, eval_str=True)
    assert f"`SrcGradError{signature}`" in API_MD.read_text(encoding="utf-8")


def test_every_srcgrad_name_api_md_mentions_exists():
    text = API_MD.read_text(encoding="utf-8")
    for dotted in sorted(set(re.findall(r"\bsrcgrad(?:\.[A-Za-z_]\w*)+", text))):
        parts = dotted.split(".")
        obj = importlib.import_module("srcgrad")
        for i, part in enumerate(parts[1:], start=2):
            try:
                obj = getattr(obj, part)
            except AttributeError:
                obj = importlib.import_module(".".join(parts[:i]))
        assert obj is not None, dotted


def test_the_package_the_guide_and_the_readme_point_to_api_md():
    assert "docs/api.md" in srcgrad.__doc__
    assert "](api.md)" in (ROOT / "docs" / "user-guide.md").read_text(encoding="utf-8")
    assert "](docs/api.md)" in (ROOT / "README.md").read_text(encoding="utf-8")


# -- what README.md, docs/api.md and docs/user-guide.md say srcgrad takes ---------------------


def power(x, n):
    return np.sum(x ** n)


def scale_by(x, k):
    return x * k


class Layer:
    def __init__(self, k):
        self.k = k

    def apply(self, x):
        return np.tanh(self.k * x)


cube = functools.partial(power, n=3)
halve = lambda x: 0.5 * x  # noqa: E731 - a lambda held by a name is the claim
layer_apply = Layer(1.5).apply
square_lambda = lambda x: np.sum(x * x)  # noqa: E731


def lambda_inside(x):
    h = lambda t: np.tanh(t) * 2.0  # noqa: E731
    return np.sum(h(x))


def nested_function_inside(x):
    def h(t):
        return np.tanh(t) * 2.0
    return np.sum(h(x))


def names_held_outside(x):
    return cube(x) + np.sum(halve(x)) + np.sum(layer_apply(x))


def partial_made_inside(x):
    p = functools.partial(power, n=2)
    return p(x)


X = np.array([0.3, -1.2, 0.8])


@pytest.mark.parametrize("fn", [lambda_inside, nested_function_inside, names_held_outside])
def test_calls_inside_a_function_that_the_docs_say_work(fn):
    assert_close(srcgrad.grad(fn)(X), numeric_grad(fn, [X], 0))


def test_a_partial_made_inside_the_function_is_called_as_the_docs_say():
    """docs/limitations.md: a partial of your function made in the function, called
    (refused before d391df2, which the docs said then)."""
    assert_close(srcgrad.grad(partial_made_inside)(X), numeric_grad(partial_made_inside, [X], 0))


def test_grad_takes_a_lambda_as_the_docs_say():
    """README.md, docs/api.md and docs/user-guide.md say a lambda given to grad
    works; if it stops working, they must say so instead."""
    assert_close(srcgrad.grad(square_lambda)(X), 2 * X)
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "`grad` itself takes a `def` function, a lambda," in " ".join(readme.split())
    assert "\n- a lambda, read from the line it begins on" in API_MD.read_text(encoding="utf-8")


def test_grad_of_a_partial_is_called_like_the_partial():
    """API.md: ``fn`` may be a functools.partial, for every transformation (hvp
    took one only since api/partials.py); a partial of what has no source says
    what to write instead."""
    assert_close(srcgrad.grad(cube)(X), 3 * X ** 2)
    assert_close(srcgrad.grad(power)(X, 3), 3 * X ** 2)
    assert_close(srcgrad.hvp(cube)(X, np.ones_like(X)), 6 * X)
    with pytest.raises(srcgrad.SrcGradError, match=r"differentiate tanh itself, "
                       r"srcgrad\.hvp\(tanh, wrt=\.\.\.\), and pass the fixed arguments"):
        srcgrad.hvp(functools.partial(np.tanh))


def test_grad_takes_a_bound_method_and_a_callable_object():
    class Scaled:
        def __init__(self, k):
            self.k = k

        def __call__(self, x):
            return np.sum(np.sin(self.k * x))

    model = Scaled(0.7)
    assert_close(srcgrad.grad(model)(X), 0.7 * np.cos(0.7 * X))
    assert_close(srcgrad.grad(Layer(1.5).apply, wrt=0)(X[0]),
                 numeric_grad(lambda x: float(Layer(1.5).apply(x)), [X[0]], 0))
