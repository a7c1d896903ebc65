"""A steady adjoint loop's per-step cotangents written into the rows of its
terms array, which the weights' products after the loop then read as one
matrix.

After :mod:`.batched_steps`, the adjoint of ``for t in t1: h = np.tanh(xs[t]
@ W + h @ U)`` computes each step's pre-activation cotangent as a new small
array, ``d_t5 = d_h * h_terms[t]``, collects it for the weights' products
(``d_U_steps.append((d_t4, t))``, ``d_t4 = d_t5``), and after the loop
:func:`srcgrad.runtime.steps.matmul_grad_b_steps` joins the fifty arrays
into one matrix (a copy of each).  A careful hand gradient writes each
step's cotangent into a preallocated ``(T, B, H)`` array -- the one that
held tanh's derivatives, whose row ``t`` nothing reads after step ``t`` --
and forms each weight's gradient with one product of that array.  So does
this pass, where the term's row is read by that one product only::

    h_terms_fit = d_h.shape == h_terms.shape[1:]
    for t in reversed(t1):
        d_t5 = h_terms[t]  # h_terms's row of this step, which then holds d_h * h_terms[t]
        d_t5 = np.multiply(d_h, d_t5, d_t5) if h_terms_fit and d_h.dtype is d_t5.dtype else d_h * d_t5
        ...
        d_U_steps.append((d_t4, t))
    d_U = matmul_grad_b_steps(d_U, d_U_steps, U, rows=h_tape, stacked=h_states, cotangents=h_terms)
    del h_terms  # read by the products only

A step then makes one array less (the ufunc with its output given
positionally costs less than the product it replaces), and the products
read the cotangents without joining fifty copies: 3-5% of the RNN
benchmark's gradient, and one array of every step's cotangent less to
fault in.

Sound -- each step's cotangent has the numbers, dtype and shape of the
product it replaces, and the gradient is bit for bit the one without the
pass -- because:

* ``np.multiply(a, r, r)`` is ``a * r`` with the result written into ``r``:
  the same ufunc loop on the same operands in the same order (NumPy makes
  the result as if the operands did not overlap).  It is taken only where
  ``a`` is an exact ``np.ndarray`` of ``r``'s shape and dtype, so that the
  product has ``r``'s dtype and shape (no promotion, no broadcast, no
  subclass's operator); else the step computes ``a * r`` as it did.  The
  dtype is checked at each step (``a.dtype is r.dtype``); the rest once,
  before the loop: ``a`` is a name that :mod:`.steady_loops`' guard proves
  an exact ``np.ndarray`` of the shape it has at the guard at the start of
  every step (``steady_entries``: its description's checks made, its shape at
  the end of a step checked), the step assigns it nowhere before the
  product, and nothing between the guard and the loop does; the check
  compares that shape with a row's;
* the row is the term's only read in the loop: the term array (a new array
  :mod:`.batched_steps` made, one row per step) is mentioned once in the
  body, by this statement, at row ``t``, so row ``t`` is read by step ``t``
  alone, before it is written; nothing writes into an array of a loop's
  body afterwards (:mod:`.inplace_adjoint` leaves loops alone), so the row
  keeps the cotangent;
* the product after the loop takes the term array as the steps' matrix only
  where every cotangent it collected is a view of it, one per row
  (:func:`srcgrad.runtime.steps._written_rows`): step ``t``'s cotangent is
  row ``t``, or, where the step computed ``a * r``, a new array, and then the
  cotangents are joined as before -- the same matrix either way.  A list is
  given ``cotangents=`` only where the loop appends to it once per step the
  product's name or a copy of it (``d_t4 = d_t5``, neither assigned again
  before the append);
* the helper need not walk the steps to know that (26 us of the RNN
  benchmark's gradient, in the loop's wake): a step that computes ``a * r``
  clears a flag set before the loop (``(h_terms_rows := False) or a * r``,
  nothing in a step that writes its row), and the product is given it
  (``written=h_terms_rows``) with the loop's iterations (``order=t1``)
  where the loop is ``for t in reversed(t1)``, runs every statement of its
  body once per step (no ``break``, ``continue``, ``return``, ``try``, no
  assignment to ``t``) and names the list once, in ``L.append((g, t))``:
  with the flag still set, the list holds, last step first, row ``t`` and
  ``t`` for each ``t`` of ``t1`` (:func:`srcgrad.runtime.steps._rows_b`
  checks ``t1`` is ``range(n)`` and the list has ``n`` entries);
* the term array is deleted after the products instead of after the loop.

The products must follow the loop (in its guarded branch, where
:mod:`.step_operands` moved them, or right after the pair of loops, from
where they move into both branches as there).  Runs after
:mod:`.step_operands`, in the same cases.  Tested by
tests/optimize/test_step_cotangents.py.

    >>> from ..ir.emit import show_statements
    >>> from ..ir.naming import Namer
    >>> sweep = gast.parse(
    ...     "if len(t1) and stackable_tape(h_tape, 1, h):\\n"
    ...     "    h_terms = 1 - stacked_tape(h_tape, 1, h) ** 2\\n"
    ...     "    for t in reversed(t1):\\n"
    ...     "        d_t5 = d_h * h_terms[t]\\n"
    ...     "        h = h_tape[t]\\n"
    ...     "        d_t4 = d_t5\\n"
    ...     "        d_h = d_t4 @ U.T\\n"
    ...     "        d_U_steps.append((d_t4, t))\\n"
    ...     "    del h_terms\\n"
    ...     "    d_U = matmul_grad_b_steps(d_U, d_U_steps, U, rows=h_tape)\\n"
    ...     "else:\\n"
    ...     "    pass\\n").body
    >>> sweep[0].steady_loop = True
    >>> sweep[0].steady_entries = frozenset({"d_h", "U"})   # what steady_loops proved
    >>> print(show_statements(write_step_cotangents(sweep, Namer())))
    if len(t1) and stackable_tape(h_tape, 1, h):
        h_terms = 1 - stacked_tape(h_tape, 1, h) ** 2
        h_terms_fit = d_h.shape == h_terms.shape[1:]  # d_h has this shape at every step (the guard's proof): a row's
        h_terms_rows = True  # every step's cotangent its row of h_terms: False once one is not
        for t in reversed(t1):
            d_t5 = h_terms[t]  # h_terms's row of this step, which then holds d_h * h_terms[t]
            d_t5 = np.multiply(d_h, d_t5, d_t5) if h_terms_fit and d_h.dtype is d_t5.dtype else (h_terms_rows := False) or d_h * d_t5
            h = h_tape[t]
            d_t4 = d_t5
            d_h = d_t4 @ U.T
            d_U_steps.append((d_t4, t))
        d_U = matmul_grad_b_steps(d_U, d_U_steps, U, rows=h_tape, cotangents=h_terms, written=h_terms_rows, order=t1)
        del h_terms  # read by the products only
    else:
        pass

Before the pass, the loop computed ``d_t5 = d_h * h_terms[t]``, a new array
each step, and the product joined the steps' cotangents.  A ``d_h`` that
the guard does not prove (not in ``steady_entries``) leaves the loop as it
is:

    >>> sweep = gast.parse(
    ...     "if len(t1):\\n"
    ...     "    h_terms = 1 - stacked_tape(h_tape, 1, h) ** 2\\n"
    ...     "    for t in reversed(t1):\\n"
    ...     "        d_t5 = d_h * h_terms[t]\\n"
    ...     "        d_U_steps.append((d_t5, t))\\n"
    ...     "    del h_terms\\n"
    ...     "    d_U = matmul_grad_b_steps(d_U, d_U_steps, U, rows=h_tape)\\n"
    ...     "else:\\n"
    ...     "    pass\\n").body
    >>> sweep[0].steady_loop = True
    >>> "np.multiply" in show_statements(write_step_cotangents(sweep, Namer()))
    False
"""

