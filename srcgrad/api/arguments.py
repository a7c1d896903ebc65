"""What the transformations accept: functions, ``wrt`` positions, differentiable values.

Every transformation (first or second order, reverse or forward) reads its
function and its ``wrt`` and checks its arguments the same way, so these few
functions sit below all of them.

    >>> normalize_wrt(1), normalize_wrt((0, 2))
    (((1,), True), ((0, 2), False))
    >>> import numpy as np
    >>> differentiable_value(np.ones(3)), differentiable_value(np.arange(3))
    (True, False)
"""

from __future__ import annotations

import functools
import inspect
import sys
import types

import numpy as np

from ..errors import NonDifferentiableError, SrcGradError
from ..frontend.function_tables import ElementFunctions, held_functions
from ..frontend.linker import (
    Callee,
    ElementClasses,
    held_element_classes,
    shown_callable,
)
from ..runtime.structures import has_differentiable_leaves, is_callable_object, object_fields
from .partials import as_function
from .protocols import check_protocols
from .subclasses import check_subclass

# The modules whose classes are the functions srcgrad makes (Transformed, Derivative).
_MADE_BY_SRCGRAD = {"srcgrad.api.transforms", "srcgrad.api.second_order", "srcgrad.api.higher"}


def function_of(fn, transform: str):
    """``fn`` as the transformation named ``transform`` reads it: a function or
    a bound method as it is; a callable object (an instance of a class that
    defines ``__call__`` in Python) as its bound ``__call__``, so that
    ``grad(model)`` is ``grad(model.__call__)``.  Anything else raises
    :class:`SrcGradError` saying what to differentiate instead.

        >>> class Scale:
        ...     def __call__(self, x):
        ...         return 2.0 * x
        >>> function_of(Scale(), "grad").__name__
        '__call__'
    """
    if inspect.isfunction(fn) or (inspect.ismethod(fn) and inspect.isfunction(fn.__func__)):
        return fn
    kind = type(fn)
    what = (f"srcgrad.{transform} differentiates functions written with 'def', bound "
            f"methods and callable objects (whose class defines __call__); got {fn!r}")
    if kind.__module__ in _MADE_BY_SRCGRAD:
        raise SrcGradError(f"{what}, made by srcgrad: the derivatives of generated functions "
                           f"it takes are grad(grad(f)) for a float argument, and hvp, "
                           f"hessian and jacobian(grad(f))")
    if isinstance(fn, functools.partial) and (inspect.isfunction(fn.func) or (
            inspect.ismethod(fn.func) and inspect.isfunction(fn.func.__func__))):
        try:  # jvp, vjp, hvp, ...: the def the partial stands for (api/partials.py),
            # of a bound method too (it calls the method, held, as MODEL.run(x))
            return as_function(fn)
        except TypeError:
            pass
    if isinstance(fn, functools.partial):
        name = getattr(fn.func, "__name__", "the function")
        raise SrcGradError(f"{what}: differentiate {name} itself, srcgrad.{transform}({name}, "
                           f"wrt=...), and pass the fixed arguments when you call the result "
                           f"(or call the partial inside a def and differentiate that)")
    if isinstance(fn, type):
        raise SrcGradError(f"{what}, a class: differentiate an instance, "
                           f"srcgrad.{transform}({fn.__name__}(...)), or a method, "
                           f"srcgrad.{transform}({fn.__name__}.method)")
    if inspect.isfunction(inspect.getattr_static(kind, "__call__", None)):
        return fn.__call__
    raise SrcGradError(f"{what}, which has no Python source: differentiate a def that "
                       f"calls it")


