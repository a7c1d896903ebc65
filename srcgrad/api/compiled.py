"""Generated code in memory: one compiled module per function and options.

Every transformation ends in :func:`compile_function`.  It looks in memory
first, then in the disk cache (:mod:`..cache.store`), and only then runs the
pipeline.  What it returns knows what it was generated from: the function's
code object, the rule registry's generation and each global or closure value
the code bound, by identity, and the defaults of the function and of the
callees it inlines, so :meth:`Compiled.stale` notices a rebound global or new
``__defaults__`` and the next call regenerates instead of giving a stale
gradient.

:attr:`Compiled.watched` says the same as :meth:`Compiled.stale` in a form a
call can check without running a line of Python: C callables that return
those objects (see :class:`.transforms.Transformed`, whose calls compare them
by identity, so that a debugger stepping into a gradient lands in the
generated code).
"""

from __future__ import annotations

import inspect
import operator
import threading
import types
import warnings
import weakref
from functools import partial

from .. import pipeline
from ..cache import manifest, provenance
from ..cache import store as cache
from ..errors import ZeroGradientWarning
from ..frontend.parse import Resolver
from ..frontend.source_lines import read_names
from ..pipeline import Options
from ..rules import registry
from .held_functions import LENGTH, changed, held_function_dependencies, list_item
from .held_values import check_reached

_MEMORY: "weakref.WeakKeyDictionary[object, dict]" = weakref.WeakKeyDictionary()
_LOCK = threading.RLock()


class Compiled:
    """One generated module: its entry points, source, and what it depends on."""

    def __init__(self, fn, generated: pipeline.Generated, functions, filename, options):
        self.generated = generated
        self.source = generated.source
        self.functions = functions
        self.filename = filename
        self.code = fn.__code__
        self.fn = fn
        self.options = options
        found = provenance.survey(fn, options.receiver, manifest.arguments(options))
        check_reached(found)  # an np.matrix or masked array read from a global, ...
        deps = _dependencies(fn, generated.free) + _callee_dependencies(options)
        deps += _reached_dependencies(fn, {**generated.bindings, **generated.free}, found,
                                      deps)
        self.deps = deps + _default_dependencies(fn, deps) + _code_dependencies(fn, deps)
        self.deps += held_function_dependencies(deps)  # ACTS[name](h): each function in ACTS
        self.rules = registry.generation()
        self.watched = _watched(fn, self.deps)

    def stale(self) -> bool:
        if self.fn.__code__ is not self.code or registry.GENERATION[0] != self.rules:
            return True
        for container, key, obj in self.deps:
            if key is LENGTH or type(container) is list:  # a function table (held_functions.py)
                if changed(container, key, obj):
                    return True
            elif isinstance(container, dict):
                if container.get(key, _GONE) is not obj:
                    return True
            elif isinstance(container, (types.FunctionType, type)):  # defaults, a method
                if getattr(container, key, _GONE) is not obj:
                    return True
            else:
                try:
                    if container.cell_contents is not obj:
                        return True
                except ValueError:
                    return True
        return False


_GONE = object()


def _dependencies(fn, free):
    resolver = Resolver.for_function(fn)
    cells = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))
    deps = []
    for name, obj in sorted(free.items()):
        where = resolver.where(name)
        if where == "closure":
            deps.append((cells[name], name, obj))
        elif where == "global":
            deps.append((fn.__globals__, name, obj))
    return deps


