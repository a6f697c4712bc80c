"""Display helpers for the derivation notebooks (``notebooks/*.ipynb``), and their refresh.

The notebooks call these and nothing else of their own: a derivation's statement, assumptions,
steps and results rendered as Markdown and LaTeX (printed by SymPy from the checked objects),
the verdict of a claim check, its plots, and the checkpoint tables. Without IPython the same
content is printed as text.

Every text a notebook shows must be the same on every machine (a test re-executes the notebooks
and compares): claim checks run with a fixed seed, numbers at rounding level are never shown
(:func:`stable_text`), and a part whose numbers agree to floating-point rounding is reported
as such rather than with its platform-dependent residuals.

Refresh the stored outputs (after a change that alters them) with::

    python -m verify.notebook refresh [notebooks/01_decomposition.ipynb ...]
"""

from __future__ import annotations

import argparse
import atexit
import os
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Iterable

from .errors import VerifyError

__all__ = [
    "SEED",
    "QUICK",
    "stable_text",
    "show_claim",
    "show_assumptions",
    "show_steps",
    "show_results",
    "show_comparisons",
    "check",
    "show_verdict",
    "show_plot",
    "show_agreement",
    "show_hdi_table",
    "show_hdi_summary",
    "plot_hdi_layers",
    "show_overlap_heatmaps",
    "execute",
    "refresh",
    "main",
]

#: Seed and sizes of the claim checks the notebooks run (quick: each notebook stays well under 60 s).
SEED = 0
QUICK = True
#: Numbers written as ``m e-k`` with k at least this are rounding residuals: shown as a bound.
ROUNDING_EXPONENT = 12

_ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK_DIR = _ROOT / "notebooks"


# --- output ----------------------------------------------------------------------------------------


def _ipython() -> Any:
    try:
        from IPython import get_ipython
        from IPython import display as ipd
    except ImportError:
        return None
    return ipd if get_ipython() is not None else None


def _markdown(text: str) -> None:
    ipd = _ipython()
    if ipd is None:
        print(text)
    else:
        ipd.display(ipd.Markdown(text))


def _math(latex: str) -> None:
    ipd = _ipython()
    if ipd is None:
        print(f"    {latex}")
    else:
        ipd.display(ipd.Math(latex))


def _image(path: str | Path) -> None:
    ipd = _ipython()
    if ipd is None:
        print(f"[plot: {path}]")
    else:
        ipd.display(ipd.Image(filename=str(path)))


_ROUNDING = re.compile(r"(?<![\w.])\d(?:\.\d+)?e-(\d+)\b")


def stable_text(text: Any) -> str:
    """``text`` with rounding residuals (``2.2e-16``, ``7e-52``: exponent >= 12) replaced by
    ``<1e-12``: they differ from one CPU to the next, the bound does not."""
    return _ROUNDING.sub(lambda m: f"<1e-{ROUNDING_EXPONENT}" if int(m.group(1)) >= ROUNDING_EXPONENT
                         else m.group(0), str(text))


def _md(text: Any) -> str:
    """Plain text inside Markdown: characters Markdown would read as markup are escaped."""
    return re.sub(r"([\\`*_\[\]<>#|$])", r"\\\1", stable_text(text))


# --- derivations -----------------------------------------------------------------------------------


def _der(claim: str) -> Any:
    from proofs import derivation

    return derivation(claim)


def show_claim(claim: str) -> None:
    """The claim's title, its statement as the paper's summary gives it, the derivation status."""
    der = _der(claim)
    n_ok = sum(s.checked for s in der.steps)
    _markdown(f"## {der.claim}: {_md(der.title)}\n\n**Claim as stated.** {_md(der.stated)}\n\n"
              f"Derivation: **{der.status}**, {n_ok} of {len(der.steps)} steps checked by SymPy.")


def show_assumptions(claim: str) -> None:
    """The assumptions (``setting`` defines the objects, ``model`` restricts beyond them)."""
    from proofs.notation import to_latex

    der = _der(claim)
    rows = []
    for a in der.assumptions.values():
        row = f"- `{a.name}` (*{a.kind}*): {_md(a.statement)}"
        if a.expr is not None and not isinstance(a.expr, str):
            row += f" $\\quad {to_latex(a.expr)}$"
        rows.append(row)
    _markdown("### Assumptions\n\n" + "\n".join(rows))


