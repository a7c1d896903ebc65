"""Write docs/supported.md, the list of supported operations, from the rule registry.

    python docs/gen_supported.py          # rewrite docs/supported.md
    python docs/gen_supported.py --check  # exit 1 if it is out of date

The registry (:mod:`srcgrad.rules`) is the truth: every primitive with an
adjoint rule, grouped by the module its rules live in, with the arguments the
rule differentiates and whether it has a tangent (forward-mode) rule beside it,
then any primitive with a tangent rule only, then every primitive registered
as non-differentiable.  Users' rules
(``srcgrad.register_vjp`` and friends) are not srcgrad's and are left out; run
the script in a fresh process (tests/test_docs.py does), since a user's rule
for a primitive srcgrad also covers replaces srcgrad's in the registry.
tests/test_docs.py fails when the committed file differs from what this
script writes, so a new rule cannot go undocumented.
"""

from __future__ import annotations

import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from srcgrad.rules import registry  # noqa: E402 - importing srcgrad.rules registers every rule

OUT = Path(__file__).resolve().parent / "supported.md"

FAMILIES = {
    "operators": "Python operators",
    "ufuncs": "NumPy elementwise functions (ufuncs)",
    "reductions": "Reductions",
    "linalg": "Linear algebra",
    "fft": "Fourier transforms (np.fft)",
    "sequences": "Convolution, interpolation and search",
    "shapes": "Shape operations",
    "indexing": "Indexing",
    "sorting": "Sorting",
    "differences": "Finite differences",
    "products": "Kronecker and cross products",
    "construction": "Building arrays",
    "methods": "ndarray methods and attributes",
    "containers": "Containers, attributes and builtins",
    "math_module": "The math module",
    "gradient_control": "Gradient control",
    "forward_helpers": "Helpers of generated tangent code",
    "scipy_special": "SciPy: scipy.special",
    "scipy_stats": "SciPy: scipy.stats",
    "scipy_stats_location": "SciPy: scipy.stats (expon, laplace, cauchy, binom)",
    "scipy_signal": "SciPy: scipy.signal",
    "scipy_spatial": "SciPy: scipy.spatial",
}

#: Families of an optional library: registered when the user's code imports it
#: (the script imports it, where installed, to list them).  Without SciPy,
#: ``--check`` leaves their sections out of the comparison.
OPTIONAL = {"scipy_special", "scipy_stats", "scipy_stats_location", "scipy_signal",
            "scipy_spatial"}
OPTIONAL_NOTE = ["SciPy is optional: these rules are registered once your code has imported",
                 "that part of SciPy (srcgrad never imports it itself)."]

#: What a family heading adds, where its rules need a word of explanation.
NOTES = {
    "forward_helpers": ["Generated forward-mode code calls these runtime helpers; their rules",
                        "let reverse mode differentiate that code again (second derivatives)."],
    "linalg": ["Factorisations work on stacks of matrices.  `cholesky` and `eigh` read one",
               "triangle of their argument (the lower one by default), so its gradient lies",
               "in that triangle; for a symmetric matrix built from parameters, the",
               "parameters' gradients are autograd's and JAX's (which return the symmetrised",
               "matrix).  Eigenvectors (and singular vectors) of repeated eigenvalues",
               "(singular values) are not unique: their terms are dropped there, which is",
               "right when the loss does not depend on the choice of basis (functions of the",
               "eigenvalues, of projectors) and meaningless otherwise.  `svd` of a non-square",
               "matrix needs `full_matrices=False` for its singular vectors; `qr` is the",
               "reduced factorisation; `pinv` and `lstsq` assume the rank does not change near",
               "the point."],
    "reductions": ["The `nan` reductions give the NaN elements no cotangent.  A NaN produced",
                   "from a differentiated value still poisons the rules before it",
                   "(`0 * NaN` in the adjoint of `(x - y) ** 2`), as in autograd and JAX."],
    "fft": ["Complex values follow autograd's and JAX's convention: the cotangent of",
            "`z = x + iy` is `dL/dx - i dL/dy`, so a complex-linear rule needs no conjugate",
            "(the adjoint of `fft` is `fft`), and the gradient of a real loss with respect",
            "to a complex input is that conjugate-Wirtinger form (descend with",
            "`z - lr * conj(g)`).  `irfft` is only real-linear: its rule conjugates."],
    **{family: OPTIONAL_NOTE for family in OPTIONAL},
}


def _family(rule) -> str:
    return rule.fn.__module__.rpartition(".")[2]


def _builtin(rules: dict) -> dict:
    """srcgrad's own rules: users' rules (called by name) are left out."""
    return {key: rule for key, rule in rules.items() if rule.called is None}


def _forward(rule, tangent) -> str:
    """The *forward mode* cell: whether the primitive has a tangent rule, and
    where it differs from the adjoint rule (arguments, module)."""
    if tangent is None:
        return "no"
    cell = "yes"
    if tangent.wrt != rule.wrt:
        cell += f", through {', '.join(tangent.wrt)}"
    if _family(tangent) != _family(rule):
        cell += f" (`srcgrad/rules/{_family(tangent)}.py`)"
    return cell


