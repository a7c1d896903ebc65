"""The check that a function's file still holds the code Python runs
(frontend/parse.py, ``_runs_this_source``) compares the code compiled again
from the text with the function's: the bytes and their tables at once, and
only where those differ, one instruction at a time (``dis``, a third of the
parse of a long function).  Compiled again with the modules the function
reads imported (``import np``), the bytes of an unedited function of a module
that imports NumPy match; a module that binds a module without ``import``, or
an edited file, takes the instruction-by-instruction comparison, which says
what it said before.
"""

from __future__ import annotations

import importlib
import sys
import textwrap

import numpy as np
import pytest

import srcgrad
from srcgrad.errors import SourceNotFoundError
from srcgrad.frontend import parse

X = np.array([0.3, 0.5])
IMPORTED = textwrap.dedent('''\
    import math
    import numpy as np


    def loss(x):
        y = np.tanh(x) * math.pi
        return np.sum(np.sin(y) * 3.0)


    class Model:
        scale = 2.0

        def loss(self, x):
            return np.sum(np.tanh(x) * self.scale)


    def make(c):
        def inner(x):
            return np.sum(x ** 2) * c
        return inner
''')
ASSIGNED = textwrap.dedent('''\
    import importlib

    np = importlib.import_module("numpy")


    def loss(x):
        return np.sum(np.sin(x) * 3.0)
''')


@pytest.fixture
def load(tmp_path, monkeypatch):
    """Write ``text`` to a module of its own and import it."""
    monkeypatch.syspath_prepend(str(tmp_path))
    names = []

    def loaded(text, name):
        (tmp_path / f"{name}.py").write_text(text)
        sys.modules.pop(name, None)
        names.append(name)
        return importlib.import_module(name)

    yield loaded
    for name in names:
        sys.modules.pop(name, None)


def _slow_path_refused(monkeypatch):
    def refused(code):
        raise AssertionError(f"compared one instruction at a time: {code.co_name}")
    monkeypatch.setattr(parse, "_instructions", refused)


def test_an_unedited_function_of_a_module_importing_numpy_matches_byte_for_byte(
        load, monkeypatch):
    mod = load(IMPORTED, "bytes_imported")
    _slow_path_refused(monkeypatch)
    for fn in (mod.loss, mod.Model.loss, mod.make(3.0)):
        assert parse.parse_function(fn).node.name == fn.__name__
    np.testing.assert_allclose(
        srcgrad.grad(mod.loss)(X),
        3.0 * np.cos(np.tanh(X) * np.pi) * np.pi * (1 - np.tanh(X) ** 2))


def test_a_module_bound_without_import_is_compared_instruction_by_instruction(load):
    mod = load(ASSIGNED, "bytes_assigned")
    seen = []
    real = parse._instructions
    parse._instructions = lambda code: seen.append(code.co_name) or real(code)
    try:
        np.testing.assert_allclose(srcgrad.grad(mod.loss)(X), 3.0 * np.cos(X))
    finally:
        parse._instructions = real
    if sys.version_info[:2] == (3, 11):   # where np.sin(x) of an imported np compiles otherwise
        assert seen == ["loss", "loss"]


def test_an_edited_function_is_still_refused(load, tmp_path):
    mod = load(IMPORTED, "bytes_edited")
    path = tmp_path / "bytes_edited.py"
    path.write_text(path.read_text().replace("np.sin(y) * 3.0", "np.cos(y) * 3.0"))
    with pytest.raises(SourceNotFoundError, match="changed after it was loaded"):
        srcgrad.grad(mod.loss)(X)
    path.write_text(path.read_text().replace("np.cos(y) * 3.0", "np.sin(y) * 3.0 + 0.0"))
    with pytest.raises(SourceNotFoundError, match="changed after it was loaded"):
        srcgrad.grad(mod.loss)(X)
    importlib.reload(mod)
    np.testing.assert_allclose(
        srcgrad.grad(mod.loss)(X),
        3.0 * np.cos(np.tanh(X) * np.pi) * np.pi * (1 - np.tanh(X) ** 2))
