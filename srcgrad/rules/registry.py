"""The rule registry: each primitive's adjoint rule and tangent rule.

A rule is an ordinary Python function beside its primitive's family, the
adjoint and the tangent side by side.  The adjoint rule takes the primal
output, the output's cotangent and the primitive's own arguments, and returns
the cotangents of the differentiable arguments; the tangent rule
(:class:`TangentRule`) takes the output, the arguments and their tangents, and
returns each argument's term of the output's tangent::

    @adjoint(np.multiply, "x", "y")
    def multiply(out, d_out, x, y):
        return unbroadcast(d_out * y, x), unbroadcast(d_out * x, y)

    @tangent(np.multiply, "x", "y")
    def multiply_tangent(out, x, y, d_x, d_y):
        return expand(d_x * y, out), expand(x * d_y, out)

Most primitives declare both at once instead (:mod:`.derive`): a unary ufunc
by its derivative (``pointwise``), a linear primitive by its transpose
(``linear``), an operator or method by its NumPy twin (``alias``).

Rules are runnable on their own (the spec-table tests call them directly) and
the reverse pass inlines their bodies into generated code, renaming the
parameters to the variables of the call site.  So a rule body may use only its
parameters, its own locals, ``np``, ``math`` and the helpers of
:mod:`srcgrad.runtime`; registration checks that, and checks that the rule's
parameters line up with the primitive's so that a call's arguments bind to the
rule the way they bind to the primitive.

Conventions the inliner relies on:

* the parameters after ``out, d_out`` mirror a prefix of the primitive's
  positional parameters, by name and order (checked where
  ``inspect.signature`` works); the primitive's positional-only parameters
  (a method's ``self``, ``operator.getitem``'s ``b``) may be renamed, since
  no call can pass them by keyword;
* the rule returns one expression per name in ``wrt`` (a tuple when there are
  several, the bare expression when there is one), in that order;
* a ``wrt`` parameter that holds a sequence of arrays (``np.concatenate``'s
  ``arrays``) or a ``*args`` parameter gets a sequence of cotangents, one per
  element;
* ``if`` statements whose test depends only on non-array parameters (``axis``,
  ``keepdims``, a constant exponent) are folded away at inlining time, so they
  are the way to specialise a rule; a ``return`` may only sit under such an
  ``if`` (or at the end of the body).

Primitives whose output carries no derivative (comparisons, ``np.sign``,
``x.shape``) are registered with :func:`nondifferentiable`: their outputs are
never active.
"""

from __future__ import annotations

import builtins
import inspect
import math
import sys
from dataclasses import dataclass
from typing import Callable

import numpy as np

from .. import runtime
from ..errors import RuleError

#: Names a rule body may read besides its parameters and locals.
RULE_GLOBALS: dict[str, object] = {"np": np, "math": math}
RULE_GLOBALS.update({name: getattr(runtime, name) for name in runtime.__all__})


@dataclass(frozen=True)
class Rule:
    """An adjoint rule for one primitive.

    ``params`` are the rule's parameter names after ``out, d_out``; ``wrt`` the
    subset (in return order) whose cotangents the rule returns.
    """

    primitive: object
    name: str
    fn: Callable
    params: tuple[str, ...]
    wrt: tuple[str, ...]
    signature: inspect.Signature
    called: str | None = None  # a user's rule: generated code calls it by this name

    def bind(self, args, kwargs) -> inspect.BoundArguments:
        """Bind a call site's arguments to the rule's primal parameters.

        Raises ``TypeError`` (as Python would) when they do not fit.
        """
        return bind_arguments(self.signature, args, kwargs)


class _Slot:
    """A placeholder argument: which positional argument, or keyword, it stands for."""

    __slots__ = ("key",)

    def __init__(self, key):
        self.key = key


#: (id(signature), number of positional arguments, keyword names) -> (signature,
#: the arguments its bind gives for placeholders); the signature kept alive.
_PLANS: dict = {}


