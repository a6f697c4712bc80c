"""The LaTeX export: the document, the snippets, the macros, the line breaker, hostile reports,
and the SymPy LaTeX round trip.

The document is generated from a small report.json (written by ``verify.outputs.report.write_json`` from
claim results whose verdicts the rule computes) and checked for every claim, verdict, formula
and label; texts go through the package's markup renderer, legacy text through the escaper.
A table of hostile reports checks that nothing is read outside the report's folder, nothing is
written outside ``-o`` and each is refused with exit 2 and one line; a hostile but valid report
is compiled with pdflatex (slow tier). The round trip parses each result's plain LaTeX back with
SymPy's own parser (antlr) and compares it with the result; what that parser cannot read is named
formula by formula in UNPARSEABLE.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import json
import os
import random
import re
import shutil
import struct
import subprocess
import sys
import time
import unicodedata
import warnings
import zlib
from pathlib import Path

import pytest
import sympy as sp
from sympy.core.function import AppliedUndef

from proofs import CLAIM_IDS, all_derivations, derivation, markup
from proofs.notation import MACROS, to_latex
from verify.cli import main as verify_cli
from verify.io import write_json
from verify.judgment.verdicts import (
    ClaimResult,
    Counterexample,
    Numeric,
    Part,
    Role,
    Symbolic,
)
from verify.outputs.latex import (
    LINE_UNITS,
    Formula,
    escape,
    formula_lines,
    formulas,
    render_document,
    run_checks,
    text,
)
from verify.outputs.document import Figure
from verify.outputs.render import to_html
from verify.outputs.report import document

# The packages the document may load: all five are in Debian's texlive-latex-base (amssymb via its
# dependency texlive-base), so a system with texlive-latex-base and -recommended compiles it.
ALLOWED_PACKAGES = {"geometry", "amsmath", "amssymb", "graphicx", "longtable"}
# Legacy text (not markup: another version's report) with every kind of character the escaper
# must handle (specials, Greek, super/subscripts, combining accents, math symbols, a control).
TRICKY = "ρ ≤ 1, α_h², √2 − 1 at 50% & #3 {x} ~ ^ \\ <a|b> f̂ bias̄ W⁻¹ x₁₂ ∈ ℝ → ∞ $5 café \x07"
# Marked-up text with every kind of span.
MARKED = r"the bandwidth $h = 1/\sqrt{d_k}$ of `c1_bandwidth`, at 50% & #3 (café – “quoted”)"
# TeX that a hostile report may carry in any text field: none of it may reach TeX as a command.
PAYLOADS = ["}\\input{/etc/passwd}\\iffalse", "\\write18{touch pwned}", "$\\input{x}$", "`\\input`",
            "^^5cinput{/etc/passwd}", "\\csname input\\endcsname{x}", "\\catcode`\\^=7 %", "x^" * 500,
            "$" + "x^{" * 500 + "1" + "}" * 500 + "$", "$\\left( x$", "a\x00b\x1b[31m"]
# Commands that read or write files or change TeX's reading: the document may use \input only for
# its macro file and \includegraphics only for validated plot names.
DANGEROUS = re.compile(r"\\(?:input|include|openin|openout|write|read|csname|catcode|immediate|special)"
                       r"(?![A-Za-z])|\^\^")
# TeX's own limit on grouping depth is 255; the document nests far less (formulas ~20).
MAX_TEX_DEPTH = 64
# The round trip compares at random rational points first, then proves equality symbolically.
RT_POINTS = 3
# Relative difference at 30 digits below which two values at a point count as equal.
RT_RTOL = sp.Float("1e-20")
# Formulas longer than this many characters of LaTeX are not parsed: antlr's Python parser
# needs minutes for them. They are listed in TOO_LONG so that the list cannot grow unnoticed.
MAX_PARSE_CHARS = 3000
TOO_LONG = {"C4:subspace_hdi_h2_d3dk2"}

# Each result whose plain LaTeX SymPy's parser cannot read back, with the construct that defeats it.
MULTI_LETTER = "multi-letter symbol name (read as a product of letters)"
UNPARSEABLE = {
    "C1:gaussian_softmax_score": MULTI_LETTER + ": qk, k_sq",
    "C1:counterexample": "Tuple",
    "C2:head_weight_dv2": MULTI_LETTER + ": WV_1, WO_1",
    "C2:mha_scalar_h2_n3": MULTI_LETTER + ": WV1_11, WO1_11, bV1_1",
    "C2:mha_vector_h2": "Matrix",
    "C2:offset_h2": MULTI_LETTER + ": WO1_11, bV1_1",
    "C3:ueda_nakano": MULTI_LETTER + ": bias_bar, var_bar, covar_bar",
    "C3:mse_matrix": "matrix expression (MatrixSymbol, transpose)",
    "C3:ensemble_bias_matrix": "matrix expression (MatrixSymbol, transpose, identity)",
    "C4:literal_scaled": MULTI_LETTER + ": hdi",
    "C4:literal_isotropic": MULTI_LETTER + ": mean_rho",
    "C4:literal_hdi_h2_d3dk2": MULTI_LETTER + ": Wa_11, Wb_11",
    "C5:mse_line": MULTI_LETTER + ": \\mathrm{HDI}",
    "C5:mse_wdi": MULTI_LETTER + ": WDI",
    "C5:cx_unequal_variance": "Tuple",
    "C5:cx_nonuniform_weights": "Tuple",
    "C6:hdi_bound": "Max (read as an undefined function max)",
    "C6:min_overlap_potential": "Max (read as an undefined function max)",
    "C6:min_mse": "Max (read as an undefined function max)",
    "C7:mse_a_frame": "the product d n (read as one symbol dn, a differential)",
    "C7:dk_opt_a_frame": "the product d n (read as one symbol dn, a differential)",
    "C7:H_opt_a_frame": "the product d n (read as one symbol dn, a differential)",
    "C7:mse_b_frame": "the product d n (read as one symbol dn, a differential)",
    "C7:stationarity_b_frame": "the product d n (read as one symbol dn, a differential)",
    "C7:dk_asym_b_frame": "the product d n (read as one symbol dn, a differential)",
    "C7:mse_gauss_a_frame": "the product d n (read as one symbol dn, a differential)",
    "C7:dk_opt_gauss_a_frame": "the product d n (read as one symbol dn, a differential)",
    "C7:H_opt_gauss_a_frame": "the product d n (read as one symbol dn, a differential)",
    "C8:W_uniform_poly_harmonic": "\\operatorname{harmonic} (generalised harmonic number)",
    "C8:W_inv_poly_harmonic": "\\operatorname{harmonic} (generalised harmonic number)",
    "C8:W_geom_poly_limit": "\\operatorname{Li} with a subscript (polylogarithm)",
    "C8:beta_star_geom_table": "Matrix",
    "C8:beta_star_fib_table": "Matrix",
}


# --- fixtures -------------------------------------------------------------------------------------


@pytest.fixture(scope="module", autouse=True)
def _no_fsync():
    """Exports write ~490 snippets, each fsync'ed (verify.io): seconds of disk flushes per export
    that nothing here depends on."""
    mp = pytest.MonkeyPatch()
    mp.setattr(os, "fsync", lambda fd: None)
    yield
    mp.undo()


def png(path: Path) -> Path:
    """A real 1x1 PNG (pdflatex reads it), written by hand: signature, IHDR, IDAT, IEND."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 0, 0, 0, 0))
                     + chunk(b"IDAT", zlib.compress(b"\x00\x80")) + chunk(b"IEND", b""))
    return path


