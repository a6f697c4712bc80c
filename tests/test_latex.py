"""The LaTeX export: the document, the snippets, the macros, and the SymPy LaTeX round trip.

The document is generated from a small report.json (written by ``verify.outputs.report.write_json`` from
claim results whose verdicts the rule computes) and checked for every claim, verdict, formula
and label. Compiling with pdflatex is CI's job (``.ci/run``), not pytest's. The round trip parses
each result's plain LaTeX back with SymPy's own parser (antlr) and compares it with the result;
what that parser cannot read is named formula by formula in UNPARSEABLE.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import random
import re
import warnings
from pathlib import Path

import pytest
import sympy as sp
from sympy.core.function import AppliedUndef

from proofs import CLAIM_IDS, all_derivations, derivation
from proofs.notation import MACROS, to_latex
from verify.cli import main as verify_main
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
    Formula,
    cli_latex,
    escape,
    formulas,
    render_document,
    run_checks,
)
from verify.outputs.report import document
from verify.outputs.texify import texify

# The packages the document may load: all five are in Debian's texlive-latex-base (amssymb via its
# dependency texlive-base), so a system with texlive-latex-base and -recommended compiles it.
ALLOWED_PACKAGES = {"geometry", "amsmath", "amssymb", "graphicx", "longtable"}
# Text with every kind of character the escaper must handle (specials, Greek, super/subscripts,
# combining accents, math symbols).
TRICKY = "ρ ≤ 1, α_h², √2 − 1 at 50% & #3 {x} ~ ^ \\ <a|b> f̂ bias̄ W⁻¹ x₁₂ ∈ ℝ → ∞ $5"
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


def _results() -> list[ClaimResult]:
    """Claim results for C1..C6 covering every verdict and every non-core role; C7 is absent and C8
    'crashed'."""
    out = []
    for k, claim in enumerate(["C1", "C2", "C3", "C4", "C5", "C6"]):
        der = derivation(claim)
        kind = k % 5
        if kind == 0:   # exact: proved, no model assumption, rounding
            part = Part("identity", Role.CORE, f"part of {claim}: {TRICKY}", symbolic=Symbolic.from_derivation(der, uses=[]),
                        numeric=Numeric("rounding", f"max error 2.2e-16 {TRICKY}", {"max_rel_error": 2.2e-16}))
        elif kind == 1:  # holds under model
            part = Part("model", Role.CORE, "under the model", symbolic=Symbolic.from_derivation(der),
                        numeric=Numeric("statistical", "within 2 SE", {"z": 1.3, "table": [[1, 2], [3, 4]]}))
        elif kind == 2:  # refuted, with a replayable file
            part = Part("stated", Role.CORE, "as stated",
                        numeric=Numeric("measured", "off by 0.4", {"nested": {"a_b": 0.5}}),
                        counterexample=Counterexample("H = 2, α = (1, 1)", file="counterexamples/C_x_1.json"),
                        restored_by="Σα = 1 " + TRICKY, finding=f"finding of {claim}: {TRICKY}")
        elif kind == 3:  # approximate
            part = Part("measured only", Role.CORE, "a measurement", numeric=Numeric("measured", "effect 0.12 ± 0.01", {}))
        else:            # not checkable
            part = Part("nothing", Role.CORE, "no evidence at all")
        extra = [Part("word", Role.DETAIL, "a word", stated=f"stated {TRICKY}", derived=f"derived {TRICKY}",
                      counterexample=Counterexample("off"), finding="the word is off"),
                 Part("premise", Role.PREMISE, "the premise", regime=f"n = 64 {TRICKY}",
                      numeric=Numeric("measured", "corr 0.3", {}), counterexample=Counterexample("shared"),
                      finding="shared noise"),
                 Part("beyond", Role.SCOPE, "outside", regime="H d_k > d", numeric=Numeric("measured", "x", {}),
                      counterexample=Counterexample("frame"), restored_by="H d_k <= d", finding="a fusion frame")]
        out.append(ClaimResult(id=claim, title=der.title, stated=der.stated, parts=[part, *extra],
                               summary=f"figures of {claim}: {TRICKY}"))
    return out


@pytest.fixture(scope="module")
def export(tmp_path_factory: pytest.TempPathFactory) -> dict:
    all_derivations()
    base = tmp_path_factory.mktemp("latex")
    results = _results()
    plot = base / "report" / "plots" / "c3_demo.png"
    plot.parent.mkdir(parents=True)
    plot.write_bytes(b"\x89PNG\r\n\x1a\n")  # only copied, never opened by pytest
    results[2] = dataclasses.replace(results[2], plots={"c3_demo": "plots/c3_demo.png"})
    report = base / "report" / "report.json"
    write_json(report, document(results, seed=7, quick=True, crashed={"C8": "Traceback ...\nValueError: boom_1"}))
    out = base / "out"
    assert cli_latex(["-o", str(out), "--report", str(report)]) == 0
    return {"out": out, "report": json.loads(report.read_text()), "report_path": report,
            "tex": (out / "verification.tex").read_text(encoding="ascii"), "formulas": formulas()}


def _sections(tex: str) -> dict[str, str]:
    parts = re.split(r"\\section\{(C\d):", tex)
    return {parts[k]: parts[k + 1] for k in range(1, len(parts), 2)}


# --- the document ---------------------------------------------------------------------------------


def test_document_has_every_claim_with_its_verdict(export: dict) -> None:
    sections = _sections(export["tex"])
    assert list(sections) == list(CLAIM_IDS)
    for claim in export["report"]["claims"]:
        body = sections[claim["id"]]
        assert f"\\verdict{{{escape(claim['verdict'])}}}" in body
        assert texify(claim["headline"]) in body
        for part in claim["evidence"]["parts"]:
            assert f"\\verdict{{{escape(part['effect'])}}}" in body
        for x in claim["corrections"]:
            assert texify(x["stated"]) in body and texify(x["derived"]) in body
        for x in claim["premise"]:
            assert texify(x["regime"]) in body
        for x in claim["limits"]:
            assert texify(x["finding"]) in body
    verdicts = {c["verdict"] for c in export["report"]["claims"]}
    assert verdicts == {"exact", "holds under model", "refuted", "approximate", "not checkable"}
    assert "crashed" in sections["C8"] and "boom" in sections["C8"]
    assert "no entry for this claim" in sections["C7"]
    for claim in CLAIM_IDS:
        der = derivation(claim)
        body = sections[claim]
        assert texify(der.stated) in body
        for name in der.assumptions:
            assert f"\\texttt{{{escape(name)}}}" in body
        for step in der.steps:
            assert (f"\\texttt{{{escape(step.name)}}} --- checked by \\texttt{{{escape(step.method)}}}: "
                    f"\\textbf{{{step.status}}}") in body
        for c in der.comparisons:
            assert f"\\texttt{{{escape(c.name)}}}: \\textbf{{{'holds' if c.holds else 'does not hold'}}}" in body


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
    for line in unescaped.splitlines():
        assert line.count("$") % 2 == 0, line[:200]


def test_plots_are_copied_and_included(export: dict) -> None:
    assert (export["out"] / "plots" / "C3_c3_demo.png").is_file()
    assert "\\includegraphics[width=0.72\\linewidth]{plots/C3_c3_demo.png}" in _sections(export["tex"])["C3"]


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
        text = (snippets / f.filename).read_text(encoding="ascii")
        body = [line for line in text.splitlines() if not line.startswith("%")]
        assert body[0] == "\\begin{equation}" and body[-1] == "\\end{equation}"
        assert body[-2] == f"\\label{{eq:{f.claim}:{f.key}}}"
        assert text.count("\\label{") == 1
        assert f"\\label{{eq:{f.claim}:{f.key}}}" in export["tex"]


def _unsplit(lines: list[str]) -> str:
    out = []
    for line in lines:
        line = re.sub(r"^&(\\quad \{\})?", "", line)
        out.append(re.sub(r" &(?==|\\leq|\\geq|\\neq|<|>)", " ", line))
    return "".join("".join(out).split())


def test_split_lines_are_sympys_printing(export: dict) -> None:
    for f in export["formulas"]:
        assert _unsplit(f.lines()) == "".join(f.latex(macros=True).split()), f.label


def test_macro_file_defines_the_notation_once(export: dict) -> None:
    text = (export["out"] / "macros.tex").read_text(encoding="ascii")
    defs = dict(re.findall(r"\\newcommand\{(\\[A-Za-z]+)\}\{(.*?)\}  %", text))
    assert sorted(defs) == sorted(MACROS.values())
    assert text.count("\\newcommand") == len(MACROS)
    assert "\\input{macros.tex}" in export["tex"]
    used = set()
    for f in export["formulas"]:
        tex = f.latex(macros=True)
        used |= {m for m in MACROS.values() if re.search(re.escape(m) + r"(?![A-Za-z])", tex)}
        # substituting each macro by its definition gives the plain spelling printed by SymPy
        expanded = re.sub(r"\\[A-Za-z]+", lambda m: defs.get(m.group(), m.group()), tex)
        assert expanded == f.latex(macros=False), f.label
    assert used == set(MACROS.values())


def test_escape_known_answers() -> None:
    assert escape("a_b & 50% #1") == r"a\_\allowbreak{}b \& 50\% \#1"
    assert escape("ρ ≤ 1") == r"$\rho$ $\le$ 1"
    assert escape("V_h² W⁻¹ x₁₂") == r"V\_\allowbreak{}h$^{2}$ W$^{-1}$ x$_{12}$"
    assert escape("f̂ bias̄") == r"\^{f} bia\={s}"
    assert escape("{x} ~ ^ \\ $") == r"\{x\} \~{} \^{} $\backslash$ \$"
    assert escape("a->b <=> c") == r"a$\to$b $\Leftrightarrow$ c"


def test_escape_covers_every_character_of_the_texts(export: dict) -> None:
    texts = [TRICKY, json.dumps(export["report"], ensure_ascii=False)]
    for der in all_derivations():
        texts += [der.title, der.stated, *(a.statement for a in der.assumptions.values())]
        for s in der.steps:
            texts += [s.why, s.detail] + ([s.relation] if isinstance(s.relation, str) else [])
        texts += [r.description for r in der.results.values()]
        texts += [x for c in der.comparisons for x in (c.stated, c.derived, c.detail, c.method)]
    unmapped = {code for t in texts for f in (escape, texify) for code in re.findall(r"\\texttt\{(U\+[0-9A-F]+)\}", f(t))}
    assert not unmapped, f"characters without a LaTeX spelling in verify.outputs.latex.TEXT_MAP: {sorted(unmapped)}"
    assert all(escape(t).isascii() and texify(t).isascii() for t in texts)


# --- no ASCII mathematics in the document's prose -------------------------------------------------

GREEK_WORDS = ("alpha beta gamma delta epsilon zeta theta kappa lambda rho sigma tau phi varphi chi psi omega "
               "Sigma Delta Phi Gamma Lambda Omega").split()
#: What mathematics left in text mode looks like once LaTeX has escaped it (``\\_``, ``\\^{}``,
#: ``$|$``) or not; Unicode cannot be there (the document is ASCII) but its old per-character
#: spelling (``$\\rho$\\_h``, ``V\\_h$^{2}$``) is caught as math glued to text.
ASCII_MATH = {
    "sqrt": r"sqrt",
    "caret": r"\^",
    "underscore": r"_",
    "relation or operator sign": r"[=<>*+]",
    "bar": r"\|",
    "function call": r"\b(?:exp|log|tr|max|min|softmax|mean|Var|Cov)\(",
    "Greek name": r"\b(?:" + "|".join(GREEK_WORDS) + r")\b",
    "math glued to text": "[A-Za-z0-9]\x01|\x01[A-Za-z0-9(]",
    "unknown character": r"U\+[0-9A-F]{4}",
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
    """The text-mode parts of a document's body: without $...$, \\[...\\], display environments,
    \\texttt{...}, labels, references and file names, and without control words; each inline formula
    is one character U+0001."""
    body = tex.split("\\begin{document}", 1)[-1]
    body = re.sub(r"\\begin\{(equation|align|gather|multline)(\*?)\}.*?\\end\{\1\2\}", " ", body, flags=re.S)
    body = re.sub(r"\\\[.*?\\\]", " ", body, flags=re.S)
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
        m = re.match(r"\\(texttt|label|ref|eqref|includegraphics|input|begin|end)(\[[^\]]*\])?(?=\{)", body[i:])
        if m:
            out.append(" ")
            i = _group_end(body, i + m.end())
            continue
        out.append(body[i])
        i += 1
    return re.sub(r"\\[A-Za-z]+\*?|\\[\\,;!]", " ", "".join(out))


def ascii_math(tex: str) -> list[tuple[str, str]]:
    """(kind, context) of every piece of ASCII mathematics in the text-mode parts of ``tex``."""
    text = text_mode(tex)
    return [(name, text[max(0, m.start() - 40): m.end() + 30]) for name, pattern in ASCII_MATH.items()
            for m in re.finditer(pattern, text)]


ISSUE_EXAMPLES = ["bandwidth 1/sqrt(d_k)", "is d_k^(1/4)", "norm |k_i| = r", "overlap rho_hh'", "overlap ρ_hh'",
                  "bias Σ α_h b_h + (Σα − 1) f", "when W_hᵀW_h = sqrt(d_k) I", "MSE = B² + V − V(H−1)/H · HDI",
                  "rate n^(−min γ)", "at (1−r)²V_1", "at V_1/φ⁴", "for H·d_k ≤ d", "gives e/(1+e)"]


def test_scanner_finds_ascii_math_in_escaped_text() -> None:
    """The scan is not vacuous: the plain escaping of each example (the rendering before
    verify.outputs.texify) is caught, their texify is not."""
    for text in ISSUE_EXAMPLES:
        assert ascii_math("\\begin{document}" + escape(text)), text
        assert not ascii_math("\\begin{document}" + texify(text)), (text, texify(text))


@pytest.fixture(scope="module")
def quick_document(quick_run, export: dict) -> str:
    """The document of every claim's quick run (seed 0): the package's own texts."""
    report = document([quick_run(c)[0] for c in CLAIM_IDS], seed=0, quick=True)
    return render_document(report, formulas_=export["formulas"])


@pytest.mark.parametrize("which", ["quick run", "fixture"])
def test_no_ascii_math_in_prose(which: str, quick_document: str, export: dict) -> None:
    tex = quick_document if which == "quick run" else export["tex"]
    hits = ascii_math(tex)
    assert not hits, f"{len(hits)} pieces of ASCII mathematics in text mode, e.g. {hits[:30]}"


# --- command line ---------------------------------------------------------------------------------


def test_pdf_without_pdflatex_exits_2(export: dict, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                      capsys: pytest.CaptureFixture) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no pdflatex here
    rc = cli_latex(["-o", str(tmp_path / "out"), "--report", str(export["report_path"]), "--pdf"])
    assert rc == 2
    assert "pdflatex" in capsys.readouterr().err
    assert (tmp_path / "out" / "verification.tex").is_file()


def test_report_with_sizes_is_rejected(export: dict, capsys: pytest.CaptureFixture) -> None:
    assert verify_main(["latex", "--report", str(export["report_path"]), "--quick"]) == 2
    assert "--report" in capsys.readouterr().err


def test_unreadable_report_names_the_argument(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    bad = tmp_path / "report.json"
    bad.write_text("not json")
    assert verify_main(["latex", "-o", str(tmp_path / "o"), "--report", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "--report FILE" in err and "report.json" in err
    bad.write_text(json.dumps({"schema": "mha-nw-verify/report", "schema_version": 2, "claims": [{"id": "C1"}]}))
    assert verify_main(["latex", "-o", str(tmp_path / "o"), "--report", str(bad)]) == 2
    assert "claims[0]" in capsys.readouterr().err


def test_running_the_checks_gives_their_verdicts(export: dict) -> None:
    from verify.claims import Context, run_claim

    report = run_checks(claims=["C2"], quick=True, seed=3)
    assert not report["crashed"]
    tex = render_document(report, formulas_=export["formulas"])
    expected = run_claim("C2", Context(seed=3, quick=True)).verdict.value
    assert f"\\verdict{{{escape(expected)}}}" in _sections(tex)["C2"]
    assert "no entry for this claim" in _sections(tex)["C1"]


# --- the round trip through SymPy's LaTeX parser ----------------------------------------------------


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


def test_parseable_results_round_trip(round_trips: dict[str, str]) -> None:
    wrong = {k: v for k, v in round_trips.items() if v != "ok" and k not in UNPARSEABLE and k not in TOO_LONG}
    assert not wrong, f"results that do not parse back to themselves (fix, or name the construct): {wrong}"
    assert sum(v == "ok" for v in round_trips.values()) >= 60


def test_unparseable_list_is_exact(round_trips: dict[str, str]) -> None:
    assert {k for k, v in round_trips.items() if v == "too long"} == TOO_LONG
    now_ok = sorted(k for k in UNPARSEABLE if round_trips.get(k) == "ok")
    assert not now_ok, f"listed as unparseable but round-trips now (remove from UNPARSEABLE): {now_ok}"
    assert set(UNPARSEABLE) <= set(round_trips), sorted(set(UNPARSEABLE) - set(round_trips))
