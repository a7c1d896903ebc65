"""Property tests: srcgrad on random programs (tests/data/programs.py).

Each generated program is written to a real file and imported, so srcgrad reads
its source the way it reads a user's.  For every program and random inputs:

1. ``grad`` agrees with central finite differences for every argument (and
   ``value_and_grad`` with ``grad``), and one other memory policy (recompute,
   save_products, sqrt, revolve; chosen by the seed) gives the same gradients;
2. ``vjp`` of the array-valued twin ``f_vec`` satisfies the dot-product identity
   ``<u, J v> == <J^T u, v>`` (J v by finite differences along a random v), and
   forward mode (``jvp``) gives the same ``<u, J v>``;

Translation validation, in 1 and 2: the value the generated code computes --
``value_and_grad``'s and ``vjp``'s (of ``f_vec``) with "save" and with the
other policy, ``jvp``'s of ``f_vec`` -- is the function's own value bit for bit (same type,
shape, dtype and bits; tests/data/numeric.py ``bit_identical``): srcgrad keeps the
forward statements as written, so no tolerance is allowed.

3. the generated source is deterministic: a second copy of the module, in
   another file, gives byte-identical ``.source`` apart from the lines naming
   the file;
4. no srcgrad call modifies its arguments (nor the cotangent), and gradients do
   not share memory with the arguments.

Finite differences are only compared where the function is differentiable:
a coordinate whose one-sided differences disagree (a kink or a jump of
``abs``/``maximum``/``where``/``clip``/``max``, or a tie, within eps) is skipped.

``test_focused_constructs`` runs the same checks on programs that each hold a
construct srcgrad once got wrong (tests/data/programs.py CONSTRUCTS): regression
tests for fixed bugs, xfails naming the open ones.

Every failure message carries the program's source and how to rebuild the
inputs (failures of one kind share an exception class, so Hypothesis shrinks
each kind to a small program of its own).  ``SRCGRAD_FUZZ_EXAMPLES`` sets the
number of examples (default 50 here, 200 in the ``slow``-marked twin run by
``make slow``; the ``fuzz``-marked twin, run by ``make fuzz``, defaults to 10000).  Also checked: ``grad`` with another ``wrt``
(an int, a reordered tuple) picks the same gradients, vjp of tuple outputs, and
that the generated code does not depend on PYTHONHASHSEED.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, event, given, settings
from hypothesis import strategies as st
from programs import (
    ARG_SHAPES,
    CONSTRUCTS,
    GATED,
    Program,
    RandomChooser,
    generate,
    load_program,
    make_inputs,
    module_name,
    programs,
    unload,
)

import srcgrad
from numeric import bit_identical, perturbed

#: tests/data: programs.py, numeric.py, and fuzz_failures/ (below)
DATA = Path(__file__).resolve().parents[1] / "data"

EXAMPLES = int(os.environ.get("SRCGRAD_FUZZ_EXAMPLES", "50"))
SLOW_EXAMPLES = int(os.environ.get("SRCGRAD_FUZZ_EXAMPLES", "200"))
FUZZ_EXAMPLES = int(os.environ.get("SRCGRAD_FUZZ_EXAMPLES", "10000"))
FOCUS_EXAMPLES = 5
SLOW_FOCUS_EXAMPLES = 15

EPS = 1e-6
RTOL = 1e-4
#: The policies check_policy compares with "save", one per program.
POLICIES = ("recompute", "save_products", "sqrt", ("revolve", 2), ("revolve", 1))
ATOL = 1e-6
WRT = (0, 1, 2)
NAMES = tuple(ARG_SHAPES)

HEALTH = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]


def fuzz_settings(max_examples, **kwargs):
    kwargs.setdefault("phases", (Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink))
    return settings(max_examples=max_examples, derandomize=True, deadline=None, database=None,
                    suppress_health_check=HEALTH, print_blob=False, **kwargs)


# --- fixtures ------------------------------------------------------------------

@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    """Where the generated programs are written; srcgrad's code cache goes there too."""
    root = tmp_path_factory.mktemp("programs")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("SRCGRAD_CACHE_DIR", str(root / "srcgrad-cache"))
        yield root


# --- helpers -------------------------------------------------------------------

def _copy(a):
    if isinstance(a, tuple):
        return tuple(_copy(e) for e in a)
    return a.copy() if isinstance(a, np.ndarray) else a


