"""The pass list (srcgrad/pipeline.py) and ``dump_after``: every pass can be
looked at, in order, from Python, from ``srcgrad.show`` and from the command
line; looking changes nothing."""

from __future__ import annotations

import ast
import inspect
import io
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import gast
import numpy as np
import pytest

import srcgrad
from srcgrad import pipeline
from srcgrad.frontend.linker import Linker
from srcgrad.pipeline import PASSES, Compilation, Options, generate, run_passes

ROOT = Path(__file__).resolve().parents[2]


def layer(W, h):
    return np.tanh(W @ h)


def unrolled(W, h0):
    h = h0
    for _ in range(3):
        h = layer(W, h) + 0.5 * h
    return np.sum(h ** 2)


ARGS = (np.eye(3) * 0.5, np.arange(3.0))

#: Options under which each pass runs (the default, grad, runs most of them).
WHERE = {"tangent": Options(mode="jvp"), "tangent_dce": Options(mode="jvp"),
         "tangent_assemble": Options(mode="jvp"), "checkpointing": Options(policy="sqrt"),
         "anomaly": Options(check_finite=True)}
OPTION_SETS = [Options(), Options(mode="value_and_grad"), Options(mode="vjp", single=False),
               Options(mode="jvp"), Options(mode="tangent"), Options(policy="sqrt"),
               Options(policy=("revolve", 2)), Options(policy="recompute"),
               Options(optimize=False), Options(check_finite=True)]


def ran(options) -> list[str]:
    c = Compilation(options, Linker(options, pipeline.prepare), fn=unrolled)
    return run_passes(c)


@pytest.mark.parametrize("name", list(PASSES))
def test_every_pass_can_be_dumped(name):
    text = generate(unrolled, WHERE.get(name, Options()), dump_after=name)
    assert isinstance(text, str) and text.strip()
    ast.parse(text)  # every stage reads as Python


def test_every_pass_has_a_summary_naming_its_module():
    for name, summary in PASSES.items():
        assert summary.rstrip(").").split("(")[-1].endswith(".py"), (name, summary)


@pytest.mark.parametrize("options", OPTION_SETS, ids=repr)
def test_passes_run_once_each_in_the_listed_order(options):
    names = ran(options)
    order = list(PASSES)
    assert names == sorted(names, key=order.index)
    assert len(set(names)) == len(names)
    assert names[0] == "parse" and names[-1] == "link"


def test_every_listed_pass_runs_under_some_options():
    seen = set()
    for options in OPTION_SETS:
        seen.update(ran(options))
    assert seen == set(PASSES)


def test_optional_passes_follow_the_options():
    assert "release" in ran(Options()) and "release" not in ran(Options(mode="vjp"))
    plain = ran(Options(optimize=False))
    assert not {"broadcast", "copies", "fold_temporaries", "release"} & set(plain)
    assert "checkpointing" not in ran(Options())
    assert "checkpointing" in ran(Options(policy=("revolve", 2)))
    forward = ran(Options(mode="jvp"))
    assert "tangent" in forward and "reverse" not in forward
    assert "anomaly" not in ran(Options()) and "anomaly" in ran(Options(check_finite=True))


@pytest.mark.parametrize("options", [Options(), Options(mode="vjp", single=False),
                                     Options(mode="jvp"), Options(policy="sqrt"),
                                     Options(optimize=False)], ids=repr)
def test_the_dump_after_the_last_pass_is_the_generated_source(options):
    last = list(PASSES)[-1]
    assert generate(unrolled, options, dump_after=last) == generate(unrolled, options).source


def test_dumping_changes_nothing_generated():
    before = generate(unrolled, Options()).source
    for name in PASSES:
        if name not in WHERE:
            generate(unrolled, Options(), dump_after=name)
    assert generate(unrolled, Options()).source == before


def test_the_dumps_show_what_each_pass_did():
    def dump(name, options=None):
        return generate(unrolled, options or Options(), dump_after=name)

    assert "def unrolled(W, h0):" in dump("parse") and "for _ in range(3)" in dump("parse")
    assert "t1 = range(3)" in dump("normalize")
    assert dump("activity").startswith("# active: ")
    assert "layer(W, h)" in dump("activity") and "layer_forward(W, h)" in dump("split_calls")
    assert "adjoint sweep" in dump("reverse") and "_tape.pop()" in dump("reverse")
    assert "_tape.append(" not in dump("dce") and "_tape.append(" in dump("tapes")
    assert "checkpoint_schedule" in dump("checkpointing", Options(policy="sqrt"))
    assert "def grad_unrolled(W, h0):" in dump("assemble")
    assert "(read by the adjoint of" not in dump("assemble")
    assert "(read by the adjoint of" in dump("annotate")
    assert "def layer_forward" not in dump("emit") and "def layer_forward" in dump("link")
    jvp = Options(mode="jvp")
    assert "d_W" in dump("tangent", jvp) and "def jvp_unrolled(" not in dump("tangent", jvp)
    assert dump("tangent_assemble", jvp).startswith("def jvp_unrolled(")


