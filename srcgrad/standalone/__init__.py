"""``srcgrad.export``: generated code as a module that runs without srcgrad.

- :mod:`.module`: several generated modules merged into one file importing
  NumPy and the standard library only;
- :mod:`.portable`: bound values written as literals, runtime helpers copied
  in with what they use.

May import everything below it, up to :mod:`..cache`.
"""
