"""Memory: what the adjoint sweep keeps of the forward sweep, and how.

- :mod:`.remat`: save or recompute each value, per policy;
- :mod:`.tapes`: pushes before the overwrites whose restores survive;
- :mod:`.indexed_tapes`: the tapes of a loop over ``range(n)`` written and read by index;
- :mod:`.checkpointing`: loops under the ``sqrt``, ``revolve`` and online
  policies -- snapshots and a schedule instead of a tape per iteration;
- :mod:`.release`: ``del`` of the forward values the adjoint never reads.
- :mod:`.effects`: which calls are pure -- what a recompute or a rerun may run again.

Every decision is a visible statement with a comment in the generated code.
May import every earlier stage, up to :mod:`..ad`.
"""
