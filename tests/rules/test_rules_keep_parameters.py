"""No rule assigns to one of its own parameters.

srcgrad inlines its rules into generated code with each parameter replaced by
the expression of the call site, but a name the rule assigns is bound in the
generated function: ``x = np.asarray(x)`` in a rule for ``f(x)`` rebinds the
*user's* ``x``, and every later read of it -- another adjoint, the forward
value -- sees the rule's value (found writing np.vander's rule: a wrong shape
there, a silently wrong gradient where shapes agree).  A rule takes a new name
for what it computes (``column = np.asarray(x)[:, np.newaxis]``).
"""

from __future__ import annotations

import ast
import inspect
import textwrap

import pytest

from srcgrad.rules import registry


def _assigned_parameters(fn) -> list[str]:
    try:
        source = textwrap.dedent(inspect.getsource(fn))
    except (OSError, TypeError):
        return []
    tree = ast.parse(source).body[0]
    args = tree.args
    params = {a.arg for a in args.posonlyargs + args.args + args.kwonlyargs}
    params |= {a.arg for a in (args.vararg, args.kwarg) if a is not None}
    found = []
    for node in ast.walk(tree):
        targets = {ast.Assign: lambda n: n.targets, ast.AugAssign: lambda n: [n.target],
                   ast.AnnAssign: lambda n: [n.target], ast.For: lambda n: [n.target],
                   ast.NamedExpr: lambda n: [n.target]}.get(type(node), lambda n: [])(node)
        for target in targets:
            found += [n.id for n in ast.walk(target) if isinstance(n, ast.Name) and n.id in params]
    return found


def _rules():
    registry.load_lazy(force=True)
    for kind, table in (("adjoint", registry.all_rules()), ("tangent", registry.all_tangents())):
        for primitive, rule in table.items():
            if rule.called is None:  # a user's rule is called by name, not inlined
                yield pytest.param(rule.fn, id=f"{kind}-{registry.display_name(primitive)}")


@pytest.mark.parametrize("fn", list(_rules()))
def test_rule_does_not_rebind_a_parameter(fn):
    assert not _assigned_parameters(fn), (
        f"{fn.__module__}.{fn.__name__} assigns to its parameter(s) "
        f"{_assigned_parameters(fn)}: inlined, that rebinds the caller's variable")


def test_the_check_sees_a_rebinding():
    def rule(out, d_out, x, N=None):
        x = x + 0
        return x
    assert _assigned_parameters(rule) == ["x"]