def _results(texts: list[str] | None = None) -> list[ClaimResult]:
    """Claim results for C1..C6 covering every verdict and every non-core role; C7 is absent and C8
    'crashed'. ``texts`` (cycled) replace the free texts of the parts (a finding, one short phrase,
    takes those that are)."""
    texts = texts or [TRICKY, MARKED]
    t = functools.partial(next, itertools.cycle(texts))
    short = functools.partial(next, itertools.cycle([x for x in texts if len(x) <= 160 and ";" not in x]))
    out = []
    for k, claim in enumerate(["C1", "C2", "C3", "C4", "C5", "C6"]):
        der = derivation(claim)
        kind = k % 5
        if kind == 0:   # exact: proved, no model assumption, rounding
            part = Part("identity", Role.CORE, f"part of {claim}: {t()}", symbolic=Symbolic.from_derivation(der, uses=[]),
                        numeric=Numeric("rounding", t(), {"max_rel_error": 2.2e-16}))
        elif kind == 1:  # holds under model
            part = Part("model", Role.CORE, t(), symbolic=Symbolic.from_derivation(der),
                        numeric=Numeric("statistical", t(), {"z": 1.3, "table": [[1, 2], [3, 4]]}))
        elif kind == 2:  # refuted, with a replayable file
            part = Part("stated", Role.CORE, t(),
                        numeric=Numeric("measured", t(), {"nested": {"a_b": 0.5}}),
                        counterexample=Counterexample(t(), file="counterexamples/C_x_1.json"),
                        restored_by=t(), finding=f"finding of {claim}: {short()}")
        elif kind == 3:  # approximate
            part = Part("measured only", Role.CORE, t(), numeric=Numeric("measured", t(), {}))
        else:            # not checkable
            part = Part("nothing", Role.CORE, t())
        extra = [Part("word", Role.DETAIL, t(), stated=t(), derived=t(),
                      counterexample=Counterexample(t()), finding=short()),
                 Part("premise", Role.PREMISE, t(), regime=t(),
                      numeric=Numeric("measured", t(), {}), counterexample=Counterexample(t()),
                      finding=short()),
                 Part("beyond", Role.SCOPE, t(), regime=t(), numeric=Numeric("measured", t(), {}),
                      counterexample=Counterexample(t()), restored_by=t(), finding=short())]
        out.append(ClaimResult(id=claim, title=der.title, stated=der.stated, parts=[part, *extra],
                               summary=t()))
    return out


def _write_report(folder: Path, results: list[ClaimResult]) -> Path:
    png(folder / "plots" / "c3_demo.png")
    results[2] = dataclasses.replace(results[2], plots={"c3_demo": "plots/c3_demo.png"})
    report = folder / "report.json"
    write_json(report, document(results, seed=7, quick=True, crashed={"C8": "Traceback ...\nValueError: boom_1"}))
    return report


def _exported(base: Path, results: list[ClaimResult]) -> tuple[Path, Path]:
    """``latex --report`` of a report of ``results`` in ``base``: the report and the output folder."""
    all_derivations()
    report, out = _write_report(base / "report", results), base / "out"
    assert verify_cli(["latex", "-o", str(out), "--report", str(report)]) == 0
    return report, out


@pytest.fixture(scope="module")
def export(tmp_path_factory: pytest.TempPathFactory) -> dict:
    report, out = _exported(tmp_path_factory.mktemp("latex"), _results())
    return {"out": out, "report": json.loads(report.read_text()), "report_path": report,
            "tex": (out / "verification.tex").read_text(encoding="ascii"), "formulas": formulas()}


def code(name: str) -> str:
    """A name in typewriter type as the document sets it (breakable after each underscore)."""
    return "\\texttt{" + escape(name).replace(r"\_", r"\_\allowbreak{}") + "}"


def _sections(tex: str) -> dict[str, str]:
    """Claim -> its summary, its evidence and its derivation (the three subsections it heads)."""
    parts = re.split(r"\\subsection\{(C\d+):", tex)
    out: dict[str, str] = {}
    for k in range(1, len(parts), 2):
        out[parts[k]] = out.get(parts[k], "") + parts[k + 1]
    return out


# --- the document ---------------------------------------------------------------------------------