def _formula(claim: str, kind: str, name: str, expr: Any) -> None:
    from .latex import Formula

    f = Formula(claim, name, kind, expr)
    if not f.typesettable():
        _markdown(f"*(a formula of {len(f.latex(macros=False))} characters of LaTeX, too wide to read here: "
                  f"see `snippets/{f.filename}` written by `python -m verify latex`)*")
        return
    lines = f.lines(macros=False)
    _math(lines[0] if len(lines) == 1 and "&" not in lines[0]
          else "\\begin{aligned}" + " \\\\ ".join(lines) + "\\end{aligned}")


def _selected(items: Iterable[Any], names: Iterable[str] | None, what: str, claim: str) -> list[Any]:
    items = list(items)
    if names is None:
        return items
    names = list(names)
    known = {x.name for x in items}
    missing = [n for n in names if n not in known]
    if missing:
        raise VerifyError(f"names: expected {what} of {claim}, got unknown {missing}")
    return [x for x in items if x.name in names]


def show_steps(claim: str, names: Iterable[str] | None = None) -> None:
    """Each step (or those named): its check method and status, why it holds, and the relation
    printed by SymPy from the object that was checked."""
    der = _der(claim)
    wanted = {s.name for s in _selected(der.steps, names, "step names", claim)}
    _markdown("### Derivation steps\n\nEach relation is the SymPy object the step checked, printed as LaTeX.")
    for k, s in enumerate(der.steps, 1):
        if s.name not in wanted:
            continue
        text = f"**Step {k}** `{s.name}`: checked by *{s.method}*, **{s.status}**. {_md(s.why)}"
        if s.uses:
            text += f" (uses: {_md(', '.join(s.uses))})"
        if s.status != "checked" and s.detail:
            text += f"\n\n*Detail:* {_md(s.detail)}"
        if isinstance(s.relation, str):
            text += f"\n\n`{s.relation}`"
            _markdown(text)
        else:
            _markdown(text)
            _formula(der.claim, "step", s.name, s.relation)


def show_results(claim: str, names: Iterable[str] | None = None) -> None:
    """The named results (the formulas the generated code and the LaTeX export take)."""
    from proofs.notation import to_latex

    der = _der(claim)
    _markdown("### Results")
    for r in _selected(der.results.values(), names, "result names", claim):
        args = ", ".join(f"${to_latex(a)}$" for a in r.args[:12]) + (", ..." if len(r.args) > 12 else "")
        _markdown(f"**{r.name}**: {_md(r.description)}" + (f" (arguments {args})" if args else ""))
        if isinstance(r.expr, str):
            _markdown(f"`{r.expr}`")
        else:
            _formula(der.claim, "result", r.name, r.expr)


def show_comparisons(claim: str) -> None:
    """What was derived against what the paper states (a finding either way)."""
    der = _der(claim)
    rows = [f"- `{c.name}`: **{'holds' if c.holds else 'does not hold'}**. *Stated:* {_md(c.stated)} "
            f"*Derived:* {_md(c.derived)}" + (f" {_md(c.detail)}" if c.detail else "") for c in der.comparisons]
    _markdown("### Derived versus stated\n\n" + ("\n".join(rows) if rows else "(no comparison recorded)"))


# --- claim checks ----------------------------------------------------------------------------------

_RUNS: dict[tuple, Any] = {}
_TMP: list[Path] = []


def _tmpdir(prefix: str) -> Path:
    path = Path(tempfile.mkdtemp(prefix=prefix))
    if not _TMP:
        atexit.register(lambda: [shutil.rmtree(p, ignore_errors=True) for p in _TMP])
    _TMP.append(path)
    return path


def check(claim: str, *, seed: int = SEED, quick: bool = QUICK) -> Any:
    """Run the claim check (``verify.claims.run_claim``) once with plots in a temporary folder;
    returns its :class:`verify.verdicts.ClaimResult`."""
    from .claims import Context, run_claim

    key = (claim.upper(), seed, quick)
    if key not in _RUNS:
        ctx = Context(seed=seed, quick=quick, out=_tmpdir(f"verify-{claim.lower()}-"))
        result = run_claim(claim, ctx)
        result.plots = {k: str(Path(ctx.out) / v) for k, v in result.plots.items()}  # run_claim's are relative
        _RUNS[key] = result
    return _RUNS[key]


