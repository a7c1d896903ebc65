"""Attributes of a user's object named like ndarray attributes (outside tester, t1 1/1b/2).

``th.T`` of a named tuple ``Thermo(T, P)``, ``p.shape`` of ``Gamma(shape, rate)``,
``p.mean``/``p.std`` of ``Gauss(mean, std)``, ``h.var`` of a dataclass kernel,
``o.real`` of an object: each was differentiated as the ndarray attribute --
dT added into dP (silently wrong), a zero gradient for ``shape``, raw
TypeErrors for ``.mean``/``.var``.  The attribute is now the field where the
object is a user's (the code is specialised on the argument's type), the array
attribute where it is an array, and decided as the code runs where the compiler
cannot tell (a helper's parameter, an element of a list).

Each case: the value bit for bit (check=True), the gradient against central
differences under every policy, the tangent against central differences, and
for some the Hessian-vector product against differences of the gradient.
"""

from __future__ import annotations

import dataclasses
from collections import namedtuple

import numpy as np
import pytest
from numeric import assert_close
from scipy.special import gammaln

import srcgrad

Thermo = namedtuple("Thermo", ["T", "P"])
Gamma = namedtuple("Gamma", ["shape", "rate"])
Gauss = namedtuple("Gauss", ["mean", "std"])
Sized = namedtuple("Sized", ["size", "ndim", "flat"])


@dataclasses.dataclass
class Kernel:
    ls: float
    var: float


class Complexish:
    def __init__(self, real, imag, T):
        self.real, self.imag, self.T = real, imag, T


class Model:
    def __init__(self, T, mT):
        self.T, self.mT = T, mT

    def loss(self, x):
        return np.sum(self.T * x ** 2) + self.mT * np.sum(x)


def free_energy(th, V):
    return np.sum(th.P * V - th.T * np.log(V))


def gamma_nll(p, x):
    return -np.sum(p.shape * np.log(p.rate) + (p.shape - 1) * np.log(x) - p.rate * x
                   - gammaln(p.shape))


def gauss_nll(p, x):
    z = (x - p.mean) / p.std
    return np.sum(0.5 * z ** 2 + np.log(p.std))


def kernel(h, x):
    return h.var * np.sum(x ** 2) / h.ls


def complexish(o, x):
    return np.sum(o.real * x + o.imag * x ** 2) * o.T


def sized(s, x):
    total = 0.0
    for i in range(3):  # in a loop, with a branch on the field
        if s.size > 0:
            total = total + s.size * x[i] + s.ndim * s.flat * x[i] ** 2
        else:
            total = total - x[i]
    return total


def _energy(th, V):  # a helper: the type of th is only known as it runs
    return th.P * V - th.T * np.log(V)


def through_helper(th, V):
    return np.sum(_energy(th, V))


def over_a_list(ths, V):
    s = 0.0
    for th in ths:
        s = s + np.sum(th.T * V + th.P)
    return s


def _array_attributes(W, x):  # a helper taking arrays: the array attributes
    return W.T @ x + W.mT @ x + np.sum(x.real) * x.shape[0] + W.T.real @ x


def arrays_through_helper(W, x):
    return np.sum(_array_attributes(W, x) ** 2)


def local_named_tuple(x):
    th = Thermo(x[0] * 2.0, x[1])
    return th.T * th.P + x.T @ x


def _flat(value) -> np.ndarray:
    """The float leaves of ``value`` in a fixed order (fields, attributes, items)."""
    if isinstance(value, tuple) and hasattr(value, "_fields") or isinstance(value, list):
        parts = list(value)
    elif dataclasses.is_dataclass(value) or hasattr(value, "__dict__"):
        parts = list(vars(value).values())
    else:
        return np.ravel(np.asarray(value, dtype=float))
    return np.concatenate([_flat(p) for p in parts]) if parts else np.zeros(0)


def _unflat(like, theta):
    """``like`` with its float leaves taken from ``theta`` (the order of :func:`_flat`)."""
    pos = 0

    def take(v):
        nonlocal pos
        if isinstance(v, tuple) and hasattr(v, "_fields"):
            return type(v)(*[take(p) for p in v])
        if isinstance(v, list):
            return [take(p) for p in v]
        if dataclasses.is_dataclass(v) or hasattr(v, "__dict__"):
            new = object.__new__(type(v))
            for k, p in vars(v).items():
                setattr(new, k, take(p))
            return new
        n = np.size(v)
        part = theta[pos:pos + n]
        pos += n
        return part.reshape(np.shape(v)) if isinstance(v, np.ndarray) else float(part[0])

    return take(like)


