"""The checks every model of the zoo goes through (tests/e2e/models/test_zoo.py).

The models are written against a module-level ``np`` (and SciPy names), as
NumPy and autograd users write them.  :func:`check_model` runs one through
``srcgrad.value_and_grad`` and checks that

- the value is the model's own, bit for bit, and the caller's arrays are
  left as they were;
- the gradient matches central differences, element by element of the
  parameters, however they are structured (lists of ``(W, b)`` tuples, dicts,
  nested lists);
- the gradient matches autograd running the same code: :func:`autograd_copy`
  loads the model's file again as a new module and rebinds its ``np`` (and
  SciPy names) to autograd's modules, so nothing in the model is adapted.
"""

from __future__ import annotations

import copy
import importlib.util
import sys

import numpy as np
from numeric import assert_bit_identical, assert_close

import srcgrad

# ------------------------------------------------------------- parameter trees

def _is_leaf(value) -> bool:
    """An array or a number (not a bool): what a parameter tree holds besides
    containers.  None (a layer without parameters) and objects (layers) are not."""
    return isinstance(value, (np.ndarray, float, int, np.number)) and not isinstance(value, bool)


def leaves(tree) -> list:
    """The array and number leaves of a parameter tree, in a fixed order."""
    if isinstance(tree, dict):
        return [leaf for key in tree for leaf in leaves(tree[key])]
    if isinstance(tree, (list, tuple)):
        return [leaf for item in tree for leaf in leaves(item)]
    return [tree] if _is_leaf(tree) else []


def flat(tree) -> np.ndarray:
    return np.concatenate([np.ravel(np.asarray(leaf, dtype=np.float64)) for leaf in leaves(tree)])


def with_flat(tree, vector):
    """A copy of ``tree`` whose leaves are read from ``vector`` in :func:`leaves` order."""
    position = [0]

    def rebuild(node):
        if isinstance(node, dict):
            return {key: rebuild(value) for key, value in node.items()}
        if isinstance(node, (list, tuple)):
            return type(node)(rebuild(item) for item in node)
        if not _is_leaf(node):
            return node
        size = np.size(node)
        chunk = vector[position[0]:position[0] + size]
        position[0] += size
        if isinstance(node, np.ndarray):
            return chunk.reshape(node.shape).astype(node.dtype)
        return float(chunk[0])

    return rebuild(tree)


def differences(fn, args, index, eps=1e-6) -> np.ndarray:
    """Central differences of scalar ``fn`` along each leaf element of ``args[index]``."""
    base = flat(args[index])
    out = np.zeros(base.size)
    for k in range(base.size):
        step = np.zeros(base.size)
        step[k] = eps
        plus = list(copy.deepcopy(args))
        minus = list(copy.deepcopy(args))
        plus[index] = with_flat(args[index], base + step)
        minus[index] = with_flat(args[index], base - step)
        out[k] = (float(fn(*plus)) - float(fn(*minus))) / (2 * eps)
    return out


# ------------------------------------------------------------- autograd

def autograd_copy(module):
    """``module`` loaded again from its file, with ``np`` and SciPy's names bound to
    autograd's: the same model code, differentiated by autograd."""
    import autograd.numpy as anp
    import autograd.scipy.linalg as alinalg
    import autograd.scipy.special as aspecial

    name = f"autograd_{module.__name__}"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, module.__file__)
    twin = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(twin)
    for key, value in list(vars(twin).items()):
        if value is np:
            setattr(twin, key, anp)
        elif getattr(value, "__name__", None) == "scipy.special":
            setattr(twin, key, aspecial)
        elif getattr(value, "__module__", "") and str(value.__module__).startswith(
                "scipy.special") and hasattr(aspecial, getattr(value, "__name__", "")):
            setattr(twin, key, getattr(aspecial, value.__name__))
        elif getattr(value, "__module__", "") and str(value.__module__).startswith(
                "scipy.linalg") and hasattr(alinalg, getattr(value, "__name__", "")):
            setattr(twin, key, getattr(alinalg, value.__name__))
    sys.modules[name] = twin
    return twin


# ------------------------------------------------------------- the check

