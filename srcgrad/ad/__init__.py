"""Automatic differentiation proper: adjoint and tangent code.

- :mod:`.reverse`: the adjoint sweep -- statements last to first, each rule
  inlined, control flow reversed structurally, overwrites restored;
- :mod:`.forward`: the tangent program -- a tangent statement after each
  statement, branches and loops kept;
- :mod:`.inline`: a rule's body at one call site, parameters bound, locals
  renamed, partially evaluated;
- :mod:`.calls`: calls of user functions as forward/backward pairs;
- :mod:`.in_place`: the calls run as written that may change a value being
  differentiated in place, refused the same way by both modes.

May import every earlier stage (``errors``, :mod:`..runtime`, :mod:`..ir`,
:mod:`..rules`, :mod:`..frontend`, :mod:`..normalize`, :mod:`..analysis`,
:mod:`..optimize`), never :mod:`..memory` or what comes after.
"""
