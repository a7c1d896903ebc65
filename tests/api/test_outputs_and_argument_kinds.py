"""What grad refuses of a function's output and arguments, and what vjp hands
back, from a cold review (session 34, R2-11, R2-12, R2-13, R2-15, R2-16):

* grad of a function returning a complex number gave the derivative of its
  real part, silently (autograd and JAX refuse); a missing ``return`` (None)
  or a string gave zeros, a dict a raw TypeError from inside srcgrad;
* an ``np.matrix`` (``*`` a matrix product) or a masked array (sums leave the
  masked entries out) got ndarray's derivative: wrong numbers;
* vjp's value was the array its pullback reads (``pred -= y`` changed the
  gradient), and a pullback could return the caller's cotangent itself;
* ``srcgrad.show(f)`` of a plain function raised a raw AttributeError.
"""

from __future__ import annotations

import dataclasses
import io
import typing

import numpy as np
import pytest
from numeric import assert_close, numeric_grad

import srcgrad
from srcgrad.errors import NonDifferentiableError, SrcGradError

X = np.array([0.3, -0.5, 0.9])


def complex_power(x):
    return np.sum((x + 1j * x ** 2) ** 2)


def complex_python(x):
    return complex(np.sum(x))


def complex_in_a_loop(x):
    z = 0.0
    for k in range(3):
        z = z + x[k] * np.exp(1j * x[k])
    return z


def no_return(x):
    loss = np.sum(x ** 2)  # noqa: F841 - the mistake under test


def returns_a_string(x):
    np.sum(x ** 2)
    return "done"


def returns_a_dict(x):
    return {"loss": np.sum(x ** 2)}


def real_of_complex(x):
    return np.sum(np.abs(x + 1j * x ** 2) ** 2)


@pytest.mark.parametrize("transform", [srcgrad.grad, srcgrad.value_and_grad])
@pytest.mark.parametrize("fn", [complex_power, complex_python, complex_in_a_loop])
def test_a_complex_output_is_refused(fn, transform):
    with pytest.raises(NonDifferentiableError, match="real scalar output.*complex"):
        transform(fn)(X)


@pytest.mark.parametrize("policy", ["save", "recompute", "sqrt", ("revolve", 2)])
def test_a_real_function_of_complex_values_is_still_differentiated(policy):
    g = srcgrad.grad(real_of_complex, policy=policy)(X)
    assert_close(g, numeric_grad(real_of_complex, [X], 0))


def test_vjp_and_jvp_of_a_complex_output_still_work():
    value, pullback = srcgrad.vjp(complex_power, X)
    assert np.iscomplexobj(value)
    (g,) = pullback(1.0 + 0.0j)
    # d/dx of sum((x + i x^2)^2) is 2 (x + i x^2)(1 + 2 i x); the pullback of the
    # cotangent 1 is its conjugate-free real-input form: the real part of that
    assert_close(g, np.real(2 * (X + 1j * X ** 2) * (1 + 2j * X)))


@pytest.mark.parametrize("fn, said", [(no_return, "returns None .*return statement missing"),
                                      (returns_a_string, "returns the str 'done'")])
def test_none_or_a_string_is_a_located_error(fn, said):
    with pytest.raises(NonDifferentiableError, match=said) as caught:
        srcgrad.grad(fn)(X)
    assert caught.value.filename.endswith("test_outputs_and_argument_kinds.py")
    assert caught.value.lineno == fn.__code__.co_firstlineno + (1 if fn is no_return else 2) \
        or caught.value.lineno == fn.__code__.co_firstlineno


def test_a_dict_output_is_refused_without_a_raw_exception():
    with pytest.raises(NonDifferentiableError, match="returned a dict"):
        srcgrad.grad(returns_a_dict)(X)


def matrix_product(A, B):
    return np.sum(np.asarray(A * B) ** 2)


def squares(x):
    return np.sum(x ** 2)


