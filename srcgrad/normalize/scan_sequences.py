"""Which names of a function certainly hold a list or tuple, for the scan.

:class:`.memory_scan.Scan` relates each name to the memory of the names its
value was made from; ``zs = xs + ys`` is a new list holding the items of both
where ``xs`` or ``ys`` is a list, and a new array sharing nothing where they are
arrays.  This mixin tells the two apart from how the names are bound: a
concatenation (repetition) is one where an operand is certainly a sequence --
Python's ``+`` of a list and anything else is a TypeError -- and arithmetic
otherwise, as :mod:`.sequences` types the operation later (its run-time check
refuses a list there).  Apart so that the scan stays under the size mark.

    >>> import gast
    >>> from ..frontend.parse import MISSING
    >>> from .memory_scan import Scan
    >>> func = gast.parse("def f(x, ws):\\n    xs = [x]\\n    u = x + x\\n    zs = xs + ws"
    ...                   "\\n    vs = ws + ws").body[0]
    >>> scan = Scan(func, ["x", "ws"], lambda call: MISSING)
    >>> sorted(scan.sequence_names()), scan.deps(func.body[1].value), scan.deps(func.body[3].value)
    (['xs', 'zs'], [], [])
    >>> scan.deps(func.body[2].value)
    [('xs', 'held'), ('ws', 'held')]
    >>> Scan(func, ["x", "ws"], lambda call: MISSING, sequences=["ws"]).deps(func.body[3].value)
    [('ws', 'held'), ('ws', 'held')]
"""

from __future__ import annotations

import collections

import gast
import numpy as np

from ..frontend.parse import MISSING
from ..ir.syntax import walk, walk_nodes

#: Functions whose result is a new list or tuple (``xs + list(ys)`` concatenates).
SEQUENCE_MAKERS = frozenset(id(f) for f in (
    list, tuple, sorted, np.split, np.array_split, np.hsplit, np.vsplit, np.dsplit))


class SequenceTyping:
    """The sequence typing of :class:`.memory_scan.Scan` (module docstring):
    ``self.sequences`` holds the parameters passed a list or tuple."""

    def joins_sequences(self, node) -> bool:
        """Whether ``a + b`` (or ``a * b``) concatenates (repeats) lists or
        tuples rather than adding numbers or arrays: an operand is a sequence
        (:meth:`is_sequence`) -- Python's ``+`` of one and anything else is a
        TypeError.  Where neither is known to be one, the operation is taken as
        arithmetic, as :mod:`.sequences` takes it, whose run-time check refuses
        a list there."""
        if isinstance(node.op, (gast.Add, gast.Mult)):
            return self.is_sequence(node.left) or self.is_sequence(node.right)
        return False

    def is_sequence(self, node) -> bool:
        """Whether the value of ``node`` is certainly a list or tuple: a display,
        a comprehension, ``list(...)``, ``tuple(...)``, ``sorted(...)``,
        ``np.split(...)``, a slice or copy of a sequence, a concatenation or
        repetition of one, a parameter passed one (``sequences``), or a local
        name bound only to such values (:meth:`sequence_names`)."""
        if isinstance(node, (gast.List, gast.Tuple, gast.ListComp)):
            return True
        if isinstance(node, gast.Constant):
            return isinstance(node.value, (tuple, list))
        if isinstance(node, gast.Name):
            return self.key(node) in self.sequence_names()
        if isinstance(node, gast.BinOp):
            return self.joins_sequences(node)
        if isinstance(node, gast.Subscript):
            return isinstance(node.slice, gast.Slice) and self.is_sequence(node.value)
        if isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute) \
                and node.func.attr == "copy" and not node.args:
            return self.is_sequence(node.func.value)
        if isinstance(node, gast.Call) and isinstance(node.func, (gast.Name, gast.Attribute)) \
                and not (isinstance(node.func, gast.Name)
                         and node.func.id in self.local_functions):
            callee = self.resolve(node)
            return callee is not MISSING and id(callee) in SEQUENCE_MAKERS
        return False

    def sequence_names(self) -> set:
        """The local names every binding of which (``y = value``; ``y += v``,
        ``y *= n`` keep a list a list) is a sequence: a greatest fixed point, as
        ``ws = ws + [v]`` in a loop keeps a list a list.  A parameter is one
        where it was passed one (``sequences``); a loop's item or an unpacked
        name is not known to be one."""
        if self._sequences is None:
            values, simple = collections.defaultdict(list), set()
            for node in walk(self.func):
                if isinstance(node, gast.Assign) and len(node.targets) == 1 \
                        and isinstance(node.targets[0], gast.Name):
                    values[self.key(node.targets[0])].append(node.value)
                    simple.add(id(node.targets[0]))
                elif isinstance(node, gast.AugAssign) and isinstance(node.target, gast.Name):
                    simple.add(id(node.target))
            simple.update(id(a) for a in self.func.args.args)  # (self.sequences)
            other = {self.key(n) for n in walk(self.func) if isinstance(n, gast.Name)
                     and not isinstance(n.ctx, gast.Load) and id(n) not in simple}
            params = set(self.params)
            self._sequences = (set(values) - params | self.sequences) - other
            # one round over every name, then a worklist: a name is looked at again
            # only when a name its values read is dropped (rounds until nothing changed
            # took one per link of a chain whose names sort against its order, v1 =
            # v2 + x, v2 = v3 + x, ...: quadratic); the names the first round keeps
            # (few: most values are arithmetic) are the only ones whose reads count
            dropped = []
            for name in sorted(self._sequences):
                if not all(self.is_sequence(v) for v in values[name]):
                    self._sequences.discard(name)
                    dropped.append(name)
            readers = collections.defaultdict(set)
            for name in self._sequences if dropped else ():
                for value in values[name]:
                    for node in walk_nodes(value):
                        if type(node) is gast.Name:
                            readers[self.key(node)].add(name)
            todo = sorted({r for d in dropped for r in readers.get(d, ())}, reverse=True)
            queued = set(todo)
            while todo:
                name = todo.pop()
                queued.discard(name)
                if name in self._sequences and not all(self.is_sequence(v)
                                                       for v in values[name]):
                    self._sequences.discard(name)
                    for reader in readers.get(name, ()):
                        if reader in self._sequences and reader not in queued:
                            todo.append(reader)
                            queued.add(reader)
        return self._sequences
