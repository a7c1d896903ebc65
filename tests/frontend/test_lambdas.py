"""Lambdas: read from the line they begin on, in a file, a notebook cell or an
exec'd string that linecache holds, and in a doctest; several on one line told
apart by their columns (or, without columns, by their code)."""

from __future__ import annotations

import doctest
import linecache

import lambda_fns
import numpy as np
import pytest
from numeric import assert_close, numeric_grad

import srcgrad
from srcgrad.cache import manifest
from srcgrad.frontend import parse
from srcgrad.pipeline import Options

X = np.array([0.3, -0.2, 0.5])


def _check(fn, *args, wrt=0):
    g = srcgrad.grad(fn, wrt=wrt)(*args)
    assert_close(g, numeric_grad(fn, args, wrt), rtol=1e-6, atol=1e-8)
    return g


def test_a_lambda_assigned_to_a_name_is_named_after_it():
    x = np.array([0.1, 0.4, -0.7])
    _check(lambda_fns.objective, X, x)
    source = srcgrad.grad(lambda_fns.objective).source
    assert "def grad_objective(params, x):" in source
    assert "log_lik_forward" in source  # the function it calls, differentiated too


def test_two_lambdas_on_one_line_are_told_apart():
    np.testing.assert_allclose(_check(lambda_fns.cube, X), 3 * X ** 2)
    np.testing.assert_allclose(_check(lambda_fns.sine, X), np.cos(X))


@pytest.mark.parametrize("name", ["cube", "sine", "same_a", "same_b", "with_a_condition"])
def test_without_columns_the_code_tells_them_apart(monkeypatch, name):
    """Python 3.10 (or -X no_debug_ranges) keeps no columns: the lambdas on a line
    are compiled again and compared with the one given."""
    monkeypatch.setattr(parse, "lambda_spans", lambda code: None)
    fn = getattr(lambda_fns, name)
    node = parse.parse_function(fn).node
    assert node.lineno == fn.__code__.co_firstlineno
    _check(fn, X)


def test_a_line_whose_lambdas_cannot_be_found_names_the_line(monkeypatch):
    fn = lambda_fns.cube
    filename, line = fn.__code__.co_filename, fn.__code__.co_firstlineno
    lines = list(linecache.getlines(filename))
    lines[line - 1] = "cube, sine = lambda w: w, lambda w: w + 1\n"
    monkeypatch.setattr(linecache, "getlines", lambda *a, **k: lines)
    monkeypatch.setattr(linecache, "checkcache", lambda *a, **k: None)
    with pytest.raises(srcgrad.SourceNotFoundError, match=f"line {line}") as info:
        parse.parse_function(fn)
    assert info.value.filename == filename and info.value.lineno == line


def test_lambdas_called_from_differentiated_code_and_nested_lambdas():
    np.testing.assert_allclose(_check(lambda_fns.uses_a_global_lambda, X), 10 * X)
    np.testing.assert_allclose(_check(lambda_fns.nested, X), 18 * X)
    np.testing.assert_allclose(_check(lambda_fns.make_scaled(4.0), X), 4.0 + 2 * X)


def test_defaults_read_from_the_enclosing_scope_are_values():
    """``lambda v, k=k: ...`` made in a loop: each keeps its own ``k``."""
    first, second = lambda_fns.closures_with_defaults()
    np.testing.assert_allclose(srcgrad.grad(first)(X), 2.0)
    np.testing.assert_allclose(srcgrad.grad(second)(X), 3.0)
    np.testing.assert_allclose(srcgrad.grad(first)(X, 5.0), 5.0)


def test_a_lambda_inside_a_longer_statement():
    np.testing.assert_allclose(_check(lambda_fns.long_one, X),
                               (1 - np.tanh(X) ** 2) * lambda_fns.SCALE)


def test_every_transformation_takes_a_lambda():
    f = lambda a, b: np.sum(np.sin(a) * b)  # noqa: E731
    value, grads = srcgrad.value_and_grad(f, wrt=(0, 1))(X, 2 * X)
    assert value == f(X, 2 * X)
    np.testing.assert_allclose(grads[0], np.cos(X) * 2 * X)
    _, tangent = srcgrad.jvp(lambda a: np.sin(a), (X,), (np.ones(3),))
    np.testing.assert_allclose(tangent, np.cos(X))
    np.testing.assert_allclose(srcgrad.hvp(lambda a: np.sum(a ** 3))(X, np.ones(3)), 6 * X)
    assert srcgrad.grad(srcgrad.grad(lambda a: a ** 3))(0.5) == pytest.approx(3.0)
    _, pullback = srcgrad.vjp(lambda a: a * 2.0, X)
    np.testing.assert_allclose(pullback(np.ones(3))[0], 2.0)