from __future__ import annotations

import gast

from .. import ir
from ..ir.syntax import clone, source_of, walk

_PRODUCT = "matmul_grad_b_steps"


def write_step_cotangents(backward, namer) -> list:
    """``backward`` with the cotangents of each loop that :mod:`.steady_loops`
    wrote out, and :mod:`.batched_steps` gave terms, written into the terms'
    rows where the products after the loop read them (module docstring)."""
    out = []
    k = 0
    while k < len(backward):
        stmt = backward[k]
        out.append(stmt)
        k += 1
        if not getattr(stmt, "steady_loop", False):
            continue
        end = k   # products right after the pair of loops (step_operands left them there)
        while end < len(backward) and _product(backward[end]) is not None:
            end += 1
        if _rewrite(stmt, backward[k:end], namer):
            k = end
    return out


def _product(stmt):
    """The steps list of ``d = matmul_grad_b_steps(d, steps, w, ...)``, else None."""
    value = getattr(stmt, "value", None)
    if isinstance(stmt, gast.Assign) and isinstance(value, gast.Call) \
            and isinstance(value.func, gast.Name) and value.func.id == _PRODUCT \
            and len(value.args) == 3 and isinstance(value.args[1], gast.Name) \
            and all(kw.arg != "cotangents" for kw in value.keywords):
        return value.args[1].id
    return None


