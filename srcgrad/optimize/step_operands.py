"""A steady adjoint loop's per-step operands of a weight's product read from
the stacked tape, not collected and joined value by value after the loop.

After :mod:`.loop_products`, the adjoint of ``for t in t1: h = np.tanh(xs[t]
@ W + h @ U)`` collects, in each step, the cotangent and the restored state
(``d_U_steps.append((d_t4, h))``), and after the loop
:func:`srcgrad.runtime.steps.matmul_grad_b_steps` joins the fifty states into
one matrix, looking at each (its type, shape and dtype) first.  Where
:mod:`.steady_loops` wrote the loop out under its guard and
:mod:`.batched_steps` stacked the same tape for the step's terms, all but the
first of those states are already one array: ``stacked_tape(h_tape, 1, h)``
holds in row ``t`` the state step ``t`` finds, ``h_tape[t + 1]``, which is
the one step ``t + 1`` restores.  This pass holds that stack in a name, has
each step collect its index ``t`` instead of the state, and hands the helper
the tape and the stack (``rows=h_tape, stacked=h_states``): the operands are
``h_tape[0]`` then ``h_states[:n - 1]``, one copy::

    if <guard> and stackable_tape(h_tape, 1, h):
        h_states = stacked_tape(h_tape, 1, h)
        h_terms = 1 - h_states ** 2
        for t in reversed(t1):
            ...
            h = h_tape[t]  # restore: h
            ...
            d_U_steps.append((d_t4, t))  # d_U += matmul_grad_b(d_t4, h, U), after the loop
        del h_terms
        d_U = matmul_grad_b_steps(d_U, d_U_steps, U, rows=h_tape, stacked=h_states)
        del h_states
    else:
        <the loop as it was>
        d_U = matmul_grad_b_steps(d_U, d_U_steps, U)

Sound -- the gradient is bit for bit the one without the pass -- because:

* ``h`` is assigned in the loop's body only by its restore ``h = h_tape[t]``,
  before the ``append``: the state a step collects is ``h_tape[t]``, the
  entry the helper reads for index ``t`` where it sums step by step (as it
  did with the state collected);
* where it forms one product, the helper joins ``h_tape[0]`` and
  ``h_states[:n - 1]`` only if ``h_tape[0]`` is an exact ``np.ndarray`` of the
  stack's row shape and dtype: the same values, in the same C-contiguous
  matrix, that joining the states made (:func:`srcgrad.runtime.steps._rows`
  gives None, and the helper the step-by-step sum, where they are not all
  such arrays), so the same product; ``h_states`` rows are the tape's values,
  copied (:func:`stacked_tape`), and nothing writes into the stack;
* the terms read the stack they read before, through a name;
* the products after the loop move into both branches, in their order (a
  sum that ``shares`` another's stacked cotangents still follows it), and
  nothing runs between the loop and them; the other branch keeps them as
  they were;
* a list the pass rewrites is bound to a new empty list before the guard,
  mentioned by nothing else in between, and appended to once per step in the
  fast loop: its steps are this loop's, in order.

Only a tape that :mod:`.batched_steps` stacked for a term read before the
restore is read (the guard already checks it stackable); elsewhere the loop
is left as it is.  Runs right after :mod:`.batched_steps`, in the same cases.
Tested by tests/optimize/test_step_operands.py.

    >>> import gast
    >>> from ..ir.emit import show_statements
    >>> from ..ir.naming import Namer
    >>> sweep = gast.parse(
    ...     "d_U_steps = StepTerms()\\n"
    ...     "if len(t1) and stackable_tape(h_tape, 1, h):\\n"
    ...     "    h_terms = 1 - stacked_tape(h_tape, 1, h) ** 2\\n"
    ...     "    for t in reversed(t1):\\n"
    ...     "        d_t5 = d_h * h_terms[t]\\n"
    ...     "        h = h_tape[t]\\n"
    ...     "        d_h = d_t5 @ U.T\\n"
    ...     "        d_U_steps.append((d_t5, h))\\n"
    ...     "    del h_terms\\n"
    ...     "else:\\n"
    ...     "    pass\\n"
    ...     "d_U = matmul_grad_b_steps(d_U, d_U_steps, U)\\n").body
    >>> sweep[1].steady_loop = True
    >>> print(show_statements(stack_step_operands(sweep, {"h_tape"}, Namer())))
    d_U_steps = StepTerms()
    if len(t1) and stackable_tape(h_tape, 1, h):
        h_states = stacked_tape(h_tape, 1, h)  # h as each step finds it: h_tape[1:], then h
        h_terms = 1 - h_states ** 2
        for t in reversed(t1):
            d_t5 = d_h * h_terms[t]
            h = h_tape[t]
            d_h = d_t5 @ U.T
            d_U_steps.append((d_t5, t))
        del h_terms
        d_U = matmul_grad_b_steps(d_U, d_U_steps, U, rows=h_tape, stacked=h_states)
        del h_states  # read by the products only
    else:
        pass
        d_U = matmul_grad_b_steps(d_U, d_U_steps, U)
"""