def test_document_has_every_claim_with_its_verdict(export: dict) -> None:
    sections = _sections(export["tex"])
    assert list(sections) == ["C1", "C2", "C3", "C4", "C5", "C6", "C8"]          # the report's, C8 crashed
    for claim in export["report"]["claims"]:
        body = sections[claim["id"]]
        assert body.startswith(f" {text(claim['title'])}}}")         # one title: the claim's
        assert f"\\textbf{{Verdict:}} {text(claim['verdict'])}: " in body
        assert text(" ".join(claim["headline"].split())) in body
        for part in claim["evidence"]["parts"]:
            assert f"{text(part['label'])}: {text(part['outcome'])}}}" in body
            assert text(" ".join(part["statement"].split())) in body
        for x in claim["corrections"]:
            assert text(" ".join(x["stated"].split())) in body and text(" ".join(x["derived"].split())) in body
        for x in claim["premise"]:
            assert text(" ".join(x["regime"].split())) in body
        for x in claim["limits"]:
            assert text(" ".join(x["finding"].split())) in body
    verdicts = {c["verdict"] for c in export["report"]["claims"]}
    assert verdicts == {"exact", "holds under model", "refuted", "approximate", "not checkable"}
    assert "crashed" in sections["C8"] and "boom" in sections["C8"]
    for claim in ("C1", "C2", "C3", "C4", "C5", "C6"):
        der = derivation(claim)
        body = sections[claim]
        for name in der.assumptions:
            assert f"\\texttt{{{escape(name)}}}" in body
        for k, step in enumerate(der.steps, 1):
            assert f"Step {k}, \\texttt{{{escape(step.name)}}}: {step.status} by \\texttt{{{escape(step.method)}}}" in body
        for c in der.comparisons:
            assert f"{'holds' if c.holds else 'does not hold'}: " in body


def test_texts_are_rendered_by_the_markup_and_legacy_text_is_escaped() -> None:
    # markup: prose, inline mathematics and code as markup.to_latex writes them (accents, dashes
    # and quotes in ASCII)
    assert text(MARKED) == (r"the bandwidth $h = 1/\sqrt{d_{k}}$ of \texttt{c1\_bandwidth}, at 50\% \& \#3 "
                            r"(caf\'{e} -- ``quoted'')")
    # not markup: every character shown literally, nothing left for TeX to interpret
    assert escape("a_b & 50% #1 {x} ~ ^ \\ $ <a|b>") == (
        r"a\_b \& 50\% \#1 \{x\} \textasciitilde{} \textasciicircum{} \textbackslash{} \$ "
        r"\textless{}a\textbar{}b\textgreater{}")
    assert escape("ρ ≤ 1, x₁² f̂ bias̄ −1") == (r"\ensuremath{\rho} \ensuremath{\le} 1, x\ensuremath{_{1}}"
                                             r"\ensuremath{^{2}} \^{f} bia\={s} \ensuremath{-}1")
    assert escape("a\x00b\x1b") == "a[U+0000]b[U+001B]"
    assert text(TRICKY) == escape(TRICKY)                 # TRICKY is not markup
    assert text("x^" * 500) == "x\\textasciicircum{}" * 500


def test_document_is_ascii_balanced_and_uses_allowed_packages(export: dict) -> None:
    tex = export["tex"]
    assert tex.isascii()
    assert tex.startswith("\\documentclass[11pt,a4paper]{article}")
    used = {p.strip() for group in re.findall(r"\\usepackage(?:\[[^]]*\])?\{([^}]*)\}", tex) for p in group.split(",")}
    assert used == ALLOWED_PACKAGES
    stack = []
    for kind, env in re.findall(r"\\(begin|end)\{([a-z*]+)\}", tex):
        if kind == "begin":
            stack.append(env)
        else:
            assert stack and stack.pop() == env
    assert not stack
    unescaped = re.sub(r"\\[{}$]", "", tex)
    assert unescaped.count("{") == unescaped.count("}")
    # claims are numbered subsections under unnumbered level-1 headings: numbered "5", not "0.5"
    assert "\\section{" not in tex and "\\renewcommand{\\thesubsection}{\\arabic{subsection}}" in tex
    for line in unescaped.splitlines():
        assert line.count("$") % 2 == 0, line[:200]


def test_plots_are_copied_and_included(export: dict) -> None:
    assert (export["out"] / "plots" / "C3_c3_demo.png").read_bytes() == (
        export["report_path"].parent / "plots" / "c3_demo.png").read_bytes()
    assert "\\includegraphics[width=0.72\\linewidth]{plots/C3_c3_demo.png}" in _sections(export["tex"])["C3"]
    assert export["tex"].count("plots/C3_c3_demo.png") == 1           # in C3's evidence (no deciding plot)


def test_every_formula_has_a_labelled_snippet(export: dict) -> None:
    fs = export["formulas"]
    names = [f.filename for f in fs]
    assert len(names) == len(set(names))
    snippets = export["out"] / "snippets"
    assert sorted(p.name for p in snippets.glob("*.tex")) == sorted(names)
    # every SymPy relation is a formula, except the constants True/False (a relation SymPy evaluated
    # when the step was built: nothing left to print)
    n_steps = sum(1 for d in all_derivations() for s in d.steps if isinstance(s.relation, (sp.Basic, sp.MatrixBase))
                  and not isinstance(s.relation, sp.logic.boolalg.BooleanAtom))
    assert sum(f.kind == "step" for f in fs) == n_steps
    for f in fs:
        text_ = (snippets / f.filename).read_text(encoding="ascii")
        body = [line for line in text_.splitlines() if not line.startswith("%")]
        assert body[0] == "\\begin{equation}" and body[-1] == "\\end{equation}"
        assert body[-2] == f"\\label{{eq:{f.claim}:{f.key}}}"
        assert text_.count("\\label{") == 1
        # in the document: the formulas of the report's claims, each once, labelled as its snippet
        assert export["tex"].count(f"\\label{{eq:{f.claim}:{f.key}}}") == (f.claim in ("C1", "C2", "C3", "C4",
                                                                                        "C5", "C6"))


