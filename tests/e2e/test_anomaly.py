"""Anomaly mode (issue 18): ``check_finite=True`` / ``SRCGRAD_ANOMALY=1``.

The generated adjoint sweep checks each cotangent where it is made; the first
NaN or Inf raises ``NonFiniteGradientError`` at the user's line, naming the
expression and the forward values its adjoint read.  Off, the code is exactly
the default code.
"""

from __future__ import annotations

import inspect
import warnings

import numpy as np
import pytest

import srcgrad
from srcgrad import NonFiniteGradientError, SrcGradError
from srcgrad import pipeline as compiler
from srcgrad.pipeline import Options


def cross_entropy(z, y):
    e = np.exp(z - np.max(z))
    p = e / np.sum(e)
    return -np.sum(y * np.log(p))


def looped(x, n):
    s = 0.0
    for i in range(n):
        s = s + np.sum(np.sqrt(x) * i)
    return s


def calls_helper(x):
    return np.sum(helper(x) * 2.0)


def helper(x):
    return np.log(x)


def line_of(fn, text):
    """The file line of ``fn``'s source line holding ``text``."""
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


# p underflows to 0 where z is far below its maximum: log(p) is -inf
Z = np.array([-1000.0, 0.0, 1.0])
Y = np.array([1.0, 0.0, 0.0])


def raised(g, *args) -> NonFiniteGradientError:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        with pytest.raises(NonFiniteGradientError) as info:
            g(*args)
    return info.value


def test_log_of_underflowed_softmax_is_reported_at_the_users_line():
    g = srcgrad.grad(cross_entropy, check_finite=True)
    error = raised(g, Z, Y)
    assert isinstance(error, SrcGradError)
    assert error.filename == __file__
    assert error.lineno == line_of(cross_entropy, "np.log(p)")
    source_line = inspect.getsourcelines(cross_entropy)[0][3]
    assert error.col == source_line.index("np.log(p)")
    message = str(error)
    assert "the adjoint of np.log(p)" in message
    assert "p: shape (3,), min 0.0, max" in message
    assert "return -np.sum(y * np.log(p))" in message   # the line, with a caret


def test_value_and_grad_and_vjp_check_too():
    error = raised(srcgrad.value_and_grad(cross_entropy, check_finite=True), Z, Y)
    assert error.lineno == line_of(cross_entropy, "np.log(p)")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        _, pullback = srcgrad.vjp(cross_entropy, Z, Y, wrt=0, check_finite=True)
    assert "check_finite(" in pullback.source
    error = raised(pullback, 1.0)
    assert error.lineno == line_of(cross_entropy, "np.log(p)")


def test_off_by_default_the_code_has_no_checks(monkeypatch):
    monkeypatch.delenv("SRCGRAD_ANOMALY", raising=False)
    default = srcgrad.grad(cross_entropy).source
    assert "check_finite" not in default
    assert srcgrad.grad(cross_entropy, check_finite=False).source == default
    assert compiler.generate(cross_entropy, Options()).source == default
    on = srcgrad.grad(cross_entropy, check_finite=True).source
    assert "check_finite(d_p, " in on and on != default
    # the checks are all the difference, beside the lines releasing each array
    # after its last read (memory/release_read.py), which the checked code has
    # not: its checks read the arrays after the statements that make them
    kept = [line for line in on.replace("import check_finite, ", "import ").splitlines()
            if not line.lstrip().startswith("check_finite(")]
    released = [line for line in default.splitlines() if line.endswith("# read no more")]
    assert released and "del " in released[0]
    assert kept == [line for line in default.splitlines() if line not in released]


def test_environment_variable_turns_it_on(monkeypatch):
    monkeypatch.setenv("SRCGRAD_ANOMALY", "1")
    g = srcgrad.grad(cross_entropy)
    assert g.options.check_finite
    assert "check_finite(" in g.source
    assert raised(g, Z, Y).lineno == line_of(cross_entropy, "np.log(p)")
    assert not srcgrad.grad(cross_entropy, check_finite=False).options.check_finite
    monkeypatch.setenv("SRCGRAD_ANOMALY", "0")
    assert "check_finite" not in srcgrad.grad(cross_entropy).source


def test_finite_gradients_are_bit_for_bit_the_same():
    rng = np.random.default_rng(0)
    z, y = rng.normal(size=5), np.eye(5)[2]
    plain = srcgrad.value_and_grad(cross_entropy)(z, y)
    checked = srcgrad.value_and_grad(cross_entropy, check_finite=True)(z, y)
    assert plain[0] == checked[0]
    assert np.array_equal(plain[1], checked[1])
    x = rng.uniform(0.5, 2.0, size=4)
    assert np.array_equal(srcgrad.grad(looped, check_finite=True)(x, 3),
                          srcgrad.grad(looped)(x, 3))