@pytest.mark.parametrize("call", [
    lambda: srcgrad.grad(matrix_product)(np.matrix(np.eye(2)), np.matrix(np.ones((2, 2)))),
    lambda: srcgrad.grad(matrix_product, wrt=1)(np.eye(2), np.matrix(np.ones((2, 2)))),
    lambda: srcgrad.value_and_grad(matrix_product)(np.matrix(np.eye(2)), np.ones((2, 2))),
    lambda: srcgrad.vjp(matrix_product, np.matrix(np.eye(2)), np.ones((2, 2))),
], ids=["wrt", "not-wrt", "value_and_grad", "vjp"])
def test_an_np_matrix_argument_is_refused_naming_it(call):
    with pytest.raises(NonDifferentiableError, match="np.matrix.*np.asarray"):
        call()


@pytest.mark.parametrize("call", [
    lambda x: srcgrad.grad(squares)(x),
    lambda x: srcgrad.jvp(squares)(x, np.ones(3)),
    lambda x: srcgrad.vjp(squares, x),
], ids=["grad", "jvp", "vjp"])
def test_a_masked_array_argument_is_refused_naming_it(call):
    masked = np.ma.array(X, mask=[False, True, False])
    with pytest.raises(NonDifferentiableError, match="'x' of squares is a masked array"):
        call(masked)


def test_other_ndarray_subclasses_and_plain_arrays_pass():
    class Tagged(np.ndarray):
        pass
    assert_close(srcgrad.grad(squares)(X), 2 * X)
    assert_close(srcgrad.grad(squares)(X.view(Tagged)), 2 * X)


def model(W, x):
    return np.tanh(W @ x)


def test_vjp_value_changed_in_place_does_not_change_the_pullback():
    rng = np.random.default_rng(0)
    W, x, y = rng.standard_normal((3, 3)), rng.standard_normal(3), rng.standard_normal(3)
    pred, pullback = srcgrad.vjp(model, W, x)
    want = pullback(pred - y)
    pred, pullback = srcgrad.vjp(model, W, x)
    pred -= y            # the residual formed in place, in the value vjp handed out
    got = pullback(pred)
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)


def shifted(x):
    return x + 0.0


def test_a_pullback_returns_arrays_of_its_own():
    _, pullback = srcgrad.vjp(shifted, X)
    cotangent = np.ones(3)
    (g,) = pullback(cotangent)
    assert not np.shares_memory(g, cotangent)
    g += 1.0
    np.testing.assert_array_equal(cotangent, np.ones(3))


def test_show_of_a_plain_function_says_what_it_takes():
    with pytest.raises(SrcGradError, match=r"srcgrad.show\(srcgrad.grad\(squares\)\)"):
        srcgrad.show(squares)
    out = io.StringIO()
    srcgrad.show(srcgrad.grad(squares), file=out)
    assert "def grad_squares" in out.getvalue()


def dict_loss(p, x):
    return np.sum(np.tanh(x @ p["W"] + p["b"]) ** 2)


@pytest.mark.parametrize("params", [
    {"W": np.eye(3) * 0.5, "b": np.ones(3) * 0.1},
    [np.eye(3) * 0.5, np.ones(3) * 0.1],
    (np.eye(3) * 0.5, np.ones(3) * 0.1),
], ids=["dict", "list", "tuple"])
def test_gradcheck_of_a_container_argument_says_how_to_check_it(params):
    # (a raw TypeError / ValueError from inside gradcheck before, review s34 R2-18)
    with pytest.raises(SrcGradError, match="gradcheck compares .* is a (dict|list|tuple)"):
        srcgrad.gradcheck(dict_loss, params, X)
    if isinstance(params, dict):
        assert srcgrad.gradcheck(lambda W, b: dict_loss({"W": W, "b": b}, X),
                                 params["W"], params["b"], wrt=(0, 1))


def dict_model(W, x):
    return {"pred": np.tanh(W @ x), "scale": 2.0}


def test_vjp_dict_value_changed_in_place_does_not_change_the_pullback():
    rng = np.random.default_rng(1)
    W, x, y = rng.standard_normal((3, 3)), rng.standard_normal(3), rng.standard_normal(3)
    out, pullback = srcgrad.vjp(dict_model, W, x)
    want = pullback({"pred": out["pred"] - y, "scale": 0.0})
    out, pullback = srcgrad.vjp(dict_model, W, x)
    out["pred"] -= y
    got = pullback({"pred": out["pred"], "scale": 0.0})
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)