# --- the line breaker ---------------------------------------------------------------------------------


def _joined(lines: list[str]) -> str:
    """The lines of a display without the alignment marks and indents the breaker adds."""
    marks = r"^&(\\quad \{\})?| &(?=[=<>]|\\neq|\\leq|\\geq)"
    return "".join("".join(re.sub(marks, " ", line) for line in lines).split())


def test_breaker_known_answers() -> None:
    xs = sp.symbols("x1:41")
    y = sp.Symbol("y")
    total = sp.Add(*xs)
    lines = formula_lines(sp.Eq(y, total, evaluate=False), macros=False)
    # a relation at its sign, the sum between its terms; the pieces are SymPy's printing, in order
    assert lines[0].startswith("y &= x_{1} + ")
    assert all(line.startswith("&\\quad {}+ x_{") for line in lines[1:])
    assert len(lines) >= 3
    assert _joined(lines) == "".join(sp.latex(sp.Eq(y, total, evaluate=False)).split())
    # a fraction with a long numerator: 1/den times the numerator in parentheses that may break
    frac = formula_lines(total / (y + 1), macros=False)
    assert frac[0].startswith(r"&\frac{1}{y + 1} \Bigl(x_{1} + ")
    assert frac[-1].endswith(r"\Bigr)")
    # a negative sum term keeps its sign
    neg = formula_lines(sp.Eq(y, total - sp.Symbol("z") * y, evaluate=False), macros=False)
    assert "- y z" in " ".join(neg)
    # a short formula is one line without '&'
    assert formula_lines(sp.Eq(y, xs[0] + 1), macros=False) == ["y = x_{1} + 1"]


@pytest.mark.slow  # pdflatex
def test_a_relation_continued_past_its_first_line_runs_nowhere_past_the_margin(tmp_path: Path) -> None:
    """Continued lines of a relation start at its sign, beside the left side: TeX's own measure of the
    typeset display finds no line past the margin."""
    from verify.outputs import latex

    a, xs = sp.symbols("a_{1:7}"), sp.symbols("x_{1:81}")
    f = Formula("X1", "wide", "step", sp.Eq(sp.Add(*a), sp.Add(*xs), evaluate=False))
    assert LINE_UNITS / 5 < latex._width(sp.latex(sp.Add(*a))) <= LINE_UNITS / 3   # beside it, and wide
    (tmp_path / "macros.tex").write_text(latex.macro_file())
    tex = tmp_path / "one.tex"
    tex.write_text("\n".join([latex._PREAMBLE, "\\begin{document}", latex._display(f), "\\end{document}", ""]))
    latex.compile_pdf(tex, runs=1)
    assert "Overfull" not in tex.with_suffix(".log").read_text(errors="replace")


def test_every_formula_is_typeset_and_its_lines_are_sympys_printing(export: dict) -> None:
    """Every formula is set in display mathematics (no placeholder), each line is balanced, and a
    formula split only at its relation and its terms reads back as SymPy's printing of it."""
    plain = 0
    for f in export["formulas"]:
        lines = f.lines()
        for line in lines:
            assert line.count("{") == line.count("}") and line.count(r"\left") == line.count(r"\right"), (f.label, line)
            assert re.sub(r"\\begin\{(\w*matrix)\}.*?\\end\{\1\}", "", line).count("&") <= 1, (f.label, line)
        whole = f.latex()
        rewritten = any(mark in "".join(lines) for mark in (r"\Bigl", r"\Bigr", r"\text{entry", r"\wedge"))
        if not rewritten and "".join(lines).count(r"\frac{1}{") == whole.count(r"\frac{1}{"):
            assert _joined(lines) == "".join(whole.split()), f.label
            plain += 1
    assert plain > 0.9 * len(export["formulas"])
    body = export["tex"].split("\\begin{document}")[1]
    assert "too wide" not in body and "characters of \\LaTeX" not in body


def test_formulas_are_printed_as_proofs_notation_prints_them(export: dict) -> None:
    """The export's memoising printer gives to_latex's spelling (every 12th formula, printing them
    all again takes 20 s, and C5's, whose Subs at different points SymPy counts as equal)."""
    for f in [f for k, f in enumerate(export["formulas"]) if k % 12 == 0 or f.claim == "C5"]:
        assert f.latex() == to_latex(f.expr, macros=True) and f.latex(macros=False) == to_latex(f.expr), f.label


def test_long_formulas_are_broken_not_shrunk(export: dict) -> None:
    """The formulas that once were a placeholder ("a formula of 756 characters of LaTeX, too wide to
    read here") are broken into lines, almost all within twice the line width, so the document's
    scaling (a last resort) leaves them readable."""
    from verify.outputs.latex import _width

    by_label = {f.label: f for f in export["formulas"]}
    for label in ("eq:C1:step_score_bilinear", "eq:C4:subspace_hdi_h2_d3dk2", "eq:C9:step_score_gradient_WQ"):
        assert len(by_label[label].lines()) >= 3, label
    widths = [_width(line) / LINE_UNITS for f in export["formulas"] for line in f.lines()]
    assert sum(w > 2 for w in widths) <= 0.01 * len(widths)


def test_macro_file_defines_the_notation_once(export: dict) -> None:
    text_ = (export["out"] / "macros.tex").read_text(encoding="ascii")
    defs = dict(re.findall(r"\\newcommand\{(\\[A-Za-z]+)\}\{(.*?)\}  %", text_))
    assert sorted(defs) == sorted(MACROS.values())
    assert text_.count("\\newcommand") == len(MACROS)
    assert "\\input{macros.tex}" in export["tex"]
    used = set()
    for k, f in enumerate(export["formulas"]):
        tex = f.latex(macros=True)
        used |= {m for m in MACROS.values() if re.search(re.escape(m) + r"(?![A-Za-z])", tex)}
        if k % 4 and f.claim != "C5":   # a quarter, and C5 (which uses every macro): printing is slow
            continue
        # substituting each macro by its definition gives the plain spelling printed by SymPy
        expanded = re.sub(r"\\[A-Za-z]+", lambda m: defs.get(m.group(), m.group()), tex)
        assert expanded == f.latex(macros=False), f.label
    assert used == set(MACROS.values())


