"""Bad input gets a SrcGradError subclass naming file, line and column."""

from __future__ import annotations

import inspect

import gast
import numpy as np
import pytest

import srcgrad
from srcgrad.frontend import fence
from srcgrad.errors import (MissingRuleError, NonDifferentiableError, SrcGradError,
                            UnsupportedSyntaxError)

import unsupported

CASES = [
    ("uses_try", UnsupportedSyntaxError, "'try'"),
    ("uses_yield", UnsupportedSyntaxError, "generators"),
    ("uses_global", UnsupportedSyntaxError, "'global'"),
    ("uses_with", UnsupportedSyntaxError, "'with'"),
    ("passes_a_local_function", UnsupportedSyntaxError, "can only be called"),
    ("uses_del", UnsupportedSyntaxError, "'del'"),
    ("local_function_defined_in_two_branches", UnsupportedSyntaxError, "defined more than once"),
    ("starred_argument_of_unknown_length", UnsupportedSyntaxError, "how many arguments '*x'"),
    ("recursive_local_function", UnsupportedSyntaxError, "recursive local functions"),
    ("uses_walrus", UnsupportedSyntaxError, "':='"),
    ("uses_import", UnsupportedSyntaxError, "imports"),
    ("uses_starred_args", UnsupportedSyntaxError, "*args"),
    ("updates_an_alias_read_later", UnsupportedSyntaxError, "shares its memory"),
    ("uses_exec", UnsupportedSyntaxError, "'exec' is not supported"),
    ("calls_unknown_function", MissingRuleError, "np.fft.hfft"),
    ("undefined_name", SrcGradError, "not_defined_anywhere"),
    ("unknown_method", MissingRuleError, ".compress()"),
    ("rule_cannot_bind", SrcGradError, "np.sum"),
    ("returns_tuple", NonDifferentiableError, "scalar output"),
]


def _marked_line(fn) -> int:
    lines, first = inspect.getsourcelines(fn)
    for offset, line in enumerate(lines):
        if "# <- error" in line:
            return first + offset
    raise AssertionError(f"{fn.__name__} has no marked line")


@pytest.mark.parametrize("name, cls, words", CASES, ids=[c[0] for c in CASES])
def test_error_names_file_line_and_column(name, cls, words):
    fn = getattr(unsupported, name)
    with pytest.raises(cls) as info:
        srcgrad.grad(fn)(np.ones(3))
    err = info.value
    assert words in err.message
    assert err.filename == unsupported.__file__
    assert err.lineno == _marked_line(fn)
    assert err.col is not None
    text = str(err)
    assert f'line {err.lineno}' in text and "^" in text
    # the caret sits under the reported column of the shown line
    shown, caret = text.splitlines()[-2:]
    source_line = err.source_line.expandtabs()
    indent = len(source_line) - len(source_line.lstrip())
    assert caret.index("^") - 4 == err.col - indent
    assert shown.strip() == source_line.strip()


def test_every_gast_node_type_is_accepted_or_rejected():
    for kind in fence.node_types():
        assert kind in fence.SUPPORTED or kind in fence.REJECTED, kind


def test_unknown_node_type_is_rejected_not_crashed():
    func = gast.parse("def f(x):\n    return x").body[0]

    class Future(gast.expr):
        _fields = ()

    node = Future()
    node.lineno, node.col_offset = 2, 11
    func.body[0].value = node
    with pytest.raises(UnsupportedSyntaxError, match="'Future' nodes"):
        fence.check(func, "f.py")


def test_int_argument_in_wrt_is_a_clear_error():
    def f(x, n):
        return np.sum(x) * n

    with pytest.raises(NonDifferentiableError, match="argument 'n' .* it is int"):
        srcgrad.grad(f, wrt=1)(np.ones(3), 3)
    with pytest.raises(NonDifferentiableError, match="dtype int64"):
        srcgrad.grad(f)(np.arange(3), 3.0)


def test_non_scalar_output_of_grad_is_a_clear_error():
    def f(x):
        return np.sin(x)

    with pytest.raises(NonDifferentiableError, match="scalar output.*shape \\(3,\\)"):
        srcgrad.grad(f)(np.ones(3))


def test_bad_wrt_and_policy_are_errors():
    def f(x):
        return np.sum(x)

    with pytest.raises(SrcGradError, match="wrt"):
        srcgrad.grad(f, wrt="x")
    with pytest.raises(NonDifferentiableError, match="out of range"):
        srcgrad.grad(f, wrt=3)(np.ones(2))
    with pytest.raises(SrcGradError, match="policy"):
        srcgrad.grad(f, policy="bogus")


def test_source_not_found_is_a_clear_error():
    namespace = {}
    exec("import numpy as np\ndef f(x):\n    return np.sum(x)\n", namespace)  # noqa: S102
    with pytest.raises(SrcGradError, match="cannot find the source"):
        srcgrad.grad(namespace["f"])(np.ones(2))


def test_not_a_function_is_a_clear_error():
    with pytest.raises(SrcGradError):
        srcgrad.grad(np.sin)(np.ones(2))


def test_all_errors_derive_from_srcgrad_error():
    for cls in (UnsupportedSyntaxError, NonDifferentiableError, MissingRuleError,
                srcgrad.GradcheckError):
        assert issubclass(cls, SrcGradError)


def returns_tuples_in_two_branches(x):
    if x[0] > 0:
        return x * 2.0, x
    return x, x * 3.0


def test_tuple_from_several_returns_is_located_at_the_function():
    """Found while profiling the compiler on random programs: the one return
    srcgrad makes of several has no place, and the error read its line (a raw
    AttributeError)."""
    with pytest.raises(NonDifferentiableError, match="returns a tuple") as info:
        srcgrad.grad(returns_tuples_in_two_branches)(np.ones(3))
    assert info.value.lineno == inspect.getsourcelines(returns_tuples_in_two_branches)[1]
