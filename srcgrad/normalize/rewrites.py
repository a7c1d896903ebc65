"""Calls rewritten into other syntax before they are normalised: ``d.get(k, v)``,
``np.fill_diagonal(y, v)``, and a method called on objects of several classes.

Part of :mod:`.calls` (a mixin of its ``Calls``, so of the normaliser), kept
apart because each rewrite is a self-contained piece of syntax building:
``d.get(k, v)`` becomes ``d[k] if k in d else v``, ``np.fill_diagonal(y, v)``
an element write srcgrad differentiates, and ``layer.forward(a)`` on objects
of the classes the function's lists hold one branch per class.
"""

from __future__ import annotations

import ast
import inspect

import gast
import numpy as np

from ..frontend.linker import is_user_function
from ..ir.syntax import clone, helper_ref, load_name, walk
from .sugar import builtin_ref

#: What an array has: an array's method is never a user class's (``dir``, as
#: ``getattr(np.ndarray, "__call__")`` finds the method of the class itself).
_ARRAY_ATTRIBUTES = frozenset(dir(np.ndarray))


class Rewrites:
    """The rewrites of calls (mixed into :class:`.calls.Calls`)."""

    def dict_get(self, receiver, node):
        """``d.get(k, v)`` -> ``d[k] if k in d else v`` (``None`` for ``v`` left
        out), ``k`` and then ``v`` evaluated once each, before the test, as Python
        evaluates a call's arguments: the item read as ``d[k]`` is, its
        derivative with it.  Only for ``d`` bound to dict displays: another
        object's ``get`` may mean something else."""
        def once(arg):
            return clone(arg) if isinstance(arg, (gast.Name, gast.Constant)) \
                else self.held(arg, node)
        key = once(node.args[0])
        # Python evaluates the default whether or not the key is there (a draw or a
        # pop in it happens either way): evaluated once, here, after the key
        default = once(node.args[1]) if len(node.args) == 2 else \
            gast.Constant(value=None, kind=None)
        test = gast.Compare(left=clone(key), ops=[gast.In()], comparators=[clone(receiver)])
        item = gast.Subscript(value=clone(receiver), slice=clone(key), ctx=gast.Load())
        made = gast.IfExp(test=test, body=item, orelse=default)
        for sub in walk(made):
            if "lineno" in sub._attributes and getattr(sub, "lineno", None) is None:
                gast.copy_location(sub, node)
        return made

    def filled_diagonal(self, call):
        """``np.fill_diagonal(y, v)`` on a local array ``y`` as the element write
        ``y[np.diag_indices(min(np.shape(y)), np.ndim(y))] = v``, which srcgrad
        differentiates (the first ``min`` rows of a tall matrix, as NumPy fills
        them without ``wrap``); None for any other statement."""
        if not (isinstance(call, gast.Call) and isinstance(call.func, gast.Attribute)
                and len(call.args) == 2 and not call.keywords
                and not any(isinstance(a, gast.Starred) for a in call.args)
                and isinstance(call.args[0], gast.Name) and call.args[0].id in self.locals
                and call.args[0].id not in self.params
                and self.callee(call) is getattr(np, "fill_diagonal", None)):
            return None
        module, y = call.func.value, call.args[0]

        def numpy(name, *args):
            return gast.Call(func=gast.Attribute(value=clone(module), attr=name, ctx=gast.Load()),
                             args=list(args), keywords=[])

        size = gast.Call(func=builtin_ref("min"), args=[numpy("shape", clone(y))], keywords=[])
        index = numpy("diag_indices", size, numpy("ndim", clone(y)))
        target = gast.Subscript(value=clone(y), slice=index, ctx=gast.Store())
        return gast.Assign(targets=[target], value=call.args[1], type_comment=None)

    def dispatchable(self, func) -> list:
        """The classes whose method ``func`` (``layer.forward``, on a local name)
        calls: those of the objects in the lists the function reads or was
        passed (:meth:`.specialise.Specialisation.static_element_classes`, ``ElementClasses``)
        that define it in Python; none for an array's method."""
        if not isinstance(func.value, gast.Name) or func.attr in _ARRAY_ATTRIBUTES:
            return []
        return [c for c in self.dispatch_classes
                if is_user_function(inspect.getattr_static(c, func.attr, None))]

    def dispatched(self, node, func, classes, fallback=None):
        """``obj.m(a)`` for ``obj`` of one of ``classes`` -> a guard, then one branch
        per class calling its method, resolved like ``self.m`` in a method::

            if type(obj) is not Dense_class and type(obj) is not ReLU_class:
                raise error_at("SrcGradError", ..., where)
            if type(obj) is Dense_class:
                result = Dense_class.m(obj, a)
            else:
                result = ReLU_class.m(obj, a)

        With ``fallback`` (an expression), an object of another class is no
        error: the last branch is ``result = fallback`` (``v[t]`` as indexing,
        where ``v`` may be an array as well as a user object).
        Returns the result's atom."""
        refs = []
        for cls in classes:
            ref = load_name(self.namer.fresh(f"{cls.__name__}_class"))
            ref.helper = cls
            self.free[ref.id] = cls
            refs.append(ref)
        obj = func.value

        def kind_is(ref, op):
            return gast.Compare(left=gast.Call(func=builtin_ref("type"), args=[clone(obj)],
                                               keywords=[]), ops=[op()], comparators=[clone(ref)])

        names = ", ".join(c.__qualname__ for c in classes)
        shown = getattr(obj, "shown", None)  # self.enc, where obj is the local holding it
        held, whose = ("objects", "object whose parts") if shown is not None \
            else ("lists", "list whose items")
        message = (f"{self.func.name} was differentiated for "
                   f"'{ast.unparse(gast.gast_to_ast(shown or obj))}.{func.attr}(...)' on "
                   f"objects of the classes {names}, those of the {held} it read or was passed "
                   f"when it was compiled, and this object is of another class: srcgrad makes "
                   f"code for the classes of each {held[:-1]} passed, not for a global {whose} "
                   f"were replaced since -- pass the {held[:-1]} as an argument")
        calls = []
        for cls, ref in zip(classes, refs):
            method = gast.Attribute(value=clone(ref), attr=func.attr, ctx=gast.Load())
            method.helper = getattr(cls, func.attr)  # bound above, as ref
            call = gast.Call(func=method, args=[clone(obj), *node.args], keywords=node.keywords)
            call.receiver_type = cls
            calls.append((kind_is(ref, gast.Is), kind_is(ref, gast.IsNot), call))
        # (a SrcGradError located at the call: a raw TypeError until session 31)
        return self.chosen_call(node, calls, message, fallback)

    def chosen_call(self, node, calls, message, fallback=None):
        """``result = call`` under the first ``is_test`` of ``calls`` (``(is_test,
        is_not_test, call)`` each) that holds, after a guard raising a located
        ``message`` where none does -- or, with ``fallback`` (an expression),
        ``result = fallback`` then: the code :meth:`dispatched` (by class) and
        :meth:`.function_values.FunctionValues.function_value_call` (by
        identity) write.  Returns the result's atom."""
        tests = [is_not for _, is_not, _ in calls]
        guard = located_guard(tests[0] if len(tests) == 1 else gast.BoolOp(
            op=gast.And(), values=tests), message, self.parsed.filename, node) \
            if fallback is None else None
        self.specialised.extend(self.element_lists)  # the lists passed: in the header
        self.element_lists = []
        result = self.namer.fresh("result")
        self.locals.add(result)

        def assign(value):
            return [gast.Assign(targets=[gast.Name(id=result, ctx=gast.Store(), annotation=None,
                                                   type_comment=None)],
                                value=value, type_comment=None)]

        branch = None if fallback is None else assign(fallback)
        for is_test, _, call in reversed(calls):
            branch = assign(call) if branch is None else [gast.If(test=is_test,
                                                                  body=assign(call),
                                                                  orelse=branch)]
        for stmt in [*([guard] if guard is not None else []), *branch]:
            for sub in walk(stmt):
                if "lineno" in sub._attributes:
                    gast.copy_location(sub, node)
        self.count_assignments(branch)
        if guard is not None:
            self.statement(guard)
        for stmt in branch:
            self.statement(stmt)
        return self.atom(load_name(result))


def located_guard(test, message: str, filename: str, node):
    """``if test: raise error_at("SrcGradError", message, where)``: a check the
    generated code makes as it runs, its error located at ``node`` in the
    user's file ``filename``."""
    raised = gast.Call(func=helper_ref("error_at"), args=[
        gast.Constant(value="SrcGradError", kind=None),
        gast.Constant(value=message, kind=None),
        gast.Tuple(elts=[gast.Constant(value=v, kind=None) for v in (
            filename, node.lineno, node.col_offset)], ctx=gast.Load())],
        keywords=[])
    return gast.If(test=test, body=[gast.Raise(exc=raised, cause=None)], orelse=[])
