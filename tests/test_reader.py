"""What a researcher reads (issue #35), tested on the quick run's report in every medium: every text
is markup (no ASCII mathematics, no field, Python or SymPy names, no ``None`` in prose), every
headline short and its symbols in the glossary, the counts the same in every view, each plot with
a caption and its legends from the markup; the HTML page self-contained and, in a real browser
(slow tier, CI installs Debian's chromium), loaded without a console error or a network request
with every formula rendered; the summary PDF short and without overfull lines."""

from __future__ import annotations

import copy
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from proofs import CLAIM_IDS, markup
from verify.outputs import document as D
from verify.outputs.glossary import GLOSSARY, symbols
from verify.judgment.verdicts import HEADLINE_MAX
from verify.outputs.report import document, markdown, table, write_report

ROOT = Path(__file__).resolve().parent.parent
#: A snake_case word in prose is a field or variable name leaking into what a reader reads.
FIELD_NAME = re.compile(r"\b[a-z][a-z0-9]*_[a-z0-9_]+\b")
#: How far a line of a PDF may run past the margin (LaTeX's own "Overfull \hbox (x pt)"): not at all
#: (TeX reports only lines beyond its \hfuzz, 0.1 pt).
OVERFULL_PT_MAX = 0.0
#: The summary PDF's length for nine claims.
SUMMARY_PAGES_MAX = 20
#: Where the browser test leaves its screenshot of the first claim (a CI artefact).
ARTEFACTS = ROOT / "build" / "test-artefacts"


@pytest.fixture(scope="module")
def doc(quick_run, tmp_path_factory):
    """The quick run's report, written as the command line writes it (report.json, .md, .html)."""
    folder = tmp_path_factory.mktemp("reader")
    results = [quick_run(c) for c in CLAIM_IDS]
    for _, out in results:
        if (out / "plots").is_dir():
            shutil.copytree(out / "plots", folder / "plots", dirs_exist_ok=True)
    d = document([r for r, _ in results], seed=0, quick=True)
    write_report(folder, d)
    return d, folder


def _texts(blocks):
    for b in blocks:
        if isinstance(b, D.Fold):
            yield b.summary
            yield from _texts(b.blocks)
        elif isinstance(b, D.Items):
            yield b.label
            yield from b.items
        elif isinstance(b, D.Table):
            yield from b.head
            yield from (c for row in b.rows for c in row)
        elif isinstance(b, D.Field):
            yield b.label
            yield b.text
        elif isinstance(b, (D.Heading, D.Para)):
            yield b.text
        elif isinstance(b, D.Figure):
            yield b.caption


def test_every_text_of_every_view_is_markup_without_names_or_none(doc):
    problems = []
    for t in filter(None, _texts(D.walk(doc[0]))):
        try:
            spans = markup.parse(t, "report")
        except markup.MarkupError as exc:
            problems.append(str(exc)[:160])
            continue
        prose = " ".join(s.text for s in spans if isinstance(s, markup.Text))
        if re.search(r"\bNone\b", prose) or FIELD_NAME.search(prose):
            problems.append(f"a name in prose: {prose[:160]!r}")
    assert not problems, "\n".join(problems[:20])


def test_headlines_are_short_and_every_symbol_in_them_is_in_the_glossary(doc):
    for c in doc[0]["claims"]:
        assert len(markup.render(c["short_headline"], "unicode")) <= HEADLINE_MAX, (c["id"], c["short_headline"])
        assert c["short_headline"].startswith(c["verdict"])
        assert set(symbols(c["headline"])) <= set(GLOSSARY), (c["id"], set(symbols(c["headline"])) - set(GLOSSARY))
    glossary = next(b for b in D.walk(doc[0], record=False) if isinstance(b, D.Table) and b.head[0] == "symbol")
    assert {"$\\mathrm{HDI}$", "$\\mathrm{MSE}$"} <= {row[0] for row in glossary.rows}


def test_counts_are_the_same_in_every_view(doc):
    d, folder = doc
    html = (folder / "report.html").read_text()
    md = (folder / "report.md").read_text()
    term = table(d)
    for row in D.verdict_rows(d):
        want = D.counts(row)
        c = next(x for x in d["claims"] if x["id"] == row["id"])
        assert want == f"{len(c['corrections'])}/{len(c['premise'])}/{len(c['limits'])}/{sum(u['role'] != 'core' for u in c['undecided'])}"
        assert f"{row['id']:<6}{row['verdict']:<20}{want}" in term
        assert f"| {want} |" in md and f"<td>{want}</td>" in html


