"""Exported entry points of a gradient of a bound method, a callable object or a partial.

``grad(model)``, ``grad(model.loss)`` and ``grad(functools.partial(f, 3.0))``
take the method's or the partial's own arguments (``g(x)``), while the code
generated for them takes the object or the fixed values first
(``grad_loss(self, x)``): the call passes them in.  An exported module has no
such call, so :func:`bind_fixed` writes them in: the generated entry point is
renamed (``_grad_loss``) and a function with the gradient's own signature
takes its name and passes the bound values, written as module-level literals
(``bound_self``, ``bound_a``) like the values the code binds from globals and
closures.  An object becomes a ``types.SimpleNamespace`` of the attributes the
generated code reads from it (``self.W``); one it reads that cannot be written
as a literal (a method the code calls without differentiating it, an
arbitrary object) makes the export fail, naming it.

    >>> import numpy as np
    >>> class Scale:
    ...     def __init__(self): self.k = 2.0
    >>> src = ("def grad_f(self, x):\\n"
    ...        "    '''Gradient of f.'''\\n"
    ...        "    return self.k * x\\n")
    >>> new, bindings, errors = bind_fixed(src, ("grad_f",), ["self"], (Scale(),), {})
    >>> [line for line in new.splitlines() if line.lstrip().startswith(("def", "return"))]
    ['def _grad_f(self, x):', '    return self.k * x', 'def grad_f(x):', '    return _grad_f(bound_self, x)']
    >>> bindings["bound_self"], errors
    (namespace(k=2.0), [])
"""

from __future__ import annotations

import ast
import inspect
import types

import numpy as np

from .portable import NotExportable, literal


def bind_fixed(source: str, entries, names, fixed, keywords):
    """``(source, bindings, errors)``: ``source`` with each entry point whose
    parameters start with ``names`` (the parameters ``fixed`` fills, in order)
    and include the keys of ``keywords`` renamed and wrapped by a function of
    its other parameters; ``bindings`` maps the module-level names given to
    the bound values to the values to write; ``errors`` says what cannot be
    written."""
    tree = ast.parse(source)
    functions = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    taken = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} | set(functions)
    bound = dict(zip(names, fixed)) | dict(keywords)
    module_name = {}
    for param in bound:
        module_name[param] = f"bound_{param}"
        while module_name[param] in taken:
            module_name[param] += "_"
    values, errors, wrappers = {}, [], []
    lines = source.splitlines(keepends=True)
    read = _attributes_read(tree, set(names))
    for entry in entries:
        node = functions.get(entry)
        args = node.args if node is not None else None
        params = [a.arg for a in args.args] if args is not None else []
        if node is None or params[:len(names)] != list(names) \
                or not set(keywords) <= set(params):
            continue  # (a vjp's backward function: it takes the residuals)
        if args.posonlyargs or args.vararg or args.kwonlyargs or args.kwarg:
            errors.append(f"'{entry}' takes {', '.join(bound)} in a way srcgrad cannot bind")
            continue
        for param, value in bound.items():
            values.setdefault(module_name[param], _value(param, value, read, errors))
        defaults = dict(zip(params[len(params) - len(args.defaults):], args.defaults))
        kept = [a for a in args.args if a.arg not in bound]
        signature = ast.unparse(ast.arguments(
            posonlyargs=[], args=kept, vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None,
            defaults=[defaults[a.arg] for a in kept if a.arg in defaults]))
        rest = [a.arg for a in kept]
        passed = [module_name[p] for p in names]
        if keywords:  # f(x, scale) bound as partial(f, scale=3.0): by name
            passed += [f"{p}={p}" for p in rest] + [f"{k}={module_name[k]}" for k in keywords]
        else:
            passed += rest
        plain = all(map(_is_plain, bound.values()))
        what = ("the values the partial fixes" if plain else "the object the gradient was\n"
                "    taken of, as a namespace of the attributes the code reads")
        held = ", ".join(f"{p} bound to {module_name[p]}" for p in bound)
        wrappers.append(
            f"\n\ndef {entry}({signature}):\n"
            f'    """{entry} with {held} (above): {what}."""\n'
            f"    return _{entry}({', '.join(passed)})\n")
        line = lines[node.lineno - 1]
        at = line.index(f"def {entry}(")
        lines[node.lineno - 1] = f"{line[:at]}def _{entry}({line[at + len(entry) + 5:]}"
    return "".join(lines).rstrip("\n") + "\n" + "".join(wrappers), values, errors


def _is_plain(value) -> bool:
    try:
        literal(value)
    except NotExportable:
        return False
    return True


def _value(param, value, read, errors):
    """``value`` as the module holds it: itself, where a literal can write it,
    else a namespace of the attributes the code reads that ``value`` has."""
    try:
        literal(value)
        return value
    except NotExportable as exc:
        if isinstance(value, _DATA) or inspect.isroutine(value) or isinstance(value, type):
            errors.append(f"'{param}' is {exc}")
            return value
    attrs = {}
    for attr, off_bound in sorted(read.items()):
        got = _attribute(value, attr)
        if got is _MISSING:
            continue
        try:
            literal(got)
        except NotExportable as exc:
            if off_bound:  # (an attribute of an array read under another name: not this)
                errors.append(f"'{param}.{attr}' is {exc}")
            continue
        attrs[attr] = got
    return types.SimpleNamespace(**attrs)


_MISSING = object()
#: Values that are data, not objects with attributes: one of these that cannot
#: be written (an array too large) is named, not taken apart.
_DATA = (np.ndarray, np.generic, list, tuple, dict, set, frozenset, str, bytes, int, float,
         complex)


def _attribute(value, attr):
    """``value.attr``, or :data:`_MISSING` where it has none (or a property raises)."""
    try:
        return getattr(value, attr)
    except Exception:  # noqa: BLE001 - whatever a property raises
        return _MISSING


def _attributes_read(tree, bound: set) -> dict[str, bool]:
    """The attributes the code reads off a name that is not a module, each
    with whether it is read off a parameter the bound values fill
    (``self.W``): candidates for the bound object's."""
    modules = {alias.asname or alias.name.partition(".")[0]
               for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom))
               for alias in node.names}
    read: dict[str, bool] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load) \
                and isinstance(node.value, ast.Name) and node.value.id not in modules:
            read[node.attr] = read.get(node.attr, False) or node.value.id in bound
    return read
