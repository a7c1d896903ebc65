"""Export a gradient to a standalone module and use it where srcgrad is not installed.

``srcgrad.export`` writes the generated code of one or more gradient functions
into a single Python file that imports NumPy and nothing else: the few srcgrad
runtime helpers it calls are copied in, and the constants it reads (here the
regularisation strength and the class weights) are written as literals.  That
file can be vendored into another project, reviewed, diffed and shipped.

This script exports the gradient of a weighted, L2-regularised logistic
regression loss, then starts a separate Python process in which importing
srcgrad fails, and trains the model there with the exported module alone.
The parent process checks the result against srcgrad's own gradients.

    python examples/export_standalone.py [--keep DIR]   # --keep: leave the module in DIR
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import numpy as np

import srcgrad

L2 = 1e-2
CLASS_WEIGHTS = np.array([1.0, 3.0])   # errors on the rare class cost three times more


def logistic_loss(w, b, X, y):
    """Weighted binary cross-entropy of sigmoid(X @ w + b), plus L2 on ``w``."""
    z = X @ w + b
    log_p = -np.logaddexp(0.0, -z)        # log sigmoid(z)
    log_q = -np.logaddexp(0.0, z)         # log (1 - sigmoid(z))
    weights = CLASS_WEIGHTS[y]
    nll = -np.sum(weights * (y * log_p + (1 - y) * log_q)) / np.sum(weights)
    return nll + L2 * np.sum(w ** 2)


# What runs in the other process: srcgrad is made unimportable on purpose.
TRAIN = textwrap.dedent("""
    import sys
    sys.modules["srcgrad"] = None          # "import srcgrad" now raises ImportError
    sys.path.insert(0, sys.argv[1])
    import numpy as np
    import logistic_grad                    # the exported module

    data = np.load(sys.argv[2])
    X, y = data["X"], data["y"]
    w, b = np.zeros(X.shape[1]), 0.0
    for step in range(200):
        loss, (gw, gb) = logistic_grad.value_and_grad_logistic_loss(w, b, X, y)
        w, b = w - 0.5 * gw, b - 0.5 * gb
    print(*(repr(float(v)) for v in [loss, b, *w]))
""")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", help="write the exported module to this directory")
    args = parser.parse_args()

    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 5))
    y = (X @ np.array([1.5, -2.0, 0.5, 0.0, 1.0]) + 0.3 * rng.normal(size=300) > 1.0)
    y = y.astype(int)

    with tempfile.TemporaryDirectory() as tmp:
        where = Path(args.keep or tmp)
        where.mkdir(parents=True, exist_ok=True)
        module = where / "logistic_grad.py"
        entries = srcgrad.export(module, srcgrad.value_and_grad(logistic_loss, wrt=(0, 1)))
        print(f"wrote {module} with {', '.join(entries)}; its header:\n")
        print("\n".join(module.read_text().splitlines()[:12]) + "\n    ...\n")

        np.savez(where / "data.npz", X=X, y=y)
        result = subprocess.run([sys.executable, "-I", "-c", TRAIN, str(where),
                                 str(where / "data.npz")],
                                capture_output=True, text=True, check=True)
        loss, b, *w = (float(v) for v in result.stdout.split())
        print(f"trained without srcgrad: loss {loss:.5f}, b {b:+.4f}, "
              f"w {np.round(w, 4).tolist()}")

    # The same training with srcgrad in this process gives the same numbers.
    step = srcgrad.value_and_grad(logistic_loss, wrt=(0, 1))
    w_here, b_here = np.zeros(5), 0.0
    for _ in range(200):
        loss_here, (gw, gb) = step(w_here, b_here, X, y)
        w_here, b_here = w_here - 0.5 * gw, b_here - 0.5 * gb
    assert np.allclose(w, w_here, rtol=1e-12, atol=1e-14) and np.isclose(b, b_here)
    assert np.isclose(loss, loss_here, rtol=1e-12)
    print("the exported module and srcgrad agree to 1e-12")


if __name__ == "__main__":
    main()
