"""Fused elementwise kernels: the numba backend's answer to array code.

A gradient of array code makes one pass over memory per NumPy call: thirty
elementwise operations on 1e6 floats read and write thirty arrays.  Where
numba cannot compile a module as a whole (array code calls helpers such as
``unreduce`` that numba cannot type), the module stays NumPy code and each
maximal run of elementwise statements becomes one generated loop kernel,
``@numba.njit(cache=True, error_model="numpy")``, that computes the run
element by element and writes only the arrays read after it.

A statement joins a run when it assigns one name an expression built from
names, number literals, ``+ - * / **``, unary ``-``, ``np.where`` of a
comparison, the functions of :data:`EXACT` and :data:`INEXACT`, and the
in-place forms the NumPy backend writes (``into_first(np.multiply, a, b)``
is ``a * b``).  Reductions, indexing, helpers and anything else end it; so
does a ``for``, ``if`` or ``while`` (each block is searched on its own).

Each run is guarded at call time: :func:`.numba_rules.fits` checks that every
array it reads is a C-contiguous float64 ``ndarray`` of one shape (a name
holding a number, a view, another dtype or a Dask array: the NumPy code
runs), and that numba compiled the kernel.  The NumPy statements stay in the
``else`` branch, so the printed module shows both.

Threads.  The loop is ``numba.prange``: ``range`` in the kernel, split among
numba's threads in its ``parallel=True`` twin ``fused_<n>_threads``, which the
call picks for large arrays (:mod:`.numba_threads`); the same bits.

Values.  ``+ - * /``, ``sqrt`` and ``abs`` are IEEE operations, so the kernel
gives NumPy's bits; ``sin`` and ``cos`` call the same C library as NumPy's
float64 loops on x86-64 Linux (measured: 0 of 200,000 values differ).  NumPy's
``exp``, ``log``, ``tanh`` and the rest of :data:`INEXACT` are SIMD code
that differs from the C library numba calls by up to 2 ulp on a few
percent of values, so where a module returns the function's value (every
mode but ``grad``) they join a run only after ``# Adjoint sweep``: the value
stays bit for bit the function's own, and the gradient is the NumPy
backend's to a relative 1e-15 per operation.  fastmath stays off (no
reassociation, no FMA contraction).

Before, a run of the NumPy code; after, its kernel and guard:

    >>> source = '''import numpy as np
    ... from srcgrad.runtime import grad_like
    ...
    ...
    ... def grad_f(x):
    ...     a = np.sin(x)
    ...     b = a * x + 1.0
    ...     return grad_like(np.cos(x) * b, x)
    ... '''
    >>> print(fuse(source, inexact="grad"), end="")
    import numpy as np
    import numba
    from srcgrad.backends.numba_rules import at, blank, fits, flat
    from srcgrad.backends.numba_threads import on_threads, parallel_twin
    from srcgrad.runtime import grad_like
    <BLANKLINE>
    <BLANKLINE>
    @numba.njit(cache=True, error_model="numpy")
    def fused_1(x_array, b_out):
        \"\"\"grad_f's lines 6-7 in one pass over the arrays, into b_out (backend numba).\"\"\"
        x_flat = flat(x_array)
        b_into = b_out.reshape(-1)
        for index in numba.prange(x_flat.size):
            x = x_flat[index]
            a = np.sin(x)
            b = a * x + 1.0
            b_into[index] = b
        return b_out
    <BLANKLINE>
    <BLANKLINE>
    fused_1_threads = parallel_twin(fused_1)  # fused_1 on numba's threads (parallel=True)
    <BLANKLINE>
    <BLANKLINE>
    def grad_f(x):
        # backend numba: fused_1 runs the next 2 statements in one pass when fits() says it can, on numba's threads where on_threads()
        fused = fused_1_threads if on_threads(x) else fused_1
        if fits(fused, x):
            b = fused(x, *blank(x, 1))
        else:
            a = np.sin(x)
            b = a * x + 1.0
            del a
        return grad_like(np.cos(x) * b, x)
"""

from __future__ import annotations

import ast
import re

#: NumPy functions whose kernel values are NumPy's bit for bit (IEEE
#: operations, or the C library NumPy's float64 loops call too).
EXACT = frozenset({"sin", "cos", "sqrt", "abs", "absolute", "fabs", "negative", "square"})
#: NumPy functions whose SIMD loops differ from the C library by an ulp or two
#: on some values: fused only where the module's value is not returned.
INEXACT = frozenset({"exp", "log", "tanh", "tan", "arctan", "sinh", "cosh", "log1p", "expm1"})