def _same(a, b) -> bool:
    if isinstance(a, tuple) or isinstance(b, tuple):
        return (type(a) is type(b) and len(a) == len(b)
                and all(_same(p, q) for p, q in zip(a, b)))
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return (type(a) is type(b) and a.shape == b.shape and a.dtype == b.dtype
                and np.array_equal(a, b, equal_nan=True))
    return type(a) is type(b) and (a == b or (np.isnan(a) and np.isnan(b)))


def _shift(a, direction, t):
    """``a + t * direction`` keeping the kind of ``a`` (array, 0-d array, float)."""
    if isinstance(a, np.ndarray):
        return a + t * direction
    return float(a + t * float(direction))



def _strip_file_lines(source: str, stem: str) -> str:
    """``source`` without the lines naming the program's file (header, docstrings)."""
    return "\n".join(line for line in source.splitlines() if stem not in line)


# One exception class per kind of failure: Hypothesis tells failures apart by type
# and place, so each kind is shrunk and reported on its own.
class ProgramFailure(AssertionError):
    """A check failed on a generated program."""


class SrcgradRaised(ProgramFailure):
    """srcgrad raised on a valid program."""


class WrongGradient(ProgramFailure):
    """grad disagrees with finite differences (or value_and_grad with grad)."""


class WrongValue(ProgramFailure):
    """value_and_grad's value is not the function's own, bit for bit."""


class WrongVJP(ProgramFailure):
    """vjp's value or the dot-product identity is wrong."""


class WrongJVP(ProgramFailure):
    """jvp's value is wrong, or its tangent disagrees with the pullback."""


class BadGradientValue(ProgramFailure):
    """A gradient has the wrong type or shape, or shares memory with an argument."""


class NotDeterministic(ProgramFailure):
    """Two copies of one program give different generated source."""


class ModifiedInput(ProgramFailure):
    """A srcgrad call modified an argument."""


class GeneratorBug(ProgramFailure):
    """The generated program itself is broken (a bug in tests/data/programs.py)."""


class Refused(Exception):
    """srcgrad refused the program with an accepted, located error."""


def _event(text):
    if _in_hypothesis():
        event(text)


def _in_hypothesis():
    from hypothesis.control import currently_in_test_context
    return currently_in_test_context()


