"""Regression tests for the classes of miscompile issue 13 found (swaps in loops,
sequence ``+``, empty slices, container state, ``+=`` on immutable values,
complex intermediates).

Each program (tests/data/miscompile_fns.py) is checked the way every generated
function should be: its value bit-identical to the function's own under every
policy, its gradient against finite differences and against autograd (an
independent AD), and forward mode against the same finite differences.
"""

from __future__ import annotations

import numpy as np
import pytest

import corpus
import miscompile_fns as m
import srcgrad
from numeric import assert_bit_identical, assert_close, numeric_grad

autograd = pytest.importorskip("autograd")
#: autograd warns where a gradient is zero by construction (an overwritten argument)
pytestmark = pytest.mark.filterwarnings("ignore:Output seems independent of input")

POLICIES = ("save", "recompute", "save_products", "sqrt", ("revolve", 1), ("revolve", 2))
RNG = np.random.default_rng(13)


def _args(*shapes):
    return tuple(RNG.standard_normal(s) if s != "float" else float(RNG.standard_normal())
                 for s in shapes)


CASES = [
    (m.swap_in_loop, (4,)),
    (m.rotation_in_loop, (3,)),
    (m.previous_value, (3,)),
    (m.swap_in_branch, (3,)),
    (m.unpack_own_tuple, (3,)),
    (m.nested_unpacking, (3,)),
    (m.chained_in_loop, (3,)),
    (m.tuple_concatenation, (3, 3)),
    (m.list_concatenation, (3, 2)),
    (m.list_repetition, (3, 3)),
    (m.rnn, ((8, 3), 3)),
    (m.empty_slice_loop, (3,)),
    (m.append_then_rebind, (3,)),
    (m.dict_state, (3,)),
    (m.float_update, (3, "float")),
    (m.numpy_scalar_update, (5,)),
    (m.complex_intermediate, (3,)),
    (m.complex_exponential, (3,)),
    (m.call_into_its_arguments, (3, 3)),
    (m.call_into_its_arguments_in_loop, (3, 3)),
    (m.sorted_dict_update, (3,)),
    (m.disjoint_view_update, (3,)),
    (m.loop_index_read_after_a_dead_loop, (3,)),
    (m.rebound_in_loop_read_by_an_earlier_adjoint, ((3, 4),)),
    (m.defined_only_inside_a_nested_loop, (3,)),
    (m.parameter_overwritten_in_loop, (3, ())),
    (m.chained_element_assignment, ((3, 4), 4)),
    (m.overlapping_view_update, (4,)),
    (m.update_through_a_view, (4,)),
    (m.two_updates_seen_by_a_view, (4,)),
    (m.loop_variable_after_the_loop_in_a_callee, (3, "float")),
    (m.view_made_later_in_the_loop, ((3, 4), 4, "float")),
    (m.inner_loop_variable_read_after_it, ((3, 4), 4, "float")),
    (m.two_names_updated_in_a_checkpointed_loop, ((3, 4), "float")),
    (m.item_update_seen_by_a_view, (4,)),
    (m.arrays_of_a_list_updated_in_a_loop, (3,)),
    (m.arrays_of_zipped_lists_updated, (3,)),
    (m.appended_then_updated, (3,)),
    (m.dict_item_updated_through_a_name, (3,)),
    (m.view_after_an_early_return, (3, "float")),
    (m.loop_over_a_slice_of_a_rebound_list, (3, "float")),
    (m.chained_names_updated_in_a_loop, (3,)),
    (m.items_of_a_slice_of_a_list_updated, (3,)),
    (m.loop_state_read_by_an_earlier_checkpointed_loop, (4,)),
    (m.list_holds_a_view_of_the_updated_array, (4,)),
    (m.views_of_a_dict_item_updated_in_place, (4,)),
    (m.other_container_sees_an_item_update, (3,)),
    (m.list_item_assigned_then_updated, (3,)),
    (m.view_before_a_checkpointed_loop_that_updates_its_base, (3,)),
    (m.view_before_a_checkpointed_while_loop_that_updates_its_base, (3,)),
    (m.dict_built_by_item_assignment, (3,)),
    # x += v on a 0-d array: the value stays a 0-d array
    (m.zero_d_array_plus_itself, ((),)),
    (m.zero_d_array_every_operator, ((),)),
    (m.zero_d_array_updated_in_a_loop, ((),)),
    (m.zero_d_array_in_a_branch, ((), ())),
    (m.zero_d_array_shared_by_two_names, ((),)),
    (m.zero_d_array_a_dict_holds, ((),)),
    (m.zero_d_array_elements, ((),)),
]
#: Programs autograd cannot run (it has no element assignment).
NO_AUTOGRAD = {m.sorted_dict_update, m.disjoint_view_update, m.overlapping_view_update,
               m.update_through_a_view, m.two_updates_seen_by_a_view,
               m.view_made_later_in_the_loop, m.two_names_updated_in_a_checkpointed_loop,
               # autograd rebinds on *=: it computes another function
               m.item_update_seen_by_a_view, m.arrays_of_a_list_updated_in_a_loop,
               m.arrays_of_zipped_lists_updated, m.appended_then_updated,
               m.dict_item_updated_through_a_name, m.view_after_an_early_return,
               m.chained_names_updated_in_a_loop, m.items_of_a_slice_of_a_list_updated,
               m.list_holds_a_view_of_the_updated_array,
               m.views_of_a_dict_item_updated_in_place, m.other_container_sees_an_item_update,
               m.list_item_assigned_then_updated,
               m.view_before_a_checkpointed_loop_that_updates_its_base,
               m.view_before_a_checkpointed_while_loop_that_updates_its_base,
               m.zero_d_array_in_a_branch, m.zero_d_array_shared_by_two_names,
               m.zero_d_array_elements}


