"""The one walk of a report document: ``report.json`` as a list of blocks that every medium renders.

:func:`walk` reads the document (never the claim objects) in a referee's order: per claim the
paper's statement, the verdict in plain words, what to write instead, the assumptions (common ones,
then the alternatives the candidate models combine), limits, what is undecided and what would
decide it, the deciding plot; the glossary; then the appendices (every part's evidence, the
derivations). Every text is markup (:mod:`proofs.markup`), typeset by each renderer
(:mod:`verify.outputs.render`, :mod:`verify.outputs.latex`).
"""

from __future__ import annotations

from collections import namedtuple
from typing import Any

from proofs import markup
from verify.outputs.glossary import glossary_rows

__all__ = ["Heading", "Para", "Field", "Items", "Table", "Figure", "Formula", "Fold", "Block", "walk", "verdict_rows",
           "VERDICT_WORDS", "plain_verdict"]

Heading = namedtuple("Heading", "level text anchor", defaults=("",))
Para = namedtuple("Para", "text")
#: A labelled paragraph (the label set in bold).
Field = namedtuple("Field", "label text")
Items = namedtuple("Items", "items label", defaults=("",))
Table = namedtuple("Table", "head rows")
#: A plot (its PNG, relative to the report's folder) and what it shows.
Figure = namedtuple("Figure", "path caption")
#: Display mathematics: a derivation's step or result (``latex`` as SymPy printed it).
Formula = namedtuple("Formula", "latex claim kind name", defaults=("", "", ""))
#: Blocks a reader opens on demand (HTML ``details``; a plain section elsewhere).
Fold = namedtuple("Fold", "summary blocks")

Block = Heading | Para | Field | Items | Table | Figure | Formula | Fold

#: A verdict in plain words: what a reader may conclude from it.
VERDICT_WORDS = {
    "exact": "holds exactly: proved symbolically without a model assumption and confirmed numerically to rounding",
    "holds under model": "holds under the model assumptions named below: proved under them, and they are stated",
    "approximate": "supported by measurement alone: an effect measured with its size, no proof",
    "refuted": "fails within its own scope: a counterexample anyone can replay, and what would restore it",
    "undecided": "no experiment here could decide it either way: see what would decide it",
    "not checkable": "could not be checked: see the reason",
    "crashed": "its check crashed: no verdict",
}
_ROLE_WORDS = {"core": "core: sets the verdict", "detail": "detail: a stated constant, convention or word",
               "premise": "premise: is the model true of real NW heads?", "scope": "scope: outside the stated scope"}
_ROLE_ORDER = {"core": 0, "detail": 1, "premise": 2, "scope": 3}
AGREEMENT_WORDS = {"rounding": "agrees to floating-point rounding", "statistical": "agrees within the Monte Carlo "
                    "error", "measured": "a measurement", "disagree": "the numbers contradict what they check"}
_SYMBOLIC_WORDS = {"proved": "every step checked", "proved-with-unchecked-steps": "some steps unchecked",
                   "failed": "a step failed"}
_HOLDS_WORDS = {True: "holds", False: "does not hold", None: "undecided"}
#: Step-checking methods that test a relation at random points rather than prove it.
SAMPLED_METHODS = ("rational",)


def plain_verdict(verdict: str) -> str:
    """The verdict in a sentence a reader can act on."""
    return VERDICT_WORDS.get(verdict, verdict)


def verdict_rows(doc: dict) -> list[dict[str, Any]]:
    """Per claim: id, title, verdict, headline and the counts of corrections, premise findings,
    limits and undecided parts beside the core; crashed claims with their error's last line."""
    rows = [{"id": c["id"], "title": c.get("title", ""), "verdict": c["verdict"], "headline": c["headline"],
             "short": c.get("short_headline") or c["headline"],
             "corrections": len(c["corrections"]), "premise": len(c["premise"]), "limits": len(c["limits"]),
             "undecided": sum(u["role"] != "core" for u in c.get("undecided") or [])}
            for c in doc["claims"]]
    rows += [{"id": k, "title": "", "verdict": "crashed", "headline": (v.strip().splitlines() or [""])[-1],
              "short": (v.strip().splitlines() or [""])[-1][:300],
              "corrections": 0, "premise": 0, "limits": 0, "undecided": 0} for k, v in doc.get("crashed", {}).items()]
    return rows


def counts(row: dict, sep: str = "/") -> str:
    """corrections/premise/limits/undecided, as every view prints them."""
    return sep.join(str(row[k]) for k in ("corrections", "premise", "limits", "undecided"))


