"""The rule registry's own checks.

srcgrad's built-in rules are inlined into generated code, so each may read
only the names the generated module defines (``np``, ``math``, the runtime
helpers).  Registering them skips that check to keep ``import srcgrad`` fast;
this test runs it over every one instead, lazily registered families included.
"""

from __future__ import annotations

import numpy as np
import pytest

from srcgrad.rules import registry


def test_every_built_in_inlined_rule_reads_only_what_generated_code_defines():
    registry.load_lazy(force=True)
    rules = [r for table in (registry._RULES, registry._TANGENTS) for r in table.values()
             if r.called is None]
    assert len(rules) > 500
    for rule in rules:
        registry.check_globals(rule.fn, rule.name)


def test_a_rule_reading_another_global_is_refused():
    def rule(out, d_out, x):
        return d_out * UNDEFINED_SCALE * np.cos(x)  # noqa: F821

    with pytest.raises(registry.RuleError, match="UNDEFINED_SCALE"):
        registry.check_globals(rule, "np.sin")


def test_attribute_names_are_not_globals():
    def rule(out, d_out, x):
        return d_out * x.shape[0] * np.ones_like(x).T

    registry.check_globals(rule, "np.sin")
