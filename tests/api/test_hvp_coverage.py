"""hvp of code that grad and jvp accept (review 3, findings 15, 16, 17, 32).

hvp is reverse mode over generated tangent code, so every runtime helper that
code calls needs rules, and what the second differentiation refuses must be
located in the user's code, not in srcgrad's generated file:

- ``np.float64(x[0])``: its tangent is cast with ``np.result_type``, which had
  no rule (MissingRuleError located in the generated tangent file);
- ``sorted(pairs, key=lambda t: t[1])``: the tangent passes the key, a local
  lambda ``t9`` of the tangent code, to ``sorted_order``, which was refused;
- ``h2 = hist[0]; h2 *= 3`` on an array a list holds: ``held_at`` had no rule;
- view writes (``e = z[None, :]; e[0, 1] = 7.0``, ``row = Y[t]; row[:] = ...``,
  ``M = buf.reshape(2, 3)`` of a buffer filled in place, a view taken before a
  loop that writes its base) are still refused at second order, but now at
  the user's line, saying what to write instead (a strict xfail records that
  their values are wanted).
"""

import numpy as np
import pytest

import srcgrad


def _fd_hvp(fn, x, v, eps=1e-5):
    grad = srcgrad.grad(fn)
    return (grad(x + eps * v) - grad(x - eps * v)) / (2 * eps)


def float64_ctor(x):
    a = np.float64(x[0]) * 2
    return a * a


def _scaled(x, k):
    return np.float64(x[k]) * (k + 1.0)


def float64_ctor_in_loop(x):
    total = 0.0
    for k in range(3):
        if k != 1:
            total = total + _scaled(x, k) ** 3
    return total


def sorted_key(x):
    pairs = [("a", x[0]), ("b", x[1] * 2), ("c", x[2] - 1)]
    srt = sorted(pairs, key=lambda t: t[1])
    return srt[0][1] ** 2 * 3 + srt[-1][1] ** 3


def sorted_key_in_loop(x):
    total = 0.0
    for k in range(2):
        pairs = [(x[0] * (k + 1), "a"), (x[1] - k, "b"), (x[2] ** 2, "c")]
        order = sorted(pairs, key=lambda t: -t[0])
        total = total + order[0][0] * order[1][0] ** 2
    return total


def held_in_list(x):
    h = x * 1.0
    hist = [h]
    h2 = hist[0]
    h2 *= 3
    return np.sum(hist[0] * x)


def held_in_list_branch(x):
    h = x * x
    hist = [h, x]
    if x[0] > 0:
        h2 = hist[0]
        h2 *= x[1]
    return np.sum(hist[0] * hist[1])


X = np.array([0.3, -0.7, 0.5])
DIRECTIONS = [np.array([1.0, 0.0, 0.0]), np.array([0.0, 1.0, 0.0]), np.array([0.4, -1.0, 0.7])]


@pytest.mark.parametrize("fn", [float64_ctor, float64_ctor_in_loop, sorted_key,
                                sorted_key_in_loop, held_in_list, held_in_list_branch],
                         ids=lambda f: f.__name__)
def test_hvp_of_code_grad_and_jvp_accept(fn):
    for v in DIRECTIONS:
        np.testing.assert_allclose(srcgrad.hvp(fn)(X, v), _fd_hvp(fn, X, v),
                                   rtol=1e-6, atol=1e-6)
    hess = srcgrad.hessian(fn)(X)
    np.testing.assert_allclose(hess @ DIRECTIONS[2], _fd_hvp(fn, X, DIRECTIONS[2]),
                               rtol=1e-6, atol=1e-6)


def test_the_findings_own_numbers():
    np.testing.assert_allclose(srcgrad.hvp(float64_ctor)(np.array([0.3, -0.7]), np.ones(2)),
                               [8.0, 0.0])
    np.testing.assert_allclose(srcgrad.hvp(sorted_key)(X, np.array([0.0, 1.0, 0.0])),
                               [0.0, 24.0, 0.0])
    np.testing.assert_allclose(srcgrad.hvp(held_in_list)(np.array([0.5, -1.0, 2.0]),
                                                         np.ones(3)), [6.0, 6.0, 6.0])


def view_write(x):
    z = x * 1.0
    e = z[None, :]
    e[0, 1] = 7.0
    s = np.squeeze(e)
    return np.sum(z * x * x) + np.sum(s * x)


