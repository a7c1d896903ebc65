"""Matrix products over the steps of a loop, formed once for all the steps.

A recurrent loop ``for t in ...: h = np.tanh(xs[t] @ W + h @ U)`` makes, in
its adjoint, one small product per step for each weight (``d_W = d_W +
matmul_grad_b(d_t, xs[t], W)``), and its forward sweep one small product per
step for the input projection (``xs[t] @ W``).  A few large products do the
same work at a fraction of the cost of many small ones:

* :func:`matmul_grad_b_steps` and :func:`matmul_grad_a_steps` take the
  cotangents and operands the adjoint loop collected, step by step, and form
  the weight's cotangent with one product after the loop (the steps stacked,
  ``A.T @ G``); :mod:`srcgrad.optimize.loop_products` writes the calls.  The
  sum is the same up to rounding (the product's own order of summation, not
  the step-by-step order), so these take the stacked path only where the
  formula is exactly the sum of the per-step cotangents: NumPy arrays, every
  step of one shape and dtype, 1-D or 2-D per step, a 2-D weight; anywhere
  else they sum ``matmul_grad_b`` step by step, as the loop did, bit for bit.
* :func:`products_by_step` forms ``xs[t] @ W`` for every step of the loop
  before it, as one ``xs @ W``, where that is the same GEMM per step: NumPy's
  ``matmul`` loops over the stacked (outer) axes and chooses, for each matrix
  of the stack, BLAS's gemm / gemv / its own loop from the core dimensions
  and strides alone (``numpy/_core/src/umath/matmul.c.src``, ``@TYPE@_matmul``:
  the decisions are made once, before the loop over ``dOuter``), and a slice
  ``xs[t]`` has exactly the core dimensions and strides that the stacked call
  gives each step -- so each step's numbers are bit for bit those of
  ``xs[t] @ W``.  A 2-D ``xs`` makes each step a vector times a matrix,
  which ``matmul`` runs as a ``(1, n)`` core (a 1-D first operand is
  promoted by prepending a 1 to its shape; a 1-D second one by appending
  one): a gemv, where ``xs @ W`` would be one gemm, which may round
  differently.  So the vectors are stacked as such matrices,
  ``(xs[:, None, :] @ W)[:, 0, :]`` (``(W @ xs[:, :, None])[:, :, 0]`` on
  the right): the same core dimensions, the same stride along the vector
  and in the result, hence the same branch (gemv, dot or NumPy's loop) with
  the same arguments for each step -- the stride of the size-1 axis is
  never read for a value.  Anything but NumPy arrays of one BLAS dtype is
  not stacked: there an object computes each step's product when it is
  indexed, as the loop did.

A runtime helper module (see :mod:`srcgrad.runtime`, which re-exports it):
small, NumPy alone, copied into exported modules.

    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> xs, W = rng.normal(size=(4, 2, 3)), rng.normal(size=(3, 5))
    >>> gs = [rng.normal(size=(2, 5)) for _ in range(4)]
    >>> d_W = matmul_grad_b_steps(0.0, [(g, t) for t, g in enumerate(gs)], W, rows=xs)
    >>> bool(np.allclose(d_W, sum(xs[t].T @ gs[t] for t in range(4))))
    True
    >>> ys = products_by_step(xs, W, range(4))
    >>> all(np.array_equal(ys[t], xs[t] @ W) for t in range(4))
    True
"""

from __future__ import annotations

import numpy as np

from .linalg import matmul_grad_a, matmul_grad_b

#: The dtypes NumPy's matmul hands to BLAS, where a stacked product is known
#: to call the same routine on each step as the step's own product does.
_BLAS_TYPES = (np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.complex64),
               np.dtype(np.complex128))


class StepTerms(list):
    """The terms a loop collects for a sum after it (a list), which keeps its
    cotangents once they are stacked (``joined``), for another sum of the same
    loop that collected the same cotangents (``shares=``): a recurrent loop's
    weights share the step's cotangent, stacked once."""

    __slots__ = ("joined",)


