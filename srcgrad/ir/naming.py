"""Deterministic names for generated variables.

Generated code must be byte-identical for the same input (that is what makes
caching and golden files work), so names come from counters, never from ids or
random suffixes, and they never collide with a name the user's function uses.

    >>> namer = Namer({"x", "t1", "d_x"})
    >>> namer.temp(), namer.temp()
    ('t2', 't3')
    >>> namer.fresh("d_x"), namer.fresh("d_x"), namer.fresh("h")
    ('d_x_1', 'd_x_2', 'h')
"""

from __future__ import annotations


class Namer:
    """Hands out names not yet taken; every name it returns becomes taken."""

    def __init__(self, taken=()):
        self.taken: set[str] = set(taken)
        self.temps: set[str] = set()  # the names temp() handed out
        self.temp_cotangents: set[str] = set()  # and those adjoint() made for them
        self.user_names: dict[str, str] = {}  # x_1 -> x: the user's name, for messages
        self._temps = 0

    def reserve(self, *names: str) -> None:
        self.taken.update(names)

    def fresh(self, base: str) -> str:
        """``base`` itself if free, else ``base_1``, ``base_2``, ..."""
        if base not in self.taken:
            self.taken.add(base)
            return base
        stem, _, suffix = base.rpartition("_")
        if stem and suffix.isdigit():
            base, n = stem, int(suffix)
        else:
            n = 0
        while True:
            n += 1
            name = f"{base}_{n}"
            if name not in self.taken:
                self.taken.add(name)
                return name

    def temp(self) -> str:
        """The next free ``t<N>`` (forward temporaries of A-normal form)."""
        while True:
            self._temps += 1
            name = f"t{self._temps}"
            if name not in self.taken:
                self.taken.add(name)
                self.temps.add(name)
                return name

    def adjoint(self, primal: str) -> str:
        """A fresh name for the cotangent of ``primal``: ``d_<primal>``."""
        name = self.fresh(f"d_{primal}")
        if primal in self.temps:
            self.temp_cotangents.add(name)
        return name