def rows(x):
    Y = np.zeros((3, 3))
    for t in range(3):
        row = Y[t]
        row[:] = x * (t + 1)
        if t:
            row[0] += Y[t - 1, 1]
    return np.sum(Y ** 2)


def reshaped(x):
    buf = np.zeros(6)
    M = buf.reshape(2, 3)
    for i in range(3):
        buf[i] = x[i] ** 2
        buf[i + 3] = x[i] * x[0]
    return np.sum(M @ M.T)


def view_then_loop(x):
    y = x.copy()
    v = y[:2]
    s = 0.0
    for t in range(3):
        y[0] = y[1] * 2 + t
        s += v[0] * x[t]
    return s


VIEWS = [rows, reshaped, view_then_loop]


def test_a_write_through_an_expanded_view_hvp():
    """hvp follows view_write (a write through z[None, :], read through
    np.squeeze of the view) since the augmented-view work of session 33:
    against differences of the gradient."""
    v = np.array([0.4, -1.0, 0.7])
    np.testing.assert_allclose(srcgrad.hvp(view_write)(X, v), _fd_hvp(view_write, X, v),
                               rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("fn", VIEWS, ids=lambda f: f.__name__)
def test_view_writes_are_refused_at_the_users_line(fn):
    """grad and jvp follow them; hvp refuses, located in this file at the update
    (never in srcgrad's generated tangent code)."""
    srcgrad.grad(fn)(X)
    srcgrad.jvp(fn, (X,), (np.ones(3),))
    with pytest.raises(srcgrad.SrcGradError) as info:
        srcgrad.hvp(fn)(X, np.ones(3))
    assert info.value.filename == __file__
    assert "srcgrad/code" not in str(info.value)
    assert info.value.source_line is not None and "=" in info.value.source_line


@pytest.mark.xfail(strict=True, reason="hvp (reverse over tangent code) refuses view writes "
                   "that grad and jvp follow: findings 17 and 32")
@pytest.mark.parametrize("fn", VIEWS, ids=lambda f: f.__name__)
def test_view_writes_hvp(fn):
    v = np.array([0.4, -1.0, 0.7])
    np.testing.assert_allclose(srcgrad.hvp(fn)(X, v), _fd_hvp(fn, X, v), rtol=1e-6, atol=1e-6)


def test_errors_about_generated_code_move_to_the_users_function():
    """Run-time refusals raised while the second-order code runs carry the place
    in the tangent code they were generated at; they move to the user's
    function as compile-time ones do (the line it copies, else the def line)."""
    from srcgrad.api.second_order import at_user_code

    generated = "/somewhere/srcgrad/code/tangent_view_write_0.py"
    error = srcgrad.MissingRuleError("no rule", filename=generated, lineno=18, col=4,
                                     source_line="    e[0, 1] = 7.0")
    moved = at_user_code(error, view_write, {generated})
    assert (moved.filename, moved.lineno) == (__file__, view_write.__code__.co_firstlineno + 3)
    assert isinstance(moved, srcgrad.MissingRuleError) and "no rule" in str(moved)
    error = srcgrad.MissingRuleError("no rule", filename=generated, lineno=30, col=4,
                                     source_line="    d_t2 = d_t1 * 2")
    moved = at_user_code(error, view_write, {generated})
    assert (moved.filename, moved.lineno) == (__file__, view_write.__code__.co_firstlineno)
    elsewhere = srcgrad.MissingRuleError("no rule", filename=__file__, lineno=1)
    assert at_user_code(elsewhere, view_write, {generated}) is elsewhere


def polynomial_of_parameters(a):
    return np.sum(np.polyval(a[:3], a[3:]) ** 2)


def test_hvp_through_polyval():
    """np.polyval's tangent calls np.polyder, which had no adjoint rule: its hvp
    was refused (review s36 R4-13); np.polyder is linear in the coefficients."""
    a = np.array([0.5, -1.0, 2.0, 0.3, 0.7])
    v = np.array([0.1, 0.2, -0.3, 0.4, 0.5])
    np.testing.assert_allclose(srcgrad.hvp(polynomial_of_parameters)(a, v),
                               _fd_hvp(polynomial_of_parameters, a, v), rtol=1e-6, atol=1e-6)