def test_every_plot_has_a_caption_and_the_deciding_plot_is_shown_first(doc):
    d, folder = doc
    for c in d["claims"]:
        plots, captions = c["evidence"]["plots"], c["evidence"].get("captions", {})
        assert set(captions) == set(plots), (c["id"], set(plots) - set(captions))
        for name, caption in captions.items():
            assert caption and name not in caption and not caption.endswith(".png"), (c["id"], name)
            axes = json.loads((folder / plots[name]).with_suffix("").with_suffix(".data.json").read_text())["axes"]
            labels = [ln["label"] for ax in axes for ln in ax["lines"] if not ln["label"].startswith("_")]
            for label in labels:
                assert not FIELD_NAME.search(label) and "sqrt(" not in label, (c["id"], name, label)
            for text in labels + [ax[k] for ax in axes for k in ("title", "xlabel", "ylabel")]:
                assert not re.search(r"[_^]", re.sub(r"\$[^$]*\$", "", text)), (c["id"], name, text)   # no ASCII scripts
        assert not plots or c.get("figure") in plots, c["id"]


def test_the_html_page_is_self_contained(doc):
    d, folder = doc
    html = (folder / "report.html").read_text()
    assert "<script" not in html and "http://" not in html.replace("http://www.w3.org/1998/Math/MathML", "")
    assert "https://" not in html and '<img src="plots/' not in html
    text = re.sub(r"<math.*?</math>|<code>.*?</code>|<[^>]+>", " ", html, flags=re.S)
    assert "$" not in text and "\\" not in text, re.findall(r".{40}[$\\].{40}", text)[:5]


