"""Normalisation: desugaring into A-normal form, one operation per statement.

:func:`.normalizer.normalize` turns a fenced function into an
:class:`..ir.Program`: every statement applies one primitive to names and
constants and carries it as ``stmt.op``, straight-line definitions get fresh
names (``h_1``), and sugar is gone (augmented assignment, comprehensions,
early returns and loop jumps, calls of local functions and partials).

- :mod:`.normalizer`: the driver, and the normaliser made of the mixins
  :mod:`.statements`, :mod:`.expressions`, :mod:`.control` (branches, loops,
  comprehensions) and :mod:`.calls` (what a call refers to);
- :mod:`.jumps`: ``return``, ``break`` and ``continue`` end their blocks;
- :mod:`.sequences`: ``+`` and ``*`` of tuples and lists given the sequence
  primitives (concatenation, repetition) instead of arithmetic's.

May import: ``errors``, :mod:`..runtime`, :mod:`..ir`, :mod:`..rules`,
:mod:`..frontend`.
"""