class Case:
    """One program, loaded from its file, with its inputs."""

    def __init__(self, program: Program, directory, seed: int, scalar_kind: str, wrt=1,
                 accept=()):
        self.program = program
        self.wrt = wrt
        self.accept = tuple(accept)
        self.source = program.source
        self.stem = module_name(self.source)
        self.directory = Path(directory)
        self.seed, self.scalar_kind = seed, scalar_kind
        self.args = make_inputs(seed, scalar_kind)
        self.rng = np.random.default_rng(seed + 1)
        self.modules = []
        self.module = self.load()

    def load(self, suffix=""):
        try:
            module = load_program(self.source, self.directory, suffix)
        except Exception as exc:  # a generator bug: the program must import
            error = exc
        else:
            self.modules.append(module)
            return module
        self.fail(f"the generated program does not import: {type(error).__name__}: {error}",
                  GeneratorBug)

    def close(self):
        for module in self.modules:
            unload(module)

    def fail(self, message: str, kind=ProgramFailure):
        args = "\n".join(f"{n} = {a!r}" for n, a in zip(NAMES, self.args))
        __tracebackhide__ = True
        raise kind(
            f"{message}\n\n"
            f"--- program ({self.directory / self.stem}.py) ---\n{self.source}\n"
            f"--- inputs: tests/data/programs.py make_inputs({self.seed}, "
            f"{self.scalar_kind!r}) ---\n"
            f"{args}\n")

    def call(self, what, fn, *args):
        """``fn(*args)``; an exception from srcgrad is a failure naming the program."""
        try:
            with np.errstate(all="ignore"):
                return fn(*args)
        except Exception as exc:   # reported outside the handler: no chained context
            error = exc
        if isinstance(error, self.accept):
            if getattr(error, "lineno", None) is None or \
                    Path(str(error.filename)).name != f"{self.stem}.py":
                self.fail(f"{what} raised {type(error).__name__} without the program's file "
                          f"and line: {error}", SrcgradRaised)
            raise Refused(str(error))
        self.fail(f"{what} raised {type(error).__name__}: {error}", SrcgradRaised)

    def evaluate(self, fn, args):
        with np.errstate(all="ignore"):
            return fn(*args)

    # -- check 4: arguments untouched -------------------------------------------
    def snapshot(self, *extra):
        return [_copy(a) for a in (*self.args, *extra)]

    def verify_unmodified(self, before, where, *extra):
        for name, old, new in zip(NAMES + ("cotangent",), before, (*self.args, *extra)):
            if not _same(old, new):
                self.fail(f"{where} modified its argument {name}:\n"
                          f"before {old!r}\nafter  {new!r}", ModifiedInput)

    def verify_gradient_shapes(self, grads, where):
        if not isinstance(grads, tuple) or len(grads) != len(self.args):
            self.fail(f"{where} returned {type(grads).__name__} of length "
                      f"{len(grads) if hasattr(grads, '__len__') else '?'}, expected a tuple of "
                      f"{len(self.args)} gradients", BadGradientValue)
        for name, g, a in zip(NAMES, grads, self.args):
            if np.shape(g) != np.shape(a):
                self.fail(f"{where}: the gradient of {name} has shape {np.shape(g)}, "
                          f"the argument {np.shape(a)}", BadGradientValue)
            if np.asarray(g).dtype != np.float64:
                self.fail(f"{where}: the gradient of {name} has dtype {np.asarray(g).dtype}",
                          BadGradientValue)
            if isinstance(a, np.ndarray) and isinstance(g, np.ndarray) and np.shares_memory(g, a):
                self.fail(f"{where}: the gradient of {name} shares memory with the argument",
                          BadGradientValue)
        arrays = [(name, g) for name, g in zip(NAMES, grads) if isinstance(g, np.ndarray)]
        for i, (name, g) in enumerate(arrays):
            for other, h in arrays[:i]:
                if np.shares_memory(g, h):
                    self.fail(f"{where}: the gradients of {other} and {name} share memory",
                              BadGradientValue)

    # -- check 1: grad against finite differences ----------------------------------
    def check_grad(self):
        f = self.module.f
        value = self.evaluate(f, self.args)
        if np.shape(value) != () or not np.isfinite(value):
            self.fail(f"generator bug: f returned {value!r}, not a finite scalar", GeneratorBug)
        before = self.snapshot()
        g = self.call("srcgrad.grad(f, wrt=(0, 1, 2))", srcgrad.grad, f, WRT)
        grads = self.call("the gradient function", g, *self.args)
        self.verify_unmodified(before, "the gradient function")
        self.verify_gradient_shapes(grads, "grad")

        vg = srcgrad.value_and_grad(f, wrt=WRT)
        out = self.call("the value_and_grad function", vg, *self.args)
        self.verify_unmodified(before, "the value_and_grad function")
        if not (isinstance(out, tuple) and len(out) == 2):
            self.fail(f"value_and_grad returned {out!r}, expected (value, grads)", WrongGradient)
        if not bit_identical(out[0], value):
            self.fail(f"value_and_grad's value {out[0]!r} is not f's {value!r} bit for bit",
                      WrongValue)
        self.verify_gradient_shapes(out[1], "value_and_grad")
        for name, a, b in zip(NAMES, grads, out[1]):
            if not np.allclose(a, b, rtol=1e-12, atol=1e-300, equal_nan=True):
                self.fail(f"value_and_grad's gradient of {name} differs from grad's:\n"
                          f"{b!r}\n{a!r}", WrongGradient)

        # another wrt: an int gives one gradient, a tuple picks and orders them
        picked = self.call(f"srcgrad.grad(f, wrt={self.wrt!r})",
                           lambda: srcgrad.grad(f, wrt=self.wrt)(*self.args))
        self.verify_unmodified(before, f"the gradient function with wrt={self.wrt!r}")
        expected = grads[self.wrt] if isinstance(self.wrt, int) else \
            tuple(grads[i] for i in self.wrt)
        if isinstance(self.wrt, int):
            picked, expected = (picked,), (expected,)
        if not (isinstance(picked, tuple) and len(picked) == len(expected) and all(
                np.shape(a) == np.shape(b) and np.allclose(a, b, rtol=1e-12, atol=1e-300,
                                                           equal_nan=True)
                for a, b in zip(picked, expected))):
            self.fail(f"grad with wrt={self.wrt!r} gives {picked!r}, but wrt=(0, 1, 2) "
                      f"gives {expected!r}", WrongGradient)

        self.check_policy(f, value, grads)
        results = [self.finite_differences(f, value, i) for i in range(len(self.args))]
        kinks = sum(int(k.sum()) for _, k, _ in results)
        if kinks:
            _event("grad: coordinates skipped at a kink")
        for name, analytic, (central, kink, tol) in zip(NAMES, grads, results):
            analytic = np.asarray(analytic, dtype=float)
            finite = np.isfinite(analytic)
            if not finite.all():
                if kinks:   # at a non-differentiable point nan may spread: skip
                    _event("grad: non-finite gradient at a non-differentiable point")
                    continue
                self.fail(f"the gradient of {name} is not finite at a differentiable point:\n"
                          f"srcgrad:            {analytic!r}\n"
                          f"finite differences: {central!r}", WrongGradient)
            bad = (np.abs(analytic - central) > tol) & ~kink
            if bad.any():
                self.fail(f"the gradient of {name} disagrees with finite differences "
                          f"(tolerance {tol:.3g}; {int(bad.sum())} of {bad.size} entries):\n"
                          f"srcgrad:            {analytic!r}\n"
                          f"finite differences: {central!r}\n"
                          f"wrong entries:      {np.argwhere(np.atleast_1d(bad)).tolist()}",
                          WrongGradient)
        return g

    def check_policy(self, f, value, grads):
        """One other memory policy per program (chosen by its seed: over a run, all
        of them) must give f's own value, bit for bit, and the same gradients as
        saving everything."""
        policy = POLICIES[self.seed % len(POLICIES)]
        own, other = self.call(
            f"srcgrad.value_and_grad(f, policy={policy!r})",
            lambda: srcgrad.value_and_grad(f, wrt=WRT, policy=policy)(*self.args))
        if not bit_identical(own, value):
            self.fail(f"policy {policy!r}: value_and_grad's value {own!r} is not f's "
                      f"{value!r} bit for bit", WrongValue)
        for name, a, b in zip(NAMES, grads, other):
            if not np.allclose(a, b, rtol=1e-10, atol=1e-300, equal_nan=True):
                self.fail(f"policy {policy!r} gives another gradient of {name} than 'save':\n"
                          f"{b!r}\n{a!r}", WrongGradient)

    def finite_differences(self, f, value, i):
        """Central differences of ``f`` in argument ``i``, where the one-sided
        differences disagree by more than the tolerance (a kink), and the tolerance."""
        shape = np.shape(self.args[i])
        central, kink_gap = np.zeros(shape), np.zeros(shape)
        for idx in np.ndindex(shape):
            plus = self.evaluate(f, perturbed(self.args, i, idx, EPS))
            minus = self.evaluate(f, perturbed(self.args, i, idx, -EPS))
            if not (np.isfinite(plus) and np.isfinite(minus)):
                self.fail(f"generator bug: f is not finite near the inputs ({plus}, {minus})",
                          GeneratorBug)
            central[idx] = (plus - minus) / (2 * EPS)
            kink_gap[idx] = abs((plus - value) - (value - minus)) / EPS
        tol = ATOL + RTOL * float(np.max(np.abs(central), initial=0.0))
        return central, kink_gap > tol, tol

    # -- check 2: vjp dot-product identity ---------------------------------------------
    def check_vjp(self):
        fv = self.module.f_vec
        is_tuple = self.program.vector_tuple
        expected = self.evaluate(fv, self.args)
        before = self.snapshot()
        value, pullback = self.call("srcgrad.vjp(f_vec, x, y, s)", srcgrad.vjp, fv, *self.args)
        self.verify_unmodified(before, "srcgrad.vjp (the forward function)")
        if not bit_identical(value, expected):
            self.fail(f"vjp's value is not f_vec's bit for bit:\nvjp:   {value!r}\n"
                      f"f_vec: {expected!r}", WrongVJP)
        policy = POLICIES[self.seed % len(POLICIES)]
        other, _ = self.call(f"srcgrad.vjp(f_vec, x, y, s, policy={policy!r})",
                             lambda: srcgrad.vjp(fv, *self.args, policy=policy))
        if not bit_identical(other, expected):
            self.fail(f"policy {policy!r}: vjp's value is not f_vec's bit for bit:\n"
                      f"vjp:   {other!r}\nf_vec: {expected!r}", WrongVJP)
        # a random cotangent shaped like the output (a tuple for a tuple)
        parts = list(expected) if is_tuple else [expected]
        u_parts = []
        for part in parts:
            u = self.rng.standard_normal(np.shape(part))
            u_parts.append(u if isinstance(part, np.ndarray) else float(u))
        u = tuple(u_parts) if is_tuple else u_parts[0]
        directions = [self.rng.standard_normal(np.shape(a)) for a in self.args]
        before = self.snapshot(u)
        cotangents = self.call("the pullback", pullback, u)
        self.verify_unmodified(before, "the pullback", u)
        self.verify_gradient_shapes(cotangents, "the pullback")

        def flat(out):   # the output as one float vector
            out = list(out) if is_tuple else [out]
            return np.concatenate([np.ravel(np.asarray(o, dtype=float)) for o in out])

        plus = flat(self.evaluate(fv, [_shift(a, d, EPS) for a, d in zip(self.args, directions)]))
        minus = flat(self.evaluate(fv, [_shift(a, d, -EPS) for a, d in
                                        zip(self.args, directions)]))
        centre, u_flat = flat(expected), flat(u)
        jv = (plus - minus) / (2 * EPS)
        tol_jv = ATOL + RTOL * float(np.max(np.abs(jv), initial=0.0))
        if np.max(np.abs((plus - centre) - (centre - minus)), initial=0.0) / EPS > tol_jv:
            _event("vjp: skipped at a kink")
            return pullback
        lhs = float(np.sum(u_flat * jv))
        terms = [float(np.sum(np.asarray(c) * d)) for c, d in zip(cotangents, directions)]
        rhs = sum(terms)
        scale = float(np.sum(np.abs(u_flat * jv))) + sum(
            float(np.sum(np.abs(np.asarray(c) * d))) for c, d in zip(cotangents, directions))
        tol = ATOL * (1.0 + float(np.sum(np.abs(u_flat)))) + RTOL * scale
        if not np.isfinite(rhs):
            self.fail(f"the pullback returned non-finite cotangents at a differentiable point:\n"
                      f"{cotangents!r}", WrongVJP)
        if abs(lhs - rhs) > tol:
            self.fail(f"vjp dot-product identity fails: <u, J v> = {lhs!r} (finite differences) "
                      f"but <J^T u, v> = {rhs!r} (pullback; per argument {terms}); "
                      f"tolerance {tol:.3g}\nu = {u!r}\nv = {directions!r}\n"
                      f"cotangents = {cotangents!r}", WrongVJP)
        self.check_jvp(fv, expected, u_flat, flat, directions, rhs, tol)
        return pullback

    # -- check 2b: forward mode against reverse mode ------------------------------------------
    def check_jvp(self, fv, expected, u_flat, flat, directions, rhs, tol):
        """jvp's value is f_vec's (bit for bit), and <u, J v> from its tangent is <J^T u, v>."""
        tangents = [d if isinstance(a, np.ndarray) else float(d)
                    for a, d in zip(self.args, directions)]
        before = self.snapshot(*tangents)
        value, tangent = self.call("srcgrad.jvp(f_vec, (x, y, s), tangents)", srcgrad.jvp, fv,
                                   self.args, tangents)
        self.verify_unmodified(before, "srcgrad.jvp", *tangents)
        if not bit_identical(value, expected):
            self.fail(f"jvp's value is not f_vec's bit for bit:\njvp:   {value!r}\n"
                      f"f_vec: {expected!r}", WrongJVP)
        lhs = float(np.sum(u_flat * flat(tangent)))
        if not abs(lhs - rhs) <= tol:
            self.fail(f"forward and reverse mode disagree: <u, J v> = {lhs!r} (jvp) but "
                      f"<J^T u, v> = {rhs!r} (pullback); tolerance {tol:.3g}\n"
                      f"tangent = {tangent!r}", WrongJVP)

    # -- check 3: deterministic generated source -------------------------------------------
    def check_deterministic(self, g, pullback):
        copy = self.load("_copy")
        g2 = self.call("srcgrad.grad on the copy", srcgrad.grad, copy.f, WRT)
        first, second = (_strip_file_lines(self.call("reading .source", lambda h=h: h.source),
                                           self.stem) for h in (g, g2))
        if first != second:
            self.fail(f"grad's generated source differs between two copies of the module:\n"
                      f"{_diff(first, second)}", NotDeterministic)
        _, pullback2 = self.call("srcgrad.vjp on the copy", srcgrad.vjp, copy.f_vec, *self.args)
        first, second = (_strip_file_lines(p.source, self.stem) for p in (pullback, pullback2))
        if first != second:
            self.fail(f"vjp's generated source differs between two copies of the module:\n"
                      f"{_diff(first, second)}", NotDeterministic)


