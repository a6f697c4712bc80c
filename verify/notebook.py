"""Display helpers for the notebooks (``notebooks/*.ipynb``), which call them and define no logic:
the claim and its reading, assumptions, steps, the numeric check with its plots, the verdict;
formulas printed by SymPy, prose typeset (:mod:`proofs.markup`); printed as text without IPython.
A notebook shows the same text on every machine: a fixed seed, rounding residuals shown as a bound
(:func:`stable_text`). ``python tools/notebooks.py refresh`` refreshes the stored outputs.
"""

from __future__ import annotations

import atexit
import dataclasses
import re
import shutil
import tempfile
from collections import Counter
from pathlib import Path
from types import ModuleType
from typing import Any, Callable, Iterable

import sympy as sp

from proofs import CLAIM_IDS, derivation
from proofs.core import METHODS
from proofs.markup import render
from proofs.notation import to_latex
from verify.errors import VerifyError
from verify.outputs.document import AGREEMENT_WORDS
from verify.outputs.latex import Formula

__all__ = ["SEED", "QUICK", "stable_text", "identical_sides", "show_claim", "show_checks", "show_assumptions",
           "show_step", "show_steps", "show_results", "show_comparisons", "check", "show_reading", "show_numeric",
           "show_verdict", "show_plot", "show_agreement", "show_hdi_table", "show_hdi_summary", "plot_hdi_layers",
           "show_overlap_heatmaps"]

#: Seed and sizes of the claim checks the notebooks run (quick: each notebook stays well under 30 s).
SEED = 0
QUICK = True
#: Numbers written as ``m e-k`` with k at least this are rounding residuals: shown as a bound.
ROUNDING_EXPONENT = 12
#: A method's input (the equation a solve step solves, a certificate) is shown as LaTeX up to this length;
#: longer ones are in the derivation's record (``python -m proofs``).
MAX_PARAM_LATEX = 400


# --- output ----------------------------------------------------------------------------------------


def _show(text: str, make: Callable[[Any], Any]) -> None:
    """``make(IPython.display)`` displayed in a notebook, ``text`` printed elsewhere."""
    try:
        from IPython import display as ipd
        from IPython import get_ipython
    except ImportError:
        ipd = None
    if ipd is None or get_ipython() is None:
        print(text)
    else:
        ipd.display(make(ipd))


def _markdown(text: str) -> None:
    _show(text, lambda ipd: ipd.Markdown(text))


def _math(latex: str) -> None:
    _show(f"    {latex}", lambda ipd: ipd.Math(latex))


def _image(path: str | Path) -> None:
    _show(f"[plot: {path}]", lambda ipd: ipd.Image(filename=str(path)))


# --- text ------------------------------------------------------------------------------------------

_ROUNDING = re.compile(r"(?<![\w.])\d(?:\.\d+)?e-(\d+)\b")
# a residual written as mathematics by proofs.markup.sci: $2.2 \times 10^{-16}$ or $10^{-16}$
_ROUNDING_MATH = re.compile(r"\$(?:\d(?:\.\d+)? \\times )?10\^\{-(\d+)\}\$")


def stable_text(text: Any, *, markup: bool = False) -> str:
    """``text`` with rounding residuals (``2.2e-16``, ``$7 \\times 10^{-52}$``: exponent >= 12)
    replaced by a bound (``<1e-12``, ``$< 10^{-12}$``; in marked-up text always the latter): they
    differ from one CPU to the next, the bound does not."""
    plain = f"$< 10^{{-{ROUNDING_EXPONENT}}}$" if markup else f"<1e-{ROUNDING_EXPONENT}"
    bound = f"< 10^{{-{ROUNDING_EXPONENT}}}"

    def residual(m: re.Match, inside: bool = False) -> str:
        return m.group(0) if int(m.group(1)) < ROUNDING_EXPONENT else (bound if inside else plain)

    if markup:   # prose and $...$ spans apart: a residual inside mathematics becomes the bare bound
        pieces = re.split(r"(\$[^$]*\$)", str(text))
        text = "".join(_ROUNDING.sub(lambda m: residual(m, p.startswith("$")), p) for p in pieces)
    else:
        text = _ROUNDING.sub(residual, str(text))
    return _ROUNDING_MATH.sub(lambda m: f"$< 10^{{-{ROUNDING_EXPONENT}}}$" if int(m.group(1)) >= ROUNDING_EXPONENT
                              else m.group(0), text)


def _md(text: Any) -> str:
    """Plain text inside Markdown: characters Markdown would read as markup are escaped."""
    return re.sub(r"([\\`*_\[\]<>#|$])", r"\\\1", stable_text(text))


def _prose(text: Any) -> str:
    """The package's marked-up text as Markdown with ``$`` mathematics (:mod:`proofs.markup`);
    text that is not markup is shown literally."""
    return render(" ".join(stable_text(text, markup=True).split()), "markdown")