@pytest.mark.slow  # a real browser
def test_the_html_page_in_a_browser(doc):
    """Headless Chromium (Debian's, through its chromedriver): no console message, no request but
    the page itself and its embedded data, every formula laid out with a width, no TeX in the text;
    a screenshot of the first claim is kept for CI."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    chromium, driver_path = shutil.which("chromium"), shutil.which("chromedriver")
    assert chromium and driver_path, "the browser test needs Debian's chromium and chromium-driver (.ci/run)"
    opts = webdriver.ChromeOptions()
    opts.binary_location = chromium
    for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
              "--disable-background-networking", "--disable-component-update", "--disable-sync", "--window-size=1200,1600"):
        opts.add_argument(a)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    browser = webdriver.Chrome(service=Service(driver_path), options=opts)
    try:
        page = (doc[1] / "report.html").as_uri()
        browser.get(page)
        assert browser.get_log("browser") == []
        events = [json.loads(e["message"])["message"] for e in browser.get_log("performance")]
        urls = {m["params"]["request"]["url"] for m in events if m["method"] == "Network.requestWillBeSent"}
        assert {u for u in urls if not u.startswith("data:")} == {page}
        n_math = browser.execute_script("return document.querySelectorAll('math').length")
        flat = browser.execute_script("return Array.from(document.querySelectorAll('math'))"
                                      ".filter(m => m.getBoundingClientRect().width == 0).length")
        assert n_math > 100 and flat == 0
        text = browser.execute_script("return document.body.innerText")
        assert "$" not in text and "\\" not in text
        first = browser.find_element("id", CLAIM_IDS[0])
        browser.execute_script("arguments[0].scrollIntoView()", first)
        ARTEFACTS.mkdir(parents=True, exist_ok=True)
        assert browser.save_screenshot(str(ARTEFACTS / f"report-{CLAIM_IDS[0]}.png"))
    finally:
        browser.quit()


@pytest.mark.slow  # pdflatex
@pytest.mark.parametrize("name", ["summary", "verification"])
def test_the_pdfs_run_nowhere_past_the_margin_and_the_summary_is_short(doc, tmp_path, name):
    d, folder = doc
    out = tmp_path / "latex"
    assert subprocess.run(["python", "-m", "verify", "latex", "--pdf", "--report", str(folder / "report.json"), "-o",
                           str(out), *(["--summary"] if name == "summary" else [])], cwd=ROOT).returncode == 0
    log = (out / f"{name}.log").read_text(errors="replace").replace("\n", "")   # TeX wraps its log at 79 columns
    pages = int(re.search(rf"Output written on \S*{name}\.pdf \((\d+) pages?", log).group(1))
    assert name != "summary" or pages <= SUMMARY_PAGES_MAX
    worst = max([float(x) for x in re.findall(r"Overfull \\hbox \(([\d.]+)pt too wide\)", log)] or [0.0])
    assert worst <= OVERFULL_PT_MAX


def test_markdown_is_the_walk_rendered(doc):
    assert (doc[1] / "report.md").read_text() == markdown(doc[0])


def _md(text: str) -> str:
    return markup.render(" ".join(text.split()), "markdown")


def _under(md: str, heading: str) -> str:
    """The lines of ``md`` under the heading line ``heading``, up to the next heading."""
    rest = md.split(f"\n{heading}\n", 1)[1]
    return re.split(r"^#{1,3} ", rest, maxsplit=1, flags=re.M)[0]


def test_report_md_states_corrections_limits_and_step_counts_as_report_json(doc):
    """report.md field by field against report.json: each correction's stated and derived forms in
    their places, each limit's "holds under" quoting its boundary (not the regime it was measured
    in), every derivation's and every part's step counts exact (one step made unchecked, so that a
    count that is not read from its own field shows)."""
    d = copy.deepcopy(doc[0])
    d["claims"][0]["evidence"]["derivation"]["steps"][0]["status"] = "unchecked"
    next(p["symbolic"] for c in d["claims"] for p in c["evidence"]["parts"] if p["symbolic"])["n_checked"] -= 1
    next(c for c in d["claims"] if c["corrections"])["corrections"][0]["instead"] = ""  # shown by its two forms
    md = markdown(d)
    limits = [x for c in d["claims"] for x in c["limits"]]
    assert limits and any(x["boundary"] != x["regime"] for x in limits)
    for x in limits:
        assert f"- {_md(x['label'] + ': ' + x['finding'] + '. It holds under: ' + x['boundary'])}\n" in md
    for c in d["claims"]:
        steps = c["evidence"]["derivation"]["steps"]
        derivation = _under(md, f"## {c['id']}: the derivation")
        assert f"\n{sum(s['status'] == 'checked' for s in steps)} of {len(steps)} steps checked" in derivation
        for p in c["evidence"]["parts"]:
            shown = _under(md, f"### {_md(c['id'] + ', ' + p['label'] + ': ' + p['outcome'])}")
            if p["symbolic"]:
                assert f"\n- symbolic: {p['symbolic']['n_checked']} of {p['symbolic']['n_steps']} steps checked" in shown
            if p["stated"]:
                assert f"\n- {_md('the paper states ' + p['stated'] + '; derived: ' + p['derived'])}\n" in shown
        for x in c["corrections"]:
            assert (_md(x["instead"]) if x["instead"] else
                    f"- {_md(x['derived'] + ' (where the paper states ' + x['stated'] + ')')}\n") in md


def _claim_section(md: str, c: dict) -> str:
    return _under(md, f"## {_md(c['id'] + ': ' + c['title'])}")


def test_alternatives_are_listed_apart_from_the_common_assumptions(doc):
    """Assumptions a derivation declares as alternatives (an assumption's ``choice``) are not one
    list: the claim's summary lists the common ones, then each group of two or more options on one
    line joined by "or", under a label saying the candidate models combine them (report.md and the
    HTML page, from the same blocks); the list reads "It holds only" only where the claim holds."""
    d, folder = doc
    md, html = (folder / "report.md").read_text(), (folder / "report.html").read_text()
    declared = 0
    for c in d["claims"]:
        choice = {a["statement"]: a["choice"] for a in c["evidence"]["derivation"]["assumptions"] if a.get("choice")}
        groups: dict[str, list[str]] = {}
        for a in c["assumptions"]:
            groups.setdefault(choice.get(a, ""), []).append(a)
        section = _claim_section(md, c)
        for group, options in groups.items():
            if group and len(options) > 1:
                declared += 1
                line = " or ".join(o.removeprefix(group + " ") for o in options)   # no group name twice
                assert f"- {_md(group + ': ' + line)}\n" in section, (c["id"], group)
                assert not any(f"- {_md(o)}\n" in section for o in options), (c["id"], group)
                assert f"**{D.ALTERNATIVES_LABEL}:**" in section and D.ALTERNATIVES_LABEL in html
            else:
                assert all(f"- {_md(o)}\n" in section for o in options), (c["id"], options)
        if c["assumptions"]:
            assert ("It holds only under these assumptions" in section) is (c["verdict"] == "holds under model")
    assert declared, "no claim declares alternatives: the test has nothing to check"


def test_what_restores_a_claim_states_a_condition(doc):
    """Each restoring text follows "The claim holds when:" in the summary: it states the condition,
    not first that nothing gives the claim, nor a label of its own ("a weaker statement: ...")."""
    d, _ = doc
    md = markdown(d)
    for c in d["claims"]:
        for r in c["restored_by"]:
            assert f"- {_md('The claim holds when: ' + r)}\n" in _claim_section(md, c)
            assert not re.match(r"(no|not|none|nothing)\b", r, flags=re.I), (c["id"], r[:80])
            assert not re.match(r"[\w ]+:", r), (c["id"], r[:80])


def test_steps_tested_at_random_points_are_named_where_proved_is_said(doc):
    """A step checked at random rational points is a test, not a proof: every part whose steps
    include one names it in its symbolic row, and a verdict whose words say "proved" names each
    such step of the core parts it rests on."""
    d, _ = doc
    md = markdown(d)
    tested = 0
    for c in d["claims"]:
        sampled = {s["name"] for s in c["evidence"]["derivation"]["steps"] if s["method"] in D.SAMPLED_METHODS}
        verdict = next(ln for ln in _claim_section(md, c).splitlines() if ln.startswith("**Verdict:**"))
        for p in c["evidence"]["parts"]:
            steps = sampled & set((p["symbolic"] or {}).get("steps", []))
            if not steps:
                continue
            tested += len(steps)
            shown = _under(md, f"### {_md(c['id'] + ', ' + p['label'] + ': ' + p['outcome'])}")
            row = next(ln for ln in shown.splitlines() if ln.startswith("- symbolic:"))
            core = p["role"] == "core" and (p.get("reading") or "") == (c.get("reading") or "")
            for name in steps:
                assert f"`{name}`" in row and "random rational points" in row, (c["id"], p["id"], name)
                assert not (core and "proved" in verdict) or f"`{name}`" in verdict, (c["id"], name)
    assert tested, "no step is checked at random points: the test has nothing to check"


#: Phrasings that read wrongly (issue #35, 8): a bound on a bound, an error that rounds to 0 shown as 0.
GARBLED = (r"at most \$<", r"\\pm 0\.?0*\$")
#: An exact 0 as a bound (said "exactly" instead).
GARBLED_ELSEWHERE = (r"within \$0\$ of", r"at most \$0\$")
#: A range whose two ends print alike ("$0.167$ to $0.167$").
EQUAL_ENDS = r"(?<![\w.$])(\$?-?[\d.]+\$?) to \1(?![\w.$])"


def _phrasing(doc: dict, patterns: tuple[str, ...]) -> list[str]:
    """Each match of ``patterns`` in a paragraph, field or bullet of the walk, with its text."""
    out = []
    for b in D.walk(doc):
        texts = b.items if isinstance(b, D.Items) else (b.text,) if isinstance(b, (D.Para, D.Field)) else ()
        out += [f"{m.group(0)!r} in {t[:100]!r}" for t in texts for p in patterns for m in re.finditer(p, t)]
    return out


def test_no_bound_on_a_bound_no_zero_error_and_no_bullet_twice(doc):
    """No text says "at most $<" or "± 0" with an error that rounds to 0, and no list holds one
    bullet twice."""
    twice = [b.label for b in D.walk(doc[0]) if isinstance(b, D.Items) and len(set(b.items)) != len(b.items)]
    problems = _phrasing(doc[0], GARBLED) + [f"a bullet twice under {label!r}" for label in twice]
    assert not problems, "\n".join(problems[:20])


def test_no_exact_zero_as_a_bound_and_no_range_with_equal_ends(doc):
    """No text says "within $0$ of" or "at most $0$" (an exact 0 is said so) or prints a range whose
    ends print alike."""
    problems = _phrasing(doc[0], GARBLED_ELSEWHERE + (EQUAL_ENDS,))
    assert not problems, "\n".join(problems[:20])
