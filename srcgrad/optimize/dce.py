"""Dead-code elimination over generated statements.

Rule inlining produces every cotangent a rule can compute and every local it
needs; the reverse pass asks only for the cotangents of active operands, and
this pass removes whatever is then unused.  It runs backwards with the set of
live names, understands ``if`` statements (from rules with runtime tests) and
keeps every statement ``keep`` vouches for (calls with side effects in the
forward sweep).  It also cleans the forward sweep itself: the user's dead code
goes, with every value neither the output nor the adjoint sweep reads.

Sound when (what the generated forward sweep relies on to compute the user's
value bit for bit):

* every statement that acts beyond the names it assigns is kept by ``keep``
  (:func:`..analysis.activity.has_effect`: unknown calls, tape pushes); a known primitive
  is taken to be pure.  It is also taken not to raise: a dead ``t = xs[10]``
  that raises IndexError in the function is dropped, and the generated code
  returns a value where the function raised;
* an in-place update ``x[i] = v`` / ``xs.append(v)`` changes only what ``x``
  names: no alias of ``x`` (a view, a plain copy) is read after it.
  :func:`..analysis.aliasing.check_aliases` refuses programs where one is, and the
  adjoint sweep's restores into shared arrays are kept by ``keep``;
* loops: a name assigned in a loop body keeps its name across iterations, so
  what is live at the end of an iteration is what is live after the loop,
  what the next iteration reads before assigning it (a fixed point) and a
  while loop's test; a for loop's target stays live when live after the loop
  (zero iterations leave the earlier value).  Branches: the union of both.

Tested by tests/optimize/test_optimize_soundness.py (``read_on_next_iteration``,
``while_test_reads_body_value``, ``update_in_loop``, ``loop_with_break``).

    >>> import gast
    >>> tree = gast.parse("a = x * 2\\nb = a + 1\\nc = x - 1\\nd = c * b")
    >>> print(show_statements(eliminate_dead(tree.body, {"b"})))
    a = x * 2
    b = a + 1
"""

from __future__ import annotations

import gast

from .. import ir
from ..ir.emit import show_statements  # noqa: F401 - used by the docstring examples
from ..ir.syntax import clone, walk, walk_nodes


def _defs(stmt) -> set[str]:
    names = set()
    for target in getattr(stmt, "targets", []):
        names.update(ir.stored_names(target))
    return names


def _uses(node) -> set[str]:
    """The names ``node`` (an assignment: its value) loads: ``ir.names_in`` as a
    set, made directly (every statement of both sweeps asks, in each DCE pass)."""
    if isinstance(node, gast.Assign):
        node = node.value
    if type(node) is gast.Name:
        return set() if isinstance(node.ctx, gast.Store) else {node.id}
    return {n.id for n in walk_nodes(node) if type(n) is gast.Name
            and not isinstance(n.ctx, gast.Store)}


def _header_uses(stmt) -> set[str]:
    if isinstance(stmt, gast.For):
        return set(ir.names_in(stmt.iter))
    return set(ir.names_in(stmt.test))


def _all_uses(stmts) -> set[str]:
    names = set()
    for stmt in ir.walk_statements(stmts):
        if isinstance(stmt, (gast.If, gast.For, gast.While)):
            names |= _header_uses(stmt)
        else:
            names |= _uses(stmt)
    return names


def eliminate_dead(stmts, live, keep=lambda stmt: False) -> list:
    """``stmts`` without the assignments whose values nothing in ``live`` needs.

    ``live`` is updated in place to the names live before ``stmts``.  Inside a
    loop, every name read anywhere in the loop counts as live throughout it (a
    value may be read by the next iteration): simple, and safe.
    """
    live = live if isinstance(live, set) else set(live)
    kept = []
    for stmt in reversed(stmts):
        if isinstance(stmt, gast.If):
            live_body, live_else = set(live), set(live)
            stmt.body = eliminate_dead(stmt.body, live_body, keep)
            stmt.orelse = eliminate_dead(stmt.orelse, live_else, keep)
            if not _has_effect(stmt.body) and not _has_effect(stmt.orelse):
                continue
            if not stmt.body:
                stmt.body = [gast.Pass()]
            live.clear()
            live.update(live_body | live_else | _header_uses(stmt))
            kept.append(stmt)
            continue
        if isinstance(stmt, (gast.For, gast.While)):
            # Live at the end of an iteration: what is live after the loop, what the
            # next iteration reads before assigning it (a fixed point), and for a
            # while loop its test; a for header runs once, before the first iteration.
            retest = _header_uses(stmt) if isinstance(stmt, gast.While) else set()
            inside = set(live) | retest
            while True:
                start = set(inside)
                eliminate_dead(clone(stmt.body), start, keep)
                again = set(live) | retest | start
                if again <= inside:
                    break
                inside |= again
            stmt.body = eliminate_dead(stmt.body, set(inside), keep)
            defined = set(ir.stored_names(stmt.target)) if isinstance(stmt, gast.For) else set()
            if not _has_effect(stmt.body) and not defined & live:
                continue
            if not stmt.body:  # kept for its target, read after the loop
                stmt.body = [gast.Pass()]
            # the loop assigns its target first (unless it runs zero times: then a
            # target live after the loop keeps its earlier value, so it stays live)
            live.update((inside - (defined - live)) | _header_uses(stmt))
            kept.append(stmt)
            continue
        if ir.is_update(stmt):  # x[i] = v: needed while x is; reads x, i and v
            if not (set(ir.target_names(stmt)) & live) and not keep(stmt):
                continue
            target = stmt.targets[0] if isinstance(stmt, gast.Assign) else stmt
            live.update(_uses(stmt) | set(ir.names_in(target)))
            kept.append(stmt)
            continue
        defs = _defs(stmt)
        if isinstance(stmt, gast.Assign) and not (defs & live) and not keep(stmt):
            continue
        live.difference_update(defs)
        live.update(_uses(stmt))
        kept.append(stmt)
    kept.reverse()
    return kept