def _diff(a, b):
    import difflib
    return "\n".join(difflib.unified_diff(a.splitlines(), b.splitlines(), "first", "second",
                                          lineterm=""))


def check_program(program, seed, scalar_kind, directory, wrt=1, accept=()):
    """Run the four checks; an exception of a class in ``accept`` raised by srcgrad
    with a location in the program passes (a documented refusal)."""
    case = Case(program, directory, seed, scalar_kind, wrt, accept)
    try:
        g = case.check_grad()
        pullback = case.check_vjp()
        case.check_deterministic(g, pullback)
    except Refused:
        _event("srcgrad refused the program with a located error")
    finally:
        case.close()


SEEDS = st.integers(0, 2 ** 32 - 1)
SCALAR_KINDS = st.sampled_from(["float", "0d"])
WRTS = st.sampled_from([1, 0, 2, (2, 0), (1, 2)])


# --- the properties ----------------------------------------------------------------

#: srcgrad may refuse, with a located error, an in-place update that another name
#: could see (``a, b = f(x)`` where f may return one array twice): that is a
#: documented refusal, never a wrong gradient.  Anything else must pass.
ACCEPTED = (srcgrad.AliasedUpdateError,)


@fuzz_settings(EXAMPLES)
@given(program=programs(), seed=SEEDS, scalar_kind=SCALAR_KINDS, wrt=WRTS)
def test_random_programs(program, seed, scalar_kind, wrt, workdir):
    check_program(program, seed, scalar_kind, workdir, wrt, ACCEPTED)


