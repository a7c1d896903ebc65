"""Callable objects and function-passing that srcgrad refused (outside tester, F3).

- F3-1: a global callable object, ``S = Scale(2.0)`` and ``S(x)`` in the
  function, was a MissingRuleError naming the object's repr.  It is now
  followed as ``S.__call__(x)``, its fields read as they are (constants), as
  ``MODEL.run(x)`` is.
- F3-3: ``grad(loss)(model, x, y)`` with ``model`` a callable object whose
  ``__call__`` runs layers that are callable objects too was refused, "it is a
  function".  A callable object passed where the gradient is asked for and
  holding numbers is now an object like any other: its fields are what is
  differentiated (the gradient comes back as a ``Model`` of ``Dense`` layers,
  as for layers with a ``forward`` method) and ``model(x)`` is its class's
  ``__call__``.  Passed elsewhere it is, as before, a function the code is
  specialised on.
- F3-13: a BatchNorm-like layer with a ``training`` flag and an eval branch
  reading the running statistics: the same refusal, now differentiated (the
  running statistics get their gradient in eval mode, none in training).
  Updating the running statistics (``self.running_mean = ...``) inside the
  differentiated function stays refused, located at the assignment, saying
  what to write instead.
- F3-5: ``functools.wraps`` decorators with ``(*args, **kwargs)`` around the
  differentiated function or a helper (already followed; kept here).
- F3-8: a nested helper with ``*rest``, keyword-only parameters (with and
  without defaults) or ``**kw`` was refused; it is inlined as other nested
  helpers are, ``rest`` the tuple of the items the call passes, ``kw`` the
  dict of its other keywords.  A decorated nested def stays refused, saying
  to define it at module level.
- ``dataclasses.replace(params, W=params.W * 2)`` had no rule; for a dataclass
  that only stores its fields, of a class known when compiling, it is the
  object built from the fields given and the others (``Params(W, params.b)``);
  any other is refused, located, saying to build the object from its fields.

Each program: the value bit for bit and the gradient against central
differences under every policy, the tangent against differences; autograd
agrees where it runs the program.
"""

from __future__ import annotations

import copy
import dataclasses
import functools

import numpy as np
import pytest
from numeric import POLICIES, assert_bit_identical, assert_close
from numeric import check_every_policy as check

import srcgrad


class Scale:
    def __init__(self, k):
        self.k = k

    def __call__(self, x):
        return self.k * x


S = Scale(2.0)
SHIFTS = [Scale(0.5), Scale(-1.5)]


def global_object(x):  # F3-1
    return np.sum(S(x) ** 2)


def global_object_in_a_loop(x):
    h = x
    for _ in range(3):
        h = np.sin(S(h)) + x
    return np.sum(h)


def global_object_in_a_branch(x):
    if np.sum(x) > 0:
        y = S(x) * x
    else:
        y = x - S(x)
    return np.sum(y ** 2)


def _helper(v):
    return S(v) * np.cos(v)


def global_object_in_a_helper(x):
    return np.sum(_helper(x) + S(_helper(x)))


def global_objects_in_a_list(x):
    h = x
    for s in SHIFTS:
        h = np.tanh(s(h))
    return np.sum(h)


X = np.array([0.3, -0.8, 1.1])
GLOBAL = [global_object, global_object_in_a_loop, global_object_in_a_branch,
          global_object_in_a_helper, global_objects_in_a_list]


@pytest.mark.parametrize("fn", GLOBAL, ids=lambda f: f.__name__)
def test_a_global_callable_object_is_followed(fn):
    check(fn, (X.copy(),))


def test_a_global_callable_object_agrees_with_autograd():
    autograd = pytest.importorskip("autograd")
    for fn in GLOBAL:
        assert_close(srcgrad.grad(fn)(X), autograd.grad(fn)(X), what=fn.__name__)


def test_a_global_callable_object_is_read_as_it_is():
    """S's field is read by the code when it runs, as MODEL.run(x)'s are."""
    grad = srcgrad.grad(global_object)
    before = grad(X)
    S.k = 3.0
    try:
        assert_close(grad(X), before * 9.0 / 4.0)
    finally:
        S.k = 2.0


def test_a_global_callable_object_rebound_makes_new_code():
    global S
    grad, kept = srcgrad.grad(global_object), S
    before = grad(X)
    S = Scale(3.0)
    try:
        assert_close(grad(X), before * 9.0 / 4.0)
    finally:
        S = kept


# -- F3-3: the gradient with respect to a model of callable layers ----------------------