# --- no ASCII mathematics, control characters or placeholders in the document -----------------------

GREEK_WORDS = ("alpha beta gamma delta epsilon zeta theta kappa lambda rho sigma tau phi varphi chi psi omega "
               "Sigma Delta Phi Gamma Lambda Omega").split()
#: What mathematics left in text mode looks like once LaTeX has escaped it (``\\_``,
#: ``\\textasciicircum``, ``\\textbar``) or not, and a character without a spelling.
ASCII_MATH = {
    "sqrt": r"sqrt",
    "caret": r"\\textasciicircum|\^",
    "underscore": r"_",
    "relation or operator sign": r"[=<>*+]|\\textless|\\textgreater",
    "bar": r"\||\\textbar",
    "function call": r"\b(?:exp|log|tr|max|min|softmax|mean|Var|Cov)\(",
    "Greek name": r"\b(?:" + "|".join(GREEK_WORDS) + r")\b",
    "math glued to text": "[A-Za-z0-9]\x01|\x01[A-Za-z0-9(]",
    "unknown character": r"\[U\+[0-9A-F]{4}\]",
}


def _group_end(tex: str, start: int) -> int:
    """The index after the brace group that opens at ``tex[start]``."""
    depth, i = 0, start
    while i < len(tex):
        if tex[i] == "\\":
            i += 2
            continue
        depth += {"{": 1, "}": -1}.get(tex[i], 0)
        if depth == 0:
            return i + 1
        i += 1
    return len(tex)


def text_mode(tex: str) -> str:
    """The text-mode parts of a document's body: without $...$, display environments,
    \\texttt{...}, labels, references and file names; each inline formula is one character U+0001."""
    body = tex.split("\\begin{document}", 1)[-1]
    body = re.sub(r"\\begin\{(equation|align|gather|multline)(\*?)\}.*?\\end\{\1\2\}", " ", body, flags=re.S)
    body = re.sub(r"\\ensuremath\{[^{}]*(?:\{[^{}]*\})?\}", "\x01", body)
    out, i = [], 0
    while i < len(body):
        if body.startswith("\\$", i):
            out.append("\\$")
            i += 2
            continue
        if body[i] == "$":
            j = i + 1
            while j < len(body) and not (body[j] == "$" and body[j - 1] != "\\"):
                j += 1
            out.append("\x01")   # a formula: what touches it is checked
            i = j + 1
            continue
        # names of parts and rows of figures are the claims' names, not texts of the markup
        m = re.match(r"\\(texttt|partlabel|label|ref|eqref|includegraphics|input|begin|end)(\[[^\]]*\])?(?=\{)",
                     body[i:])
        if m:
            out.append(" ")
            i = _group_end(body, i + m.end())
            continue
        out.append(body[i])
        i += 1
    return re.sub(r"\\(?!textasciicircum|textbar|textless|textgreater)[A-Za-z]+\*?|\\[\\,;!]", " ", "".join(out))


def ascii_math(tex: str) -> list[tuple[str, str]]:
    """(kind, context) of every piece of ASCII mathematics in the text-mode parts of ``tex``."""
    text_ = text_mode(tex)
    return [(name, text_[max(0, m.start() - 40): m.end() + 30]) for name, pattern in ASCII_MATH.items()
            for m in re.finditer(pattern, text_)]


# (the mathematics typed as ASCII, the same marked up)
ISSUE_EXAMPLES = [("bandwidth 1/sqrt(d_k)", r"bandwidth $1/\sqrt{d_k}$"), ("is d_k^(1/4)", r"is $d_k^{1/4}$"),
                  ("norm |k_i| = r", r"norm $\lVert k_i \rVert = r$"), ("overlap rho_hh'", r"overlap $\rho_{hh'}$"),
                  ("bias Σ α_h b_h + (Σα − 1) f", r"bias $\sum_h \alpha_h b_h + (\sum_h \alpha_h - 1) f$"),
                  ("when W_hᵀW_h = sqrt(d_k) I", r"when $W_h^\top W_h = \sqrt{d_k} I$"),
                  ("MSE = B² + V − V(H−1)/H · HDI", r"$\mathrm{MSE} = B^2 + V - V (H - 1)/H \cdot \mathrm{HDI}$"),
                  ("rate n^(−min γ)", r"rate $n^{-\min \gamma}$"), ("for H·d_k ≤ d", r"for $H d_k \le d$")]


@pytest.mark.parametrize("typed, marked", ISSUE_EXAMPLES)
def test_scanner_finds_ascii_math_and_markup_typesets_it(typed: str, marked: str) -> None:
    """The scan is not vacuous: mathematics typed in ASCII (a legacy text, escaped) is caught, the
    same mathematics marked up is typeset and not caught."""
    assert ascii_math("\\begin{document}" + text(typed)), typed
    assert not ascii_math("\\begin{document}" + text(marked)), (marked, text(marked))


def _all_markup(result: dict) -> bool:
    """Whether every text field of a claim's result is markup (a claim not yet converted has
    legacy texts, which the document escapes instead of typesetting)."""
    from tests.test_rendering import _texts

    try:
        for where, t in _texts(result):
            markup.check(t, where)
    except markup.MarkupError:
        return False
    return True


@pytest.fixture(scope="module")
def quick_document(quick_run, export: dict) -> tuple[dict, str]:
    """The document of every claim's quick run (seed 0): the package's own texts."""
    report = document([quick_run(c)[0] for c in CLAIM_IDS], seed=0, quick=True)
    return report, render_document(report, formulas_=export["formulas"])


