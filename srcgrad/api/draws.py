"""The random generators a derivative's reruns must rewind.

A Jacobian takes one pullback per row or one tangent per column, a Hessian one
Hessian-vector product per column, and a pullback called twice reruns the
forward function for fresh residuals: each run draws again.  A function that
draws (``rng.normal(...)`` from a generator it is passed, ``np.random.normal``,
``random.gauss``) then differentiates other noise in every run, and the rows
of the Jacobian belong to different functions -- silently wrong.  Python's
own call draws once; so each rerun starts from the generators' states before
the first run, and afterwards they are left as one run leaves them.

    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> draws = Draws((rng,))
    >>> first = [rng.normal() for _ in range(2)]
    >>> draws.rewind()                      # before a rerun
    >>> [rng.normal() for _ in range(2)] == first
    True
    >>> draws.finish()                      # as before the rerun
    >>> bool(rng.normal() == np.random.default_rng(0).normal(size=3)[2])
    True

A generator held by a ``functools.partial`` (``noisy = partial(add_noise,
rng=rng)``, ``partial(rng.normal, 0.0)``) -- one passed, or read from the
globals or closure -- is rewound as one passed itself:

    >>> import functools
    >>> draw = functools.partial(rng.normal, 0.0, 1.0)
    >>> draws = Draws((draw,))
    >>> first = draw()
    >>> draws.rewind()
    >>> bool(draw() == first)
    True
"""

from __future__ import annotations

import functools
import random
import types

import numpy as np

_GENERATORS = (np.random.Generator, np.random.RandomState, np.random.BitGenerator,
               random.Random)


def _held(value) -> list:
    """``value`` and what a ``functools.partial`` (or a bound method) holds: its
    fixed arguments and keywords and its function, through partials of
    partials, and a method's object (``partial(f, rng=rng)``,
    ``partial(rng.normal, 0.0)``, ``partial(model.noisy)``): the objects a call
    of it may draw from."""
    found, todo = [], [value]
    while todo:
        v = todo.pop(0)
        if any(v is w for w in found):
            continue
        found.append(v)
        if isinstance(v, functools.partial):
            todo += [v.func, *v.args, *v.keywords.values()]
        elif getattr(v, "__self__", None) is not None \
                and not isinstance(v.__self__, types.ModuleType):
            todo.append(v.__self__)  # rng.normal, model.noisy (its self.rng)
    return found


def _generators(args) -> list:
    """The generators among ``args``, in lists, tuples and dicts among them,
    and in the attributes of objects among them (``self.rng``): one level; a
    partial or a generator's method counts as what it holds (:func:`_held`)."""
    found = []
    for a in (h for arg in args for h in _held(arg)):
        inner = a.values() if isinstance(a, dict) else a if isinstance(a, (list, tuple)) \
            else vars(a).values() if hasattr(a, "__dict__") and not isinstance(a, type) else ()
        for g in (h for i in (a, *inner) for h in _held(i)):
            if isinstance(g, _GENERATORS) and not any(g is h for h in found):
                found.append(g)
    return found


def _reached(fn, limit: int = 200) -> list:
    """The objects the functions ``fn`` may run read from outside: the globals
    each names and the contents of its closure, following the user functions
    among them (a helper ``noise()`` reading a module's ``RNG``)."""
    found, seen, todo = [], set(), [getattr(fn, "__func__", fn)]
    while todo and len(seen) < limit:
        f = todo.pop()
        code = getattr(f, "__code__", None)
        if code is None or id(f) in seen:
            continue
        seen.add(id(f))
        held = getattr(f, "__globals__", {})
        values = [held[n] for n in code.co_names if n in held]
        for cell in getattr(f, "__closure__", None) or ():
            try:
                values.append(cell.cell_contents)
            except ValueError:  # an empty cell
                continue
        for v in (h for value in values for h in _held(value)):  # noisy = partial(f, rng=RNG)
            found.append(v)
            if callable(v) and hasattr(getattr(v, "__func__", v), "__code__"):
                todo.append(getattr(v, "__func__", v))
    return found


def _state_of(g):
    if isinstance(g, random.Random):
        return g.getstate()
    return g.get_state() if isinstance(g, np.random.RandomState) else g.bit_generator.state \
        if isinstance(g, np.random.Generator) else g.state


def _set_state(g, state) -> None:
    if isinstance(g, random.Random):
        g.setstate(state)
    elif isinstance(g, np.random.RandomState):
        g.set_state(state)
    elif isinstance(g, np.random.Generator):
        g.bit_generator.state = state
    else:
        g.state = state


class Draws:
    """The states of the generators a run may draw from, kept before the first
    run: those among ``args``, and the globals and closure contents of ``fn``
    and the user functions it reaches.  ``globals_too``: NumPy's global generator and Python's ``random``
    too (reading their states costs ~0.15 ms: only where the code draws)."""

    def __init__(self, args, fn=None, globals_too: bool = True):
        # (RNG = default_rng() of a module, read by fn or a helper; one in a closure)
        self.generators = _generators((*args, *_reached(fn)))
        self.globals_too = globals_too
        self.start = self._states()
        self.end = None

    def _states(self):
        own = [_state_of(g) for g in self.generators]
        if not self.globals_too:
            return own, None, None
        return own, np.random.get_state(), random.getstate()

    def _restore(self, states) -> None:
        own, numpy_state, python_state = states
        for g, state in zip(self.generators, own):
            _set_state(g, state)
        if numpy_state is not None:
            np.random.set_state(numpy_state)
            random.setstate(python_state)

    def rewind(self) -> None:
        """Before a rerun: the states before the first run (the states now --
        after the last run, and any draws the caller made since -- are kept
        for :meth:`finish`)."""
        self.end = self._states()
        self._restore(self.start)

    def finish(self) -> None:
        """After the reruns: the generators as the first run left them."""
        if self.end is not None:
            self._restore(self.end)


def may_draw(source: str) -> bool:
    """Whether generated code may draw from NumPy's global generator or Python's
    ``random`` (cheap to ask, unlike reading their states)."""
    return "random" in source
