"""Releasing, in the adjoint sweep, each array after the statement that reads it last.

A local variable keeps its array alive until the function returns.  The
adjoint sweep reads the saved forward values and its own cotangents, most of
them once or twice, early or late; held to the end, they pile up: the
benchmark's 30-operation chain on 1e6 floats peaked at 30 arrays of 8 MB
where a careful hand-written gradient, which writes into the buffers of the
values it reads no more, peaks at 20.  Memory the allocator has handed back
is what the next array of that size gets, without new pages; an array made
while the heap is at its peak is mapped and faulted in, page by page, on
every call (4,700 more page faults a call, a tenth of the gradient's time).

So after each statement of the adjoint sweep, a ``del`` names the arrays
that statement reads for the last time, where the sweep would otherwise
hold them to its end::

    d_k = into_second(np.add, d_y, d_m / m * k)  # d_y + d_m / m * k, ...
    del d_y, d_m, m, k  # read no more

The line says, as the forward sweep's release does, when memory is given
back.  Names that hold no array worth a line are left alone: the arguments,
the output, values and cotangents known to be scalars (``scalars``),
passed to or returned by ``math`` functions (Python numbers), the seed and a
scalar cotangent kept unbroadcast (``grad_seed``, ``unreduced``); and so is
the array an ``into_first`` / ``into_second`` / ``into_operand`` in that
very statement writes into (the result's name holds it on).  Nor is there a
``del`` just before the ``return``, which releases everything.

Sound when: the ``del`` follows the statement that mentions the name last,
in the whole function -- read, assigned, restored or returned, in a loop or
branch of the adjoint sweep included -- so nothing can read it after; only
simple statements at the function's top level are followed by one, and
only in straight-line code (a function with a loop is left as it is, with
its tapes: the loop passes have their own shape); the name is bound
on every path there, by a top-level assignment before it; and no nested
function or lambda mentions it (a closure would read it when called, where
its text is not).  ``del`` unbinds a name only: an array a tape, a view, an
alias or the result still holds stays alive, unchanged, so every value is
the one it was.  Runs for the NumPy backend, with ``optimize`` on, in the
joint modes (as the forward sweep's release), not in anomaly mode
(``check_finite``), whose checks read each array after the statement that
makes it.  Tested by tests/memory/test_release_read.py.

    >>> import gast
    >>> from ..ir.emit import show_statements
    >>> body = gast.parse("a = np.sin(x)\\nb = np.exp(a)\\nc = np.sum(a * b)\\n"
    ...                   "d_c = grad_seed(c)\\nd_b = d_c * a\\n"
    ...                   "d_a = into_first(np.multiply, d_b, b)\\n"
    ...                   "d_x = d_a * np.cos(x) + d_c * b\\n"
    ...                   "return grad_like(d_x, x)").body
    >>> print(show_statements(release_read(body, 3, ["x"], {"c"})))
    a = np.sin(x)
    b = np.exp(a)
    c = np.sum(a * b)
    d_c = grad_seed(c)
    d_b = d_c * a
    del a  # read no more
    d_a = into_first(np.multiply, d_b, b)
    d_x = d_a * np.cos(x) + d_c * b
    return grad_like(d_x, x)
"""

from __future__ import annotations

import gast

from .. import ir
from ..ir.syntax import walk_nodes

#: Calls whose result is a scalar (the seed, a full reduction's cotangent kept one).
_SCALAR_CALLS = frozenset({"grad_seed", "unreduced", "summed_product_seed",
                           "summed_elementwise_seed"})
#: The in-place helpers and the position of the argument each one writes into.
_BUFFERS = {"into_first": 1, "into_second": 2, "into_operand": 1}
_SIMPLE = (gast.Assign, gast.AugAssign, gast.AnnAssign, gast.Expr)


def release_read(body, start, params, scalars=(), output=()) -> list:
    """``body`` with ``del`` after each top-level statement from ``body[start]`` on
    (the adjoint sweep) of the names it reads last (see the module docstring);
    ``output``: the names of the function's value, left alone as scalars are.
    A function with a loop is returned as it is."""
    last: dict[str, int] = {}
    closed: set[str] = set()   # mentioned by a nested function or lambda
    # (not the thunk a seed calls at once: summed_elementwise_seed(..., lambda: a * b))
    walks = [walk_nodes(stmt) for stmt in body]  # (each statement's nodes, read three times below)
    thunks = {id(n.args[2]) for nodes in walks for n in nodes if isinstance(n, gast.Call)
              and isinstance(n.func, gast.Name) and n.func.id == "summed_elementwise_seed"
              and len(n.args) == 3}
    floats: set[str] = set()   # passed to math.f: Python numbers
    for at, nodes in enumerate(walks):
        for n in nodes:
            if isinstance(n, gast.Name):
                last[n.id] = at
            elif isinstance(n, (gast.For, gast.While)):
                return body  # straight-line code only
            elif isinstance(n, (gast.FunctionDef, gast.Lambda)) and id(n) not in thunks:
                closed.update(m.id for m in walk_nodes(n) if isinstance(m, gast.Name))
            elif _math_call(n):
                floats.update(a.id for a in n.args if isinstance(a, gast.Name))
    keep = set(params) | set(scalars) | set(output) | closed | floats
    bound: set[str] = set()
    out = []
    for at, stmt in enumerate(body):
        out.append(stmt)
        if not isinstance(stmt, _SIMPLE):
            continue
        targets = _targets(stmt)
        if isinstance(stmt, gast.Assign):
            if _scalar_call(stmt.value) or _math_call(stmt.value):
                keep.update(targets)
            bound.update(targets)
        if at < start or at + 1 < len(body) and isinstance(body[at + 1], gast.Return):
            continue  # (the return releases everything)
        held = {arg.id for n in walks[at] if _helper(n)
                for arg in [n.args[_BUFFERS[n.func.id]]] if isinstance(arg, gast.Name)}
        dead = []
        for n in walks[at]:
            if isinstance(n, gast.Name) and last.get(n.id) == at and n.id in bound \
                    and n.id not in keep and n.id not in held and n.id not in targets \
                    and n.id not in dead:
                dead.append(n.id)
        if dead:
            release = gast.Delete(targets=[gast.Name(id=n, ctx=gast.Del(), annotation=None,
                                                     type_comment=None) for n in dead])
            release.comment = "read no more"
            out.append(release)
    return out


def _targets(stmt) -> set[str]:
    if isinstance(stmt, gast.Expr):
        return set()
    return set(ir.target_names(stmt))


def _scalar_call(node) -> bool:
    return isinstance(node, gast.Call) and isinstance(node.func, gast.Name) \
        and node.func.id in _SCALAR_CALLS


def _math_call(node) -> bool:
    return isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute) \
        and isinstance(node.func.value, gast.Name) and node.func.value.id == "math"


def _helper(node) -> bool:
    return isinstance(node, gast.Call) and isinstance(node.func, gast.Name) \
        and node.func.id in _BUFFERS and len(node.args) > _BUFFERS[node.func.id]
