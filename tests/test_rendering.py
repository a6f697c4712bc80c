"""Every text a reader sees, rendered to every medium from one source (issue 21): the text fields of
a quick run of every claim and every text of every derivation are markup that parses, and their
renderings hold no control characters, no unbalanced delimiters, no SymPy names (``_{bar}``,
``m_{shift}``) and no placeholder for a formula. One title and one headline per claim in the
terminal table, report.md and the LaTeX document."""

from __future__ import annotations

import re
import unicodedata

import pytest

from proofs import CLAIM_IDS, all_derivations, markup
from verify.outputs.latex import text

#: The fields of report.json that are marked-up text (everything a referee reads).
TEXT_KEYS = {"title", "stated", "headline", "summary", "finding", "statement", "derived", "regime",
             "restored_by", "reason", "boundary", "description", "why", "what", "effect"}
#: A SymPy or Python name that leaked into what a reader reads: a multi-letter word set as a subscript,
#: a multi-letter capital name with a subscript (``WK_{11}``), a name of mixed case with a subscript
#: (``bV_{1 1}``, ``Wa_{11}``), a module's attribute (``mpmath.polylog``), Python's power (``r**2``).
LEAK = re.compile(r"_\{(bar|hat|shift|lo|hi|star|tilde|sum|prod|sq|mean|min|max|corr|orth|frame)\}"
                  r"|(?<![\\\w])[A-Z]{2,}_\{|(?<![\\\w])(?:[a-z]+[A-Z]|[A-Z][a-z]+)[A-Za-z]*\d*_\{"
                  r"|\b(mpmath|sympy|numpy|np|sp|math|torch)\.\w|\*\*")
PLACEHOLDERS = ("too wide to read", "characters of LaTeX", "formula of ")


def _texts(node, path=""):
    """(path, text) of every marked-up string field of a report document."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ("derivation", "figures", "params", "data", "rows", "relation", "latex", "computed", "detail"):
                continue
            if isinstance(value, str) and key in TEXT_KEYS:
                yield f"{path}.{key}", value
            else:
                yield from _texts(value, f"{path}.{key}")
    elif isinstance(node, list):
        for k, value in enumerate(node):
            if isinstance(value, str) and path.endswith(("assumptions", "restored_by")):
                yield f"{path}[{k}]", value
            else:
                yield from _texts(value, f"{path}[{k}]")


@pytest.fixture(scope="module")
def doc(quick_run):
    from verify.outputs.report import document

    return document([quick_run(c)[0] for c in CLAIM_IDS], seed=0, quick=True)


def _problems(where: str, text: str) -> list[str]:
    out = []
    try:
        markup.check(text, where)
    except markup.MarkupError as exc:
        return [str(exc)]
    for medium in markup.MEDIA:
        rendered = markup.render(text, medium)
        bad = [c for c in rendered if unicodedata.category(c)[0] == "C"]
        if bad:
            out.append(f"{where} ({medium}): control characters {bad!r}")
        if medium == "ascii" and not rendered.isascii():
            out.append(f"{where} (ascii): not ASCII")
        if medium in ("unicode", "ascii") and any(c in rendered for c in "$`\\"):
            out.append(f"{where} ({medium}): markup left: {rendered[:80]!r}")
        if medium == "latex" and (rendered.count("{") != rendered.count("}") or rendered.count("$") % 2):
            out.append(f"{where} (latex): unbalanced: {rendered[:80]!r}")
        if LEAK.search(rendered):
            out.append(f"{where} ({medium}): a SymPy or Python name: {LEAK.search(rendered).group(0)}")
        if any(p in rendered for p in PLACEHOLDERS):
            out.append(f"{where} ({medium}): a placeholder for a formula")
    return out


def test_every_text_field_of_a_quick_run_renders_to_every_medium(doc):
    texts = list(_texts(doc))
    assert len(texts) > 200              # every claim's headline, parts, corrections, limits, ...
    problems = [p for where, text in texts for p in _problems(where, text)]
    assert not problems, "\n".join(problems[:20])


def test_every_text_of_every_derivation_is_markup_and_prints_its_symbols():
    problems = []
    for der in all_derivations():
        texts = [("title", der.title), ("stated", der.stated)]
        texts += [(f"assumption {a.name}", a.statement) for a in der.assumptions.values()]
        texts += [(f"step {s.name}", s.why) for s in der.steps if s.why]
        texts += [(f"result {r.name}", r.description) for r in der.results.values() if r.description]
        texts += [(f"comparison {c.name}.{k}", getattr(c, k)) for c in der.comparisons for k in ("stated", "derived")]
        texts += [(f"group {g.name}", g.description) for g in der.groups.values() if g.description]
        texts += [(f"symbol {k}", v) for k, v in der.glossary.items()]
        problems += [p for where, text in texts for p in _problems(f"{der.claim} {where}", text)]
        for item in [*der.steps, *der.results.values()]:
            for tex in (item.latex(), item.latex(macros=True)):     # every medium prints from one of these
                if LEAK.search(tex):
                    problems.append(f"{der.claim} {item.name}: a SymPy name {LEAK.search(tex).group(0)}")
    assert not problems, "\n".join(problems[:20])


def test_every_symbol_of_every_derivation_has_a_meaning():
    from proofs.__main__ import describe

    undefined = {der.claim: [line for line in describe(der).splitlines() if "(not defined)" in line]
                 for der in all_derivations()}
    assert not any(undefined.values()), {k: v for k, v in undefined.items() if v}


@pytest.fixture(scope="module")
def views(doc):
    """The quick run's report as the terminal, report.md and the LaTeX document show it."""
    from verify.outputs.latex import render_document
    from verify.outputs.report import markdown, table

    return {"terminal": table(doc, width=100000), "report.md": markdown(doc), "latex": render_document(doc)}


