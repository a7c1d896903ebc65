"""optimize/elementwise_seed.py and runtime summed_elementwise_seed: grad's seed
from the operands of the elementwise expression whose sum or mean the function
returns, so that the forward sweep no longer makes that expression's arrays.

Where it must not apply: value_and_grad, an expression the adjoint sweep reads
part of (that part is a leaf), a leaf assigned twice, a function updating in
place, a reduction with an axis, other operations and constants.  The helper:
the dtype the expression's sum has (float64/32/16 mixed), and the expression
itself where anything is unknown -- integers, broadcasting, shapes that do not
fit (raising what the function raises), np.errstate(over="raise").  Whole
programs: gradients bit-identical to the code without the pass.
"""

from __future__ import annotations

import numpy as np
import pytest
from numeric import POLICIES, assert_bit_identical, check_policies

import srcgrad
from srcgrad.errors import NonDifferentiableError
from srcgrad import pipeline
from srcgrad.api import compiled
from srcgrad.runtime import grad_seed, summed_elementwise_seed


def tail(x):
    a = np.sin(x)
    m = np.exp(a)
    b = a * m
    c = b + 2.0 * m - a / 3
    return np.sum(-c)


def tail_mean(x):     # the mean's adjoint reads its operand's size: not applied
    a = np.tanh(x)
    return np.mean(a * a - x)


def part_read(x):      # the adjoint reads b (for c = b * b): b is a leaf
    a = np.sin(x)
    b = a * x
    c = b * b
    return np.sum(c + a)


def twice(x):          # a is assigned in a loop: not a leaf
    a = np.sin(x)
    for i in range(2):
        a = a * 1.5
    return np.sum(a + x)


def updated(x):        # an element assigned: the function updates in place
    a = np.sin(x)
    a[0] = 5.0
    return np.sum(a * x)


def with_axis(x):
    a = np.sin(x)
    return np.sum(np.sum(a * x, axis=0))


def _source(fn, mode="grad"):
    return getattr(srcgrad, mode)(fn).source


def test_the_seed_reads_the_operands():
    src = _source(tail)
    assert "summed_elementwise_seed(np.sum, (a, m), lambda: -(a * m + 2.0 * m - a / 3))" in src
    assert "b = a * m" not in src and "np.sum(" not in src   # the tail is gone
    assert "(c, a), lambda: c + a" in _source(part_read)   # c = b ** 2 once simplified: a leaf


@pytest.mark.parametrize("fn", [twice, updated, with_axis, tail_mean])
def test_not_where_a_condition_fails(fn):
    assert "summed_elementwise_seed" not in _source(fn)


def test_not_for_value_and_grad():
    assert "summed_elementwise_seed" not in _source(tail, "value_and_grad")


# --- the helper -----------------------------------------------------------------------------

@pytest.mark.parametrize("dtypes", [(np.float64, np.float64), (np.float32, np.float32),
                                    (np.float32, np.float64), (np.float16, np.float32)])
def test_the_dtype_is_the_expressions(dtypes):
    a, b = (np.linspace(0.5, 1.5, 6, dtype=t) for t in dtypes)
    got = summed_elementwise_seed(np.sum, (a, b), lambda: a * b + 2.0)
    want = grad_seed(np.sum(a * b + 2.0))
    assert_bit_identical(got, want)
    assert_bit_identical(summed_elementwise_seed(np.mean, (a, b), lambda: a / b - 1),
                         grad_seed(np.mean(a / b - 1)))


