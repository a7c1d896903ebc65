"""``sys.stderr.write(f"y={y}\\n")`` in a differentiated function: accepted, as
``print`` is -- a stream's write reads the text it is given and changes only the
stream -- where it was refused saying the string "may change in place" and
advising ``y[...] = ...`` (review s34, R2-17).  Each line is written once per
run of the function, in a checkpointed loop too (the reruns leave it out, as
they leave print out: memory/checkpointing.py).  A stream method that fills its
argument (``readinto``) is still refused."""

from __future__ import annotations

import io
import sys

import numpy as np
import pytest
from numeric import POLICIES, check_every_policy

import srcgrad
from srcgrad.errors import UnsupportedSyntaxError

X = np.array([0.3, -0.5, 0.9])
BUFFER = io.BytesIO(b"\x00" * 64)


def written_once(x):
    y = np.sum(np.tanh(x))
    sys.stderr.write(f"y={y}\n")
    return y * 2.0


def in_a_loop(x):
    for i in range(4):
        x = np.sin(x) * 1.1
        sys.stderr.write("step %d: %.3f\n" % (i, np.sum(x)))
        sys.stderr.flush()
    return np.sum(x ** 2)


def in_a_branch(x):
    y = np.tanh(x)
    if y[0] > 0.0:
        sys.stdout.writelines([f"{v}\n" for v in y])
    return np.sum(y * x)


@pytest.mark.parametrize("fn", [written_once, in_a_loop, in_a_branch])
def test_accepted_and_written_once(fn, capsys):
    check_every_policy(fn, [X])
    capsys.readouterr()
    fn(X.copy())
    want = capsys.readouterr()
    for policy in POLICIES:
        srcgrad.grad(fn, policy=policy)(X.copy())
        assert capsys.readouterr() == want, policy
    srcgrad.jvp(fn, (X.copy(),), (np.ones(3),))
    assert capsys.readouterr() == want


def fills_its_argument(x):
    y = np.zeros(8) + x[0]
    BUFFER.readinto(y)
    return np.sum(y)


def test_readinto_still_refused():
    with pytest.raises(UnsupportedSyntaxError) as info:
        srcgrad.grad(fills_its_argument)(X.copy())
    assert info.value.lineno is not None and "BUFFER.readinto(y)" in info.value.message
