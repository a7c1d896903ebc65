"""How far a called function's updates of its arguments reach, through the
functions it calls in turn.

A helper that passes its argument on (``def mid(a): return setter(a)``)
changes its caller's array as much as ``setter`` does, however many calls
down; so does one passing a part of it (``setter(a[0])``) or a list holding
it (``viaitem([a])``, where ``viaitem`` sets ``lst[0][0]``).  Python shows the
caller the change, srcgrad's code for the helper works on a copy: the caller
must know, to refuse a read afterwards or to check it as it runs.

Every function reachable from the one asked about is summarised once
(:class:`Summary`: its own updates, and which of its parameters each call
passes where), by a ``summarize`` the caller supplies -- it knows how to read
one function's own updates (:func:`.argument_updates.call_summary`).  The
effects are the least fixed point over that call graph: a chain of any length
is followed to its end, and recursion stops where nothing new turns up, not
at some depth.  What cannot be followed -- a function whose source cannot be
read, a call whose arguments cannot be matched to its parameters
(``g(*args)``) -- counts as updating, deeply, everything passed to it: a wrong
guess costs a copy, a check or a refusal, never a wrong value.

    >>> s = {"setter": Summary(("p",), item=frozenset({"p"})),
    ...      "mid": Summary(("a",), calls=(("setter", (("p", "a", SAME),)),)),
    ...      "viaitem": Summary(("lst",), calls=(("setter", (("p", "lst", PART),)),)),
    ...      "top": Summary(("b", "c"), calls=(("mid", (("a", "b", SAME),)),
    ...                                        ("viaitem", (("lst", "c", HELD),))))}
    >>> found = effects("top", s.get)
    >>> sorted(found.item), sorted(found.deep)
    (['b', 'c'], ['c'])
    >>> sorted(effects("mid", {"mid": s["mid"]}.get).item)  # setter unreadable
    ['a']
"""

from __future__ import annotations

from dataclasses import dataclass

#: How an argument expression relates to a parameter's memory: the same memory
#: (``a``, ``h`` with ``h = a``), a part of it -- a view or an element (``a[0]``,
#: ``a[1:]``) -- or a container holding it (``[a]``).
SAME, PART, HELD = "same", "part", "held"


@dataclass(frozen=True)
class Summary:
    """One function on its own: ``params``, its parameters; ``item``, those
    whose elements it sets (through any name); ``deep``, those whose held
    arrays (or deeper parts) it may change; ``augmented``, those it changes
    with ``p += v``; ``calls``, for each call to a user function, ``(callee,
    ((callee_param, own_param, relation), ...))`` -- ``callee`` None where the
    call cannot be matched to the callee's parameters."""

    params: tuple
    item: frozenset = frozenset()
    deep: frozenset = frozenset()
    augmented: frozenset = frozenset()
    calls: tuple = ()


@dataclass(frozen=True)
class Effects:
    """What a function may do to its parameters, its calls included."""

    item: frozenset = frozenset()
    deep: frozenset = frozenset()
    augmented: frozenset = frozenset()


def effects(fn, summarize) -> Effects:
    """The parameters of ``fn`` that it, or a function it calls at any depth,
    updates (:class:`Effects`); ``summarize(f)`` is ``f``'s :class:`Summary`,
    or None where ``f`` cannot be read."""
    summaries, todo = {}, [fn]
    while todo:
        f = todo.pop()
        if id(f) in summaries:
            continue
        summary = summarize(f)
        summaries[id(f)] = (f, summary)  # (f kept alive: its id stays its own)
        if summary is not None:
            todo.extend(c for c, _ in summary.calls if c is not None)
    if summaries[id(fn)][1] is None:
        return Effects()
    state = {k: (set(s.item), set(s.deep), set(s.augmented))
             for k, (_, s) in summaries.items() if s is not None}
    changed = True
    while changed:
        changed = False
        for key, (_, summary) in summaries.items():
            if summary is None:
                continue
            item, deep, augmented = state[key]
            before = len(item) + len(deep) + len(augmented)
            for callee, pairs in summary.calls:
                theirs = None if callee is None else state.get(id(callee))
                for param, own, relation in pairs:
                    if theirs is None:  # not followed: it may change anything passed
                        item.add(own)
                        deep.add(own)
                        continue
                    _carry(theirs, param, own, relation, item, deep, augmented)
            changed = changed or len(item) + len(deep) + len(augmented) != before
    item, deep, augmented = state[id(fn)]
    return Effects(frozenset(item), frozenset(deep), frozenset(augmented))


def _carry(theirs, param, own, relation, item, deep, augmented) -> None:
    """What the callee doing ``theirs`` to ``param`` does to ``own``, passed
    there with ``relation`` to it."""
    their_item, their_deep, their_augmented = theirs
    if param in their_deep:  # whatever was passed, the memory below it changes
        item.add(own)
        deep.add(own)
    if relation == HELD:  # setter([a]) sets the list's item, never a's elements
        return
    if param in their_item:
        item.add(own)
        if relation == PART:  # setter(a[0]): an element of a changes
            deep.add(own)
    if param in their_augmented:  # shift(a), and conservatively shift(a[0])
        augmented.add(own)