def _autograd_twin(fn):
    """``fn`` with ``np`` rebound to autograd.numpy (its helpers too)."""
    namespace = dict(vars(m), np=autograd.numpy)
    for name, value in vars(m).items():
        if callable(value) and getattr(value, "__module__", None) == m.__name__:
            namespace[name] = type(value)(value.__code__, namespace, name, value.__defaults__)
    return namespace[fn.__name__]


@pytest.mark.parametrize("fn, shapes", CASES, ids=[c[0].__name__ for c in CASES])
def test_value_gradient_and_tangent(fn, shapes):
    args = _args(*shapes)
    expected = fn(*args)
    wrt = tuple(range(len(args)))
    grads = None
    for policy in POLICIES:
        value, got = srcgrad.value_and_grad(fn, wrt=wrt, policy=policy, check=True)(*args)
        assert_bit_identical(value, expected, f"{fn.__name__}, policy {policy!r}")
        if grads is None:
            grads = got
        for a, b in zip(got, grads):
            assert_close(a, b, rtol=1e-12, atol=1e-14, what=f"policy {policy!r}")
    for i in wrt:
        assert_close(grads[i], numeric_grad(fn, args, i), rtol=1e-5, atol=1e-6,
                     what=f"{fn.__name__}: gradient of argument {i} vs finite differences")
        if fn not in NO_AUTOGRAD:
            oracle = autograd.grad(_autograd_twin(fn), i)(*args)
            assert_close(grads[i], oracle, rtol=1e-9, atol=1e-12,
                         what=f"{fn.__name__}: gradient of argument {i} vs autograd")
    directions = tuple(RNG.standard_normal(np.shape(a)) if isinstance(a, np.ndarray)
                       else float(RNG.standard_normal()) for a in args)
    value, tangent = srcgrad.jvp(fn, args, directions)
    assert_bit_identical(value, expected, f"{fn.__name__}, jvp")
    predicted = sum(float(np.sum(g * d)) for g, d in zip(grads, directions))
    assert_close(tangent, predicted, rtol=1e-9, atol=1e-12, what="jvp vs grad")


def test_the_forward_sweep_of_a_swap_reads_like_the_source():
    """The swap's temporary is visible: the forward sweep computes what f computes."""
    source = srcgrad.grad(m.swap_in_loop).source
    assert "a = b\n        b = a\n" not in source
    assert "a = b" in source and "b = t" in source


def test_a_real_in_place_update_of_a_shared_array_is_still_refused():
    with pytest.raises(srcgrad.AliasedUpdateError, match="'a' shares|shares its memory") as info:
        srcgrad.grad(m.array_update_shared)(RNG.standard_normal(4))
    assert info.value.lineno is not None and info.value.filename.endswith("miscompile_fns.py")


def test_a_view_read_after_an_update_of_its_base_is_taken_again():
    source = srcgrad.grad(m.overlapping_view_update).source
    assert "if shared:\n        r = y[1:]" in source


def test_an_item_update_seen_through_a_view_takes_the_view_again():
    """``v = d['h'][1:]; d['h'] *= 0.5``: the view is compared with the window of the
    array updated (``window``), and taken again from the new one."""
    source = srcgrad.grad(m.item_update_seen_by_a_view).source
    assert "window(" in source and "if shared:" in source


FOLLOWED_OR_REFUSED = [m.list_copy_sees_item_store, m.dict_copy_sees_item_store,
                       m.list_copy_sees_extend, m.item_of_list_updated_through_it,
                       m.base_rebound_to_another_window, m.base_rebound_then_augmented,
                       m.other_item_sees_item_update, m.dict_holding_a_list_extended,
                       m.view_handed_on_by_a_swap, m.concatenated_list_holds_a_view,
                       m.list_copy_holds_the_array,
                       m.element_assignment_to_an_array_a_list_holds,
                       m.element_assignment_seen_by_a_view_a_list_holds,
                       m.element_assignment_in_a_checkpointed_loop_to_a_held_array]


