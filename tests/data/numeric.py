"""Numerical checks shared by the tests: finite differences and the
dot-product identity, always evaluated in float64."""

from __future__ import annotations

import numpy as np


def is_float(value) -> bool:
    if isinstance(value, (bool, np.bool_)):
        return False
    if isinstance(value, (float, np.floating)):
        return True
    return isinstance(value, np.ndarray) and value.dtype.kind == "f"


def float_positions(args) -> tuple[int, ...]:
    return tuple(i for i, a in enumerate(args) if is_float(a))


def _with(args, index, value):
    args = list(args)
    args[index] = value
    return args


def numeric_grad(fn, args, index, eps=1e-6):
    """Central-difference gradient of scalar ``fn`` with respect to ``args[index]``."""
    x = args[index]
    if isinstance(x, np.ndarray):
        g = np.zeros(x.shape)
        for pos in np.ndindex(x.shape):
            plus, minus = x.astype(np.float64), x.astype(np.float64)
            plus[pos] += eps
            minus[pos] -= eps
            g[pos] = (_number(fn(*_with(args, index, plus))) -
                      _number(fn(*_with(args, index, minus)))) / (2 * eps)
        return g
    return (_number(fn(*_with(args, index, x + eps))) -
            _number(fn(*_with(args, index, x - eps)))) / (2 * eps)


def _number(value) -> float:
    """A scalar output as a float; an array of one element is one too (grad
    takes ``y.T @ K @ y`` of a column ``y``), a larger one raises."""
    return float(np.asarray(value).item()) if np.ndim(value) else float(value)


def perturbed(args, i, idx, t):
    """``args`` with element ``idx`` of argument ``i`` moved by ``t`` (a copy; a
    float argument moves as a whole)."""
    new = list(args)
    a = args[i]
    if isinstance(a, np.ndarray):
        b = a.copy()
        b[idx] += t
        new[i] = b
    else:
        new[i] = a + t
    return new


def inner(a, b) -> float:
    if isinstance(a, tuple):
        return sum(inner(x, y) for x, y in zip(a, b))
    return float(np.sum(np.asarray(a, dtype=np.float64) * np.asarray(b, dtype=np.float64)))


def jvp_fd(fn, args, positions, directions, eps=1e-6):
    """J v by central differences along ``directions`` (one per position)."""
    plus, minus = list(args), list(args)
    for i, v in zip(positions, directions):
        plus[i] = args[i] + eps * v
        minus[i] = args[i] - eps * v
    fp, fm = fn(*plus), fn(*minus)
    if isinstance(fp, tuple):
        return tuple((np.asarray(a, np.float64) - np.asarray(b, np.float64)) / (2 * eps)
                     for a, b in zip(fp, fm))
    return (np.asarray(fp, np.float64) - np.asarray(fm, np.float64)) / (2 * eps)


def random_like(rng, value):
    if isinstance(value, tuple):
        return tuple(random_like(rng, v) for v in value)
    if np.ndim(value) == 0 and not isinstance(value, np.ndarray):
        return float(rng.standard_normal())
    return rng.standard_normal(np.shape(value))


def assert_close(actual, expected, rtol=1e-5, atol=1e-7, what=""):
    actual = np.asarray(actual, dtype=np.float64)
    expected = np.asarray(expected, dtype=np.float64)
    scale = max(1.0, float(np.max(np.abs(expected), initial=0.0)))
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol * scale, err_msg=what)


def pure(fn):
    """``fn`` called on copies of its array arguments: the original Python function
    may update them in place (the generated code never does)."""
    def call(*args):
        return fn(*[a.copy() if isinstance(a, np.ndarray) else a for a in args])
    return call


def bit_identical(actual, expected, nan_signs=True) -> bool:
    """Whether ``actual`` is ``expected`` bit for bit: the same type (tuples element by
    element), shape and dtype, equal elements (NaN where NaN) and the same sign of
    every zero.  The generated code must compute the function's own value exactly.
    ``nan_signs=False``: the sign bit of a NaN left out (:func:`bit_identical_but_nan_signs`)."""
    if isinstance(actual, tuple) or isinstance(expected, tuple):
        return (type(actual) is type(expected) and len(actual) == len(expected)
                and all(bit_identical(a, e, nan_signs) for a, e in zip(actual, expected)))
    if type(actual) is not type(expected):
        return False
    a, e = np.asarray(actual), np.asarray(expected)
    if a.shape != e.shape or a.dtype != e.dtype:
        return False
    if a.dtype.kind not in "fc":
        return bool(np.array_equal(a, e))
    kept = np.ones(a.shape, bool) if nan_signs else ~np.isnan(a)
    return bool(np.array_equal(a, e, equal_nan=True)
                and np.array_equal(np.signbit(a.real)[kept], np.signbit(e.real)[kept])
                and np.array_equal(np.signbit(a.imag)[kept], np.signbit(e.imag)[kept]))


