"""verify.outputs.texify: prose with mathematics -> LaTeX.

Known answers written by hand for the spellings the package's texts use; structural properties
(ASCII, balanced braces and dollars, no TeX special left raw in text) on random strings; and
pdflatex on batches of random strings, one compile per batch: whatever the input, the output
compiles. pdflatex is installed by .ci/run; without it the compile tests fail (never skip).
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import Phase, given, settings
from hypothesis import strategies as st

from verify.outputs.texify import MAX_DEPTH, escape, texify

# --- known answers ----------------------------------------------------------------------------------

KNOWN = [
    # the examples
    ("bandwidth h = 1/sqrt(d_k)", r"bandwidth $h = 1/\sqrt{d_{k}}$"),
    ("is d_k^(1/4); or d_k^{1/4}", r"is $d_{k}^{1/4}$; or $d_{k}^{1/4}$"),
    ("the same norm: |k_i| = r for all i", r"the same norm: $\lvert k_{i}\rvert = r$ for all $i$"),
    ("rho_hh' and ρ_hh'", r"$\rho _{hh^{\prime}}$ and $\rho _{hh^{\prime}}$"),
    ("bias Σ α_h b_h + (Σα − 1) f, equal", r"bias $\sum \alpha _{h} b_{h} + (\sum \alpha - 1) f$, equal"),
    ("when W_hᵀW_h = sqrt(d_k) I", r"when $W_{h}^{\top}W_{h} = \sqrt{d_{k}} I$"),
    ("MSE = B² + V − V(H−1)/H · HDI", r"$\mathrm{MSE} = B^{2} + V - V(H- 1)/H \cdot \mathrm{HDI}$"),
    ("rate n^(−min γ)", r"rate $n^{- \min \gamma}$"),
    ("off at (1−r)²V_1 (Fibonacci at V_1/φ⁴)", r"off at $(1- r)^{2}V_{1}$ (Fibonacci at $V_{1}/\varphi ^{4}$)"),
    ("for H·d_k ≤ d only", r"for $H\cdot d_{k} \le d$ only"),
    ("gives e/(1+e) vs 1/2", r"gives $e/(1+e)$ vs $1/2$"),
    ("b: 2 log n/log log n", r"$b$: $2 \log n/\log \log n$"),
    ("error 2.2e-16, exact to 1e-60 and 0e+00", r"error ${2.2\times 10^{-16}}$, exact to ${10^{-60}}$ and $0$"),
    # the rest of the rules
    ("3 seeded cases, HDI 0.5 (see report.json)", r"3 seeded cases, HDI 0.5 (see \texttt{report.json})"),
    ("steps ensemble_bias_h*, c3_decomposition", r"steps \texttt{ensemble\_\allowbreak{}bias\_\allowbreak{}h*}, "
                                                 r"\texttt{c3\_\allowbreak{}decomposition}"),
    ("a Gram matrix BᵀB", r"a Gram matrix $B^{\top}B$"),
    ("with (A, a, B, b) = (c_b, 2)", r"with $(A, a, B, b) = (c_{b}, 2)$"),
    ("Cov(f̂_1, f̂_2 | X) > 0", r"$\operatorname{Cov}(\hat{f}_{1}, \hat{f}_{2} \mid X) > 0$"),
    ("||U_hᵀU_h'||_F²", r"$\lVert U_{h}^{\top}U_{h^{\prime}}\rVert _{F}^{2}$"),
    ("s = <(W_Q^h)ᵀ x, x_i>/sqrt(d_k)", r"$s = \langle (W_{Q}^{h})^{\top} x, x_{i}\rangle /\sqrt{d_{k}}$"),
    ("(d_v x d_out each), u ∈ R^{1x1}", r"($d_{v} \times d_{\mathrm{out}}$ each), $u \in \mathbb{R}^{1\times 1}$"),
    ("d_k* ~ (log n)^(2/(4+d))", r"$d_{k}^{*} \sim (\log n)^{2/(4+d)}$"),
    ("h = d_k^-1/2 and e^-8", r"$h = d_{k}^{-1/2}$ and $e^{-8}$"),
    ("exp((m_j - m_i)/(2 b**2)) == 1  <=>  m_i == m_j",
     r"$\exp ((m_{j} - m_{i})/(2 b^{2})) = 1 \Leftrightarrow m_{i} = m_{j}$"),
    ("bias̄² + var̄/H, covar̄", r"$\overline{\mathrm{bias}}^{2} + \overline{\mathrm{var}}/H$, $\overline{\mathrm{covar}}$"),
    ("correlation vs ρ 0.338 + 0.625 ρ (R² = 0.967)", r"correlation vs $\rho$ $0.338 + 0.625 \rho$ $(R^{2} = 0.967)$"),
    ("0.02..0.79 over 16 regimes; the q-factor", r"0.02--0.79 over 16 regimes; the $q$-factor"),
    ("α_a_b and x^2'", r"${\alpha _{a}}_{b}$ and ${x^{2}}^{\prime}$"),
    ("50% & #1 {x} ~ $5", r"50\% \& \#1 \{x\} $\sim$ \$5"),
]


@pytest.mark.parametrize("text, tex", KNOWN)
def test_known_answers(text: str, tex: str) -> None:
    assert texify(text) == tex


def test_plain_prose_is_escaped_text_only() -> None:
    prose = "One softmax attention head is exactly a Nadaraya-Watson estimator, as stated in Thm 3.1."
    assert texify(prose) == escape(prose) == prose


# --- structure ---------------------------------------------------------------------------------------

SPECIALS = list("\\{}$&#%^_~<>|/'\"`*+-=()[].,;:!?@") + list("αβγρσφΣΦΔ·−×±≤≥≠≈∝∈→⇒²³⁴⁻¹ᵀ₁₂ₖ√‖⟨⟩∞∂…") + [
    "\u0302", "\u0304", "\x00", "\x0c", "\x7f", "\u200b", "\t", "\n", "é", "€", "😀"]
FRAGMENTS = ["sqrt(", "sqrt", "^(", "^{", "_{", "_k", "d_k", "^-1/2", "**", "||", "<=", "->", "==", "(", ")", "{",
             "}", "[", "]", "<", ">", " ", " ", "e-16", "2.2", "x", " a ", "log ", "mean ", "Σ_", "ᵀ", "'", "|",
             "c3_mse_h*", "report.json", "..", "...", "(1, 2)", "HDI", " = ", "²"]
TEXT = st.lists(st.one_of(st.sampled_from(SPECIALS), st.sampled_from(FRAGMENTS),
                          st.text(max_size=6), st.characters()), max_size=40).map("".join)


def _unescaped(tex: str) -> str:
    """``tex`` with its escaped characters (``\\{``, ``\\$``, ...) as ``X``."""
    return re.sub(r"\\[{}$&#%_^~\\]", "X", tex)


def structure_errors(tex: str) -> list[str]:
    """What would make ``tex`` (a piece of a paragraph) fail or misbehave in LaTeX."""
    errors = []
    if not tex.isascii():
        errors.append("not ASCII")
    if re.search(r"[\x00-\x1f\x7f]", tex):
        errors.append("a control character")
    plain = _unescaped(tex)
    depth = 0
    for c in plain:
        depth += {"{": 1, "}": -1}.get(c, 0)
        if depth < 0:
            errors.append("a } before its {")
            break
    if depth > 0:
        errors.append("an unclosed {")
    if plain.count("$") % 2:
        errors.append("an odd number of $")
    if "$$" in plain:
        errors.append("$$ (display math)")
    if "^^" in plain:
        errors.append("^^ (TeX's character notation)")
    text_mode = re.sub(r"\$[^$]*\$", "", plain)
    text_mode = re.sub(r"\\texttt\{[^}]*\}", "", text_mode)
    if re.search(r"[#%&~^_]", re.sub(r"\\[A-Za-z]+|\\.", "", text_mode)):
        errors.append("a TeX special raw in text")
    return errors


@given(TEXT)
@settings(max_examples=400)
def test_output_is_balanced_ascii(text: str) -> None:
    tex = texify(text)
    assert structure_errors(tex) == [], (text, tex)
    assert "\n" not in tex


def test_structure_check_catches_broken_output() -> None:
    """The structural check is not vacuous: each kind of damage is reported."""
    for bad in ("$x", "{x", "x}", "a$$b$$", "x^^41", "50%", "a_b", "ρ", "\x01"):
        assert structure_errors(bad), bad
    assert structure_errors(texify("ρ_hh' {x} 50%")) == []


def test_deep_nesting_is_flat_past_the_limit() -> None:
    deep = "sqrt(" * (4 * MAX_DEPTH) + "x" + ")" * (4 * MAX_DEPTH) + " " + "x^(" * 300 + "y"
    tex = texify(deep)
    assert structure_errors(tex) == []
    depth = peak = 0
    for c in _unescaped(tex):
        depth += {"{": 1, "}": -1}.get(c, 0)
        peak = max(peak, depth)
    assert peak < 200   # TeX allows 255 groups


# --- compiled by pdflatex ---------------------------------------------------------------------------

PREAMBLE = r"""\documentclass[11pt]{article}
\usepackage{amsmath,amssymb}
\sloppy
\begin{document}
"""
#: Strings per compile: enough that a batch covers every kind of character, small enough that a
#: failing batch is bisected in a few compiles.
BATCH = 120


def _compile(texts: list[str], folder: Path) -> tuple[bool, str]:
    exe = shutil.which("pdflatex")
    assert exe is not None, "pdflatex is needed for this test (Debian: texlive-latex-base texlive-latex-recommended)"
    body = []
    for k, t in enumerate(texts):
        tex = texify(t)
        body += [f"% {k}", tex, "", rf"\emph{{{tex}}} \textbf{{{tex}}}", "", r"\begin{itemize}\item " + tex +
                 r"\end{itemize}", ""]
    doc = folder / "batch.tex"
    doc.write_text(PREAMBLE + "\n".join(body) + "\n\\end{document}\n", encoding="ascii")
    proc = subprocess.run([exe, "-interaction=nonstopmode", "-halt-on-error", "-no-shell-escape", doc.name],
                          cwd=folder, capture_output=True, text=True, errors="replace", timeout=120)
    return proc.returncode == 0, proc.stdout[-2000:]


def _first_failing(texts: list[str], folder: Path) -> tuple[str, str]:
    """The one string of a failing batch that fails alone (bisection), with pdflatex's output."""
    while len(texts) > 1:
        half = texts[: len(texts) // 2]
        texts = half if not _compile(half, folder)[0] else texts[len(texts) // 2:]
    return texts[0], _compile(texts, folder)[1]


def _check_batch(texts: list[str], folder: Path) -> None:
    ok, log = _compile(texts, folder)
    if not ok:
        bad, log = _first_failing(texts, folder)
        pytest.fail(f"pdflatex fails on texify({bad!r}) = {texify(bad)!r}:\n{log}")


@given(st.lists(TEXT, min_size=BATCH, max_size=BATCH))
@settings(max_examples=3, phases=(Phase.explicit, Phase.reuse, Phase.generate))  # bisection names the string
def test_random_strings_compile(tmp_path_factory: pytest.TempPathFactory, texts: list[str]) -> None:
    _check_batch(texts, tmp_path_factory.mktemp("texify"))


def test_every_special_and_the_known_answers_compile(tmp_path: Path) -> None:
    texts = SPECIALS + FRAGMENTS + [t for t, _ in KNOWN] + ["".join(SPECIALS), "".join(FRAGMENTS) * 3]
    _check_batch(texts, tmp_path)


def test_compile_check_catches_broken_latex(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The compile check can fail: with a converter that leaves a double subscript it does, and
    bisection names the string."""
    import verify.outputs.texify as tx

    monkeypatch.setattr(tx, "texify", lambda t: "$" + str(t) + "$")
    monkeypatch.setitem(globals(), "texify", tx.texify)
    ok, _ = _compile(["fine", "x_a_b"], tmp_path)
    assert not ok
    assert _first_failing(["fine", "also fine", "x_a_b", "ok"], tmp_path)[0] == "x_a_b"


def test_a_scientific_number_with_a_script_is_not_a_double_superscript():
    """Found by the random compile test: ``1e100^-1/2`` once gave ``10^{100}^{-1/2}``."""
    assert texify("1e100^-1/2") == "${10^{100}}^{-1/2}$"


@pytest.mark.parametrize("text,want", [
    ("a pretrained transformer (all-MiniLM-L6-v2)", "a pretrained transformer (all-MiniLM-L6-v2)"),
    ("the layer-0 input", "the layer-0 input"),
    ("H-1 heads", "$H-1$ heads"),
], ids=["model-name", "layer-0", "H-minus-1"])
def test_hyphenated_names_stay_text(text, want):
    """Seen in the PDF: a hyphenated model name was set as a difference of products."""
    assert texify(text) == want