@pytest.mark.parametrize("fn", FOLLOWED_OR_REFUSED, ids=lambda f: f.__name__)
@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_an_update_another_name_sees_is_followed_or_refused(fn, sign):
    """Either the value is the function's own and the gradient right, or srcgrad
    refuses with a located AliasedUpdateError -- never a wrong number."""
    x = sign * np.array([0.3, -1.2, 0.7, 2.0, 0.5, 1.1])
    for policy in POLICIES:
        try:
            value, g = srcgrad.value_and_grad(fn, policy=policy, check=True)(x.copy())
        except srcgrad.AliasedUpdateError as error:
            assert error.filename.endswith("miscompile_fns.py") and error.lineno
            continue
        assert_bit_identical(value, fn(x.copy()), f"{fn.__name__}, policy {policy!r}")
        assert_close(g, numeric_grad(lambda a: fn(a.copy()), (x,), 0), rtol=1e-5, atol=1e-6,
                     what=f"{fn.__name__}, policy {policy!r}")


def test_float_update_rebinds_a_float_and_updates_a_shared_0d_array():
    """``t = s; t += 1.0``: on a float ``s`` keeps its value; on a 0-d array both
    names see the update (NumPy changes the one array), and so does the gradient."""
    x = RNG.standard_normal(3)
    def fresh(s):
        return s.copy() if isinstance(s, np.ndarray) else s

    for s in (0.5, np.array(0.5)):
        value, g = srcgrad.value_and_grad(m.float_update, wrt=1, check=True)(x, fresh(s))
        assert_bit_identical(value, m.float_update(x, fresh(s)))
        expected = numeric_grad(lambda x_, s_: m.float_update(x_, fresh(s_)), (x, s), 1)
        assert_close(g, expected, rtol=1e-5, atol=1e-6)
    assert_close(srcgrad.grad(m.float_update, wrt=1)(x, np.array(0.5)), 2 * np.sum(x) * 1.5)


def test_an_update_keeps_a_0d_array_an_array():
    """The reproducer: ``v += v`` on a 0-d array gave ``np.float64`` (``v + v``)."""
    x = np.array(0.3)
    value, pullback = srcgrad.vjp(m.zero_d_array_plus_itself, x)
    assert type(value) is np.ndarray and value.shape == () and value == 0.6
    assert pullback(np.array(1.0)) == (2.0,)
    assert "v_1 = in_place(v + v, v)" in pullback.source


def test_an_update_keeps_a_float32_array_float32():
    """``y += x`` on a float32 ``y`` and a float64 ``x``: NumPy rounds each result into
    ``y``, and the sum is a float32 -- under every policy, in both modes.  The
    gradient is that of the float32 function: ``y = x`` rounded, ``y * x`` rounded,
    so ``d/dx sum(y) = 2 x`` up to float32 rounding."""
    x = RNG.standard_normal(4)
    expected = m.float32_array_plus_float64(x)
    assert type(expected) is np.float32
    for policy in POLICIES:
        value, g = srcgrad.value_and_grad(m.float32_array_plus_float64, policy=policy,
                                          check=True)(x)
        assert_bit_identical(value, expected, f"policy {policy!r}")
        assert_close(g, 2 * x, rtol=1e-6, atol=1e-6, what=f"policy {policy!r}")
    value, tangent = srcgrad.jvp(m.float32_array_plus_float64, (x,), (np.ones(4),))
    assert_bit_identical(value, expected, "jvp")
    assert_close(tangent, np.sum(2 * x), rtol=1e-6, atol=1e-6)


def test_an_update_of_an_ordinary_array_reads_as_before():
    """Where ``x + v`` is what the update leaves (a floating array never 0-d, ``v`` no
    wider than it), the generated code is the plain operation: no ``in_place``."""
    for name in ("augmented_assignment_on_arrays", "reassignment", "rows_filled_in_a_loop",
                 "column_updates"):
        assert "in_place" not in srcgrad.grad(corpus.by_name(name).fn).source, name


def test_sequence_plus_with_an_untyped_tuple_argument_fails_loudly():
    """A tuple argument srcgrad cannot type at compile time: never a wrong gradient."""
    def f(parts, x):
        return np.sum(np.hstack(parts + (x,)) ** 2)
    g = srcgrad.grad(f, wrt=1)
    x = RNG.standard_normal(2)
    try:
        got = g((np.ones(2),), x)
    except srcgrad.SrcGradError:
        return
    assert_close(got, 2 * x)


def test_check_reports_a_value_mismatch():
    from srcgrad.api.validation import verify
    with pytest.raises(srcgrad.TranslationError, match="swap_in_loop"):
        verify(m.swap_in_loop, (np.ones(4),), 0.0, "gradient")


def test_check_from_the_environment(monkeypatch):
    monkeypatch.setenv("SRCGRAD_CHECK", "1")
    x = RNG.standard_normal(4)
    g = srcgrad.grad(m.swap_in_loop)
    assert_close(g(x), numeric_grad(m.swap_in_loop, (x,), 0), rtol=1e-5, atol=1e-6)


def test_a_loop_over_a_list_its_body_appends_to_is_refused_at_the_append():
    with pytest.raises(srcgrad.UnsupportedSyntaxError, match="adds to it") as info:
        srcgrad.grad(m.loop_over_a_list_it_appends_to)(RNG.standard_normal(3))
    assert info.value.filename.endswith("miscompile_fns.py") and info.value.lineno
