"""The API: the functions users call.

- :mod:`.transforms`: ``grad``, ``value_and_grad``, ``vjp``, ``export``,
  ``show``, ``checkpoint``; :class:`.transforms.Transformed`;
- :mod:`.higher`: ``jvp``, ``hvp``, ``hessian``, ``jacobian``;
  :mod:`.second_order` the reverse-over-forward pieces they and
  ``grad(grad(f))`` share;
- :mod:`.compiled`: the in-memory cache of compiled code;
  :mod:`.arguments`: ``wrt`` positions and argument checks;
- :mod:`.checks` (``gradcheck``), :mod:`.report` (``saved``),
  :mod:`.validation` (``check=True``).

May import everything below it; only ``cli`` and the package imports it.
Within the stage: arguments, compiled, second_order, transforms, higher,
in that order.
"""