@pytest.mark.slow
@fuzz_settings(SLOW_EXAMPLES)
@given(program=programs(), seed=SEEDS, scalar_kind=SCALAR_KINDS, wrt=WRTS)
def test_random_programs_slow(program, seed, scalar_kind, wrt, workdir):
    """200 more programs (``make slow``): the count ``make test`` ran before it sampled 50."""
    check_program(program, seed, scalar_kind, workdir, wrt, ACCEPTED)


@pytest.mark.fuzz
@fuzz_settings(FUZZ_EXAMPLES)
@given(program=programs(), seed=SEEDS, scalar_kind=SCALAR_KINDS, wrt=WRTS)
def test_random_programs_fuzz(program, seed, scalar_kind, wrt, workdir):
    try:
        check_program(program, seed, scalar_kind, workdir, wrt, ACCEPTED)
    except ProgramFailure as failure:
        save_failure(program, seed, scalar_kind, wrt, failure)
        raise


#: Where `make fuzz` keeps the programs it found failing, one file per kind of
#: failure.  Hypothesis shrinks a failure by re-running smaller programs, so the
#: file left last holds the smallest; test_saved_failures replays each file.
FAILURES = DATA / "fuzz_failures"


def save_failure(program, seed, scalar_kind, wrt, failure) -> Path:
    FAILURES.mkdir(exist_ok=True)
    path = FAILURES / f"{type(failure).__name__}.py"
    first = str(failure).splitlines()[0] if str(failure) else type(failure).__name__
    path.write_text(
        f'"""A program `make fuzz` found failing ({type(failure).__name__}): {first[:200]}\n\n'
        f'Replayed by tests/e2e/test_programs.py::test_saved_failures; once fixed, keep it\n'
        f'as a regression test (or move it into tests/data/corpus.py)."""\n\n'
        f"from programs import Program  # noqa: F401 - used by PROGRAM below\n\n"
        f"PROGRAM = {program!r}\nSEED = {seed!r}\nSCALAR_KIND = {scalar_kind!r}\n"
        f"WRT = {wrt!r}\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("path", sorted(FAILURES.glob("*.py")) if FAILURES.exists() else [],
                         ids=lambda p: p.stem)
