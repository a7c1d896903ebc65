"""Fused kernels on numba's threads: the twin of a kernel and when to run it.

A fused kernel (:mod:`.numba_fusion`) loops over the flat index with
``numba.prange``.  Compiled as it is written (``@numba.njit``), ``prange`` is
``range`` and the kernel runs on the calling thread; :func:`parallel_twin` compiles
the same code again with ``parallel=True``, where numba splits the index range
among its threads.  Each element is computed by the same scalar code either way
(no reductions, fastmath off), so the twin's values are the kernel's bit for
bit; only the order in which elements are written differs.

Threads cost a start-up of their own (tens of microseconds on an idle machine),
so the generated call picks the twin where :func:`on_threads` says the arrays are
large enough to pay for it, the serial kernel otherwise::

    fused = fused_1_threads if on_threads(x) else fused_1
    if fits(fused, x):
        b = fused(x, *blank(x, 1))

The user chooses the number of threads as for any numba code:
``NUMBA_NUM_THREADS`` (the pool's size, read once) or ``numba.set_num_threads(n)``
(per calling thread, at most the pool's size).  With one thread the serial
kernel runs: no parallel compile, no start-up.

Importing this module imports numba; only generated code of the numba backend
imports it.
"""

from __future__ import annotations

import os
import threading
import types

import numba
import numpy as np

#: Arrays of at least this many elements run on numba's threads (where numba has
#: more than one).  ``python benchmarks/numba_threads.py`` times gradients at
#: growing sizes on one thread and two: below 2**14 elements a kernel of a few
#: operations takes tens of microseconds, less than waking numba's threads costs
#: (0.5-1 ms on the busy shared two-core machine of the measurement, more with
#: the OpenMP layer); from 2**16 on a kernel has milliseconds of work and the
#: start-up is a small part of it.
THREADS_FROM = 2 ** 16


def parallel_twin(kernel, cache: bool = True):
    """``kernel`` (a fused kernel's dispatcher) compiled with ``parallel=True``
    as a dispatcher of its own, compiled at its first call of each kind.

    The twin runs a copy of ``kernel``'s Python function renamed
    ``<name>_threads``: numba's disk cache files a compiled function under its
    module, qualified name and first line, and keys its entries on the
    signature and the bytecode, not on ``parallel``; two dispatchers of one
    function would read each other's machine code.  ``cache`` is the kernel's
    (False where the generated module has no file)."""
    original = kernel.py_func
    name = original.__name__ + "_threads"
    twin = types.FunctionType(original.__code__, original.__globals__, name,
                              original.__defaults__, original.__closure__)
    twin.__qualname__ = name
    twin.__doc__ = original.__doc__
    options = {**kernel.targetoptions, "parallel": True}
    options.pop("nopython", None)  # (njit's own)
    return numba.njit(cache=cache, **options)(twin)


def on_threads(array) -> bool:
    """Whether a fused kernel over ``array`` (the first array it reads; the others
    have its shape, :func:`.numba_rules.fits` checks) should run on numba's
    threads: an ``ndarray`` of at least :data:`THREADS_FROM` elements, more
    than one thread for the calling thread (``numba.set_num_threads``), and
    none of the two cases where numba's threads would end the process, where
    the serial kernel is as right and safe:

    - a child forked from the process that imported this module: GNU
      OpenMP's threads do not survive ``fork()``, and numba terminates a
      child that starts them after its parent did (``multiprocessing``'s
      fork workers computing gradients, say);
    - under the ``workqueue`` threading layer (numba's choice where neither
      TBB nor OpenMP is installed), a thread other than the main one: that
      layer terminates the process when two Python threads start parallel
      kernels at once."""
    if type(array) is not np.ndarray or array.size < THREADS_FROM \
            or os.getpid() != _HOME or numba.get_num_threads() < 2:
        return False
    return threading.current_thread() is threading.main_thread() or not _workqueue()


#: The process that imported this module (a forked child has another pid).
_HOME = os.getpid()
_LAYER: list = []


def _workqueue() -> bool:
    """Whether numba's threads run on its ``workqueue`` layer (launched by now:
    ``numba.get_num_threads`` launches them)."""
    if not _LAYER:
        _LAYER.append(numba.threading_layer())
    return _LAYER[0] == "workqueue"


__all__ = ["THREADS_FROM", "on_threads", "parallel_twin"]