def test_quick_document_has_no_ascii_math_controls_or_placeholders(quick_document: tuple[dict, str]) -> None:
    report, tex = quick_document
    assert tex.isascii()
    assert not [c for c in tex if unicodedata.category(c) == "Cc" and c not in "\n"]
    assert "[U+" not in tex                       # every character has a spelling
    body = tex.split("\\begin{document}")[1]
    assert not any(p in body for p in ("too wide to read", "characters of \\LaTeX", "formula of "))
    sections = _sections(tex)
    converted = [c["id"] for c in report["claims"] if _all_markup(c)]
    assert len(converted) >= 8
    hits = {cid: ascii_math("\\begin{document}" + sections[cid].split("\\subsection*{Assumptions of the derivation}")[0])
            for cid in converted}
    hits = {k: v for k, v in hits.items() if v}
    assert not hits, f"ASCII mathematics in text mode: { {k: v[:5] for k, v in hits.items()} }"


# --- hostile reports --------------------------------------------------------------------------------


def _tree(root: Path) -> dict[str, bytes | None]:
    """Every path under ``root`` with its bytes (None for folders and links)."""
    out = {}
    for p in sorted(root.rglob("*")):
        out[str(p.relative_to(root))] = p.read_bytes() if p.is_file() and not p.is_symlink() else None
    return out


def _hostile(folder: Path, case: str) -> None:
    """Turn the valid report in ``folder`` into the hostile one of ``case``."""
    report = folder / "report.json"
    doc = json.loads(report.read_text())
    c3 = next(c for c in doc["claims"] if c["id"] == "C3")
    secret = folder.parent / "secret.png"
    kind, _, value = case.partition(":")
    if kind == "plot path":
        c3["evidence"]["plots"] = {"c3_demo": value.replace("SECRET", str(secret))}
    elif kind == "plot name":
        c3["evidence"]["plots"] = {value: "plots/c3_demo.png"}
    elif kind == "claim id":
        c3["id"] = value
    elif kind == "crashed":
        doc["crashed"] = {value: "boom"}
    elif case == "symlink out":
        (folder / "plots" / "link.png").symlink_to(secret)
        c3["evidence"]["plots"] = {"c3_demo": "plots/link.png"}
    elif case == "symlinked folder out":
        (folder / "elsewhere").symlink_to(folder.parent, target_is_directory=True)
        c3["evidence"]["plots"] = {"c3_demo": "elsewhere/secret.png"}
    elif case == "not a png":
        (folder / "plots" / "fake.png").write_text("\\input{/etc/passwd}")
        c3["evidence"]["plots"] = {"c3_demo": "plots/fake.png"}
    elif case == "duplicate claim":
        doc["claims"].append(dict(c3))
    else:  # pragma: no cover - a case the table names but this function does not build
        raise AssertionError(case)
    report.write_text(json.dumps(doc))


HOSTILE = ["plot path:SECRET", "plot path:../secret.png", "plot path:plots/../../secret.png",
           "plot path:plots/missing.png", "plot path:", "plot path:C:\\secret.png", "symlink out",
           "symlinked folder out", "not a png", "plot path:plots", "plot name:a/../../../../escaped-plot",
           "plot name:x.png}\\input{FILE}%", "plot name:with space", "plot name:dot.name", "plot name:",
           "plot name:" + "n" * 65, "claim id:C1/../../escaped-id", "claim id:c3", "claim id:C99",
           "crashed:C1/../../x", "duplicate claim"]


@pytest.fixture(scope="module")
def valid_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    all_derivations()
    return _write_report(tmp_path_factory.mktemp("valid") / "report", _results([MARKED]))


@pytest.fixture()
def opened() -> list[str]:
    """The paths this process opens while the test runs (an audit hook, on for the test only)."""
    seen: list[str] = []
    _AUDIT.append(seen)
    yield seen
    _AUDIT.remove(seen)


_AUDIT: list[list[str]] = []


def _audit(event: str, args: tuple) -> None:
    if _AUDIT and event == "open" and isinstance(args[0], (str, bytes, os.PathLike)):
        _AUDIT[-1].append(os.fsdecode(args[0]))


sys.addaudithook(_audit)


@pytest.mark.parametrize("case", HOSTILE)
def test_hostile_report_is_refused_reading_and_writing_nothing_outside(case: str, valid_report: Path,
                                                                       tmp_path: Path, opened: list[str],
                                                                       capsys: pytest.CaptureFixture) -> None:
    folder = tmp_path / "report"
    shutil.copytree(valid_report.parent, folder)
    png(tmp_path / "secret.png")
    _hostile(folder, case)
    before = _tree(tmp_path)
    out = tmp_path / "out"
    start = len(opened)
    rc = verify_cli(["latex", "-o", str(out), "--report", str(folder / "report.json")])
    during = opened[start:]
    err = capsys.readouterr().err
    assert rc == 2, (case, err)
    assert err.startswith("error: --report FILE") and err.count("\n") == 1, err
    assert _tree(tmp_path) == before                                 # nothing written, not even -o
    assert not any(Path(p).name == "secret.png" for p in during), during   # nothing read outside


@pytest.mark.parametrize("path,shown", [("plots/ok.png", True), ("../secret.png", False), ("plots/out.png", False),
                                        ("plots/text.png", False), ("plots/none.png", False)],
                         ids=["png-inside", "path-outside", "link-outside", "not-png", "missing"])
def test_the_html_page_embeds_a_plot_by_the_exports_rule(tmp_path: Path, path: str, shown: bool) -> None:
    """report.html reads a plot by the rule the export refuses others by: a PNG inside the report's
    folder is embedded; anything else reads "not found" and nothing outside is embedded."""
    folder = tmp_path / "report"
    (folder / "plots").mkdir(parents=True)
    png(folder / "plots" / "ok.png")
    png(tmp_path / "secret.png")
    (folder / "plots" / "out.png").symlink_to(tmp_path / "secret.png")
    (folder / "plots" / "text.png").write_text("not a PNG")
    page = to_html([Figure(path, "")], folder=folder)
    assert ("data:image/png;base64," in page) is shown and ("not found)" in page) is not shown


