"""Optimisations: rewrites that make generated code smaller and faster, each
sound under the condition its docstring states.

The passes are AD-agnostic: they rewrite statements and expressions and know
nothing of adjoints or tangents, so this stage sits *below* :mod:`..ad` and
:mod:`..memory` in import order although the pipeline runs several of its
passes after differentiation: ``ad`` and ``memory`` call these passes, never
the other way round.

- :mod:`.simplify`: cheaper operations to differentiate (``x * x`` as
  ``x ** 2``), shift-neutral extrema;
- :mod:`.peephole`: partial evaluation of inlined rule bodies (static tests,
  identities);
- :mod:`.broadcast`: broadcasting bookkeeping dropped where shapes match;
- :mod:`.dce`: dead-code elimination, copy propagation, a cotangent's zero
  start merged into its first accumulation;
- :mod:`.fold`: single-use temporaries folded back into their reader;
- :mod:`.signs`: minus signs carried into the sums and constants that take
  them for free.

May import: ``errors``, :mod:`..runtime`, :mod:`..ir`, :mod:`..rules`,
:mod:`..frontend`, :mod:`..normalize`, :mod:`..analysis`.
"""