def _reached_dependencies(fn, free, found, known) -> list:
    """What the code depends on in the user functions ``fn`` calls, beside
    ``fn``'s own globals and closures (``known``): the global or closure value
    of the function whose code bound each name of ``free`` (the module's free
    names and bindings, those of a module loaded from disk too: ``SCALE`` read by
    ``helpers.smooth``, in another module; renamed ``helpers_onp`` where it was
    inlined), and the module member, global or closure cell each called user
    function was reached through (``helpers.smooth``, ``inner``) -- so that
    ``helpers.SCALE = 0.25`` or ``helpers.smooth = other`` regenerates the code
    as rebinding one of ``fn``'s own globals does.  Found by the disk cache's
    survey ``found`` of the functions reachable from ``fn`` (:mod:`..cache.provenance`);
    a name found in several places is watched in each (at worst a needless
    recompilation)."""
    at = {repr(path): obj for obj, path in found.seen.values()}
    seen = {(id(container), key) for container, key, _ in known}
    deps = []

    def watch(path) -> None:
        if path is None or path[0] not in ("global", "closure", "attr"):
            return
        holder, key = at.get(repr(path[1])), path[2]
        if path[0] == "attr" and isinstance(holder, type):
            # a method of a class the code is specialised on (M.act = other):
            # watched where it is a plain function, which getattr gives as it is
            value = inspect.getattr_static(holder, key, _GONE)
            if not isinstance(value, types.FunctionType) or getattr(holder, key) is not value:
                return
            container = holder
        elif path[0] == "attr":  # a module's member (helpers.smooth)
            if not isinstance(holder, types.ModuleType):
                # the function of a partial or bound method (PART.func, BM.__func__):
                # the global or closure holding it is watched (PART = partial(h, k=3.0))
                watch(path[1])
                if key not in getattr(holder, "__dict__", {}) and provenance.user_object(holder):
                    # MODEL.run(x), S(x): the method of the object's class, which
                    # Runner.run = other rebinds (R1-7)
                    container = type(holder)
                    value = inspect.getattr_static(container, key, _GONE)
                    if not isinstance(value, types.FunctionType) \
                            or getattr(container, key) is not value:
                        return
                else:
                    return
            else:
                container, value = vars(holder), vars(holder).get(key, _GONE)
        elif not isinstance(holder, types.FunctionType):
            return
        elif path[0] == "global":
            container, value = holder.__globals__, holder.__globals__.get(key, _GONE)
        else:
            cells = dict(zip(holder.__code__.co_freevars, holder.__closure__ or ()))
            container = cells.get(key)
            try:
                value = container.cell_contents
            except (AttributeError, ValueError):
                return
        if value is not _GONE and (id(container), key) not in seen:
            seen.add((id(container), key))
            deps.append((container, key, value))

    for name, obj in sorted(free.items()):
        watch(found.locate(name, obj))
    for called, path in found.functions:
        if called is not fn:
            watch(path)
    return deps


def _default_dependencies(fn, deps) -> list:
    """The defaults of ``fn`` and of the functions its code binds (the callees
    it inlines), as ``(function, "__defaults__", tuple)``: the code runs with
    those defaults (the generated signature's, a callee's bound where it is
    inlined), so assigning ``f.__defaults__`` or ``f.__kwdefaults__`` anew must
    regenerate it, as rebinding a global does."""
    functions = [fn] + [obj for _, _, obj in deps if isinstance(obj, types.FunctionType)]
    seen, out = set(), []
    for f in functions:
        if id(f) not in seen:
            seen.add(id(f))
            out += [(f, "__defaults__", f.__defaults__), (f, "__kwdefaults__", f.__kwdefaults__)]
    return out


def _code_dependencies(fn, deps) -> list:
    """The code objects of the user functions the code inlines or calls (those
    ``deps`` holds), as ``(function, "__code__", code)``: a hot reload that
    patches only the edited helper (``helper.__code__ = new.__code__``, as
    jurigged or an IDE's hot swap does) must regenerate ``fn``'s code, whose
    object and globals did not change (review s35 R3-16: the old helper's
    gradient was served, from memory, next to a value computed by the new)."""
    seen, out = {id(fn)}, []
    for _, _, obj in deps:
        if isinstance(obj, types.FunctionType) and id(obj) not in seen:
            seen.add(id(obj))
            out.append((obj, "__code__", obj.__code__))
    return out


def _callee_dependencies(options) -> list:
    """What the functions passed as arguments (``options.callees``) read from
    their closures and globals, as :func:`_dependencies` gives for ``fn``: the
    code differentiates their bodies with those values bound, so a rebound
    ``a`` in ``lambda v: v * a`` must regenerate it (every name the function
    reads is watched, the ones the code did not bind too: at worst a needless
    recompilation)."""
    deps = []
    for callee in options.callees:
        fn = getattr(callee, "obj", None)
        fn = getattr(fn, "__func__", fn)  # a bound method's function
        if isinstance(fn, partial):
            fn = fn.func
        if not isinstance(fn, types.FunctionType):
            continue
        for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
            try:
                deps.append((cell, name, cell.cell_contents))
            except ValueError:  # not bound yet: the function would raise NameError
                pass
        for name in sorted(read_names(fn.__code__)):
            if name in fn.__globals__:
                deps.append((fn.__globals__, name, fn.__globals__[name]))
    return deps