def test_saved_failures(path, workdir):
    namespace = {}
    exec(compile(path.read_text(encoding="utf-8"), str(path), "exec"), namespace)  # noqa: S102
    check_program(namespace["PROGRAM"], namespace["SEED"], namespace["SCALAR_KIND"], workdir,
                  namespace["WRT"], ACCEPTED)


def test_a_saved_failure_replays_its_program(tmp_path, monkeypatch, workdir):
    """The file save_failure writes rebuilds the same program."""
    monkeypatch.setattr(sys.modules[__name__], "FAILURES", tmp_path)
    program = generate(RandomChooser(7))
    path = save_failure(program, 3, "float", (1, 2), WrongGradient("the message\nmore"))
    namespace = {}
    exec(compile(path.read_text(encoding="utf-8"), str(path), "exec"), namespace)  # noqa: S102
    assert namespace["PROGRAM"] == program and namespace["WRT"] == (1, 2)
    check_program(namespace["PROGRAM"], 3, "float", workdir, (1, 2))


# --- focused tests: every program holds a construct srcgrad once got wrong ---------------
#
# See CONSTRUCTS in tests/data/programs.py.  Those still in GATED are kept out of the
# main grammar and their test is an xfail naming the bug; shrinking is off there
# to keep the default run short (`--runxfail` shows a failing program).