# --- derivations -----------------------------------------------------------------------------------


def _der(claim: Any) -> Any:
    """The derivation of a claim id, or of a derivation module of one's own (docs/adding-a-claim.md)."""
    if isinstance(claim, ModuleType):
        return derivation(claim)
    if not isinstance(claim, str) or claim.upper() not in CLAIM_IDS:
        raise VerifyError(f"claim: expected one of {', '.join(CLAIM_IDS)} or a derivation module, got {claim!r}")
    return derivation(claim)


def identical_sides(relation: Any) -> bool:
    """Whether a step's relation (or any part of an ``And``) prints with the same text or the same
    LaTeX on both sides, like ``V = V``: such a step shows nothing to a reader."""
    parts = relation.args if isinstance(relation, sp.And) else (relation,)
    return any(str(p.lhs) == str(p.rhs) or to_latex(p.lhs) == to_latex(p.rhs) for p in parts if hasattr(p, "lhs"))


def show_claim(claim: str) -> None:
    """The claim's title, its statement as the paper's summary gives it, the derivation status."""
    der = _der(claim)
    n_ok = sum(s.checked for s in der.steps)
    _markdown(f"## {der.claim}: {_prose(der.title)}\n\n**Claim as stated.** {_prose(der.stated)}\n\n"
              f"Derivation: **{der.status}**, {n_ok} of {len(der.steps)} steps checked by SymPy.")


def show_checks(claim: str) -> None:
    """How the derivation's steps were checked: the count per named method, and the counts of steps
    that print with identical sides and of steps checked by an unnamed method (both 0 by design)."""
    der = _der(claim)
    methods = Counter(s.method for s in der.steps)
    unnamed = sum(n for m, n in methods.items() if m not in METHODS and m != "unchecked")
    same = sum(identical_sides(s.relation) for s in der.steps if not isinstance(s.relation, str))
    tally = ", ".join(f"*{m}* {n}" for m, n in sorted(methods.items(), key=lambda x: (-x[1], x[0])))
    _markdown(f"**{der.claim}: {len(der.steps)} steps, {sum(s.checked for s in der.steps)} checked.** "
              f"By method: {tally}. Steps that print with identical sides: {same}; steps checked by an "
              f"unnamed (custom) method: {unnamed}.")


def show_assumptions(claim: str, names: Iterable[str] | None = None) -> None:
    """The assumptions, all or those named (``setting`` defines the objects, ``model`` restricts
    beyond them)."""
    der = _der(claim)
    rows = []
    for a in _selected(der.assumptions.values(), names, "assumption names", der.claim):
        row = f"- `{a.name}` (*{a.kind}*): {_prose(a.statement)}"
        if a.expr is not None and not isinstance(a.expr, str):
            row += f" $\\quad {to_latex(a.expr)}$"
        rows.append(row)
    _markdown(f"### Assumptions of the derivation of {der.claim}\n\n" + "\n".join(rows))


def _formula(claim: str, kind: str, name: str, expr: Any) -> None:
    """A formula, whole, as display mathematics; a long one split at its relation and its terms
    (``verify.outputs.latex.formula_lines``), never replaced by a note."""
    lines = Formula(claim, name, kind, expr).lines(macros=False)
    _math(lines[0] if len(lines) == 1 and "&" not in lines[0]
          else "\\begin{aligned}" + " \\\\ ".join(lines) + "\\end{aligned}")


def _selected(items: Iterable[Any], names: Iterable[str] | None, what: str, claim: str) -> list[Any]:
    items = list(items)
    if names is None:
        return items
    names = [names] if isinstance(names, str) else list(names)
    known = {x.name for x in items}
    missing = [n for n in names if n not in known]
    if missing:
        raise VerifyError(f"names: expected {what} of {claim}, got unknown {missing}")
    return [x for x in items if x.name in names]


def _step_text(der: Any, s: Any, *, why: bool, heading: str) -> str:
    """The line above a step's formula: its name, method, status, note and assumptions."""
    summary = METHODS[s.method].summary if s.method in METHODS else "no check method"
    text = f"{heading} `{s.name}`: checked by **{s.method}** ({_md(summary)}), **{s.status}**."
    if why and s.why:
        note = _prose(s.why)
        text += f" {note}" + ("" if note.endswith(".") else ".")
    if s.uses:
        model = [u for u in s.uses if der.assumptions[u].kind == "model"]
        setting = [u for u in s.uses if u not in model]
        parts = ([f"model {', '.join(f'`{u}`' for u in model)}"] if model else []) + \
                ([f"setting {', '.join(f'`{u}`' for u in setting)}"] if setting else [])
        text += f" *Assumptions:* {'; '.join(parts)}."
    if s.status != "checked" and s.detail:
        text += f"\n\n*Detail:* {_md(s.detail)}"
    return text


