"""The fence: every gast node type is explicitly accepted or rejected.

The later passes may assume that only accepted node types reach them.  A
rejected construct raises :class:`~srcgrad.errors.UnsupportedSyntaxError` at the
construct's own line and column, before any other pass runs, instead of failing
somewhere deep inside the compiler.  A node type that is in neither table (a
future gast version's) is rejected too, so nothing falls through.

    >>> import gast
    >>> tree = gast.parse("def f(x):\\n    try:\\n        pass\\n    except E:\\n        pass")
    >>> try:
    ...     check(tree.body[0], "model.py")
    ... except UnsupportedSyntaxError as e:
    ...     print(e.lineno, e.col, e.message)
    2 4 'try' statements are not supported: differentiate the code inside the 'try' instead
"""

from __future__ import annotations

import types

import gast

from ..errors import UnsupportedSyntaxError
from ..ir.syntax import source_of, walk

#: Node types the compiler handles.
SUPPORTED = frozenset({
    # structure
    "FunctionDef", "arguments", "Name", "Load", "Store", "Param", "keyword",
    # statements
    "Assign", "AugAssign", "AnnAssign", "Return", "Expr", "Pass", "Assert", "Raise",
    # expressions
    "Constant", "BinOp", "UnaryOp", "BoolOp", "Compare", "Call", "Attribute",
    "Subscript", "Slice", "Tuple", "List", "IfExp", "Dict",
    "ListComp", "DictComp", "GeneratorExp", "comprehension", "Lambda",
    # control flow
    "If", "For", "While", "Break", "Continue",
    # operators
    "Add", "Sub", "Mult", "Div", "FloorDiv", "Mod", "Pow", "MatMult",
    "USub", "UAdd", "Not", "Invert", "And", "Or",
    "BitAnd", "BitOr", "BitXor", "LShift", "RShift",
    "Eq", "NotEq", "Lt", "LtE", "Gt", "GtE", "Is", "IsNot", "In", "NotIn",
})

_NOT_YET = "are not supported yet"

#: Node types rejected, with the reason given to the user.
REJECTED = {
    "SetComp": "set comprehensions are not supported",
    "Set": "set displays are not supported",
    "Starred": f"starred expressions {_NOT_YET} here (only in calls, tuple and list "
               f"displays, and assignment targets)",
    "ClassDef": "class definitions inside a differentiated function are not supported",
    "Try": "'try' statements are not supported: differentiate the code inside the 'try' instead",
    "TryStar": "'try' statements are not supported: differentiate the code inside the 'try' instead",
    "ExceptHandler": "'except' clauses are not supported",
    "excepthandler": "'except' clauses are not supported",
    "With": "'with' statements are not supported",
    "withitem": "'with' statements are not supported",
    "Yield": "generators ('yield') cannot be differentiated",
    "YieldFrom": "generators ('yield from') cannot be differentiated",
    "Await": "'await' is not supported: coroutines cannot be differentiated",
    "AsyncFunctionDef": "async functions cannot be differentiated",
    "AsyncFor": "'async for' is not supported",
    "AsyncWith": "'async with' is not supported",
    "Global": "'global' declarations are not supported: pass the value as an argument",
    "Nonlocal": "'nonlocal' declarations are not supported: pass the value as an argument",
    "Delete": "'del' statements are not supported",
    "Del": "'del' statements are not supported",
    "Import": "imports inside a differentiated function are not supported: import at module level",
    "ImportFrom": "imports inside a differentiated function are not supported: import at module level",
    "alias": "imports inside a differentiated function are not supported",
    "NamedExpr": "assignment expressions (':=') are not supported",
    "JoinedStr": "f-strings are not supported",
    "FormattedValue": "f-strings are not supported",
    "TemplateStr": "template strings are not supported",
    "Interpolation": "template strings are not supported",
    "Match": "'match' statements are not supported",
    "match_case": "'match' statements are not supported",
    "MatchAs": "'match' statements are not supported",
    "MatchClass": "'match' statements are not supported",
    "MatchMapping": "'match' statements are not supported",
    "MatchOr": "'match' statements are not supported",
    "MatchSequence": "'match' statements are not supported",
    "MatchSingleton": "'match' statements are not supported",
    "MatchStar": "'match' statements are not supported",
    "MatchValue": "'match' statements are not supported",
    "pattern": "'match' statements are not supported",
    "TypeAlias": "'type' aliases are not supported",
    "TypeVar": "type parameters are not supported",
    "TypeVarTuple": "type parameters are not supported",
    "ParamSpec": "type parameters are not supported",
    "type_param": "type parameters are not supported",
    "Exec": "'exec' is not supported",
    "Print": "the Python 2 print statement is not supported",
    "Repr": "backquote repr is not supported",
    # Containers of a whole program, never inside a function body.
    "Module": "a module is not a function",
    "Interactive": "interactive input is not a function",
    "Expression": "an expression is not a function",
    "FunctionType": "a function type comment is not a function",
    "Suite": "a suite is not a function",
    "TypeIgnore": "type-ignore comments are not supported",
    "type_ignore": "type-ignore comments are not supported",
    # Abstract base classes and legacy contexts: never instantiated by gast.parse.
    "AugLoad": "augmented-load contexts are not supported",
    "AugStore": "augmented-store contexts are not supported",
    "mod": "abstract node", "stmt": "abstract node", "expr": "abstract node",
    "expr_context": "abstract node", "boolop": "abstract node", "operator": "abstract node",
    "unaryop": "abstract node", "cmpop": "abstract node", "slice": "abstract node",
}