def test_unsupported_syntax_in_a_lambda_is_located():
    with pytest.raises(srcgrad.UnsupportedSyntaxError) as info:
        srcgrad.grad(lambda_fns.walrus)(X)
    err = info.value
    assert err.filename == lambda_fns.__file__
    assert err.lineno == lambda_fns.walrus.__code__.co_firstlineno
    assert err.source_line.strip().startswith("walrus = lambda")
    assert err.col == err.source_line.index("y :=")


def test_the_disk_cache_keeps_the_lambdas_of_one_line_apart():
    options = Options(mode="grad", wrt=(0,))
    keys = {manifest.key(fn, options) for fn in (lambda_fns.cube, lambda_fns.sine)}
    assert len(keys) == 2 and None not in keys


# -- notebook cells and exec'd strings ------------------------------------------------

CELL = """import numpy as np
loss = lambda x: np.sum(np.exp(x) * SCALE)
first, second = (lambda x: np.sum(x ** 2)), (lambda x: np.sum(np.cos(x)))
SCALE = 3.0
"""


def run_cell(filename, source=CELL):
    """What IPython does with a cell: its text in linecache, compiled under the
    cell's pseudo file name, exec'd in the user namespace."""
    linecache.cache[filename] = (len(source), None, source.splitlines(keepends=True), filename)
    namespace = {"__name__": "__main__"}
    exec(compile(source, filename, "exec"), namespace)  # noqa: S102
    return namespace


@pytest.mark.parametrize("filename", ["<ipython-input-11-0123456789ab>",
                                      "/tmp/ipykernel_4242/31415926.py"])
def test_lambdas_typed_in_a_notebook_cell(filename):
    cell = run_cell(filename)
    np.testing.assert_allclose(srcgrad.grad(cell["loss"])(X), 3.0 * np.exp(X))
    np.testing.assert_allclose(srcgrad.grad(cell["first"])(X), 2 * X)
    np.testing.assert_allclose(srcgrad.grad(cell["second"])(X), -np.sin(X))
    assert f"from loss ({filename}, line 2)" in srcgrad.grad(cell["loss"]).source


def test_a_lambda_exec_d_from_a_string_without_linecache_gives_a_clear_error():
    namespace = {}
    exec(compile(CELL, "<string>", "exec"), namespace)  # noqa: S102
    with pytest.raises(srcgrad.SourceNotFoundError,
                       match="source code of the lambda defined at <string>:2"):
        srcgrad.grad(namespace["loss"])(X)


def test_a_lambda_in_a_doctest():
    """doctest serves its examples' source through linecache, as IPython does."""
    def example():
        """
        >>> import numpy as np, srcgrad
        >>> dloss = srcgrad.grad(lambda w: np.sum(np.tanh(w) ** 2))
        >>> w = np.array([0.5, -1.0])
        >>> bool(np.allclose(dloss(w), 2 * np.tanh(w) * (1 - np.tanh(w) ** 2)))
        True
        >>> halve, double = lambda v: np.sum(v) / 2, lambda v: np.sum(v) * 2
        >>> srcgrad.grad(halve)(w), srcgrad.grad(double)(w)
        (array([0.5, 0.5]), array([2., 2.]))
        """

    finder, runner = doctest.DocTestFinder(), doctest.DocTestRunner(verbose=False)
    for test in finder.find(example, "example", globs={}):
        runner.run(test)
    assert runner.failures == 0 and runner.tries == 6


NO_AXIS = None


def _summed_over(axis):
    return lambda x: np.sum(x * x, axis=axis)


def summed_over_global(x):
    return np.sum(x * x, axis=NO_AXIS)


def test_a_closure_or_global_holding_none_is_bound():
    """A free name whose value is None was taken for a builtin and left unbound
    (NameError inside the generated code; found by review)."""
    x = np.array([0.7, 0.2])
    for fn in (_summed_over(None), summed_over_global):
        value, g = srcgrad.value_and_grad(fn)(x)
        assert value == fn(x)
        assert np.array_equal(g, 2 * x)