from __future__ import annotations

import gast

from .. import ir
from ..ir.syntax import call_to, clone, walk
from .batched_steps import restores

_STEPS = frozenset({"matmul_grad_b_steps", "matmul_grad_a_steps"})


def stack_step_operands(backward, tapes, namer) -> list:
    """``backward`` with the per-step operands that each loop :mod:`.steady_loops`
    wrote out collects read from its stacked tape (see the module
    docstring).  ``tapes``: the indexed tapes' names."""
    out = []
    k = 0
    while k < len(backward):
        stmt = backward[k]
        out.append(stmt)
        k += 1
        if not getattr(stmt, "steady_loop", False):
            continue
        end = k
        while end < len(backward) and _products(backward[end]) is not None:
            end += 1
        if end > k and _rewrite(stmt, backward[k:end], _fresh_lists(out[:-1]), tapes, namer):
            k = end
    return out


def _fresh_lists(before) -> set:
    """The names bound to a new, empty list (``L = StepTerms()``, ``L = []``)
    by a statement of ``before`` that no later one of them mentions: lists
    that hold, when the loop after ``before`` starts, no step of another."""
    fresh, seen = set(), set()
    for stmt in reversed(before):
        value = getattr(stmt, "value", None)
        if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 \
                and isinstance(stmt.targets[0], gast.Name) and stmt.targets[0].id not in seen \
                and ((isinstance(value, gast.List) and not value.elts)
                     or (isinstance(value, gast.Call) and isinstance(value.func, gast.Name)
                         and value.func.id == "StepTerms" and not value.args
                         and not value.keywords)):
            fresh.add(stmt.targets[0].id)
        seen.update(ir.names_in(stmt))
    return fresh


def _products(stmt):
    """``(steps list, keywords)`` of ``d = matmul_grad_*_steps(d, steps, w, ...)``, else None."""
    value = getattr(stmt, "value", None)
    if isinstance(stmt, gast.Assign) and isinstance(value, gast.Call) \
            and isinstance(value.func, gast.Name) and value.func.id in _STEPS \
            and len(value.args) == 3 and isinstance(value.args[1], gast.Name):
        return value.args[1].id, {kw.arg for kw in value.keywords}
    return None


def _appended(stmt):
    """``(list, cotangent, operand)`` names of ``L.append((g, a))``, else None."""
    call = getattr(stmt, "value", None)
    if isinstance(stmt, gast.Expr) and isinstance(call, gast.Call) \
            and isinstance(call.func, gast.Attribute) and call.func.attr == "append" \
            and isinstance(call.func.value, gast.Name) and len(call.args) == 1 \
            and not call.keywords and isinstance(call.args[0], gast.Tuple) \
            and len(call.args[0].elts) == 2 \
            and all(isinstance(e, gast.Name) for e in call.args[0].elts):
        g, a = call.args[0].elts
        return call.func.value.id, g.id, a.id
    return None


def _stacked_before(made, loop):
    """``{tape: name}`` of the tapes the statements before ``loop`` in ``made``
    stack as ``stacked_tape(tape, 1, name)`` (a term read before the restore),
    with the guard's ``stackable_tape(tape, 1, name)``."""
    checks = {_key(c) for c in _guard_checks(made) if c.func.id == "stackable_tape"}
    found = {}
    for stmt in made.body[:made.body.index(loop)]:
        for node in walk(stmt):
            key = _key(node)
            if key is not None and node.func.id == "stacked_tape" and key in checks:
                found[key[0]] = key[1]
    return found