def check(func: gast.FunctionDef, filename: str, *, callee: bool = False) -> None:
    """Raise ``UnsupportedSyntaxError`` at the first rejected node of ``func``.

    ``callee`` is true for a function called from differentiated code, which
    may take ``*args`` and ``**kwargs``: the caller binds its arguments to them
    when it is compiled, packing ``*args`` into one tuple and the extra
    keywords into one dict (normalize/calls.py).  Keyword-only parameters are
    taken by both: a transformation binds a call's keywords by position
    (api/transforms._by_position), as a caller binds a callee's.
    """
    nodes = walk(func)
    allowed = _allowed_in_context(func, nodes)
    for node in nodes:
        kind = type(node).__name__
        if kind in SUPPORTED or id(node) in allowed:
            continue
        message = REJECTED.get(kind, f"'{kind}' nodes are not supported")
        raise UnsupportedSyntaxError(message, filename=filename,
                                     lineno=_line_of(node, func), col=_col_of(node, func))
    _check_arguments(func, filename, callee)


def _allowed_in_context(func, nodes) -> set[int]:
    """Nodes accepted only where they stand: ``*x`` in a call's arguments, a
    tuple or list display or an assignment target (not in an index, ``x[*i]``);
    f-strings in what a ``raise`` or an ``assert`` reports (run as written,
    never differentiated); ``nodes``: the :func:`walk` of ``func``."""
    indices = {id(n.slice) for n in nodes if isinstance(n, gast.Subscript)}
    allowed = set()
    for node in nodes:
        if isinstance(node, gast.Call):
            items = node.args
        elif isinstance(node, (gast.Tuple, gast.List)) and id(node) not in indices:
            items = node.elts
        elif isinstance(node, (gast.Raise, gast.Assert)):
            parts = (node.exc, node.cause) if isinstance(node, gast.Raise) else (node.msg,)
            allowed.update(id(n) for part in parts if part is not None for n in walk(part)
                           if isinstance(n, (gast.JoinedStr, gast.FormattedValue)))
            continue
        else:
            continue
        allowed.update(id(e) for e in items if isinstance(e, gast.Starred))
    return allowed


def _check_arguments(func, filename, callee):
    if callee:  # bound by the caller (ad/calls.py bind_arguments)
        return
    args = func.args
    for what, present in (("*args", args.vararg), ("**kwargs", args.kwarg)):
        if present is not None:
            raise UnsupportedSyntaxError(
                f"{what} parameters of the differentiated function {_NOT_YET}",
                filename=filename, lineno=func.lineno, col=func.col_offset)


def _line_of(node, func):
    return getattr(node, "lineno", None) or func.lineno


def _col_of(node, func):
    if getattr(node, "lineno", None) is None:
        return func.col_offset
    return getattr(node, "col_offset", None)


#: NumPy functions that change their first argument in place, and what to write instead.
_CHANGES_FIRST = {
    "at": "for a sum over repeated indices, a loop: 'for i, u in zip(idx, v): y[i] += u' "
          "(or y[idx] += v where the indices are distinct)",
    "put": "write y[idx] = v",
    "place": "write y[mask] = v",
    "putmask": "write y[mask] = v (or y = np.where(mask, v, y))",
    "copyto": "write y[...] = v",
    "fill_diagonal": "write y[np.diag_indices_from(y)] = v",
    # a generator's shuffle changes the array it is given, never the generator
    # (review r1: "'rng.shuffle(h)' may change 'rng' in place")
    "shuffle": "assign the shuffled array instead: y = y[rng.permutation(len(y))], the "
               "same order from the same draws",
}


