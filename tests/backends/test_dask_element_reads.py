"""An element (or row, or window) of a Dask array read before an element
update of that array and read after it: Dask's value is the one read before,
and the generated code keeps it.

``z[0], z[1] = z[1], z[0]`` and ``a = z[0]; z[0] = 5.0; ... a`` raised
AliasedUpdateError ("'z' is updated in place while 'a' shares its memory") on
a Dask array (outside tester T2, session 29) though NumPy runs them: the
run-time check before the update (``runtime.aliases.untouched``) took the
0-d Dask array ``z[0]`` for an object that may hold anything.  A Dask array
is a graph over immutable chunks: ``z[0] = v`` gives the object ``z`` a new
graph, and an array read from it before keeps computing from the old one.
The check now says so where both are Dask arrays; a NumPy array, and a Dask
array made from a NumPy one that is updated, are checked as before.

Each program is checked on Dask under every policy (value bit for bit against
the function run on the same Dask array, gradient against central differences
of the function on Dask), in jvp and hvp; and on NumPy, where the semantics
differ for a row of a 2-d array (a view there), the same checks.
"""

from __future__ import annotations

import numpy as np
import pytest
from numeric import assert_bit_identical, assert_close, check_every_policy, jvp_fd, numeric_grad

import srcgrad
from srcgrad import AliasedUpdateError
from srcgrad.runtime import untouched

da = pytest.importorskip("dask.array")

POLICIES = ["save", "recompute", "sqrt", ("revolve", 2)]
X = np.array([0.5, -1.0, 2.0, 0.3])


def swap(x):  # the tester's program
    z = x * 1.0
    z[0], z[1] = z[1], z[0]
    return np.sum(z * np.arange(4.0))


def kept(x):  # the tester's second program
    z = x * 1.0
    a = z[0]
    z[0] = 5.0
    return np.sum(z) * a


def in_a_loop(x):
    z = np.sin(x)
    for k in range(3):
        a = z[k]
        z[k] = z[k + 1] * 2.0
        if k % 2:
            z[k + 1] = a * a
        else:
            z[k + 1] = a
    return np.sum(z * np.arange(1.0, 5.0))


def _swap01(z):
    z[0], z[1] = z[1], z[0]
    return z


def in_a_helper(x):
    z = x * 2.0
    z = _swap01(z)
    b = z[3]
    z[3] = z[2] * b
    return np.sum(z * z) + b


def row_kept(x):  # Dask: a is the row before; NumPy: a view, the row after
    Z = x.reshape(2, 2) * 1.0
    a = Z[0]
    Z[0] = Z[1] * 2.0
    return np.sum(Z) + np.sum(a * a)


def window_kept(x):  # Dask: r as it was; NumPy: r sees z[1]
    z = x * 1.0
    r = z[1:]
    z[1] = 5.0 * z[0]
    return np.sum(r * r) + np.sum(z)


PROGRAMS = [swap, kept, in_a_loop, in_a_helper, row_kept, window_kept]


def _on_dask(fn):
    """``fn`` run on a Dask array made from its NumPy argument, computed."""
    def run(v):
        return np.asarray(fn(da.from_array(v, chunks=2)))
    return run


@pytest.mark.parametrize("fn", PROGRAMS)
def test_dask_element_read_across_an_update(fn):
    want = _on_dask(fn)(X)
    fd = numeric_grad(_on_dask(fn), [X], 0)
    for policy in POLICIES:
        value, grad = srcgrad.value_and_grad(fn, policy=policy)(da.from_array(X, chunks=2))
        assert_bit_identical(np.asarray(value), want, f"{fn.__name__} on Dask, {policy!r}")
        assert_close(np.asarray(grad), fd, rtol=1e-6, atol=1e-8,
                     what=f"{fn.__name__} gradient on Dask, policy {policy!r}")
    direction = np.linspace(0.5, 1.5, X.size)
    value, tangent = srcgrad.jvp(fn, (da.from_array(X, chunks=2),), (direction,))
    assert_bit_identical(np.asarray(value), want, f"{fn.__name__} jvp on Dask")
    assert_close(np.asarray(tangent), jvp_fd(_on_dask(fn), [X], [0], [direction]),
                 rtol=1e-6, atol=1e-8, what=f"{fn.__name__} tangent on Dask")
    hv = srcgrad.hvp(fn)(da.from_array(X, chunks=2), direction)
    grad, eps = srcgrad.grad(fn), 1e-6
    fd_hv = (np.asarray(grad(da.from_array(X + eps * direction, chunks=2)))
             - np.asarray(grad(da.from_array(X - eps * direction, chunks=2)))) / (2 * eps)
    assert_close(np.asarray(hv), fd_hv, rtol=1e-5, atol=1e-6, what=f"{fn.__name__} hvp")


@pytest.mark.parametrize("fn", PROGRAMS)
def test_numpy_element_read_across_an_update(fn):
    check_every_policy(fn, (X.copy(),))


def test_dask_and_numpy_differ_where_a_row_is_a_view():
    """The generated code follows each library: a row of a 2-d NumPy array is
    a view that sees the update, a Dask row is not."""
    on_numpy = srcgrad.value_and_grad(row_kept)(X.copy())
    on_dask = srcgrad.value_and_grad(row_kept)(da.from_array(X, chunks=2))
    assert on_numpy[0] == row_kept(X.copy()) != np.asarray(on_dask[0])
    assert not np.allclose(on_numpy[1], np.asarray(on_dask[1]))


def test_autograd_agrees_on_the_swap():
    autograd = pytest.importorskip("autograd")
    anp = pytest.importorskip("autograd.numpy")

    def plain(x):  # swap, without the element writes
        return anp.sum(anp.concatenate([x[1:2], x[0:1], x[2:]]) * np.arange(4.0))

    assert_close(np.asarray(srcgrad.grad(swap)(da.from_array(X, chunks=2))),
                 autograd.grad(plain)(X), rtol=1e-12, what="autograd")


def test_untouched_still_checks_numpy_memory():
    """Only a Dask array read from a Dask array is let go: a NumPy view, and a
    Dask array wrapping a NumPy array's memory, still see its update."""
    z = np.arange(4.0)
    lazy = da.from_array(z.copy(), chunks=2)
    untouched(lazy[0], lazy, 0, "never raised")
    untouched(lazy[1:], lazy, 1, "never raised")
    with pytest.raises(AliasedUpdateError):
        untouched(lazy, lazy, 0, "the array itself sees it")
    with pytest.raises(AliasedUpdateError):
        untouched([lazy], lazy, 0, "a list holding it sees it")
    with pytest.raises(AliasedUpdateError):
        untouched(z[1:], z, 1, "a NumPy view sees it")
    with pytest.raises(AliasedUpdateError):
        untouched(da.from_array(z, chunks=2), z, 0, "a Dask array over z's memory may see it")
