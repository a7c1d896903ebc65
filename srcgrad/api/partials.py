"""A ``functools.partial`` as a function srcgrad can read.

``grad`` and ``value_and_grad`` take a partial by calling the transformation of
its function with the fixed arguments first (``PartialTransformed``).  The
other transformations -- ``jvp``, ``vjp``, ``hvp``, ``hessian``, ``jacobian``
-- count argument positions, shapes and tangents of the function they are
given, so they get the partial as the ``def`` it stands for::

    def scaled_partial(w):
        return scaled(fixed_1, w, scale=fixed_scale)

its source kept in :mod:`linecache` (as the rules of ``rules/derive.py`` are),
its globals the function and the fixed values (constants: a partial's fixed
arguments get no derivative).  srcgrad differentiates it as any function
calling a helper: the call of ``scaled`` is followed into its source.

    >>> import functools, inspect
    >>> def scaled(a, w, scale=1.0):
    ...     return a * w * scale
    >>> f = as_function(functools.partial(scaled, 2.5, scale=3.0))
    >>> print(inspect.getsource(f), end="")
    def scaled_partial(w):
        return scaled(fixed_1, w, scale=fixed_scale)
    >>> f(2.0)
    15.0
"""

from __future__ import annotations

import functools
import inspect
import itertools
import linecache

_FILES = itertools.count(1)


def as_function(partial: functools.partial):
    """The ``def`` that calls ``partial.func`` as ``partial`` does."""
    fn = partial.func
    name = getattr(fn, "__name__", "fn")
    if not isinstance(name, str) or not name.isidentifier():
        name = "fn"  # partial(lambda a, x: ...): a name the def can call it by
    signature = inspect.signature(partial)
    while name in signature.parameters:  # partial(lambda w, fn: ..., 2.0): not shadowed
        name = f"{name}_called"
    namespace = {name: fn}
    fixed = []
    for k, value in enumerate(partial.args, 1):
        namespace[f"fixed_{k}"] = value
        fixed.append(f"fixed_{k}")
    params, passed, defaults = [], [], []
    for p in signature.parameters.values():
        if p.name in partial.keywords:  # a fixed keyword (passed again: not followed)
            continue
        if p.kind is p.KEYWORD_ONLY and p.default is not p.empty:
            # vjp(f, x, shift=1.0) of def f(x, *, scale=2.0, shift): scale's default,
            # which no positional caller of the def could change, passed as f's own
            namespace[f"default_{p.name}"] = p.default
            defaults.append(f"{p.name}=default_{p.name}")
            continue
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD, p.KEYWORD_ONLY):
            raise TypeError(f"{partial!r} leaves a parameter that is not plain ({p})")
        if p.default is not p.empty:
            namespace[f"default_{p.name}"] = p.default
            params.append(f"{p.name}=default_{p.name}")
        else:
            params.append(p.name)
        passed.append(p.name)
    keywords = []
    for key, value in partial.keywords.items():
        namespace[f"fixed_{key}"] = value
        keywords.append(f"{key}=fixed_{key}")
    made = f"{name}_partial"
    source = (f"def {made}({', '.join(params)}):\n"
              f"    return {name}({', '.join([*fixed, *passed, *keywords, *defaults])})\n")
    filename = f"<srcgrad partial of {name} {next(_FILES)}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace["__name__"] = getattr(fn, "__module__", None) or "__main__"
    exec(compile(source, filename, "exec"), namespace)  # noqa: S102 - our own text
    made_fn = namespace[made]
    made_fn.__doc__ = getattr(fn, "__doc__", None)  # (no __wrapped__: its source is this)
    return made_fn
