"""Backends: what runs a generated module besides the Python interpreter.

The pipeline writes NumPy code; a backend takes that module and hands it to
an engine.  ``backend="numpy"`` (the default) runs it as it is.
``backend="numba"`` (an optional dependency, imported only when asked for)
compiles each generated function with ``numba.njit(cache=True)``:

- :mod:`.numba_source` rewrites the module's source -- ``import numba`` and a
  decorator on each function, nothing else -- or, where it can tell from the
  source alone that numba cannot compile the code (a runtime helper numba
  cannot type, a Python function or an object bound from the globals), leaves
  the NumPy code with a ``# backend numba: not compiled: <reason>`` line;
- :mod:`.numba_rules` teaches numba srcgrad's runtime helpers for Python
  floats and ints; :mod:`.numba_compile` compiles a module for the arguments
  of its first call (:func:`settle`), so that a function numba cannot compile
  falls back to the NumPy code before any of it runs; :mod:`.numba_calls`
  wraps the compiled entry points, which fall back to it at call time.

Sits between the pipeline and the cache: the cache writes the rewritten
source to a real file (numba's disk cache needs one) and stores it like any
other; the api settles a module at its first call.
"""

from __future__ import annotations

from ..errors import BackendUnavailableError
from ..options import BACKENDS
from .numba_source import NOTE, decorate, in_memory, noted


def require(backend: str) -> None:
    """Import ``backend``'s engine now, when the transformation is made: a
    missing package is reported here, not at the first call."""
    if backend == "numpy":
        return
    try:
        from . import numba_rules  # noqa: F401, PLC0415 - optional: imports numba, teaches it the helpers
    except ImportError as exc:
        if (exc.name or "numba").split(".")[0] != "numba":
            raise
        raise BackendUnavailableError(
            f"backend={backend!r} needs the numba package, which is not installed "
            f"(pip install numba); backend='numpy' runs the same code without it") from exc


def adapt(generated, options, disk: bool):
    """``generated`` (a :class:`~..pipeline.Generated`) rewritten for
    ``options.backend``; ``disk`` says whether it will live in a real file
    (numba caches compiled code next to it only then)."""
    if options.backend == "numba":
        return decorate(generated, cache=disk)
    return generated


def settle(compiled, args, kwargs, numpy) -> None:
    """Decide, at the first call, what runs ``compiled`` (the api's module: its
    ``functions`` and ``source``) for ``args`` and ``kwargs``.

    numba's modules are compiled for the arguments' types now, before any of
    their code runs.  Where numba cannot compile them, ``compiled`` takes the
    functions of ``numpy()`` (the NumPy module of the same code) and its
    source, noted with the reason.  Where it can, each entry point is guarded
    (:func:`.numba_calls.guarded`): a result that is not finite is computed
    again by the NumPy code, which raises where Python raises (numba's
    ``math.log(-1.0)`` is NaN, Python's a ValueError).  Plain Python
    functions are left as they are."""
    if not any(hasattr(f, "py_func") for f in compiled.functions):
        return
    from .numba_calls import guarded  # noqa: PLC0415 - optional dependency
    from .numba_compile import compile_for  # noqa: PLC0415 - optional dependency
    reason = compile_for(compiled.functions[0], args, kwargs)
    if reason is not None:
        fallback = numpy()
        compiled.functions = fallback.functions
        compiled.source = noted(fallback.source, f"not compiled: {reason}")
        return
    compiled.functions = tuple(guarded(f, i, numpy) for i, f in enumerate(compiled.functions))


def split(compiled, args, numpy):
    """``vjp``'s forward and backward functions of ``compiled`` (a module in
    split mode) for the primals ``args``, settled as :func:`settle` does.
    Compiled, the residuals stay inside numba: the forward function returns
    the value with None for them, and the backward function runs the forward
    sweep again in the same compiled call as the backward one
    (:func:`.numba_calls.split` and :func:`.numba_calls.pullback` say why);
    it falls back to the NumPy code with fresh residuals from ``args``."""
    settle(compiled, args, {}, numpy)
    forward, backward = compiled.functions
    if not hasattr(backward, "dispatcher"):  # the NumPy code
        return forward, backward
    from .numba_calls import split as compiled_split  # noqa: PLC0415 - optional dependency
    return compiled_split(forward, backward.dispatcher, args, numpy)


__all__ = ["BACKENDS", "NOTE", "BackendUnavailableError", "adapt", "in_memory", "noted", "require",
           "settle", "split"]