_BINARY = {"add": ast.Add, "subtract": ast.Sub, "multiply": ast.Mult, "true_divide": ast.Div,
           "divide": ast.Div}
_OPS = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow)
_COMPARE = (ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.Eq, ast.NotEq)
_ADJOINT = "# Adjoint sweep"
_FITS_IMPORT = "from srcgrad.backends.numba_rules import at, blank, fits, flat"
_THREADS_IMPORT = "from srcgrad.backends.numba_threads import on_threads, parallel_twin"
_POWER_IMPORT = "from srcgrad.backends.numba_rules import power"
_NOTE = "# backend numba: "
_MIN_RUN = 2
_IMPORTED = frozenset({"at", "blank", "fits", "flat", "power", "numba", "on_threads",
                       "parallel_twin"})


def fuse(source: str, inexact: str = "never", cache: bool = True) -> str:
    """``source`` (a generated NumPy module) with its runs of elementwise
    statements fused into kernels; unchanged where there are none.
    ``inexact`` says where :data:`INEXACT` functions may be fused: ``"never"``
    (the backend's choice: NumPy's SIMD loops are faster than the C library's
    calls, and the kernels then give NumPy's bits), ``"grad"`` (everywhere:
    for a module that returns no value of the function) or ``"adjoint"``
    (only after the ``# Adjoint sweep`` comment)."""
    if not re.search(r"^import numpy as np$", source, flags=re.MULTILINE):  # code of numbers
        return source
    tree = ast.parse(source)
    lines = source.splitlines()
    taken = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} | \
        {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)} | \
        {a.arg for a in ast.walk(tree) if isinstance(a, ast.arg)}
    if taken & _IMPORTED:  # the module's own blank, fits, ...: the imports would shadow them
        return source
    kernels, edits, powers = [], [], False
    chosen = _fresh("fused", taken)  # the local naming the kernel a guarded call runs
    for function in tree.body:
        if not isinstance(function, ast.FunctionDef):
            continue
        adjoint = next((i + 1 for i in range(function.lineno - 1, function.end_lineno)
                        if lines[i].strip() == _ADJOINT), None)
        if inexact == "never":
            adjoint = None
        runs = [trimmed for run in _runs(function, adjoint, inexact == "grad")
                for trimmed in _trimmed(_main_array(run))]
        if not runs:
            continue
        if any(isinstance(n, ast.Delete) and n.lineno != n.end_lineno
               for n in ast.walk(function)):
            continue  # (generated dels are one line; _prune_deletes edits lines)
        internal_all: set[str] = set()
        for run in runs:
            number = len(kernels) + 1
            name = _fresh(f"fused_{number}", taken)
            twin = _fresh(f"{name}_threads", taken)
            plan = _plan(run, function)
            text, uses_power = _kernel(name, run, plan, function.name, taken)
            powers |= uses_power
            cached = "" if cache else ", cache=False"
            comment = f"# {name} on numba's threads (parallel=True)"
            kernels.append(text + ["", "", f"{twin} = parallel_twin({name}{cached})  {comment}"])
            edits.append((run, (name, twin, chosen), plan))
            internal_all |= plan["internal"]
        if internal_all:
            _prune_deletes(function, internal_all, edits, lines)
    if not kernels:
        return source
    for run, name, plan in sorted(edits, key=lambda e: e[0][0].lineno, reverse=True):
        first, last = run[0].lineno - 1, run[-1].end_lineno
        lines[first:last] = _guarded(run, name, plan, lines[first:last])
    lines = [line for line in lines if line is not None]
    _imports(lines, powers)
    at = next(i for i, line in enumerate(lines) if line.startswith(("def ", "@")))
    block = []
    for text in kernels:
        block += text + ["", ""]
    lines[at:at] = block
    out = "\n".join(lines) + "\n"
    return out if cache else out.replace("@numba.njit(cache=True, ", "@numba.njit(")


def _fresh(name: str, taken: set) -> str:
    while name in taken:
        name += "_"
    taken.add(name)
    return name


# --- finding the runs ---------------------------------------------------------------


def _runs(function, adjoint, inexact_anywhere):
    """Maximal runs of fusable statements in each block of ``function``."""
    for node in ast.walk(function):
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if not isinstance(block, list) or isinstance(node, ast.Module):
                continue
            run = []
            for stmt in block:
                inexact = inexact_anywhere or (adjoint is not None and stmt.lineno > adjoint)
                if _fusable(stmt, inexact) and _own_lines(stmt):
                    run.append(stmt)
                elif isinstance(stmt, ast.Delete) and run and _own_lines(stmt):
                    run.append(stmt)  # a del does not end a run: the kernel path says it too
                else:
                    yield from _trimmed(run)
                    run = []
            yield from _trimmed(run)