def normalize_wrt(wrt) -> tuple[tuple[int, ...], bool]:
    """``(positions, single)``: the argument positions ``wrt`` names, and whether
    it named one position (an int) rather than a tuple of them."""
    if isinstance(wrt, (int, np.integer)) and not isinstance(wrt, bool):
        return (int(wrt),), True
    if isinstance(wrt, (tuple, list)) and wrt and all(
            isinstance(w, (int, np.integer)) and not isinstance(w, bool) for w in wrt):
        return tuple(int(w) for w in wrt), False
    raise SrcGradError(f"wrt must be an argument position or a non-empty tuple of them, "
                       f"got {wrt!r}")


def differentiable_value(value) -> bool:
    """Whether srcgrad can differentiate with respect to ``value``: a float, a float
    array, or a list, tuple, dict or object holding some.  A callable object is
    a function passed unless a gradient is asked for it (:func:`data_object`),
    so not one of the arguments ``vjp`` or ``explain`` take by default."""
    if type(value) is float or (type(value) is np.ndarray and value.dtype.kind in "fc"):
        return True  # the common cases, first: this runs on every call
    return has_differentiable_leaves(value) and not is_callable_object(value)


def check_args(fn, options, args) -> None:
    """Raise :class:`NonDifferentiableError` for the first ``wrt`` argument of a
    call of ``fn`` that holds nothing to differentiate, and for any argument
    that is, or holds, an ``np.matrix`` or a masked array (:mod:`.subclasses`), or a
    container whose class reads its items its own way (:mod:`.protocols`)."""
    for index, value in enumerate(args):
        if type(value) is not np.ndarray and not isinstance(value, (float, int, np.generic)):
            check_subclass(fn, index, value)  # np.matrix, __pow__ of its own; [M, x], self.m
    check_protocols(fn, args)  # a list subclass with its own __iter__ (protocols.py)
    for index in options.wrt:
        if index < len(args) and not differentiable_value(args[index]) \
                and not data_object(args[index]):
            _reject(fn, index, args[index])


def _reject(fn, index, value):
    params = fn.__code__.co_varnames[:fn.__code__.co_argcount]
    kind = type(value).__name__
    if isinstance(value, np.ndarray):
        kind = f"array of dtype {value.dtype}"
    raise NonDifferentiableError(
        f"cannot differentiate {fn.__name__} with respect to argument "
        f"'{params[index]}' (position {index}): it is {kind}, not a float or a "
        f"float array")


def is_user_object(value, differentiated=False) -> bool:
    """An instance of a user class (not an array, number, container or module;
    a Dask or CuPy array, which takes part in NumPy's dispatch, is an array).
    A callable object (its class defines ``__call__``: a layer, a model) is one
    where it is ``differentiated`` (:func:`data_object`); elsewhere the code is
    specialised on it as on a function passed."""
    return object_fields(value) is not None and not isinstance(
        value, (np.ndarray, np.generic, list, tuple, dict, type, types.ModuleType)) \
        and (not callable(value) or differentiated and data_object(value)) \
        and not hasattr(type(value), "__array_function__")


def data_object(value) -> bool:
    """Whether ``value``, passed where a gradient is asked for, is a callable
    user object holding numbers (``loss(model, x, y)``, ``model`` a ``Model``
    whose ``__call__`` runs its layers): differentiated as an object, its
    fields its numbers and ``model(x)`` its class's ``__call__``, as
    ``model.forward(x)`` is, rather than refused as a function.

        >>> class Scale:
        ...     def __init__(self, k):
        ...         self.k = k
        ...     def __call__(self, x):
        ...         return self.k * x
        >>> data_object(Scale(2.0)), data_object(Scale(2)), data_object(abs)
        (True, False, False)
        >>> data_object(Scale), data_object(Scale(2.0).__call__)
        (False, False)
    """
    return is_callable_object(value) and object_kind(type(value)) \
        and has_differentiable_leaves(value)


def differentiated_at(index, wrt, count) -> bool:
    """Whether argument ``index`` of ``count`` is among the positions ``wrt``
    (a negative one counting from the end)."""
    return index in wrt or index - count in wrt


