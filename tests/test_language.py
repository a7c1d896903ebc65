"""Methods, classes and combinations of constructs, checked numerically."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import srcgrad

from numeric import assert_close, numeric_grad

RNG = np.random.default_rng(7)


class RNN:
    """A model written as a class: attribute reads and method calls."""

    def __init__(self, W, U):
        self.W = W
        self.U = U

    def step(self, h, x):
        return np.tanh(self.W @ h + self.U @ x)

    def run(self, xs, limit):
        h = np.zeros(self.W.shape[0])
        for x in xs:
            h = self.step(h, x)
            if np.sum(np.abs(h)) > limit:
                break
        return h

    def loss(self, xs):
        return np.sum(self.run(xs, 100.0) ** 2)

    @srcgrad.grad(wrt=1)
    def loss_grad(self, xs):
        return self.loss(xs)


def _model():
    return RNN(RNG.standard_normal((3, 3)) * 0.5, RNG.standard_normal((3, 2)))


def test_bound_method_differentiates_its_own_arguments():
    model, xs = _model(), RNG.standard_normal((4, 2))
    g = srcgrad.grad(model.loss)(xs)
    assert_close(g, numeric_grad(model.loss, [xs], 0))
    assert "step_forward" in srcgrad.grad(model.loss).source


def test_decorated_method_counts_self():
    model, xs = _model(), RNG.standard_normal((4, 2))
    assert_close(model.loss_grad(xs), srcgrad.grad(model.loss)(xs))


def test_gradient_with_respect_to_the_model_object():
    model, xs = _model(), RNG.standard_normal((4, 2))
    g = srcgrad.grad(RNN.loss)(model, xs)
    assert isinstance(g, RNN)

    def loss_w(W):
        return RNN(W, model.U).loss(xs)

    def loss_u(U):
        return RNN(model.W, U).loss(xs)

    assert_close(g.W, numeric_grad(loss_w, [model.W], 0))
    assert_close(g.U, numeric_grad(loss_u, [model.U], 0))


def combination(x, n):
    """A loop with break inside a method called from a closure, with updates in loops."""
    model = _COMBO_MODEL

    def through_model(v):
        return model.run(v.reshape(2, 2), 3.0)

    out = np.zeros(3)
    for i in range(n):
        out[i % 3] += np.sum(through_model(x * (i + 1)))
    return np.sum(out ** 2)


_COMBO_MODEL = RNN(RNG.standard_normal((3, 3)) * 0.5, RNG.standard_normal((3, 2)))


def test_combination_of_constructs():
    x = RNG.standard_normal(4)
    assert srcgrad.gradcheck(combination, x, 5)


def rebinding_global(x):
    return np.sum(_COMBO_MODEL.W @ x[:3])


def test_generated_code_never_modifies_caller_arrays():
    x = RNG.standard_normal(4)
    copy = x.copy()
    srcgrad.grad(combination)(x, 5)
    np.testing.assert_array_equal(x, copy)


def test_view_read_after_an_update_with_a_partial_wrt():
    """The fuzzer's case: differentiating only with respect to s, nothing else reads
    v after its update, yet the view t = v[:, ::2] does."""
    import corpus

    fn = corpus.by_name("view_read_by_the_adjoint_after_an_update").fn
    x, s = RNG.standard_normal((3, 4)), 0.7
    assert srcgrad.gradcheck(fn, x, s, wrt=1)


# -- the scalar 0.0 that stands for "no cotangent yet" ---------------------------------

def _zero_kinds(out):
    """The forms the zero of no cotangent takes on its way to an adjoint: the 0.0
    itself, and for an array output what NumPy makes of it (``0.0 * s`` is a NumPy
    float, ``np.transpose(0.0)`` a 0-d array)."""
    if isinstance(out, (np.ndarray, np.generic)) and np.ndim(out) > 0:
        return [0.0, np.float64(0.0), np.array(0.0)]
    return [0.0]


def _all_zero(g) -> bool:
    if g is None:
        return True
    if isinstance(g, (list, tuple)):
        return all(_all_zero(e) for e in g)
    return not np.any(np.asarray(g))


def test_every_adjoint_rule_accepts_the_zero_of_no_cotangent():
    """Inside loops and after calls, an adjoint may receive the scalar 0.0 for an
    array's cotangent (a branch not taken, a callee that ignores an argument): every
    rule of the spec table must take it and give zero cotangents."""
    import warnings

    import spec
    from test_rules_spec import apply, resolve

    from srcgrad.rules import registry

    failures = []
    for entry in spec.SPECS:
        env = entry.make("float64")
        prim, args, kwargs, _, _ = resolve(entry.source, env)
        rule = registry.lookup(prim)
        out = apply(prim, args, kwargs)
        for zero in _zero_kinds(out):
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    grads = rule.fn(out, zero, *args, **kwargs)
            except Exception as exc:  # noqa: BLE001 - collected and reported below
                failures.append(f"{entry.id} ({zero!r}): {type(exc).__name__}: {exc}")
                continue
            if not _all_zero(grads):
                failures.append(f"{entry.id} ({zero!r}): nonzero cotangents {grads!r}")
    assert not failures, "\n".join(failures)


# -- in-place updates seen through an alias ---------------------------------------------
#
# Each of these was compiled without complaint and gave a silently wrong gradient:
# the alias read after the update sees the new values, which the dataflow srcgrad
# differentiates does not.  They must be refused at the update.

def update_through_a_view_read_via_its_base(x):
    """Not refused any more: the view is written back into its base (refresh.py)."""
    v = x * 1.0
    r = v[1:]
    r[0] = 5.0
    return np.sum(v * v)


def update_through_a_second_name_read_via_the_first(x):
    """Not refused any more: ``v`` is bound to the updated array again (refresh.py)."""
    v = x * 1.0
    w = v
    w[0] = 5.0
    return np.sum(v * v)


def view_remade_only_in_a_branch(x):
    v = x * 1.0
    total = 0.0
    r = v[1:]
    for i in range(3):
        if i == 0:
            r = v[1:]
        total = total + np.sum(r * r)
        v[1] = 2.0  # <- refused
    return total


def views_held_in_a_list(x):
    v = x * 1.0
    s = 0.0
    for r in [v[1:], v[:2]]:
        s = s + np.sum(r * r)
        v[1] = 2.0  # <- refused
    return s


def _same(a):
    return a


def update_of_what_a_function_returned(x):
    v = x * 1.0
    w = _same(v)
    w[0] = 5.0  # <- refused
    return np.sum(v * v)


@pytest.mark.parametrize("fn", [update_through_a_view_read_via_its_base,
                                update_through_a_second_name_read_via_the_first])
def test_an_update_seen_through_another_name_is_followed(fn):
    x = RNG.standard_normal(3)
    value, g = srcgrad.value_and_grad(fn, check=True)(x)
    assert value == fn(x.copy())
    expected = [0.0, 2 * x[1], 2 * x[2]] if fn is update_through_a_second_name_read_via_the_first \
        else [2 * x[0], 0.0, 2 * x[2]]
    np.testing.assert_allclose(g, expected)


@pytest.mark.parametrize("fn", [view_remade_only_in_a_branch, views_held_in_a_list,
                                update_of_what_a_function_returned], ids=lambda f: f.__name__)
def test_an_update_read_through_an_alias_is_refused(fn):
    lines, first = inspect.getsourcelines(fn)
    marked = first + next(i for i, line in enumerate(lines) if "# <- refused" in line)
    with pytest.raises(srcgrad.UnsupportedSyntaxError, match="shares its memory") as info:
        srcgrad.grad(fn)(RNG.standard_normal(3))
    assert info.value.lineno == marked


def _fresh(a):
    return a * 2.0


def update_of_a_fresh_result_and_of_a_stacked_array(a, b):
    a = a * 1.0
    s = np.stack([a, b])  # holds copies: a and b stay independent
    w = _fresh(a)         # a new array: updating it changes nothing else
    w[0] = 5.0
    a[0] = 1.0
    return np.sum(s) + np.sum(b * a) + np.sum(w * b)


def test_updates_that_no_alias_sees_are_accepted():
    a, b = RNG.standard_normal(3), RNG.standard_normal(3)
    g = srcgrad.grad(update_of_a_fresh_result_and_of_a_stacked_array, wrt=(0, 1))(a, b)
    numeric = [numeric_grad(update_of_a_fresh_result_and_of_a_stacked_array, (a, b), i)
               for i in (0, 1)]
    assert_close(g[0], numeric[0], rtol=1e-6, atol=1e-8)
    assert_close(g[1], numeric[1], rtol=1e-6, atol=1e-8)


def locals_named_like_helpers(x, y):
    unbroadcast = x * y
    grad_like = np.sum(unbroadcast + x)
    for i in range(2):
        expand = grad_like * 2.0
        grad_like = expand
    return grad_like


def test_locals_named_like_runtime_helpers_are_renamed():
    x, y = RNG.standard_normal((2, 3)), RNG.standard_normal(3)
    g = srcgrad.grad(locals_named_like_helpers, wrt=(0, 1))(x, y)
    for i in (0, 1):
        assert_close(g[i], numeric_grad(locals_named_like_helpers, (x, y), i),
                     rtol=1e-6, atol=1e-8)
    _, t = srcgrad.jvp(locals_named_like_helpers, (x, y), (np.ones((2, 3)), None))
    assert t == pytest.approx(float(np.sum(g[0])), rel=1e-10)


def loop_over_a_local_dict(x):
    d = {"a": x * 2.0, "b": np.sin(x)}
    s = 0.0
    for key in d:
        s = s + np.sum(d[key] * x)
    return s


def loop_over_dict_values(x):
    d = {"a": x * 2.0, "b": np.sin(x)}
    s = 0.0
    for v in d.values():
        s = s + np.sum(v * v)
    return s


@pytest.mark.parametrize("fn", [loop_over_a_local_dict, loop_over_dict_values],
                         ids=lambda f: f.__name__)
def test_loops_over_local_dicts(fn):
    x = RNG.standard_normal(3)
    assert_close(srcgrad.grad(fn)(x), numeric_grad(fn, (x,), 0), rtol=1e-6, atol=1e-8)
    v = RNG.standard_normal(3)
    _, t = srcgrad.jvp(fn, (x,), (v,))
    assert t == pytest.approx(float(srcgrad.grad(fn)(x) @ v), rel=1e-10)


def _same_twice(a):
    b = a + 2.0
    return b, b


def update_of_one_of_two_names_for_one_array(x):
    v, w = _same_twice(x)
    v += w  # <- refused
    return np.sum(v * w)


def test_an_update_of_a_tuple_part_shared_with_another_is_refused():
    fn = update_of_one_of_two_names_for_one_array
    lines, first = inspect.getsourcelines(fn)
    marked = first + next(i for i, line in enumerate(lines) if "# <- refused" in line)
    with pytest.raises(srcgrad.UnsupportedSyntaxError, match="shares its memory") as info:
        srcgrad.grad(fn)(RNG.standard_normal(3))
    assert info.value.lineno == marked


class _Holder:
    def __init__(self, W):
        self.W = W


def update_of_an_attribute_read_again(p, x):
    w = p.W
    w[0] = x[0] * 3.0  # <- refused
    return np.sum(p.W * x)


def update_of_an_attribute_not_read_again(p, x):
    w = p.W
    w[0] = x[0] * 3.0
    return np.sum(w * x)


def test_an_attribute_updated_and_read_again_is_refused():
    fn = update_of_an_attribute_read_again
    lines, first = inspect.getsourcelines(fn)
    marked = first + next(i for i, line in enumerate(lines) if "# <- refused" in line)
    with pytest.raises(srcgrad.AliasedUpdateError) as info:
        srcgrad.grad(fn, wrt=1)(_Holder(np.ones(3)), RNG.standard_normal(3))
    assert info.value.lineno == marked


def test_an_updated_attribute_is_copied_and_the_callers_object_left_alone():
    p, x = _Holder(np.ones(3)), RNG.standard_normal(3)
    gp, gx = srcgrad.grad(update_of_an_attribute_not_read_again, wrt=(0, 1))(p, x)
    assert np.array_equal(p.W, np.ones(3))
    assert_close(gp.W, np.concatenate([[0.0], x[1:]]), rtol=1e-12, atol=0)
    assert_close(gx, numeric_grad(lambda x: update_of_an_attribute_not_read_again(
        _Holder(np.ones(3)), x), (x,), 0), rtol=1e-6, atol=1e-8)
    _, t = srcgrad.jvp(update_of_an_attribute_not_read_again, (p, x), (None, np.ones(3)))
    assert np.array_equal(p.W, np.ones(3))
    assert t == pytest.approx(float(np.sum(gx)), rel=1e-10)
