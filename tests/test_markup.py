"""The markup (proofs/markup.py): what it refuses (one row per rule), what each renderer prints
for known answers written here, that every formula SymPy prints for a derivation parses, and that
the LaTeX it writes compiles (slow tier, pdflatex)."""

from __future__ import annotations

import subprocess

import pytest
from hypothesis import given
from hypothesis import strategies as st

from proofs import markup as m
from proofs.errors import DefinitionError, MarkupError

# -- refused -----------------------------------------------------------------------------------

REFUSED = [
    # prose
    ("d_k", "the character '_' in prose", "prose-underscore"),
    ("a = b", "the character '=' in prose", "prose-equals"),
    ("x < y", "the character '<' in prose", "prose-less"),
    ("a | b", "the character '|' in prose", "prose-bar"),
    ("d_k*", "the character '_' in prose", "prose-star"),
    ("about ~3", "the character '~' in prose", "prose-tilde"),
    ("a \\alpha", "the character '\\\\' in prose", "prose-backslash"),
    ("weights α", "the character 'α' in prose", "prose-greek"),
    ("z ≤ 3", "the character '≤' in prose", "prose-math-symbol"),
    ("W_hᵀ", "the character '_' in prose", "prose-modifier"),
    ("x²", "the character '²' in prose", "prose-superscript"),
    ("0.1 ± 0.2", "the character '±' in prose", "prose-plus-minus"),
    ("ΔHDI = −0.23", "the character 'Δ' in prose", "prose-delta"),
    ("a change of -0.23", "the signed number '-0.23' in prose", "prose-signed"),
    ("(-3 of them)", "the signed number '-3", "prose-signed-paren"),
    ("error 2.2e-16", "the number '2.2e-16' in e-notation", "prose-e-notation"),
    ("1E5 points", "the number '1E5' in e-notation", "prose-e-upper"),
    ("tab\there", "the control character '\\t'", "control-tab"),
    ("bell \x07", "the control character '\\x07'", "control-bel"),
    ("ansi \x1b[31m", "the control character '\\x1b'", "control-ansi"),
    ("line\nbreak", "the control character '\\n'", "control-newline"),
    ("zero\u200bwidth", "the control character '\\u200b'", "control-zero-width"),
    ("an unclosed $x", "an unclosed '$'", "unclosed-math"),
    ("an unclosed `code", "an unclosed '`'", "unclosed-code"),
    ("$ x$", "starts or ends with a space", "math-leading-space"),
    ("$x $", "starts or ends with a space", "math-trailing-space"),
    ("$$", "an empty math span", "math-empty"),
    ("`a;b`", "outside CODE_CHARS", "code-bad-char"),
    ("``", "a code span ''", "code-empty"),
    ("x" * (m.MAX_CHARS + 1), "MAX_CHARS", "too-long"),
    # mathematics
    (r"$\foo$", r"the unknown command \foo", "math-unknown-command"),
    (r"$\input{secret}$", r"the unknown command \input", "math-input"),
    (r"$\def\x{1}$", r"the unknown command \def", "math-def"),
    ("$x^$", "'^' without its argument", "math-bare-superscript"),
    ("$x_$", "'_' without its argument", "math-bare-subscript"),
    ("$x_1_2$", "a double subscript", "math-double-subscript"),
    ("$x^1^2$", "a double superscript", "math-double-superscript"),
    ("${x$", "an unbalanced '{'", "math-open-brace"),
    ("$x}$", "an unbalanced '}'", "math-close-brace"),
    (r"$\left( x$", r"a \left without its \right", "math-left-unclosed"),
    (r"$x \right)$", r"a \right without its \left", "math-right-alone"),
    (r"$\left x \right)$", r"without a delimiter", "math-left-no-delimiter"),
    ("$x|y$", "a bare '|'", "math-bar"),
    ("$a & b$", "'&' outside a matrix", "math-ampersand"),
    (r"$a \\ b$", "outside a matrix", "math-newline"),
    (r"$\begin{tabular}x\end{tabular}$", "the environment 'tabular'", "math-env-unknown"),
    (r"$\begin{matrix}x\end{cases}$", "closed by another name", "math-env-mismatch"),
    (r"$\begin{matrix}x$", "an unclosed environment", "math-env-unclosed"),
    (r"$\end{matrix}$", r"an \end without its \begin", "math-end-alone"),
    ("$α$", "the character 'α'", "math-unicode-greek"),
    ("$x~y$", "'~'", "math-tilde"),
    ("$50%$", "a bare '%'", "math-percent"),
    (r"$\mathbb{x_1}$", r"\mathbb of something other than letters", "math-mathbb-script"),
    (r"$\frac{1}$", "a missing argument", "math-frac-one-argument"),
    (r"$\sqrt[3{x}$", "an unclosed '['", "math-sqrt-open-bracket"),
    ("$" + "x^{" * (m.MAX_DEPTH + 1) + "1" + "}" * (m.MAX_DEPTH + 1) + "$", "MAX_DEPTH", "math-too-deep"),
    ("$" + "x^" * 500 + "1$", "a double", "math-x-caret-500"),
    ("$" + "{" * 300 + "x" + "}" * 300 + "$", "MAX_DEPTH", "math-300-braces"),
]


