"""Refusals of calls on objects srcgrad cannot follow, in words that say why.

:func:`.inline.missing_rule` asks these before its generic "no adjoint rule"
message, for two objects whose call that message would misname (review s37):

- a derivative srcgrad made, called inside the function differentiated
  (``H = H_of(w)`` with ``H_of = srcgrad.hessian(nll)``): its derivative is
  one order higher, computed as a dense tensor by ``jacobian(hessian(nll))``;
- ``x.flat`` (an iterator object over the array, read by index or in a loop),
  which srcgrad does not follow: ``x.ravel()`` reads the same elements;
- a method called on an object a classmethod of a plain class returned
  (``m = Net.make(W); m.loss(x)``): the object was built from a value being
  differentiated, which srcgrad refuses for ``Net(W)`` itself, saying why.

    >>> _DERIVATIVES["hessian"]
    ('the Hessian', 'srcgrad.jacobian(srcgrad.hessian({f}))')
"""

from __future__ import annotations

import dataclasses
import inspect

import gast

from .. import ir
from ..frontend.linker import is_library_module
from ..ir.syntax import source_of, walk


#: What a message calls each kind of derivative object srcgrad makes, and the
#: transformation one order higher that computes its derivative as a tensor.
_DERIVATIVES = {"hessian": ("the Hessian", "srcgrad.jacobian(srcgrad.hessian({f}))"),
                "hvp": ("the Hessian-vector product", "srcgrad.jacobian(srcgrad.hessian({f}))"),
                "jacobian": ("the Jacobian", "srcgrad.jacobian(srcgrad.jacobian({f}))"),
                "grad": ("the derivative", "srcgrad.jacobian of that derivative")}


def derivative_call_message(op: ir.Op) -> str:
    """The refusal of a call of a derivative srcgrad made (``srcgrad.hessian(nll)``,
    ``hvp``, ``jacobian``, ``grad(grad(f))``) inside the function differentiated
    (a Laplace evidence's log det H, a Newton step): its derivative is one order
    higher, which srcgrad computes as a dense tensor, not through the call (review
    s37 R5-16: the message spoke of library code and a spline's derivative)."""
    prim = op.primitive
    kind = prim.__name__.partition("_")[0]
    wrapped = getattr(prim.__wrapped__, "__name__", "f")
    what, higher = _DERIVATIVES.get(kind, ("the derivative", "a transformation one order higher"))
    func = getattr(op.node, "func", None)
    shown = f"'{source_of(func)}'" if func is not None else "it"
    return (f"calling {shown}, {what} of {wrapped} that srcgrad made (srcgrad.{kind}), with a "
            f"value being differentiated: its derivative is a derivative of {wrapped} one "
            f"order higher (for a Hessian, the third), which srcgrad does not take through "
            f"a call inside another function's gradient (a gradient made by srcgrad.grad or "
            f"value_and_grad is differentiated there); {higher.format(f=wrapped)} gives it "
            f"as a dense tensor, to combine by hand (d log det H = trace(H^-1 dH)), or wrap "
            f"the argument in srcgrad.stop_gradient if no gradient should flow through "
            f"the call")


def made_by_a_classmethod(program, op: ir.Op):
    """``(class name, 'Net.make')`` where ``op`` calls a method srcgrad cannot
    resolve on a local that a classmethod of a user's plain class returned
    (``m = Net.make(W); m.loss(x)``): the object was built from a value being
    differentiated, which srcgrad refuses, saying why, for ``Net(W)`` itself
    (review s37 R5-18: the message named only the method); None otherwise."""
    if not isinstance(op.primitive, ir.UnknownMember) or not op.args \
            or not isinstance(op.args[0], gast.Name):
        return None
    receiver = op.args[0].id
    for node in (n for stmt in program.body for n in walk(stmt)):
        made = getattr(node, "op", None)
        if not isinstance(node, gast.Assign) or made is None:
            continue
        targets = [t for target in node.targets for t in (
            target.elts[:1] if isinstance(target, gast.Tuple) else [target])]
        if not any(isinstance(t, gast.Name) and t.id == receiver for t in targets):
            continue  # (a helper's pair: (m, make_res) = make_forward(...))
        fn = getattr(made.primitive, "fn", made.primitive)  # (a CalleePair: its function)
        fn = getattr(fn, "__func__", fn)
        owner, _, name = getattr(fn, "__qualname__", "").rpartition(".")
        cls = getattr(fn, "__globals__", {}).get(owner) if owner.isidentifier() else None
        method = inspect.getattr_static(cls, name, None) if isinstance(cls, type) else None
        if isinstance(method, classmethod) and method.__func__ is fn \
                and not is_library_module(cls.__module__ or "") \
                and not dataclasses.is_dataclass(cls) and not issubclass(cls, tuple):
            return cls.__name__, f"{cls.__name__}.{name}"  # (those srcgrad builds, or says why not)
    return None


def flat_message(op: ir.Op) -> str:
    """Why ``x.flat`` is refused, and what reads the same elements (review s37 R5-8:
    the message offered register_vjp for NumPy's own attribute)."""
    base = source_of(op.node.value) if isinstance(op.node, gast.Attribute) else "x"
    return (f"'{base}.flat' is an iterator object over the array, which srcgrad does not "
            f"follow; {base}.ravel() (or {base}.reshape(-1)) reads the same elements in the "
            f"same order, by index ({base}.ravel()[i]) or in a loop")
