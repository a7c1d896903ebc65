"""What, besides the function, decides the generated code: :class:`Options`.

A module of its own, below every stage, because the cache keys on these
options, the api builds them, and the pipeline (:mod:`srcgrad.pipeline`)
reads them to choose its passes.

    >>> validate_options(Options(policy=("revolve", 4)))
    >>> validate_options(Options(policy="fast"))
    Traceback (most recent call last):
    srcgrad.errors.SrcGradError: unknown policy 'fast': use one of 'save', 'recompute', ...
    >>> validate_options(Options(policy=("revolve", 0)))
    Traceback (most recent call last):
    srcgrad.errors.SrcGradError: policy ('revolve', 0): ... needs at least one snapshot: ...
    >>> validate_options(Options(backend="jax"))
    Traceback (most recent call last):
    srcgrad.errors.SrcGradError: unknown backend 'jax': use one of 'numpy', 'numba'
"""

from __future__ import annotations

from dataclasses import dataclass

from .errors import SrcGradError

MODES = ("grad", "value_and_grad", "vjp", "jvp", "tangent")
POLICIES = ("save", "recompute", "save_products", "sqrt", "revolve")
FORWARD_MODES = ("jvp", "tangent")       # forward mode; the others are reverse mode
JOINT_MODES = ("grad", "value_and_grad")  # one function; "vjp" (and callees) a pair
BACKENDS = ("numpy", "numba")            # what runs the generated code (srcgrad/backends)


@dataclass(frozen=True)
class Options:
    """Everything besides the function that determines the generated code."""

    mode: str = "grad"
    wrt: tuple = (0,)
    single: bool = True          # wrt was an int: return one gradient, not a tuple
    policy: str = "save"
    optimize: bool = True
    receiver: type | None = None  # the class of the first argument, for methods
    floats: tuple = ()           # positions of arguments known to be Python floats
    ints: tuple = ()             # positions of arguments known to be Python ints (scalars:
    #                              no broadcasting bookkeeping, analysis/activity.py)
    check_finite: bool = False   # anomaly mode: check each cotangent for NaN/Inf (ad/anomaly.py)
    backend: str = "numpy"       # "numba": the module compiled with numba.njit (srcgrad/backends)
    callees: tuple = ()          # functions passed as arguments: api.arguments.Callee entries
    sequences: tuple = ()        # positions of arguments that are lists or tuples (their + and *
    #                              concatenate and repeat: normalize/sequences.py)
    objects: tuple = ()          # positions of arguments that are user objects (named tuples,
    #                              dataclasses, instances): their attributes are fields, not
    #                              ndarray attributes (normalize/attribute_reads.py)
    object_classes: tuple = ()   # (position, class) of the user objects passed other than
    #                              first: their methods resolved by class (opt.update(w, g))
    sparse: tuple = ()           # (position, field or None) of the SciPy sparse matrices passed,
    #                              or held as fields of an object passed (analysis/sparse_operands)


def validate_options(options: Options) -> None:
    if options.mode not in MODES:
        raise SrcGradError(f"unknown mode {options.mode!r}; expected one of {MODES}")
    if options.backend not in BACKENDS:
        raise SrcGradError(f"unknown backend {options.backend!r}: use one of "
                           f"{', '.join(map(repr, BACKENDS))}")
    policy = options.policy
    if callable(policy):
        return
    if isinstance(policy, tuple) and len(policy) == 2 and policy[0] == "revolve" \
            and isinstance(policy[1], int) and policy[1] >= 1:
        return
    if isinstance(policy, tuple) and len(policy) == 2 and policy[0] == "revolve":
        # (review s37 R5-12: 'unknown policy' for the policy it is, with too few snapshots)
        raise SrcGradError(
            f"policy {policy!r}: binomial checkpointing needs at least one snapshot: "
            f"('revolve', K) with K >= 1" + ("" if isinstance(policy[1], int) else
                                             f", an int, not {type(policy[1]).__name__}"))
    if policy not in POLICIES or policy == "revolve":
        raise SrcGradError(
            f"unknown policy {policy!r}: use one of 'save', 'recompute', 'save_products', "
            f"'sqrt', ('revolve', snapshots) or a callable deciding per value")


__all__ = ["BACKENDS", "FORWARD_MODES", "JOINT_MODES", "MODES", "POLICIES", "Options", "validate_options"]
