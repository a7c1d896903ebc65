"""The frontend: from a live Python function to a checked syntax tree.

- :mod:`.parse`: the function's source (``inspect``, ``linecache``) parsed
  with gast, located in the user's file, and a resolver for the names it reads;
- :mod:`.fence`: every node type accepted or rejected, with its location, so
  later stages see only syntax they handle;
- :mod:`.linker`: one generated module for a function and every user function
  it calls (each callee's forward/backward pair or tangent function made by
  the same pipeline, named once, bound once).

May import: ``errors``, ``version``, :mod:`..runtime`, :mod:`..ir`,
:mod:`..rules` -- nothing of the stages after it.
"""