def test_valid_report_reads_only_its_folder_and_writes_only_under_out(valid_report: Path, tmp_path: Path,
                                                                      opened: list[str]) -> None:
    folder = tmp_path / "report"
    shutil.copytree(valid_report.parent, folder)
    (folder / "plots" / "alias.png").symlink_to(folder / "plots" / "c3_demo.png")   # a link inside: fine
    doc = json.loads((folder / "report.json").read_text())
    next(c for c in doc["claims"] if c["id"] == "C3")["evidence"]["plots"]["alias"] = "./plots/alias.png"
    (folder / "report.json").write_text(json.dumps(doc))
    before = _tree(folder)
    out = tmp_path / "out"
    start = len(opened)
    assert verify_cli(["latex", "-o", str(out), "--report", str(folder / "report.json")]) == 0
    during = opened[start:]
    assert _tree(folder) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out", "report"]
    assert sorted(p.name for p in (out / "plots").iterdir()) == ["C3_alias.png", "C3_c3_demo.png"]
    under_tmp = [p for p in during if Path(p).is_relative_to(tmp_path)]
    assert under_tmp and all(Path(p).is_relative_to(folder) or Path(p).is_relative_to(out) for p in under_tmp)


def test_output_links_out_of_o_are_refused(valid_report: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (tmp_path / "elsewhere").mkdir()
    (out / "plots").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    assert verify_cli(["latex", "-o", str(out), "--report", str(valid_report)]) == 2
    assert "-o DIR" in capsys.readouterr().err
    assert not any((tmp_path / "elsewhere").iterdir())


def test_a_path_whose_folder_links_out_of_o_is_refused(tmp_path: Path) -> None:
    """The export's path guard resolves every link on the way, not only the last component: a
    file under a linked folder that leads out of -o is refused, one that stays inside is kept."""
    from verify.errors import VerifyError
    from verify.outputs.latex import _inside

    out = tmp_path / "out"
    (out / "real").mkdir(parents=True)
    (tmp_path / "elsewhere").mkdir()
    (out / "away").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    (out / "within").symlink_to(out / "real", target_is_directory=True)
    with pytest.raises(VerifyError, match="-o DIR"):
        _inside(out, out / "away" / "x.tex")
    assert _inside(out, out / "within" / "x.tex") == out / "within" / "x.tex"
    assert _inside(out, out / "real" / "x.tex") == out / "real" / "x.tex"


def _tex_depth(tex: str) -> int:
    depth = most = 0
    for ch in re.sub(r"\\.", "", tex):
        depth += {"{": 1, "}": -1}.get(ch, 0)
        most = max(most, depth)
    return most


@pytest.fixture(scope="module")
def hostile_export(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The export of a report that passes every check but carries TeX payloads in every text field."""
    return _exported(tmp_path_factory.mktemp("hostile"), _results(PAYLOADS + [TRICKY, MARKED]))[1]


def test_tex_holds_no_unvalidated_name_or_command(hostile_export: Path) -> None:
    tex = (hostile_export / "verification.tex").read_text(encoding="ascii")
    found = {m.group(0) for m in DANGEROUS.finditer(tex)}
    assert found == {"\\input"} and tex.count("\\input") == 1 and "\\input{macros.tex}" in tex
    graphics = re.findall(r"\\includegraphics(?:\[[^\]]*\])?\{([^}]*)\}", tex)
    assert graphics == ["plots/C3_c3_demo.png"]
    assert _tex_depth(tex) <= MAX_TEX_DEPTH
    assert not [c for c in tex if ord(c) < 32 and c != "\n"]


@pytest.mark.slow
def test_hostile_but_valid_report_compiles_reading_nothing_outside(hostile_export: Path) -> None:
    """pdflatex (installed by .ci/run; without it this fails, never skips) compiles the document of
    a report with TeX payloads in every text field, and its recorder lists no file read or
    written outside -o and TeX's own installation."""
    exe = shutil.which("pdflatex")
    assert exe, "pdflatex is needed for the compile test (apt-get install texlive-latex-base)"
    t0 = time.perf_counter()
    proc = subprocess.run([exe, "-interaction=nonstopmode", "-halt-on-error", "-no-shell-escape", "-recorder",
                           "verification.tex"], cwd=hostile_export, capture_output=True, text=True,
                          errors="replace", timeout=300, check=False)
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert (hostile_export / "verification.pdf").stat().st_size > 10_000
    fls = (hostile_export / "verification.fls").read_text(errors="replace").splitlines()
    files = [line.split(" ", 1)[1] for line in fls if line.startswith(("INPUT ", "OUTPUT "))]
    texmf = subprocess.run(["kpsewhich", "-var-value=SELFAUTOPARENT"], capture_output=True, text=True,
                           check=False).stdout.strip()
    roots = [hostile_export.resolve(), Path("/usr/share"), Path("/var/lib/texmf"), Path("/etc/texmf")]
    roots += [Path(texmf)] if texmf else []
    outside = [f for f in files if not any(Path(hostile_export, f).resolve().is_relative_to(r) for r in roots)]
    assert not outside, outside
    assert "passwd" not in " ".join(files)
    assert time.perf_counter() - t0 < 300


# --- command line ---------------------------------------------------------------------------------


def test_help_has_an_example(capsys: pytest.CaptureFixture) -> None:
    assert verify_cli(["latex", "--help"]) == 0
    out = capsys.readouterr().out
    assert "--report" in out and "examples:" in out and "python -m verify latex --report" in out


@pytest.mark.parametrize("argv", [["--report", "R", "--quick"], ["--report", "R", "--large"],
                                  ["--report", "R", "--seed", "1"], ["--quick", "--large"], ["--jobs", "2"],
                                  ["--seed", "-1"]])
def test_contradictory_or_unknown_options_exit_2(argv: list[str], export: dict, tmp_path: Path,
                                                 capsys: pytest.CaptureFixture) -> None:
    argv = [str(export["report_path"]) if a == "R" else a for a in argv]
    assert verify_cli(["latex", "-o", str(tmp_path / "o"), *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1
    assert not (tmp_path / "o").exists()


def test_pdf_without_pdflatex_exits_2(export: dict, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                      capsys: pytest.CaptureFixture) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no pdflatex here
    rc = verify_cli(["latex", "-o", str(tmp_path / "out"), "--report", str(export["report_path"]), "--pdf"])
    assert rc == 2
    assert "pdflatex" in capsys.readouterr().err
    assert (tmp_path / "out" / "verification.tex").is_file()


def test_running_the_checks_gives_their_verdicts(export: dict) -> None:
    from verify.claims import Context, run_claim

    report = run_checks(claims=["C2"], quick=True, seed=3)
    assert not report["crashed"]
    tex = render_document(report, formulas_=export["formulas"])
    expected = run_claim("C2", Context(seed=3, quick=True)).verdict.value
    assert f"\\textbf{{Verdict:}} {text(expected)}: " in _sections(tex)["C2"]
    assert list(_sections(tex)) == ["C2"]


# --- the round trip through SymPy's LaTeX parser ----------------------------------------------------
# (slow tier: antlr's Python parser needs about a minute for the results)


@functools.lru_cache(maxsize=None)  # symbols recur across formulas; antlr's Python parser is slow
def _parse(tex: str):
    from sympy.parsing.latex import parse_latex

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the antlr runtime warns about its version
        return parse_latex(tex)


def _value(sym: sp.Symbol, rng: random.Random) -> sp.Rational:
    if sym.is_integer:
        return sp.Integer(rng.randint(5, 9))   # above every small-d condition (d > 4) of the results
    v = sp.Rational(rng.randint(1, 97), rng.randint(1, 89))
    return v if sym.is_positive or sym.is_nonnegative or rng.random() < 0.5 else -v


def _agree_at_points(a, b, syms, rng: random.Random) -> bool:
    for _ in range(RT_POINTS):
        sub = {s: _value(s, rng) for s in syms}
        x, y = sp.N(a.xreplace(sub).doit(), 30), sp.N(b.xreplace(sub).doit(), 30)
        if not (x.is_number and y.is_number):
            return False
        if x.is_finite and y.is_finite and abs(x - y) > RT_RTOL * (1 + abs(y)):
            return False
    return True


def round_trip(f: Formula) -> str:
    """"ok", or why the plain LaTeX of ``f`` does not parse back to ``f.expr``.

    Two readings of the parser are undone: a symbol followed by a parenthesis is read as a call
    (``s \\left(x\\right)`` -> ``s(x)``, SymPy prints products so); and a call raised to a power
    other than -1 stands for ``s x^p`` (the printer writes ``s \\left(x\\right)^{p}``; -1 comes from
    a fraction). ``e`` is Euler's number unless the formula has a symbol e.
    """
    expr = f.expr
    try:
        parsed = _parse(f.latex(macros=False))
    except Exception as exc:  # the parser's own error type
        return f"parse error: {type(exc).__name__}"
    names = {}
    for s in expr.atoms(sp.Symbol):
        p = _parse(to_latex(s))
        if not isinstance(p, sp.Symbol):
            return f"symbol {s} reads as {p}"
        names[p] = s
    names.setdefault(sp.Symbol("e"), sp.E)

    def call(t) -> bool:
        return isinstance(t, AppliedUndef) and len(t.args) == 1 and sp.Symbol(t.func.__name__) in names

    got = parsed.replace(lambda t: t.is_Pow and call(t.base) and t.exp != -1,
                         lambda t: sp.Symbol(t.base.func.__name__) * t.base.args[0] ** t.exp)
    got = got.replace(call, lambda t: sp.Symbol(t.func.__name__) * t.args[0]).xreplace(names)
    try:
        if got == expr or sp.expand(got - expr) == 0:
            return "ok"
        if not _agree_at_points(got, expr, expr.free_symbols, random.Random(f.label)):
            return f"differs: {got}"
        return "ok" if sp.simplify(got - expr) == 0 else f"equal at points but not proved: {got}"
    except (TypeError, ValueError, NotImplementedError) as exc:   # matrix expressions and the like
        return f"not comparable: {type(exc).__name__}: {exc}"


@pytest.fixture(scope="module")
def round_trips(export: dict) -> dict[str, str]:
    import antlr4  # the parser's runtime (test extra): when it is missing the test fails, it never skips

    assert antlr4.__name__ == "antlr4"

    out = {}
    for f in export["formulas"]:
        if f.kind != "result":
            continue
        key = f"{f.claim}:{f.name}"
        out[key] = "too long" if len(f.latex(macros=False)) > MAX_PARSE_CHARS else round_trip(f)
    return out


@pytest.mark.slow
def test_parseable_results_round_trip(round_trips: dict[str, str]) -> None:
    wrong = {k: v for k, v in round_trips.items() if v != "ok" and k not in UNPARSEABLE and k not in TOO_LONG}
    assert not wrong, f"results that do not parse back to themselves (fix, or name the construct): {wrong}"
    assert sum(v == "ok" for v in round_trips.values()) >= 60


@pytest.mark.slow
def test_unparseable_list_is_exact(round_trips: dict[str, str]) -> None:
    assert {k for k, v in round_trips.items() if v == "too long"} == TOO_LONG
    now_ok = sorted(k for k in UNPARSEABLE if round_trips.get(k) == "ok")
    assert not now_ok, f"listed as unparseable but round-trips now (remove from UNPARSEABLE): {now_ok}"
    assert set(UNPARSEABLE) <= set(round_trips), sorted(set(UNPARSEABLE) - set(round_trips))