def _fd(fn, obj, rest, eps=1e-6):
    theta = _flat(obj)
    g = np.zeros_like(theta)
    for i in range(theta.size):
        e = np.zeros_like(theta)
        e[i] = eps
        g[i] = (fn(_unflat(obj, theta + e), *rest) - fn(_unflat(obj, theta - e), *rest)) / (2 * eps)
    return g


X3 = np.array([0.5, 1.2, 2.0])
CASES = {
    "namedtuple .T float (t1 1)": (free_energy, Thermo(300.0, 2.0), (np.array([1.0, 2.0]),)),
    "namedtuple .T arrays": (free_energy, Thermo(np.array([3.0, 3.1]), np.array([1.0, 2.0])),
                             (np.array([1.0, 2.0]),)),
    "namedtuple .shape (t1 1b)": (gamma_nll, Gamma(2.0, 1.5), (X3,)),
    "namedtuple .mean .std (t1 2)": (gauss_nll, Gauss(np.array([0.1, 0.2, 0.3]),
                                                      np.array([1.0, 2.0, 0.5])), (X3,)),
    "dataclass .var (t1 2)": (kernel, Kernel(1.5, 2.0), (X3,)),
    "object .real .imag .T": (complexish, Complexish(np.array([0.3, -0.2, 1.0]), 0.7, 1.3),
                              (X3,)),
    "namedtuple .size .ndim .flat in a loop and branch": (sized, Sized(1.5, 0.5, -0.25), (X3,)),
    "field read in a helper": (through_helper, Thermo(300.0, 2.0), (np.array([1.0, 2.0]),)),
    "list of named tuples": (over_a_list, [Thermo(1.5, 2.0), Thermo(0.5, 3.0)],
                             (np.array([1.0, 2.0]),)),
    "arrays' .T .mT .real .shape in a helper": (
        arrays_through_helper, np.arange(6.0).reshape(2, 3) / 7, (np.array([1.0, 2.0]),)),
    "local named tuple": (local_named_tuple, np.array([0.3, 0.7]), ()),
}
POLICIES = ("save", "recompute", "sqrt", ("revolve", 2))


@pytest.mark.parametrize("policy", POLICIES, ids=str)
@pytest.mark.parametrize("case", CASES)
def test_gradient(case, policy):
    fn, obj, rest = CASES[case]
    _, grad = srcgrad.value_and_grad(fn, wrt=0, policy=policy, check=True)(obj, *rest)
    assert type(grad) is type(obj)
    assert_close(_flat(grad), _fd(fn, obj, rest), what=f"{case}, {policy}")


@pytest.mark.parametrize("case", CASES)
def test_tangent(case):
    fn, obj, rest = CASES[case]
    theta = _flat(obj)
    direction = np.linspace(0.5, 1.5, theta.size)
    value, tangent = srcgrad.jvp(fn, (obj, *rest), (_unflat(obj, direction),
                                                    *[None] * len(rest)))
    assert value == fn(obj, *rest)
    assert_close(tangent, _fd(fn, obj, rest) @ direction, what=case)


@pytest.mark.parametrize("case", ["namedtuple .T arrays", "namedtuple .mean .std (t1 2)",
                                  "dataclass .var (t1 2)", "field read in a helper",
                                  "arrays' .T .mT .real .shape in a helper"])
def test_hvp(case):
    fn, obj, rest = CASES[case]
    theta = _flat(obj)
    direction = np.linspace(0.5, 1.5, theta.size)
    hv = srcgrad.hvp(fn, wrt=0)(obj, *rest, _unflat(obj, direction))
    grad = srcgrad.grad(fn, wrt=0)
    eps = 1e-5
    fd = (_flat(grad(_unflat(obj, theta + eps * direction), *rest))
          - _flat(grad(_unflat(obj, theta - eps * direction), *rest))) / (2 * eps)
    assert_close(_flat(hv), fd, rtol=1e-4, atol=1e-6, what=case)


def test_method_with_fields_named_like_array_attributes():
    """grad(Model.loss)(m, x): self.T and self.mT are the model's numbers."""
    m, x = Model(0.5, -1.5), X3
    grad = srcgrad.grad(Model.loss, wrt=(0, 1))(m, x)
    assert_close([grad[0].T, grad[0].mT], [np.sum(x ** 2), np.sum(x)])
    assert_close(grad[1], 2 * 0.5 * x - 1.5)


