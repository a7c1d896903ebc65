"""C-style out-parameter helpers: ``fill_rhs(du, u, k)`` filling a work buffer.

An outside tester's heat equation called a module-level helper for what it
writes into ``du`` and then read ``du``; srcgrad refused it, while
docs/limitations.md said "a buffer only passed to be filled ... is fine".
The documentation now says exactly what is refused (a call whose result is
unused, with a value being differentiated flowing in) and what works, and
the message says to return the filled buffer, naming the assignment to
write.  Both forms it suggests are checked here under every policy.  Since
session 32 such a plain helper is inlined where it is called
(normalize/effect_calls.py) and the tester's program works as written; one
srcgrad does not inline (a ``return`` midway) is refused with that message."""

from __future__ import annotations

import numpy as np
import pytest
from numeric import assert_bit_identical, assert_close, check_policies, jvp_fd

import srcgrad
from srcgrad.errors import UnsupportedSyntaxError

U0 = np.array([0.3, -1.0, 0.5, 2.0, 0.1, -0.4])
POLICIES = ["save", "recompute", "sqrt", ("revolve", 2)]


def fill_rhs(out, u, k):
    out[1:-1] = k * (u[2:] - 2 * u[1:-1] + u[:-2])
    out[0] = 0.0
    out[-1] = 0.0


def heat(u0, k):  # the tester's program
    u = u0
    du = np.zeros_like(u0)
    for _ in range(5):
        fill_rhs(du, u, k)
        u = u + du
    return np.sum(u ** 2)


def fill_rhs_returning(out, u, k):
    out[1:-1] = k * (u[2:] - 2 * u[1:-1] + u[:-2])
    out[0] = 0.0
    out[-1] = 0.0
    return out


def heat_returned(u0, k):
    u = u0
    du = np.zeros_like(u0)
    for _ in range(5):
        du = fill_rhs_returning(du, u, k)
        if du[1] > 10.0:
            break
        u = u + du
    return np.sum(u ** 2)


def heat_local(u0, k):
    def fill(out, u):
        out[1:-1] = k * (u[2:] - 2 * u[1:-1] + u[:-2])
        out[0] = 0.0
        out[-1] = 0.0
    u = u0
    du = np.zeros_like(u0)
    for _ in range(5):
        fill(du, u)
        u = u + du
    return np.sum(u ** 2)


@pytest.mark.parametrize("fn", [heat_returned, heat_local])
def test_the_written_forms_are_differentiated(fn):
    args = (U0, 0.2)
    check_policies(fn, args, policies=POLICIES)
    value, tangent = srcgrad.jvp(fn, args, (np.ones(6), 0.0))
    assert_bit_identical(value, heat(*args))
    assert_close(tangent, jvp_fd(fn, list(args), [0], [np.ones(6)]))


def fill_rhs_guarded(out, u, k):  # a return midway: not inlined (normalize/effect_calls.py)
    if k == 0.0:
        return
    out[1:-1] = k * (u[2:] - 2 * u[1:-1] + u[:-2])
    out[0] = 0.0
    out[-1] = 0.0


def heat_guarded(u0, k):
    u = u0
    du = np.zeros_like(u0)
    for _ in range(5):
        fill_rhs_guarded(du, u, k)
        u = u + du
    return np.sum(u ** 2)


def test_the_tester_program_is_differentiated():
    # since session 32 a plain helper called for its writes is inlined where it is
    # called (normalize/effect_calls.py): the tester's heat works as written
    args = (U0, 0.2)
    check_policies(heat, args, policies=POLICIES)
    value, tangent = srcgrad.jvp(heat, args, (np.ones(6), 0.0))
    assert_bit_identical(value, heat(*args))
    assert_close(tangent, jvp_fd(heat, list(args), [0], [np.ones(6)]))


def test_the_out_parameter_call_is_refused_saying_to_return_the_buffer():
    with pytest.raises(UnsupportedSyntaxError) as info:
        srcgrad.grad(heat_guarded)(U0, 0.2)
    err = info.value
    assert err.filename.endswith("test_out_parameter_helpers.py")
    assert "fill_rhs_guarded(du, u, k)" in err.message
    assert "return the filled buffer" in err.message
    assert "du = fill_rhs_guarded(du, u, k)" in err.message