def _param_latex(value: Any) -> str | None:
    """A method parameter as LaTeX, if it is a SymPy object (or a list of them) short enough to read."""
    if isinstance(value, (list, tuple)) and all(isinstance(v, sp.Basic) for v in value):
        value = sp.Tuple(*value)
    if not isinstance(value, sp.Basic):
        return None
    text = to_latex(value)
    return text if len(text) <= MAX_PARAM_LATEX else None


def _show_param(s: Any, key: str, label: str) -> None:
    latex = _param_latex(s.params.get(key))
    if latex is not None:
        _markdown(f"*{label}:*")
        _math(latex)


def _show_one(der: Any, s: Any, heading: str, *, why: bool, computed: bool) -> None:
    _markdown(_step_text(der, s, why=why, heading=heading))
    if _param_latex(s.params.get("equation")) is not None:   # a solve step: its premise, then what it gives
        _show_param(s, "equation", "The equation solved")
        _markdown("*gives:*")
    if isinstance(s.relation, str):
        _markdown(f"`{s.relation}`")
    else:
        _formula(der.claim, "step", s.name, s.relation)
    if computed:
        _show_param(s, "certificate", "The certificate (greater side minus smaller side)")
        if s.computed:
            _markdown(f"*Computed by the method:* `{stable_text(s.computed)}`")


def show_step(claim: str, name: str, *, computed: bool = True, why: bool = False) -> None:
    """One step, by name: its place, method, assumptions, the relation SymPy prints from the checked
    object and what the method computed (``computed=False``: not that; ``why=True``: its note)."""
    der = _der(claim)
    index = {s.name: k for k, s in enumerate(der.steps, 1)}
    if not isinstance(name, str) or name not in index:
        raise VerifyError(f"name: expected a step of {der.claim} (see `python -m proofs {der.claim}`), got {name!r}")
    k = index[name]
    _show_one(der, der.steps[k - 1], f"**Step {k} of {len(der.steps)}**", why=why, computed=computed)


def show_steps(claim: str, names: Iterable[str] | None = None, *, computed: bool = False) -> None:
    """Each step (or those named): method, status, why it holds and the checked relation
    (``computed=True`` adds what the method computed)."""
    der = _der(claim)
    wanted = {s.name for s in _selected(der.steps, names, "step names", der.claim)}
    _markdown("### Derivation steps\n\nEach relation is the SymPy object the step checked, printed as LaTeX.")
    for k, s in enumerate(der.steps, 1):
        if s.name in wanted:
            _show_one(der, s, f"**Step {k}**", why=True, computed=computed)


def show_results(claim: str, names: Iterable[str] | None = None) -> None:
    """The named results (the formulas the generated code and the LaTeX export take)."""
    der = _der(claim)
    _markdown("### Results")
    for r in _selected(der.results.values(), names, "result names", der.claim):
        args = ", ".join(f"${to_latex(a)}$" for a in r.args[:12]) + (", ..." if len(r.args) > 12 else "")
        _markdown(f"**{r.name}**: {_prose(r.description)}" + (f" (arguments {args})" if args else ""))
        if isinstance(r.expr, str):
            _markdown(f"`{r.expr}`")
        else:
            _formula(der.claim, "result", r.name, r.expr)