@pytest.mark.parametrize("text, message", [(t, msg) for t, msg, _ in REFUSED], ids=[i for *_, i in REFUSED])
def test_refused(text, message):
    with pytest.raises(MarkupError) as info:
        m.parse(text, "field")
    assert message in str(info.value) and str(info.value).startswith("field: ")


def test_a_markup_error_is_a_definition_error_not_a_value_error():
    assert issubclass(MarkupError, DefinitionError) and not issubclass(MarkupError, ValueError)
    with pytest.raises(MarkupError):
        m.parse(3)  # type: ignore[arg-type]


ACCEPTED = [
    "plain prose, with punctuation: (a), [b]; c/d & 73% #1 — “quoted” – ‘x’ … naïve Fokoué",
    "all-MiniLM-L6-v2 and layer-0 and n/a and 3-4 and x-y",
    r"$\alpha_h = W_V^h W_O^h$ and `c5_mse_line` and `--large`",
    r"$\left. f \right|_{\substack{x=0}}$",
    r"$\left[\begin{matrix}a & b\\c & d\end{matrix}\right]$",
    r"$\sum_{h<h'} \lVert G_{hh'} \rVert_F^2$",
]


@pytest.mark.parametrize("text", ACCEPTED)
def test_accepted(text):
    assert m.check(text) == text


# -- rendered: known answers written here ---------------------------------------------------------

RENDERED = [
    # (source, unicode, ascii, markdown, latex)
    (r"the weights $\alpha_h = W_V^h W_O^h$ are free",
     "the weights αₕ = W_Vʰ W_Oʰ are free", "the weights alpha_h = W_V^h W_O^h are free",
     r"the weights $\alpha_{h} = W_{V}^{h} W_{O}^{h}$ are free",
     r"the weights $\alpha_{h} = W_{V}^{h} W_{O}^{h}$ are free"),
    (r"bandwidth $d_k^{1/4}$", "bandwidth dₖ^(1/4)", "bandwidth d_k^(1/4)",
     r"bandwidth $d_{k}^{1/4}$", r"bandwidth $d_{k}^{1/4}$"),
    (r"$\frac{1}{\sqrt{d_k}}$", "1/√dₖ", "1/sqrt(d_k)", r"$\frac{1}{\sqrt{d_{k}}}$", r"$\frac{1}{\sqrt{d_{k}}}$"),
    (r"$\left\lvert k_i \right\rvert = r$", "|kᵢ| = r", "|k_i| = r",
     r"$\left\lvert k_{i} \right\rvert = r$", r"$\left\lvert k_{i} \right\rvert = r$"),
    (r"$\max_i \lvert v_i \rvert$, $\lVert q - k \rVert^2 + \lvert x \rvert y$", "maxᵢ |vᵢ|, ‖q − k‖² + |x| y",
     "max_i |v_i|, ||q - k||^2 + |x| y", r"$\max_{i} \vert v_{i} \vert$, $\lVert q - k \rVert^{2} + \vert x \vert y$",
     r"$\max_{i} \lvert v_{i} \rvert$, $\lVert q - k \rVert^{2} + \lvert x \rvert y$"),
    (r"$(1-r)^2 V_1$", "(1 − r)² V₁", "(1 - r)^2 V_1", "$(1-r)^{2} V_{1}$", "$(1-r)^{2} V_{1}$"),
    (r"$z \le -187$", "z ≤ −187", "z <= -187", r"$z \le -187$", r"$z \le -187$"),
    (r"$0.095 \pm 0.003$", "0.095 ± 0.003", "0.095 +/- 0.003", r"$0.095 \pm 0.003$", r"$0.095 \pm 0.003$"),
    (r"HDI $0 \to 1$", "HDI 0 → 1", "HDI 0 -> 1", r"HDI $0 \to 1$", r"HDI $0 \to 1$"),
    (r"$W_h^\top W_h$", "Wₕᵀ Wₕ", "W_h^T W_h", r"$W_{h}^{\top } W_{h}$", r"$W_{h}^{\top } W_{h}$"),
    (r"$n^{-\min \gamma}$", "n^(−min γ)", "n^(-min gamma)", r"$n^{-\min \gamma }$", r"$n^{-\min \gamma }$"),
    (r"$\hat{f}_h$, $\bar{b}$", "f̂ₕ, b̄", "hat(f)_h, bar(b)", r"$\hat{f}_{h}$, $\bar{b}$", r"$\hat{f}_{h}$, $\bar{b}$"),
    ("73% of `c5_mse_line` & more", "73% of c5_mse_line & more", "73% of c5_mse_line & more",
     "73% of `c5_mse_line` & more", r"73\% of \texttt{c5\_mse\_line} \& more"),
    ("Fokoué – “a” …", "Fokoué – “a” …", 'Fokoue - "a" ...', "Fokoué – “a” …", "Fokoué – “a” …"),
    (r"$\mathbb{R}^{d \times d_k}$", "ℝ^(d × dₖ)", "R^(d x d_k)", r"$\mathbb{R}^{d \times d_{k}}$",
     r"$\mathbb{R}^{d \times d_{k}}$"),
    (r"$\sum_h \alpha_h b_h + (\sum \alpha - 1) f$", "Σₕ αₕ bₕ + (Σ α − 1) f", "sum_h alpha_h b_h + (sum alpha - 1) f",
     r"$\sum_{h} \alpha_{h} b_{h} + (\sum \alpha - 1) f$", r"$\sum_{h} \alpha_{h} b_{h} + (\sum \alpha - 1) f$"),
]