def test_anything_unknown_makes_the_expression():
    calls = []

    def value(v):
        def thunk():
            calls.append(1)
            return v()
        return thunk

    i = np.arange(4)
    f = np.ones(4)
    for operands, v in [((i, i), lambda: i * i), ((f, np.ones((3, 4))), lambda: f * 2.0)]:
        calls.clear()
        assert_bit_identical(summed_elementwise_seed(np.sum, operands, value(v)),
                             grad_seed(np.sum(v())))
        assert calls, operands
    # a complex sum: made, and refused as grad_seed refuses it (grad of a complex output)
    calls.clear()
    complex_operands, complex_value = (f, f.astype(np.complex128)), lambda: f * (f + 0j)
    with pytest.raises(NonDifferentiableError, match="complex") as expected:
        grad_seed(np.sum(complex_value()))
    with pytest.raises(NonDifferentiableError) as got:
        summed_elementwise_seed(np.sum, complex_operands, value(complex_value))
    assert calls and str(got.value) == str(expected.value)
    with pytest.raises(ValueError):   # what the function raises
        summed_elementwise_seed(np.sum, (np.ones(3), np.ones(4)), lambda: np.ones(3) * np.ones(4))
    big = np.full(3, 1e300)
    with np.errstate(over="raise"), pytest.raises(FloatingPointError):
        summed_elementwise_seed(np.sum, (big,), lambda: big * big)


# --- whole programs -------------------------------------------------------------------------

def _compare(monkeypatch, fn, args):
    monkeypatch.setenv("SRCGRAD_CACHE", "0")
    compiled._MEMORY.clear()
    g = srcgrad.grad(fn)
    got = g(*args)
    assert "summed_elementwise_seed" in g.source
    with monkeypatch.context() as m:
        m.setattr(pipeline, "seed_without_elementwise", lambda stmts, program: stmts)
        compiled._MEMORY.clear()
        without = srcgrad.grad(fn)
        assert "summed_elementwise_seed" not in without.source
        expected = without(*args)
    compiled._MEMORY.clear()
    assert_bit_identical(got, expected)


@pytest.mark.parametrize("fn", [tail, part_read])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_gradients_bit_identical_without_the_pass(monkeypatch, fn, dtype):
    _compare(monkeypatch, fn, [np.linspace(-1.5, 2.0, 41).astype(dtype)])


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_special_values(monkeypatch):
    _compare(monkeypatch, tail, [np.array([-0.0, 0.0, np.inf, -np.inf, np.nan, 1e308])])


def test_a_warning_raised_as_an_error_still_comes():
    x = np.array([800.0])

    def overflow(x):
        a = np.exp(x)
        return np.sum(a * a)

    with np.errstate(over="raise"), pytest.raises(FloatingPointError):
        srcgrad.grad(overflow)(x)


@pytest.mark.parametrize("fn", [tail, part_read])
def test_every_policy(fn):
    check_policies(fn, (np.linspace(-0.9, 1.2, 17),), policies=POLICIES)


def test_a_long_or_doubling_tail_keeps_its_plain_seed(tmp_path):
    """A tail longer than the pass looks at keeps grad_seed: 500 additions in a row
    recursed past Python's limit (RecursionError), and a tail whose values are
    each read twice (b = a * a) doubled the expression at every step."""
    from programs import load_program

    def compiled_f(body, result):
        source = "import numpy as np\n\n\ndef f(x):\n" + "".join(
            f"    {line}\n" for line in body) + f"    return np.sum({result})\n"
        return load_program(source, tmp_path).f

    x = np.linspace(-1.0, 1.0, 5)
    chain = compiled_f(["v0 = x * 2.0", *(f"v{i} = v{i - 1} + x" for i in range(1, 500))],
                       "v499")
    g = srcgrad.grad(chain)
    assert "summed_elementwise_seed" not in g.source
    assert_bit_identical(g(x), np.full(5, 501.0))
    doubling = compiled_f(["a0 = np.sin(x)", *(f"a{i} = a{i - 1} * a{i - 1}"
                                               for i in range(1, 40))], "a39")
    assert "summed_elementwise_seed" not in srcgrad.grad(doubling).source
    short = compiled_f(["v0 = x * 2.0", *(f"v{i} = v{i - 1} + x" for i in range(1, 20))],
                       "v19")
    assert "summed_elementwise_seed" in srcgrad.grad(short).source