def in_place_message(stmt, free=None) -> str:
    """Why the call statement ``stmt``, run as written, is refused when a value
    being differentiated flows into it: it may change an array in place (which
    one: the first argument of ``np.add.at`` or ``np.put_along_axis``, the
    receiver of ``y.sort()`` or ``y.put(i, v)``, an ``out=``), and what to write
    instead.  ``free`` maps the function's free names to their objects: it tells
    a module's function from an array's method."""
    call = stmt.value if isinstance(stmt, gast.Expr) else None
    if not isinstance(call, gast.Call):
        return ("this statement may change a value in place in a way srcgrad cannot follow "
                "(only x[i] = v, x[i] += v and xs.append(v) update values in place)")
    text = source_of(call)
    shown = text if len(text) <= 60 else text[:57] + "..."
    func, out = call.func, [k.value for k in call.keywords if k.arg == "out"]
    record = ""  # (tracker.log(l), a user object's method: maybe a loss history)
    if out and any(k.arg == "where" for k in call.keywords):  # R3-21: safe division
        return where_advice(call)
    if out:
        changed, advice = out[0], "assign the result instead: y[...] = f(...) or y = f(...)"
    elif isinstance(func, gast.Attribute) and dict_call(func.attr, call.args):
        # cache.pop('tmp'), d.setdefault(k, v): a dict's (review s35, R3-3)
        return dict_pop_advice(source_of(func.value), call.args, func.attr)
    elif isinstance(func, gast.Attribute):
        advice = _CHANGES_FIRST.get(func.attr, (
            "write the update as an assignment (y[...] = v, y[i] = v, y = ...) or use a "
            "function that returns a new value"))
        first = call.args and (func.attr in ("at", "shuffle") or _module_function(func, free))
        changed = call.args[0] if first else func.value
        if not first and func.attr not in _CHANGES_FIRST:
            record = _RECORD
    else:
        first = call.args[0] if call.args and isinstance(call.args[0], gast.Name) else None
        assign = f"{first.id} = {shown}; in general " if first is not None else ""
        return (f"'{shown}' is run as written, and a value being differentiated flows into "
                f"it: srcgrad differentiates a function through what it returns, so a call "
                f"made for what it does to its arguments (filling a buffer it is passed) is "
                f"not followed: return the filled buffer from the function and assign it "
                f"({assign}acc = f(acc, v)), or define the function inside this one (srcgrad "
                f"inlines a local function){_RECORD}")
    return (f"'{shown}' may change '{source_of(changed)}' in place, and a value being "
            f"differentiated flows into it, in a way srcgrad cannot follow: {advice}{record}")


#: How to keep a number for the caller (a loss history) where srcgrad follows it
#: (normalize/records_outside.py; review s37 R5-5).
_RECORD = ("; to record a number for later, append it to a global list in the function "
           "itself: HISTORY.append(float(loss))")


def where_advice(call) -> str:
    """Why a ufunc call with ``where=`` and ``out=`` (``np.divide(a, b, out=z,
    where=b != 0)``, safe division) is refused, with the np.where form that
    srcgrad follows and that computes the same (review s35, R3-21)."""
    keywords = {k.arg: k.value for k in call.keywords}
    mask, fill = source_of(keywords["where"]), source_of(keywords["out"])
    args = [source_of(a) for a in call.args]
    guarded = ", ".join(args[:-1] + [f"np.where(m, {args[-1]}, 1.0)"]) if len(args) > 1 \
        else f"np.where(m, {args[0]}, 1.0)" if args else "..."
    return (f"'{source_of(call)}' computes only where {mask} and keeps {fill}'s values "
            f"elsewhere, through out= and where=, which srcgrad does not follow: write "
            f"'m = {mask}; r = np.where(m, {source_of(call.func)}({guarded}), {fill})' "
            f"(the inner np.where keeps the operation away from the values left out)")


def dict_call(method, args) -> bool:
    """Whether ``.method(*args)`` is a dict's: ``setdefault``, or ``pop`` with a
    default or a string key (``xs.pop(0)`` may be a list's)."""
    return method == "setdefault" and bool(args) or method == "pop" and (
        len(args) == 2 or bool(args) and isinstance(args[0], gast.Constant)
        and isinstance(args[0].value, str))


def dict_pop_advice(name, args, method="pop") -> str:
    """Why ``name.pop(k)`` / ``name.setdefault(k, v)`` of a dict is refused, with
    the rewrite srcgrad follows, in the user's names (``args``: the call's)."""
    key = source_of(args[0])
    if method == "setdefault":
        value = source_of(args[1]) if len(args) > 1 else "None"
        return (f"'{name}.setdefault({key}, ...)' changes the dict '{name}' in place, a "
                f"change srcgrad does not follow: write 'if {key} not in {name}: "
                f"{name}[{key}] = {value}' and read {name}[{key}]")
    read = f"{name}.get({key}, {source_of(args[1])})" if len(args) > 1 else f"{name}[{key}]"
    return (f"'{name}.pop({key})' changes the dict '{name}' in place, a change srcgrad does "
            f"not follow: read the item and rebind the dict, 'v = {read}; {name} = "
            f"{{k: w for k, w in {name}.items() if k != {key}}}'")


def _module_function(func, free) -> bool:
    """Whether the attribute ``func`` is a module's function (``np.put(y, i, v)``,
    ``np.random.shuffle(y)``), which changes its first argument, rather than an
    array's method (``y.put(i, v)``), which changes its receiver."""
    root = func.value
    while isinstance(root, gast.Attribute):
        root = root.value
    if not isinstance(root, gast.Name):
        return False
    if free and root.id in free:
        return isinstance(free[root.id], types.ModuleType)
    return root.id in ("np", "numpy")


def node_types() -> list[str]:
    """Every node class gast defines (the fence's universe)."""
    return sorted(name for name, cls in vars(gast).items()
                  if isinstance(cls, type) and issubclass(cls, gast.AST) and cls is not gast.AST)