def bit_identical_but_nan_signs(actual, expected) -> bool:
    """:func:`bit_identical`, except the sign bit of a NaN, which IEEE 754 leaves
    uninterpreted: what optimize/signs.py keeps (moving a minus sign changes the
    sign of a NaN an operation makes, ``inf * 0``, or passes on)."""
    return bit_identical(actual, expected, nan_signs=False)


def _describe(value) -> str:
    if isinstance(value, tuple):
        return "(" + ", ".join(_describe(v) for v in value) + ")"
    if isinstance(value, np.ndarray):
        with np.printoptions(precision=17, floatmode="unique"):
            return f"{type(value).__name__}[{value.dtype}, shape {value.shape}] {value!r}"
    return f"{type(value).__name__} {value!r}"


def assert_bit_identical(actual, expected, what=""):
    """``actual`` (the generated code's value) is ``expected`` (the function's own
    value) bit for bit; see :func:`bit_identical`."""
    __tracebackhide__ = True
    if not bit_identical(actual, expected):
        raise AssertionError(f"{what}: the generated code's value is not the function's own, "
                             f"bit for bit\n  generated: {_describe(actual)}\n"
                             f"  function:  {_describe(expected)}")

#: The policies the soundness tests run every program under.
POLICIES = ("save", "recompute", "save_products", "sqrt", ("revolve", 2))


def check_policies(fn, args, wrt=0, policies=POLICIES):
    """Under each policy: value bit-identical to ``fn``'s (check=True) and gradient
    close to central finite differences."""
    import srcgrad  # noqa: PLC0415 - this module is also used without srcgrad loaded
    for policy in policies:
        _, grad = srcgrad.value_and_grad(fn, wrt=wrt, policy=policy, check=True)(*args)
        assert_close(grad, numeric_grad(pure(fn), list(args), wrt), rtol=1e-5, atol=1e-6,
                     what=f"{fn.__name__}, policy {policy!r}")


def check_both_modes(fn, x, policy="save"):
    """Value bit for bit, gradient and tangent against central differences, and
    the caller's array ``x`` unchanged, in both modes: what every program of the
    alias tests (e2e/test_alias_calls.py, e2e/test_container_aliases.py) that
    srcgrad follows must give, kept here once so the two check the same."""
    import srcgrad  # (lazily: this module is also used without srcgrad loaded)
    expected = pure(fn)(x)
    fd = numeric_grad(pure(fn), [x], 0)
    given = x.copy()
    value, grad = srcgrad.value_and_grad(fn, policy=policy)(given)
    assert_bit_identical(value, expected)
    assert_close(grad, fd, what=f"{fn.__name__} gradient")
    np.testing.assert_array_equal(given, x)  # the caller's array is left alone
    direction = np.linspace(0.5, 1.5, x.size).reshape(x.shape)
    value, tangent = srcgrad.jvp(fn, (given,), (direction,))
    assert_bit_identical(value, expected)
    assert_close(tangent, jvp_fd(pure(fn), [x], [0], [direction]),
                 what=f"{fn.__name__} tangent")
    np.testing.assert_array_equal(given, x)


def check_every_policy(fn, args, wrt=0):
    """Value bit for bit under every policy and in jvp, the gradient and the
    tangent against central differences, for ``fn(*args)`` and argument
    ``wrt``: what the refusal tests (e2e/test_refusals_fixed.py,
    e2e/test_refusals_lifted.py) check of each program they make work.
    Returns the gradient."""
    import srcgrad  # (lazily: this module is also used without srcgrad loaded)
    want = pure(fn)(*args)
    fd = numeric_grad(pure(fn), list(args), wrt)
    for policy in POLICIES:
        value, grad = srcgrad.value_and_grad(fn, wrt=wrt, policy=policy)(*args)
        assert_bit_identical(value, want, f"{fn.__name__}, policy {policy!r}")
        assert_close(grad, fd, rtol=1e-6, atol=1e-8, what=f"{fn.__name__}, policy {policy!r}")
    direction = np.linspace(-1.0, 1.5, np.size(args[wrt])).reshape(np.shape(args[wrt]))
    value, tangent = srcgrad.jvp(fn, wrt=[wrt])(*args, direction)
    assert_bit_identical(value, want, f"{fn.__name__}, jvp")
    assert_close(tangent, jvp_fd(pure(fn), list(args), [wrt], [direction]), rtol=1e-6,
                 atol=1e-8, what=f"{fn.__name__}, jvp")
    return grad


def assert_refused_both_modes(fn, kind, *words, x):
    """Refused (at compile time or as the code runs) with a located ``kind``, in
    both modes, the message holding each of ``words``: what every program of the
    alias tests that srcgrad refuses must give, kept here once."""
    import pytest  # (lazily: this module is also used outside pytest)

    import srcgrad  # (lazily: this module is also used without srcgrad loaded)
    for run in (lambda: srcgrad.grad(fn)(x.copy()),
                lambda: srcgrad.jvp(fn, (x.copy(),), (np.ones(x.shape),))):
        with pytest.raises(kind) as info:
            run()
        err = info.value
        assert err.filename and err.filename.endswith(".py") and err.lineno, err
        for word in words:
            assert word in err.message, err.message