def test_array_argument_keeps_the_array_rule():
    """An array passed where objects were passed before: the code for arrays,
    x.T the transpose (the code is specialised on the argument's type)."""
    def f(p, x):
        return np.sum(p.T @ x)
    g = srcgrad.grad(f)
    p = np.arange(6.0).reshape(3, 2)
    assert_close(g(Thermo(np.ones((2, 3)), 1.0), np.ones(3)).T, np.ones((2, 3)))
    assert_close(g(p, np.ones(3)), np.ones((3, 2)))
    assert "attribute_grad" not in srcgrad.grad(f).source


def _gamma_terms(p, x):  # a helper: p's type is only known as it runs
    return p.shape * np.log(p.rate) - gammaln(p.shape) + (p.shape - 1) * np.log(x)


def gamma_through_helper(p, x):
    return -np.sum(_gamma_terms(p, x) - p.rate * x)


Config = namedtuple("Config", ["size", "scale"])


def _scaled(cfg, h):  # cfg.size an int: an array's size or a field, no derivative either way
    return h[:cfg.size] * cfg.scale + np.zeros(h.shape)[:cfg.size]


def config_through_helper(c, h):
    return np.sum(_scaled(c, h) ** 2)


def test_non_differentiable_name_of_an_object_in_a_helper_is_refused():
    """p.shape of Gamma(shape, rate) read in a helper: srcgrad takes '.shape'
    for the array's (no derivative) and checks as the code runs; a field of
    floats there is refused, located, in both modes -- never a silent zero."""
    p = Gamma(2.0, 1.5)
    for run in (lambda: srcgrad.grad(gamma_through_helper)(p, X3),
                lambda: srcgrad.jvp(gamma_through_helper, (p, X3), (Gamma(1.0, 0.0), None))):
        with pytest.raises(srcgrad.UnsupportedSyntaxError) as info:
            run()
        err = info.value
        assert err.filename.endswith("test_user_objects.py") and err.lineno
        assert "p.shape" in err.message and "pass it on" in err.message


@pytest.mark.parametrize("policy", POLICIES, ids=str)
def test_int_field_named_like_an_array_attribute_in_a_helper(policy):
    """cfg.size an int read in a helper passes the check; h.shape of the array too."""
    c, h = Config(2, 1.5), np.array([0.3, -0.7, 1.1])
    _, grad = srcgrad.value_and_grad(config_through_helper, wrt=(0, 1), policy=policy,
                                     check=True)(c, h)
    assert_close(grad[1], [2 * 1.5 ** 2 * 0.3, 2 * 1.5 ** 2 * -0.7, 0.0])
    assert_close(grad[0].scale, 2 * 1.5 * (0.3 ** 2 + 0.7 ** 2))


def test_source_and_export_are_the_code_specialised_on_the_object(tmp_path):
    """.source and srcgrad.export write the code that ran for the named tuple
    (its .T a field), not the code for arrays (export gave dP 2.31 for 3.0)."""
    import importlib.util
    g = srcgrad.grad(free_energy)
    th, V = Thermo(300.0, 2.0), np.array([1.0, 2.0])
    expected = g(th, V)
    assert "attribute_grad(d_t3, th, 'T')" in g.source
    path = tmp_path / "exported.py"
    srcgrad.export(str(path), g)
    spec = importlib.util.spec_from_file_location("exported_user_objects", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.grad_free_energy(th, V) == expected == Thermo(-np.log(2.0), 3.0)


def _built_inside(m, x):
    g = Gauss3(mean=m * 2, std=np.exp(m), shape=m ** 2)
    return np.sum((x - g.mean) / g.std) * g.shape


Gauss3 = namedtuple("Gauss3", ["mean", "std", "shape"])


@pytest.mark.parametrize("policy", POLICIES, ids=str)
def test_named_tuple_built_inside(policy):
    """A named tuple built in the function: its .mean, .std, .shape are fields."""
    m, x = 0.7, X3
    _, grad = srcgrad.value_and_grad(_built_inside, policy=policy, check=True)(m, x)
    fd = (_built_inside(m + 1e-6, x) - _built_inside(m - 1e-6, x)) / 2e-6
    assert_close(grad, fd)
    assert_close(srcgrad.jvp(_built_inside, (m, x), (1.0, None))[1], fd)


def _from_a_dict(d, x):
    g = d['g']
    return np.sum((x - g.mean) / g.std) * g.shape


def test_field_without_derivative_of_an_object_in_a_dict_is_refused():
    """d['g'].shape, a named tuple in a dict passed in: refused, located, not a
    silent zero (its .mean and .std are read as fields, as the code runs)."""
    d = {'g': Gauss3(0.5, 2.0, 1.5)}
    with pytest.raises(srcgrad.UnsupportedSyntaxError) as info:
        srcgrad.grad(_from_a_dict)(d, X3)
    assert info.value.lineno and "g.shape" in info.value.message