@pytest.mark.parametrize("src, uni, asc, md, tex", RENDERED, ids=[r[1][:24] for r in RENDERED])
def test_renderers_known_answers(src, uni, asc, md, tex):
    assert m.to_unicode(src) == uni
    assert m.to_ascii(src) == asc and m.to_ascii(src).isascii()
    assert m.to_markdown(src) == md
    assert m.to_latex(src) == tex


def test_markdown_table_cells_never_hold_a_bare_bar():
    text = r"$\left| x \right| \mid y$ and `a|b`" .replace("`a|b`", "`a`")
    cell = m.to_markdown(text, table=True)
    assert "|" not in cell.replace("\\|", "") and r"\vert" in cell


def test_helpers_write_numbers_as_mathematics():
    assert m.num(-0.23, ".2f") == "$-0.23$"
    assert m.sci(2.2e-16) == r"$2.2 \times 10^{-16}$"
    assert m.sci(1e-13, 0) == "$10^{-13}$"
    assert m.pm(0.095, 0.003) == r"$0.095 \pm 0.003$"
    assert m.to_unicode(m.sci(2.2e-16)) == "2.2 × 10⁻¹⁶"
    for text in (m.num(-3.5), m.sci(1.5e300), m.pm(-1, 2)):
        m.check(text)


# -- every formula SymPy prints for the derivations ------------------------------------------------

@pytest.mark.slow
def test_every_derivation_formula_parses_and_renders():
    from proofs import all_derivations
    from proofs.notation import to_latex

    for der in all_derivations():
        for s in der.steps:
            nodes = m.parse_math(" ".join(to_latex(s.relation).split()), f"{der.claim}/{s.name}")
            assert m.math_to_unicode(nodes) and m.math_to_ascii(nodes).isascii()
        for r in der.results.values():
            m.parse_math(" ".join(to_latex(r.expr).split()), f"{der.claim}/{r.name}")


# -- properties -------------------------------------------------------------------------------------

_WORDS = st.sampled_from(["the", "heads", "MSE", "of", "0.5", "(a)", "n/a", "73%", "layer-0", "—", "é"])
_MATH = st.sampled_from([r"\alpha_h", r"d_k^{1/4}", r"\frac{1}{H}", r"x \le y", r"\sqrt{d}", r"W^\top W",
                         r"\left( a + b \right)", r"\sum_{h} V_h", r"10^{-12}", r"\mathrm{HDI}"])


@st.composite
def texts(draw):
    pieces = draw(st.lists(st.one_of(_WORDS, _MATH.map(lambda x: f"${x}$"), st.just("`c5_line`")), max_size=8))
    return " ".join(pieces)


@given(texts())
def test_rendered_texts_have_no_markup_left_and_are_balanced(text):
    m.check(text)
    for out in (m.to_unicode(text), m.to_ascii(text)):
        assert "$" not in out and "`" not in out and "\\" not in out
    tex = m.to_latex(text)
    assert tex.count("{") == tex.count("}") and tex.count("$") % 2 == 0
    assert m.to_ascii(text).isascii()


@pytest.mark.slow
def test_latex_of_every_accepted_and_rendered_text_compiles(tmp_path):
    body = "\n\n".join(m.to_latex(t) for t in [*ACCEPTED, *(r[0] for r in RENDERED)])
    doc = ("\\documentclass{article}\\usepackage[T1]{fontenc}\\usepackage{amsmath,amssymb,textcomp}"
           "\\begin{document}\n" + body + "\n\\end{document}\n")
    (tmp_path / "t.tex").write_text(doc, encoding="utf-8")
    proc = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "t.tex"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout[-2000:]