def _instead(c: dict) -> list[str]:
    """What a paper should write instead: each correction's and limit's sentence (its declared
    ``instead``, else the derived form), each refuted core's restoring assumption."""
    out = [x.get("instead") or f"{x['derived']} (where the paper states {x['stated']})" for x in c["corrections"]]
    out += [f"The claim holds when: {r}" for r in c.get("restored_by", [])]
    out += [x["instead"] for x in c["limits"] if x.get("instead")]
    return out


#: The label of the alternatives' list: each candidate model takes one option of each group.
ALTERNATIVES_LABEL = "One of each of these alternatives (the candidate models combine them)"


def split_alternatives(assumptions: list[str], der: dict | None) -> tuple[list[str], dict[str, list[str]]]:
    """``assumptions`` as those common to every candidate model and, per group of alternatives (an
    assumption's ``choice`` in ``der``), its options; a group with one option here counts as common."""
    choice = {a["statement"]: a["choice"] for a in (der or {}).get("assumptions", [])
              if isinstance(a.get("choice"), str) and a["choice"] and isinstance(a.get("statement"), str)}
    groups: dict[str, list[str]] = {}
    for a in assumptions:
        if a in choice:
            groups.setdefault(choice[a], []).append(a)
    groups = {g: opts for g, opts in groups.items() if len(opts) > 1}
    alternative = {a for opts in groups.values() for a in opts}
    return [a for a in assumptions if a not in alternative], groups


def _options(groups: dict[str, list[str]]) -> tuple[str, ...]:
    """Each group of alternatives on one line, its options joined by "or" (an option that opens
    with the group's name, "variance exponent $s = d$", without it)."""
    return tuple(f"{g}: {' or '.join(o.removeprefix(g + ' ') for o in opts)}" for g, opts in groups.items())


def _core(c: dict) -> list[dict]:
    """The core parts of the claim's deciding reading (whose assumptions the claim lists)."""
    return [p for p in c["evidence"]["parts"]
            if p["role"] == "core" and (p.get("reading") or "") == (c.get("reading") or "")]


def _assumptions_label(c: dict) -> str:
    """What the assumption list is for: the claim when it holds under them, else the core parts that
    hold (and those refuted) under them, so that a refuted claim does not read as holding."""
    if c["verdict"] == "holds under model":
        return "It holds only under these assumptions"
    core = [p for p in _core(c) if p.get("assumptions")]
    held = [p["label"] for p in core if p["outcome"] == "holds under model"]
    failed = [p["label"] for p in core if p["outcome"] == "refuted"]
    if not held:
        return "Its core parts rest on these assumptions"
    return (f"The {' and the '.join(held)} holds only under these assumptions"
            + (f"; the {' and the '.join(failed)} is refuted under them" if failed else ""))


def _sampled(c: dict, parts: list[dict]) -> list[str]:
    """The steps of ``parts`` that were checked at random points (:data:`SAMPLED_METHODS`), once each."""
    der = c["evidence"].get("derivation") or {}
    sampled = {s["name"] for s in der.get("steps", []) if s["method"] in SAMPLED_METHODS}
    return list(dict.fromkeys(n for p in parts for n in (p.get("symbolic") or {}).get("steps", []) if n in sampled))


def _sampled_note(names: list[str]) -> str:
    return (f"{len(names)} step{'s' if len(names) > 1 else ''} ({', '.join(f'`{n}`' for n in names)}) checked "
            "at random rational points: a test, not a proof")


def _verdict(c: dict) -> str:
    """The verdict in words; where the words say proved, the steps of its core that were only tested."""
    words = f"{c['verdict']}: {plain_verdict(c['verdict'])}"
    sampled = _sampled(c, _core(c)) if "proved" in words else []
    return words + (f"; {_sampled_note(sampled)}" if sampled else "")


def _summary(c: dict) -> list[Block]:
    """A claim in the referee's order (module docstring)."""
    out: list[Block] = [Heading(2, f"{c['id']}: {c['title']}", c["id"]), Field("The paper states", c["stated"]),
                        Field("Verdict", _verdict(c)), Field("In one line", c["headline"])]
    if c.get("readings"):
        out.append(Items(tuple(f"reading {r['id']}, {r['description']}: {r['verdict']}" for r in c["readings"]),
                         "Readings"))
    instead = _instead(c)
    if instead:
        out.append(Items(tuple(instead), "What to write instead"))
    if c["assumptions"]:
        common, groups = split_alternatives(c["assumptions"], c["evidence"].get("derivation"))
        if common:
            out.append(Items(tuple(common), _assumptions_label(c)))
        if groups:
            out.append(Items(_options(groups), ALTERNATIVES_LABEL))
    if c["premise"]:
        out.append(Items(tuple(f"{x['label']}: {x['outcome']}: {x['finding']} (measured in: {x['regime']})"
                               for x in c["premise"]), "Premise on real heads"))
    if c["limits"]:
        out.append(Items(tuple(f"{x['label']}: {x['finding']}. It holds under: {x['boundary']}" for x in c["limits"]),
                         "Limits (outside the stated scope)"))
    if c.get("undecided"):
        out.append(Items(tuple(f"{x['label']}: {x['reason']}" for x in c["undecided"]),
                         "Undecided: what could not be decided, and what would decide it"))
    plots, captions = c["evidence"].get("plots") or {}, c["evidence"].get("captions") or {}
    if c.get("figure") in plots:
        out.append(Figure(plots[c["figure"]], captions.get(c["figure"], "")))
    return out