def test_in_a_loop_the_line_of_the_loop_body():
    g = srcgrad.grad(looped, check_finite=True)
    error = raised(g, np.array([0.0, 1.0]), 3)
    assert error.lineno == line_of(looped, "np.sqrt(x)")
    assert "the adjoint of np.sqrt(x)" in str(error)
    assert "1 of 2 elements are not finite (1 inf, 0 nan), the first at index (0,)" in str(error)


def test_a_called_function_is_checked_at_its_own_line():
    g = srcgrad.grad(calls_helper, check_finite=True)
    error = raised(g, np.array([0.0, 1.0]))
    assert error.lineno == line_of(helper, "np.log(x)")
    assert "the adjoint of np.log(x)" in str(error)


def test_the_option_is_part_of_the_cache_key():
    assert Options(check_finite=True) != Options()
    assert "check_finite" not in srcgrad.grad(cross_entropy).source
    assert "check_finite" in srcgrad.grad(cross_entropy, check_finite=True).source
    assert "check_finite" not in srcgrad.grad(cross_entropy).source


def test_exported_code_checks_without_srcgrad(tmp_path):
    g = srcgrad.grad(cross_entropy, check_finite=True)
    path = tmp_path / "exported.py"
    srcgrad.export(str(path), g)
    namespace = {"__name__": "exported"}
    exec(compile(path.read_text(), str(path), "exec"), namespace)
    fn = next(v for k, v in namespace.items() if k.startswith("grad_cross_entropy"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        with pytest.raises(ValueError) as info:
            fn(Z, Y)
    assert info.value.kind == "NonFiniteGradientError"
    assert info.value.lineno == line_of(cross_entropy, "np.log(p)")


@pytest.mark.parametrize("options", [dict(policy="sqrt"), dict(policy=("revolve", 2)),
                                     dict(policy="recompute"), dict(optimize=False)], ids=repr)
def test_every_policy_checks_and_keeps_the_gradient(options):
    x = np.array([0.5, 1.0])
    assert np.array_equal(srcgrad.grad(looped, check_finite=True, **options)(x, 5),
                          srcgrad.grad(looped, **options)(x, 5))
    error = raised(srcgrad.grad(looped, check_finite=True, **options), np.array([0.0, 1.0]), 5)
    assert error.lineno == line_of(looped, "np.sqrt(x)")


def _named_like_the_checks_parameters(x, col):
    lineno = np.cos(x)
    return np.sum(np.sin(x) * col * lineno)


def test_forward_values_may_be_named_like_the_checks_parameters():
    x = np.array([0.3, 0.7])
    got = srcgrad.grad(_named_like_the_checks_parameters, check_finite=True)(x, np.ones(2))
    want = srcgrad.grad(_named_like_the_checks_parameters)(x, np.ones(2))
    np.testing.assert_array_equal(got, want)


def _gaussian_nll(v, S):
    return 0.5 * (np.log(S[0, 0]) + v[0] ** 2 / S[0, 0])


def test_the_forward_values_are_shown_as_the_users_expressions():
    """A value srcgrad named (t3 for S[0, 0]) is shown as the expression the user
    wrote, and the min and max of an array holding a NaN are those of its finite
    elements (outside tester: 't3: min nan, max nan')."""
    error = raised(srcgrad.grad(_gaussian_nll, check_finite=True),
                   np.array([np.nan, 1.0]), np.eye(2))
    message = error.message
    assert "S[0, 0]:" in message or "v[0]:" in message, message
    assert not any(line.strip().startswith("t") and line.strip()[1:2].isdigit()
                   for line in message.splitlines()), message
    assert "min 1.0, max 1.0 of the finite elements, 1 non-finite" in message, message


def folded_sqrt(x):
    r = np.sqrt(x ** 2)
    h = np.log(r + 1.0)
    return np.sum(h)


def test_a_statement_computing_several_adjoints_names_each():
    """sqrt's 1/0 at r = 0 was blamed on x ** 2 alone: the optimiser had folded
    both adjoints into one statement, and the check named its last (review s36
    R4-19).  The message names every expression whose adjoint the statement
    computes."""
    error = raised(srcgrad.grad(folded_sqrt, check_finite=True), np.array([0.0, 1.0]))
    assert "np.sqrt(x ** 2)" in error.message, error.message
