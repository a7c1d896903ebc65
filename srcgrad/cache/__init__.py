"""The cache: generated modules compiled through real files, and reused.

- :mod:`.store`: write, compile and load a generated module through a file
  in the cache directory, found again by later processes;
- :mod:`.manifest`: an entry's key (the function's source, the options, the
  versions, a hash of srcgrad's rules and passes) and its manifest (what only
  the compiler found out, checked before an entry is trusted);
- :mod:`.provenance`: where each value the code binds comes from, found again
  in a later process.

May import everything below it: the stages, ``assemble`` and ``pipeline``.
"""
