"""Runtime helpers that generated code calls: the facade it imports them from.

These are the only srcgrad names generated code needs besides NumPy
(``from srcgrad.runtime import unbroadcast, ...``), and an exported module
carries copies of them, so each one is small, depends on NumPy alone and is
written to be read.  Adjoint rules use them too (the registry allows a rule
body to read exactly the names in ``__all__``, ``np`` and ``math``).  They
live in modules by what they are for; this package re-exports every one, so
generated code names one place:

- :mod:`.elementwise`: ``unbroadcast``, ``grad_seed``, ``signum``, the
  markers ``stop_gradient`` and ``on_grad``, and ``in_place`` (the value
  ``x += v`` leaves in an array);
- :mod:`.reductions`, :mod:`.linalg`, :mod:`.shapes`, :mod:`.indexing`: the
  helpers of the adjoint rules of reductions, linear algebra, shape
  operations, and indexing and writes through an index;
- :mod:`.steps`: matrix products over the steps of a loop, formed once;
- :mod:`.summed_products`: adjoints of a matrix product summed whole
  (``np.sum(a @ b)``), without the product;
- :mod:`.structures`: cotangents of lists, tuples, dicts and objects;
- :mod:`.gradients`: the gradients handed back (``grad_like``);
- :mod:`.forward`: tangents, for forward mode;
- :mod:`.state`: snapshots that tapes and checkpoints keep;
- :mod:`.aliases`: run-time checks of updates seen through an alias;
- :mod:`.anomaly`: ``check_finite``, anomaly mode's check of a cotangent;
- :mod:`.schedules`: checkpointing schedules (``revolve``, online);
- :mod:`.namespaces`: Dask and CuPy arguments kept in their own library (``foreign``, ``as_array``);
- :mod:`.errors`: ``error_at``, srcgrad's error classes (ValueError where
  srcgrad is not installed).

:mod:`srcgrad.standalone.portable` copies helpers from these modules, in its
``_HOMES`` order, into exported code.
"""

from __future__ import annotations

from .accumulate import cotangent_buffer, scatter_add
from .aliases import (
    apart_from_free,
    castable,
    held_at,
    is_basic_index,
    is_window,
    item_once,
    items_apart,
    same_object,
    same_or_untouched,
    same_window,
    sequence_operand,
    slot_alone,
    slot_same,
    taken_again,
    unpacked,
    untouched,
    untouched_except,
    view_index,
    window,
    window_by,
)
from .anomaly import check_finite
from .decompositions import (
    cholesky_grad,
    eig_grad,
    eigh_grad,
    eigvals_grad,
    eigvalsh_grad,
    lstsq_grads,
    matrix_power_grad,
    pinv_grad,
    qr_grad,
    svd_grad,
)
from .elementwise import (
    GradSite,
    grad_seed,
    in_place,
    match_complex,
    on_grad,
    signum,
    signum_grad,
    signum_tangent,
    stop_gradient,
    takes_site,
    unbroadcast,
)
from .forward import (
    add_parts,
    expand,
    fresh_tangent,
    missing_tangent,
    replaced_tangent,
    sequence_tangent,
    tangent_attr,
    tangent_like,
    zero_tangent,
)
from .gradients import grad_like, zeros_grad
from .indexing import getitem_grad, written_cotangent, written_tangent
from .inplace import into_first, into_second, unreduced
from .linalg import (
    cross_grads,
    einsum_grads,
    inv_grad,
    kron_grads,
    matmul_grad_a,
    matmul_grad_b,
    outer_grads,
    solve_grads,
    tensordot_grad_a,
    tensordot_grad_b,
)
from .reductions import (
    cumprod_grad,
    extremum_grad,
    norm_grad,
    prod_except,
    reverse_cumsum,
    size_of,
    trace_grad,
    unreduce,
)
from .schedules import OnlineSnapshots, checkpoint_schedule, online_schedule
from .shapes import (
    diag_grad,
    diagonal_grad,
    diff_grad,
    gradient_grad,
    layout_order,
    memory_positions,
    memory_ravel,
    memory_unravel,
    move_cotangent,
    pad_grad,
    permutation_of,
    reshape_each,
    reshape_like,
    select_grads,
    take_along_axis_grad,
    unappend,
    unconcatenate,
    unpack_cotangent,
    unrepeat,
    unroll,
    unrollaxis,
    unsplit,
    unstack,
    untile,
)
from .signals import (
    convolve_grads,
    fft_grad,
    fftn_grad,
    fftshift_grad,
    interp_grads,
    periodic_knots,
    irfft_grad,
    irfftn_grad,
    rfft_grad,
    rfftn_grad,
)
from .special import (
    logsumexp_grads,
    mvn_logpdf_grads,
    psi,
    signal_convolve,
    signal_convolve_grads,
)
from .state import (
    item_or_missing, kept_apart, restore_item, restored_into, snapshot, snapshot_state,
)
from .steps import (
    ProductsByStep,
    StepTerms,
    matmul_grad_a_steps,
    matmul_grad_b_steps,
    products_by_step,
)
from .structures import (
    AttributeCotangent,
    DictCotangent,
    ListCotangent,
    TupleCotangent,
    attribute_cotangent,
    attribute_grad,
    cotangent_at,
    cotangent_part,
    drop_last,
    elements_cotangent,
    index_of_max,
    index_of_min,
    item_cotangent,
    iterated_as_is,
    keys_of,
    private_copy,
    replaced,
    replaced_cotangents,
    sequence,
    sorted_order,
    unrepeat_sequence,
    unshared,
    unsort,
    without_item,
)
from .summed_products import (
    summed_matmul_grad_a,
    summed_matmul_grad_b,
    summed_product_seed,
    summed_product_size,
)