def _terms(made, loop) -> set:
    """The names the statements of ``made`` before ``loop`` assign and a
    ``del`` right after it deletes: :mod:`.batched_steps`' terms."""
    at = made.body.index(loop)
    assigned = {n for stmt in made.body[:at] for n in ir.target_names(stmt)}
    deleted = set()
    for stmt in made.body[at + 1:]:
        if not isinstance(stmt, gast.Delete):
            break
        deleted.update(t.id for t in stmt.targets if isinstance(t, gast.Name))
    return assigned & deleted


def _row_product(stmt, index, terms):
    """``(target, other, term, term first)`` of ``g = a * X[t]`` or ``g = X[t]
    * a`` with ``X`` a term and ``a`` a name other than ``g``, else None."""
    if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], gast.Name) and isinstance(stmt.value, gast.BinOp)
            and isinstance(stmt.value.op, gast.Mult)):
        return None
    target, value = stmt.targets[0].id, stmt.value
    for row, other, first in ((value.right, value.left, False), (value.left, value.right, True)):
        if isinstance(row, gast.Subscript) and isinstance(row.value, gast.Name) \
                and row.value.id in terms and isinstance(row.slice, gast.Name) \
                and row.slice.id == index and isinstance(other, gast.Name) \
                and other.id not in (target, row.value.id, index):
            return target, other.id, row.value.id, first
    return None


def _collected(body, start, name) -> dict:
    """``{steps list: True}`` for the lists that ``body`` (from ``start`` on)
    appends ``name``'s value to, once each, by ``L.append((c, i))`` with ``c``
    ``name`` or a copy of it that nothing assigned again in between; a list
    appended anything else, or more than once, maps to False."""
    same, found = {name}, {}
    for stmt in body[start:]:
        appended = _appended(stmt)
        if appended is not None:
            steps, value = appended
            found[steps] = steps not in found and value in same
            continue
        for target in ir.target_names(stmt):
            same.discard(target)
            if isinstance(stmt, gast.Assign) and isinstance(stmt.value, gast.Name) \
                    and stmt.value.id in same:
                same.add(target)
    return found


def _appended(stmt):
    """``(list, cotangent)`` names of ``L.append((g, i))``, else None."""
    call = getattr(stmt, "value", None)
    if isinstance(stmt, gast.Expr) and isinstance(call, gast.Call) \
            and isinstance(call.func, gast.Attribute) and call.func.attr == "append" \
            and isinstance(call.func.value, gast.Name) and len(call.args) == 1 \
            and not call.keywords and isinstance(call.args[0], gast.Tuple) \
            and len(call.args[0].elts) == 2 and isinstance(call.args[0].elts[0], gast.Name):
        return call.func.value.id, call.args[0].elts[0].id
    return None


