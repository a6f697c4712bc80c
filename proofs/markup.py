r"""The package's markup: prose with its mathematics marked where it is written, parsed strictly
once, and rendered for each medium from the same tree.

A text is prose with two kinds of span: ``$...$``, inline mathematics in a small subset of LaTeX
(:data:`COMMANDS`, ``_``/``^`` scripts, ``{}`` groups, ``\left``/``\right`` fences and the
``matrix`` environments SymPy prints); `` `...` ``, a name of the package's code, an option or a file
(:data:`CODE_CHARS` only). Mathematics outside a math span (``\ _ ^ { } | * ~ < > =``, Greek
letters, mathematical symbols, super/subscripts, signed numbers, e-notation) and control characters
anywhere are refused, not guessed at: :class:`MarkupError` names the rule and the position. Parsing
is linear in the length (at most :data:`MAX_CHARS` characters, :data:`MAX_DEPTH` nested groups).

Renderers: :func:`to_unicode` (terminal), :func:`to_ascii`, :func:`to_markdown` (Jupyter, GitHub)
and :func:`to_latex` (the export). Kept free of ``verify`` (imports run from verify to proofs).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from contextlib import contextmanager
from functools import lru_cache
from typing import Any, Callable, Iterable, Iterator, Union

from .errors import MarkupError

__all__ = ["MarkupError", "Text", "Code", "Math", "parse", "parse_math", "check", "to_unicode", "to_ascii",
           "to_markdown", "to_latex", "math_to_unicode", "math_to_latex", "num", "pm", "sci", "render",
           "escape", "MEDIA", "COMMANDS", "MAX_CHARS", "MAX_DEPTH", "CODE_CHARS"]

#: A text longer than this is refused (the longest the package writes is a few hundred
#: characters; a derivation step printed by SymPy is at most ~20k).
MAX_CHARS = 100_000
#: Groups (``{}``, ``\left..\right``, environments, scripts) nested deeper than this are refused:
#: SymPy's output nests at most 6 deep here, and TeX's own grouping limit is 255.
MAX_DEPTH = 32
#: Characters a code span may hold: identifiers, options, file names and plain values.
CODE_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-/:=, +*()[]'\"<>")
#: The longest code span (a name, an option with its value, a short command).
MAX_CODE = 200

# -- The mathematics: a tree of nodes --------------------------------------------------------------


@dataclass(frozen=True)
class Char:
    """A letter, digit or punctuation mark of the mathematics."""

    c: str


@dataclass(frozen=True)
class Cmd:
    """A command with its arguments (each a tuple of nodes) and an optional ``[...]`` argument."""

    name: str
    args: tuple = ()
    opt: tuple | None = None


@dataclass(frozen=True)
class Group:
    nodes: tuple


@dataclass(frozen=True)
class Script:
    """``base_{sub}^{sup}``."""

    base: Any
    sub: tuple | None
    sup: tuple | None


@dataclass(frozen=True)
class Fence:
    r"""``\left<open> ... \right<close>`` (a delimiter ``.`` is invisible)."""

    open: str
    nodes: tuple
    close: str


@dataclass(frozen=True)
class Env:
    """``\\begin{matrix} a & b \\\\ c & d \\end{matrix}``: rows of cells, each a tuple of nodes."""

    name: str
    rows: tuple


@dataclass(frozen=True)
class Sp:
    """A space in the source: nothing in LaTeX's mathematics, a separator between two operands in
    the one-line renderings."""


SPACE = Sp()

Node = Union[Char, Cmd, Group, Script, Fence, Env, Sp]

# -- Commands: name -> (kind, arity, unicode, ascii) -----------------------------------------------

_GREEK = {
    "alpha": "α", "beta": "β", "gamma": "γ", "delta": "δ", "epsilon": "ϵ", "varepsilon": "ε", "zeta": "ζ",
    "eta": "η", "theta": "θ", "vartheta": "ϑ", "iota": "ι", "kappa": "κ", "lambda": "λ", "mu": "μ", "nu": "ν",
    "xi": "ξ", "pi": "π", "rho": "ρ", "sigma": "σ", "tau": "τ", "upsilon": "υ", "phi": "ϕ", "varphi": "φ",
    "chi": "χ", "psi": "ψ", "omega": "ω", "Gamma": "Γ", "Delta": "Δ", "Theta": "Θ", "Lambda": "Λ", "Xi": "Ξ",
    "Pi": "Π", "Sigma": "Σ", "Upsilon": "Υ", "Phi": "Φ", "Psi": "Ψ", "Omega": "Ω",
}
_SYMBOLS = {  # name: (unicode, ascii, spaced: a binary operator or relation)
    "cdot": ("·", "*", True), "times": ("×", "x", True), "pm": ("±", "+/-", True), "mp": ("∓", "-/+", True),
    "le": ("≤", "<=", True), "leq": ("≤", "<=", True), "ge": ("≥", ">=", True), "geq": ("≥", ">=", True),
    "ne": ("≠", "!=", True), "neq": ("≠", "!=", True), "approx": ("≈", "~=", True), "sim": ("∼", "~", True),
    "propto": ("∝", "~", True), "equiv": ("≡", "==", True), "ll": ("≪", "<<", True), "gg": ("≫", ">>", True),
    "to": ("→", "->", True), "rightarrow": ("→", "->", True), "mapsto": ("↦", "|->", True),
    "Rightarrow": ("⇒", "=>", True), "iff": ("⇔", "<=>", True), "in": ("∈", "in", True),
    "notin": ("∉", "not in", True), "subset": ("⊂", "subset", True), "subseteq": ("⊆", "subseteq", True),
    "cap": ("∩", "cap", True), "cup": ("∪", "cup", True), "setminus": ("∖", "\\", True),
    "wedge": ("∧", "and", True), "vee": ("∨", "or", True), "circ": ("∘", "o", True),
    "otimes": ("⊗", "(x)", True), "mid": ("|", "|", True), "colon": (":", ":", False),
    "infty": ("∞", "inf", False), "partial": ("∂", "d", False), "nabla": ("∇", "grad", False),
    "forall": ("∀", "for all ", False), "exists": ("∃", "exists ", False), "emptyset": ("∅", "{}", False),
    "ell": ("ℓ", "l", False), "star": ("⋆", "*", False), "ast": ("∗", "*", False), "prime": ("′", "'", False),
    "ldots": ("…", "...", False), "cdots": ("⋯", "...", False), "dots": ("…", "...", False),
    "langle": ("⟨", "<", False), "rangle": ("⟩", ">", False), "lVert": ("‖", "||", False),
    "rVert": ("‖", "||", False), "Vert": ("‖", "||", False), "lvert": ("|", "|", False),
    "rvert": ("|", "|", False), "vert": ("|", "|", False), "lfloor": ("⌊", "floor(", False),
    "rfloor": ("⌋", ")", False), "lceil": ("⌈", "ceil(", False), "rceil": ("⌉", ")", False),
    "top": ("ᵀ", "^T", False), "sum": ("Σ", "sum ", False), "prod": ("Π", "prod ", False),
    "int": ("∫", "int ", False),
}
#: Closing delimiters: a space written before one in the source is not printed (``\lvert x \rvert``).
_CLOSING = frozenset({"rvert", "rVert", "rangle", "rfloor", "rceil"})


def _closes(n: Node) -> bool:
    """Whether ``n`` is a closing delimiter, with or without scripts (``\rVert^2``)."""
    base = n.base if isinstance(n, Script) else n
    return isinstance(base, Cmd) and base.name in _CLOSING


_FUNCTIONS = ("log", "ln", "exp", "min", "max", "sin", "cos", "tan", "det", "arg", "sup", "inf", "lim", "Pr",
              "sinh", "cosh", "tanh")
_SPACES = {",": " ", ";": " ", ":": " ", "!": "", " ": " ", "quad": "  ", "qquad": "   "}
_ESCAPED = {"{": "{", "}": "}", "|": "‖", "%": "%", "#": "#", "&": "&", "_": "_", "$": "$"}
_ACCENTS = {"bar": ("\u0304", "bar"), "overline": ("\u0305", "bar"), "hat": ("\u0302", "hat"),
            "widehat": ("\u0302", "hat"), "tilde": ("\u0303", "tilde"), "widetilde": ("\u0303", "tilde"),
            "dot": ("\u0307", "dot"), "ddot": ("\u0308", "ddot"), "vec": ("\u20d7", "vec")}
_FONTS = ("mathrm", "text", "operatorname", "mathit", "mathbf", "boldsymbol", "mathsf", "mathtt", "mathcal",
          "mathbb")
_BLACKBOARD = {"R": "ℝ", "N": "ℕ", "Z": "ℤ", "Q": "ℚ", "C": "ℂ", "E": "𝔼", "P": "ℙ", "I": "𝕀"}
_ENVS = ("matrix", "pmatrix", "bmatrix", "cases")
_FENCE_SYMBOLS = ("langle", "rangle", "lvert", "rvert", "lVert", "rVert", "lfloor", "rfloor", "lceil", "rceil")
_DELIMS = {"(": "(", ")": ")", "[": "[", "]": "]", ".": "", "|": "|", "\\{": "{", "\\}": "}", "\\|": "‖",
           **{"\\" + c: _SYMBOLS[c][0] for c in _FENCE_SYMBOLS}}
_ASCII_DELIMS = {**_DELIMS, "\\|": "||", **{"\\" + c: _SYMBOLS[c][1] for c in _FENCE_SYMBOLS}}

#: Every command the mathematics may use, by kind (all others are refused).
COMMANDS: dict[str, str] = {
    **{g: "greek" for g in _GREEK},
    **{s: "symbol" for s in _SYMBOLS},
    **{f: "function" for f in _FUNCTIONS},
    **{a: "accent" for a in _ACCENTS},
    **{f: "font" for f in _FONTS},
    "frac": "frac", "dfrac": "frac", "tfrac": "frac", "binom": "binom", "sqrt": "sqrt",
    "left": "fence", "right": "fence", "begin": "env", "end": "env", "substack": "substack",
    "limits": "noop", "displaystyle": "noop", "quad": "space", "qquad": "space",
}

# -- Parsing the mathematics (recursive descent, one pass) -----------------------------------------


class _MathParser:
    def __init__(self, src: str, where: str) -> None:
        self.s, self.i, self.where, self.depth = src, 0, where, 0

    def fail(self, rule: str) -> MarkupError:
        lo = max(0, self.i - 20)
        return MarkupError(f"{self.where}: {rule} at character {self.i} of the mathematics "
                           f"{self.s[lo:self.i + 20]!r}")

    @contextmanager
    def nested(self) -> Iterator[None]:
        """One level deeper for the parse inside the block (refused beyond MAX_DEPTH)."""
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise self.fail(f"groups nested deeper than MAX_DEPTH = {MAX_DEPTH}")
        yield
        self.depth -= 1

    def at(self, word: str) -> bool:
        """The input continues with ``word`` (a command name not followed by more letters)."""
        if not self.s.startswith(word, self.i):
            return False
        nxt = self.s[self.i + len(word):self.i + len(word) + 1]
        return not (word[-1].isalpha() and nxt.isascii() and nxt.isalpha())

    def parse(self, stops: tuple[str, ...] = ()) -> tuple:
        """Nodes up to the end or the first of ``stops`` (left unconsumed)."""
        nodes: list[Node] = []
        while self.i < len(self.s):
            if any(self.at(w) for w in stops):
                break
            c = self.s[self.i]
            if c == "}":
                raise self.fail("an unbalanced '}'")
            if c == "]" and "]" in stops:
                break
            if c in "_^":
                while nodes and nodes[-1] is SPACE:
                    nodes.pop()
                nodes.append(self.script(nodes.pop() if nodes else None))
                continue
            if c == "&":
                raise self.fail("'&' outside a matrix")
            node = self.atom()
            if node is SPACE and nodes and nodes[-1] is SPACE:
                continue
            nodes.append(node)
        while nodes and nodes[-1] is SPACE:
            nodes.pop()
        return tuple(n for k, n in enumerate(nodes) if not (k == 0 and n is SPACE))

    def script(self, base: Node | None) -> Script:
        if isinstance(base, Script):
            raise self.fail("a double script (write {x_a}^b or x_a^b)")
        sub = sup = None
        while self.i < len(self.s) and self.s[self.i] in "_^":
            kind = self.s[self.i]
            self.i += 1
            if (kind == "_" and sub is not None) or (kind == "^" and sup is not None):
                raise self.fail(f"a double {'sub' if kind == '_' else 'super'}script")
            self.skip_spaces()
            if self.i >= len(self.s) or self.s[self.i] in "_^}&":
                raise self.fail(f"'{kind}' without its argument")
            with self.nested():
                arg = self.argument()
            if kind == "_":
                sub = arg
            else:
                sup = arg
            j = self.i
            while j < len(self.s) and self.s[j] == " ":
                j += 1
            if j < len(self.s) and self.s[j] in "_^":   # x_a ^b: the same script
                self.i = j
        return Script(base, sub, sup)

    def skip_spaces(self) -> None:
        while self.i < len(self.s) and self.s[self.i] == " ":
            self.i += 1

    def argument(self) -> tuple:
        """One argument: a ``{group}``, a command with its own arguments, or one character."""
        self.skip_spaces()
        if self.i >= len(self.s):
            raise self.fail("a missing argument")
        if self.s[self.i] == "{":
            return self.group().nodes
        if self.s[self.i] in "}&^_":
            raise self.fail("a missing argument")
        return (self.atom(),)

    def group(self) -> Group:
        self.i += 1  # "{"
        with self.nested():
            nodes = self.parse(stops=("}",))
            if self.i >= len(self.s):
                raise self.fail("an unbalanced '{'")
            self.i += 1
        return Group(nodes)

    def atom(self) -> Node:
        c = self.s[self.i]
        if c == " ":
            self.skip_spaces()
            return SPACE
        if c == "{":
            return self.group()
        if c == "\\":
            return self.command()
        if c in "$`":
            raise self.fail(f"{c!r} inside mathematics")
        if c == "|":
            raise self.fail(r"a bare '|' (write \lvert x \rvert, \mid or \left| ... \right|)")
        if c == "~":
            raise self.fail(r"'~' (write \sim or \approx)")
        if c == "%":
            raise self.fail(r"a bare '%' (write \%)")
        if not _math_char_ok(c):
            raise self.fail(f"the character {c!r} (write its command, e.g. \\alpha for α)")
        self.i += 1
        return Char(c)

    def command(self) -> Node:
        self.i += 1
        if self.i >= len(self.s):
            raise self.fail("a lone backslash")
        c = self.s[self.i]
        if not (c.isascii() and c.isalpha()):
            if c == "\\":
                raise self.fail(r"'\\' outside a matrix or \substack")
            self.i += 1
            if c in _SPACES or c in _ESCAPED:
                return Cmd(c)
            raise self.fail(f"the command \\{c}")
        j = self.i
        while j < len(self.s) and self.s[j].isascii() and self.s[j].isalpha():
            j += 1
        name, self.i = self.s[self.i:j], j
        kind = COMMANDS.get(name)
        if kind is None:
            raise self.fail(f"the unknown command \\{name}")
        if kind in ("greek", "symbol", "function", "noop", "space"):
            return Cmd(name)
        if kind in ("accent", "font"):
            with self.nested():
                arg = self.argument()
            if name == "mathbb" and not all(isinstance(n, Char) and n.c.isalpha() for n in arg):
                raise self.fail(r"\mathbb of something other than letters")
            return Cmd(name, (arg,))
        if kind == "substack":
            return self.substack()
        if kind in ("frac", "binom"):
            with self.nested():
                a, b = self.argument(), self.argument()
            return Cmd(name, (a, b))
        if kind == "sqrt":
            with self.nested():
                opt = None
                self.skip_spaces()
                if self.i < len(self.s) and self.s[self.i] == "[":
                    self.i += 1
                    opt = self.parse(stops=("]",))
                    if self.i >= len(self.s):
                        raise self.fail("an unclosed '[' of \\sqrt")
                    self.i += 1
                arg = self.argument()
            return Cmd("sqrt", (arg,), opt)
        if kind == "fence":
            if name == "right":
                raise self.fail(r"a \right without its \left")
            return self.fence()
        if name == "end":
            raise self.fail(r"an \end without its \begin")
        return self.env()

    def delimiter(self) -> str:
        self.skip_spaces()
        for d in sorted(_DELIMS, key=len, reverse=True):
            if self.at(d):
                self.i += len(d)
                return d
        raise self.fail(r"a \left or \right without a delimiter")

    def fence(self) -> Fence:
        opened = self.delimiter()
        with self.nested():
            nodes = self.parse(stops=("\\right",))
            if self.i >= len(self.s):
                raise self.fail(r"a \left without its \right")
            self.i += len("\\right")
            closed = self.delimiter()
        return Fence(opened, nodes, closed)

    def env_name(self) -> str:
        self.skip_spaces()
        if self.i >= len(self.s) or self.s[self.i] != "{":
            raise self.fail(r"\begin or \end without {name}")
        j = self.s.find("}", self.i)
        if j < 0:
            raise self.fail("an unbalanced '{'")
        name, self.i = self.s[self.i + 1:j], j + 1
        return name

    def cells(self, stops: tuple[str, ...], sep: tuple[str, ...]) -> list[list[tuple]]:
        """Rows of cells up to (and not consuming) the first of ``stops``: cells end at '&' (if in
        ``sep``), rows at '\\\\'."""
        rows: list[list[tuple]] = [[]]
        while True:
            rows[-1].append(self.parse(stops=(*stops, *sep)))
            if self.i >= len(self.s):
                raise self.fail("an unclosed environment")
            if self.at("&") and "&" in sep:
                self.i += 1
            elif self.at("\\\\"):
                self.i += 2
                rows.append([])
            else:
                return rows

    def env(self) -> Env:
        name = self.env_name()
        if name not in _ENVS:
            raise self.fail(f"the environment {name!r} (allowed: {', '.join(_ENVS)})")
        with self.nested():
            rows = self.cells(("\\end",), ("&", "\\\\"))
            self.i += len("\\end")
            if self.env_name() != name:
                raise self.fail(f"an environment {name!r} closed by another name")
        rows = [r for r in rows if any(r)]
        return Env(name, tuple(tuple(r) for r in rows))

    def substack(self) -> Env:
        self.skip_spaces()
        if self.i >= len(self.s) or self.s[self.i] != "{":
            raise self.fail(r"\substack without {...}")
        self.i += 1
        with self.nested():
            rows = self.cells(("}",), ("\\\\",))
            self.i += 1
        return Env("substack", tuple(tuple(r) for r in rows))


_MATH_PUNCT = frozenset("+-=<>()[],.;:!/'*?@")


def _math_char_ok(c: str) -> bool:
    return (c.isascii() and (c.isalnum() or c in _MATH_PUNCT))


@lru_cache(maxsize=4096)
def parse_math(src: str, where: str = "math") -> tuple:
    """The tree of one math span (without its ``$``); :class:`MarkupError` if it breaks a rule."""
    if not isinstance(src, str):
        raise MarkupError(f"{where}: expected the text of a math span, got {type(src).__name__}")
    if len(src) > MAX_CHARS:
        raise MarkupError(f"{where}: a math span of {len(src)} characters (MAX_CHARS = {MAX_CHARS})")
    _no_controls(src, where)
    if not src.strip():
        raise MarkupError(f"{where}: an empty math span")
    return _MathParser(src, where).parse()


# -- The prose -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Text:
    text: str


@dataclass(frozen=True)
class Code:
    text: str


@dataclass(frozen=True)
class Math:
    src: str
    nodes: tuple


Span = Union[Text, Code, Math]

_FORBIDDEN_TEXT = set("\\_^{}|*~<>=")
_E_NOTATION = re.compile(r"(?<![\w.])\d+(?:\.\d+)?[eE][-+]?\d+\b")
_SIGNED = re.compile(r"(?:^|(?<=[\s(\[/,;:]))[-+]\d")
_TEXT_PUNCT = frozenset(" .,;:!?'\"()[]/&%#@+-–—‘’“”…°§")


def _no_controls(text: str, where: str) -> None:
    for k, ch in enumerate(text):
        if unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"):
            raise MarkupError(f"{where}: the control character {ch!r} at character {k}")


def _text_char_ok(ch: str) -> bool:
    if ch.isascii():
        return ch.isalnum() or ch in _TEXT_PUNCT
    if ch in _TEXT_PUNCT:
        return True
    cat = unicodedata.category(ch)
    if cat in ("Ll", "Lu", "Lt", "Lo"):  # letters of prose, not of mathematics
        name = unicodedata.name(ch, "")
        return not ("GREEK" in name or "MATHEMATICAL" in name or "SUBSCRIPT" in name or "SUPERSCRIPT" in name
                    or "MODIFIER" in name or "DOUBLE-STRUCK" in name or "SCRIPT CAPITAL" in name)
    return False


def _check_prose(text: str, where: str, offset: int) -> None:
    for k, ch in enumerate(text):
        if ch in _FORBIDDEN_TEXT or not _text_char_ok(ch):
            raise MarkupError(f"{where}: the character {ch!r} in prose at character {offset + k} "
                              f"({text[max(0, k - 20):k + 20]!r}); mathematics belongs in $...$")
    m = _E_NOTATION.search(text)
    if m:
        raise MarkupError(f"{where}: the number {m.group(0)!r} in e-notation in prose; write it as mathematics "
                          "(markup.sci)")
    m = _SIGNED.search(text)
    if m:
        raise MarkupError(f"{where}: the signed number {text[m.start():m.start() + 8]!r} in prose; a sign belongs "
                          "in $...$")


@lru_cache(maxsize=8192)
def parse(text: str, where: str = "text") -> tuple:
    """The spans of ``text`` (:class:`Text`, :class:`Code`, :class:`Math`); :class:`MarkupError`
    names the first rule it breaks."""
    if not isinstance(text, str):
        raise MarkupError(f"{where}: expected text, got {type(text).__name__}")
    if len(text) > MAX_CHARS:
        raise MarkupError(f"{where}: a text of {len(text)} characters (MAX_CHARS = {MAX_CHARS})")
    _no_controls(text, where)
    spans: list[Span] = []
    i = 0
    while i < len(text):
        j = min((k for k in (text.find("$", i), text.find("`", i)) if k >= 0), default=len(text))
        if j > i:
            _check_prose(text[i:j], where, i)
            spans.append(Text(text[i:j]))
        if j == len(text):
            break
        delim = text[j]
        end = text.find(delim, j + 1)
        if end < 0:
            raise MarkupError(f"{where}: an unclosed {delim!r} at character {j} ({text[j:j + 40]!r})")
        body = text[j + 1:end]
        if delim == "$":
            if body != body.strip():
                raise MarkupError(f"{where}: a math span that starts or ends with a space ({body!r}); "
                                  "GitHub does not read it as mathematics")
            spans.append(Math(body, parse_math(body, where)))
        else:
            if not body or len(body) > MAX_CODE or any(c not in CODE_CHARS for c in body):
                raise MarkupError(f"{where}: a code span {body[:60]!r} with characters outside CODE_CHARS "
                                  f"(or empty, or longer than MAX_CODE = {MAX_CODE})")
            spans.append(Code(body))
        i = end + 1
    return tuple(spans)


def check(text: str, where: str = "text") -> str:
    """``text`` itself if it is well-formed markup (else :class:`MarkupError`): for definitions."""
    parse(text, where)
    return text


# -- Rendering the mathematics ---------------------------------------------------------------------

_SUB = dict(zip("0123456789+-=()aehijklmnoprstuvxβγρφχ", "₀₁₂₃₄₅₆₇₈₉₊₋₌₍₎ₐₑₕᵢⱼₖₗₘₙₒₚᵣₛₜᵤᵥₓᵦᵧᵨᵩᵪ"))
_SUPER = dict(zip("0123456789+-=()abcdefghijklmnoprstuvwxyzTβγδφχ",
                  "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁼⁽⁾ᵃᵇᶜᵈᵉᶠᵍʰⁱʲᵏˡᵐⁿᵒᵖʳˢᵗᵘᵛʷˣʸᶻᵀᵝᵞᵟᵠᵡ"))
_SUPER.update({"*": "*", "−": "⁻", "′": "′"})
_SUB["−"] = "₋"
_RELATIONS = set("=<>")
#: A script of at most this many characters (unless all digits and signs) is set in Unicode
#: sub/superscript letters; a longer one as _(...) or ^(...), which reads better.
MAX_UNICODE_SCRIPT = 3


class _Plain:
    """Renders the tree as one line of text: Unicode (terminal) or ASCII."""

    def __init__(self, ascii_only: bool) -> None:
        self.ascii = ascii_only

    def nodes(self, nodes: Iterable[Node]) -> str:
        out: list[str] = []
        prev_operand = False
        pending_space = after_function = False
        for n in nodes:
            if n is SPACE:
                pending_space = prev_operand
                continue
            piece, operand = self.node(n, prev_operand)
            if not piece:
                continue
            if after_function and not piece.startswith(("(", "[", " ")):
                out.append(" ")
            elif pending_space and piece[0] not in " ,;)]}!'′ᵀ" and not _closes(n):
                out.append(" ")
            after_function = isinstance(n, Cmd) and COMMANDS.get(n.name) == "function"
            pending_space = False
            out.append(piece)
            prev_operand = operand
        return re.sub(r" {2,}", " ", "".join(out)).strip()

    def node(self, n: Node, prev_operand: bool) -> tuple[str, bool]:
        """(text, whether it ends an operand) of one node."""
        a = self.ascii
        if isinstance(n, Char):
            c = n.c
            if c in _RELATIONS:
                return f" {c} ", False
            if c in "+-":
                sign = c if (a or c == "+") else "−"
                return (f" {sign} " if prev_operand else sign), False
            if c in ",;":
                return c + " ", False
            if c == "'":
                return ("'" if a else "′"), True
            return c, c not in "(["
        if isinstance(n, Group):
            return self.nodes(n.nodes), True
        if isinstance(n, Script):
            base = "" if n.base is None else self.node(n.base, prev_operand)[0]
            big = isinstance(n.base, Cmd) and n.base.name in ("sum", "prod", "int", "lim")
            text = base.strip() + self.script(n.sub, "_") + self.script(n.sup, "^")
            return (text + " ", False) if big else (text, True)
        if isinstance(n, Fence) and len(n.nodes) == 1 and isinstance(n.nodes[0], Env):
            return self.matrix(n.nodes[0], "[", "]"), True
        if isinstance(n, Fence):
            delims = _ASCII_DELIMS if a else _DELIMS
            return delims[n.open] + self.nodes(n.nodes) + delims[n.close], True
        if isinstance(n, Env):
            if n.name == "substack":
                return ", ".join(self.nodes(r[0]) for r in n.rows), True
            if n.name == "cases":
                return "{" + "; ".join(" if ".join(self.nodes(c) for c in row) for row in n.rows) + "}", True
            return self.matrix(n, "(" if n.name == "pmatrix" else "[", ")" if n.name == "pmatrix" else "]"), True
        return self.command(n, prev_operand)

    def matrix(self, env: Env, opened: str, closed: str) -> str:
        return opened + "; ".join(", ".join(self.nodes(c) for c in row) for row in env.rows) + closed

    def command(self, n: Cmd, prev_operand: bool) -> tuple[str, bool]:
        a, name = self.ascii, n.name
        kind = COMMANDS.get(name)
        if name in _SPACES:
            return _SPACES[name], prev_operand
        if name in _ESCAPED:
            return ("||" if a and name == "|" else _ESCAPED[name]), True
        if kind == "greek":
            return (name if a else _GREEK[name]), True
        if kind == "symbol":
            uni, asc, spaced = _SYMBOLS[name]
            text = asc if a else uni
            if name == "top":
                return text, True
            if name in ("sum", "prod", "int"):
                return text.strip() + " ", False
            return (f" {text.strip()} " if spaced else text), name in ("infty", "ell", "partial", "nabla") or name in _CLOSING
        if kind == "function":
            return name, True
        if kind in ("noop",):
            return "", prev_operand
        if kind == "accent":
            inner = self.nodes(n.args[0])
            mark, word = _ACCENTS[name]
            if not a and len(inner) == 1:
                return inner + mark, True
            return f"{word}({inner})", True
        if kind == "font":
            inner = self.nodes(n.args[0])
            if name == "mathbb" and not a:
                return "".join(_BLACKBOARD.get(ch, ch) for ch in inner), True
            return inner, True
        if kind in ("frac", "binom"):
            num, den = (self.nodes(x) for x in n.args)
            if kind == "binom":
                return f"C({num}, {den})", True
            return f"{_wrap(num)}/{_wrap(den)}", True
        if kind == "sqrt":
            inner = self.nodes(n.args[0])
            root = "" if n.opt is None else self.nodes(n.opt)
            if a:
                return (f"({inner})^(1/{root})" if root else f"sqrt({inner})"), True
            prefix = {"3": "∛", "4": "∜"}.get(root, (self.script(n.opt, "^") if root else "") + "√")
            return prefix + (inner if _atomic(inner) else f"({inner})"), True
        return "\\" + name, True  # pragma: no cover - every command kind is handled above

    def script(self, nodes: tuple | None, kind: str) -> str:
        if nodes is None:
            return ""
        if len(nodes) == 1 and isinstance(nodes[0], Cmd) and nodes[0].name == "top" and kind == "^":
            return "^T" if self.ascii else "ᵀ"
        text = self.nodes(nodes)
        compact = text.replace(" ", "")
        table = _SUB if kind == "_" else _SUPER
        # Unicode scripts for short ones (d_k, x², n⁻¹); longer ones read better as ^(...)
        short = len(compact) <= MAX_UNICODE_SCRIPT or all(ch in "0123456789+-−=()" for ch in compact)
        if not self.ascii and compact and short and all(ch in table for ch in compact):
            return "".join(table[ch] for ch in compact)
        return kind + (compact if len(compact) == 1 else f"({text})")


def _atomic(text: str) -> bool:
    return len(text) <= 1 or bool(re.fullmatch(r"[\w.]+", text)) or bool(re.fullmatch(r"\w[₀-₉ₐ-ₜᵢ-ᵪ]+", text))


def _wrap(text: str) -> str:
    """Parenthesise a numerator or denominator that is not a single term."""
    if _atomic(text) or (text.startswith("(") and text.endswith(")") and text.count("(") == 1):
        return text
    if re.fullmatch(r"[^\s+\-−/=<>]+", text):
        return text
    return f"({text})"


def math_to_unicode(nodes: tuple) -> str:
    return _Plain(False).nodes(nodes)


def math_to_ascii(nodes: tuple) -> str:
    return _Plain(True).nodes(nodes)


def _tex_nodes(nodes: Iterable[Node], md: bool) -> str:
    return "".join(_tex(n, md) for n in nodes)


def _arg(nodes: tuple, md: bool) -> str:
    return "{" + _tex_nodes(nodes, md) + "}"


#: Fence delimiters that would end a Markdown table cell, and their commands.
_MD_FENCES = {"|": "\\vert", "\\|": "\\Vert"}


def _tex(n: Node, md: bool) -> str:
    """Canonical LaTeX of one node (``md``: Markdown, where '|' would end a table cell)."""
    if n is SPACE:
        return " "
    if isinstance(n, Char):
        return n.c
    if isinstance(n, Group):
        return _arg(n.nodes, md)
    if isinstance(n, Script):
        base = "{}" if n.base is None else _tex(n.base, md).rstrip()
        out = base
        if n.sub is not None:
            out += "_" + _arg(n.sub, md)
        if n.sup is not None:
            out += "^" + _arg(n.sup, md)
        return out
    if isinstance(n, Fence):
        delim = _MD_FENCES if md else {}
        return f"\\left{delim.get(n.open, n.open)} {_tex_nodes(n.nodes, md)} \\right{delim.get(n.close, n.close)}"
    if isinstance(n, Env):
        if n.name == "substack":
            return "\\substack{" + " \\\\ ".join(_tex_nodes(r[0], md) for r in n.rows) + "}"
        body = " \\\\ ".join(" & ".join(_tex_nodes(c, md) for c in row) for row in n.rows)
        return f"\\begin{{{n.name}}}{body}\\end{{{n.name}}}"
    name = n.name
    if name in _SPACES or name in _ESCAPED:
        if md and name == "|":
            return "\\Vert "
        return "\\" + name
    kind = COMMANDS[name]
    if kind == "sqrt":
        opt = "" if n.opt is None else "[" + _tex_nodes(n.opt, md) + "]"
        return f"\\sqrt{opt}{_arg(n.args[0], md)}"
    if name in ("mid", "vert", "lvert", "rvert") and md:
        return "\\vert "
    if n.args:
        return "\\" + name + "".join(_arg(a, md) for a in n.args)
    return "\\" + name + " "


def math_to_latex(nodes: tuple, *, markdown: bool = False) -> str:
    return re.sub(r" +", " ", _tex_nodes(nodes, markdown)).strip()


# -- Rendering a text ------------------------------------------------------------------------------

_LATEX_TEXT = {"&": r"\&", "%": r"\%", "#": r"\#", "[": "[", "]": "]"}
_LATEX_CODE = {"_": r"\_", "#": r"\#", "%": r"\%", "&": r"\&", "$": r"\$", "{": r"\{", "}": r"\}",
               "~": r"\textasciitilde{}", "^": r"\textasciicircum{}", "\\": r"\textbackslash{}",
               "<": r"\textless{}", ">": r"\textgreater{}", "-": "-{}", "'": r"\textquotesingle{}",
               '"': r"\textquotedbl{}"}
_ASCII_TEXT = {"–": "-", "—": "--", "‘": "'", "’": "'", "“": '"', "”": '"', "…": "...", "°": " deg", "§": "S"}


def _render(text: Any, where: str, math: Callable, code: Callable, prose: Callable) -> str:
    """Each span of ``text`` (a string, or its parsed spans) through the function of its kind."""
    spans = parse(text, where) if isinstance(text, str) else tuple(text)
    kinds = {Math: lambda s: math(s.nodes), Code: lambda s: code(s.text), Text: lambda s: prose(s.text)}
    return "".join(kinds[type(s)](s) for s in spans)


def to_unicode(text: str, where: str = "text") -> str:
    """One line for a terminal that encodes Unicode."""
    return _render(text, where, math_to_unicode, str, str)


def to_ascii(text: str, where: str = "text") -> str:
    """One line of ASCII (a terminal that cannot encode Unicode)."""
    return _render(text, where, math_to_ascii, str, plain_ascii)


def plain_ascii(text: str) -> str:
    """Prose as ASCII: typographic marks replaced, accents dropped, anything else as '?'."""
    out = []
    for ch in text:
        if ch.isascii():
            out.append(ch)
        elif ch in _ASCII_TEXT:
            out.append(_ASCII_TEXT[ch])
        else:
            base = unicodedata.normalize("NFKD", ch).encode("ascii", "ignore").decode()
            out.append(base or "?")
    return "".join(out)


def to_markdown(text: str, where: str = "text", *, table: bool = False) -> str:
    """Markdown for Jupyter and GitHub: prose escaped, mathematics as ``$...$``, code in
    backticks; ``table=True`` for a cell of a Markdown table."""
    return _render(text, where, lambda nodes: "$" + math_to_latex(nodes, markdown=True) + "$",
                   lambda code: "`" + (code.replace("|", "\\|") if table else code) + "`", str)


def to_latex(text: str, where: str = "text") -> str:
    """LaTeX for the export: prose escaped, mathematics inline, code in ``\\texttt``."""
    return _render(text, where, lambda nodes: "$" + math_to_latex(nodes) + "$",
                   lambda code: r"\texttt{" + "".join(_LATEX_CODE.get(c, c) for c in code) + "}",
                   lambda prose: "".join(_LATEX_TEXT.get(c, c) for c in prose))


MEDIA = ("unicode", "ascii", "markdown", "latex")
_RENDERERS = {"unicode": to_unicode, "ascii": to_ascii, "markdown": to_markdown, "latex": to_latex}
_LATEX_ANY = {**_LATEX_CODE, "&": r"\&", "%": r"\%", "#": r"\#", "-": "-"}


def escape(text: Any, medium: str) -> str:
    """Text that is not markup (read from a file, or an old report) shown literally: control
    characters as escapes, and every character the medium would interpret escaped."""
    s = "".join(ch if unicodedata.category(ch)[0] != "C" else repr(ch)[1:-1] for ch in str(text))
    if medium == "ascii":
        return plain_ascii(s)
    if medium == "latex":
        return "".join(_LATEX_ANY.get(c, c) for c in plain_ascii(s))
    if medium == "markdown":
        return re.sub(r"([\\`*_{}\[\]<>()#+!|$~^])", r"\\\1", s)
    return s


def render(text: Any, medium: str, *, table: bool = False) -> str:
    """``text`` for ``medium`` (one of :data:`MEDIA`): marked-up text rendered, anything else (a
    text that the markup refuses, e.g. from a file written by another version) escaped."""
    if medium not in _RENDERERS:
        raise ValueError(f"medium must be one of {MEDIA}, got {medium!r}")
    try:
        spans = parse(text, "text") if isinstance(text, str) else None
    except MarkupError:
        spans = None
    if spans is None:
        return escape(text, medium)
    if medium == "markdown":
        return to_markdown(spans, table=table)
    return _RENDERERS[medium](spans)


# -- Writing marked-up text from code --------------------------------------------------------------


def num(x: float, spec: str = ".3g") -> str:
    """A number as a math span (its sign and exponent typeset): ``num(-0.23, ".2f")`` is ``$-0.23$``."""
    return f"${_num_tex(x, spec)}$"


def _num_tex(x: float, spec: str) -> str:
    text = format(x, spec)
    m = re.fullmatch(r"([-+]?\d+(?:\.\d+)?)[eE]([-+]?)0*(\d+)", text)
    if m:
        mant, sign, exp = m.groups()
        exp_tex = ("-" if sign == "-" else "") + exp
        return f"10^{{{exp_tex}}}" if mant in ("1", "1.0") else f"{mant} \\times 10^{{{exp_tex}}}"
    if text in ("inf", "-inf"):
        return text.replace("inf", "\\infty")
    return text


def pm(x: float, se: float, spec: str = ".3f") -> str:
    """``x ± se`` as one math span."""
    return f"${_num_tex(x, spec)} \\pm {_num_tex(se, spec)}$"


def sci(x: float, digits: int = 1) -> str:
    """A number in scientific notation as a math span: ``sci(2.2e-16)`` is ``$2.2 \\times 10^{-16}$``."""
    return num(x, f".{digits}e")
