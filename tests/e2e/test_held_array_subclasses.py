"""An np.matrix or a masked array reaching the code other than as an argument (s37 P-1).

Arguments of those classes were refused (api/subclasses.py); the same array
read from a global, a closure cell, a default, an item of a module-level list
or dict, a field of a module-level object or of the object a method is bound
to, or in a helper the function calls, was differentiated with ndarray's
rules, silently wrong: ``np.sum(M * x)`` with ``M`` masked gave the gradient
1.0 at the masked entry (the function's is 0), an ``np.matrix`` the gradient
of the elementwise product.  Each is refused now, located at the line that
reads it (api/held_values.py); nested in an argument too.
"""

from __future__ import annotations

import types
import warnings

import numpy as np
import pytest
from numeric import check_every_policy

import srcgrad
from srcgrad import NonDifferentiableError

pytestmark = pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")  # np.matrix

M = np.ma.masked_array([1.0, 2.0, 3.0, 4.0], mask=[0, 0, 1, 0])
with warnings.catch_warnings():
    warnings.simplefilter("ignore", PendingDeprecationWarning)
    MAT = np.matrix([[1.0, 2.0], [3.0, 4.0]])
LIST = [np.ones(4), M]
TABLE = {"w": M}
SPACE = types.SimpleNamespace(m=M)


class Holder:
    pass


OBJ = Holder()
OBJ.m = M
OBJ.unread = M  # a field no code reads
OBJ.w = np.arange(4.0)


class Scaled(np.ndarray):
    def __pow__(self, p):
        return np.asarray(self) ** p * 10.0


class Tagged(np.ndarray):  # ndarray's arithmetic: differentiated
    def __array_finalize__(self, obj):
        self.tag = getattr(obj, "tag", None)


SCALED = np.array([1.0, 2.0, 3.0, 4.0]).view(Scaled)
TAGGED = np.array([1.0, 2.0, 3.0, 4.0]).view(Tagged)
PLAIN = np.array([1.0, 2.0, 3.0, 4.0])


def through_global(x):
    return np.sum(M * x)


def matrix_global(x):
    y = np.reshape(x, (2, 2))
    return np.sum(np.asarray(MAT * y))


def _closure():
    m = M

    def through_closure(x):
        return np.sum(m * x)
    return through_closure


through_closure = _closure()


def through_default(x, m=M):
    return np.sum(m * x)


def through_keyword_default(x, *, m=M):
    return np.sum(m * x)


def list_item(x):
    return np.sum(LIST[1] * x)


def dict_item(x):
    return np.sum(TABLE["w"] * x)


def object_field(x):
    return np.sum(OBJ.m * x)


def namespace_member(x):
    return np.sum(SPACE.m * x)


def _helper(x):
    return M * x


def through_helper(x):
    return np.sum(_helper(x))


def loop_over_list(x):
    s = 0.0
    for w in LIST:
        s = s + np.sum(w * x)
    return s


def own_power(x):
    return np.sum(SCALED ** 2 * x)


class Model:
    def __init__(self, m):
        self.m = m

    def __call__(self, x):
        return np.sum(self.m * x)

    def run(self, x):
        return np.sum(self.m * x)


REFUSED = [
    (through_global, "M (a global) read by through_global is a masked array"),
    (matrix_global, "MAT (a global) read by matrix_global is an np.matrix"),
    (through_closure, "m (a closure variable) read by _closure.<locals>.through_closure"),
    (through_default, "'m' of through_default is a masked array"),  # vjp, jvp: an argument
    (through_keyword_default, "'m' of through_keyword_default is a masked array"),
    (list_item, "LIST[1] (a global) read by list_item is a masked array"),
    (dict_item, "TABLE['w'] (a global) read by dict_item is a masked array"),
    (object_field, "OBJ.m (a global) read by object_field is a masked array"),
    (namespace_member, "SPACE.m (a global) read by namespace_member"),
    (through_helper, "M (a global) read by _helper is a masked array"),
    (loop_over_list, "LIST[1] (a global) read by loop_over_list"),
    (own_power, "SCALED (a global) read by own_power is a Scaled"),
    (Model(M), "self.m, a masked array"),
    (Model(M).run, "self.m, a masked array"),
]


def _calls(fn):
    x = np.linspace(0.5, 2.0, 4)
    return [lambda: srcgrad.grad(fn)(x),
            lambda: srcgrad.value_and_grad(fn, policy="recompute")(x),
            lambda: srcgrad.vjp(fn, x),
            lambda: srcgrad.jvp(fn, (x,), (np.ones(4),)),
            # (hvp refuses keyword-only parameters, whatever their defaults)
            lambda: srcgrad.hvp(fn)(x, np.ones(4))][:4 if fn is through_keyword_default else 5]