def _key(node):
    """``(tape, name)`` of ``stacked_tape(tape, 1, name)`` or ``stackable_tape(...)``."""
    if isinstance(node, gast.Call) and isinstance(node.func, gast.Name) \
            and node.func.id in ("stacked_tape", "stackable_tape") and len(node.args) == 3 \
            and not node.keywords and isinstance(node.args[0], gast.Name) \
            and isinstance(node.args[1], gast.Constant) and node.args[1].value == 1 \
            and type(node.args[1].value) is int and isinstance(node.args[2], gast.Name):
        return node.args[0].id, node.args[2].id
    return None


def _guard_checks(made) -> list:
    test = made.test
    values = test.values if isinstance(test, gast.BoolOp) and isinstance(test.op, gast.And) \
        else [test]
    return [v for v in values if isinstance(v, gast.Call) and isinstance(v.func, gast.Name)]


def _rewrite(made, products, fresh, tapes, namer) -> bool:
    """Rewrite ``made`` (the guarded pair of loops) and move ``products``
    (the statements after it) into both its branches; False where nothing
    applies (``made`` left as it was).  ``fresh``: the lists empty when
    ``made`` starts."""
    loops = [s for s in made.body if isinstance(s, gast.For)]
    if len(loops) != 1:
        return False
    loop = loops[0]
    restored = restores(loop, tapes)
    stacked = _stacked_before(made, loop)
    consumed = {}   # steps list -> the product statements reading it as their steps
    for stmt in products:
        name, keywords = _products(stmt)
        consumed.setdefault(name, []).append((stmt, keywords))
    collected = {}  # steps list -> (position of its append, the operand's tape)
    for k, stmt in enumerate(loop.body):
        appended = _appended(stmt)
        if appended is None:
            continue
        steps, _, operand = appended
        where = restored.get(operand)
        if steps in collected or steps not in fresh or where is None or where[0] > k \
                or stacked.get(where[1]) != operand or steps not in consumed \
                or any("rows" in keywords for _, keywords in consumed[steps]):
            collected[steps] = None
            continue
        collected[steps] = (k, where[1])
    for k, stmt in enumerate(loop.body):   # a list read otherwise in the loop is left alone
        if _appended(stmt) is None:
            for name in ir.names_in(stmt):
                if name in collected:
                    collected[name] = None
    collected = {steps: found for steps, found in collected.items() if found is not None}
    if not collected:
        return False
    states = {}
    for tape in sorted({tape for _, tape in collected.values()}):
        operand = stacked[tape]
        states[tape] = namer.fresh(f"{operand}_states")
        _restack(made, tape, operand, states[tape])
    index = loop.target.id
    fast = []
    for stmt in products:
        fast.append(clone(stmt))
        fast[-1].comment = getattr(stmt, "comment", None)
        found = collected.get(_products(stmt)[0])
        if found is not None:
            fast[-1].value.keywords[:0] = [
                gast.keyword(arg="rows", value=ir.name(found[1])),
                gast.keyword(arg="stacked", value=ir.name(states[found[1]]))]
    for steps, (k, _) in collected.items():
        pair = loop.body[k].value.args[0]
        pair.elts[1] = ir.name(index)
    made.body.extend(fast + [_delete(name) for name in states.values()])
    made.orelse.extend(products)
    return True


def _restack(made, tape, operand, held) -> None:
    """Hold ``stacked_tape(tape, 1, operand)``, which the terms read, as
    ``held``, made once at the start of ``made``'s body."""
    def found(value):
        return _key(value) == (tape, operand) and value.func.id == "stacked_tape"

    for stmt in made.body:
        for node in walk(stmt):
            for field, value in gast.iter_fields(node):
                if found(value):
                    setattr(node, field, ir.name(held))
                elif isinstance(value, list):
                    value[:] = [ir.name(held) if found(v) else v for v in value]
    stack = ir.assign(held, call_to("stacked_tape", ir.name(tape), gast.Constant(value=1, kind=None),
                                    ir.name(operand)))
    stack.comment = f"{operand} as each step finds it: {tape}[1:], then {operand}"
    made.body.insert(0, stack)


def _delete(name) -> gast.Delete:
    stmt = gast.Delete(targets=[gast.Name(id=name, ctx=gast.Del(), annotation=None,
                                          type_comment=None)])
    stmt.comment = "read by the products only"
    return stmt


__all__ = ["stack_step_operands"]
