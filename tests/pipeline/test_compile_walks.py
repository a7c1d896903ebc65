"""The shortcuts the passes take to compile faster (issue 16 item 8) find what
the walks they replace found: :func:`statements_in` lists the statements of
:func:`walk`, in its order, for every kind of statement; the passes that skip
their work where a pre-scan finds nothing to do leave the code as the full
pass leaves it (the generated source of a broad corpus was compared byte for
byte before and after each change: /work/tmp/s33/compile_dump.py)."""

import ast
import math
import textwrap

import gast
import numpy as np

import srcgrad
from srcgrad.ir.emit import function_names, function_source
from srcgrad.ir.syntax import statements_in, walk

SOURCE = textwrap.dedent("""
    def f(x, ys):
        a = x + 1
        for i in range(3):
            if a > 0:
                while a < 5:
                    a = a + 1
                else:
                    b = [z for z in ys if (w := z)]
            else:
                try:
                    c = 1
                except ValueError as e:
                    c = 2
                finally:
                    d = 3
        with open(x) as h:
            pass
        class K:
            def m(self):
                return lambda q: q
        async def g():
            async for u in v:
                await u
        return a
""")


def test_statements_in_is_walk_of_statements():
    tree = gast.parse(SOURCE)
    stmts = [s for s in walk(tree) if isinstance(s, gast.stmt)]
    assert len(stmts) >= 20
    for stmt in stmts:
        assert statements_in(stmt) == [n for n in walk(stmt) if isinstance(n, gast.stmt)]


def test_owned_list_pops_still_found():
    # the pre-scan of owned_lists finds the drop of a list's cotangent in a loop
    def f(X, w):
        ys = []
        for i in range(X.shape[0]):
            ys.append(np.tanh(X[i] @ w))
        return np.sum(np.stack(ys))
    g = srcgrad.grad(f, wrt=1)
    X, w = np.linspace(-1.0, 1.0, 12).reshape(4, 3), np.linspace(0.5, -0.5, 3)
    assert np.allclose(g(X, w), X.T @ (1 - np.tanh(X @ w) ** 2))
    assert "d_ys = drop_last_in_place(d_ys)" in g.source


def test_float_returns_with_and_without_floats():
    def f(a, b):
        return math.sin(a) * b
    g = srcgrad.grad(f, wrt=(0, 1))
    assert g(0.5, 2.0) == (math.cos(0.5) * 2.0, math.sin(0.5))
    floats = g._specialised(g.options, (float, float)).source
    assert "return d_a, d_b  # Python floats: the gradients as they are" in floats
    assert "return grad_like((d_a, d_b), (a, b))" in g.source  # no float parameter: kept


def test_augmented_assignments_still_kept_in_place():
    # the pre-scans of analysis/inplace.py and list_extends.py find x += v and ys += [v]
    def f(x, w):
        h = np.zeros(3, dtype=np.float32)
        h += x * w
        ys = []
        for i in range(2):
            ys += [h * i]
        return np.sum(np.stack(ys))
    g = srcgrad.grad(f, wrt=1)
    assert "in_place(" in g.source
    assert "ys.append(" in g.source
    x, w = np.linspace(0.5, 1.5, 3), np.linspace(-1.0, 1.0, 3)
    assert np.allclose(g(x, w), x)


def test_sorts_and_indexed_tapes_still_found():
    # the pre-scan of analysis/sorts_in_place.py finds a.sort(); indexed_tapes
    # returns early only where there is no tape
    def f(x, w):
        a = x * w
        a.sort()
        s = 0.0
        for i in range(x.shape[0]):
            s = s + np.tanh(a[i] * w[i])
        return s
    g = srcgrad.grad(f, wrt=1)
    assert "np.sort(a" in g.source
    x, w = np.array([0.3, -0.2, 0.9]), np.array([0.5, 1.5, -1.0])
    eps, e = 1e-6, np.eye(3)
    numeric = [(f(x, w + eps * e[k]) - f(x, w - eps * e[k])) / (2 * eps) for k in range(3)]
    assert np.allclose(g(x, w), numeric, atol=1e-6)