def dict_params(p, x):
    return np.sum(np.tanh(p["W"] @ x + p["b"]) ** 2)


def list_params(ps, x):
    return np.sum(np.tanh(ps[0] @ x + ps[1]) ** 2)


P = {"W": np.eye(2) * 0.5, "b": np.array([0.1, -0.2])}
XP = np.array([0.3, -0.7])


@pytest.mark.parametrize("tangent", [{"W": np.ones((2, 2))}, {"W": np.ones((2, 2)), "b": None}])
def test_a_dict_tangent_leaving_out_a_part_takes_it_as_zero(tangent):
    # (a raw KeyError / TypeError before, review s34 R2-19)
    _, got = srcgrad.jvp(dict_params, (P, XP), (tangent, None))
    _, want = srcgrad.jvp(dict_params, (P, XP), ({"W": np.ones((2, 2)), "b": np.zeros(2)}, None))
    assert got == want
    h = srcgrad.hvp(dict_params)(P, XP, tangent)
    h0 = srcgrad.hvp(dict_params)(P, XP, {"W": np.ones((2, 2)), "b": np.zeros(2)})
    for key in P:
        np.testing.assert_array_equal(h[key], h0[key])


@pytest.mark.parametrize("tangent, said", [
    ([np.ones((2, 2))], "list argument of 2 items .* got 1 items"),
    ({"W": np.ones((2, 2)), "c": np.ones(2)}, None),
])
def test_a_tangent_of_another_structure_is_a_srcgrad_error(tangent, said):
    if said is None:
        with pytest.raises(SrcGradError, match="keys .*'c'"):
            srcgrad.jvp(dict_params, (P, XP), (tangent, None))
        return
    with pytest.raises(SrcGradError, match=said):
        srcgrad.jvp(list_params, ([P["W"], P["b"]], XP), (tangent, None))


@dataclasses.dataclass
class _Out:
    h: np.ndarray
    s: np.ndarray


class _OutNT(typing.NamedTuple):
    h: np.ndarray
    s: np.ndarray


@dataclasses.dataclass(frozen=True)
class _Frozen:
    h: np.ndarray
    s: np.ndarray


def _dataclass_out(W, x):
    h = np.tanh(W @ x)
    return _Out(h, h ** 2)


def _named_tuple_out(W, x):
    h = np.tanh(W @ x)
    return _OutNT(h, h ** 2)


def _frozen_out(W, x):
    h = np.tanh(W @ x)
    return _Frozen(h, h ** 2)


def _list_of_dataclasses_out(W, x):
    h = np.tanh(W @ x)
    return [_Out(h, h ** 2), _Out(h * 2.0, h)]


@pytest.mark.parametrize("fn", [_dataclass_out, _named_tuple_out, _frozen_out],
                         ids=lambda f: f.__name__)
def test_vjp_record_value_changed_in_place_does_not_change_the_pullback(fn):
    """Review s35 R3-32: a dataclass's or named tuple's arrays were the
    pullback's residuals, so ``out.h -= y`` changed the gradient."""
    rng = np.random.default_rng(2)
    W, x, y = rng.standard_normal((3, 3)), rng.standard_normal(3), rng.standard_normal(3)
    cot = type(fn(W, x))(np.ones(3), np.arange(3.0))
    _, pullback = srcgrad.vjp(fn, W, x)
    want = pullback(cot)
    out, pullback = srcgrad.vjp(fn, W, x)
    out.h[...] -= y
    for a, b in zip(pullback(cot), want):
        np.testing.assert_array_equal(a, b)


def test_vjp_list_of_dataclasses_changed_in_place_does_not_change_the_pullback():
    rng = np.random.default_rng(3)
    W, x, y = rng.standard_normal((3, 3)), rng.standard_normal(3), rng.standard_normal(3)
    cot = [_Out(np.ones(3), np.arange(3.0)), _Out(np.zeros(3), np.ones(3))]
    _, pullback = srcgrad.vjp(_list_of_dataclasses_out, W, x)
    want = pullback(cot)
    out, pullback = srcgrad.vjp(_list_of_dataclasses_out, W, x)
    out[0].h -= y
    out[1].s *= 3.0
    for a, b in zip(pullback(cot), want):
        np.testing.assert_array_equal(a, b)