#: Types whose attributes are NumPy's (or Python's) own, never a user's fields.
_NOT_OBJECTS = (np.ndarray, np.generic, int, float, complex, list, dict, set, frozenset, str,
                bytes, range, slice, type(None), type, types.ModuleType, types.FunctionType,
                types.BuiltinFunctionType, types.MethodType, functools.partial)


#: Libraries whose objects are no user's: their attributes are methods and
#: properties (``rng.normal``, a logger's ``debug``), not fields.
_LIBRARIES = frozenset(("numpy", "scipy", "dask", "cupy", "numba", "jax", "torch", "pandas",
                        "random", "logging", "builtins", "collections", "itertools",
                        "functools", "decimal", "fractions"))


def object_kind(kind) -> bool:
    """Whether an argument of type ``kind`` is a user object whose attributes are
    its fields: a named tuple, a dataclass, an instance of a user class (a
    field named ``T``, ``shape`` or ``mean`` is the field, not the ndarray
    attribute).  A Dask or CuPy array (NumPy's dispatch) is an array; a
    library's object (a NumPy random generator passed as ``rng``) is none."""
    if issubclass(kind, tuple):
        return hasattr(kind, "_fields")
    if str(getattr(kind, "__module__", "")).split(".")[0] in _LIBRARIES:
        return False
    return not issubclass(kind, _NOT_OBJECTS) and not hasattr(kind, "__array_function__")


def sequence_positions(args) -> tuple:
    """The positions of the arguments ``args`` that are plain lists or tuples:
    code is specialised on them (``Options.sequences``), so that ``ws * 2`` and
    ``ws + ws`` are repetition and concatenation, not arithmetic."""
    return tuple(i for i, a in enumerate(args) if type(a) in (list, tuple))


def object_positions(args) -> tuple:
    """The positions of the arguments ``args`` that are user objects
    (:func:`object_kind`): code is specialised on them (``Options.objects``)."""
    return tuple(i for i, a in enumerate(args) if object_kind(type(a)))


def sparse_positions(args) -> tuple:
    """``(position, None)`` for each argument that is a SciPy sparse matrix,
    ``(position, field)`` for each field of a user object passed that holds
    one (``self.L``): ``Options.sparse``, whose ``*`` with a value being
    differentiated analysis/sparse_operands refuses (review s37 R5-23).

        >>> class Sparse:  # stands for a scipy.sparse matrix
        ...     __module__ = "scipy.sparse._csr"
        >>> class Op:
        ...     def __init__(self):
        ...         self.L, self.w = Sparse(), 2.0
        >>> sparse_positions((Op(), 1.0, Sparse()))
        ((0, 'L'), (2, None))
    """
    found = []
    for i, value in enumerate(args):
        if _sparse(value):
            found.append((i, None))
        elif isinstance(value, (list, tuple)):  # ops[0] (diff review D-32)
            found.extend((i, ("item", k)) for k, v in enumerate(value) if _sparse(v))
        elif isinstance(value, dict):
            found.extend((i, ("item", k)) for k, v in value.items() if _sparse(v))
        elif not isinstance(value, (float, int, np.ndarray, np.generic)) \
                and isinstance(getattr(value, "__dict__", None), dict) \
                and not isinstance(value, (type, types.ModuleType, types.FunctionType)):
            found.extend((i, k) for k, v in sorted(vars(value).items()) if _sparse(v))
    return tuple(found)


def _sparse(value) -> bool:
    return (getattr(type(value), "__module__", None) or "").startswith("scipy.sparse")


def object_classes(kinds) -> tuple:
    """``(position, class)`` of each user object among arguments of the types
    ``kinds``, named tuples included (``Options.object_classes``): their methods
    are resolved by class, as ``self``'s are (``opt.update(w, g)``, ``p.apply(x)``
    of a ``typing.NamedTuple``'s method: review s37 R5-11)."""
    return tuple((i, k) for i, k in enumerate(kinds)
                 if object_kind(k))


