"""Every spec-table entry compiled end to end through srcgrad.

``test_spec.py`` calls each rule directly; this file writes each entry's
``expr`` into a real module as ``def f(<args>): return <expr>``, differentiates
it with ``srcgrad.vjp`` (so the rule is inlined, renamed and folded by the
compiler) and checks the dot-product identity against finite differences, the
cotangents' shapes and dtypes, and that the non-differentiable primitives get
no cotangent at all.
"""

from __future__ import annotations

import importlib.util
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest
from numeric import inner, jvp_fd, random_like
from spec import NONDIFF, SCIPY, SPECS

import srcgrad


def _module(entries, stem):
    lines = ["import copy", "import math", "import operator", "import statistics", "", "import numpy as np", "",
             "import srcgrad",
             "from srcgrad.runtime import keys_of, sequence, snapshot", ""]
    if SCIPY:  # the entries of SciPy's functions
        lines += ["import scipy.signal", "import scipy.special", "import scipy.stats", ""]
    for i, entry in enumerate(entries):
        lines += ["", f"def f{i}({', '.join(entry.args)}):", f"    return {entry.expr}", ""]
    path = Path(tempfile.mkdtemp(prefix="srcgrad-spec-")) / f"{stem}.py"
    path.write_text("\n".join(lines))
    spec = importlib.util.spec_from_file_location(stem, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[stem] = module
    spec.loader.exec_module(module)
    return module


COMPILED = _module(SPECS, "srcgrad_spec_compiled")
NONDIFF_COMPILED = _module(NONDIFF, "srcgrad_spec_nondiff")


def _entry(module, entries, index, dtype="float64"):
    """The compiled function of spec entry ``index`` and arguments for it."""
    entry = entries[index]
    values = entry.make(dtype)
    return entry, getattr(module, f"f{index}"), [values[name] for name in entry.args], values


@pytest.mark.parametrize("index", range(len(SPECS)), ids=[s.id for s in SPECS])
def test_entry_compiles_and_satisfies_the_dot_product_identity(index):
    entry, fn, args, _ = _entry(COMPILED, SPECS, index)
    wrt = tuple(entry.args.index(name) for name in entry.wrt)
    value, pullback = srcgrad.vjp(fn, *args, wrt=wrt)
    rng = np.random.default_rng(index)
    u = random_like(rng, value)
    cotangents = pullback(u)
    directions = [random_like(rng, args[i]) for i in wrt]
    lhs = inner(u, jvp_fd(fn, args, wrt, directions))
    rhs = sum(inner(c, v) for c, v in zip(cotangents, directions))
    assert lhs == pytest.approx(rhs, rel=1e-5, abs=1e-6), entry.expr
    for c, i in zip(cotangents, wrt):
        assert np.shape(c) == np.shape(args[i]), entry.expr


@pytest.mark.parametrize("index", [i for i, s in enumerate(SPECS) if "float32" in s.dtypes],
                         ids=[s.id for s in SPECS if "float32" in s.dtypes])
def test_entry_keeps_float32(index):
    entry, fn, args, values = _entry(COMPILED, SPECS, index, "float32")
    wrt = tuple(entry.args.index(name) for name in entry.wrt
                if isinstance(values[name], np.ndarray))
    if not wrt:
        pytest.skip("no float32 array argument")
    value, pullback = srcgrad.vjp(fn, *args, wrt=wrt)
    u = random_like(np.random.default_rng(0), value)
    u = tuple(np.asarray(x, np.float32) for x in u) if isinstance(u, tuple) \
        else np.asarray(u, np.float32)
    for c in pullback(u):
        assert np.asarray(c).dtype == np.float32, entry.expr


@pytest.mark.parametrize("index", range(len(NONDIFF)), ids=[s.id for s in NONDIFF])
def test_nondifferentiable_entry_gets_zero_cotangent(index):
    entry, fn, args, _ = _entry(NONDIFF_COMPILED, NONDIFF, index)
    wrt = tuple(i for i, a in enumerate(args)
                if isinstance(a, (float, np.ndarray)) and np.asarray(a).dtype.kind == "f")
    if not wrt:
        pytest.skip("no float argument")
    value, pullback = srcgrad.vjp(fn, *args, wrt=wrt)
    if isinstance(value, tuple) or np.asarray(value).dtype.kind not in "fc":
        return
    for c in pullback(np.ones_like(np.asarray(value, dtype=np.float64))):
        assert not np.any(c), entry.expr