def test_an_unknown_pass_is_an_error_listing_the_passes():
    with pytest.raises(srcgrad.SrcGradError) as info:
        generate(unrolled, Options(), dump_after="optimise")
    message = str(info.value)
    assert "'optimise'" in message and all(name in message for name in PASSES)


def test_a_pass_that_does_not_run_is_an_error_naming_those_that_do():
    with pytest.raises(srcgrad.SrcGradError, match="'checkpointing' does not run.*tapes"):
        generate(unrolled, Options(), dump_after="checkpointing")
    with pytest.raises(srcgrad.SrcGradError, match="'reverse' does not run in mode 'jvp'"):
        generate(unrolled, Options(mode="jvp"), dump_after="reverse")


def test_show_after_prints_the_dump():
    g = srcgrad.grad(unrolled)
    out = io.StringIO()
    srcgrad.show(g, file=out, after="tapes")
    assert out.getvalue() == generate(unrolled, Options(), dump_after="tapes")
    out = io.StringIO()
    srcgrad.show(g, file=out, after="link")
    assert out.getvalue() == g.source
    assert g(*ARGS).shape == (3, 3)  # showing a dump leaves the function as it was


def test_show_after_needs_a_transformed_function():
    _, pullback = srcgrad.vjp(unrolled, *ARGS)
    with pytest.raises(srcgrad.SrcGradError, match="after"):
        srcgrad.show(pullback, after="tapes")
    with pytest.raises(srcgrad.SrcGradError, match="unknown pass"):
        srcgrad.show(srcgrad.grad(unrolled), after="nope")


MODEL = textwrap.dedent("""
    import numpy as np

    def loss(W, b):
        h = b
        for _ in range(2):
            h = np.tanh(W @ h)
        return np.sum(h ** 2)
""")


def cli(*args, cwd):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "srcgrad", *args], capture_output=True,
                          text=True, env=env, cwd=cwd, timeout=120, check=False)


def test_cli_show_after(tmp_path):
    (tmp_path / "model.py").write_text(MODEL)
    tapes = cli("show", "model.py:loss", "--after", "tapes", cwd=tmp_path)
    assert tapes.returncode == 0, tapes.stderr
    assert "h_tape.append(h)" in tapes.stdout and "# adjoint sweep" in tapes.stdout
    last = cli("show", "model.py:loss", "--after", list(PASSES)[-1], cwd=tmp_path)
    assert last.stdout == cli("show", "model.py:loss", cwd=tmp_path).stdout
    forward = cli("show", "model.py:loss", "--mode", "forward", "--after", "tangent_assemble",
                  cwd=tmp_path)
    assert forward.returncode == 0 and "def jvp_loss(" in forward.stdout
    bad = cli("show", "model.py:loss", "--after", "optimise", cwd=tmp_path)
    assert bad.returncode == 1
    assert "unknown pass 'optimise'" in bad.stderr and "checkpointing" in bad.stderr
    helped = cli("show", "--help", cwd=tmp_path)
    assert "--after PASS" in helped.stdout and "fold_temporaries" in helped.stdout


def test_checkpointing_finds_pushes_by_their_marker_not_their_comment():
    options = Options(policy="sqrt")
    c = Compilation(options, Linker(options, pipeline.prepare), fn=unrolled)
    run_passes(c, last="tapes")
    loop = next(stmt for stmt in c.forward if isinstance(stmt, gast.For))
    pushes = [stmt for stmt in loop.body if getattr(stmt, "push", None)]
    assert pushes and all(stmt.push.endswith("_tape") for stmt in pushes)
    for stmt in pushes:
        stmt.comment = "reworded"
    note = gast.Expr(value=gast.Constant(value="a note", kind=None))
    note.comment = "save: a comment, not a push"
    loop.body.insert(0, note)
    run_passes(c, first="checkpointing")
    plain = c.module[0].split("'advance':")[1].split("elif")[0]
    assert "_tape.append" not in plain and "'a note'" in plain


def test_how_it_works_shows_the_pass_list_and_walks_every_pass():
    """docs/how-it-works.md quotes ``passes`` as it is and has a paragraph per pass."""
    text = (ROOT / "docs" / "how-it-works.md").read_text()
    assert inspect.getsource(pipeline.passes).rstrip() in text
    for name in PASSES:
        assert f"**`{name}`**" in text, name