@pytest.mark.parametrize("fn, words", REFUSED,
                         ids=[getattr(f, "__name__", type(f).__name__) for f, _ in REFUSED])
def test_a_subclass_array_read_from_outside_the_arguments_is_refused(fn, words):
    for call in _calls(fn):
        with pytest.raises(NonDifferentiableError) as info:
            call()
        err = info.value
        assert err.filename == __file__ and err.lineno, err
        assert words in err.message, err.message
        assert "np.ndarray's arithmetic" in err.message


def test_the_refusal_points_at_the_read():
    with pytest.raises(NonDifferentiableError) as info:
        srcgrad.grad(matrix_global)(np.ones(4))
    assert info.value.source_line.strip() == "return np.sum(np.asarray(MAT * y))"
    assert info.value.source_line[info.value.col:].startswith("MAT * y")


def takes_list(x, ws):
    return np.sum(ws[0] * x)


def takes_object(x, o):
    return np.sum(o.m * x)


@pytest.mark.parametrize("fn, held, words", [
    (takes_list, [M], "argument 'ws' of takes_list holds, at ws[0], a masked array"),
    (takes_list, ({"a": MAT},), "at ws[0]['a'], an np.matrix"),
    (takes_object, OBJ, "argument 'o' of takes_object holds, at o.m, a masked array"),
])
def test_a_subclass_array_held_in_an_argument_is_refused(fn, held, words):
    x = np.ones(4)
    for call in (lambda: srcgrad.grad(fn)(x, held),
                 lambda: srcgrad.jvp(fn, (x, held), (np.ones(4), None)),
                 lambda: srcgrad.hvp(fn)(x, held, np.ones(4))):
        with pytest.raises(NonDifferentiableError, match="np.ndarray's arithmetic") as info:
            call()
        assert words in info.value.message, info.value.message


def plain_global(x):
    return np.sum(PLAIN * x ** 2)


def tagged_global(x):
    return np.sum(TAGGED * x ** 2)


def plain_field(x):
    return np.sum(OBJ.w * x ** 2)  # OBJ.unread, a masked array, is not read


@pytest.mark.parametrize("fn", [plain_global, tagged_global, plain_field])
def test_arrays_with_ndarray_arithmetic_are_differentiated(fn):
    check_every_policy(fn, (np.linspace(0.5, 2.0, 4),))


SWAPPED = PLAIN


def swapped_global(x):
    return np.sum(SWAPPED * x)


def test_a_global_rebound_to_a_masked_array_is_refused_at_the_next_call():
    global SWAPPED
    g = srcgrad.grad(swapped_global)
    x = np.ones(4)
    try:
        np.testing.assert_array_equal(g(x), PLAIN)
        SWAPPED = M
        with pytest.raises(NonDifferentiableError, match="SWAPPED .a global. read by"):
            g(x)
    finally:
        SWAPPED = PLAIN
    np.testing.assert_array_equal(g(x), PLAIN)


MA = np.ma.masked_array([1.5, -2.0, 0.5, 1.0], mask=[False, True, False, False])


def converted_matrix(x):
    A = np.asarray(MAT)
    return np.sum(A @ np.reshape(x, (2, 2)))


def filled(x):
    w = MA.filled(0.0)
    return np.sum(w * x ** 2)


def plain_data(x):
    return np.sum(np.ma.getdata(MA) * x) + np.sum(MA.data * x)


def metadata(x):
    if isinstance(MAT, np.matrix):
        return np.sum(x ** 2) * MA.shape[0] + np.sum(x * MA.mask)
    return np.sum(x)


@pytest.mark.parametrize("fn", [converted_matrix, filled, plain_data, metadata])
def test_an_array_converted_before_any_arithmetic_is_differentiated(fn):  # diff review D-5
    check_every_policy(fn, (np.linspace(0.5, 2.0, 4),))


def _uses_raw(w, x):
    return np.sum(w * x)


def converted_here_raw_in_a_helper(x):
    return np.sum(MA.filled(0.0) * x) + _uses_raw(MA, x)


def test_a_conversion_beside_a_raw_use_is_still_refused():
    with pytest.raises(NonDifferentiableError, match="MA .a global. read by"):
        srcgrad.grad(converted_here_raw_in_a_helper)(np.ones(4))