def test_function_names_are_the_names_the_written_source_parses_to():
    """The linker binds the free names a module uses from the trees
    (ir.emit.function_names), not from its text parsed again: the same set, for
    loops, branches, a lambda's and a local function's parameters, an attribute
    store written as ``obj.a = v`` (its tree a setattr call), a default and the
    errstate block."""
    body = gast.parse(textwrap.dedent("""
        def f(x, ys):
            a = x + 1
            for i in range(3):
                if a > 0:
                    while a < 5:
                        a = a + 1
                    else:
                        b = [z for z in ys if (w := z)]
                elif a < -1:
                    pass
                else:
                    c = (lambda q, r: q)(a, 2)
            with open(x) as h:
                pass
            def m(self, k=g):
                return lambda s: s
            return a
    """)).body[0].body
    store = gast.parse("setattr(p, 'w', v + q)").body[0]
    store.attribute_store = "w"
    body = [store, *body]
    defaults = [gast.parse("np.pi", mode="eval").body]
    for errstate in ({}, {"over": "ignore"}):
        text = function_source("f", ["x", "ys"], defaults, body, "Doc.", errstate)
        parsed = {n.id for n in ast.walk(ast.parse(text)) if isinstance(n, ast.Name)}
        assert "setattr" not in parsed and "np" in parsed and "r" not in parsed
        assert function_names(defaults, body, errstate) == parsed


def test_sequence_typing_is_linear_on_a_chain_named_against_its_order(tmp_path, monkeypatch):
    """normalize/sequences.sequence_names and scan_sequences' fixed points went
    round over every name until nothing changed: one name dropped per round
    where a chain's names sort against its order (v399 = x * 2.0, v398 = v399 + x,
    ...): quadratic, a 1000-line chain 3 s to compile.  A worklist looks at a
    name again only when one its definitions read is dropped."""
    from programs import load_program
    from srcgrad.normalize import scan_sequences, sequences

    n = 400
    body = [f"    v{n} = x * 2.0\n"] + [f"    v{i} = v{i + 1} + x\n" for i in range(n - 1, 0, -1)]
    f = load_program("import numpy as np\n\n\ndef f(x):\n" + "".join(body)
                     + "    return np.sum(v1)\n", tmp_path).f
    calls = {"makes": 0, "is": 0}
    makes, is_sequence = sequences._makes_sequence, scan_sequences.SequenceTyping.is_sequence

    def counted_makes(*args):
        calls["makes"] += 1
        return makes(*args)

    def counted_is(self, node):
        calls["is"] += 1
        return is_sequence(self, node)

    monkeypatch.setattr(sequences, "_makes_sequence", counted_makes)
    monkeypatch.setattr(scan_sequences.SequenceTyping, "is_sequence", counted_is)
    monkeypatch.setenv("SRCGRAD_CACHE", "0")
    g = srcgrad.grad(f)
    assert g(np.ones(3)).tolist() == [float(n + 1)] * 3
    assert calls["makes"] < 4 * n and calls["is"] < 20 * n, calls


def test_a_function_of_many_loops_and_branches_compiles_in_linear_work(tmp_path, monkeypatch):
    """Two more quadratic parts, in a function of 100 loops and branches each
    rebinding s: normalize/container_copies looked again at every binding of s
    (hundreds) whenever an operand of any one changed, and
    optimize/steady_loops walked, for each loop of the adjoint sweep, every
    statement after it.  The first now computes again only the bindings that
    read what changed, the second walks each statement once."""
    from programs import load_program
    from srcgrad.normalize import container_copies
    from srcgrad.optimize import steady_loops

    n = 100
    lines = ["    s = x * 1.0\n"]
    for i in range(n):
        lines += [f"    for i{i} in range(3):\n", "        s = s * 0.9 + np.sin(s)\n"] if i % 2 \
            else [f"    if np.sum(s) > {i}:\n", "        s = s + 0.5 * x\n", "    else:\n",
                  "        s = s - x\n"]
    f = load_program("import numpy as np\n\n\ndef f(x):\n" + "".join(lines)
                     + "    return np.sum(s)\n", tmp_path).f
    calls = {"kind": 0, "walk": 0}
    kind, walk_nodes = container_copies._kind, steady_loops.walk_nodes

    def counted_kind(*args):
        calls["kind"] += 1
        return kind(*args)

    def counted_walk(node):
        calls["walk"] += 1
        return walk_nodes(node)

    monkeypatch.setattr(container_copies, "_kind", counted_kind)
    monkeypatch.setattr(steady_loops, "walk_nodes", counted_walk)
    monkeypatch.setenv("SRCGRAD_CACHE", "0")
    g = srcgrad.grad(f)
    x = np.linspace(0.1, 0.5, 3)
    assert np.all(np.isfinite(g(x)))
    assert calls["kind"] < 10 * n and calls["walk"] < 40 * n, calls