OPEN_BUGS: dict[str, str] = {}
# Fixed while these tests were written; kept as regression tests.
FIXED_BUGS = {
    "np_matmul": "np.matmul taken for an elementwise ufunc by the shape-class analysis",
    "scalar_abs": "math.fabs / abs adjoints computing (x > 0) - (x < 0) on NumPy booleans",
    "unpack_method": "a.method() after `a, b = <call>, ...` raised \"name 't1.ravel' is "
                     "not defined\"",
    "alias_update": "an in-place update seen through a view was silently compiled as a "
                    "rebinding; srcgrad now refuses it with a located UnsupportedSyntaxError",
    "negative_constant": "a propagated negative literal lost its parentheses: "
                         "`c = -1.5; x * c ** 2` ran as `-1.5 ** 2`",
    "mod": "%, np.mod/np.remainder and np.fmod were registered as non-differentiable",
    "plus_inplace": "`u = +t; u *= 2.0` was refused as an update of a view of t",
    "arg_index_update": "an argument rebound to an array and then updated: the copy of the "
                        "original float argument crashed (now snapshot() leaves numbers alone)",
    "control_flow": "the structured grammar: adjoints failed on the 0.0 of no cotangent "
                    "(reshape, stack, axis reductions, dot...) and aliases rebound before "
                    "their next read were refused",
    "enumerate_zip": "for i, (a, b) in enumerate(zip(v, w)) raised MissingRuleError for "
                     "'builtins.zip'; the loop now runs over the zipped sequences by index",
}
assert set(OPEN_BUGS) | set(FIXED_BUGS) == set(CONSTRUCTS)
assert set(OPEN_BUGS) <= GATED


def _focus_param(construct):
    marks = [pytest.mark.xfail(strict=False, reason=OPEN_BUGS[construct])] \
        if construct in OPEN_BUGS else []
    return pytest.param(construct, marks=marks, id=construct)


@pytest.mark.parametrize("construct", [_focus_param(c) for c in sorted(CONSTRUCTS)])
@fuzz_settings(FOCUS_EXAMPLES, phases=(Phase.explicit, Phase.generate))
@given(data=st.data(), seed=SEEDS, scalar_kind=SCALAR_KINDS)
def test_focused_constructs(construct, data, seed, scalar_kind, workdir):
    _check_focused(construct, data, seed, scalar_kind, workdir)


@pytest.mark.slow
@pytest.mark.parametrize("construct", [_focus_param(c) for c in sorted(CONSTRUCTS)])
@fuzz_settings(SLOW_FOCUS_EXAMPLES, phases=(Phase.explicit, Phase.generate))
@given(data=st.data(), seed=SEEDS, scalar_kind=SCALAR_KINDS)
def test_focused_constructs_slow(construct, data, seed, scalar_kind, workdir):
    """15 more programs per construct (``make slow``), the count ``make test`` ran
    before it sampled 5."""
    _check_focused(construct, data, seed, scalar_kind, workdir)


def _check_focused(construct, data, seed, scalar_kind, workdir):
    program = data.draw(programs(focus={construct}), label="program")
    # srcgrad may refuse an in-place update seen through a view, with a located error
    accept = (srcgrad.UnsupportedSyntaxError,) if construct == "alias_update" else ACCEPTED
    check_program(program, seed, scalar_kind, workdir, accept=accept)


# --- the generator itself --------------------------------------------------------------

