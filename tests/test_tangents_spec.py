"""Forward mode on every spec-table entry, compiled end to end.

Each entry of tests/spec.py is compiled as ``def f(<args>): return <expr>``
(the module of ``test_spec_compiled.py``) and run through ``srcgrad.jvp``: the
tangent must match central differences ``J v``, agree with reverse mode through
the dot-product identity ``<u, J v> = <J^T u, v>``, have the output's shape, and
stay float32 for float32 inputs.  A last test checks that every primitive with
an adjoint rule also has a tangent rule.
"""

from __future__ import annotations

import numpy as np
import pytest
from numeric import assert_close, inner, jvp_fd, random_like
from spec import SPECS
from test_spec_compiled import COMPILED, _entry

import srcgrad
from srcgrad.rules import registry


def _tangents(entry, args, rng):
    wrt = [entry.args.index(name) for name in entry.wrt]
    tangents = [random_like(rng, a) if i in wrt else None for i, a in enumerate(args)]
    return wrt, tangents


@pytest.mark.parametrize("index", range(len(SPECS)), ids=[s.id for s in SPECS])
def test_entry_forward_mode_matches_differences_and_reverse_mode(index):
    entry, fn, args, _ = _entry(COMPILED, SPECS, index)
    if registry.lookup_tangent(entry.primitive) is None:
        pytest.skip("no tangent rule (test_every_adjoint_rule_has_a_tangent_rule fails)")
    rng = np.random.default_rng(index)
    wrt, tangents = _tangents(entry, args, rng)
    value, tangent = srcgrad.jvp(fn, args, tangents)
    directions = [tangents[i] for i in wrt]
    numeric = jvp_fd(fn, args, wrt, directions)
    if isinstance(numeric, tuple):
        assert isinstance(tangent, tuple) and len(tangent) == len(numeric), entry.expr
        for t, n in zip(tangent, numeric):
            assert_close(t, n, rtol=1e-5, atol=1e-6, what=entry.expr)
            assert np.shape(t) == np.shape(n), entry.expr
    else:
        assert_close(tangent, numeric, rtol=1e-5, atol=1e-6, what=entry.expr)
        assert np.shape(tangent) == np.shape(value), entry.expr
    u = random_like(rng, value)
    _, pullback = srcgrad.vjp(fn, *args, wrt=tuple(wrt))
    lhs = inner(u, tangent)
    rhs = sum(inner(c, v) for c, v in zip(pullback(u), directions))
    assert lhs == pytest.approx(rhs, rel=1e-6, abs=1e-8), entry.expr


@pytest.mark.parametrize("index", [i for i, s in enumerate(SPECS) if "float32" in s.dtypes],
                         ids=[s.id for s in SPECS if "float32" in s.dtypes])
def test_entry_forward_mode_keeps_float32(index):
    entry, fn, args, values = _entry(COMPILED, SPECS, index, "float32")
    if registry.lookup_tangent(entry.primitive) is None:
        pytest.skip("no tangent rule")
    if not any(isinstance(values[n], np.ndarray) for n in entry.wrt):
        pytest.skip("no float32 array argument")
    rng = np.random.default_rng(index)
    wrt, tangents = _tangents(entry, args, rng)
    tangents = [t if t is None or not isinstance(args[i], np.ndarray)
                else np.asarray(t, np.float32) for i, t in enumerate(tangents)]
    value, tangent = srcgrad.jvp(fn, args, tangents)
    for v, t in zip(value if isinstance(value, tuple) else (value,),
                    tangent if isinstance(tangent, tuple) else (tangent,)):
        if isinstance(v, np.ndarray) and v.dtype == np.float32:
            assert np.asarray(t).dtype == np.float32, entry.expr


def test_every_adjoint_rule_has_a_tangent_rule():
    missing = sorted(rule.name for prim, rule in registry.all_rules().items()
                     if registry.lookup_tangent(prim) is None and rule.called is None)
    assert not missing, f"adjoint rules without a tangent rule: {missing}"
