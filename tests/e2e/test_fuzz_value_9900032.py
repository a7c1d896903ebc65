"""Fuzz seed 9900032: an array updated in place through a view of it (``b *=
0.5``, ``b = z[:, 1]`` or a list item taken from ``z``) inside a loop that swaps
names (``w, z = z, w``) -- the swap hands ``z``'s array to ``w``, which NumPy's
update then changes too.  The alias check dropped the sharing of ``w = z`` where
``z`` is rebound after it (``z = t``), although ``w`` keeps ``z``'s old array and
the view ``b`` of it: ``w`` was read afterwards without a check, and the value
was silently wrong (0.80078 where the function gives 0.88205).  Such programs are
now refused as the code runs, where the memory is shared; the ones whose
update changes no swapped array run as the function does."""

import numpy as np
import pytest

import srcgrad
from srcgrad.errors import AliasedUpdateError
from tests.data.numeric import assert_refused_both_modes, check_every_policy


def swap_in_loop(x):
    z = np.tanh(x)
    w = np.sin(x)
    b = z[:, 1]
    for k in range(1):
        w, z = z, w
        b *= 0.5
    return np.sum(w * w) + np.sum(z)


def swap_over_list_items(x):
    z = np.tanh(x)
    w = np.sin(x)
    ys = [z[:, 1]]
    for b in ys:
        w, z = z, w
        b *= 0.5
    return np.sum(w * w) + 0.5 * np.sum(z)


def swap_in_nested_loops(x):
    z = np.tanh(x)
    w = np.sin(x)
    ys = [z[:, 1], np.cos(x[:, 0])]
    for n, b in enumerate(ys):
        for k in range(3):
            w, z = z, w
            b *= 0.5
            b -= np.tanh(np.sum(ys[0]))
    return np.sum(w * w) + 0.5 * np.sum(z)


def swap_in_branch(x):
    z = np.tanh(x)
    w = np.sin(x)
    b = z[:, 1]
    for k in range(2):
        w, z = z, w
        if k == 1:
            b *= 0.5
    return np.sum(w * w) + np.sum(z)


def swap_in_helper(x):
    return swap_in_loop(x) * 2.0   # the loop inlined from a helper


@pytest.mark.parametrize("fn", [swap_in_loop, swap_over_list_items, swap_in_nested_loops,
                                swap_in_branch, swap_in_helper])
def test_update_seen_through_a_swapped_name_is_refused(fn):
    x = np.random.default_rng(9900032).uniform(-1.5, 1.5, (3, 4))
    for policy in ("save", "recompute", "sqrt", ("revolve", 2)):
        with pytest.raises(AliasedUpdateError) as info:
            srcgrad.value_and_grad(fn, policy=policy)(x.copy())
        message = info.value.message
        assert "'b *= ...'" in message and ("'w'" in message or "'z'" in message), message
    assert_refused_both_modes(fn, AliasedUpdateError, "'b *= ...'", x=x)


def swap_beside_another_view(x):
    z = np.tanh(x)
    w = np.sin(x)
    c = np.cos(x)
    b = c[:, 1]
    for k in range(3):
        w, z = z, w
        b *= 0.5
        b += np.tanh(w[:, 2])
    return np.sum(w * w) + np.sum(z * b[:, None])


def swap_of_fresh_arrays(x):
    z = np.tanh(x)
    w = np.sin(x)
    for k in range(3):
        w, z = z, w
        z = z * 0.5
        w *= 0.5
    return np.sum(w * w) + np.sum(z)


def renamed_then_rebound(x):
    z = np.tanh(x)
    for k in range(3):
        w = z
        z = np.sin(z) + 1.0
        w *= 0.5
        z = z + w
    return np.sum(z * z)


def _fresh_helper(x):
    return swap_beside_another_view(x) + swap_of_fresh_arrays(x)


def in_a_helper(x):
    return _fresh_helper(x) * 0.5


@pytest.mark.parametrize("fn", [swap_beside_another_view, swap_of_fresh_arrays,
                                renamed_then_rebound, in_a_helper])
def test_swaps_sharing_nothing_updated_run_as_the_function(fn):
    x = np.random.default_rng(9900032).uniform(-1.5, 1.5, (3, 4))
    check_every_policy(fn, (x,), 0)
