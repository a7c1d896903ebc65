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

A function named where it is bound -- ``f = np.sin if flag else np.cos``, ``act
= np.tanh if cfg["act"] == "tanh" else relu``, or ``act = np.tanh`` in one
branch and a lambda in the other -- is chosen the same way: the conditional
expression keeps its test and binds the number of the branch it takes, and
each call runs the function that branch names (a lambda there gets a name of
its own first)::

    >>> func = gast.parse(
    ...     "def f(x, flag):\\n"
    ...     "    act = np.sin if flag else (lambda z: z * z)\\n"
    ...     "    return act(x)\\n").body[0]
    >>> choose_local_functions(func)
    >>> print(source_of(func))
    def f(x, flag):
        act_2 = lambda z: z * z
        act = 1 if flag else 2
        return np.sin(x) if act == 1 else act_2(x)

Only where every binding of the name is a ``def``, a lambda or a partial
(``functools.partial(np.multiply, w)``) made in this function, or a function
it names (a global, a builtin, a parameter or an attribute of one -- no name
this function binds), or a conditional expression of those (not
another value), every use of it is a call (a function passed on as a value
stays refused, located), and no nested function binds the name itself.  Sound because exactly one branch of the conditional runs --
the one whose definition ran last, as Python's name lookup finds -- with the
call's arguments evaluated once, there; a call before any definition ran
raises NameError as Python's does (``act`` is unbound then too).  A function
named is read where it is called rather than where it is bound: the same
object, as the names it reads are bound nowhere in the function; a lambda
bound before its conditional's test runs is the same function (making one
runs nothing).
"""

from __future__ import annotations

import collections

import gast

from ..ir.syntax import child_nodes, clone, walk


def choose_local_functions(func) -> None:
    """Rewrite, in place, the local functions of ``func`` defined more than once,
    or chosen by a conditional expression (see the module docstring)."""
    own = _own_nodes(func)  # (one walk: a long function's were most of the pass)
    stored = {n.id for n in own if isinstance(n, gast.Name)
              and not isinstance(n.ctx, gast.Load)} | {
        n.name for n in own if isinstance(n, gast.FunctionDef)}
    definitions, other = _bindings(own, stored)
    taken = None  # every name of the function, once a function is renamed
    loops = None  # the loops around each node, once a call is chosen
    params = {a.id for a in func.args.args if isinstance(a, gast.Name)}
    for name, nodes in definitions.items():
        chosen = any(isinstance(n, gast.Assign) and isinstance(n.value, gast.IfExp)
                     for n in nodes)
        if len(nodes) < 2 and not chosen or name in other or name in params:
            continue
        if taken is None:
            taken = {n.id for n in walk(func) if isinstance(n, gast.Name)} | {
                n.name for n in walk(func) if isinstance(n, gast.FunctionDef)}
        loads = [n for n in walk(func) if isinstance(n, gast.Name) and n.id == name
                 and isinstance(n.ctx, gast.Load)]
        calls = [c for c in walk(func) if isinstance(c, gast.Call)
                 and isinstance(c.func, gast.Name) and c.func.id == name]
        if len(loads) != len(calls) or any(_defines(inner, name) for inner in _nested(func)):
            continue
        callees = []  # what the call runs, for each number a binding gives 'name'
        origins = []  # the binding that gives each number
        for node in nodes:
            if isinstance(node, gast.FunctionDef) or _made_function(node.value):
                new = _fresh(f"{name}_{len(callees) + 1}", taken)
                if isinstance(node, gast.FunctionDef):
                    node.name = new
                else:
                    node.targets[0].id = new
                callees.append(_load(new, node))
                origins.append(node)
                node.chosen = True  # (a loop's calls before it: Inlining.chosen_ahead)
                node.chosen_tag = gast.copy_location(gast.Assign(
                    targets=[_store(name)], value=gast.Constant(value=len(callees), kind=None),
                    type_comment=None), node)
            else:  # act = np.tanh, act = np.tanh if c else (lambda z: z): numbered
                node.chosen_before = []
                node.value = _numbered(node.value, name, callees, taken, node.chosen_before)
                origins.extend([node] * (len(callees) - len(origins)))
        _insert_tags(func)
        loops = _enclosing_loops(own) if loops is None else loops
        for call in calls:  # (one in a nested function or lambda runs when it is called)
            _choose(call, name, callees, [k + 1 for k, origin in enumerate(origins)
                                          if _may_reach(origin, call, loops)]
                    if id(call) in loops else None)


def defined_ahead(body) -> list:
    """``(name, node)`` for each local function :func:`choose_local_functions`
    named apart (``g_2``) that a loop's ``body`` defines, which a call before
    it in the body may choose: ``s = s + g(x); g = lambda v: v ** 2`` is ``s =
    s + (g_1(x) if g == 1 else g_2(x)); g_2 = ...; g = 2``, whose ``g_2(x)``
    runs only once an earlier step defined ``g_2`` -- as the test of the
    loop-carried ``g`` says, when the code runs -- but is inlined where it
    stands, so the normaliser must know ``g_2`` on entering the loop (review
    s36 D-5: refused, naming 'g_2').  Only a definition without defaults (a
    default is evaluated where the ``def`` or ``lambda`` runs) and without a
    decorator, bound at that one place: what the call inlines is then the
    function the earlier step defined, its free names read when the call
    runs, as Python's closure reads them.

        >>> func = gast.parse(
        ...     "def f(x):\\n"
        ...     "    g = lambda v: v * 2.0\\n"
        ...     "    for i in range(3):\\n"
        ...     "        s = g(x)\\n"
        ...     "        g = lambda v: v ** 2\\n"
        ...     "    return s\\n").body[0]
        >>> choose_local_functions(func)
        >>> [name for name, _ in defined_ahead(func.body[2].body)]
        ['g_2']
    """
    found, todo = [], list(reversed(body))
    while todo:
        stmt = todo.pop()
        if isinstance(stmt, (gast.If, gast.For, gast.While)):
            todo.extend(reversed([*stmt.body, *stmt.orelse]))
            continue
        if not getattr(stmt, "chosen", False):
            continue
        if isinstance(stmt, gast.FunctionDef):
            name, node = stmt.name, stmt
        elif isinstance(stmt.value, gast.Lambda):
            name, node = stmt.targets[0].id, stmt.value
        else:
            continue  # a partial: what it binds is read where it is made
        if not (node.args.defaults or any(node.args.kw_defaults)
                or getattr(node, "decorator_list", None)):
            found.append((name, node))
    return found


def _bindings(own, stored):
    """The ``def``s and lambdas bound to each name in a function's own body
    (``own``, its nodes not in a nested function's: :func:`_own_nodes`), and the functions named there (``act = np.tanh``,
    ``act = np.tanh if c else relu``: :func:`_names_functions`); and the names
    bound any other way."""
    definitions, other = collections.defaultdict(list), set()
    for node in own:
        if isinstance(node, gast.FunctionDef):
            definitions[node.name].append(node)
        elif isinstance(node, gast.Assign) and len(node.targets) == 1 \
                and isinstance(node.targets[0], gast.Name) \
                and _names_functions(node.value, stored):
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
               for n in own):
            other.add(name)
    return definitions, other


def _names_functions(value, stored) -> bool:
    """Whether ``value`` is a lambda, a function named by no name the function
    binds (``np.tanh``, ``relu``, a parameter's ``p.act``), or a conditional
    expression choosing among those."""
    if isinstance(value, gast.IfExp):
        return _names_functions(value.body, stored) and _names_functions(value.orelse, stored)
    if _made_function(value):
        return True
    root = value
    while isinstance(root, gast.Attribute):
        root = root.value
    return isinstance(root, gast.Name) and root.id not in stored


def _numbered(value, name, callees, taken, before):
    """``value`` (:func:`_names_functions`) with each function it may take
    replaced by its number, the function appended to ``callees``; a lambda
    bound to a name of its own in ``before``."""
    if isinstance(value, gast.IfExp):
        body = _numbered(value.body, name, callees, taken, before)
        orelse = _numbered(value.orelse, name, callees, taken, before)
        return gast.copy_location(gast.IfExp(test=value.test, body=body, orelse=orelse), value)
    if _made_function(value):
        new = _fresh(f"{name}_{len(callees) + 1}", taken)
        before.append(gast.copy_location(gast.Assign(
            targets=[_store(new)], value=value, type_comment=None), value))
        before[-1].chosen = True
        value = _load(new, value)
    callees.append(value)
    return gast.copy_location(gast.Constant(value=len(callees), kind=None), value)


def _made_function(value) -> bool:
    """Whether ``value`` makes a function here: a lambda, or a partial
    (``functools.partial(np.multiply, w)``, ``partial(f, k=2)``, by its name:
    renaming what it is bound to changes nothing whatever it is, and the
    normaliser resolves it, :mod:`.partials`)."""
    if isinstance(value, gast.Lambda):
        return True
    func = value.func if isinstance(value, gast.Call) else None
    return (isinstance(func, gast.Name) and func.id == "partial") or (
        isinstance(func, gast.Attribute) and func.attr == "partial"
        and isinstance(func.value, gast.Name) and func.value.id == "functools")


def _store(name):
    return gast.Name(id=name, ctx=gast.Store(), annotation=None, type_comment=None)


def _load(name, node):
    return gast.copy_location(gast.Name(id=name, ctx=gast.Load(), annotation=None,
                                        type_comment=None), node)


def _own_nodes(func) -> list:
    """The nodes of ``func``'s body in source order (depth first), not those
    inside a nested function or lambda (their own definitions, which the nested
    function's own scope holds)."""
    out = []
    todo = list(reversed(func.body))
    while todo:
        node = todo.pop()
        out.append(node)
        if isinstance(node, gast.Lambda):
            continue
        if isinstance(node, gast.FunctionDef):
            children = [*node.args.defaults, *node.decorator_list]
        else:
            children = child_nodes(node)
        todo.extend(reversed(children))
    return out


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
            out.extend(getattr(stmt, "chosen_before", ()))  # act_2 = lambda z: ...
            if hasattr(stmt, "chosen_before"):
                del stmt.chosen_before
            out.append(stmt)
            tag = getattr(stmt, "chosen_tag", None)
            if tag is not None:
                out.append(tag)
                del stmt.chosen_tag
        setattr(node, field, out)
        for stmt in out:
            _insert_tags(stmt)


def _enclosing_loops(own) -> dict:
    """``id(node)`` -> the ids of the ``for`` and ``while`` loops of the function
    around it, for its own nodes (:func:`_own_nodes`, depth first: a node's
    loops are known before its children's)."""
    around = {}
    for node in own:
        if isinstance(node, (gast.Lambda, gast.FunctionDef)):
            continue  # (what a nested function holds runs when it is called)
        inner = around.get(id(node), ()) + (
            (id(node),) if isinstance(node, (gast.For, gast.While)) else ())
        for child in child_nodes(node):
            around[id(child)] = inner
    return around


def _may_reach(binding, call, loops) -> bool:
    """Whether the definition ``binding`` may have run, the last to bind the
    name, when ``call`` runs: it comes before the call in the source, or a loop
    holds both (an earlier iteration ran it).  A definition after the call and
    outside its loops never has (``g = lambda ...; g(x); g = lambda ...;
    g(x)``: the first call runs the first lambda, review s36 R4-2)."""
    if (binding.lineno, binding.col_offset) < (call.lineno, call.col_offset):
        return True
    return bool(set(loops.get(id(binding), ())) & set(loops.get(id(call), ())))


def _choose(call, name: str, callees: list, reaching=None) -> None:
    """Turn the call ``act(...)`` into ``act_1(...) if act == 1 else act_2(...)``,
    ``callees`` the functions numbered 1, 2, ... (names or expressions), among
    those numbered ``reaching`` (the definitions that may have run, :func:`_may_reach`;
    all where none may: Python's NameError then)."""
    def called(func):
        return gast.copy_location(gast.Call(
            func=gast.copy_location(clone(func), call.func),
            args=[clone(a) for a in call.args],
            keywords=[gast.keyword(arg=k.arg, value=clone(k.value)) for k in call.keywords]),
            call)
    numbers = reaching or list(range(1, len(callees) + 1))
    chosen = called(callees[numbers[-1] - 1])
    for k in reversed(numbers[:-1]):
        test = gast.Compare(left=gast.Name(id=name, ctx=gast.Load(), annotation=None,
                                           type_comment=None),
                            ops=[gast.Eq()], comparators=[gast.Constant(value=k, kind=None)])
        chosen = gast.IfExp(test=gast.copy_location(test, call), body=called(callees[k - 1]),
                            orelse=chosen)
    gast.copy_location(chosen, call)
    # the call node itself becomes the conditional (or the one call), wherever it stands
    call.__class__ = chosen.__class__
    call.__dict__.clear()
    call.__dict__.update(chosen.__dict__)
