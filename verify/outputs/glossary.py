"""The glossary a reader needs for the headlines: every symbol in their mathematics, with its meaning.

:func:`symbols` reads the identifiers out of marked-up text and :data:`GLOSSARY` says what each
means in the paper's notation; a headline symbol without an entry fails the suite (tests/test_reader.py).
"""

from __future__ import annotations

from typing import Any, Iterable

from proofs import markup

__all__ = ["GLOSSARY", "symbols", "glossary_rows", "INDEXED"]

#: Letters whose subscript is an index or a name of the paper's notation, not a symbol of its own
#: ($W_K$, $V_h$, $C_{hh'}$, $b_h$, $R^2$ has no subscript).
INDEXED = frozenset("WVCb")

#: symbol (as :func:`symbols` names it) -> (the symbol in markup, its meaning in markup)
GLOSSARY: dict[str, tuple[str, str]] = {
    "H": ("$H$", "the number of heads"),
    "h": ("$h$", "a head's index, $h = 1, \\ldots, H$"),
    "d": ("$d$", "the input (model) dimension"),
    "d_k": ("$d_k$", "the head (key) dimension: each head projects onto $d_k$ directions"),
    "D": ("$D$", "the budget of directions, $D = H d_k$"),
    "n": ("$n$", "the sample size: the number of keys a head averages over"),
    "x": ("$x$", "an input (query point) in $\\mathbb{R}^d$"),
    "f": ("$f$", "the regression function (the target), $y = f(x) + \\varepsilon$"),
    "y": ("$y$", "a response, $y = f(x) + \\varepsilon$"),
    "e": ("$e$", "Euler's number"),
    "r": ("$r$", "the ratio of geometric head weights, $\\alpha_h \\propto r^{h}$"),
    "s": ("$s$", "the softmax kernel's scale (inverse temperature), $1/\\sqrt{d_k}$ in attention"),
    "c": ("$c$", "a multiple of the softmax scale $1/\\sqrt{d_k}$"),
    "z": ("$z$", "a figure over its standard error: how many standard errors an effect is from 0"),
    "W": ("$W$", "a projection matrix; $W_Q^h$, $W_K^h$, $W_V^h$, $W_O^h$: head $h$'s query, key, value and output "
                 "blocks"),
    "I": ("$I$", "the identity matrix"),
    "V": ("$V_h$", "head $h$'s variance $\\mathrm{Var}\\, \\hat{f}_h$ ($V$: a common value)"),
    "B": ("$B$", "the ensemble's bias; $B^2$ its square, the part of the MSE that no head diversity changes"),
    "b": ("$b_h$", "head $h$'s bias $E \\hat{f}_h - f$"),
    "C": ("$C_{hh'}$", "the covariance of heads $h$ and $h'$"),
    "R": ("$R^2$", "how much of the target an estimator learns: $1 -$ excess MSE $/ \\mathrm{Var}\\, f$"),
    "E": ("$E$", "expectation"),
    "MSE": ("$\\mathrm{MSE}$", "the mean squared error of the ensemble, integrated over the design"),
    "HDI": ("$\\mathrm{HDI}$", "the head diversity index, $1 -$ the mean overlap of the heads' key subspaces: "
                               "0 for identical heads, 1 for orthogonal ones"),
    "WDI": ("$\\mathrm{WDI}$", "the weighted diversity index of non-uniform head weights"),
    "Var": ("$\\mathrm{Var}$", "variance; $\\mathrm{Var}\\, f$: the target's variance under the design density"),
    "alpha": ("$\\alpha_h$", "head $h$'s weight in the ensemble $\\sum_h \\alpha_h \\hat{f}_h$"),
    "beta": ("$\\beta$", "the exponent of rising head variances, $V_h \\propto h^\\beta$"),
    "gamma": ("$\\gamma_h$", "head $h$'s consistency rate, $\\mathrm{MSE}_h \\propto n^{-\\gamma_h}$"),
    "rho": ("$\\rho_{hh'}$", "the overlap of two heads' key subspaces, the mean $\\cos^2$ of their principal angles"),
    "sigma": ("$\\sigma$", "the noise standard deviation"),
    "varphi": ("$\\varphi$", "the golden ratio $(1 + \\sqrt{5})/2$"),
    "phi": ("$\\varphi$", "the golden ratio $(1 + \\sqrt{5})/2$"),
    "kappa": ("$\\kappa$", "a von Mises kernel's concentration on the torus design"),
    "varepsilon": ("$\\varepsilon$", "the noise"),
    "log": ("$\\log$", "the natural logarithm"),
    "exp": ("$\\exp$", "the exponential"),
    "min": ("$\\min$", "the least value"),
    "max": ("$\\max$", "the greatest value"),
}


def _walk(nodes: Iterable[Any], out: list[str]) -> None:
    for node in nodes:
        if isinstance(node, markup.Char):
            if node.c.isalpha():
                out.append(node.c)
        elif isinstance(node, markup.Cmd):
            if node.name in ("mathrm", "operatorname", "text") and node.args:
                word = "".join(n.c for n in node.args[0] if isinstance(n, markup.Char))
                if word.isalpha():
                    out.append(word)
                continue
            if node.name in markup._GREEK or node.name in ("log", "exp", "min", "max"):
                out.append(node.name)
            for a in node.args:
                _walk(a, out)
        elif isinstance(node, markup.Script):
            base = node.base
            sub = [n.c for n in node.sub or () if isinstance(n, markup.Char)]
            if isinstance(base, markup.Char) and base.c == "d" and sub == ["k"]:
                out.append("d_k")
            else:
                _walk([base], out)
                if not (isinstance(base, markup.Char) and base.c in INDEXED):
                    _walk(node.sub or (), out)
            _walk(node.sup or (), out)
        elif isinstance(node, (markup.Group, markup.Fence)):
            _walk(node.nodes, out)


def symbols(text: str) -> list[str]:
    """The identifiers of the mathematics of marked-up ``text``, each once, in order of appearance
    (``d_k`` as one symbol; a subscript of $W$, $V$, $C$, $b$ is an index, not a symbol). A text
    that is not markup (a report of another version) has none."""
    out: list[str] = []
    try:
        spans = markup.parse(text, "glossary")
    except markup.MarkupError:
        return []
    for span in spans:
        if isinstance(span, markup.Math):
            _walk(span.nodes, out)
    return list(dict.fromkeys(out))


def glossary_rows(texts: Iterable[str]) -> list[tuple[str, str]]:
    """(symbol, meaning) for every glossary symbol used in ``texts``, in the glossary's order; the
    head diversity index and the MSE always (every claim is about them)."""
    used = {"HDI", "MSE"}
    for t in texts:
        used |= set(symbols(t))
    return list(dict.fromkeys((sym, meaning) for key, (sym, meaning) in GLOSSARY.items() if key in used))