def _code(text: str) -> str:
    """``text`` in code type (the characters a code span may hold; at most its length)."""
    safe = "".join(c for c in text if c in markup.CODE_CHARS and c != "`")[:markup.MAX_CODE].strip()
    return f"`{safe}`" if safe else "(not shown)"


def _name(key: str) -> str:
    """A configuration's name (a key of the report) as markup: itself if it is, else in code type."""
    try:
        return markup.check(key, "name")
    except markup.MarkupError:
        return _code(key)


def _symbolic(s: dict, sampled: list[str]) -> str:
    status = _SYMBOLIC_WORDS.get(s["status"], s["status"])
    groups = f" (the derivation's groups {', '.join(f'`{g}`' for g in s['groups'])})" if s.get("groups") else ""
    tested = f"; {_sampled_note(sampled)}" if sampled else ""
    return f"{s['n_checked']} of {s['n_steps']} steps checked, {status}{groups}{tested}"


def _assumption_line(assumptions: list[str], der: dict | None) -> str:
    """A part's model assumptions on one line: the common ones, then each group of alternatives."""
    common, groups = split_alternatives(assumptions, der)
    alternatives = [f"one of each: {'; '.join(_options(groups))}"] if groups else []
    return "model assumptions: " + "; ".join(common + alternatives)


def _part(c: dict, p: dict) -> list[Block]:
    claim, der = c["id"], c["evidence"].get("derivation")
    role = _ROLE_WORDS.get(p["role"], p["role"]) + (f", reading {p['reading']}" if p.get("reading") else "")
    rows: list[str] = [f"role: {role}", f"statement: {p['statement']}"]
    if p.get("finding"):
        rows.append(f"finding: {p['finding']}")
    if p.get("stated"):
        rows.append(f"the paper states {p['stated']}; derived: {p['derived']}")
    if p.get("symbolic"):
        rows.append("symbolic: " + _symbolic(p["symbolic"], _sampled(c, [p])))
        rows += [f"against the statement, {_HOLDS_WORDS[x['holds']]}: {x['derived']}"
                 for x in p["symbolic"].get("comparisons", [])]
    if p.get("numeric"):
        n = p["numeric"]
        rows.append(f"numeric, {AGREEMENT_WORDS.get(n['agreement'], n['agreement'])}: {n['summary']}")
    if p.get("r2"):
        rows.append("how much of the target each compared configuration learns, $R^2$, one minus the excess "
                    "$\\mathrm{MSE}$ over $\\mathrm{Var}\\, f$: "
                    + ", ".join(f"{_name(k)} ${v:.3f}$" for k, v in p["r2"].items()))
    for key, value in (p.get("design") or {}).items():
        v = value if isinstance(value, dict) else {"value": value}
        what = ", ".join(map(str, v["value"])) if isinstance(v.get("value"), list) else v.get("value")
        said = [str(x) for x in (what, v.get("reason")) if x not in (None, "")]
        rows.append(f"design, {key.replace('_', ' ')}: " + (f"{said[0]} ({said[1]})" if len(said) == 2 else said[0]))
    for kind in ("positive", "negative"):
        ctl = (p.get("controls") or {}).get(kind)
        if ctl:
            rows.append(f"{kind} control: {ctl.get('what', '')}; measured: {ctl.get('effect', '')}")
    if p.get("regime"):
        rows.append(f"measured in: {p['regime']}")
    if p.get("counterexample"):
        cx = p["counterexample"]
        rows.append(f"counterexample: {cx['description']}" + (f" (replay: `python -m verify replay {cx['file']}`)"
                                                              if cx.get("file") else ""))
    if p.get("restored_by"):
        rows.append(f"the claim holds when: {p['restored_by']}")
    if p.get("assumptions"):
        rows.append(_assumption_line(p["assumptions"], der))
    if p.get("reason"):
        rows.append(f"{'undecided' if p.get('outcome') == 'undecided' else 'not checkable'}: {p['reason']}")
    return [Heading(3, f"{claim}, {p.get('label') or p['id']}: {p.get('outcome') or p['effect']}",
                    f"{claim}-{p['id']}"), Items(tuple(rows))]