def bind_arguments(signature: inspect.Signature, args, kwargs) -> inspect.BoundArguments:
    """``signature.bind(*args, **kwargs)``: where each argument goes depends only
    on how many are positional and the keywords' names, so that is worked out
    once per signature and shape of call (binding anew was a tenth of the
    adjoint sweep of a long function)."""
    key = (id(signature), len(args), tuple(kwargs))
    found = _PLANS.get(key)
    if found is None:
        try:
            plan = signature.bind(*[_Slot(i) for i in range(len(args))],
                                  **{k: _Slot(k) for k in kwargs}).arguments
        except TypeError:
            return signature.bind(*args, **kwargs)  # raises Python's own message
        found = _PLANS[key] = (signature, plan)

    def fill(held):
        if type(held) is _Slot:
            return kwargs[held.key] if type(held.key) is str else args[held.key]
        if type(held) is tuple:  # *args
            return tuple(fill(h) for h in held)
        return {k: fill(h) for k, h in held.items()}  # **kwargs

    return inspect.BoundArguments(signature, {name: fill(held)
                                              for name, held in found[1].items()})


_RULES: dict[object, Rule] = {}
_NONDIFF: dict[object, str] = {}


def _key(primitive):
    try:
        hash(primitive)
    except TypeError as exc:  # pragma: no cover - every numpy primitive hashes
        raise RuleError(f"primitive {primitive!r} is not hashable") from exc
    return primitive


def display_name(primitive) -> str:
    """How generated code and messages name a primitive (``np.linalg.inv``).
    A primitive may be unhashable (a callable ``np.poly1d``, an object whose
    class defines ``__eq__`` alone: review s36 R4-14); it has no registered name."""
    try:
        named = _NAMES.get(primitive)
    except TypeError:
        named = None
    if named is not None:
        return named
    owner = getattr(primitive, "__self__", None)
    if isinstance(owner, np.ufunc) and not isinstance(primitive, np.ufunc):
        # np.add.reduceat, np.minimum.outer: the ufunc's name, not 'ufunc.reduceat'
        # (review s37 R5-2, R5-18: messages use the names the user wrote)
        return f"{display_name(owner)}.{getattr(primitive, '__name__', '?')}"
    kind = type(owner).__name__ if owner is not None else ""
    stats = sys.modules.get("scipy.stats")  # SciPy's, never imported here
    if kind.endswith("_gen") and stats is not None and getattr(stats, kind[:-4], None) is owner:
        # st.expon.logpdf: the distribution SciPy holds under that name, not its private
        # base class's method (review s37 R5-13)
        return f"scipy.stats.{kind[:-4]}.{getattr(primitive, '__name__', '?')}"
    module = getattr(primitive, "__module__", None) or ""
    qual = getattr(primitive, "__qualname__", None) or getattr(primitive, "__name__", repr(primitive))
    if isinstance(primitive, np.ufunc):
        special = sys.modules.get("scipy.special")  # SciPy's ufuncs, never imported here
        if getattr(np, primitive.__name__, None) is not primitive and special is not None \
                and getattr(special, primitive.__name__, None) is primitive:
            return f"scipy.special.{primitive.__name__}"
        return f"np.{primitive.__name__}"
    if module.startswith("numpy"):
        for prefix, mod in (("np.linalg.", np.linalg), ("np.fft.", np.fft), ("np.", np)):
            if getattr(mod, qual, None) is primitive:
                return prefix + qual
    if module == "math":
        return f"math.{qual}"
    if module.startswith("srcgrad.runtime.") and getattr(runtime, qual, None) is primitive:
        module = "srcgrad.runtime"  # its public home, not the submodule defining it
    public = module.split("._")[0]  # scipy.special._basic.comb -> scipy.special.comb
    if public != module and getattr(sys.modules.get(public), qual, None) is primitive:
        module = public
    return f"{module}.{qual}" if module else qual


_NAMES: dict[object, str] = {}


def _primal_signature(primitive):
    try:
        return inspect.signature(primitive)
    except (TypeError, ValueError):
        return None