class Dense:
    def __init__(self, W, b):
        self.W = W
        self.b = b

    def __call__(self, x):
        return np.tanh(x @ self.W + self.b)


class Model:
    def __init__(self, layers):
        self.layers = layers

    def __call__(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


class DenseF:  # the same layers, called through a method
    def __init__(self, W, b):
        self.W = W
        self.b = b

    def forward(self, x):
        return np.tanh(x @ self.W + self.b)


class ModelF:
    def __init__(self, layers):
        self.layers = layers

    def forward(self, x):
        for layer in self.layers:
            x = layer.forward(x)
        return x


class BatchNorm:  # F3-13
    def __init__(self, gamma, beta, running_mean, running_var, training):
        self.gamma = gamma
        self.beta = beta
        self.running_mean = running_mean
        self.running_var = running_var
        self.training = training

    def __call__(self, x):
        if self.training:
            mu = x.mean(axis=0)
            var = x.var(axis=0)
        else:
            mu = self.running_mean
            var = self.running_var
        return self.gamma * (x - mu) / np.sqrt(var + 1e-5) + self.beta


def loss(model, x, y):  # F3-3
    return np.mean((model(x) - y) ** 2)


def loss_f(model, x, y):
    return np.mean((model.forward(x) - y) ** 2)


def loss_in_a_loop_and_a_branch(model, x, y):
    total = 0.0
    for i in range(2):
        if i % 2 == 0:
            total = total + np.mean((model(x) - y) ** 2)
        else:
            total = total + np.sum(model(x * 0.5) * y)
    return total


def _predict(model, x):
    return model(x)


def loss_through_a_helper(model, x, y):
    return np.mean((_predict(model, x) - y) ** 2)


def _predict_f(model, x):
    return model.forward(x)


def loss_f_through_a_helper(model, x, y):
    """The model passed on to a helper calling its method: the helper was
    compiled for the classes of the model's layers alone, and refused the
    model itself as the code ran ("of another class")."""
    return np.mean((_predict_f(model, x) - y) ** 2)


def loss_model_last(x, y, model):
    return np.mean((model(x) - y) ** 2)


def bn_loss(bn, x):  # F3-13
    return np.sum(bn(x) ** 2)


RNG = np.random.default_rng(7)
XS = RNG.normal(size=(4, 3))
YS = RNG.normal(size=(4, 2))


def _model():
    rng = np.random.default_rng(11)
    return Model([Dense(rng.normal(size=(3, 5)), rng.normal(size=5)),
                  Dense(rng.normal(size=(5, 2)), rng.normal(size=2))])


def _bn(training):
    rng = np.random.default_rng(5)
    return BatchNorm(rng.uniform(0.5, 1.5, 3), rng.normal(size=3), rng.normal(size=3),
                     rng.uniform(0.5, 1.5, 3), training)


def _with_bn(training):
    rng = np.random.default_rng(13)
    return Model([Dense(rng.normal(size=(3, 3)), rng.normal(size=3)), _bn(training),
                  Dense(rng.normal(size=(3, 2)), rng.normal(size=2))])


def _leaves(obj) -> list:
    """The float arrays ``obj`` holds, in a fixed order (attributes, items)."""
    if isinstance(obj, np.ndarray):
        return [obj] if obj.dtype.kind == "f" else []
    if isinstance(obj, (list, tuple)):
        return [a for v in obj for a in _leaves(v)]
    if hasattr(obj, "__dict__"):
        return [a for v in vars(obj).values() for a in _leaves(v)]
    return []


def _fd(fn, args, wrt, eps=1e-6) -> list:
    """Central differences of ``fn(*args)`` for each element of the arrays
    ``args[wrt]`` holds (moved in place and put back)."""
    out = []
    for a in _leaves(args[wrt]):
        g = np.zeros_like(a)
        for i in np.ndindex(a.shape):
            old = a[i]
            a[i] = old + eps
            plus = fn(*args)
            a[i] = old - eps
            minus = fn(*args)
            a[i] = old
            g[i] = (plus - minus) / (2 * eps)
        out.append(g)
    return out


def check_object(fn, args, wrt=0):
    """The value bit for bit and the gradient with respect to the object
    ``args[wrt]`` against central differences under every policy (the gradient
    an object of the same class, its fields the gradients), and the tangent
    along an object of directions against differences."""
    obj = args[wrt]
    want, fd = fn(*args), _fd(fn, args, wrt)
    for policy in POLICIES:
        value, grad = srcgrad.value_and_grad(fn, wrt=wrt, policy=policy)(*args)
        assert_bit_identical(value, want, f"{fn.__name__}, {policy}")
        assert type(grad) is type(obj)
        got = _leaves(grad)
        assert len(got) == len(fd), (fn.__name__, policy)
        for g, d in zip(got, fd):
            assert_close(g, d, rtol=1e-6, atol=1e-8, what=f"{fn.__name__}, {policy}")
    direction = copy.deepcopy(obj)
    for a in _leaves(direction):
        a[...] = np.linspace(-1.0, 1.5, a.size).reshape(a.shape)
    tangents = [None] * len(args)
    tangents[wrt] = direction
    value, tangent = srcgrad.jvp(fn, tuple(args), tuple(tangents))
    assert_bit_identical(value, want, f"{fn.__name__}, jvp")
    assert_close(tangent, sum(np.sum(d * g) for d, g in zip(_leaves(direction), fd)),
                 rtol=1e-6, atol=1e-8, what=f"{fn.__name__}, jvp")
    return srcgrad.grad(fn, wrt=wrt)(*args)


def _model_f():
    return ModelF([DenseF(layer.W, layer.b) for layer in _model().layers])


MODELS = [(loss, _model), (loss_in_a_loop_and_a_branch, _model),
          (loss_through_a_helper, _model), (loss_f_through_a_helper, _model_f),
          (loss, lambda: _with_bn(True)),
          (loss, lambda: _with_bn(False))]


@pytest.mark.parametrize("fn,make", MODELS,
                         ids=[f"{f.__name__}-{i}" for i, (f, _) in enumerate(MODELS)])
def test_the_gradient_with_respect_to_a_callable_model(fn, make):
    grad = check_object(fn, (make(), XS, YS))
    assert all(type(g) is type(m) for g, m in zip(grad.layers, make().layers))


def test_the_model_passed_last():
    check_object(loss_model_last, (XS, YS, _model()), wrt=2)


def scaled_last(x, s):  # a callable object holding no list, passed other than first
    h = x
    for _ in range(2):
        h = np.sin(s(h)) + x
    return np.sum(h ** 2)


def test_a_callable_object_passed_last():
    check_object(scaled_last, (X, Scale(np.array([0.5, -1.0, 2.0]))), wrt=1)
    d_x, d_s = srcgrad.grad(scaled_last, wrt=(0, 1))(X, Scale(1.5))
    assert type(d_s) is Scale and isinstance(d_s.k, float)
    assert_close(d_s.k, (scaled_last(X, Scale(1.5 + 1e-6)) - scaled_last(X, Scale(1.5 - 1e-6)))
                 / 2e-6, rtol=1e-6)


NET = Model([Dense(np.linspace(-1.0, 1.0, 15).reshape(3, 5), np.linspace(0.2, -0.2, 5)),
             Dense(np.linspace(0.5, -0.5, 10).reshape(5, 2), np.zeros(2))])


def global_model(x):  # a global callable model: its layers' classes known as it compiles
    return np.sum(NET(x) ** 2)


def _closing_over(model):
    def closure(x):
        return np.sum(np.sin(model(x)))
    return closure


closure_over_a_model = _closing_over(NET)


@pytest.mark.parametrize("fn", [global_model, closure_over_a_model], ids=lambda f: f.__name__)
def test_a_model_held_outside_is_followed(fn):
    check(fn, (XS.copy(),))


def test_callable_layers_are_differentiated_as_forward_layers_are():
    model = _model()
    same = ModelF([DenseF(layer.W, layer.b) for layer in model.layers])
    got, want = srcgrad.grad(loss)(model, XS, YS), srcgrad.grad(loss_f)(same, XS, YS)
    for g, w in zip(got.layers, want.layers):
        assert type(g) is Dense and type(w) is DenseF
        assert_bit_identical(g.W, w.W, "W")
        assert_bit_identical(g.b, w.b, "b")


def test_both_the_model_and_the_inputs():
    model = _model()
    d_model, d_x = srcgrad.grad(loss, wrt=(0, 1))(model, XS, YS)
    assert_close(d_x, _fd(loss, [model, XS, YS], 1)[0], rtol=1e-6, atol=1e-8)
    assert_close(d_model.layers[0].W, srcgrad.grad(loss)(model, XS, YS).layers[0].W)


def test_vjp_and_hvp_with_respect_to_a_callable_model():
    model = _model()
    value, pullback = srcgrad.vjp(loss, model, XS, YS, wrt=0)
    assert_bit_identical(value, loss(model, XS, YS), "vjp")
    (got,) = pullback(1.0)
    for g, d in zip(_leaves(got), _fd(loss, [model, XS, YS], 0)):
        assert_close(g, d, rtol=1e-6, atol=1e-8, what="vjp")
    # with no wrt, a callable object is a function passed, as before: no cotangent
    assert srcgrad.vjp(loss, model, XS, YS)[1](1.0)[0] is None
    direction = copy.deepcopy(model)
    for a in _leaves(direction):
        a[...] = np.linspace(-1.0, 1.0, a.size).reshape(a.shape)
    hv = srcgrad.hvp(loss, wrt=0)(model, XS, YS, direction)
    grad, eps = srcgrad.grad(loss), 1e-5

    def moved(t):
        m = copy.deepcopy(model)
        for a, d in zip(_leaves(m), _leaves(direction)):
            a += t * d
        return _leaves(grad(m, XS, YS))

    for h, plus, minus in zip(_leaves(hv), moved(eps), moved(-eps)):
        assert_close(h, (plus - minus) / (2 * eps), rtol=1e-5, atol=1e-7, what="hvp")


def test_the_model_as_a_function_elsewhere_is_specialised_on_as_before():
    """Not differentiated, the model is a function passed: the gradient with
    respect to x is the same either way."""
    model = _model()
    assert_close(srcgrad.grad(loss, wrt=1)(model, XS, YS),
                 _fd(loss, [model, XS, YS], 1)[0], rtol=1e-6, atol=1e-8)


def test_autograd_agrees_on_the_layers():
    autograd = pytest.importorskip("autograd")
    model = _model()

    def by_arrays(params, x, y):
        return loss(Model([Dense(W, b) for W, b in params]), x, y)

    want = autograd.grad(by_arrays)([(layer.W, layer.b) for layer in model.layers], XS, YS)
    got = srcgrad.grad(loss)(model, XS, YS)
    for g, (dW, db) in zip(got.layers, want):
        assert_close(g.W, dW, what="W")
        assert_close(g.b, db, what="b")


@pytest.mark.parametrize("training", [True, False])
def test_batch_norm_with_a_training_flag(training):
    grad = check_object(bn_loss, (_bn(training), XS))
    assert grad.training is training
    if training:  # the running statistics are not read: no gradient reaches them
        assert not np.any(grad.running_mean) and not np.any(grad.running_var)
    else:
        assert np.any(grad.running_mean) and np.any(grad.running_var)


# -- F3-5: functools.wraps decorators around the function or a helper -------------------


def logged(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs)
    return wrapper


@logged
def decorated(x, y):
    return np.sum(np.sin(x) * y)


@logged
def _decorated_helper(x, scale=1.0):
    return np.sin(x) ** 2 * scale


def calls_a_decorated_helper(x):
    return np.sum(_decorated_helper(x) * x + _decorated_helper(x, scale=0.5))


def calls_a_decorated_helper_in_a_loop(x):
    h = x
    for _ in range(3):
        if np.sum(h) > 0:
            h = _decorated_helper(h) + x
        else:
            h = _decorated_helper(h, scale=2.0) - x
    return np.sum(h)


@pytest.mark.parametrize("fn", [calls_a_decorated_helper, calls_a_decorated_helper_in_a_loop],
                         ids=lambda f: f.__name__)
def test_a_decorated_helper(fn):
    check(fn, (X.copy(),))


def test_the_decorated_function_itself():
    check(decorated, (X.copy(), X * 2.0))
    check(decorated, (X.copy(), X * 2.0), wrt=1)


# -- F3-8: nested helpers with *args, keyword-only parameters and **kwargs -------------------


def nested_star_and_keyword_only(x):  # F3-8, as the tester wrote it
    def h(a, *rest, scale=1.0, power):
        s = a * scale
        for r in rest:
            s = s + r ** power
        return s
    return np.sum(h(x, x, power=2))


def nested_all_kinds(x):
    def h(a, *rest, scale=1.0, power, **kw):
        s = a * scale
        for r in rest:
            s = s + r ** power
        for k in kw:
            s = s * kw[k]
        return s
    total = np.sum(h(x, x, np.sin(x), power=2, scale=0.5, w=x)) + np.sum(h(x, power=3))
    both = lambda *vs, c=2.0: (vs[0] + vs[-1]) * c  # noqa: E731
    return total + np.sum(both(x, x * x)) + np.sum(both(x, c=0.5))


def nested_in_a_loop_and_a_branch(x):
    k = 0.5

    def h(a, *rest, scale=k):
        s = a * scale
        for r in rest:
            s = s * np.cos(r)
        return s
    k = 3.0  # the default is the k of the def, as Python evaluates it there
    y = x
    for i in range(3):
        if i % 2 == 0:
            y = h(y, x, scale=1.5)
        else:
            y = h(y, y, x) + h(x)
    return np.sum(y) * k


@pytest.mark.parametrize("fn", [nested_star_and_keyword_only, nested_all_kinds,
                                nested_in_a_loop_and_a_branch], ids=lambda f: f.__name__)
def test_nested_helpers_with_star_and_keyword_parameters(fn):
    check(fn, (X.copy(),))


def test_nested_helpers_agree_with_autograd():
    autograd = pytest.importorskip("autograd")
    for fn in (nested_star_and_keyword_only, nested_in_a_loop_and_a_branch):
        assert_close(srcgrad.grad(fn)(X), autograd.grad(fn)(X), what=fn.__name__)


def _missing_keyword(x):
    def h(a, *, power):
        return a ** power
    return np.sum(h(x))


def _decorated_nested(x):
    @logged
    def h(a):
        return a * 2.0
    return np.sum(h(x))


@pytest.mark.parametrize("fn,words", [
    (_missing_keyword, ("missing argument 'power'",)),
    (_decorated_nested, ("decorated nested function ('h')", "module level")),
], ids=["missing keyword", "decorated"])
def test_nested_helpers_refused_are_located(fn, words):
    with pytest.raises(srcgrad.SrcGradError) as info:
        srcgrad.grad(fn)(X)
    err = info.value
    assert err.filename.endswith("test_callables_followed.py") and err.lineno, err
    for word in words:
        assert word in err.message, err.message


# -- dataclasses.replace ------------------------------------------------------------------


@dataclasses.dataclass
class Params:
    W: np.ndarray
    b: np.ndarray


def replaced(params, x):
    p2 = dataclasses.replace(params, W=params.W * 2)
    return np.sum(np.tanh(x @ p2.W + p2.b))


def replaced_in_a_loop_and_a_branch(params, x):
    q = dataclasses.replace(params, W=params.W * 0.5)
    for i in range(3):
        if i % 2 == 0:
            q = dataclasses.replace(q, b=q.b + np.sum(q.W))
        else:
            q = dataclasses.replace(q, W=np.sin(q.W))
    return np.sum(np.tanh(x @ q.W + q.b))


def replaced_local(x):
    p = Params(x[:2] * 1.0, x[1:])
    q = dataclasses.replace(p, b=p.b * p.W)
    return np.sum(q.W * q.b)


def _rescaled(p, s):
    return dataclasses.replace(p, W=p.W * s)


def replaced_in_a_helper(params, x):
    q = _rescaled(params, 0.5)
    return np.sum(np.tanh(x @ q.W + q.b)) + np.sum(_rescaled(params, 2.0).W * q.W)


def _params():
    rng = np.random.default_rng(17)
    return Params(rng.normal(size=(3, 2)) * 0.5, rng.normal(size=2) * 0.5)


@pytest.mark.parametrize("fn", [replaced, replaced_in_a_loop_and_a_branch,
                                replaced_in_a_helper], ids=lambda f: f.__name__)
def test_dataclasses_replace(fn):
    check_object(fn, (_params(), XS))
    check(fn, (_params(), XS.copy()), wrt=1)


def test_dataclasses_replace_of_a_local():
    check(replaced_local, (X.copy(),))


def test_dataclasses_replace_agrees_with_autograd():
    autograd = pytest.importorskip("autograd")
    p = _params()
    want = autograd.grad(lambda W, b, x: replaced(Params(W, b), x))(p.W, p.b, XS)
    assert_close(srcgrad.grad(replaced)(p, XS).W, want)


def _replaced_of_a_built_value(params, x):
    q = [params][0]
    return np.sum(dataclasses.replace(q, W=x[:, :2]).W)


def test_dataclasses_replace_of_an_unknown_class_is_refused_saying_what_to_write():
    with pytest.raises(srcgrad.SrcGradError) as info:
        srcgrad.grad(_replaced_of_a_built_value)(_params(), XS)
    err = info.value
    assert err.filename.endswith("test_callables_followed.py") and err.lineno, err
    assert "Params(W=..., b=p.b)" in err.message or "P(W=..., b=p.b)" in err.message