def _trimmed(run):
    while run and isinstance(run[-1], ast.Delete):
        run = run[:-1]
    if sum(isinstance(s, ast.Assign) for s in run) >= _MIN_RUN:
        yield run


def _own_lines(stmt) -> bool:
    """The statement starts its line (no ``if c: x = y``), so its lines can move."""
    return stmt.col_offset > 0


def _fusable(stmt, inexact: bool) -> bool:
    # (z = y binds a second name to y's array, which a later z += x changes for
    # both: a kernel would make z a copy; such a statement ends the run)
    return (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name) and not isinstance(stmt.value, ast.Name)
            and _elementwise(stmt.value, inexact) and _array_valued(stmt.value))


def _array_valued(node) -> bool:
    """``node`` reads a name outside a comparison: with that name an array of
    float64 (what :func:`.numba_rules.fits` checks), its value is one too.
    ``2.0 * 3`` is a number, ``np.where(x > 0, 1, 0)`` an array of ints."""
    return bool(_value_names(node))


def _value_names(node) -> list:
    """The names whose values ``node``'s value is made of (not a comparison's)."""
    if isinstance(node, ast.Name):
        return [node.id]
    if isinstance(node, ast.Compare):
        return []
    if isinstance(node, ast.Call):
        name = node.func.id if isinstance(node.func, ast.Name) else _numpy(node.func)
        args = {"into_first": node.args[1:], "into_second": node.args[1:],
                "where": node.args[1:], "match_complex": node.args[:1],
                "only_where": node.args[:1]}.get(name, node.args)
        return [n for a in args for n in _value_names(a)]
    return [n for child in ast.iter_child_nodes(node) for n in _value_names(child)]


def _elementwise(node, inexact: bool) -> bool:
    """``node`` computes, element by element, from names and number literals only."""
    if isinstance(node, ast.Name):
        return True
    if isinstance(node, ast.Constant):
        return type(node.value) in (int, float)
    if isinstance(node, ast.BinOp):
        if not isinstance(node.op, _OPS):
            return False
        if isinstance(node.op, ast.Pow) and not inexact and not _squared(node):
            return False
        return _elementwise(node.left, inexact) and _elementwise(node.right, inexact)
    if isinstance(node, ast.UnaryOp):
        return isinstance(node.op, (ast.USub, ast.UAdd)) and _elementwise(node.operand, inexact)
    if not isinstance(node, ast.Call) or node.keywords:
        return False
    func, args = node.func, node.args
    if _numpy(func) in EXACT or (inexact and _numpy(func) in INEXACT):
        return len(args) == 1 and _elementwise(args[0], inexact)
    if _numpy(func) == "where" and len(args) == 3:
        return _comparison(args[0], inexact) and all(_elementwise(a, inexact) for a in args[1:])
    if isinstance(func, ast.Name) and func.id in ("into_first", "into_second") \
            and len(args) == 3 and _numpy(args[0]) in _BINARY:
        return all(_elementwise(a, inexact) for a in args[1:])
    if isinstance(func, ast.Name) and func.id == "match_complex" and len(args) == 2:
        return all(_elementwise(a, inexact) for a in args)  # of float64 arrays: the first
    if isinstance(func, ast.Name) and func.id == "signum" and len(args) == 1:
        return isinstance(args[0], ast.Name)  # of a float64 array: np.sign
    if isinstance(func, ast.Name) and func.id == "only_where" and len(args) == 2:
        return _elementwise(args[0], inexact) and _comparison(args[1], inexact)  # np.where
    return False


def _comparison(node, inexact: bool) -> bool:
    return (isinstance(node, ast.Compare) and len(node.ops) == 1
            and isinstance(node.ops[0], _COMPARE) and _elementwise(node.left, inexact)
            and _elementwise(node.comparators[0], inexact))


def _squared(node) -> bool:
    """``a ** 2``: NumPy squares (``a * a``), exactly."""
    return isinstance(node.right, ast.Constant) and node.right.value == 2 and \
        type(node.right.value) is int


def _numpy(func) -> str | None:
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) \
            and func.value.id == "np":
        return func.attr
    return None


# --- what a run reads and writes ----------------------------------------------------


