"""Generated straight-line functions for the compile-time benchmark.

``write_module(directory, n_lines, tag)`` writes a module holding one function
``f(x, y)`` whose body is ``n_lines`` assignments (each one to three NumPy
operations on earlier values) and a final ``return np.sum(...)``, and returns
the imported function.  Every call writes a new module with a new name, so
each import gives a function srcgrad has never seen (its in-memory cache is
keyed by the function object).
"""

from __future__ import annotations

import importlib.util
import random
import sys
from pathlib import Path

# Statement templates: {o} is the new variable, {a} and {b} earlier ones.
_TEMPLATES = [
    "{o} = np.sin({a}) * {b}",
    "{o} = {a} + 0.5 * {b}",
    "{o} = np.tanh({a}) - {b}",
    "{o} = np.exp(-{a} * {a})",
    "{o} = {a} / (1.0 + {b} * {b})",
    "{o} = np.cos({a} + {b})",
    "{o} = {a} * {b} + 0.25",
    "{o} = np.sqrt({a} * {a} + 1.0)",
    "{o} = np.log1p({a} * {a}) + {b}",
    "{o} = np.maximum({a}, {b}) * 0.5",
]


def source(n_lines: int, seed: int = 0) -> str:
    """The source of ``f(x, y)`` with a body of ``n_lines`` statements plus a return."""
    rnd = random.Random(seed)
    names = ["x", "y"]
    body = []
    for i in range(n_lines):
        # read mostly recent values, sometimes old ones: a realistic dependency graph
        a = names[-1] if rnd.random() < 0.5 else rnd.choice(names[-8:])
        b = rnd.choice(names)
        out = f"v{i}"
        body.append("    " + rnd.choice(_TEMPLATES).format(o=out, a=a, b=b))
        names.append(out)
    body.append(f"    return np.sum({names[-1]})")
    return "import numpy as np\n\n\ndef f(x, y):\n" + "\n".join(body) + "\n"


def write_module(directory, n_lines: int, tag: str):
    """Write the module to ``directory`` under a fresh name and return its ``f``."""
    name = f"srcgrad_bench_gen_{n_lines}_{tag}"
    path = Path(directory) / f"{name}.py"
    path.write_text(source(n_lines), encoding="utf-8")
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module.f