def render() -> str:
    registry.load_lazy(force=True)  # SciPy's families, where SciPy is installed
    rules = _builtin(registry.all_rules())
    tangents = _builtin(registry.all_tangents())
    groups = defaultdict(list)
    for rule in rules.values():
        groups[_family(rule)].append(rule)
    lines = [
        "# Supported operations",
        "",
        "<!-- Generated by docs/gen_supported.py from the rule registry; do not edit. -->",
        "",
        "Every operation below has an adjoint (reverse-mode) rule in `srcgrad/rules/`",
        "(the module named in each heading).  *Differentiated* lists the arguments",
        "derivatives flow through; the others (axes, shapes, indices, dtypes) are treated",
        "as constants: a differentiated value reaching one that is not an axis, shape,",
        "count, index, dtype, mode, flag or threshold (`np.linalg.norm`'s `ord`,",
        "`np.var`'s `ddof`) raises `NonDifferentiableError` rather than get a zero",
        "gradient.  *Forward mode* says whether the operation also has a tangent rule,",
        "beside its adjoint rule in the same module, for `jvp` and the second",
        "derivatives.  Operations with no rule and not listed as",
        "non-differentiable raise `MissingRuleError` when a differentiated value flows",
        "into them; `srcgrad.register_vjp` and `srcgrad.register_jvp` add rules of your",
        "own ([custom rules](custom-rules.md)).",
        "",
    ]
    order = [f for f in FAMILIES if f in groups] + sorted(set(groups) - set(FAMILIES))
    total = forward = optional = optional_forward = 0
    for family in order:
        family_rules = sorted(groups[family], key=lambda r: r.name)
        if family in OPTIONAL:
            optional += len(family_rules)
            optional_forward += sum(r.primitive in tangents for r in family_rules)
        else:
            total += len(family_rules)
            forward += sum(r.primitive in tangents for r in family_rules)
        lines += [f"## {FAMILIES.get(family, family)}", "",
                  f"Rules: `srcgrad/rules/{family}.py`.", ""]
        if family in NOTES:
            lines += [*NOTES[family], ""]
        lines += ["| operation | differentiated | other parameters | forward mode |",
                  "|---|---|---|---|"]
        for rule in family_rules:
            others = [p for p in rule.params if p not in rule.wrt]
            tangent = tangents.get(rule.primitive)
            lines.append(f"| `{rule.name}` | {', '.join(rule.wrt)} | {', '.join(others)} "
                         f"| {_forward(rule, tangent)} |")
        lines.append("")
    only = sorted((t for key, t in tangents.items() if key not in rules), key=lambda t: t.name)
    if only:
        lines += ["## Forward mode only", "",
                  "These operations have a tangent rule but no adjoint rule: `jvp` handles",
                  "them, `grad` raises `MissingRuleError`.", "",
                  "| operation | differentiated | tangent rules |", "|---|---|---|"]
        lines += [f"| `{t.name}` | {', '.join(t.wrt)} | `srcgrad/rules/{_family(t)}.py` |"
                  for t in only]
        lines.append("")
    names = sorted(set(registry.all_nondifferentiable().values()))
    lines += ["## Non-differentiable operations", "",
              "Their results carry no derivative (comparisons, integer and boolean results,",
              "array constructors from shapes); they may appear anywhere, and their",
              "outputs are constants in both modes.", "",
              ", ".join(f"`{n}`" for n in names), "",
              f"*{total} operations with adjoint rules, {forward} of them with tangent rules"
              + (f", {len(only)} with tangent rules only" if only else "")
              + f"; {len(names)} non-differentiable.*", ""]
    if optional:
        lines += [f"*With SciPy: {optional} more, {optional_forward} of them with tangent rules.*",
                  ""]
    return "\n".join(line.replace("|  |", "| |") for line in lines)


def without_optional(text: str) -> str:
    """``text`` without the sections and the count of the optional families (what
    this script writes where SciPy is not installed)."""
    headings = {f"## {FAMILIES[family]}" for family in OPTIONAL}
    kept, skipping = [], False
    for line in text.split("\n"):
        if line.startswith("## "):
            skipping = line in headings
        if not skipping and not line.startswith("*With SciPy:"):
            kept.append(line)
    return "\n".join(kept).replace("\n\n\n", "\n\n").rstrip("\n") + "\n"


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    text = render()
    if "--check" in argv:
        committed = OUT.read_text(encoding="utf-8") if OUT.exists() else None
        if committed is not None and not any(f"## {FAMILIES[f]}" in text for f in OPTIONAL):
            committed = without_optional(committed)  # SciPy is not installed here
        if committed != text:
            print(f"{OUT} is out of date: run python docs/gen_supported.py", file=sys.stderr)
            return 1
        return 0
    OUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