def _check_rule(primitive, fn, wrt, name, inlined=True,
                sig=None) -> tuple[inspect.Signature, tuple[str, ...]]:
    """Check a rule against its primitive; ``sig`` (default: ``fn``'s own) is the
    rule's signature as ``(out, d_out, *primal parameters)``."""
    sig = sig or inspect.signature(fn)
    names = list(sig.parameters)
    if names[:2] != ["out", "d_out"]:
        raise RuleError(f"rule for {name} must start with parameters (out, d_out), "
                        f"not {tuple(names[:2])}")
    params = tuple(names[2:])
    primal_sig = sig.replace(parameters=list(sig.parameters.values())[2:])
    for w in wrt:
        if w not in params:
            raise RuleError(f"rule for {name}: differentiable parameter {w!r} is not a "
                            f"parameter of the rule {params}")
    if isinstance(primitive, np.ufunc):
        required = [p for p in primal_sig.parameters.values()
                    if p.default is inspect.Parameter.empty
                    and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        if len(required) != primitive.nin:
            raise RuleError(f"rule for {name} takes {len(required)} array arguments but "
                            f"the ufunc takes {primitive.nin}")
    else:
        psig = _primal_signature(primitive)
        if psig is not None:
            # A positional-only parameter of the primitive (``self`` of a method,
            # ``operator.getitem``'s ``b``) cannot be passed by keyword, so the
            # rule may name it freely; the others must match by name and order.
            pparams = [p for p in psig.parameters.values()
                       if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
            rnames = [p.name for p in primal_sig.parameters.values()
                      if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
            # A primitive taking ``*args`` (``scipy.stats.norm.logpdf(x, *args)``)
            # binds the rule's further parameters there.
            varargs = any(p.kind is p.VAR_POSITIONAL for p in psig.parameters.values())
            if (len(rnames) > len(pparams) and not varargs) or any(
                    p.kind is not p.POSITIONAL_ONLY and p.name != r
                    for r, p in zip(rnames, pparams)):
                raise RuleError(f"rule for {name}: parameters {tuple(rnames)} do not match "
                                f"the primitive's {tuple(p.name for p in pparams)}")
    if inlined and not getattr(fn, "__module__", "").startswith(_OWN):
        check_globals(fn, name)
    return primal_sig, params


#: srcgrad's own rules skip :func:`check_globals` when they register (reading
#: the bytecode of ~700 rules was a third of ``import srcgrad``'s time);
#: tests/rules/test_registry.py checks every one of them instead.
_OWN = "srcgrad."


def check_globals(fn, name) -> None:
    """Refuse a rule that is inlined into generated code but reads a global
    name the generated module does not define."""
    code = fn.__code__
    allowed = set(RULE_GLOBALS) | set(dir(builtins))
    unknown = sorted(set(code.co_names) - allowed - _attribute_names(code))
    if unknown:
        raise RuleError(f"rule for {name} reads global names {unknown}; a rule may use only "
                        f"np, math and the helpers in srcgrad.runtime")


def _attribute_names(code) -> set[str]:
    """Names in co_names that are attribute accesses, not global reads."""
    import dis  # noqa: PLC0415 - only needed at registration

    attrs, globals_read = set(), set()
    for ins in dis.get_instructions(code):
        if ins.opname in ("LOAD_ATTR", "LOAD_METHOD", "STORE_ATTR"):
            attrs.add(ins.argval)
        elif ins.opname in ("LOAD_GLOBAL", "LOAD_NAME"):
            globals_read.add(ins.argval)
    return attrs - globals_read


def adjoint(primitive, *wrt: str, name: str | None = None):
    """Register the decorated function as the adjoint rule of ``primitive``.

    ``wrt`` names the differentiable parameters, in the order the rule returns
    their cotangents; by default every parameter without a default value.
    ``name`` is how generated code spells the primitive (``np.tanh``); by
    default it is derived from the primitive's module and name.
    """

    def register(fn):
        _register_adjoint(primitive, fn, wrt, name)
        return fn

    return register


def _register_adjoint(primitive, fn, wrt, name, called=None) -> Rule:
    label = name or display_name(primitive)
    sig = inspect.signature(fn)
    default_wrt = tuple(p.name for p in list(sig.parameters.values())[2:]
                        if p.default is inspect.Parameter.empty
                        and p.kind is not p.VAR_KEYWORD)
    chosen = tuple(wrt) or default_wrt
    primal_sig, params = _check_rule(primitive, fn, chosen, label, inlined=called is None)
    key = _key(primitive)
    rule = Rule(primitive, label, fn, params, chosen, primal_sig, called)
    if called is None and getattr(_RULES.get(key), "called", None) is not None:
        return rule   # a family loaded lazily after the user's rule: the user's stays
    if name:
        _NAMES[key] = name
    _RULES[key] = rule
    _NONDIFF.pop(key, None)
    return rule


def nondifferentiable(*primitives, name: str | None = None) -> None:
    """Mark primitives whose outputs carry no derivative (zero almost everywhere
    or not real-valued): their outputs are never active."""
    for primitive in primitives:
        key = _key(primitive)
        _NONDIFF[key] = name or display_name(primitive)
        _RULES.pop(key, None)


def lookup(primitive) -> Rule | None:
    """The rule registered for ``primitive``, or None."""
    try:
        found = _RULES.get(primitive)
    except TypeError:
        return None
    if found is None and _LAZY and load_lazy():
        return lookup(primitive)
    return found


def is_nondifferentiable(primitive) -> bool:
    try:
        found = primitive in _NONDIFF
    except TypeError:
        return False
    if not found and _LAZY and load_lazy():
        return is_nondifferentiable(primitive)
    return found


def all_rules() -> dict[object, Rule]:
    """A copy of the registry (for docs and tests)."""
    load_lazy()
    return dict(_RULES)


def all_nondifferentiable() -> dict[object, str]:
    load_lazy()
    return dict(_NONDIFF)


# -- families registered when their library is first used ---------------------------
#
# The rules of an optional library (SciPy) live in family modules that import
# it.  srcgrad never imports the library itself: such a family is registered
# when a rule is looked up that is not there yet, once the library has been
# imported (by the user's code, whose calls are being resolved).  A lookup
# that misses costs one ``sys.modules`` check per pending family.

_LAZY: dict[str, Callable[[], None]] = {}


def register_lazily(module: str, load: Callable[[], None]) -> None:
    """Call ``load()`` (which registers rules) the first time a lookup misses
    while the module named ``module`` is imported."""
    _LAZY[module] = load


def load_lazy(force: bool = False) -> bool:
    """Register the pending families whose library is imported (or, with
    ``force``, importable); whether any was."""
    loaded = False
    for module, load in list(_LAZY.items()):
        if sys.modules.get(module) is not None or force:
            del _LAZY[module]
            try:
                load()
            except ImportError:  # not installed (force), or a broken installation
                continue
            loaded = True
    return loaded


# -- tangent (forward-mode) rules ---------------------------------------------------

@dataclass(frozen=True)
class TangentRule:
    """A forward-mode rule for one primitive.

    The rule takes the primal output, the primitive's own arguments and then one
    tangent ``d_<name>`` per differentiable parameter; it returns, per
    differentiable parameter and in that order, that parameter's *term* of the
    output's tangent (what the output's tangent would be if only that argument
    moved).  Forward mode inlines the terms of the arguments that carry a
    tangent and adds them up, so an argument without one costs nothing.
    """

    primitive: object
    name: str
    fn: Callable
    params: tuple[str, ...]
    wrt: tuple[str, ...]
    signature: inspect.Signature
    called: str | None = None  # a user's rule: generated code calls it by this name

    def bind(self, args, kwargs) -> inspect.BoundArguments:
        return bind_arguments(self.signature, args, kwargs)


_TANGENTS: dict[object, TangentRule] = {}


def tangent(primitive, *wrt: str, name: str | None = None):
    """Register the decorated function as the tangent rule of ``primitive``::

        @tangent(np.multiply, "x", "y")
        def multiply(out, x, y, d_x, d_y):
            return d_x * y, x * d_y

    ``wrt`` names the differentiable parameters (by default, as for
    :func:`adjoint`, those without a default value); the rule's last parameters
    must be their tangents ``d_<name>``, in the same order.
    """

    def register(fn):
        _register_tangent(primitive, fn, wrt, name)
        return fn

    return register


def _register_tangent(primitive, fn, wrt, name, called=None) -> TangentRule:
    label = name or _NAMES.get(primitive) or display_name(primitive)
    sig = inspect.signature(fn)
    values = list(sig.parameters.values())
    if not values or values[0].name != "out":
        raise RuleError(f"tangent rule for {label} must start with the parameter 'out'")
    tangents = [p for p in values[1:] if p.name.startswith("d_")]
    primal = [p for p in values[1:] if not p.name.startswith("d_")]
    if values[1:] != primal + tangents:
        raise RuleError(f"tangent rule for {label}: the tangents d_<name> must be the "
                        f"last parameters")
    default_wrt = tuple(p.name for p in primal if p.default is inspect.Parameter.empty
                        and p.kind is not p.VAR_KEYWORD)
    chosen = tuple(wrt) or default_wrt
    expected = [f"d_{w}" for w in chosen]
    if [p.name for p in tangents] != expected:
        raise RuleError(f"tangent rule for {label}: expected tangent parameters "
                        f"{tuple(expected)} after the primal ones, got "
                        f"{tuple(p.name for p in tangents)}")
    # Check the primal parameters exactly as an adjoint rule's are checked.
    fake = sig.replace(parameters=[values[0], values[0].replace(name="d_out"), *primal])
    _, params = _check_rule(primitive, fn, chosen, label, inlined=called is None, sig=fake)
    rule = TangentRule(primitive, label, fn, params, chosen, sig.replace(parameters=primal),
                       called)
    if called is not None or getattr(_TANGENTS.get(_key(primitive)), "called", None) is None:
        _TANGENTS[_key(primitive)] = rule   # (a lazily loaded family keeps the user's)
    return rule


def lookup_tangent(primitive) -> TangentRule | None:
    """The tangent rule registered for ``primitive``, or None."""
    try:
        found = _TANGENTS.get(primitive)
    except TypeError:
        return None
    if found is None and _LAZY and load_lazy():
        return lookup_tangent(primitive)
    return found


def all_tangents() -> dict[object, TangentRule]:
    """A copy of the tangent registry (for docs and tests)."""
    load_lazy()
    return dict(_TANGENTS)


# -- users' rules -------------------------------------------------------------------
#
# A rule registered by a user is called by name from generated code instead of
# being inlined (it may use anything: SciPy, a C extension, its own helpers).
# Generated modules bind these names; the cache keys on ``user_rules()`` so
# registering or replacing a rule never reuses code generated before it.

_CALLED: dict[str, Callable] = {}
_USER: list = []
GENERATION = [0]   # read directly by every call's staleness check


def touch() -> None:
    """Note a change to users' rules: code compiled before it is regenerated."""
    GENERATION[0] += 1


def generation() -> int:
    """How many changes to users' rules this process has seen."""
    return GENERATION[0]


def _called_name(fn, primitive, suffix: str) -> str:
    base = getattr(fn, "__name__", "")
    if not base.isidentifier() or base == "<lambda>":
        base = f"{display_name(primitive).rpartition('.')[2]}_{suffix}"
    taken = set(RULE_GLOBALS) | set(dir(builtins))
    name, n = base, 0
    while name in taken or (name in _CALLED and _CALLED[name] is not fn):
        n += 1
        name = f"{base}_{n}"
    return name


def register_user_rule(kind: str, primitive, fn, wrt=(), name=None):
    """Register a user's ``"vjp"`` or ``"jvp"`` rule; generated code calls it by name."""
    called = _called_name(fn, primitive, kind)
    register = _register_adjoint if kind == "vjp" else _register_tangent
    rule = register(primitive, fn, tuple(wrt), name, called=called)
    _CALLED[called] = fn
    _USER.append((kind, rule.name, called, fn))
    touch()
    return rule


def record_user_rule(kind: str, label: str, *fns) -> None:
    """Note rules that are not in the tables (a custom_vjp's functions), so that
    code generated before them is not reused."""
    for fn in fns:
        _USER.append((kind, label, None, fn))
    touch()


def user_rule(primitive, kind: str):
    """The rule a user registered for ``primitive`` (``kind`` ``"vjp"`` or
    ``"jvp"``), or None: it takes the place of the function's source, which
    srcgrad would otherwise differentiate (a straight-through estimator
    registered for a function of the user's own module)."""
    try:
        found = (_RULES if kind == "vjp" else _TANGENTS).get(_key(primitive))
    except TypeError:
        return None
    return found if getattr(found, "called", None) is not None else None


def called_functions() -> dict[str, Callable]:
    """Users' rules by the name generated code calls them."""
    return dict(_CALLED)


def user_rules() -> list:
    """The users' registrations so far, in order: ``(kind, label, called, fn)``."""
    return list(_USER)


def restore_point():
    """A function that puts every registry back as it is now (for tests that
    register rules of their own)."""
    saved = (dict(_RULES), dict(_NONDIFF), dict(_TANGENTS), dict(_CALLED), list(_USER),
             dict(_LAZY))

    def restore():
        for table, copy in zip((_RULES, _NONDIFF, _TANGENTS, _CALLED, _USER, _LAZY), saved):
            table.clear()
            table.update(copy) if isinstance(table, dict) else table.extend(copy)
        touch()
    return restore