def callee_arguments(fn, wrt, args, first=0) -> tuple:
    """The :class:`Callee` of each argument of a call of ``fn`` that is a
    function, a callable object or a partial (not a class): what the code is
    specialised on.  A position in ``wrt`` among them raises
    :class:`NonDifferentiableError` (a function has no gradient).  Those before
    ``first`` are not looked at (a method's instance, callable or not).  A list
    or tuple of user objects gives the classes of its elements
    (:class:`ElementClasses`): a method called on one is called by its class;
    so does a user object holding such lists (``self.layers``).  A list, tuple
    or dict holding functions gives them (:class:`ElementFunctions`): a call of
    an item is one branch per function (``for act in acts: h = act(h)``)."""
    found = []
    params = fn.__code__.co_varnames[:fn.__code__.co_argcount]
    for i, value in enumerate(args):
        if i >= len(params):
            continue
        classes = held_element_classes(value)
        if classes:  # for layer in layers: layer.forward(x), one branch per class
            found.append(ElementClasses(i, params[i], classes))
        if i < first:
            continue
        functions = held_functions(value, params[i])
        if functions:  # def net(params, x, acts): for act in acts: h = act(h)
            found.append(ElementFunctions(i, params[i], tuple(dict.fromkeys(
                fn for fn, _ in functions))))
        if isinstance(value, types.ModuleType) and sys.modules.get(value.__name__) is value \
                and not (i in wrt or i - len(args) in wrt):
            # grad(f)(x, np): the namespace passed, which the generated code imports
            found.append(Callee(i, params[i], value))
            continue
        if not callable(value) or isinstance(value, (type, np.ndarray)):
            continue
        if differentiated_at(i, wrt, len(args)) and data_object(value):
            continue  # grad(loss)(model, x): a callable object, differentiated as an object
        if i in wrt or i - len(args) in wrt:
            raise NonDifferentiableError(
                f"cannot differentiate {fn.__name__} with respect to argument '{params[i]}' "
                f"(position {i}): it is a function ({shown_callable(value)}); srcgrad "
                f"specialises the code on the function passed there and differentiates with "
                f"respect to the numbers the function receives (wrt names another argument)")
        found.append(Callee(i, params[i], value))
    return tuple(found)


def functions_by_keyword(fn, args, kwargs) -> tuple:
    """``(args, kwargs)`` of a call of ``fn``, where a function is passed by keyword
    (``g(fn=np.tanh, x=x)``): the keyword arguments that continue the positional
    ones, in the order of ``fn``'s parameters, moved into place (``g(np.tanh,
    x)``), so that the code is specialised on that function as on one passed by
    position.  Any other call is left as it is (a keyword argument that is no
    function moves nothing: a negative ``wrt`` counts the positional ones).

        >>> def g(fn, x, s=1.0): ...
        >>> functions_by_keyword(g, (), {"x": 2.0, "fn": abs})
        ((<built-in function abs>, 2.0), {})
        >>> functions_by_keyword(g, (abs,), {"s": 2.0})
        ((<built-in function abs>,), {'s': 2.0})
    """
    code = getattr(fn, "__code__", None)
    if not kwargs or code is None or not any(
            callable(v) and not isinstance(v, (type, np.ndarray)) for v in kwargs.values()):
        return args, kwargs
    args, kwargs = list(args), dict(kwargs)
    for name in code.co_varnames[len(args):code.co_argcount]:
        if name not in kwargs:
            break
        args.append(kwargs.pop(name))
    return tuple(args), kwargs


def has_keyword_only(fn) -> bool:
    """Whether ``fn``, a plain function, has keyword-only parameters
    (``def f(x, *, scale=2.0)``): a call of its generated function takes them
    by position, bound by the transformation (transforms._by_position)."""
    if not inspect.isfunction(fn):
        return False
    return any(p.kind is inspect.Parameter.KEYWORD_ONLY
               for p in inspect.signature(fn).parameters.values())