def live_before(stmts, live) -> set[str]:
    """The names live before ``stmts`` when every statement is kept: what
    ``eliminate_dead(stmts, live, keep=lambda s: True)`` leaves in ``live``,
    without copying or changing ``stmts``.

        >>> import gast
        >>> sorted(live_before(gast.parse("a = x * 2\\nb = a + y").body, {"b"}))
        ['x', 'y']
    """
    live = set(live)
    for stmt in reversed(stmts):
        if isinstance(stmt, gast.If):
            live = live_before(stmt.body, live) | live_before(stmt.orelse, live) \
                | _header_uses(stmt)
        elif isinstance(stmt, (gast.For, gast.While)):
            retest = _header_uses(stmt) if isinstance(stmt, gast.While) else set()
            inside = live | retest
            while True:  # as in eliminate_dead: the next iteration's reads, to a fixed point
                again = live | retest | live_before(stmt.body, inside)
                if again <= inside:
                    break
                inside |= again
            defined = set(ir.stored_names(stmt.target)) if isinstance(stmt, gast.For) else set()
            live.update((inside - (defined - live)) | _header_uses(stmt))
        elif ir.is_update(stmt):
            target = stmt.targets[0] if isinstance(stmt, gast.Assign) else stmt
            live.update(_uses(stmt) | set(ir.names_in(target)))
        else:
            live.difference_update(_defs(stmt))
            live.update(_uses(stmt))
    return live


def _has_effect(stmts) -> bool:
    return any(not isinstance(s, gast.Pass) for s in stmts)


def propagate_copies(stmts) -> list:
    """Replace reads of ``a`` after ``a = b`` by ``b`` while neither is reassigned.

    The reverse pass assigns pass-through cotangents by copying (the adjoint of
    ``t = a + b`` is ``d_a = d_t``, ``d_b = d_t``); after propagation the copies
    are dead and :func:`eliminate_dead` removes them.  It runs on the adjoint
    sweep (with its restores and recomputed forward statements).

    Sound when: after ``a = b`` both names refer to one object until either is
    rebound (an in-place update through one is seen through the other, so it
    does not end the copy), and the rewrite stops at every rebinding:

    * straight-line code: a copy ends at the first statement that stores ``a``
      or ``b`` (a tuple target, a restore ``b = b_tape.pop()`` included);
    * an ``if``/``for``/``while`` (names are reused inside, not renamed): a copy
      from before it is applied inside only if neither name is stored anywhere
      in it -- a rebinding later in a loop body reaches the body's start
      through the back-edge -- and is dropped after it otherwise;
    * a copy made inside a block never leaves it: each body starts with none,
      so a copy from the end of a loop body never reaches the next iteration;
    * no nested scope rebinds the names (comprehensions are loops by now);
    * a move ``a = b`` while ``b`` still copies ``a`` rebinds ``a`` to the
      object it holds: it is dropped, and the copy goes on.

    Tested by tests/optimize/test_optimize_soundness.py (``swap_in_loop``,
    ``copy_source_rebound_in_loop``, ``copy_before_loop_that_rebinds_it``).

        >>> import gast
        >>> tree = gast.parse("d_a = d_t\\nd_b = d_a * 2\\nd_a = d_a + 1")
        >>> print(show_statements(propagate_copies(tree.body)))
        d_a = d_t
        d_b = d_t * 2
        d_a = d_t + 1

    A move back to where a copy came from is dropped: ``d_b = d_t7`` after
    ``d_t7 = d_b`` (the adjoint of ``b = t7`` around the restore of ``b``), with
    neither rebound in between, leaves ``d_b`` holding what it holds, and
    ``d_t7`` is then dead:

        >>> tree = gast.parse("d_t7 = d_b\\nb = b_tape.pop()\\nd_b = d_t7\\n"
        ...                   "d_a = d_a - d_t7 * math.sin(a)")
        >>> print(show_statements(propagate_copies(tree.body)))
        d_t7 = d_b
        b = b_tape.pop()
        d_a = d_a - d_b * math.sin(a)

    A loop that rebinds the source keeps the reads of the copy, before the loop
    (the next iteration would see the new ``d_t``) and after it:

        >>> tree = gast.parse("d_a = d_t\\nfor i in r:\\n    d_b = d_a * 2\\n"
        ...                   "    d_t = d_b\\nd_c = d_a + 1")
        >>> print(show_statements(propagate_copies(tree.body)))
        d_a = d_t
        for i in r:
            d_b = d_a * 2
            d_t = d_b
        d_c = d_a + 1
    """
    copies: dict[str, str] = {}
    sources: dict[str, set[str]] = {}  # b -> the names a copying it (no scan of copies)

    def end_copies(defined):
        """Forget each copy whose name or source ``defined`` rebinds."""
        for name in defined:
            source = copies.pop(name, None)
            if source is not None:
                sources[source].discard(name)
            for copy in sources.pop(name, ()):
                del copies[copy]

    kept = []
    for stmt in stmts:
        kept.append(stmt)
        if isinstance(stmt, (gast.If, gast.For, gast.While)):
            defined = set()
            for node in walk_nodes(stmt):
                if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
                    defined.add(node.id)
            end_copies(defined)
            _rename(stmt, copies)
            stmt.body = propagate_copies(stmt.body)
            stmt.orelse = propagate_copies(stmt.orelse)
            continue
        simple = isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 \
            and isinstance(stmt.targets[0], gast.Name) and isinstance(stmt.value, gast.Name)
        if simple and copies.get(stmt.value.id) == stmt.targets[0].id:
            kept.pop()  # a = b where b copies a: a move undoing one, a already holds b
            continue
        _rename(stmt.value if isinstance(stmt, gast.Assign) else stmt, copies)
        if ir.is_update(stmt) and isinstance(stmt, gast.Assign):
            _rename(stmt.targets[0].slice, copies)
        end_copies(_defs(stmt) | set(ir.target_names(stmt)))
        if simple and stmt.targets[0].id != stmt.value.id:
            copies[stmt.targets[0].id] = stmt.value.id
            sources.setdefault(stmt.value.id, set()).add(stmt.targets[0].id)
    stmts[:] = kept
    return stmts


