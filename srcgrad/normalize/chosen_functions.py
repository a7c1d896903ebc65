"""A local function defined on several paths is chosen where it is called.

Notebook code picks an activation in a branch::

    if kind == "relu":
        act = lambda z: np.maximum(z, 0.0)
    else:
        def act(z):
            return np.tanh(z)
    h = act(x @ W)

srcgrad inlines a local function where it is called, so it must know which
definition a call runs; with two, that depends on the path taken.  This
rewrite gives each definition a name of its own and binds ``act`` to a number
saying which one ran, and each call becomes a conditional over that number --
the path Python takes, decided as the code runs::

    >>> import gast
    >>> from ..ir.syntax import source_of
    >>> func = gast.parse(
    ...     "def f(x, relu):\\n"
    ...     "    if relu:\\n"
    ...     "        act = lambda z: z * (z > 0)\\n"
    ...     "    else:\\n"
    ...     "        act = lambda z: z * z\\n"
    ...     "    return act(x)\\n").body[0]
    >>> choose_local_functions(func)
    >>> print(source_of(func))
    def f(x, relu):
        if relu:
            act_1 = lambda z: z * (z > 0)
            act = 1
        else:
            act_2 = lambda z: z * z
            act = 2
        return act_1(x) if act == 1 else act_2(x)

Only where every binding of the name is a ``def`` or a lambda of this function
(not a parameter, not another value), every use of it is a call (a function
passed on as a value stays refused, located), and no nested function binds
the name itself.  Sound because exactly one branch of the conditional runs --
the one whose definition ran last, as Python's name lookup finds -- with the
call's arguments evaluated once, there; a call before any definition ran
raises NameError as Python's does (``act`` is unbound then too).
"""

from __future__ import annotations

import collections

import gast

from ..ir.syntax import clone, walk


def choose_local_functions(func) -> None:
    """Rewrite, in place, the local functions of ``func`` defined more than once
    (see the module docstring)."""
    definitions, other = _bindings(func)
    taken = {n.id for n in walk(func) if isinstance(n, gast.Name)} | {
        n.name for n in walk(func) if isinstance(n, gast.FunctionDef)}
    params = {a.id for a in func.args.args if isinstance(a, gast.Name)}
    for name, nodes in definitions.items():
        if len(nodes) < 2 or name in other or name in params:
            continue
        loads = [n for n in walk(func) if isinstance(n, gast.Name) and n.id == name
                 and isinstance(n.ctx, gast.Load)]
        calls = [c for c in walk(func) if isinstance(c, gast.Call)
                 and isinstance(c.func, gast.Name) and c.func.id == name]
        if len(loads) != len(calls) or any(_defines(inner, name) for inner in _nested(func)):
            continue
        names = []
        for k, node in enumerate(nodes, 1):
            new = _fresh(f"{name}_{k}", taken)
            names.append(new)
            if isinstance(node, gast.FunctionDef):
                node.name = new
            else:
                node.targets[0].id = new
            node.chosen_tag = gast.copy_location(gast.Assign(
                targets=[gast.Name(id=name, ctx=gast.Store(), annotation=None,
                                   type_comment=None)],
                value=gast.Constant(value=k, kind=None), type_comment=None), node)
        _insert_tags(func)
        for call in calls:
            _choose(call, name, names)


def _bindings(func):
    """The ``def``s and lambdas bound to each name in ``func``'s own body (not
    in a nested function's), and the names bound any other way."""
    definitions, other = collections.defaultdict(list), set()
    for node in _own_nodes(func):
        if isinstance(node, gast.FunctionDef):
            definitions[node.name].append(node)
        elif isinstance(node, gast.Assign) and len(node.targets) == 1 \
                and isinstance(node.targets[0], gast.Name) \
                and isinstance(node.value, gast.Lambda):
            definitions[node.targets[0].id].append(node)
        elif isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
            other.add(node.id)
    for nodes in definitions.values():  # the lambda targets are stores too
        for node in nodes:
            if isinstance(node, gast.Assign):
                other.discard(node.targets[0].id)
    for name, nodes in definitions.items():
        if any(isinstance(n, gast.Name) and n.id == name and isinstance(n.ctx, gast.Store)
               and not any(n is d.targets[0] for d in nodes if isinstance(d, gast.Assign))
               for n in _own_nodes(func)):
            other.add(name)
    return definitions, other


def _own_nodes(func):
    """The nodes of ``func``'s body, not those inside a nested function or lambda
    (their own definitions, which the nested function's own scope holds)."""
    todo = list(reversed(func.body))
    while todo:
        node = todo.pop()
        yield node
        if isinstance(node, gast.Lambda):
            continue
        children = list(gast.iter_child_nodes(node))
        if isinstance(node, gast.FunctionDef):
            children = [*node.args.defaults, *node.decorator_list]
        todo.extend(reversed(children))


def _nested(func):
    return [n for n in walk(func) if isinstance(n, (gast.FunctionDef, gast.Lambda))
            and n is not func]


def _defines(inner, name) -> bool:
    """Whether the nested function ``inner`` binds ``name`` itself."""
    params = {a.id for a in inner.args.args if isinstance(a, gast.Name)}
    if name in params:
        return True
    return isinstance(inner, gast.FunctionDef) and any(
        (isinstance(n, gast.Name) and n.id == name and isinstance(n.ctx, gast.Store))
        or (isinstance(n, gast.FunctionDef) and n.name == name and n is not inner)
        for n in walk(inner))


def _fresh(base: str, taken: set) -> str:
    name, k = base, 1
    while name in taken:
        k += 1
        name = f"{base}_{k}"
    taken.add(name)
    return name


def _insert_tags(node) -> None:
    """Put each definition's ``act = k`` right after it, in every statement list."""
    for field in ("body", "orelse", "finalbody"):
        block = getattr(node, field, None)
        if not isinstance(block, list) or not block or not isinstance(block[0], gast.stmt):
            continue
        out = []
        for stmt in block:
            out.append(stmt)
            tag = getattr(stmt, "chosen_tag", None)
            if tag is not None:
                out.append(tag)
                del stmt.chosen_tag
        setattr(node, field, out)
        for stmt in out:
            _insert_tags(stmt)


def _choose(call, name: str, names: list) -> None:
    """Turn the call ``act(...)`` into ``act_1(...) if act == 1 else act_2(...)``."""
    def called(new):
        return gast.copy_location(gast.Call(
            func=gast.copy_location(gast.Name(id=new, ctx=gast.Load(), annotation=None,
                                              type_comment=None), call.func),
            args=[clone(a) for a in call.args],
            keywords=[gast.keyword(arg=k.arg, value=clone(k.value)) for k in call.keywords]),
            call)
    chosen = called(names[-1])
    for k in range(len(names) - 1, 0, -1):
        test = gast.Compare(left=gast.Name(id=name, ctx=gast.Load(), annotation=None,
                                           type_comment=None),
                            ops=[gast.Eq()], comparators=[gast.Constant(value=k, kind=None)])
        chosen = gast.IfExp(test=gast.copy_location(test, call), body=called(names[k - 1]),
                            orelse=chosen)
    gast.copy_location(chosen, call)
    # the call node itself becomes the conditional, wherever it stands
    call.__class__ = gast.IfExp
    call.__dict__.clear()
    call.__dict__.update(chosen.__dict__)
