"""Prose with mathematics in it -> LaTeX: prose stays text, every mathematical span becomes ``$...$``.

The package's human-written texts (claim statements, headlines, findings, the derivations' ``why``)
mix English with ASCII and Unicode mathematics: ``1/sqrt(d_k)``, ``d_k^(1/4)``, ``|k_i| = r``,
``Σ α_h b_h + (Σα − 1) f``, ``W_hᵀW_h = sqrt(d_k) I``, ``2.2e-16``. :func:`texify` finds the
mathematical spans and prints them as LaTeX; :func:`escape` is the plain text escaper it uses
for the rest. Deterministic, table-driven, no network.

**Finding the spans.** The text is cut into words at white space. A bracket pair whose content
is all mathematics (``(Σα − 1)``, ``(log n)``, ``(1, 1)``) is one piece of its word, spaces and
all; otherwise its brackets are punctuation. Punctuation at a word's ends (``,;:.!?``, quotes,
``'s``) is text. Each word is then one of:

- *code*: a snake_case name (``c3_decomposition``, ``mse_h*``, more than one ``_`` or a long
  part after it), a dotted module path or a file name: ``\\texttt``;
- *math*: it holds ``_ ^ = < > + * / | ~``, a Greek letter, a super- or subscript, ``ᵀ``, a
  mathematical symbol or accent, digits glued to letters (``2e_1``, ``1x1``), a call ``f(x)``,
  a signed number or one in scientific notation; ``d_k``, ``HDI_lit``, ``α_h'`` are math
  (one ``_`` after a letter, a Greek letter or a known name, a part of at most three characters);
- *operator* (``=``, ``≤``, ``→``, ``·``, ``+``, ``−``, ...), *letter* (one letter, ``x1``, a
  Greek name ``rho``, ``cW``), *function* (``log``, ``exp``, ``tr``, ``max``, ``mean``, ...),
  *number*, *name* (``HDI``, ``MSE``), or an English *word*.

Neighbouring words (one space apart) join into one span when an operator stands between
operands, a function takes the next word as its argument (``log n``, ``mean ρ``), or two
operands are juxtaposed (``sqrt(d_k) I``, ``2 log n``) unless the second starts with a digit.
A span becomes math if it holds more than numbers and names; so ``3 seeded cases`` and
``HDI 0.5`` stay text while ``H = 2`` and ``e/(1+e)`` are math. The article ``a`` is a letter
only where no word follows it.

**Printing a span.** ``sqrt(x)``/``√x`` -> ``\\sqrt{x}``; ``x^(...)``, ``x^{...}``, ``x^-1/2``,
``x**2``, ``²³⁴``, ``ᵀ``/``^T`` (``^\\top``), ``_k``, ``_{h<h'}``, ``₁₂`` -> scripts (a second
script of the same kind braces the first, so nothing can be a double script); Greek letters and
names -> ``\\alpha``... (``Σ`` -> ``\\sum``, ``φ`` -> ``\\varphi``); ``log exp min max sin cos
det`` -> their operators, ``tr mean Var Cov softmax ...`` -> ``\\operatorname``; longer names ->
``\\mathrm``; ``<= >= != -> => <=> ≤ ≥ ≠ → ⇒ ≈ ∝ ∈ ~ · × ±`` -> relations and operators;
``|x|``/``||x||`` -> ``\\lvert x\\rvert``/``\\lVert x\\rVert`` (a spaced ``|`` -> ``\\mid``);
``<a, b>`` -> ``\\langle a, b\\rangle``; ``d x d_k`` and ``1x1`` -> ``\\times``; ``d_k*`` ->
``d_k^*``; ``2.2e-16`` -> ``2.2\\times10^{-16}``; ``f̂`` -> ``\\hat{f}``, ``bias̄`` ->
``\\overline{\\mathrm{bias}}``; ``R^{...}`` with letters -> ``\\mathbb{R}``; anything else
through a table or as ``\\mbox{\\texttt{U+XXXX}}``.

**Always compiles.** Every brace the output holds is written in pairs by this module (the
input's braces become ``\\{ \\}`` unless they are a script's group), scripts nest at most
:data:`MAX_DEPTH` deep, every TeX special is escaped, control characters become spaces and the
result is ASCII. ``tests/test_texify.py`` compiles batches of random strings with pdflatex.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

__all__ = ["texify", "escape", "TEXT_MAP", "MAX_DEPTH"]

#: Brackets and scripts nested deeper than this are printed flat (TeX allows 255 groups).
MAX_DEPTH = 12

# --- text ----------------------------------------------------------------------------------------

#: Non-ASCII characters and their LaTeX in running text (math where needed). A character missing
#: here is written as ``\texttt{U+XXXX}`` so that the document still compiles.
TEXT_MAP: dict[str, str] = {
    "±": r"$\pm$", "·": r"$\cdot$", "×": r"$\times$", "÷": r"$\div$", "°": r"$^{\circ}$",
    "–": "--", "—": "---", "‘": "`", "’": "'", "“": "``", "”": "''", "…": r"\ldots{}", "•": r"$\bullet$",
    "é": r"\'e", "è": r"\`e", "ä": r'\"a', "ö": r'\"o', "ü": r'\"u', "ß": r"\ss{}", "ç": r"\c{c}",
    "→": r"$\to$", "←": r"$\leftarrow$", "↔": r"$\leftrightarrow$", "⇒": r"$\Rightarrow$",
    "⇐": r"$\Leftarrow$", "⇔": r"$\Leftrightarrow$", "↦": r"$\mapsto$", "↑": r"$\uparrow$", "↓": r"$\downarrow$",
    "∈": r"$\in$", "∉": r"$\notin$", "⊂": r"$\subset$", "⊆": r"$\subseteq$", "∩": r"$\cap$", "∪": r"$\cup$",
    "∀": r"$\forall$", "∃": r"$\exists$", "∅": r"$\emptyset$", "∞": r"$\infty$", "∂": r"$\partial$",
    "∇": r"$\nabla$", "∑": r"$\sum$", "∏": r"$\prod$", "∫": r"$\int$", "√": r"$\surd$", "∝": r"$\propto$",
    "−": r"$-$", "∓": r"$\mp$", "∘": r"$\circ$", "∗": r"$*$", "≈": r"$\approx$", "≃": r"$\simeq$",
    "≅": r"$\cong$", "≡": r"$\equiv$", "≠": r"$\neq$", "≤": r"$\le$", "≥": r"$\ge$", "≪": r"$\ll$",
    "≫": r"$\gg$", "≲": r"$\lesssim$", "≳": r"$\gtrsim$", "⊥": r"$\perp$", "⟂": r"$\perp$", "∥": r"$\parallel$",
    "⊗": r"$\otimes$", "⊕": r"$\oplus$", "⟨": r"$\langle$", "⟩": r"$\rangle$", "‖": r"$\|$",
    "ℝ": r"$\mathbb{R}$", "ℕ": r"$\mathbb{N}$", "ℤ": r"$\mathbb{Z}$", "ℂ": r"$\mathbb{C}$", "ℓ": r"$\ell$",
    "ᵀ": r"$^{\mathsf{T}}$", "\u00a0": "~", "\u2009": r"\,", "\u202f": r"\,",
}
_GREEK = {
    "α": "alpha", "β": "beta", "γ": "gamma", "δ": "delta", "ε": "varepsilon", "ζ": "zeta", "η": "eta",
    "θ": "theta", "ι": "iota", "κ": "kappa", "λ": "lambda", "μ": "mu", "ν": "nu", "ξ": "xi", "π": "pi",
    "ρ": "rho", "σ": "sigma", "τ": "tau", "υ": "upsilon", "φ": "varphi", "χ": "chi", "ψ": "psi", "ω": "omega",
    "ϕ": "phi", "ϵ": "epsilon", "Γ": "Gamma", "Δ": "Delta", "Θ": "Theta", "Λ": "Lambda", "Ξ": "Xi",
    "Π": "Pi", "Σ": "Sigma", "Φ": "Phi", "Ψ": "Psi", "Ω": "Omega",
}
TEXT_MAP.update({ch: f"$\\{name}$" for ch, name in _GREEK.items()})
_SUPER = dict(zip("⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁼⁽⁾ⁿⁱ", "0123456789+-=()ni"))
_SUB = dict(zip("₀₁₂₃₄₅₆₇₈₉₊₋₌₍₎ₐₑₕᵢⱼₖₗₘₙₒₚₛₜ", "0123456789+-=()aehijklmnopst"))
_ACCENTS = {"\u0302": "^", "\u0304": "=", "\u0303": "~", "\u0301": "'", "\u0300": "`", "\u0308": '"'}
_ASCII_SPECIAL = {
    "\\": r"$\backslash$", "{": r"\{", "}": r"\}", "$": r"\$", "&": r"\&", "#": r"\#",
    "%": r"\%", "^": r"\^{}", "~": r"\~{}", "<": r"$<$", ">": r"$>$",
    "|": r"$|$", "_": r"\_\allowbreak{}", "/": r"/\allowbreak{}",
}
# ASCII spellings that read better as symbols
_ASCII_WORDS = [("<=>", r"$\Leftrightarrow$"), ("->", r"$\to$"), ("<=", r"$\le$"), (">=", r"$\ge$"),
                ("!=", r"$\neq$")]


def _unknown(ch: str) -> str:
    return rf"\texttt{{U+{ord(ch):04X}}}"


def _clean(text: Any) -> str:
    """NFC, and every control or format character (what TeX could read as an invalid
    character) as a space."""
    s = unicodedata.normalize("NFC", str(text))
    return "".join(" " if unicodedata.category(c) in ("Cc", "Cf", "Cs", "Zl", "Zp") else c for c in s)


def escape(text: Any) -> str:
    """Plain-ASCII LaTeX for running text: specials escaped, Unicode mapped by :data:`TEXT_MAP`
    (super- and subscript runs, combining accents), unknown characters as ``U+XXXX``."""
    s = _clean(text)
    out: list[str] = []
    i = 0
    while i < len(s):
        ch = s[i]
        word = next((w for w, _ in _ASCII_WORDS if s.startswith(w, i)), None)
        if word is not None:
            out.append(dict(_ASCII_WORDS)[word])
            i += len(word)
            continue
        if ch in _SUPER or ch in _SUB:
            table = _SUPER if ch in _SUPER else _SUB
            j = i
            while j < len(s) and s[j] in table:
                j += 1
            run = "".join(table[c] for c in s[i:j])
            out.append(f"$^{{{run}}}$" if table is _SUPER else f"$_{{{run}}}$")
            i = j
            continue
        if i + 1 < len(s) and s[i + 1] in _ACCENTS and ch.isascii() and ch.isalpha():
            out.append(f"\\{_ACCENTS[s[i + 1]]}{{{ch}}}")
            i += 2
            continue
        if ch in _ASCII_SPECIAL:
            out.append(_ASCII_SPECIAL[ch])
        elif ch.isspace():
            out.append(" ")
        elif ord(ch) < 128:
            out.append(ch)
        else:
            out.append(TEXT_MAP.get(ch, _unknown(ch)))
        i += 1
    return re.sub(r"(?<!\\)\$\$", "", "".join(out))   # two symbols in a row: one formula, never $$


# --- the math printer ----------------------------------------------------------------------------

_MATH_SYMBOLS = {ch: tex[1:-1] for ch, tex in TEXT_MAP.items() if tex.startswith("$") and tex.endswith("$")}
_MATH_SYMBOLS.update({
    "−": "-", "·": r"\cdot", "ᵀ": r"^\top", "∑": r"\sum", "Σ": r"\sum", "∏": r"\prod", "…": r"\ldots",
    "⋯": r"\cdots", "’": "'", "′": "'", "″": "''", "–": "-", "—": "-", "∣": r"\mid", "⋅": r"\cdot",
    "∼": r"\sim", "⩽": r"\le", "⩾": r"\ge", "≔": ":=", "\u00a0": " ",
})
_MATH_SYMBOLS.update({ch: f"\\{name}" for ch, name in _GREEK.items() if ch != "Σ"})
_GREEK_NAMES = {"alpha", "beta", "gamma", "delta", "epsilon", "varepsilon", "zeta", "eta", "theta", "iota",
                "kappa", "lambda", "mu", "nu", "xi", "pi", "rho", "sigma", "tau", "upsilon", "phi", "varphi",
                "chi", "psi", "omega", "Gamma", "Delta", "Theta", "Lambda", "Xi", "Pi", "Sigma", "Phi", "Psi",
                "Omega"}
_ALIASES = {"lam": r"\lambda", "oo": r"\infty", "inf": r"\infty"}
#: Functions TeX has an operator for, and those printed with ``\operatorname``.
_TEX_FUNCS = {"exp", "log", "ln", "sin", "cos", "tan", "tanh", "max", "min", "det", "lim", "sup", "arg", "dim"}
_OP_FUNCS = {"tr", "mean", "Var", "Cov", "Corr", "softmax", "argmin", "argmax", "diag", "rank", "adj", "Range",
             "concat", "sign", "sgn", "span", "vec", "erf", "Li", "harmonic"}
_SUMS = {"sum": r"\sum", "prod": r"\prod"}
_FUNCS = _TEX_FUNCS | _OP_FUNCS | set(_SUMS) | {"sqrt"}
#: Upright names in math: quantities of the paper and words that name a thing in a formula.
_NAMES = {"HDI", "MSE", "WDI", "NW", "MHA", "SE", "QR", "head", "bias", "var", "covar", "const", "scores",
          "softmax", "lit", "sub"}
_ACCENT_CMDS = {"\u0302": ("hat", "widehat"), "\u0304": ("bar", "overline"), "\u0303": ("tilde", "widetilde"),
                "\u0307": ("dot", "dot"), "\u0308": ("ddot", "ddot"), "\u0301": ("acute", "acute"),
                "\u0300": ("grave", "grave"), "\u20d7": ("vec", "vec")}
_OPERATORS = [("<=>", r"\Leftrightarrow"), ("<->", r"\leftrightarrow"), ("==", "="), ("!=", r"\neq"),
              ("<=", r"\le"), (">=", r"\ge"), ("=>", r"\Rightarrow"), ("->", r"\to"), ("<-", r"\leftarrow"),
              ("+-", r"\pm"), ("...", r"\ldots"), ("..", r"\ldots"), (":=", ":=")]
_ASCII_MATH = {"#": r"\#", "$": r"\$", "%": r"\%", "&": r"\&", "~": r"\sim", "\\": r"\backslash",
               "{": r"\{", "}": r"\}", '"': r"\mbox{''}", "`": r"\mbox{`}", "_": r"\_", "^": r"\wedge",
               "|": r"\vert", "<": "<", ">": ">"}
_OPEN, _CLOSE = "([{", ")]}"
_DIGITS = "0123456789"
_DIM = r"(?:\d+|[dDnNHm](?:_[A-Za-z0-9]+)?)"
_NUMBER = re.compile(r"\d+(?:\.\d+)?(?:[eE][+\-−]?\d+(?![A-Za-z_]))?")


def _pairs(s: str, angles: bool = False) -> dict[int, int]:
    """Matching brackets ``()[]{}`` of ``s`` (and ``<a, b>`` with ``angles``): opener index ->
    closer index (unmatched ones left out)."""
    stack: list[int] = []
    out: dict[int, int] = {}
    for i, c in enumerate(s):
        if c in _OPEN:
            stack.append(i)
        elif (angles and c == "<" and (i == 0 or s[i - 1] in " ([{,")
              and s[i + 1:i + 2] not in ("", " ", "=", "-", "<", ">")):
            stack.append(i)
        elif c == ">" and stack and s[stack[-1]] == "<":
            if s[i - 1] not in " -=<>" and not s.startswith(">=", i):
                out[stack.pop()] = i
        elif c in _CLOSE:
            if stack and s[stack[-1]] == _OPEN[_CLOSE.index(c)]:
                out[stack.pop()] = i
            else:
                stack.clear()   # a stray closer ends every open group before it
    return out


def _sci(m: str) -> str:
    """``2.2e-16`` -> ``2.2\\times10^{-16}``, ``1e-60`` -> ``10^{-60}``, ``0e+00`` -> ``0``."""
    mant, _, exp = m.replace("E", "e").partition("e")
    if not exp:
        return m
    e = int(exp.replace("−", "-"))
    if float(mant) == 0:
        return "0"
    if e == 0:
        return mant
    # braced, so that a script the number takes next (``1e100^-1/2``) is not a double superscript
    return "{" + (f"{mant}\\times " if mant not in ("1", "1.0") else "") + f"10^{{{e}}}" + "}"


class _Atom:
    __slots__ = ("base", "sub", "sup", "kind", "primes")

    def __init__(self, base: str, kind: str) -> None:
        self.base, self.kind, self.sub, self.sup, self.primes = base, kind, None, None, False

    def tex(self) -> str:
        out = self.base
        if self.sub is not None:
            out += "_{" + self.sub + "}"
        if self.sup is not None:
            out += "^{" + self.sup + "}"
        return out


class _Math:
    """One mathematical span printed as LaTeX (the inside of ``$...$``)."""

    def __init__(self, s: str, depth: int = 0, blackboard_r: bool = False) -> None:
        self.s, self.depth, self.bb = s, depth, blackboard_r
        self.pairs = _pairs(s)
        self.atoms: list[_Atom] = []
        self.bars = [False, False]   # an open | and an open ||

    # the output
    def push(self, base: str, kind: str = "operand") -> None:
        if re.search(r"\\[A-Za-z]+$", base):   # a control word never runs into a following letter
            base += " "
        self.atoms.append(_Atom(base, kind))

    def last(self) -> _Atom | None:
        return next((a for a in reversed(self.atoms) if a.kind != "space"), None)

    def last_kind(self) -> str | None:
        a = self.last()
        return a.kind if a is not None else None

    def script(self, which: str, content: str, prime: bool = False) -> None:
        a = self.last()
        if a is None or a.kind == "space":
            self.push("{}")
            a = self.atoms[-1]
        if which == "sup" and a.sup is not None and a.primes and not prime:
            a.sup += " " + content
            a.primes = False
            return
        if which == "sup" and prime and a.sup is not None and a.primes:
            a.sup += content
            return
        if getattr(a, which) is not None:   # a second script of this kind: brace the first
            wrapped = _Atom("{" + a.tex() + "}", "operand")
            self.atoms[self.atoms.index(a)] = wrapped
            a = wrapped
        setattr(a, which, content)
        if which == "sup":
            a.primes = prime
        if a.kind in ("open", "op"):
            a.kind = "operand"

    def render(self) -> str:
        self.run()
        return re.sub(r"  +", " ", "".join(a.tex() for a in self.atoms)).strip()

    def sub_render(self, text: str) -> str:
        if self.depth >= MAX_DEPTH:
            return _flat(text)
        return _Math(text, self.depth + 1, self.bb).render()

    # the input
    def group_end(self, i: int) -> int | None:
        """Index of the closer matching the opener at ``i``."""
        return self.pairs.get(i)

    def script_arg(self, i: int, which: str) -> tuple[str | None, int]:
        s, n = self.s, len(self.s)
        if i >= n:
            return None, i
        c = s[i]
        if c in "{(" and self.group_end(i) is not None and (c == "{" or which == "sup"):
            j = self.group_end(i)
            return self.sub_render(s[i + 1:j]), j + 1
        if which == "sup" and c == "T" and not (i + 1 < n and s[i + 1].isalnum()):
            return r"\top", i + 1
        if c == "*":
            return "*", i + 1
        sign = ""
        if which == "sup" and c in "-−+" and i + 1 < n and s[i + 1].isalnum():
            sign, i = ("-" if c != "+" else "+"), i + 1
            c = s[i]
        if c in _DIGITS:
            m = re.match(r"\d+(?:\.\d+)?", s[i:])
            j = i + m.end()
            if sign and re.match(r"/\d+", s[j:]):
                j += re.match(r"/\d+", s[j:]).end()
            return sign + s[i:j], j
        if c.isascii() and c.isalpha():
            j = i + 1
            if c.islower():
                while j < n and s[j].isascii() and (s[j].islower() or s[j] in _DIGITS):
                    j += 1
            else:
                while j < n and s[j].isascii() and (s[j].isupper() or s[j] in _DIGITS):
                    j += 1
            while j < n and s[j] in "'’′":
                j += 1
            if sign and re.match(r"/\d+", s[j:]):
                j += re.match(r"/\d+", s[j:]).end()
            return self.sub_render(sign + s[i:j]), j
        if c in _GREEK:
            j = i + 1
            while j < n and s[j] in "'’′":
                j += 1
            return self.sub_render(s[i:j]), j
        return None, i

    def word(self, i: int) -> int:
        """A run of ASCII letters at ``i``: a function, Greek name, name, letters or ``x`` as times."""
        s, n = self.s, len(self.s)
        j = i
        while j < n and s[j].isascii() and s[j].isalpha():
            j += 1
        w = s[i:j]
        accent = s[j] if j < n and s[j] in _ACCENT_CMDS else None
        if accent:
            j += 1
            while j < n and unicodedata.combining(s[j]):
                j += 1
            small, wide = _ACCENT_CMDS[accent]
            inner = w if len(w) == 1 else (f"\\mathrm{{{w}}}" if len(w) > 2 else w)
            self.push(f"\\{small if len(w) == 1 else wide}{{{inner}}}")
            return j
        if w == "sqrt":
            return self.root(j)
        if w == "x" and self.is_times(i, j):
            self.push(r"\times ", "op")
            return j
        if w == "R" and (self.bb or self.last_kind() == "rel_in" or re.match(r"\^\{?[^}\s]*[A-Za-z×]", s[j:])):
            self.push(r"\mathbb{R}")
            return j
        if w in _GREEK_NAMES:
            self.push(f"\\{w} ")
        elif w in _ALIASES:
            self.push(_ALIASES[w] + " ")
        elif w in _SUMS:
            self.push(_SUMS[w] + " ", "func")
        elif w in _TEX_FUNCS:
            self.push(f"\\{w} ", "func")
        elif w in _OP_FUNCS:
            self.push(f"\\operatorname{{{w}}}", "func")
        elif len(w) == 1 or (len(w) == 2 and not (w.isupper() and w in _NAMES)) and w not in _NAMES:
            self.push(w)
        elif w in _NAMES or len(w) > 2:
            self.push(f"\\mathrm{{{w}}}")
        else:
            self.push(w)
        return j

    def is_times(self, i: int, j: int) -> bool:
        s = self.s
        if i > 0 and s[i - 1] in _DIGITS and j < len(s) and s[j] in _DIGITS:
            return True   # 1x1
        if (i == 0 or not s[i - 1].isalnum()) and re.match(r"\d+\.\d", s[j:]):
            return True   # x1.26 (a factor)
        return bool(re.search(_DIM + r" $", s[:i]) and re.match(r" " + _DIM + r"(?![A-Za-z(])", s[j:]))

    def root(self, j: int) -> int:
        s, n = self.s, len(self.s)
        if j < n and s[j] == "(" and self.group_end(j) is not None:
            k = self.group_end(j)
            self.push(f"\\sqrt{{{self.sub_render(s[j + 1:k])}}}")
            return k + 1
        m = re.match(r" ?(\d+(?:\.\d+)?|[A-Za-z](?![A-Za-z])|[α-ωΑ-Ω])", s[j:])
        if m:
            self.push(f"\\sqrt{{{self.sub_render(m.group(1))}}}")
            return j + m.end()
        self.push(r"\operatorname{sqrt}", "func")
        return j

    def bar(self, i: int, double: bool) -> None:
        k = 1 if double else 0
        closing = self.bars[k] and self.last_kind() in ("operand", "close")
        spaced = 0 < i < len(self.s) - 1 and self.s[i - 1] == " " and self.s[i + 1] == " "
        if closing:
            self.push(r"\rVert " if double else r"\rvert ", "close")
            self.bars[k] = False
        elif spaced and not double:
            self.push(r"\mid ", "op")
        else:
            self.push(r"\lVert " if double else r"\lvert ", "open")
            self.bars[k] = True

    def angle(self, i: int) -> int | None:
        """``<a, b>`` as an inner product: the ``>`` that closes the ``<`` at ``i``, if any."""
        s, depth = self.s, 0
        if i + 1 >= len(s) or s[i + 1] in " =-":
            return None
        for j in range(i + 1, len(s)):
            c = s[j]
            if c in _OPEN:
                depth += 1
            elif c in _CLOSE:
                depth -= 1
                if depth < 0:
                    return None
            elif c == ">" and depth == 0 and s[j - 1] not in " -=" and not s.startswith(">=", j):
                return j
            elif c == "<":
                return None
        return None

    def run(self) -> None:
        s, n, i = self.s, len(self.s), 0
        while i < n:
            c = s[i]
            if c.isspace():
                if self.atoms and self.atoms[-1].kind != "space":
                    self.push(" ", "space")
                i += 1
                continue
            op = next((o for o in _OPERATORS if s.startswith(o[0], i)), None)
            if op is not None and not (op[0] == "<=" and s.startswith("<=>", i)):
                self.push(op[1] + " ", "op")
                i += len(op[0])
                continue
            if s.startswith("**", i):
                arg, j = self.script_arg(i + 2, "sup")
                if arg is not None:
                    self.script("sup", arg)
                    i = j
                else:
                    self.push(r"\ast ", "op")
                    i += 2
                continue
            if c in _DIGITS:
                m = _NUMBER.match(s, i)
                self.push(_sci(m.group()))
                i = m.end()
                continue
            if c.isascii() and c.isalpha():
                i = self.word(i)
                continue
            if c in "_^":
                arg, j = self.script_arg(i + 1, "sub" if c == "_" else "sup")
                if arg is None:
                    self.push(_ASCII_MATH[c])
                    i += 1
                else:
                    self.script("sub" if c == "_" else "sup", arg)
                    i = j
                continue
            if c in _SUPER or c in _SUB:
                table = _SUPER if c in _SUPER else _SUB
                j = i
                while j < n and s[j] in table:
                    j += 1
                self.script("sup" if table is _SUPER else "sub", self.sub_render("".join(table[x] for x in s[i:j])))
                i = j
                continue
            if c == "ᵀ":
                self.script("sup", r"\top")
                i += 1
                continue
            if c in "'’′":
                self.script("sup", r"\prime", prime=True)
                i += 1
                continue
            if c == "*":
                nxt = s[i + 1] if i + 1 < n else " "
                if self.last_kind() in ("operand", "close") and (nxt in " ,;:)]}=~(/<>^_*" or i + 1 == n):
                    self.script("sup", "*")
                elif self.last_kind() in ("operand", "close") and s[i - 1] != " ":
                    self.push(r"\cdot ", "op")
                elif self.last_kind() in ("operand", "close") and nxt == " ":
                    self.push(r"\cdot ", "op")
                else:
                    self.push(r"\ast ", "op")
                i += 1
                continue
            if c == "√":
                i = self.root(i + 1)
                continue
            if c == "|" or c == "‖":
                double = c == "‖" or s.startswith("||", i)
                self.bar(i + (1 if double and c == "|" else 0), double)
                i += 2 if (double and c == "|") else 1
                continue
            if c == "<":
                j = self.angle(i)
                if j is not None:
                    self.push(r"\langle ", "open")
                    self.push(self.sub_render(s[i + 1:j]))
                    self.push(r"\rangle ", "close")
                    i = j + 1
                    continue
                self.push("<", "op")
                i += 1
                continue
            if c in "([":
                self.push(c, "open")
                i += 1
                continue
            if c in ")]":
                self.push(c, "close")
                i += 1
                continue
            if c == "{":
                j = self.group_end(i)
                if j is not None and self.depth < MAX_DEPTH:   # a group: its braces are kept, balanced
                    self.push(r"\{" + self.sub_render(s[i + 1:j]) + r"\}")
                    i = j + 1
                    continue
            if c in "=+-/,;:!?.>":
                self.push(c, "op" if c in "=+-/<>" else "punct")
                i += 1
                continue
            if c in ("∈", "∉"):
                self.push(_MATH_SYMBOLS[c] + " ", "rel_in")
                i += 1
                continue
            if c in ("Σ", "∑", "∏"):
                self.push(_MATH_SYMBOLS[c] + " ", "func")
                i += 1
                continue
            if c in _ASCII_MATH:
                self.push(_ASCII_MATH[c] + " ", "op" if c in "~" else "operand")
                i += 1
                continue
            if c in _MATH_SYMBOLS:
                tex = _MATH_SYMBOLS[c]
                if tex.startswith("^"):
                    self.script("sup", tex[1:].strip("{}"))
                else:
                    self.push(tex + " ", "operand" if c in _GREEK else "op")
                i += 1
                continue
            if unicodedata.combining(c):
                i += 1   # an accent with nothing to sit on
                continue
            self.push(r"\mbox{" + (TEXT_MAP[c] if c in TEXT_MAP else _unknown(c)) + "}")
            i += 1


def _flat(text: str) -> str:
    """Math for ``text`` with no structure at all (past :data:`MAX_DEPTH`): every character alone."""
    out = []
    for c in text:
        if c.isascii() and c.isalnum() or c in " +-=/,;:.!?()[]<>'*@":
            out.append(c)
        elif c in _ASCII_MATH:
            out.append(_ASCII_MATH[c] + " ")
        elif c in _MATH_SYMBOLS and not _MATH_SYMBOLS[c].startswith("^"):
            out.append(_MATH_SYMBOLS[c] + " ")
        elif c.isspace():
            out.append(" ")
        else:
            out.append(r"\mbox{" + _unknown(c) + "}")
    return "".join(out)


def math(text: str, *, blackboard_r: bool = False) -> str:
    """The LaTeX (without dollars) of a span that is all mathematics."""
    return _Math(_clean(text), 0, blackboard_r).render()


# --- finding the spans ---------------------------------------------------------------------------

_MATH_CHARS = (set("_^=<>+*/|~√·") | set(_GREEK) | set(_SUPER) | set(_SUB) | {"ᵀ"}
               | set(_MATH_SYMBOLS) - set("’–—\u00a0…"))
_CODE = re.compile(r"""
    (?:proofs|verify|tests|notebooks|derivation|mpmath|sympy|numpy|np|sp|torch|math|flint)
    [.(][\w.'"()\[\]*<>-]*                                                  # a module path or call
  | [\w./-]*\.(?:json|py|tex|png|md|pdf|csv|txt|ipynb|safetensors)\b[\w./-]*  # a file
  | [A-Za-z0-9]+(?:_[A-Za-z0-9*]*)+(?:<[A-Za-z]+>)?(?:\.\.[A-Za-z0-9_*]+)?   # snake_case
  | \*(?:_[A-Za-z0-9*]+)+                                                    # *_exponent_n
""", re.X)
_SNAKE_MATH = re.compile(r"\d*([A-Za-z][A-Za-z0-9]?|[A-Za-z]+|" + "[" + "".join(_GREEK) + r"])_([A-Za-z0-9]{1,5}'*)\*?")
_WORD = re.compile(r"[A-Za-zÀ-ÖØ-öø-ÿ]+(?:[-'’–][A-Za-zÀ-ÖØ-öø-ÿ]+)*")
_ABBREV = re.compile(r"(?:[a-z]\.){2,}|(?:resp|cf|etc|vs|approx|Thm|Eq|Fig|incl|e\.g|i\.e)\.")
_NUM_PLAIN = re.compile(r"\d+(?:\.\d+)?")
_RANGE = re.compile(r"[+\-−]?\d+(?:\.\d+)?\.\.[+\-−]?\d+(?:\.\d+)?")
_SYMBOL_RANGE = re.compile(r"[A-Za-z0-9]+\.\.[A-Za-z0-9]+")
_OPWORDS = {"=", "==", "≠", "!=", "<", ">", "<=", ">=", "≤", "≥", "->", "→", "=>", "⇒", "<=>", "⇔", "≈", "∝",
            "~", "+", "-", "−", "±", "·", "×", "*", "/", "∈", "⊥", "|", "≪", "≫", "∼", "⊂", "⊆", ":=", "≡",
            "≲", "≳", "∘", "⊗", "↦", "<-", "←"}
_CAPABLE = {"math", "op", "letter", "num", "func", "name", "ell", "range"}


def _code_or_math(w: str) -> str | None:
    """'code' for a snake_case name, a module path or a file; 'math' for ``d_k``-like names: one
    ``_`` after a short base or a known name with at most three characters after it, or after
    any word with at most two (``weight_i``)."""
    if not _CODE.fullmatch(w):
        return None
    sm = _SNAKE_MATH.fullmatch(w)
    if sm:
        base, sub = sm.group(1), sm.group(2).rstrip("'")
        if (len(base) <= 2 and len(sub) <= 3 or len(base) == 1 and len(sub) <= 5
                or base in _NAMES | _GREEK_NAMES and len(sub) <= 3 or len(sub) <= 2):
            return "math"
    return "code"


def _classify(w: str) -> str:
    if not w:
        return "punct"
    kind = _code_or_math(w)
    if kind:
        return kind
    if w in _OPWORDS:
        return "op"
    if _NUM_PLAIN.fullmatch(w):
        return "num"
    if _RANGE.fullmatch(w):
        return "range"
    if w in ("...", "..", "…", "⋯"):
        return "ell"
    if _SYMBOL_RANGE.fullmatch(w):   # 1..H
        return "math"
    if re.fullmatch(r"C\d|[A-Za-z]{3,}\d+|\d+-(?:bit|digit|dim|dimensional|fold|norm|point|step|term)s?", w):
        return "word"   # a claim of the paper, float64, 256-bit
    if re.fullmatch(r"[A-Za-z]{2,}[A-Za-z0-9]*(?:-[A-Za-z0-9]+)+", w):
        return "word"   # a hyphenated name: all-MiniLM-L6-v2, single-index, layer-0, GPT-2 (not x-1, H-1)
        return "word"
    if w == "a":
        return "weak"
    if (re.fullmatch(r"[A-Za-z]\d{0,2}'*", w) or w.rstrip("'") in _GREEK_NAMES or w in _ALIASES
            or re.fullmatch(r"[a-z][A-Z]'*", w)):
        return "letter"
    if w in _FUNCS:
        return "func"
    if w == "const":
        return "name"
    if re.fullmatch(r"[A-Z]{2,}\d*", w):
        return "name"
    if re.fullmatch(r"[A-Z]{2,}\d*'+", w):   # MSE''
        return "math"
    if _ABBREV.fullmatch(w) or _WORD.fullmatch(w):
        return "word"
    if re.fullmatch(r"[+\-−]\d+(?:\.\d+)?", w) or re.fullmatch(r"\d+(?:\.\d+)?[eE][+\-−]?\d+", w):
        return "math"
    if (any(c in _MATH_CHARS or c == "-" or unicodedata.combining(c) for c in w)
            or re.search(r"\d[A-Za-z]|[A-Za-z]\d|[A-Za-z]\(", w)):
        return "math"
    return "word"


def _starts_with_digit(w: str) -> bool:
    return bool(re.match(r"[+\-−]?\d", w))


_RELATION = re.compile(r"=|<|>|≤|≥|≠|≈|→|∈|∝")


def _statement(w: str) -> bool:
    """A bracketed relation, ``(R² = 0.967)``: a remark beside an operand, not a factor of it."""
    return len(w) > 2 and w[0] in "([" and _pairs(w).get(0) == len(w) - 1 and bool(_RELATION.search(w))


def _joins(a: tuple[str, str], b: tuple[str, str]) -> bool:
    (ka, wa), (kb, wb) = a, b
    if ka not in _CAPABLE or kb not in _CAPABLE:
        return False
    if ka == "op" or kb == "op":
        return True
    if ka == "func":
        return kb in ("math", "letter", "func") or (wa == "sqrt" and kb == "num")
    if ka == "ell" or kb == "ell":
        return {ka, kb} <= {"ell", "math", "letter", "num", "range"}
    if _starts_with_digit(wb) or _statement(wa) or _statement(wb) or re.fullmatch(r"\d+x\d+", wa):
        return False
    if ka in ("math", "letter", "num", "name"):
        return kb in ("math", "letter", "func")
    return False


def _peel(word: str) -> tuple[str, str, str]:
    """(leading text, core, trailing text) of a word."""
    lead = ""
    while word and (word[0] in "\"“‘«" or (word[0] == "'" and len(word) > 1 and word[1].isalpha())):
        lead, word = lead + word[0], word[1:]
    trail = ""
    while word:
        if word.endswith(("'s", "’s")) and len(word) > 2:
            trail, word = word[-2:] + trail, word[:-2]
            continue
        c = word[-1]
        if c in ",;:!?\"”»" or (c == "." and not _ABBREV.fullmatch(word) and not word.endswith("..")):
            trail, word = c + trail, word[:-1]
            continue
        if c in "'’" and _classify(word[:-1]) == "word" and len(word) > 2:
            trail, word = c + trail, word[:-1]
            continue
        break
    return lead, word, trail


class _Scan:
    """The items of a text: ('text'|'math'|'code'|'space', raw, class)."""

    def __init__(self, s: str) -> None:
        self.s = s
        self.pairs = _pairs(s, angles=True)
        self.math_groups: set[int] = set()

    def region(self, lo: int, hi: int, depth: int) -> list[tuple[str, str, str]]:
        s = self.s
        pieces: list[tuple[str, str, str]] = []   # ('word', raw, '') | ('text', raw, 'punct') | ('space', raw, '')
        start: int | None = None

        def flush(end: int) -> None:
            nonlocal start
            if start is not None and end > start:
                pieces.append(("word", s[start:end], ""))
            start = None

        i = lo
        while i < hi:
            c = s[i]
            if c.isspace():
                flush(i)
                j = i
                while j < hi and s[j].isspace():
                    j += 1
                pieces.append(("space", s[i:j], ""))
                i = j
                continue
            j = self.pairs.get(i)
            if (c in _OPEN or c == "<") and j is not None and j < hi:
                if depth < MAX_DEPTH and any(x.isspace() for x in s[i + 1:j]):
                    inner = self.region(i + 1, j, depth + 1)
                    if _is_math_group(inner):
                        self.math_groups.add(i)
                        start = i if start is None else start
                    else:
                        flush(i)
                        pieces += [("text", c, "punct"), *inner, ("text", s[j], "punct")]
                    i = j + 1
                    continue
                start = i if start is None else start
                i = j + 1
                continue
            start = i if start is None else start
            i += 1
        flush(hi)
        return self.spans(pieces)

    def classify(self, raw: str) -> list[tuple[str, str, str]]:
        """A word as items: its leading and trailing text and its core with its class."""
        lead, core, trail = _peel(raw)
        out: list[tuple[str, str, str]] = [("text", lead, "punct")] if lead else []
        hyphen = re.fullmatch(r"([A-Za-z])(-[A-Za-z]{2,}[A-Za-z-]*)", core)
        if hyphen and core[0] not in "aAI":   # q-factor: the letter is math, the rest text
            out += [("word", hyphen.group(1), "math"), ("text", hyphen.group(2), "punct")]
            core = ""
            kind = "punct"
        elif core and core[0] in _OPEN and any(g for g in self.math_groups if self.s.startswith(core, g)):
            kind = "math"
        else:
            kind = _classify(core) if core else "punct"
            # a word in brackets that are all of it, with plain text inside: the brackets are text
            if (kind == "math" and len(core) > 2 and core[0] in "([" and _pairs(core).get(0) == len(core) - 1
                    and _classify(core[1:-1]) in ("num", "word", "name", "range", "code", "weak")):
                inner = core[1:-1]
                out += [("text", core[0], "punct"), *self.classify(inner), ("text", core[-1], "punct")]
                core = ""
        if core:
            out.append(("word", core, kind))
        if trail:
            out.append(("text", trail, "punct"))
        return out

    def spans(self, pieces: list[tuple[str, str, str]]) -> list[tuple[str, str, str]]:
        items: list[tuple[str, str, str]] = []
        for kind, raw, cls in pieces:
            items += self.classify(raw) if kind == "word" else [(kind, raw, cls)]
        # the article "a" is a letter only where no word follows it
        for k, (kind, raw, cls) in enumerate(items):
            if cls == "weak":
                nxt = next((it for it in items[k + 1:] if it[0] != "space"), None)
                after = next((it for it in items[items.index(nxt) + 1:] if it[0] != "space"), None) if nxt else None
                word_next = (nxt is not None and nxt[0] == "word" and
                             (nxt[2] in ("word", "name", "code") or _starts_with_digit(nxt[1])
                              or nxt[2] == "func" and (after is None or after[2] in ("word", "name", "punct"))))
                items[k] = (kind, raw, "word" if word_next else "letter")
        # a function with nothing to act on is a word
        for k in range(len(items) - 1, -1, -1):
            kind, raw, cls = items[k]
            if cls == "func":
                nxt = items[k + 2] if k + 2 < len(items) and items[k + 1][0] == "space" else None
                if nxt is None or not _joins(("func", raw), (nxt[2], nxt[1])):
                    prev = items[k - 2] if k >= 2 and items[k - 1][0] == "space" else None
                    # an operand after an operator (x − mean), else a word (the mean head bias)
                    prose_next = nxt is not None and nxt[0] == "word" and nxt[2] in ("word", "name", "code")
                    operand = prev is not None and prev[2] == "op" and not prose_next
                    items[k] = (kind, raw, "math" if operand else "word")
        out: list[tuple[str, str, str]] = []
        k = 0
        while k < len(items):
            kind, raw, cls = items[k]
            if kind != "word":
                out.append((kind, raw, cls))
                k += 1
                continue
            span = [k]
            while True:
                m = span[-1]
                if not (m + 2 < len(items) and items[m + 1][0] == "space" and items[m + 2][0] == "word"
                        and _joins((items[m][2], items[m][1]), (items[m + 2][2], items[m + 2][1]))):
                    break
                span.append(m + 2)
            classes = {items[m][2] for m in span}
            raw = "".join(items[m][1] for m in range(span[0], span[-1] + 1))
            if classes & {"math", "op", "letter", "func"}:
                out.append(("math", raw, "math"))
            elif classes == {"code"}:
                out.append(("code", raw, "code"))
            else:
                out.append(("text", raw, "/".join(sorted(classes))))
            k = span[-1] + 1
        return out


def _is_math_group(items: list[tuple[str, str, str]]) -> bool:
    """Whether the inside of a bracket pair is all mathematics (tuples of numbers included)."""
    solid = [it for it in items if it[0] != "space"]
    if not solid:
        return False
    has_math = any(it[0] == "math" for it in solid)
    commas = any(it[0] == "text" and it[1].strip() in (",", ";") for it in solid)
    for kind, raw, cls in solid:
        if kind == "math":
            continue
        if kind == "text" and (raw.strip() in (",", ";") or cls in ("num", "range", "ell")):
            continue
        return False
    return has_math or commas


def _text(raw: str) -> str:
    return escape(re.sub(r"(?<=\d)\.\.(?=[+\-−]?\d)", "–", raw))


def texify(text: Any) -> str:
    """LaTeX for a line of prose with mathematics in it (see the module's rules): the mathematical
    spans as ``$...$``, names of code as ``\\texttt``, the rest escaped text. ASCII, one line,
    balanced, compiles with amsmath and amssymb."""
    s = _clean(text)
    scan = _Scan(s)
    items = scan.region(0, len(s), 0)
    out: list[str] = []
    prev_word = ""
    for kind, raw, _cls in items:
        if kind == "math":
            bb = prev_word in ("in", "of", "on") and bool(re.match(r"R(?:\^|[²³⁴])", raw))
            tex = _Math(raw, 0, bb).render()
            if not tex.strip():
                piece = _text(raw)
            else:
                piece = f"${tex}$"
        elif kind == "code":
            piece = r"\texttt{" + escape(raw) + "}"
        elif kind == "space":
            piece = " "
        else:
            piece = _text(raw)
        if kind != "space":
            prev_word = raw.strip().lower()
        if out and out[-1].endswith("$") and piece.startswith("$"):
            out.append("{}")
        out.append(piece)
    tex = "".join(out)
    # after \item or \\ a leading [ would open an optional argument
    return "{}" + tex if tex.lstrip().startswith("[") else tex