def _evidence(c: dict) -> list[Block]:
    out: list[Block] = [Heading(2, f"{c['id']}: the evidence, part by part", f"{c['id']}-evidence")]
    for p in sorted(c["evidence"]["parts"], key=lambda p: _ROLE_ORDER.get(p["role"], 9)):
        out += _part(c, p)
    if c.get("thresholds"):
        out.append(Table(("threshold", "value", "why this value"),
                         tuple((f"`{k}`", f"${v['value']:g}$", v["reason"]) for k, v in c["thresholds"].items())))
    captions = c["evidence"].get("captions") or {}
    out += [Figure(path, captions.get(name, "")) for name, path in (c["evidence"].get("plots") or {}).items()]
    return out


def _step(k: int, s: dict, claim: str) -> list[Block]:
    sampled = " (at random rational points: a test, not a proof)" if s["method"] in SAMPLED_METHODS else ""
    head = f"Step {k}, `{s['name']}`: {s['status']} by `{s['method']}`{sampled}" + (f". {s['why']}" if s.get("why") else "")
    body: list[Block] = [Para(head)]
    if s.get("display"):
        body.append(Formula(s["display"], claim, "step", s["name"]))
    else:   # a relation the markup cannot typeset: as code
        body.append(Para(_code(s["relation"])))
    return body


def _derivation(c: dict) -> list[Block]:
    der = c["evidence"].get("derivation")
    if not der:
        return []
    n_ok = sum(s["status"] == "checked" for s in der["steps"])
    sampled = sum(s["method"] in SAMPLED_METHODS for s in der["steps"])
    out: list[Block] = [Heading(2, f"{c['id']}: the derivation", f"{c['id']}-derivation"),
                        Para(f"{n_ok} of {len(der['steps'])} steps checked"
                             + (f", {sampled} of them at random rational points" if sampled else "")
                             + f"; `python -m verify proofs {c['id']}` prints it with every symbol."),
                        Items(tuple(f"`{a['name']}` ({a['kind']}"
                                    + (f", one option for the {a['choice']}" if a.get("choice") else "")
                                    + f"): {a['statement']}" for a in der["assumptions"]), "Assumptions")]
    steps: list[Block] = []
    for k, s in enumerate(der["steps"], 1):
        steps += _step(k, s, c["id"])
    out.append(Fold(f"The {len(der['steps'])} steps", tuple(steps)))
    for r in der["results"]:
        out.append(Para(f"Result `{r['name']}`: {r['description']}" if r.get("description") else f"Result `{r['name']}`"))
        if r.get("display"):
            out.append(Formula(r["display"], c["id"], "result", r["name"]))
    if der.get("comparisons"):
        out.append(Items(tuple(f"{_HOLDS_WORDS[x['holds']]}: {x['derived']}" for x in der["comparisons"]),
                         "Derived against stated"))
    return out


def walk(doc: dict, *, record: bool = True) -> list[Block]:
    """The report document as blocks: the summary, the glossary, then (``record``) the evidence of
    every part and every derivation as appendices; crashed claims last."""
    meta = doc.get("meta", {})
    size = "quick sizes" if meta.get("quick") else ("large sizes" if meta.get("large") else "default sizes")
    out: list[Block] = [
        Heading(1, "Verification of Multi-Head Attention as Ensemble Nadaraya-Watson Estimation (Fokoué, 2026)"),
        Para(f"Seed {meta.get('seed')}, {size}. Each claim's verdict is set by its core parts alone, read as a fair "
             "referee reads a theorem; a detail that is off is a correction, a failure outside the stated scope a "
             "limit, an experiment that could not have decided is undecided. Counts c/p/l/u: corrections, premise "
             "findings, limits, undecided parts beside the core. Replay any counterexample with `python -m verify replay FILE`."),
        Table(("claim", "verdict", "c/p/l/u", "headline"),
              tuple((f"{r['id']} {r['title']}".strip(), r["verdict"], counts(r), r["headline"])
                    for r in verdict_rows(doc)))]
    for c in doc["claims"]:
        out += _summary(c)
    out += [Heading(2, "Glossary", "glossary"),
            Table(("symbol", "meaning"), tuple(glossary_rows([c["headline"] for c in doc["claims"]])))]
    if record:
        out.append(Heading(1, "Appendix A: the evidence, part by part", "evidence"))
        for c in doc["claims"]:
            out += _evidence(c)
        out.append(Heading(1, "Appendix B: the derivations", "derivations"))
        for c in doc["claims"]:
            out += _derivation(c)
    for claim, err in doc.get("crashed", {}).items():
        out += [Heading(2, f"{claim}: crashed", claim), Para(f"`{(err.strip().splitlines() or [''])[-1][:150]}`")]
    return out