def _rename(tree, copies) -> None:
    """Each name ``tree`` loads that ``copies`` maps, renamed in place (a walk:
    a ``NodeTransformer`` per statement was a tenth of the adjoint's passes)."""
    if not copies:
        return
    for node in walk_nodes(tree):
        if type(node) is gast.Name and node.id in copies and isinstance(node.ctx, gast.Load):
            node.id = copies[node.id]


def drop_zero_starts(stmts) -> list:
    """``d = 0.0`` followed, in the same block, by ``d = d + x`` -> ``d = x``.

    The reverse pass zeroes a cotangent wherever a loop or branch may leave it
    unassigned; when the next statement to touch it in straight-line code is an
    accumulation, the zero was only a starting point and the sum reads better
    as an assignment.

    Sound when the zero is the value the accumulation reads: the search stops
    at the first statement that reads or assigns ``d`` and at any ``if``/``for``/
    ``while`` (a loop body's zero start may be read by a back-edge, a branch's
    may not run), and ``x`` does not read ``d``.  ``0.0 + x`` is ``x`` exactly
    except for the sign of a zero (``0.0 + -0.0`` is ``0.0``) and the type of an
    integer ``x``: differences in a cotangent only, never in the value.

        >>> import gast
        >>> tree = gast.parse("d_h = 0.0\\nh = h_tape.pop()\\nd_h = d_h + g * W")
        >>> print(show_statements(drop_zero_starts(tree.body)))
        h = h_tape.pop()
        d_h = g * W
    """
    out = list(stmts)
    for stmt in out:
        if isinstance(stmt, (gast.If, gast.For, gast.While)):
            stmt.body = drop_zero_starts(stmt.body)
            stmt.orelse = drop_zero_starts(stmt.orelse)
    i = 0
    while i < len(out):
        stmt = out[i]
        if _is_zero_start(stmt):
            var = stmt.targets[0].id
            for later in out[i + 1:]:
                if isinstance(later, (gast.If, gast.For, gast.While)):
                    break
                if var in _uses(later) or var in _defs(later):
                    value = getattr(later, "value", None)
                    if var in _defs(later) and isinstance(value, gast.BinOp) \
                            and isinstance(value.op, gast.Add) \
                            and isinstance(value.left, gast.Name) and value.left.id == var \
                            and var not in ir.names_in(value.right):
                        later.value = value.right
                        del out[i]
                        i -= 1
                    break
        i += 1
    return out


def _is_zero_start(stmt) -> bool:
    return isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 \
        and isinstance(stmt.targets[0], gast.Name) and isinstance(stmt.value, gast.Constant) \
        and stmt.value.value == 0.0 and type(stmt.value.value) is float
