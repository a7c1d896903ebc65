"""Messages for calls written slightly wrong (review s37 R5-12): each named
the wrong thing before.

- ``hvp(f)(x)``, the vector forgotten: "missing a required argument: 'x'" --
  x was passed, and taken as v; now the message says how hvp's function is
  called (``h(*args, v)``).
- ``jvp(f, x, t)`` with arrays for the tuples: the array was unpacked row by
  row ("too many positional arguments"); now the message says primals and
  tangents are tuples.
- ``policy=("revolve", 0)``: "unknown policy" for the policy it is; now it
  says binomial checkpointing needs at least one snapshot.
- ``srcgrad check FILE.py:part`` of a ``functools.partial``: the report named
  it by its repr, with a memory address; now by the name given.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import srcgrad

ROOT = Path(__file__).resolve().parents[2]
X = np.array([0.3, -0.5])


def square_sum(x):
    return np.sum(x ** 2)


def scaled(x, c):
    return np.sum(np.sin(x) * c)


def test_hvp_with_the_vector_forgotten_says_how_it_is_called():
    with pytest.raises(srcgrad.SrcGradError) as info:
        srcgrad.hvp(square_sum)(X)
    message = str(info.value)
    assert "missing a required argument: 'x'" in message
    assert ("the Hessian-vector product takes square_sum's arguments and then the vector v: "
            "h(*args, v); the last argument given is taken as v") in message
    with pytest.raises(srcgrad.SrcGradError, match=r"h\(\*args, v\)"):
        srcgrad.hvp(scaled)(X, 2.0)
    # the call written right still works
    assert np.array_equal(srcgrad.hvp(square_sum)(X, np.array([1.0, 0.0])), [2.0, 0.0])


@pytest.mark.parametrize("primals, tangents, what, got", [
    (X, np.ones(2), "primals", "an array of shape (2,)"),
    ((X,), np.ones(2), "tangents", "an array of shape (2,)"),
    (0.5, (1.0,), "primals", "a float"),
])
def test_jvp_with_arrays_for_its_tuples_says_they_are_tuples(primals, tangents, what, got):
    with pytest.raises(srcgrad.SrcGradError) as info:
        srcgrad.jvp(square_sum, primals, tangents)
    assert str(info.value) == (
        f"jvp takes the {what} as a tuple, one entry per argument of square_sum: "
        f"jvp(f, (x,), (t,)) for one argument; got {got}")
    value, tangent = srcgrad.jvp(square_sum, [X], [np.ones(2)])  # lists still do
    assert value == square_sum(X) and np.isclose(tangent, 2 * np.sum(X))


@pytest.mark.parametrize("count", [0, -1, 2.0])
def test_revolve_without_snapshots_is_not_an_unknown_policy(count):
    with pytest.raises(srcgrad.SrcGradError) as info:
        srcgrad.grad(square_sum, policy=("revolve", count))(X)
    message = str(info.value)
    assert "unknown" not in message
    assert message.startswith(f"policy ('revolve', {count!r}): binomial checkpointing needs "
                              f"at least one snapshot: ('revolve', K) with K >= 1")


def test_cli_check_names_a_partial_by_its_name(tmp_path):
    path = tmp_path / "part_model.py"
    path.write_text(textwrap.dedent("""
        import functools
        import numpy as np

        def two(a, b):
            return np.sum(a * np.sin(b))

        part = functools.partial(two, b=2.0)
    """))
    env = dict(os.environ, PYTHONPATH=str(ROOT), SRCGRAD_CACHE="0")
    result = subprocess.run([sys.executable, "-m", "srcgrad", "check", f"{path}:part"],
                            capture_output=True, text=True, env=env, timeout=120, check=False)
    assert result.returncode == 0, result.stderr
    first = result.stdout.splitlines()[0]
    assert first.startswith("gradcheck passed: part(a) with respect to a"), first
    assert not re.search(r"0x[0-9a-f]+", result.stdout)