def show_verdict(result: Any) -> None:
    """The computed verdict with its headline, corrections, premise findings and limits (the
    report's fields), then every part with its role and effect. Residuals that agree to
    floating-point rounding are reported as such, not printed."""
    d = result.to_dict()
    rows = [f"### Verdict: **{d['verdict']}**", "", f"*{_md(d['headline'])}*", "",
            "Only the core parts set the verdict; details that are off are corrections, premise parts are "
            "premise findings, failures outside the stated scope are limits."]
    for title, key, fmt in (("Corrections", "corrections", lambda x: f"stated *{_md(x['stated'])}*; derived: "
                                                                     f"{_md(x['derived'])}"),
                            ("Premise", "premise", lambda x: f"{x['outcome']}: {_md(x['finding'])} "
                                                             f"(regime: {_md(x['regime'])})"),
                            ("Limits", "limits", lambda x: f"{_md(x['finding'])} (holds under: {_md(x['boundary'])})")):
        if d[key]:
            rows += ["", f"**{title}:**", *[f"- {fmt(x)}" for x in d[key]]]
    rows += ["", "**Parts:**"]
    for p in result.parts:
        rows.append(f"- **{_md(p.id)}** ({p.role.value}{', reading ' + p.reading if p.reading else ''}): "
                    f"*{p.effect.value}*. {_md(p.statement)}")
        if p.symbolic is not None:
            rows.append(f"    - symbolic: {p.symbolic.status}, {p.symbolic.n_checked}/{p.symbolic.n_steps} steps")
        if p.numeric is not None:
            if p.numeric.agreement == "rounding":
                rows.append("    - numeric: agrees to floating-point rounding (the residuals are in the report of "
                            "`python -m verify`)")
            else:
                rows.append(f"    - numeric ({p.numeric.agreement}): {_md(p.numeric.summary)}")
        if p.counterexample is not None:
            rows.append(f"    - counterexample: {_md(p.counterexample.description)}")
    sizes = "quick sizes" if QUICK else "full sizes"
    rows += ["", f"*Claim check run with seed {SEED} and {sizes}; `python -m verify` runs the full sizes.*"]
    _markdown("\n".join(rows))


def show_plot(result: Any, name: str) -> None:
    """A plot the claim check drew."""
    if name not in result.plots:
        raise VerifyError(f"name: expected a plot of {result.id} among {sorted(result.plots)}, got {name!r}")
    _image(result.plots[name])


def show_agreement(label: str, ours: Any, reference: Any, *, rtol: float = 1e-12) -> None:
    """Whether two arrays agree to ``rtol`` relative to the reference's largest magnitude, as a
    sentence that does not depend on the platform's rounding (the residual itself is not shown)."""
    import numpy as np

    a, b = np.asarray(ours, dtype=float), np.asarray(reference, dtype=float)
    if a.shape != b.shape:
        raise VerifyError(f"ours: expected the reference's shape {b.shape}, got {a.shape}")
    scale = float(np.max(np.abs(b))) or 1.0
    err = float(np.max(np.abs(a - b))) / scale
    shape = "x".join(map(str, a.shape))
    if err <= rtol:
        print(f"{label}: {shape} outputs agree, max |difference| / max |reference| <= {rtol:g}")
    else:
        print(f"{label}: {shape} outputs DIFFER, max |difference| / max |reference| = {err:.3g} > {rtol:g}")


# --- checkpoints -----------------------------------------------------------------------------------


def show_hdi_table(result: dict[str, Any], name: str) -> None:
    """The per-layer table of ``python -m verify hdi`` with the checkpoint called ``name``
    (its local path differs from machine to machine)."""
    from .checkpoint import format_table

    print(format_table({**result, "path": name}))