__all__ = [
    "ListCotangent",
    "TupleCotangent",
    "DictCotangent",
    "AttributeCotangent",
    "cotangent_at",
    "cotangent_part",
    "unrepeat_sequence",
    "sorted_order",
    "elements_cotangent",
    "unsort",
    "sequence_tangent",
    "attribute_cotangent",
    "attribute_grad",
    "private_copy",
    "unshared",
    "drop_last",
    "untouched",
    "items_apart",
    "item_once",
    "apart_from_free",
    "same_window",
    "taken_again",
    "same_or_untouched",
    "untouched_except",
    "view_index",
    "slot_alone",
    "is_window",
    "slot_same",
    "sequence_operand",
    "unpacked",
    "castable",
    "held_at",
    "window",
    "window_by",
    "same_object",
    "keys_of", "iterated_as_is", "index_of_max", "index_of_min",
    "sequence",
    "checkpoint_schedule",
    "OnlineSnapshots",
    "online_schedule",
    "unbroadcast",
    "in_place",
    "unreduce",
    "size_of",
    "grad_seed",
    "grad_like",
    "into_first", "into_second", "unreduced",
    "zeros_grad",
    "stop_gradient",
    "on_grad",
    "takes_site",
    "GradSite",
    "snapshot",
    "snapshot_state",
    "kept_apart",
    "restored_into",
    "item_or_missing",
    "restore_item",
    "item_cotangent",
    "without_item",
    "signum",
    "signum_grad",
    "signum_tangent",
    "matmul_grad_a",
    "matmul_grad_b",
    "summed_matmul_grad_a", "summed_matmul_grad_b", "summed_product_seed", "summed_product_size",
    "tensordot_grad_a",
    "tensordot_grad_b",
    "einsum_grads",
    "prod_except",
    "extremum_grad",
    "norm_grad",
    "trace_grad",
    "untile",
    "unrepeat",
    "unconcatenate",
    "is_basic_index",
    "getitem_grad",
    "cotangent_buffer", "scatter_add",
    "reshape_each",
    "reshape_like",
    "layout_order",
    "memory_positions",
    "memory_ravel",
    "memory_unravel",
    "move_cotangent",
    "unstack",
    "reverse_cumsum",
    "cumprod_grad",
    "fft_grad",
    "fftn_grad",
    "fftshift_grad",
    "rfft_grad",
    "irfft_grad",
    "rfftn_grad",
    "irfftn_grad",
    "convolve_grads",
    "interp_grads",
    "periodic_knots",
    "psi",
    "logsumexp_grads",
    "mvn_logpdf_grads",
    "signal_convolve",
    "signal_convolve_grads",
    "outer_grads",
    "unpack_cotangent",
    "inv_grad",
    "solve_grads",
    "cholesky_grad",
    "eig_grad",
    "eigh_grad",
    "eigvals_grad",
    "eigvalsh_grad",
    "svd_grad",
    "qr_grad",
    "pinv_grad",
    "lstsq_grads",
    "matrix_power_grad",
    "expand",
    "add_parts",
    "missing_tangent",
    "zero_tangent",
    "fresh_tangent",
    "tangent_like",
    "tangent_attr",
    "match_complex",
    "kron_grads",
    "cross_grads",
    "unsplit",
    "unroll",
    "unappend",
    "diag_grad",
    "diagonal_grad",
    "unrollaxis",
    "pad_grad",
    "take_along_axis_grad",
    "permutation_of",
    "select_grads",
    "diff_grad",
    "gradient_grad",
    "check_finite",
    "matmul_grad_b_steps", "matmul_grad_a_steps", "products_by_step", "ProductsByStep",
    "StepTerms",
    "written_cotangent", "written_tangent",
    "replaced", "replaced_cotangents", "replaced_tangent",
]
