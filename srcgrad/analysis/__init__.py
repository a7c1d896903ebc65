"""Analyses: what the program does, before it is differentiated.

- :mod:`.activity`: which values depend on the arguments and reach the
  output (they get cotangents), and which names share a shape;
- :mod:`.sharing`: which names may share memory (views, copies, containers,
  calls that may return an argument);
- :mod:`.aliasing`: in-place updates an alias would miss -- followed, guarded
  at run time, or refused; :mod:`.refresh` takes a view again after its base
  is updated, :mod:`.paths` answers which statement can run before which.

Analyses annotate or guard the program; they never differentiate.  May
import: ``errors``, :mod:`..runtime`, :mod:`..ir`, :mod:`..rules`,
:mod:`..frontend`, :mod:`..normalize`.
"""
