"""Print what every stage of the srcgrad pipeline makes of one example.

    python docs/walkthrough.py

docs/how-it-works.md walks through this output; run the script to see what
the compiler you have installed does with the same function.
"""

from __future__ import annotations

import ast
import sys
import textwrap
from pathlib import Path

import gast
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from srcgrad import pipeline as compiler

from srcgrad.frontend import fence
from srcgrad.analysis.activity import activity
from srcgrad.errors import UnsupportedSyntaxError
from srcgrad.frontend.parse import parse_function
from srcgrad.normalize.normalizer import normalize, unparse_body


def predict(W, x):
    return np.tanh(W @ x)


def loss(W, xs, y):
    total = 0.0
    for x in xs:
        total += np.sum((predict(W, x) - y) ** 2)
    return total / len(xs)


def stage(title: str, text: str) -> None:
    print(f"\n=== {title} " + "=" * (72 - len(title)))
    print(textwrap.dedent(text).strip("\n"))


def main() -> None:
    parsed = parse_function(loss)
    stage("frontend: the parsed definition", ast.unparse(gast.gast_to_ast(parsed.node)))
    names = ("np", "predict", "len")
    stage("frontend: what the free names mean",
          "\n".join(f"{n:8} -> {parsed.resolver.where(n)}: {parsed.resolver.lookup(n)!r}"
                    for n in names))

    fence.check(parsed.node, parsed.filename)
    bad = gast.parse("def f(x):\n    try:\n        return x\n    finally:\n        pass\n")
    try:
        fence.check(bad.body[0], "model.py")
    except UnsupportedSyntaxError as exc:
        stage("fence: accepted; a rejected function would get", str(exc))

    program = normalize(parsed)
    stage("normalize: A-normal form", unparse_body(program))

    act = activity(program, ["W"])
    stage("analyze: activity with respect to W",
          f"varied: {sorted(act.varied)}\nuseful: {sorted(act.useful)}\n"
          f"active: {sorted(act.active)}")

    plain = compiler.generate(loss, compiler.Options(optimize=False)).source
    stage("reverse (optimize=False): the generated module", plain)
    final = compiler.generate(loss, compiler.Options()).source
    stage("optimize + emit: the generated module", final)


if __name__ == "__main__":
    main()