def _plan(run, function) -> dict:
    """The run's inputs (names read before the run binds them), outputs (names it
    binds that are read or bound again outside it) and internal names."""
    inside = {id(n) for stmt in run for n in ast.walk(stmt)}
    inputs, order = _inputs(run), []
    for stmt in run:
        if not isinstance(stmt, ast.Delete) and stmt.targets[0].id not in order:
            order.append(stmt.targets[0].id)
    outside_reads, outside_binds = set(), set()
    for n in ast.walk(function):
        if id(n) in inside:
            continue
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load):
            outside_reads.add(n.id)
        elif isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            outside_binds.add(n.id)
        elif isinstance(n, ast.arg):
            outside_binds.add(n.arg)
    deleted_inside = {t.id for stmt in run if isinstance(stmt, ast.Delete)
                      for t in stmt.targets if isinstance(t, ast.Name)}
    outputs = [name for name in order if name not in deleted_inside
               and (name in outside_reads or name in outside_binds)]
    internal = {name for name in order if name not in outputs and name not in outside_binds}
    arrays = _anchors(run, inputs)
    return {"inputs": arrays + [v for v in inputs if v not in arrays], "arrays": len(arrays),
            "outputs": outputs, "internal": internal, "deleted": deleted_inside}


def _made_of(run, inputs, bases=None) -> list:
    """Per statement of ``run`` (None for a ``del``), the inputs its value is made
    of; ``bases``, a list, receives those of each ``a ** 2``'s ``a`` and each
    ``a / b``'s ``b``."""
    made_of, needs = {}, []

    def deps(node):
        found = set()
        for name in _value_names(node):
            found |= made_of.get(name, {name} if name in inputs else set())
        return found
    for stmt in run:
        if isinstance(stmt, ast.Delete):
            needs.append(None)
            continue
        if bases is not None:
            bases += [deps(n.left) for n in ast.walk(stmt.value)
                      if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Pow)]
            bases += [deps(n.right) for n in ast.walk(stmt.value)
                      if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Div)]
        made_of[stmt.targets[0].id] = deps(stmt.value)
        needs.append(made_of[stmt.targets[0].id])
    return needs


def _inputs(run) -> list:
    """The names ``run`` reads before it binds them, in the order first read, not
    ``np`` nor a called function's name: a fused kernel's parameters.  One
    definition shared by ``_plan`` and ``_main_array``, so both agree on what a
    run takes in."""
    bound, inputs = set(), []
    for stmt in run:
        if isinstance(stmt, ast.Delete):
            continue
        called = {id(n.func) for n in ast.walk(stmt.value) if isinstance(n, ast.Call)}
        for n in ast.walk(stmt.value):
            if isinstance(n, ast.Name) and n.id not in bound and n.id not in inputs \
                    and n.id != "np" and id(n) not in called:  # (into_first, signum, ...)
                inputs.append(n.id)
        bound.add(stmt.targets[0].id)
    return inputs


def _main_array(run) -> list:
    """``run`` without the statements at its ends that are not made of the input
    most of its statements are made of (``beta = alpha * 2.0`` before a chain
    on ``x``): where ``alpha`` is a number such a statement's value is one, and
    inside the run it would make ``alpha`` an input that must be an array."""
    inputs = _inputs(run)
    needs = _made_of(run, inputs)
    if not inputs:
        return run
    main = max(inputs, key=lambda v: (sum(d is not None and v in d for d in needs),
                                      -inputs.index(v)))
    keep = [d is not None and main in d for d in needs]
    if not any(keep):
        return []
    first = keep.index(True)
    last = len(keep) - 1 - keep[::-1].index(True)
    return run[first:last + 1]


def _anchors(run, inputs) -> list:
    """Inputs that must be arrays for every statement of ``run`` to be an array
    (as NumPy computes it): each statement's value is made of one of them.  The
    other inputs may be numbers.  So must the ``a`` of each ``a ** 2`` (NumPy
    squares an array, ``a * a``, as the kernel does; Python's ``alpha ** 2`` of
    a float calls ``pow``, which differs from ``alpha * alpha`` in the last bit
    on about 0.1% of values), and the ``b`` of each ``a / b`` (``1.0 / alpha``
    of a float 0.0 raises ZeroDivisionError, as the function does; an array's
    division gives Inf, as the kernel's).  Greedy: the input most statements
    are made of first."""
    bases: list = []
    # (a literal -- the 2 of y / 2 -- is made of no input and needs none: an empty
    # set would never be met)
    needs = [d for d in [*_made_of(run, inputs, bases), *bases] if d]
    chosen = []
    while True:
        open_ = [deps for deps in needs if not deps & set(chosen)]
        if not open_:
            return chosen
        chosen.append(max(inputs, key=lambda v: (sum(v in deps for deps in open_),
                                                 -inputs.index(v))))