#: What each claim's title and headline read as in each view (the LaTeX table's row: id and title, headline).
TITLE_AND_HEADLINE = {
    "terminal": lambda c: [markup.render(c["short_headline"], "unicode")],
    "report.md": lambda c: [f"## {c['id']}: {markup.render(c['title'], 'markdown')}",
                            markup.render(c["headline"], "markdown")],
    "latex": lambda c: [f"\\subsection{{{c['id']}: {text(c['title'])}}}",
                        f"\\small {text(c['id'] + ' ' + c['title'])} &", f"\\small {text(c['headline'])} \\\\"],
}


@pytest.mark.parametrize("view", TITLE_AND_HEADLINE)
def test_one_title_and_one_headline_per_claim_in_every_view(doc, views, view):
    for c in doc["claims"]:
        for shown in TITLE_AND_HEADLINE[view](c):
            assert shown in views[view], (c["id"], shown)


def test_every_design_choice_shows_its_reason_in_every_view(doc, views):
    """Each design entry of every experiment is a (value, reason) pair in report.json; report.md
    and the LaTeX document print both (rendered for their medium)."""
    md, tex = " ".join(views["report.md"].split()), " ".join(views["latex"].split())
    entries = [(c["id"], p["id"], k, v) for c in doc["claims"] for p in c["evidence"]["parts"]
               for k, v in (p.get("design") or {}).items() if isinstance(v, dict)]
    assert len(entries) >= 20                 # C5, C6, C7 and C9 state their designs
    missing = [(c, p, k) for c, p, k, v in entries
               if " ".join(markup.render(v["reason"], "markdown").split()) not in md
               or " ".join(markup.render(v["reason"], "latex").split()) not in tex]
    assert not missing, missing[:10]


def test_a_steps_stored_display_is_what_the_report_would_typeset_from_its_latex():
    """The report typesets each derivation step from the ``display`` its dict stores (written when
    the step is derived, loaded from the cache after): the report's own reading of the step's LaTeX,
    for every step of every claim; a step whose LaTeX the markup cannot read is shown as code."""
    from proofs.core import display_latex
    from verify.outputs.document import Formula, Para, _step

    for der in all_derivations():
        for k, step in enumerate(der.to_dict()["steps"], 1):
            assert isinstance(step["display"], str) and step["display"] == display_latex(step["latex"]), step["name"]
            assert _step(k, step, der.claim)[1] == Formula(step["display"], der.claim, "step", step["name"])
    broken = {"name": "s", "method": "simplify", "status": "checked", "relation": "x + y", "latex": r"x = \unknown{y}",
              "display": display_latex(r"x = \unknown{y}")}
    assert broken["display"] is None and _step(1, broken, "C1")[1] == Para("`x + y`")