def _rewrite(made, after, namer) -> bool:
    """Rewrite the fast loop of ``made`` and the products of its body (and
    ``after``, the products that follow ``made``, moved into both branches);
    False where nothing applies."""
    loops = [s for s in made.body if isinstance(s, gast.For)]
    if len(loops) != 1:
        return False
    loop = loops[0]
    terms = _terms(made, loop)
    if not terms:
        return False
    index = loop.target.id
    mentions: dict = {}
    for stmt in loop.body:
        for node in walk(stmt):
            if isinstance(node, gast.Name) and node.id in terms:
                mentions[node.id] = mentions.get(node.id, 0) + 1
    at = made.body.index(loop)
    products = [s for s in made.body[at + 1:] if _product(s) is not None] + list(after)
    steps_of = {_product(s) for s in products}
    # the names every step finds as they are at the guard (an exact np.ndarray of that shape)
    steady = set(getattr(made, "steady_entries", ())) \
        - {n for stmt in made.body[:at] for n in ir.target_names(stmt)}
    rewritten: dict = {}   # steps list -> the term array its cotangents are rows of
    body, fits = [], []
    flags: dict = {}   # steps list -> the flag a step that cannot write its row clears
    assigned: set = set()   # by the step's statements before this one
    for k, stmt in enumerate(loop.body):
        found = _row_product(stmt, index, terms)
        before, assigned = assigned, assigned | set(ir.target_names(stmt))
        if found is None or mentions[found[2]] != 1 or found[1] not in steady - before:
            body.append(stmt)
            continue
        target, other, term, first = found
        lists = {steps for steps, once in _collected(loop.body, k + 1, target).items()
                 if once and steps in steps_of}
        if not lists:
            body.append(stmt)
            continue
        fit = namer.fresh(f"{term}_fit")
        fits.append(ir.assign(fit, gast.parse(
            f"{other}.shape == {term}.shape[1:]").body[0].value))
        fits[-1].comment = f"{other} has this shape at every step (the guard's proof): a row's"
        flag = namer.fresh(f"{term}_rows")
        fits.append(ir.assign(flag, gast.Constant(value=True, kind=None)))
        fits[-1].comment = f"every step's cotangent its row of {term}: False once one is not"
        body.extend(_written(stmt, target, other, term, index, first, fit, flag))
        rewritten.update(dict.fromkeys(lists, term))
        flags.update(dict.fromkeys(lists, flag))
    if not rewritten:
        return False
    order = _ordered(loop, index)
    loop.body[:] = body
    made.body[at:at] = fits
    at += len(fits)
    for stmt in after:
        stmt_fast = clone(stmt)
        stmt_fast.comment = getattr(stmt, "comment", None)
        made.body.append(stmt_fast)
    made.orelse.extend(after)
    for stmt in made.body[at + 1:]:
        steps = _product(stmt)
        term = rewritten.get(steps) if steps is not None else None
        if term is not None:
            stmt.value.keywords.append(gast.keyword(arg="cotangents", value=ir.name(term)))
            if order is not None and _appended_once(loop, steps, index) \
                    and order not in {n for s in made.body for n in ir.target_names(s)}:
                stmt.value.keywords.append(gast.keyword(arg="written", value=ir.name(flags[steps])))
                stmt.value.keywords.append(gast.keyword(arg="order", value=ir.name(order)))
    _delete_after_products(made, at, set(rewritten.values()))
    return True