def check_model(fn, args, wrt, *, twin=None, rtol=1e-5, atol=1e-7, eps=1e-6):
    """Value bit-identical, gradients against differences and (``twin``, the same
    function in :func:`autograd_copy`) autograd.  Returns srcgrad's gradients."""
    __tracebackhide__ = True
    wrt = tuple(wrt)
    reference = copy.deepcopy(args)
    value, grads = srcgrad.value_and_grad(fn, wrt=wrt)(*args)
    for before, now in zip(leaves(reference), leaves(args)):
        assert_bit_identical(now, before, "an argument after the call")
    assert_bit_identical(value, fn(*copy.deepcopy(reference)), fn.__name__)
    for i, g in zip(wrt, grads):
        assert_close(flat(g), differences(fn, reference, i, eps), rtol=rtol, atol=atol,
                     what=f"{fn.__name__}: gradient of argument {i} vs differences")
    if twin is not None:
        import autograd

        expected = autograd.grad(twin, wrt)(*copy.deepcopy(reference)) if len(wrt) > 1 \
            else (autograd.grad(twin, wrt[0])(*copy.deepcopy(reference)),)
        for i, g, e in zip(wrt, grads, expected):
            assert_close(flat(g), flat(e), rtol=1e-9, atol=1e-10,
                         what=f"{fn.__name__}: gradient of argument {i} vs autograd")
    return grads


def random_like(tree, seed=0):
    """A direction shaped like the parameter tree ``tree``."""
    base = flat(tree)
    return with_flat(tree, np.random.RandomState(seed).randn(base.size))


def check_forward(fn, args, index, *, rtol=1e-5, atol=1e-7, eps=1e-6):
    """``jvp`` along a random direction for argument ``index``: the value bit for bit
    and the tangent against a central difference along the direction."""
    __tracebackhide__ = True
    direction = random_like(args[index])
    tangents = [None] * len(args)
    tangents[index] = direction
    value, tangent = srcgrad.jvp(fn, copy.deepcopy(args), tangents)
    assert_bit_identical(value, fn(*copy.deepcopy(args)), fn.__name__)
    base, step = flat(args[index]), flat(direction)
    plus, minus = list(copy.deepcopy(args)), list(copy.deepcopy(args))
    plus[index] = with_flat(args[index], base + eps * step)
    minus[index] = with_flat(args[index], base - eps * step)
    expected = (float(fn(*plus)) - float(fn(*minus))) / (2 * eps)
    assert_close(tangent, expected, rtol=rtol, atol=atol,
                 what=f"{fn.__name__}: tangent of argument {index} vs differences")


def check_hvp(fn, args, index, *, twin=None, rtol=1e-5, atol=1e-7, eps=1e-6):
    """``hvp`` along a random direction against central differences of srcgrad's
    gradient (and autograd's Hessian-vector product of the same code)."""
    __tracebackhide__ = True
    direction = random_like(args[index], seed=1)
    got = srcgrad.hvp(fn, index)(*copy.deepcopy(args), direction)
    gradient = srcgrad.grad(fn, index)
    base, step = flat(args[index]), flat(direction)
    plus, minus = list(copy.deepcopy(args)), list(copy.deepcopy(args))
    plus[index] = with_flat(args[index], base + eps * step)
    minus[index] = with_flat(args[index], base - eps * step)
    expected = (flat(gradient(*plus)) - flat(gradient(*minus))) / (2 * eps)
    assert_close(flat(got), expected, rtol=rtol, atol=atol,
                 what=f"{fn.__name__}: hvp of argument {index} vs differences of the gradient")
    if twin is not None:
        import autograd
        import autograd.numpy as anp
        from autograd.misc.flatten import flatten as autograd_flatten

        start, unflatten = autograd_flatten(args[index])  # autograd's order of the leaves
        along, _ = autograd_flatten(direction)

        def at(vector):
            moved = list(copy.deepcopy(args))
            moved[index] = unflatten(vector)
            return twin(*moved)

        def directional(vector):
            return anp.dot(autograd.grad(at)(vector), along)

        expected = unflatten(autograd.grad(directional)(start))
        assert_close(flat(got), flat(expected), rtol=1e-8, atol=1e-9,
                     what=f"{fn.__name__}: hvp of argument {index} vs autograd")