# --- the kernel ----------------------------------------------------------------------


def _sign(name: str):
    """NumPy's ``np.sign`` of one float64, as its loop computes it (a NaN stays
    NaN, -0.0 gives 0.0)."""
    return ast.parse(f"1.0 if {name} > 0 else -1.0 if {name} < 0 else 0.0 if {name} == 0 "
                     f"else {name}", mode="eval").body


class _Scalar(ast.NodeTransformer):
    """An elementwise expression as the kernel computes one element of it."""

    def __init__(self):
        self.power = False

    def visit_Call(self, node):
        self.generic_visit(node)
        name = _numpy(node.func)
        if name == "where":
            return ast.IfExp(test=node.args[0], body=node.args[1], orelse=node.args[2])
        if name == "square":
            return ast.BinOp(node.args[0], ast.Mult(), node.args[0])
        if name in ("abs", "absolute", "fabs"):
            node.func = ast.Attribute(ast.Name("np", ast.Load()), "abs", ast.Load())
        if name == "negative":
            return ast.UnaryOp(ast.USub(), node.args[0])
        if isinstance(node.func, ast.Name) and node.func.id in ("into_first", "into_second"):
            op = _BINARY[_numpy(node.args[0])]
            return ast.BinOp(node.args[1], op(), node.args[2])
        if isinstance(node.func, ast.Name) and node.func.id == "match_complex":
            return node.args[0]
        if isinstance(node.func, ast.Name) and node.func.id == "signum":
            return _sign(node.args[0].id)
        if isinstance(node.func, ast.Name) and node.func.id == "only_where":
            # np.where(mask, g, 0.0), element by element
            return ast.IfExp(test=node.args[1], body=node.args[0], orelse=ast.Constant(0.0))
        return node

    def visit_BinOp(self, node):
        self.generic_visit(node)
        if isinstance(node.op, ast.Pow):
            if _squared(node):
                return ast.BinOp(node.left, ast.Mult(), node.left)
            self.power = True
            return ast.Call(ast.Name("power", ast.Load()), [node.left, node.right], [])
        return node


def _kernel(name, run, plan, owner, taken):
    """The kernel's source lines, and whether it calls ``power``."""
    local = {n.id for stmt in run for n in ast.walk(stmt) if isinstance(n, ast.Name)}

    def fresh(base):
        while base in local or base in taken:
            base += "_"
        local.add(base)
        return base
    anchors = plan["inputs"][:plan["arrays"]]  # arrays; the others may be numbers
    arrays = {v: fresh(f"{v}_array" if v in anchors else f"{v}_value") for v in plan["inputs"]}
    outs = {v: fresh(f"{v}_out") for v in plan["outputs"]}
    flats = {v: fresh(f"{v}_flat") for v in plan["inputs"]}
    intos = {v: fresh(f"{v}_into") for v in plan["outputs"]}  # (a name may be both)
    index = fresh("index")
    first = plan["inputs"][0]
    start = run[0].lineno
    end = max(s.end_lineno for s in run)
    parameters = [arrays[v] for v in plan["inputs"]] + [outs[v] for v in plan["outputs"]]
    docstring = (f"{owner}'s lines {start}-{end} in one pass over the arrays, "
                 f"into {', '.join(outs[v] for v in plan['outputs'])} (backend numba).")
    body = ['@numba.njit(cache=True, error_model="numpy")',
            f"def {name}({', '.join(parameters)}):",
            f'    """{docstring}"""']
    body += [f"    {flats[v]} = flat({arrays[v]})" for v in plan["inputs"]]
    body += [f"    {intos[v]} = {outs[v]}.reshape(-1)" for v in plan["outputs"]]
    body.append(f"    for {index} in numba.prange({flats[first]}.size):")
    body += [f"        {v} = {flats[v]}[{index}]" if v in anchors else
             f"        {v} = at({flats[v]}, {index})" for v in plan["inputs"]]
    scalar = _Scalar()
    for stmt in run:
        if isinstance(stmt, ast.Delete):
            continue
        value = scalar.visit(ast.parse(ast.unparse(stmt.value), mode="eval").body)
        body.append(f"        {stmt.targets[0].id} = {ast.unparse(value)}")
    body += [f"        {intos[v]}[{index}] = {v}" for v in plan["outputs"]]
    body.append(f"    return {', '.join(outs[v] for v in plan['outputs']) or 'None'}")
    return body, scalar.power