def matmul_grad_b_steps(start, steps, b, rows=None, shares=None, stacked=None,
                        cotangents=None, written=False, order=None):
    """``start`` plus the cotangent of ``b`` in ``a @ b`` over the steps of a
    loop: ``steps`` holds each step's ``(g, a)``, or ``(g, i)`` with ``a`` the
    row ``rows[i]`` of an array the loop indexed (or the entry ``rows[i]`` of
    a tape, a list, where ``stacked`` is given).  That is ``start +
    matmul_grad_b(g, a, b)`` for each step in turn, formed as one product of
    the stacked steps where it is that sum (see the module docstring).
    ``shares``: the :class:`StepTerms` of another sum of the loop, whose
    stacked cotangents are used where they are these steps' very arrays.
    ``stacked``: ``rows[1:]`` stacked as one array (``stacked_tape(tape, 1,
    last)``, whose row ``i`` holds the values of ``rows[i + 1]``), from which
    the product's operands are read (:func:`_operands`).  ``cotangents``: an
    array whose row ``t`` step ``t`` wrote its cotangent into, where it could
    (:mod:`srcgrad.optimize.step_cotangents`): the steps' cotangents as one
    matrix without joining them, where each is such a row
    (:func:`_written_rows`).  ``written``: the loop's own record that every
    step's cotangent is its row of ``cotangents``, and ``order``: the
    iterations the loop ran over backwards, collecting ``(g, t)`` once per
    step ``t`` -- given by the loop that proves both (:mod:`srcgrad.optimize.
    step_cotangents`), they spare the walks over the steps (:func:`_rows_b`)."""
    if steps:
        total = _rows_b(steps, b, rows, stacked, cotangents, order) if written else None
        if total is None:
            total = _stacked_b(steps, b, rows, shares, stacked, cotangents)
        if total is not None:
            return start + total
    for g, a in steps:
        start = start + matmul_grad_b(g, a if rows is None else rows[a], b)
    return start


def matmul_grad_a_steps(start, steps, a, rows=None, shares=None, stacked=None):
    """``start`` plus the cotangent of ``a`` in ``a @ b`` over the steps of a
    loop: ``steps`` holds each step's ``(g, b)``, or ``(g, i)`` with ``b`` the
    row ``rows[i]``; as :func:`matmul_grad_b_steps`, for the left operand
    (whose stacked cotangents are joined along columns: not shared)."""
    if steps:
        total = _stacked_a(steps, a, rows, stacked)
        if total is not None:
            return start + total
    for g, b in steps:
        start = start + matmul_grad_a(g, a, b if rows is None else rows[b])
    return start


