"""``with np.errstate(...)`` blocks (srcgrad/frontend/errstate.py).

Numerical code silences NumPy's warnings where it expects an infinity
(``np.log`` of zeros masked afterwards).  The block's statements are
differentiated as written, and the generated function runs whole under the
settings the blocks ask for: the value and gradient are the same bits, and the
adjoint sweep (``d / p`` at p = 0) reports nothing the user silenced.  Settings
that change what the code does ("raise", "call") are refused, located, as is any
other ``with``.
"""
import os
import sys
import warnings

import numpy as np
import pytest
from numeric import check_every_policy

import errstate_fns as fns
import srcgrad
from srcgrad.errors import UnsupportedSyntaxError

X = np.array([0.3, -0.8, 1.1, 0.45])
P = np.array([0.0, 0.2, 0.5, 0.3])


@pytest.mark.parametrize("fn", [fns.entropy, fns.in_a_loop, fns.in_a_branch,
                                fns.through_a_helper, fns.nested,
                                fns.helper_called_for_its_update], ids=lambda f: f.__name__)
def test_every_policy_and_jvp_against_differences(fn):
    x = np.abs(X) if fn is fns.entropy else X
    check_every_policy(fn, (x,))
    check_every_policy(fn, (-x,))


def test_silenced_warnings_stay_silent_in_both_sweeps():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        want = fns.entropy(P)  # the function itself: log(0) silenced
        for policy in ("save", "recompute", "sqrt", ("revolve", 2)):
            value, grad = srcgrad.value_and_grad(fns.entropy, policy=policy)(P)
            assert value == want
            # d(p log p)/dp = log p + 1: -inf at p = 0, computed as the function would
            np.testing.assert_allclose(grad[1:], -(np.log(P[1:]) + 1.0), rtol=1e-12)
        srcgrad.jvp(fns.entropy, wrt=[0])(P, X)
    source = srcgrad.grad(fns.entropy).source
    assert "    with np.errstate(divide='ignore', invalid='ignore'):" in source


def test_the_quieter_setting_wins_and_all_spreads():
    source = srcgrad.grad(fns.nested).source
    assert "with np.errstate(divide='warn', over='ignore', under='ignore'):" in source
    assert "with np.errstate(divide='ignore', invalid='ignore', over='ignore', " \
           "under='ignore'):" in srcgrad.grad(fns.in_a_loop).source


def test_hvp_and_vjp():
    v = np.array([0.5, -1.0, 0.25, 2.0])
    eps = 1e-6
    grad = srcgrad.grad(fns.in_a_loop)
    want = (grad(X + eps * v) - grad(X - eps * v)) / (2 * eps)
    np.testing.assert_allclose(srcgrad.hvp(fns.in_a_loop)(X, v), want, rtol=1e-5, atol=1e-8)
    value, pullback = srcgrad.vjp(fns.entropy, np.abs(X))
    np.testing.assert_allclose(pullback(1.0)[0], srcgrad.grad(fns.entropy)(np.abs(X)), rtol=0)


def test_the_export_runs_under_the_settings(tmp_path):
    path = tmp_path / "exported_entropy.py"
    srcgrad.export(str(path), srcgrad.grad(fns.entropy))
    sys.path.insert(0, str(tmp_path))
    try:
        import exported_entropy
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            got = exported_entropy.grad_entropy(P)
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("exported_entropy", None)
    np.testing.assert_array_equal(got, srcgrad.grad(fns.entropy)(P))


def test_numba_backend_says_why_it_does_not_compile():
    g = srcgrad.grad(fns.in_a_loop, backend="numba")
    np.testing.assert_array_equal(g(X), srcgrad.grad(fns.in_a_loop)(X))
    assert "not compiled: it runs under np.errstate" in g.source


@pytest.mark.parametrize("fn, words", [
    (fns.raises, "'raise' and 'call' change what the code does"),
    (fns.bound_to_a_name, "not bound to a name"),
    (fns.other_context, "'with' statements are not supported"),
], ids=["raise", "as", "open"])
def test_refused_located(fn, words):
    with pytest.raises(UnsupportedSyntaxError) as info:
        srcgrad.grad(fn)(np.abs(X) + 0.1)
    err = info.value
    assert words in str(err)
    assert os.path.basename(err.filename) == "errstate_fns.py" and err.lineno and \
        err.col is not None


def test_an_inlined_helpers_blocks_hold_for_the_caller():
    # a helper called for what it does to its argument is inlined: its blocks'
    # settings become the caller's (findings R1-8: dropped, the warning came back)
    source = srcgrad.grad(fns.helper_called_for_its_update).source
    assert "    with np.errstate(divide='ignore'):" in source