def test_generated_programs_run_and_stay_finite(tmp_path):
    """Every program the generator writes runs, returns the shapes it tracked, stays
    finite and well scaled, and leaves its arguments alone."""
    for seed in range(50):
        for options in [{}] + [{"focus": {kind}} for kind in sorted(CONSTRUCTS)]:
            program = generate(RandomChooser(seed), **options)
            module = load_program(program.source, tmp_path)
            try:
                for kind in ("float", "0d"):
                    args = make_inputs(seed, kind)
                    before = [_copy(a) for a in args]
                    with np.errstate(all="raise"):
                        value, vec = module.f(*args), module.f_vec(*args)
                    assert np.shape(value) == (), program.source
                    parts = list(vec) if program.vector_tuple else [vec]
                    shapes = tuple(np.shape(p) for p in parts)
                    assert (shapes if program.vector_tuple else shapes[0]) == \
                        program.vector_shape, program.source
                    assert np.isfinite(value), program.source
                    for part in parts:
                        assert np.all(np.isfinite(part)), program.source
                        assert np.max(np.abs(part), initial=0.0) < 1e3, program.source
                    assert all(_same(a, b) for a, b in zip(before, args)), program.source
            finally:
                unload(module)


def test_generator_covers_the_grammar():
    used = set()
    for seed in range(400):
        used |= generate(RandomChooser(seed)).ops
    structured_used = set()
    for seed in range(400):
        structured_used |= generate(RandomChooser(seed), focus={"control_flow"}).ops
    families = {tag.split(":")[0] + ":" + tag.split(":")[1] for tag in used if ":" in tag}
    expected = {
        "binary:+", "binary:-", "binary:*", "binary:/", "binary:maximum", "binary:minimum",
        "binary:hypot", "binary:arctan2", "unary:exp", "unary:log", "unary:sqrt",
        "unary:arcsin", "unary:tanh", "unary:abs", "unary:clip", "unary:neg", "math:sin",
        "math:log", "reduce:sum", "reduce:mean", "reduce:max", "reduce:min", "reduce:prod",
        "reduce:var", "reduce:std", "reduce:norm", "reduce:mask", "where:var", "where:zero",
        "linalg:@", "linalg:dot", "linalg:outer", "linalg:einsum", "shape:T",
        "shape:reshape", "shape:concatenate", "shape:stack", "shape:broadcast_to",
        "index:basic", "index:fancy", "aug:+=", "aug:-=", "aug:*=", "aug:/=", "unpack:swap",
        "const:a*c",
    }
    assert expected <= families, sorted(expected - families)
    assert "unpack" in used
    assert "index:basic:slice" in used
    assert {"linalg:matmul", "math:fabs", "return:tuple", "statement:constant"} <= used
    assert not used & {"alias:update"}   # kept out: see GATED
    structured = {
        "if:if", "if:if_else", "if:elif", "ifexp", "cond:boolop", "for:range", "for:rows",
        "for:zip", "for:enumerate", "for:range_len", "loop:nested", "loop:break",
        "loop:continue", "loop:tanh", "loop:acc", "loop:decay", "loop:aug", "loop:if",
        "loop:index", "while", "while:break", "call:positional", "call:keyword", "call:scale",
        "call:scale_positional", "call:tuple", "inplace:copy", "inplace:=", "inplace:+=",
        "inplace:-=", "inplace:*=", "inplace:zeros", "fill:row", "list:append", "list:comp",
        "list:stack", "list:sum_gen", "list:map", "list:index",
    }
    assert structured <= structured_used, sorted(structured - structured_used)


def test_generated_source_does_not_depend_on_the_hash_seed(tmp_path):
    """Generated gradient code must not depend on set/dict iteration order of
    strings: two processes with different PYTHONHASHSEED give identical text."""
    script = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(DATA)!r})
        import hashlib, srcgrad
        from programs import RandomChooser, generate, load_program, make_inputs
        for seed in range(12):
            program = generate(RandomChooser(1000 + seed))
            module = load_program(program.source, {str(tmp_path)!r})
            text = srcgrad.grad(module.f, wrt=(0, 1, 2)).source
            text += srcgrad.vjp(module.f_vec, *make_inputs(seed))[1].source
            print(seed, hashlib.sha256(text.encode()).hexdigest())
        """)
    root = Path(__file__).resolve().parents[2]
    outputs = []
    for hash_seed in ("1", "2"):
        env = dict(os.environ, PYTHONHASHSEED=hash_seed, SRCGRAD_CACHE="0",
                   PYTHONPATH=os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")]))
        done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                              text=True, timeout=120, check=False)
        assert done.returncode == 0, done.stderr
        outputs.append(done.stdout)
    assert outputs[0] == outputs[1], outputs