def _watched(fn, deps) -> dict:
    """What :meth:`Compiled.stale` reads, as zero-argument C callables (a
    ``partial`` of ``getattr``, ``dict.get`` or ``operator.getitem``) that return
    the function's code object, the rules' generation, each global or closure
    value the code bound and the defaults it runs with; keyed by ``(id(holder), name)``, so the callables of
    several compiled modules of one function merge without repeats.  (A closure
    cell emptied by ``del`` makes its callable raise ValueError; the function
    itself would raise NameError there.)"""
    watched = {(id(fn), "__code__"): partial(getattr, fn, "__code__"),
               (id(registry.GENERATION), 0): partial(operator.getitem, registry.GENERATION, 0)}
    for container, key, _ in deps:
        if key is LENGTH:
            watched[id(container), "len"] = partial(len, container)
        elif type(container) is list:
            watched[id(container), key] = partial(list_item, container, key)
        elif isinstance(container, dict):
            watched[id(container), key] = partial(container.get, key, _GONE)
        elif isinstance(container, (types.FunctionType, type)):
            watched[id(container), key] = partial(getattr, container, key, _GONE)
        else:
            watched[id(container), "cell_contents"] = partial(getattr, container, "cell_contents")
    return watched


def compile_function(fn, options: Options) -> Compiled:
    """The generated module of ``fn`` for ``options``, from memory, the disk
    cache or a run of the pipeline, in that order."""
    with _LOCK:
        per_fn = _MEMORY.setdefault(fn, {})
        hit = per_fn.get(options)
        if hit is not None and not hit.stale():
            return hit
        # The disk cache first: a valid entry there costs file reads, no pipeline run.
        loaded = cache.lookup(fn, options)
        if loaded is None:
            loaded = cache.store(fn, options, pipeline.generate(fn, options))
        generated = loaded.generated
        functions = tuple(loaded.namespace[name] for name in generated.entries)
        for f in functions:
            if fn.__defaults__ and f.__code__.co_argcount == len(generated.program.params):
                f.__defaults__ = fn.__defaults__
        compiled = Compiled(fn, generated, functions, loaded.filename, options)
        per_fn[options] = compiled
        if options.mode in ("grad", "value_and_grad"):
            warn_zero_gradients(fn, getattr(generated, "zero_gradients", ()))
        return compiled


_WARNED: "weakref.WeakKeyDictionary[object, set]" = weakref.WeakKeyDictionary()


def warn_zero_gradients(fn, names) -> None:
    """Warn (:class:`ZeroGradientWarning`, at ``fn``'s definition) once per
    function and argument that the gradient asked for is always zero.  Not for
    srcgrad's own generated code, differentiated again for a second derivative
    (hvp's ``tangent_f``): the user never wrote that function and cannot call
    ``explain`` on it (the user's function warns where its gradient is asked)."""
    if (getattr(fn, "__module__", None) or "").startswith("srcgrad.generated.") \
            or fn.__code__.co_filename.startswith("<srcgrad:"):
        return
    warned = _WARNED.setdefault(fn, set())
    for name in names:
        if name in warned:
            continue
        warned.add(name)
        code = fn.__code__
        warnings.warn_explicit(
            f"srcgrad: the gradient of {fn.__qualname__} with respect to {name} is always "
            f"zero: no differentiable path leads from {name} to the returned value "
            f"(srcgrad.explain({fn.__name__}, wrt=...) shows where the flow is cut)",
            ZeroGradientWarning, code.co_filename, code.co_firstlineno,
            module=getattr(fn, "__module__", None) or "srcgrad")


def compiled_with_source(fn, source) -> Compiled | None:
    """A module already compiled in memory for ``fn`` whose source is ``source``
    (how :func:`.transforms.export` finds what a pullback runs), or None."""
    if not source or not _weakrefable(fn):
        return None
    found = [c for c in _MEMORY.get(fn, {}).values() if c.source == source]
    return found[0] if found else None


def _weakrefable(obj) -> bool:
    try:
        weakref.ref(obj)
    except TypeError:
        return False
    return True