def _ordered(loop, index):
    """``t1`` of ``for t in reversed(t1):`` whose body neither assigns ``t``
    nor leaves a step early (``break``, ``continue``): every step runs each
    statement of the body once, with ``t`` its iteration; else None."""
    it = loop.iter
    if not (isinstance(it, gast.Call) and isinstance(it.func, gast.Name)
            and it.func.id == "reversed" and len(it.args) == 1 and not it.keywords
            and isinstance(it.args[0], gast.Name)) or loop.orelse:
        return None
    for node in (n for stmt in loop.body for n in walk(stmt)):
        if isinstance(node, (gast.Break, gast.Continue, gast.Return, gast.Yield,
                             gast.YieldFrom, gast.Try, gast.With)):
            return None
        if isinstance(node, gast.Name) and node.id == index and not isinstance(node.ctx, gast.Load):
            return None
    return it.args[0].id


def _appended_once(loop, steps, index) -> bool:
    """Whether ``steps`` is named once in ``loop``'s body, by a statement of
    the body itself: ``steps.append((g, t))``, ``t`` the loop's index -- each
    step adds its own entry, and nothing else touches the list."""
    mentions = [n for stmt in loop.body for n in walk(stmt)
                if isinstance(n, gast.Name) and n.id == steps]
    return len(mentions) == 1 and any(
        _appended(stmt) is not None and _appended(stmt)[0] == steps
        and isinstance(stmt.value.args[0].elts[1], gast.Name)
        and stmt.value.args[0].elts[1].id == index for stmt in loop.body)


def _written(stmt, target, other, term, index, first, fit, flag) -> list:
    """``g = X[t]`` then ``g = np.multiply(a, g, g) if fit and a.dtype is
    g.dtype else (flag := False) or a * g`` (the operands in ``stmt``'s
    order): a step that computes ``a * g`` clears ``flag``, which the products
    after the loop then read (``written=``)."""
    row = ir.assign(target, gast.Subscript(value=ir.name(term), slice=ir.name(index),
                                           ctx=gast.Load()))
    row.comment = f"{term}'s row of this step, which then holds {source_of(stmt.value)}"
    operands = (target, other) if first else (other, target)
    text = (f"np.multiply({operands[0]}, {operands[1]}, {target}) "
            f"if {fit} and {other}.dtype is {target}.dtype "
            f"else ({flag} := False) or {operands[0]} * {operands[1]}")
    product = ir.assign(target, gast.parse(text).body[0].value)
    for attr, value in vars(stmt).items():   # the passes' marks (not the comment)
        if attr not in ("targets", "value", "type_comment", "comment") and not attr.startswith("_"):
            setattr(product, attr, value)
    # a C-contiguous, aligned row of a new array, or a new array: laid out as an
    # operation's result is, where optimize/steady_products.py asks
    product.row_of_new_array = True
    return [row, product]


def _delete_after_products(made, at, terms) -> None:
    """Move the ``del`` of ``terms`` right after the loop to after the last
    product of ``made``'s body that reads one."""
    for stmt in made.body[at + 1:]:
        if isinstance(stmt, gast.Delete):
            stmt.targets[:] = [t for t in stmt.targets
                               if not (isinstance(t, gast.Name) and t.id in terms)]
    made.body[:] = [s for s in made.body if not (isinstance(s, gast.Delete) and not s.targets)]
    last = max(k for k, stmt in enumerate(made.body)
               if _product(stmt) is not None or any(
                   kw.arg == "cotangents" for kw in getattr(getattr(stmt, "value", None),
                                                            "keywords", ())))
    names = [gast.Name(id=name, ctx=gast.Del(), annotation=None, type_comment=None)
             for name in sorted(terms)]
    following = made.body[last + 1] if last + 1 < len(made.body) else None
    if isinstance(following, gast.Delete) \
            and getattr(following, "comment", None) == "read by the products only":
        following.targets[:0] = names   # step_operands' del of the stacked states
        return
    gone = gast.Delete(targets=names)
    gone.comment = "read by the products only"
    made.body.insert(last + 1, gone)


__all__ = ["write_step_cotangents"]
