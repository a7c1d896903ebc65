"""The names of a nested function's own locals, kept apart from its enclosing
function's.

The look at what a function updates in place (:class:`.argument_updates.Scan`)
joins names by memory.  A nested function's parameter or a name it binds is
its own variable -- Python's scopes -- even where the enclosing function has
one of the same name (autograd's ``rnn.py``: ``readout`` binds a local
``output`` while ``pred`` appends to its list ``output``).  Taken as one name,
the two joined what neither shares, and a caller was refused for an update
nothing makes.  Each such Name node gets a key of its own here, ``name@scope``
(:func:`shown` gives the name back for messages); a name the nested function
only reads is the enclosing one's (its closure).  ``global`` and ``nonlocal``
are refused elsewhere; a name they declare stays the enclosing one's here.

    >>> import gast
    >>> tree = gast.parse('''
    ... def pred(inputs):
    ...     def readout(h):
    ...         output = h * 2.0
    ...         return output + scale
    ...     output = [readout(inputs)]
    ...     scale = 1.0
    ...     return output
    ... ''').body[0]
    >>> keys = scoped_names(tree)
    >>> sorted(set(keys.values()))
    ['h@readout1', 'output@readout1']
    >>> shown('output@readout1')
    'output'
"""

from __future__ import annotations

import gast

from ..ir.syntax import child_nodes, walk


def scoped_names(func) -> dict:
    """``id(Name node) -> key`` for every Name in a function or lambda nested
    in ``func`` (at any depth) that is that function's own local: a
    parameter, or a name it binds and declares neither global nor nonlocal."""
    keys, count = {}, [0]
    if not any(isinstance(n, (gast.FunctionDef, gast.Lambda)) and n is not func
               for n in walk(func)):
        return keys  # nothing nested (the walk, not the visit: the cheaper of the two)

    def visit(node, env) -> None:
        for child in child_nodes(node):
            if isinstance(child, (gast.FunctionDef, gast.Lambda)):
                count[0] += 1
                label = f"{getattr(child, 'name', 'lambda')}{count[0]}"
                inner = dict(env)
                for name in _own_locals(child):
                    inner[name] = f"{name}@{label}"
                _mark(child, inner, keys)
                visit(child, inner)
            else:
                visit(child, env)

    visit(func, {})
    return keys


def _mark(fn, env, keys) -> None:
    """Key the Name nodes of ``fn`` (not those of functions nested deeper,
    marked on their own visit) by ``env``."""
    todo = list(gast.iter_child_nodes(fn))
    while todo:
        node = todo.pop()
        if isinstance(node, gast.Name) and node.id in env:
            keys[id(node)] = env[node.id]
        if isinstance(node, (gast.FunctionDef, gast.Lambda)):
            # its defaults and decorators run here; its body is its own
            todo.extend(node.args.defaults)
            todo.extend(d for d in node.args.kw_defaults if d is not None)
            todo.extend(getattr(node, "decorator_list", []))
            continue
        todo.extend(gast.iter_child_nodes(node))


def _own_locals(fn) -> set:
    """The parameters of ``fn`` and the names its body binds, less those
    declared global or nonlocal (bound by functions nested in it are theirs)."""
    args = fn.args
    names = {a.id for a in [*args.args, *args.posonlyargs, *args.kwonlyargs,
                            *(x for x in (args.vararg, args.kwarg) if x is not None)]
             if isinstance(a, gast.Name)}
    declared = set()
    todo = list(fn.body) if isinstance(fn.body, list) else [fn.body]
    while todo:
        node = todo.pop()
        if isinstance(node, (gast.Global, gast.Nonlocal)):
            declared.update(node.names)
        elif isinstance(node, gast.Name) and not isinstance(node.ctx, gast.Load):
            names.add(node.id)
        if isinstance(node, gast.FunctionDef):
            names.add(node.name)
        if isinstance(node, (gast.FunctionDef, gast.Lambda)):
            continue  # its own scope
        todo.extend(gast.iter_child_nodes(node))
    return names - declared


def shown(key: str) -> str:
    """The name as the user wrote it, for a key of :func:`scoped_names`."""
    return key.split("@")[0]