def show_comparisons(claim: str, names: Iterable[str] | None = None) -> None:
    """What was derived against what the paper states (a finding either way), all or those named."""
    der = _der(claim)
    rows = [f"- `{c.name}`: **{'holds' if c.holds else 'does not hold'}**. *Stated:* {_prose(c.stated)} "
            f"*Derived:* {_prose(c.derived)}" + (f" {_prose(c.detail)}" if c.detail else "")
            for c in _selected(der.comparisons, names, "comparison names", der.claim)]
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
    returns its :class:`verify.judgment.verdicts.ClaimResult`."""
    from verify.claims import Context, run_claim

    key = (claim.upper(), seed, quick)
    if key not in _RUNS:
        ctx = Context(seed=seed, quick=quick, out=_tmpdir(f"verify-{claim.lower()}-"))
        result = run_claim(claim, ctx)
        # run_claim's plot paths are relative to the run's folder
        _RUNS[key] = dataclasses.replace(result, plots={k: str(Path(ctx.out) / v) for k, v in result.plots.items()})
    return _RUNS[key]


_ROLE_TITLES = (("core", "Core", "the main assertion; the claim's verdict is its verdict"),
                ("detail", "Details", "a constant, normalisation or word; one that is off is a correction"),
                ("premise", "Premise", "whether the model the core rests on is true of real NW heads"),
                ("scope", "Scope", "probes outside the stated scope; a failure there is a limit"))


def show_reading(result: Any) -> None:
    """How the package reads the claim: its parts grouped by role (core, details, premise,
    scope), each with the statement it checks; the readings, where the claim has several."""
    rows = [f"### How the package reads {result.id}"]
    if result.readings:
        others = "the other" if len(result.readings) == 2 else "the others"
        rows += ["", (f"{len(result.readings)} natural readings, each with a core of its own; the claim takes the "
                      f"verdict of the one under which it fares best, and the headline names {others}:")]
        rows += [f"- reading **{r.id}**: {_prose(r.description)}" for r in result.readings]
    for role, title, meaning in _ROLE_TITLES:
        parts = [p for p in result.parts if p.role.value == role]
        if not parts:
            continue
        rows += ["", f"**{title}** ({meaning}):"]
        rows += [f"- *{_prose(p.id)}*" + (f" (reading {p.reading})" if p.reading else "") + f": {_prose(p.statement)}"
                 for p in parts]
    _markdown("\n".join(rows))


def _numeric_line(p: Any) -> str:
    """What the numbers showed, with the numbers (residuals at rounding level shown as a bound)."""
    if p.numeric is None:
        return "no numeric check (symbolic only)"
    return f"{AGREEMENT_WORDS.get(p.numeric.agreement, p.numeric.agreement)}: {_prose(p.numeric.summary)}"


def _run_note() -> str:
    """The line that says which seed and sizes the notebook's claim check ran with."""
    sizes = "quick sizes" if QUICK else "full sizes"
    return f"*Claim check run with seed {SEED} and {sizes}; `python -m verify` runs the full sizes.*"


def show_numeric(result: Any) -> None:
    """The numeric check, part by part: what the numbers showed and the part's effect on the
    record, and each counterexample. Residuals at floating-point rounding are not printed."""
    rows = [f"### Numeric check of {result.id}", ""]
    for p in result.parts:
        rows.append(f"- *{_prose(p.id)}* ({p.role.value}, {p.effect.value}): {_numeric_line(p)}")
        if p.counterexample is not None:
            rows.append(f"    - counterexample: {_prose(p.counterexample.description)}")
    rows += ["", _run_note()]
    _markdown("\n".join(rows))


def show_verdict(result: Any, *, parts: bool = True) -> None:
    """The verdict with its headline, corrections, premise findings, limits and readings, then
    (``parts=True``) every part with its role and effect; rounding residuals are not printed."""
    d = result.to_dict()
    rows = [f"### Verdict: **{d['verdict']}**", "", f"*{_prose(d['headline'])}*", "",
            ("Only the core parts set the verdict; details that are off are corrections, premise parts are "
             "premise findings, failures outside the stated scope are limits.")]
    if len(d["readings"]) > 1:
        rows += ["", "**Readings:**", *[f"- {r['id']} ({_prose(r['description'])}): *{r['verdict']}*"
                                       + (" (the claim's verdict)" if r["id"] == d["reading"] else "")
                                       for r in d["readings"]]]
    for title, key, fmt in (("Corrections", "corrections", lambda x: f"stated *{_prose(x['stated'])}*; derived: "
                                                                     f"{_prose(x['derived'])}"),
                            ("Premise", "premise", lambda x: f"{x['outcome']}: {_prose(x['finding'])} "
                                                             f"(regime: {_prose(x['regime'])})"),
                            ("Limits", "limits", lambda x: f"{_prose(x['finding'])} (holds under: "
                                                           f"{_prose(x['boundary'])})")):
        if d[key]:
            rows += ["", f"**{title}:**", *[f"- {fmt(x)}" for x in d[key]]]
    if d["restored_by"]:
        rows += ["", "**What restores a refuted core:**", *[f"- {_prose(x)}" for x in d["restored_by"]]]
    if parts:
        rows += ["", "**Parts:**"]
        for p in result.parts:
            rows.append(f"- **{_md(p.id)}** ({p.role.value}{', reading ' + p.reading if p.reading else ''}): "
                        f"*{p.effect.value}*. {_prose(p.statement)}")
            if p.symbolic is not None:
                rows.append(f"    - symbolic: {p.symbolic.status}, {p.symbolic.n_checked}/{p.symbolic.n_steps} steps")
            if p.numeric is not None:
                rows.append(f"    - numeric: {_numeric_line(p)}")
            if p.counterexample is not None:
                rows.append(f"    - counterexample: {_prose(p.counterexample.description)}")
        rows += ["", _run_note()]
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
    from verify.experiments.checkpoint import format_table

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
    from verify.outputs import plots

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
    from verify.experiments.checkpoint import plot_overlaps

    wanted = None if layers is None else set(layers)
    sub = {**result, "layers": [x for x in result["layers"] if wanted is None or x["layer"] in wanted]}
    for path in plot_overlaps(sub, _tmpdir("verify-overlap-")):
        _image(path)
