"""Golden files: the generated source of a few canonical functions, byte for byte.

Generated code is the product; these files make every change to it visible in
review.  After an intended change, regenerate them with

    SRCGRAD_UPDATE_GOLDEN=1 python -m pytest tests/e2e/test_golden.py

and read the diff.  The files are in tests/data/golden.  The corpus's folder
(tests/data in this checkout) is replaced by ``<tests>`` so the files do not
depend on where the repository lives.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

import srcgrad
from srcgrad import pipeline as compiler
from srcgrad.pipeline import Options

import corpus

GOLDEN = Path(corpus.__file__).resolve().parent / "golden"   # tests/data/golden

CASES = [
    ("mlp_loss_grad", "mlp_loss", Options(mode="grad", wrt=(0, 1), single=False)),
    ("softmax_cross_entropy_grad", "softmax_cross_entropy", Options(mode="grad", wrt=(0,))),
    ("elementwise_chain_value_and_grad", "elementwise_chain",
     Options(mode="value_and_grad", wrt=(0,))),
    ("python_floats_grad", "python_floats", Options(mode="grad", wrt=(0, 1), single=False)),
    ("mlp_loss_vjp", "mlp_loss", Options(mode="vjp", wrt=(0, 1), single=False)),
    ("indexing_grad", "indexing", Options(mode="grad", wrt=(0,))),
    ("rnn_tanh_grad", "rnn_tanh", Options(mode="grad", wrt=(0, 1, 2), single=False)),
    # a loop over range(n) whose steps see one shape: its adjoint loop twice, under a
    # guard, the fast copy without unbroadcast and matmul_grad_a (optimize/steady_loops.py),
    # tanh's 1 - h ** 2 of every step made before it (optimize/batched_steps.py)
    # and the cotangent's product with U.T as np.dot where it is @ (optimize/steady_products.py);
    # each step's cotangent written into its row of those terms, which the weights' products
    # after the loop read as one matrix (optimize/step_cotangents.py)
    ("rnn_steps_grad", "rnn_steps", Options(mode="grad", wrt=(0, 1), single=False)),
    # a loop's carried value of its argument's shape: no unbroadcast, no shape-only save
    ("newton_sqrt_grad", "newton_sqrt", Options(mode="grad", wrt=(0,))),
    # forward mode: one tangent statement beside each primal one
    ("mlp_loss_jvp", "mlp_loss", Options(mode="jvp", wrt=(0, 1), single=False)),
    # Python-float arguments: no broadcasting bookkeeping, no shape-only saves
    ("python_floats_grad_floats", "python_floats",
     Options(mode="grad", wrt=(0, 1), single=False, floats=(0, 1))),
    # a Python int argument (a step count and divisor) is a scalar too: no unbroadcast,
    # no shape-only saves, the gradient returned without grad_like
    ("float_loop_with_an_int_grad", "float_loop_with_an_int",
     Options(mode="grad", wrt=(0,), floats=(0,), ints=(1,))),
    # anomaly mode: a check_finite call after each adjoint statement
    ("softmax_cross_entropy_grad_check_finite", "softmax_cross_entropy",
     Options(mode="grad", wrt=(0,), check_finite=True)),
]


def _normalised(source: str) -> str:
    """Without the corpus's folder (tests/data here; ``<tests>`` in the files, which
    predate tests/data) and the corpus's line numbers."""
    source = source.replace(str(Path(corpus.__file__).parent), "<tests>")
    # check_finite(d_x, '<tests>/corpus.py', LINE, ...): line 0, still Python
    source = re.sub(r"corpus\.py', \d+,", "corpus.py', 0,", source)
    return re.sub(r"corpus\.py([,)]?) line \d+", r"corpus.py\1 line <n>", source)


@pytest.mark.parametrize("golden, name, options", CASES, ids=[c[0] for c in CASES])
def test_generated_source_matches_golden_file(golden, name, options):
    source = _normalised(compiler.generate(corpus.by_name(name).fn, options).source)
    path = GOLDEN / f"{golden}.py"
    if os.environ.get("SRCGRAD_UPDATE_GOLDEN"):
        path.write_text(source)
    assert path.exists(), f"missing golden file {path}; run with SRCGRAD_UPDATE_GOLDEN=1"
    assert source == path.read_text(), f"generated source of {name} changed; see {path}"


def test_golden_files_are_valid_python():
    for path in GOLDEN.glob("*.py"):
        compile(path.read_text(), str(path), "exec")


def test_mlp_adjoint_is_clean():
    """The reviewer's checklist for the MLP loss (issue: foundation)."""
    src = srcgrad.grad(corpus.by_name("mlp_loss").fn, wrt=(0, 1)).source
    assert "zeros" not in src                      # no zero-initialised accumulators
    # unary op: no unbroadcast; 1 - h ** 2 and the product written into h's array,
    # which nothing reads after (inplace_adjoint)
    assert "d_t2 = into_second(np.multiply, d_h, into_operand(one_minus_square, h))" in src
    assert "(d_t4 * (2 * t3), h)" in src            # constant exponent: no unbroadcast
    # a comment at each saved value; the unsaved t2 folded back in, its array
    # taking the tanh (inplace_adjoint's into_operand), and that array x @ W's,
    # which the adjoint of + reads for its shape alone
    assert "h = into_operand(np.tanh, into_first(np.add, t1, b))  # save: h" in src
    assert "t1 = x @ W  # save: t1's shape (read by the adjoint of +)" in src