def _guarded(run, names, plan, original):
    """The run's lines in ``original``, as the guarded kernel call and the NumPy code."""
    name, twin, chosen = names
    indent = " " * run[0].col_offset
    args = ", ".join(plan["inputs"])
    first = plan["inputs"][0]
    count = sum(isinstance(s, ast.Assign) for s in run)
    note = (f"{indent}{_NOTE.strip()} {name} runs the next {count} statements in one pass "
            f"when fits() says it can, on numba's threads where on_threads()")
    numbers = "" if plan["arrays"] == len(plan["inputs"]) else f", arrays={plan['arrays']}"
    out = [note, f"{indent}{chosen} = {twin} if on_threads({first}) else {name}",
           f"{indent}if fits({chosen}, {args}{numbers}):"]
    outputs = plan["outputs"]
    if outputs:  # NumPy allocates them (huge pages for big arrays: fewer page faults)
        out.append(f"{indent}    {', '.join(outputs)} = {chosen}({args}, "
                   f"*blank({plan['inputs'][0]}, {len(outputs)}))")
    else:
        out.append(f"{indent}    pass")
    bound = set(_bound_in(run))
    gone = [n for n in _deleted_in(run) if n not in bound or n in plan["inputs"]]
    if gone:
        out.append(f"{indent}    del {', '.join(gone)}")
    out.append(f"{indent}else:")
    out += [f"    {line}" if line.strip() else line for line in original
            if line is not None]
    dead = [n for n in _bound_in(run) if n in plan["internal"] and n not in plan["deleted"]]
    if dead:
        out.append(f"{indent}    del {', '.join(dead)}")
    return out


def _deleted_in(run):
    return [t.id for stmt in run if isinstance(stmt, ast.Delete) for t in stmt.targets
            if isinstance(t, ast.Name)]


def _bound_in(run):
    seen = []
    for stmt in run:
        if isinstance(stmt, ast.Assign) and stmt.targets[0].id not in seen:
            seen.append(stmt.targets[0].id)
    return seen


def _prune_deletes(function, internal, edits, lines):
    """Remove the run-internal names from ``del`` statements outside the runs:
    neither path binds them after the run (the NumPy path deletes them at its
    end).  A ``del`` left with no name becomes ``pass``."""
    inside = {id(stmt) for run, _, _ in edits for stmt in run}
    dropped = []
    for node in ast.walk(function):
        if not isinstance(node, ast.Delete) or id(node) in inside:
            continue
        names = [t.id for t in node.targets if isinstance(t, ast.Name)]
        if not any(n in internal for n in names):
            continue
        keep = [n for n in names if n not in internal]
        line = lines[node.lineno - 1]
        comment = line.partition("#")[2]
        indent = " " * node.col_offset
        text = f"{indent}del {', '.join(keep)}" if keep else f"{indent}pass"
        if comment and keep:
            text += "  #" + comment
        alone = all(other is node or isinstance(other, ast.Delete) and other in dropped
                    for other in _block_of(function, node))
        if not keep and not alone:
            text = None  # the line goes (fuse drops the Nones)
            dropped.append(node)
        lines[node.lineno - 1] = text


def _block_of(function, stmt) -> list:
    """The statement list that holds ``stmt``."""
    for node in ast.walk(function):
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if isinstance(block, list) and any(s is stmt for s in block):
                return block
    return [stmt]


def _imports(lines, powers):
    """``import numba`` and the guard's import (and ``power``'s) in the header."""
    at = next((i for i, line in enumerate(lines) if line.startswith("from srcgrad.runtime")),
              None)
    if at is None:
        at = max((i + 1 for i, line in enumerate(lines)
                  if line.startswith("import ") and not line.startswith(" ")), default=0)
    new = [] if "import numba" in lines else ["import numba"]
    new += [_FITS_IMPORT, _THREADS_IMPORT]
    if powers and _POWER_IMPORT not in lines:
        new.append(_POWER_IMPORT)
    lines[at:at] = new


def kernels(source: str) -> list[str]:
    """The names of the fused kernels ``source`` defines."""
    return re.findall(r"^def (fused_\d+_*)\(", source, flags=re.MULTILINE)


__all__ = ["EXACT", "INEXACT", "fuse", "kernels"]