def show_hdi_summary(result: dict[str, Any]) -> None:
    """Per projection: the HDI range over the layers against the Haar-random baseline and the bound."""
    rows = []
    for part in ("keys", "queries"):
        blocks = [layer[part] for layer in result["layers"] if layer[part]["hdi"] is not None]
        if not blocks:
            continue
        hdis = [b["hdi"] for b in blocks]
        rnd, bound = blocks[0]["random_hdi"], blocks[0]["hdi_bound"]
        below = sum(h < b["random_hdi"] for h, b in zip(hdis, blocks))
        rows.append(f"- **{part}**: HDI {min(hdis):.4f} to {max(hdis):.4f} over {len(blocks)} layers; "
                    f"{below} of {len(blocks)} layers below the Haar-random baseline {rnd:.4f} "
                    f"(random {result['d_k']}-dimensional subspaces of R^{result['d']}), bound {bound:.4f}; "
                    f"max pairwise overlap {max(b['max_overlap'] for b in blocks):.4f} "
                    f"(random mean {blocks[0]['random_mean_overlap']:.4f})")
    _markdown("\n".join(rows))


def plot_hdi_layers(result: dict[str, Any], title: str) -> None:
    """HDI per layer for keys and queries, with the random baseline and the fusion-frame bound."""
    from . import plots

    fig, ax = plots.new_figure(title, "layer", "HDI (subspace form)")
    layers = [layer["layer"] for layer in result["layers"]]
    for part, marker in (("keys", "o-"), ("queries", "s-")):
        ax.plot(layers, [layer[part]["hdi"] for layer in result["layers"]], marker, label=f"trained {part}")
    first = result["layers"][0]["keys"]
    ax.axhline(first["random_hdi"], ls="--", color="gray", label=f"Haar-random baseline 1 - d_k/d = {first['random_hdi']:.4f}")
    ax.axhline(first["hdi_bound"], ls=":", color="black", label=f"fusion-frame bound {first['hdi_bound']:.4f}")
    ax.set_ylim(0.0, 1.05)
    ax.legend(fontsize=8, loc="lower right")
    path = _tmpdir("verify-hdi-") / "hdi_layers.png"
    plots.save(fig, path)
    _image(path)


def show_overlap_heatmaps(result: dict[str, Any], layers: Iterable[int] | None = None) -> None:
    """The pairwise overlap matrices of keys and queries as heatmaps (``verify hdi --plots``)."""
    from .checkpoint import plot_overlaps

    wanted = None if layers is None else set(layers)
    sub = {**result, "layers": [x for x in result["layers"] if wanted is None or x["layer"] in wanted]}
    for path in plot_overlaps(sub, _tmpdir("verify-overlap-")):
        _image(path)


# --- executing the notebooks -----------------------------------------------------------------------


def notebooks() -> list[Path]:
    """The notebooks of the repository, in order."""
    return sorted(NOTEBOOK_DIR.glob("*.ipynb"))


def execute(path: str | Path, *, timeout: int = 300) -> Any:
    """Run a notebook top to bottom in a fresh ``python3`` kernel (this interpreter's ipykernel),
    in its own folder, with this checkout importable; returns the executed notebook."""
    import nbformat
    from nbclient import NotebookClient

    path = Path(path)
    nb = nbformat.read(path, as_version=4)
    old = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(_ROOT), old) if p)  # the kernel inherits it
    try:
        client = NotebookClient(nb, timeout=timeout, kernel_name="python3", record_timing=False,
                                resources={"metadata": {"path": str(path.parent)}})
        client.execute()
    finally:
        if old is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = old
    return nb


def refresh(paths: Iterable[str | Path] | None = None) -> dict[Path, float]:
    """Re-execute notebooks and store their outputs; returns the seconds each took."""
    import nbformat

    times = {}
    for path in [Path(p) for p in (paths or notebooks())]:
        t0 = time.perf_counter()
        nb = execute(path)
        times[path] = time.perf_counter() - t0
        for cell in nb.cells:
            cell.get("metadata", {}).pop("execution", None)
        nbformat.write(nb, path)
    return times


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m verify.notebook",
                                description="Re-execute the derivation notebooks and store their outputs.")
    p.add_argument("command", choices=["refresh"])
    p.add_argument("notebooks", nargs="*", type=Path, help="default: every notebooks/*.ipynb")
    args = p.parse_args(argv)
    for path, seconds in refresh(args.notebooks or None).items():
        print(f"{path}: executed and stored in {seconds:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