def _rows(arrays, axis=0):
    """The arrays side by side as one matrix -- 2-D ones joined along ``axis``
    (rows after rows, or columns after columns), 1-D ones as the rows of a
    matrix -- or None unless they are NumPy arrays of one shape and one float
    or complex dtype."""
    if set(map(type, arrays)) != {np.ndarray} or len({a.shape for a in arrays}) != 1 \
            or len({a.dtype for a in arrays}) != 1:
        return None
    first = arrays[0]
    if first.dtype not in _BLAS_TYPES or first.ndim not in (1, 2):
        return None
    if first.ndim == 2 and axis == 1:
        return np.concatenate(arrays, axis=1)
    if first.size:
        try:  # the rows' bytes one after another: a third of concatenate's time
            joined = np.frombuffer(b"".join(arrays), dtype=first.dtype)
            return joined.reshape(len(arrays) * first.size // first.shape[-1], first.shape[-1])
        except (TypeError, BufferError):  # an array that is not C-contiguous
            pass
    joined = np.concatenate(arrays)
    return joined if first.ndim == 2 else joined.reshape(len(arrays), -1)


def _operands(operands, rows, axis, stacked=None):
    """The steps' other operands as :func:`_rows` joins them, in the order of
    their cotangents: read from ``rows`` (an array the loop indexed) where it
    is given, as ``rows[:n]`` itself where the steps read its first ``n`` rows
    in order; from ``rows[0]`` then ``stacked[:n - 1]`` (``rows`` a tape whose
    later entries ``stacked`` holds) where that is the same matrix -- one
    copy, where joining the tape's entries looks at each first."""
    if rows is None:
        return _rows(operands, axis)
    if (type(rows) is not np.ndarray and stacked is None) or set(map(type, operands)) != {int}:
        return None
    n = len(operands)
    block = None
    if n <= len(rows) and operands[0] == 0 and list(operands) == list(range(n)):
        if stacked is not None:
            block = _after_first(rows[0], stacked, n)
        elif rows.ndim in (2, 3) and rows.dtype in _BLAS_TYPES:
            block = rows[:n]
    if block is None:
        return _rows([rows[i] for i in operands], axis)
    if block.ndim == 2:
        return block
    if axis == 0:
        return block.reshape(-1, block.shape[-1])
    return block.transpose(1, 0, 2).reshape(block.shape[1], -1)


def _after_first(head, stacked, n):
    """``head`` then ``stacked[:n - 1]`` as one array (a new first axis), or
    None unless ``head`` is an ``np.ndarray`` (exactly) of the shape and dtype
    of ``stacked``'s rows, a float or complex array of 1-D or 2-D rows: the
    values :func:`_rows` would join, in a C-contiguous array as it makes."""
    if type(stacked) is np.ndarray and type(head) is np.ndarray and stacked.ndim in (2, 3) \
            and stacked.dtype in _BLAS_TYPES and head.dtype == stacked.dtype \
            and head.shape == stacked.shape[1:] and len(stacked) >= n - 1:
        front = _in_front(head, stacked)
        if front is not None:
            return front[:n]
        return np.concatenate((head[None], stacked[:n - 1]))
    return None


def _in_front(head, stacked):
    """``head`` then ``stacked`` as one array without a copy, where
    :func:`stacked_tape` put a copy of ``head`` right before ``stacked``'s
    rows in the memory it made (the buffer ``stacked`` is a view of: one row
    longer, which only its path with a row in front makes, that row
    ``head``'s very bytes), else None.

        >>> tape = [np.zeros(2), np.ones(2)]
        >>> states = stacked_tape(tape, 1, np.full(2, 2.0))
        >>> _in_front(tape[0], states)
        array([[0., 0.],
               [1., 1.],
               [2., 2.]])
        >>> _in_front(np.full(2, 5.0), states) is None   # not the head it was stacked with
        True
    """
    full = stacked.base   # stacked_tape's buffer: one row longer only where it put one in front
    if type(full) is not np.ndarray or full.ndim != 1 or full.dtype != stacked.dtype \
            or full.size != stacked.size + head.size \
            or full[:head.size].tobytes() != head.tobytes():
        return None
    return full.reshape((len(stacked) + 1,) + stacked.shape[1:])


def _steps_in_order(steps):
    """Cotangents and operands of the steps, first step first (an adjoint
    loop collects its steps last step first: reversed, they read the rows of
    an array the loop indexed as ``rows[:n]`` itself)."""
    gs, operands = zip(*steps)
    return gs[::-1], operands[::-1]


def _joined(gs, steps, shares, cotangents=None):
    """:func:`_rows` of the cotangents ``gs``: the array ``cotangents`` itself
    where they are its rows (:func:`_written_rows`); those ``shares`` stacked
    where they are the same arrays, in the same order; kept on ``steps`` for
    a later sum."""
    kept = getattr(shares, "joined", None)
    if kept is not None and len(kept[0]) == len(gs) and all(a is g for a, g in zip(kept[0], gs)):
        G = kept[1]
    elif cotangents is not None and _written_rows(gs, cotangents):
        G = cotangents.reshape(-1, cotangents.shape[-1])
    else:
        G = _rows(gs)
    if G is not None and type(steps) is StepTerms:
        steps.joined = (gs, G)
    return G


def _written_rows(gs, cotangents) -> bool:
    """Whether the steps' cotangents ``gs`` (first step first) are the rows of
    ``cotangents``, step ``t``'s in row ``t``, as :func:`_rows` would join
    them: ``cotangents`` a C-contiguous ``np.ndarray`` of float32 or float64
    (or complex) of two or three axes that owns its memory, one row per step,
    and every ``g`` a view whose base it is.  The loop that
    :mod:`srcgrad.optimize.step_cotangents` writes makes step ``t``'s
    cotangent either row ``t`` or a new array (where the row could not take
    it): a new array's base is not ``cotangents``, and then the cotangents
    are joined as they are.  The matrix is then the one :func:`_rows` makes,
    without copying each row.

        >>> terms = np.arange(12.0).reshape(3, 2, 2).copy()   # an array of its own
        >>> _written_rows([terms[0], terms[1], terms[2]], terms)
        True
        >>> _written_rows([terms[0], terms[1], terms[2] * 1.0], terms)   # a new array
        False
    """
    return type(cotangents) is np.ndarray and cotangents.base is None \
        and cotangents.ndim in (2, 3) and cotangents.dtype in _BLAS_TYPES \
        and cotangents.flags.c_contiguous and len(cotangents) == len(gs) \
        and set(map(type, gs)) == {np.ndarray} and all(g.base is cotangents for g in gs)


def _ndim(operands, rows):
    """The dimensions of one step's operand (``operands`` joined by :func:`_operands`)."""
    if rows is None:
        return operands[0].ndim
    return rows.ndim - 1 if type(rows) is np.ndarray else np.ndim(rows[operands[0]])


def _stacked_b(steps, b, rows, shares, stacked=None, cotangents=None):
    """The sum over the steps of ``a.T @ g``: ``A.T @ G``, the steps' rows
    one after another."""
    if type(b) is not np.ndarray or b.ndim != 2:
        return None
    gs, operands = _steps_in_order(steps)
    G = _joined(gs, steps, shares, cotangents)
    A = None if G is None else _operands(operands, rows, 0, stacked)
    if A is None or _ndim(operands, rows) != gs[0].ndim or A.shape != (G.shape[0], b.shape[0]) or G.shape[1] != b.shape[1]:
        return None
    return A.T @ G


def _rows_b(steps, b, rows, stacked, cotangents, order):
    """What :func:`_stacked_b` returns, without a walk over the steps, where
    the loop that collected them proved that each step ``t`` of ``order``
    (backwards) appended ``(g, t)``, ``g`` its row ``t`` of ``cotangents``
    (``written=True``, :mod:`srcgrad.optimize.step_cotangents`): ``steps``
    is then, first step first, the rows of ``cotangents`` with the indices
    ``0 .. n - 1`` where ``order`` is ``range(n)`` and ``steps`` has ``n``
    entries (none left from before the loop) -- the cotangents' matrix
    :func:`_written_rows` accepts and the operands' block :func:`_operands`
    reads, the same product.  Else None, and :func:`_stacked_b` decides.
    The walks were 26 us of the RNN benchmark's gradient, in the loop's
    wake (the steps' arrays out of cache).

        >>> terms = np.arange(24.0).reshape(3, 2, 4).copy()
        >>> xs, w = np.ones((3, 2, 5)), np.ones((5, 4))
        >>> steps = [(terms[2], 2), (terms[1], 1), (terms[0], 0)]   # last step first
        >>> bool(np.array_equal(_rows_b(steps, w, xs, None, terms, range(3)),
        ...                     _stacked_b(steps, w, xs, None, None, None)))
        True
        >>> _rows_b(steps, w, xs, None, terms, range(1, 4)) is None   # not rows 0 .. 2
        True
    """
    n = len(steps)
    if type(order) is not range or order != range(n) or not n or type(b) is not np.ndarray \
            or b.ndim != 2 or type(cotangents) is not np.ndarray or cotangents.base is not None \
            or cotangents.ndim not in (2, 3) or cotangents.dtype not in _BLAS_TYPES \
            or not cotangents.flags.c_contiguous or len(cotangents) != n \
            or not (type(rows) is np.ndarray or stacked is not None) or n > len(rows):
        return None
    if stacked is not None:
        block = _after_first(rows[0], stacked, n)
    else:
        block = rows[:n] if rows.ndim in (2, 3) and rows.dtype in _BLAS_TYPES else None
    if block is None:
        return None
    A = block if block.ndim == 2 else block.reshape(-1, block.shape[-1])
    G = cotangents.reshape(-1, cotangents.shape[-1])
    ndim = rows.ndim - 1 if type(rows) is np.ndarray else np.ndim(rows[0])
    if ndim != cotangents.ndim - 1 or A.shape != (G.shape[0], b.shape[0]) \
            or G.shape[1] != b.shape[1]:
        return None
    return A.T @ G


def _stacked_a(steps, a, rows, stacked=None):
    """The sum over the steps of ``g @ b.T``: ``G @ B.T``, the steps' columns
    one after another (1-D steps: ``G.T @ B``, a sum of outer products)."""
    if type(a) is not np.ndarray or a.ndim != 2:
        return None
    gs, operands = _steps_in_order(steps)
    G = _rows(gs, axis=1)
    B = None if G is None else _operands(operands, rows, 1, stacked)
    if B is None or _ndim(operands, rows) != gs[0].ndim:
        return None
    if gs[0].ndim == 1:  # rows of G and B: one per step
        if G.shape != (B.shape[0], a.shape[0]) or B.shape[1] != a.shape[1]:
            return None
        return G.T @ B
    if G.shape != (a.shape[0], B.shape[1]) or B.shape[0] != a.shape[1]:
        return None
    return G @ B.T


def products_by_step(x, w, iterations, stepped=0):
    """What ``x[t] @ w`` (``stepped=0``) or ``w @ x[t]`` (``stepped=1``) is for
    each ``t`` of ``iterations``, indexed by ``t``: the stacked product
    (one ``x @ w``) where each of its matrices is bit for bit the step's own
    product (see the module docstring), else an object that computes the
    step's product when indexed."""
    if type(x) is np.ndarray and type(w) is np.ndarray and w.ndim == 2 and x.ndim >= 2 \
            and x.dtype == w.dtype and x.dtype in _BLAS_TYPES and type(iterations) is range \
            and iterations.step in (1, -1) and len(iterations):
        low, high = min(iterations), max(iterations)
        if 0 <= low and high < len(x) and high + 1 <= 2 * len(iterations):
            rows = x[:high + 1]
            if rows.ndim == 2:  # vectors: each a (1, n) or (n, 1) matrix, as matmul sees it
                return (rows[:, None, :] @ w)[:, 0, :] if stepped == 0 \
                    else (w @ rows[:, :, None])[:, :, 0]
            return rows @ w if stepped == 0 else w @ rows
    return ProductsByStep(x, w, stepped)


def steady_tape(tape, shape, first=1):
    """Whether every entry of ``tape`` from ``first`` on is an ``np.ndarray``
    (exactly) of shape ``shape``: the check an adjoint loop run without its
    shape checks makes once (:mod:`srcgrad.optimize.steady_loops`).

        >>> steady_tape([None, np.zeros(2), np.ones(2)], (2,))
        True
        >>> steady_tape([np.zeros(2), np.ones(3)], (2,), 0)
        False
    """
    array = np.ndarray   # bound once: a global's attribute read per entry was a third of the walk
    for k in range(first, len(tape)):
        value = tape[k]
        if type(value) is not array or value.shape != shape:
            return False
    return True


#: The dtypes whose ``+ - * /`` and squares are IEEE operations, rounded once
#: per element, whatever the length of the array NumPy runs them on (its SIMD
#: loops and their scalar tails give the same bits): what
#: :mod:`srcgrad.optimize.batched_steps` computes for all the steps at once.
_ROUNDED_ONCE = (np.dtype(np.float32), np.dtype(np.float64))


def stackable_tape(tape, first, *last):
    """Whether ``tape[first:]``, then ``last`` (a value, or none), are exact
    C-contiguous NumPy arrays (``np.ndarray`` itself) of at least one axis, of one shape and one
    dtype, float32 or float64: values :func:`stacked_tape` joins into one
    array whose rows have their very strides.

        >>> stackable_tape([None, np.zeros(2), np.ones(2)], 1, np.ones(2))
        True
        >>> stackable_tape([np.zeros(2), np.ones(2, np.float32)], 0)
        False
    """
    values = list(tape[first:]) + list(last)
    if not values:
        return False
    shape, dtype = getattr(values[0], "shape", None), getattr(values[0], "dtype", None)
    if dtype not in _ROUNDED_ONCE or not shape:
        return False
    array = np.ndarray   # bound once (steady_tape)
    for value in values:
        if type(value) is not array or value.shape != shape \
                or (value.dtype is not dtype and value.dtype != dtype) \
                or not value.flags.c_contiguous:
            return False
    return True


def stacked_tape(tape, first, *last):
    """``tape[first:]``, then ``last``, as one array (a new axis first) of
    values :func:`stackable_tape` accepts: row ``k`` is the ``k``-th value, C-contiguous
    as the value is.  The bytes joined: a fifth of ``np.stack``'s time on fifty
    small arrays.  With ``first=1``, an entry ``tape[0]`` of the values' shape
    and dtype, C-contiguous, is copied in front of them in the same memory, for
    :func:`_in_front`.

        >>> stacked_tape([None, np.zeros(2)], 1, np.ones(2))
        array([[0., 0.],
               [1., 1.]])
    """
    values = list(tape[first:]) + list(last)
    head = values[0]
    before = tape[0] if first == 1 else None
    if type(before) is np.ndarray and before.dtype == head.dtype and before.shape == head.shape \
            and before.flags.c_contiguous:
        # the entry before them in front, in the same memory: the matrix of the
        # entries from the first on, which a product after the loop reads
        # (_after_first), is then this array's buffer, not a copy
        joined = np.frombuffer(b"".join([before] + values), dtype=head.dtype)
        return joined.reshape((len(values) + 1,) + head.shape)[1:]
    joined = np.frombuffer(b"".join(values), dtype=head.dtype)
    return joined.reshape((len(values),) + head.shape)


def dot_dtype(b, rows):
    """``b``'s dtype where ``np.dot(g, b)`` is bit for bit ``g @ b`` for every
    ``g`` of that dtype, C- or F-contiguous, aligned, of two axes and ``rows``
    rows (a new array that an operation made: :mod:`srcgrad.optimize.
    steady_products`), else None.

    Both call the same BLAS routine with the same arguments there.  For 2-D
    float32 or float64 operands of one dtype, aligned, each C- or F-contiguous,
    with no axis below 2 (NumPy's ``numpy/_core/src/umath/matmul.c.src``,
    ``@TYPE@_matmul``, and ``numpy/_core/src/common/cblasfuncs.c``,
    ``cblas_matrixproduct``): neither copies an operand, both take the
    matrix-matrix branch (an axis of 1 sends ``matmul`` to gemv or a dot and
    ``np.dot`` to its row or column cases, which differ), both pass a
    C-contiguous operand as ``CblasNoTrans`` with its row length as leading
    dimension and an F-contiguous one as ``CblasTrans`` with its column length,
    both write a new C-contiguous result (``ldc`` its row length) with beta 0,
    and both call syrk instead of gemm on the same condition (one buffer seen
    as a matrix and its transpose).  ``np.dot`` takes a microsecond less per
    call on small matrices: the ufunc machinery it skips.

        >>> U = np.ones((3, 3))
        >>> dot_dtype(U.T, 4), dot_dtype(U, 1), dot_dtype(U[:, :2], 4)
        (dtype('float64'), None, None)
    """
    if type(b) is np.ndarray and b.ndim == 2 and b.dtype in _ROUNDED_ONCE and rows > 1 \
            and min(b.shape) > 1 and b.flags.aligned \
            and (b.flags.c_contiguous or b.flags.f_contiguous):
        return b.dtype
    return None


def dot_ready(g) -> bool:
    """Whether ``g`` is laid out as the new array an operation makes: an
    ``np.ndarray`` (exactly) of two axes, aligned, C- or F-contiguous -- the
    operands :func:`dot_dtype` speaks of, given the dtype and the rows
    (:mod:`srcgrad.optimize.forward_dots` checks those at each step).

        >>> dot_ready(np.ones((3, 2))), dot_ready(np.ones((3, 4))[:, ::2]), dot_ready(2.0)
        (True, False, False)
    """
    return type(g) is np.ndarray and g.ndim == 2 and g.flags.aligned \
        and (g.flags.c_contiguous or g.flags.f_contiguous)


def broadcasts_to(shape, target):
    """Whether an array of ``shape`` broadcast with one of ``target`` gives
    ``target`` (False, not an error, where the two do not broadcast).

        >>> broadcasts_to((5,), (3, 5)), broadcasts_to((3, 5), (5,)), broadcasts_to((2,), (3,))
        (True, False, False)
    """
    try:
        return np.broadcast_shapes(shape, target) == target
    except ValueError:
        return False


class ProductsByStep:
    """``x[t] @ w`` (or ``w @ x[t]``) computed when indexed by ``t``."""

    __slots__ = ("stepped", "w", "x")

    def __init__(self, x, w, stepped=0):
        self.x, self.w, self.stepped = x, w, stepped

    def __getitem__(self, t):
        return self.x[t] @ self.w if self.stepped == 0 else self.w @ self.x[t]
