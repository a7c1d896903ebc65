"""Forward mode accepts what reverse mode accepts, and gives the same derivative.

A cold review found forward mode (``jvp``, and what is built on it: ``hvp``,
``hessian``, ``jacobian``) running code reverse mode refuses and returning a
wrong tangent for it: every call that may change an array in place where
srcgrad cannot follow it (``y.sort()``, ``np.put``, ``np.add.at``,
``y[1:].fill(v)``, ``np.copyto`` into a view or with ``where=``, a ufunc's
``out=`` with ``where=`` or into a view, ``np.place``, ``np.putmask``,
``np.cumsum(out=)``) gave ``0.0`` for ``18.0``.  Both modes now make one check
(srcgrad/ad/in_place.py), so for each form here either both derivatives match
central differences or both modes raise the same located SrcGradError.

Second order through ``np.gradient`` with a moving float spacing raised
MissingRuleError naming srcgrad's internal TupleCotangent; every function of
tests/data/constant_param_fns.py with a constant-parameter rule now runs
through ``hvp``.  The singular values of a non-square matrix (``svd(a).S``,
or ``u, s, vt = svd(a)`` with only ``s`` used) are differentiable whatever
``full_matrices`` says, in both modes; the singular vectors' refusal is a
located MissingRuleError in both, never a raw AssertionError.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest
from numeric import check_every_policy

import srcgrad

W = np.arange(1.0, 5.0)
W2 = np.arange(1.0, 5.0).reshape(2, 2)
X = np.array([0.9, 0.3, 1.1, 0.7])
D = np.array([0.5, -1.0, 2.0, 1.0])


# -- every in-place form of the review's reproductions ----------------------------

def s_sort(x):
    y = x * 1.0
    y.sort()
    return np.sum(y * W)


def s_put(x):
    y = np.zeros(4)
    np.put(y, [0, 2], x[:2])
    return np.sum(y * W)


def s_addat(x):
    y = np.zeros(4)
    np.add.at(y, np.array([0, 0]), x[:2])
    return np.sum(y * W * y)


def s_viewfill(x):
    y = np.zeros(4)
    y[1:].fill(x[2])
    return np.sum(y * W)


def s_copyto_view(x):
    y = np.zeros(4)
    np.copyto(y[1:], x[:3])
    return np.sum(y * W)


def s_out_where(x):
    y = np.zeros(4)
    np.exp(x, out=y, where=x > 0.5)
    return np.sum(y * W)


def s_putmask(x):
    y = np.zeros(4)
    np.putmask(y, x > 0.5, x)
    return np.sum(y * W)


def s_cumsum_out(x):
    y = np.zeros(4)
    np.cumsum(x, out=y)
    return np.sum(y * W)


def s_place(x):
    y = np.zeros(4)
    np.place(y, x > 0.5, x[:3])
    return np.sum(y * W)


def s_out_view(x):
    y = np.zeros(5)
    np.exp(x, out=y[1:])
    return np.sum(y[1:] * W)


def s_fill_rows(x):
    y = np.empty((2, 2))
    y.fill(x[0])
    y[0].fill(x[1])
    return np.sum(y * W2)


def s_copyto_where(x):
    y = np.zeros(4)
    np.copyto(y, x, where=x > 0.5)
    return np.sum(y * y)


def s_copyto_casting(x):
    y = np.zeros(4)
    np.copyto(y, x, casting='no')
    return np.sum(y * x)


def s_fill(x):
    y = np.empty(4)
    y.fill(x[0])
    return np.sum(y * W)


def s_copyto(x):
    y = np.zeros(4)
    np.copyto(y, x)
    return np.sum(y * x)


def s_out(x):
    y = np.zeros(4)
    np.exp(x, out=y)
    return np.sum(y * W)


def s_sort_in_loop(x):
    total = 0.0
    for k in range(2):
        y = x * (k + 1.0)
        if k > 0:
            y.sort()
        total = total + np.sum(y * W)
    return total


def _put_first(y, v):
    np.put(y, [0], v)
    return y


def s_put_in_helper(x):
    y = np.zeros(4)
    y = _put_first(y, x[1])
    return np.sum(y * W) + np.sum(x)


def l_reverse(x):
    xs = [x[0], x[1] * 2.0, x[2]]
    xs.reverse()
    return xs[0] * 3.0 + xs[2]


def l_sort(x):
    xs = [x[0], x[1], x[2]]
    xs.sort()
    return xs[0] * 3.0 + xs[2]


def l_extend(x):
    xs = [x[0]]
    xs.extend([x[1], x[2] * 2.0])
    return xs[2] * xs[0]


def d_update(x):
    d = {"a": x[0]}
    d.update({"b": x[1] * 2.0})
    return d["a"] * d["b"]


def a_fill(x, y):
    y.fill(x[0])
    return np.sum(y * x)


def a_out(x, y):
    np.exp(x, out=y)
    return np.sum(y * x)


LOCAL = [s_sort, s_put, s_addat, s_viewfill, s_copyto_view, s_out_where, s_putmask,
         s_cumsum_out, s_place, s_out_view, s_fill_rows, s_copyto_where, s_copyto_casting,
         s_fill, s_copyto, s_out, s_sort_in_loop, s_put_in_helper,
         l_reverse, l_sort, l_extend, d_update]  # jvp gave 3.5 for 6.5, raw IndexError


def _central(fn, x, d, eps=1e-6):
    return (fn(x + eps * d) - fn(x - eps * d)) / (2 * eps)


def _outcome(call):
    try:
        return call(), None
    except srcgrad.SrcGradError as error:
        return None, error


@pytest.mark.parametrize("fn", LOCAL, ids=lambda f: f.__name__)
def test_in_place_forms_right_in_both_modes_or_refused_by_both(fn):
    fd = _central(fn, X, D)
    grad, grad_error = _outcome(lambda: srcgrad.grad(fn)(X.copy()))
    both, jvp_error = _outcome(lambda: srcgrad.jvp(fn, (X.copy(),), (D,)))
    assert (grad_error is None) == (jvp_error is None), (fn.__name__, grad_error, jvp_error)
    if grad_error is not None:
        assert type(grad_error) is type(jvp_error)
        assert grad_error.message == jvp_error.message
        for error in (grad_error, jvp_error):
            assert error.filename == __file__ and error.lineno is not None \
                and error.col is not None, error
        return
    value, tangent = both
    assert value == fn(X.copy())                             # bit for bit
    np.testing.assert_allclose(grad @ D, fd, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(tangent, fd, rtol=1e-6, atol=1e-8)


def test_refused_forms_say_which_array_and_what_to_write():
    # (y[1:].fill(x[2]) was the example until session 30: it is now the element
    # write y[1:][...] = x[2], right in both modes, checked in LOCAL above)
    with pytest.raises(srcgrad.UnsupportedSyntaxError) as caught:
        srcgrad.jvp(s_copyto_view, (X,), (D,))
    message = str(caught.value)
    assert "'np.copyto(y[1:], x[:3])' may change 'y[1:]' in place" in message
    assert "write y[...] = v" in message
    assert caught.value.lineno == s_copyto_view.__code__.co_firstlineno + 2


@pytest.mark.parametrize("fn", [a_fill, a_out], ids=lambda f: f.__name__)
def test_in_place_on_an_argument_followed_by_both(fn):
    # refused until session 30: the argument y is copied at the entry, and its
    # whole write is the element write y[...] = v of a local (T2 #1)
    x, y = np.array([0.3, 0.7]), np.array([1.0, 2.0])
    grad = check_every_policy(fn, (x, y), wrt=0)
    assert (y == np.array([1.0, 2.0])).all()
    _, tangent = srcgrad.jvp(fn, (x, y.copy()), (np.ones(2), np.zeros(2)))
    assert np.isclose(tangent, np.sum(grad))


@pytest.mark.parametrize("make", [lambda f: srcgrad.jacobian(f)(X),
                                  lambda f: srcgrad.hvp(f)(X, D),
                                  lambda f: srcgrad.hessian(f)(X)],
                         ids=["jacobian", "hvp", "hessian"])
def test_what_builds_on_forward_mode_refuses_too(make):
    for fn in (s_put, s_copyto_view, s_copyto_where):
        with pytest.raises(srcgrad.UnsupportedSyntaxError):
            make(fn)


# -- second order through np.gradient with a moving spacing ------------------------

def spacing_float(x):
    return np.sum(np.gradient(x ** 3, float(x[0])) ** 2)


def spacing_2d_one(u, h):
    """One spacing for both axes of a 2-d array: a tuple, as only the run shows."""
    gx, gy = np.gradient(u * u, float(h))
    return np.sum(gx * gy) + np.sum(gx ** 2)


def spacing_axes(u, h):
    a, b = np.gradient(u * u, float(h), axis=(1, 0), edge_order=2)
    return np.sum(a * b)


def spacing_two(u, h, k):
    total = 0.0
    for i in range(2):       # in a loop, with a branch
        gx, gy = np.gradient(u * (i + 1.0), float(h), float(k))
        if i > 0:
            total = total + np.sum(gx * gy)
        else:
            total = total + np.sum(gx ** 2)
    return total


M = np.array([[0.3, -1.2, 0.5, 2.0], [1.1, 0.2, -0.7, 0.4], [-0.4, 0.9, 1.3, -1.8]])
SPACINGS = [(spacing_float, (np.array([0.31, 0.72, 1.13, 0.94]),)),
            (spacing_2d_one, (M, 0.4)), (spacing_axes, (M, 0.4)), (spacing_two, (M, 0.3, 0.7))]


def _direction(x, seed=5):
    rng = np.random.default_rng(seed)
    return float(rng.standard_normal()) if isinstance(x, float) \
        else rng.standard_normal(np.shape(x))


def _moved(args, i, value):
    args = list(args)
    args[i] = value
    return args


@pytest.mark.parametrize("fn, args", SPACINGS, ids=lambda a: getattr(a, "__name__", ""))
def test_gradient_spacing_first_and_second_order(fn, args):
    eps = 1e-5
    for i, x in enumerate(args):
        v = _direction(x)
        tangents = [None] * len(args)
        tangents[i] = v
        value, tangent = srcgrad.jvp(fn, args, tangents)
        assert value == fn(*args)
        fd = (fn(*_moved(args, i, x + eps * v)) - fn(*_moved(args, i, x - eps * v))) / (2 * eps)
        np.testing.assert_allclose(tangent, fd, rtol=1e-6, atol=1e-7)
        grad = srcgrad.grad(fn, wrt=i)
        hv = srcgrad.hvp(fn, wrt=i)(*args, v)
        fd2 = (np.asarray(grad(*_moved(args, i, x + eps * v))) -
               np.asarray(grad(*_moved(args, i, x - eps * v)))) / (2 * eps)
        np.testing.assert_allclose(hv, fd2, rtol=1e-5, atol=1e-6)


def test_gradient_spacing_hessian_is_symmetric_and_matches_differences():
    x = np.array([0.31, 0.72, 1.13, 0.94])
    hess = srcgrad.hessian(spacing_float)(x)
    np.testing.assert_allclose(hess, hess.T, rtol=1e-10, atol=1e-10)
    grad, eps = srcgrad.grad(spacing_float), 1e-5
    columns = [(grad(x + eps * e) - grad(x - eps * e)) / (2 * eps) for e in np.eye(4)]
    np.testing.assert_allclose(hess, np.stack(columns, axis=-1), rtol=1e-5, atol=1e-6)


def test_gradient_spacing_tangent_code_names_no_runtime_class():
    source = srcgrad.jvp(spacing_float, wrt=0).source
    assert "TupleCotangent" not in source and "map(" not in source


def _constant_parameter_cases():
    """tests/rules/test_constant_parameters.py, whose CASES table this reuses."""
    path = Path(__file__).resolve().parents[1] / "rules" / "test_constant_parameters.py"
    spec = importlib.util.spec_from_file_location("constant_parameter_cases", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_hvp_of_every_constant_parameter_function():
    """Every function of tests/rules' corpus with a constant-parameter rule, through
    hvp along each float argument: the Hessian-vector product is the central
    difference of the gradient (a Python float spacing included: the code is
    specialised for float arguments, as grad's is)."""
    cases = _constant_parameter_cases()
    eps = 1e-5
    for name, (fn, args, _) in sorted(cases.CASES.items()):
        for i in cases._float_positions(args):
            x = args[i]
            v = np.linspace(0.3, 1.1, np.size(x)).reshape(np.shape(x)) \
                if isinstance(x, np.ndarray) else 0.7
            hv = srcgrad.hvp(fn, i)(*args, v)
            grad = srcgrad.grad(fn, i)
            fd = (np.asarray(grad(*_moved(args, i, x + eps * v))) -
                  np.asarray(grad(*_moved(args, i, x - eps * v)))) / (2 * eps)
            np.testing.assert_allclose(hv, fd, rtol=1e-4, atol=1e-5, err_msg=f"{name}[{i}]")


# -- the singular values of a non-square matrix ------------------------------------

E42 = np.eye(4, 2)


def svd_S(x):
    return np.linalg.svd(np.outer(x, x[:2]) + E42).S[0]


def svd_s_unpacked(x):
    u, s, vt = np.linalg.svd(np.outer(x, x[:2]) + E42)
    return s[0] * s[1]


def svd_s_wide_in_loop(x):
    total = 0.0
    for k in range(2):
        s = np.linalg.svd(np.outer(x[:2], x) + E42.T * (k + 1.0))[1]
        if k > 0:
            total = total + np.sum(s ** 2)
    return total


def svd_reduced_vectors(x):
    u, s, vt = np.linalg.svd(np.outer(x, x[:2]) + E42, full_matrices=False)
    return s[0] + np.abs(u[0, 0]) + np.abs(vt[1, 0])


def svd_extra_vector(x):
    u, s, vt = np.linalg.svd(np.outer(x, x[:2]) + E42)
    return s[0] + np.sum(u[:, 3] ** 2 * W)


def svd_first_vector(x):
    u, s, vt = np.linalg.svd(np.outer(x, x[:2]) + E42)
    return s[0] + np.abs(u[0, 0])


XS = np.array([0.3, 0.7, 1.1, 0.9])


@pytest.mark.parametrize("fn", [svd_S, svd_s_unpacked, svd_s_wide_in_loop, svd_reduced_vectors],
                         ids=lambda f: f.__name__)
def test_singular_values_of_a_non_square_matrix_both_modes(fn):
    eps = 1e-6
    fd = _central(fn, XS, D, eps)
    value, tangent = srcgrad.jvp(fn, (XS,), (D,))
    assert value == fn(XS)
    np.testing.assert_allclose(tangent, fd, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(srcgrad.grad(fn)(XS) @ D, fd, rtol=1e-6, atol=1e-8)
    grad = srcgrad.grad(fn)
    fd2 = (grad(XS + 1e-5 * D) - grad(XS - 1e-5 * D)) / 2e-5
    np.testing.assert_allclose(srcgrad.hvp(fn)(XS, D), fd2, rtol=1e-5, atol=1e-6)


def test_singular_values_agree_with_autograd():
    autograd = pytest.importorskip("autograd")
    anp = pytest.importorskip("autograd.numpy")

    def ref(x):
        return anp.linalg.svd(anp.outer(x, x[:2]) + E42, full_matrices=False)[1][0]

    np.testing.assert_allclose(srcgrad.grad(svd_S)(XS), autograd.grad(ref)(XS), rtol=1e-10)


def test_extra_singular_vectors_refused_where_the_svd_is_called():
    line = svd_extra_vector.__code__.co_firstlineno + 1
    for run in (lambda: srcgrad.grad(svd_extra_vector)(XS),
                lambda: srcgrad.jvp(svd_extra_vector, (XS,), (D,))):
        with pytest.raises(srcgrad.MissingRuleError, match="pass full_matrices=False") as caught:
            run()
        assert (caught.value.filename, caught.value.lineno) == (__file__, line)


def test_first_singular_vectors_of_full_factors():
    """Even the first k columns of a non-square matrix's full u are refused, by
    both modes alike, where the svd is called (full_matrices=False is the way)."""
    line = svd_first_vector.__code__.co_firstlineno + 1
    for run in (lambda: srcgrad.grad(svd_first_vector)(XS),
                lambda: srcgrad.jvp(svd_first_vector, (XS,), (D,))):
        with pytest.raises(srcgrad.MissingRuleError, match="pass full_matrices=False") as caught:
            run()
        assert (caught.value.filename, caught.value.lineno) == (__file__, line)


# -- NumPy's named tuples read by field ---------------------------------------------

A3 = np.array([[2.0, 0.3, 0.1], [0.3, 1.5, 0.2], [0.1, 0.2, 1.0]])


def nt_eigh(x):
    return np.sum(np.linalg.eigh(A3 + np.outer(x, x)).eigenvalues * np.arange(3.0))


def nt_slogdet(x):
    return np.linalg.slogdet(A3 + np.outer(x, x)).logabsdet


def nt_qr(x):
    return np.sum(np.linalg.qr(A3 + np.outer(x, x)).R ** 2 * np.arange(9.0).reshape(3, 3))


def nt_svd_in_helper(x):
    def top(m):
        return np.linalg.svd(m).S[0]
    total = 0.0
    for k in range(2):
        total = total + top(A3 * (k + 1.0) + np.outer(x, x))
    return total


@pytest.mark.parametrize("fn", [nt_eigh, nt_slogdet, nt_qr, nt_svd_in_helper],
                         ids=lambda f: f.__name__)
def test_named_tuple_fields_carry_their_tangent(fn):
    """jvp of np.linalg.eigh(a).eigenvalues (and the other named tuples' fields)
    gave 0.0: the rules' tangents are plain tuples, read now at the field's place."""
    x, d = np.array([0.3, 0.7, 1.1]), np.array([0.5, -1.0, 2.0])
    value, tangent = srcgrad.jvp(fn, (x,), (d,))
    assert value == fn(x)
    fd = _central(fn, x, d)
    np.testing.assert_allclose(tangent, fd, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(srcgrad.grad(fn)(x) @ d, fd, rtol=1e-6, atol=1e-8)


def interp_periodic(x, xp, fp):
    return np.sum(np.interp(x, xp, fp, period=2.0) ** 2)


def test_every_runtime_helper_in_a_tangent_rule_has_rules():
    """Generated tangent code is differentiated again (hvp, hessian): every
    srcgrad.runtime helper a tangent rule calls has rules in both modes or is
    marked non-differentiable (TupleCotangent in np.gradient's, periodic_knots in
    np.interp's with a period were neither)."""
    import ast
    import inspect
    import textwrap

    from srcgrad import runtime
    from srcgrad.rules import registry
    # The one known gap, refused and located instead (hvp of np.multiply.at with an
    # index array, b4efefa: the factors' tangent has no rule of its own;
    # tests/e2e/test_multiply_at.py::test_hvp_of_an_index_array_is_refused_located
    # checks the refusal).  Any other helper must have rules.
    refused = {("multiplied_at_tangent", "multiplied_at")}
    lacking = set()
    for rule in registry.all_tangents().values():
        try:
            tree = ast.parse(textwrap.dedent(inspect.getsource(rule.fn)))
        except (OSError, TypeError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and node.id in runtime.__all__:
                helper = getattr(runtime, node.id)
                if not (registry.is_nondifferentiable(helper) or (
                        registry.lookup(helper) and registry.lookup_tangent(helper))):
                    lacking.add((node.id, rule.name))
    assert not lacking - refused, sorted(lacking - refused)


def test_hvp_through_periodic_interpolation_knots():
    x = np.array([0.3, 1.2, 2.65, -0.4])
    xp, fp = np.array([0.0, 0.5, 1.1, 1.7]), np.array([1.0, -0.5, 2.0, 0.3])
    v, eps = np.linspace(0.3, 1.1, 4), 1e-5
    for i, args in enumerate([(x, xp, fp)] * 3):
        grad = srcgrad.grad(interp_periodic, i)
        fd = (grad(*_moved(args, i, args[i] + eps * v)) -
              grad(*_moved(args, i, args[i] - eps * v))) / (2 * eps)
        np.testing.assert_allclose(srcgrad.hvp(interp_periodic, i)(*args, v), fd,
                                   rtol=1e-5, atol=1e-6)
