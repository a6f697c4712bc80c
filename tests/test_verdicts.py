"""The verdict rule as tables: evidence -> grade; role x evidence -> effect; cores -> verdict;
that no detail, premise or scope part can change a verdict; readings; the headline."""

from __future__ import annotations

import itertools

import pytest

from verify.errors import DefinitionError
from verify.judgment.verdicts import (
    ClaimResult,
    Counterexample,
    Effect,
    Numeric,
    Part,
    Reading,
    Role,
    Symbolic,
    Verdict,
    claim_verdict,
    evidence_verdict,
)

PROVED = Symbolic(claim="CX", status="proved")
PROVED_UNDER = Symbolic(claim="CX", status="proved", model_assumptions=["uniform weights"])
UNCHECKED = Symbolic(claim="CX", status="proved-with-unchecked-steps")
OFF = Symbolic(claim="CX", status="proved", comparisons=[{"name": "c", "stated": "s", "derived": "d", "holds": False,
                                                          "method": "m", "detail": "", "uses": []}])
ROUND = Numeric("rounding", "max rel err 1e-16")
STAT = Numeric("statistical", "within 2 SE")
BAD = Numeric("disagree", "off by 30%")
CX = Counterexample("a case", {"x": 1}, file="counterexamples/CX-p.json")
#: an experiment that could not have decided (why; what would decide it)
OPEN = "the positive control shows no effect; more steps would decide"

# what each role needs besides its evidence
EXTRA = {Role.CORE: {}, Role.DETAIL: {"stated": "s", "derived": "d"}, Role.PREMISE: {"regime": "n = 64"},
         Role.SCOPE: {"regime": "H d_k > d"}}


def part(role=Role.CORE, sym=None, num=None, cx=None, pid="p", reading="", **kw):
    extra = dict(EXTRA[role])
    if cx is not None and role in (Role.CORE, Role.SCOPE):
        extra["restored_by"] = "H d_k <= d"
    extra.update(kw)
    return Part(pid, role, "statement", symbolic=sym, numeric=num, counterexample=cx, reading=reading, **extra)


# -- step 1: grading one part's evidence ----------------------------------------------------------
GRADES = [
    pytest.param(dict(sym=PROVED, num=ROUND), Verdict.EXACT, id="proved+rounding->exact"),
    pytest.param(dict(sym=PROVED, num=STAT), Verdict.HOLDS_UNDER_MODEL, id="proved+statistical->model"),
    pytest.param(dict(sym=PROVED_UNDER, num=ROUND), Verdict.HOLDS_UNDER_MODEL, id="assumptions->model"),
    pytest.param(dict(sym=PROVED, num=ROUND, assumptions=["equal V"]), Verdict.HOLDS_UNDER_MODEL,
                 id="numeric-assumptions->model"),
    pytest.param(dict(sym=PROVED), Verdict.HOLDS_UNDER_MODEL, id="proof-only->model"),
    pytest.param(dict(sym=UNCHECKED, num=STAT), Verdict.APPROXIMATE, id="unchecked-step->approximate"),
    pytest.param(dict(num=STAT), Verdict.APPROXIMATE, id="numeric-only->approximate"),
    pytest.param(dict(sym=PROVED, num=BAD), Verdict.NOT_CHECKABLE, id="disagree->not-checkable"),
    pytest.param(dict(), Verdict.NOT_CHECKABLE, id="nothing->not-checkable"),
    pytest.param(dict(sym=PROVED, num=ROUND, cx=CX), Verdict.REFUTED, id="counterexample->refuted"),
    pytest.param(dict(num=STAT, undecided=OPEN), Verdict.UNDECIDED, id="undecided->undecided"),
    pytest.param(dict(sym=PROVED, num=ROUND, undecided=OPEN), Verdict.UNDECIDED, id="undecided-beats-a-proof"),
    pytest.param(dict(num=BAD, undecided=OPEN), Verdict.UNDECIDED, id="undecided-before-disagree"),
]


def test_an_undecided_part_carries_no_counterexample():
    with pytest.raises(DefinitionError, match="undecided part refutes nothing"):
        part(num=STAT, cx=CX, undecided=OPEN)


@pytest.mark.parametrize("evidence,grade", GRADES)
def test_grade(evidence, grade):
    assert evidence_verdict(part(**evidence)) is grade


# -- step 2: role x evidence -> effect ------------------------------------------------------------
EFFECTS = [
    # role, evidence, effect
    (Role.CORE, dict(sym=PROVED, num=ROUND), Effect.SETS_VERDICT),
    (Role.CORE, dict(cx=CX), Effect.SETS_VERDICT),
    (Role.DETAIL, dict(sym=PROVED, num=ROUND), Effect.DETAIL_HOLDS),
    (Role.DETAIL, dict(sym=PROVED, num=ROUND, cx=CX), Effect.CORRECTION),
    (Role.DETAIL, dict(sym=OFF, num=ROUND), Effect.CORRECTION),       # a derived form that differs suffices
    (Role.DETAIL, dict(), Effect.NOT_CHECKED),
    (Role.PREMISE, dict(num=STAT), Effect.PREMISE_HOLDS),
    (Role.PREMISE, dict(num=STAT, cx=CX), Effect.PREMISE_FAILS),
    (Role.PREMISE, dict(num=BAD), Effect.NOT_CHECKED),
    (Role.SCOPE, dict(num=STAT), Effect.SCOPE_HOLDS),
    (Role.SCOPE, dict(num=STAT, cx=CX), Effect.LIMIT),
    (Role.SCOPE, dict(), Effect.NOT_CHECKED),
    (Role.DETAIL, dict(num=STAT, undecided=OPEN), Effect.UNDECIDED),
    (Role.PREMISE, dict(num=STAT, undecided=OPEN), Effect.UNDECIDED),
    (Role.SCOPE, dict(num=STAT, undecided=OPEN), Effect.UNDECIDED),
    (Role.CORE, dict(num=STAT, undecided=OPEN), Effect.SETS_VERDICT),
]


@pytest.mark.parametrize("role,evidence,effect", EFFECTS,
                         ids=[f"{r.value}-{'+'.join(sorted(e)) or 'nothing'}-{f.name}" for r, e, f in EFFECTS])
def test_effect(role, evidence, effect):
    assert part(role, **evidence).effect is effect


# -- the claim's verdict from its cores ------------------------------------------------------------
CORE_SETS = [
    pytest.param([dict(sym=PROVED, num=ROUND)], Verdict.EXACT, id="exact"),
    pytest.param([dict(sym=PROVED, num=ROUND), dict(sym=PROVED_UNDER, num=ROUND)], Verdict.HOLDS_UNDER_MODEL,
                 id="weakest-of-two"),
    pytest.param([dict(sym=PROVED, num=ROUND), dict(cx=CX)], Verdict.REFUTED, id="one-refuted-core-refutes"),
    pytest.param([dict(num=STAT), dict()], Verdict.APPROXIMATE, id="unchecked-core-ignored"),
    pytest.param([dict()], Verdict.NOT_CHECKABLE, id="nothing-checkable"),
    pytest.param([], Verdict.NOT_CHECKABLE, id="no-core"),
    pytest.param([dict(num=STAT, undecided=OPEN)], Verdict.UNDECIDED, id="undecided"),
    pytest.param([dict(sym=PROVED, num=ROUND), dict(num=STAT, undecided=OPEN)], Verdict.UNDECIDED,
                 id="an-undecided-core-leaves-the-reading-undecided"),
    pytest.param([dict(num=STAT, undecided=OPEN), dict(cx=CX)], Verdict.REFUTED, id="refuted-beats-undecided"),
    pytest.param([dict(num=STAT, undecided=OPEN), dict()], Verdict.UNDECIDED, id="undecided-beats-unchecked"),
]


@pytest.mark.parametrize("cores,verdict", CORE_SETS)
def test_verdict_from_cores(cores, verdict):
    parts = [part(pid=f"c{i}", **e) for i, e in enumerate(cores)]
    assert claim_verdict(parts) == (verdict, "")


NON_CORE = [(role, ev) for role, ev, _ in EFFECTS if role is not Role.CORE]


@pytest.mark.parametrize("core", [dict(sym=PROVED, num=ROUND), dict(sym=PROVED_UNDER), dict(num=STAT), dict(cx=CX),
                                  dict(num=STAT, undecided=OPEN)],
                         ids=["exact", "model", "approximate", "refuted", "undecided"])
def test_no_detail_premise_or_scope_part_changes_a_verdict(core):
    """Every combination of up to two non-core parts, of any role and outcome, beside the core."""
    base = claim_verdict([part(pid="core", **core)])
    for k in (1, 2):
        for combo in itertools.combinations(range(len(NON_CORE)), k):
            extra = [part(NON_CORE[i][0], pid=f"x{i}", **NON_CORE[i][1]) for i in combo]
            assert claim_verdict([part(pid="core", **core), *extra]) == base, combo


def test_core_failure_within_scope_refutes_and_needs_a_replayable_counterexample():
    assert part(cx=CX).evidence is Verdict.REFUTED
    with pytest.raises(DefinitionError, match="restores"):
        Part("p", Role.CORE, "s", counterexample=CX)                         # no restoring assumption
    with pytest.raises(DefinitionError, match="counterexample"):
        part(sym=OFF)                                                        # contradicted, nothing to replay


@pytest.mark.parametrize("role,kw,match", [
    (Role.DETAIL, {}, "stated and its derived"),
    (Role.PREMISE, {}, "regime"),
    (Role.SCOPE, {}, "regime"),
    (Role.DETAIL, {"stated": "s", "derived": "d", "reading": "i"}, "reading"),
    (Role.CORE, {"finding": "a; b"}, "one phrase"),
    (Role.CORE, {"finding": "x" * 161}, "headline"),
], ids=["detail-forms", "premise-regime", "scope-regime", "reading-on-detail", "finding-semicolon", "finding-long"])
def test_parts_declare_what_their_role_needs(role, kw, match):
    with pytest.raises(DefinitionError, match=match):
        Part("p", role, "s", **kw)


# -- readings -----------------------------------------------------------------------------------
def test_the_best_reading_sets_the_verdict_and_the_other_is_named():
    parts = [part(pid="i", reading="i", sym=PROVED_UNDER, num=ROUND, finding="holds in H"),
             part(pid="ii", reading="ii", cx=CX, finding="same rate in n")]
    res = ClaimResult("CX", "t", "s", parts, readings=[Reading("i", "in H"), Reading("ii", "in n")])
    assert (res.verdict, res.reading) == (Verdict.HOLDS_UNDER_MODEL, "i")
    assert res.headline == "holds under model (reading i, in H); reading ii, in n: refuted (same rate in n)"
    assert [r["verdict"] for r in res.to_dict()["readings"]] == ["holds under model", "refuted"]
    # a checked reading beats an unchecked one, even when it is refuted
    parts2 = [part(pid="i", reading="i"), part(pid="ii", reading="ii", cx=CX)]
    assert claim_verdict(parts2) == (Verdict.REFUTED, "ii")


def test_readings_must_be_declared():
    with pytest.raises(DefinitionError, match="readings"):
        ClaimResult("CX", "t", "s", [part(pid="i", reading="i", sym=PROVED)])
    with pytest.raises(DefinitionError, match="unique"):
        ClaimResult("CX", "t", "s", [part(pid="a", sym=PROVED), part(pid="a", sym=PROVED)])


# -- the headline and the report fields --------------------------------------------------------------
def test_headline_and_fields_are_computed_from_the_parts():
    parts = [part(pid="core", sym=PROVED, num=ROUND),
             part(Role.DETAIL, pid="bw", sym=PROVED, cx=CX, stated="h = 1/sqrt(d_k)", derived="scale",
                  finding="1/sqrt(d_k) is a scale"),
             part(Role.DETAIL, pid="ok", sym=PROVED, finding="fine"),
             part(Role.PREMISE, pid="prem", num=STAT, cx=CX, finding="shared noise"),
             part(Role.SCOPE, pid="lim1", num=STAT, cx=CX, finding="beyond d"),
             part(Role.SCOPE, pid="lim2", num=STAT, cx=CX, finding="few directions"),
             part(Role.SCOPE, pid="held", num=STAT)]
    res = ClaimResult("CX", "t", "s", parts)
    assert res.headline == ("exact; 1 correction: 1/sqrt(d_k) is a scale; premise fails on NW heads (shared noise); "
                            "2 limits: (1) beyond d, (2) few directions")
    d = res.to_dict()
    assert d["verdict"] == "exact" and d["headline"] == res.headline
    assert [c["part"] for c in d["corrections"]] == ["bw"]
    assert d["corrections"][0]["stated"] == "h = 1/sqrt(d_k)" and d["corrections"][0]["derived"] == "scale"
    assert [p["outcome"] for p in d["premise"]] == ["premise fails on NW heads"]
    assert [x["part"] for x in d["limits"]] == ["lim1", "lim2"] and d["limits"][0]["boundary"] == "H d_k <= d"
    assert d["limits"][0]["counterexample"] == "counterexamples/CX-p.json"


def test_refuted_headline_names_the_failing_core_and_restoring_assumption():
    res = ClaimResult("CX", "t", "s", [part(pid="law", cx=CX, finding="no model gives the law"),
                                       part(pid="opt", sym=PROVED_UNDER)])
    assert res.headline == "refuted: no model gives the law"
    assert res.to_dict()["restored_by"] == ["H d_k <= d"]
    assert res.assumptions == ["uniform weights"]
    twice = ClaimResult("CX", "t", "s", [part(pid="keys", cx=CX), part(pid="queries", cx=CX)])
    assert twice.restored_by == ["H d_k <= d"]              # one assumption restoring two parts: listed once


# -- the rule as full tables, expected verdicts written out by hand --------------------------------
#: a core part of each grade
E, M, A, R, N = (dict(sym=PROVED, num=ROUND), dict(sym=PROVED_UNDER), dict(num=STAT), dict(cx=CX), dict())
_V = {"E": Verdict.EXACT, "M": Verdict.HOLDS_UNDER_MODEL, "A": Verdict.APPROXIMATE, "R": Verdict.REFUTED,
      "N": Verdict.NOT_CHECKABLE}
_EV = {"E": E, "M": M, "A": A, "R": R, "N": N}

#: two core parts of one reading -> its verdict: a refuted one refutes; else the weakest checkable
#: (exact > holds under model > approximate); a part that is not checkable is left out.
READING_PAIRS = {
    "EE": "E", "EM": "M", "EA": "A", "ER": "R", "EN": "E",
    "MM": "M", "MA": "A", "MR": "R", "MN": "M",
    "AA": "A", "AR": "R", "AN": "A",
    "RR": "R", "RN": "R",
    "NN": "N",
}


@pytest.mark.parametrize("pair", [a + b for a, b in itertools.product("EMARN", repeat=2)])
def test_reading_verdict_of_two_cores_either_order(pair):
    expected = _V[READING_PAIRS.get(pair) or READING_PAIRS[pair[::-1]]]
    parts = [part(pid=f"c{i}", **_EV[g]) for i, g in enumerate(pair)]
    assert claim_verdict(parts) == (expected, "")


@pytest.mark.parametrize("triple,expected", [("EMA", "A"), ("ENN", "E"), ("NAN", "A"), ("EER", "R"), ("NNN", "N"),
                                             ("MEM", "M")])
def test_reading_verdict_of_three_cores(triple, expected):
    parts = [part(pid=f"c{i}", **_EV[g]) for i, g in enumerate(triple)]
    assert claim_verdict(parts) == (_V[expected], "")


#: the verdicts of readings i and ii (declared in that order) -> (claim verdict, deciding reading):
#: the best reading, exact > holds under model > approximate > refuted > not checkable; a tie goes
#: to the reading declared first.
READING_CHOICE = [
    ("EM", "E", "i"), ("ME", "E", "ii"), ("MA", "M", "i"), ("AM", "M", "ii"), ("AR", "A", "i"), ("RA", "A", "ii"),
    ("RN", "R", "i"), ("NR", "R", "ii"), ("EN", "E", "i"), ("NE", "E", "ii"), ("ER", "E", "i"), ("RE", "E", "ii"),
    ("EE", "E", "i"), ("MM", "M", "i"), ("AA", "A", "i"), ("RR", "R", "i"), ("NN", "N", "i"),
]


@pytest.mark.parametrize("pair,verdict,reading", READING_CHOICE, ids=[p for p, _, _ in READING_CHOICE])
def test_the_best_reading_decides_and_a_tie_goes_to_the_first_declared(pair, verdict, reading):
    parts = [part(pid=f"r{rid}", reading=rid, **_EV[g]) for rid, g in zip(("i", "ii"), pair)]
    assert claim_verdict(parts) == (_V[verdict], reading)
    res = ClaimResult("CX", "t", "s", parts, readings=[Reading("i", "in H"), Reading("ii", "in n")])
    assert (res.verdict, res.reading) == (_V[verdict], reading)
    assert [p.id for p in res.core_parts] == [f"r{reading}"]


def test_a_tie_goes_to_the_first_declared_reading_whatever_its_id():
    parts = [part(pid="b", reading="ii", **M), part(pid="a", reading="i", **M)]
    assert claim_verdict(parts) == (Verdict.HOLDS_UNDER_MODEL, "ii")


def test_three_readings_best_wins_and_each_reading_takes_its_weakest_core():
    parts = [part(pid="a1", reading="a", **E), part(pid="a2", reading="a", **A),       # a: approximate
             part(pid="b1", reading="b", **M), part(pid="b2", reading="b", **N),       # b: holds under model
             part(pid="c1", reading="c", **E), part(pid="c2", reading="c", **R)]       # c: refuted
    assert claim_verdict(parts) == (Verdict.HOLDS_UNDER_MODEL, "b")


#: role x evidence -> effect, every role against every kind of evidence (written out by hand)
_EVIDENCE = {"exact": dict(sym=PROVED, num=ROUND), "model": dict(sym=PROVED_UNDER), "approximate": dict(num=STAT),
             "counterexample": dict(num=STAT, cx=CX), "derived-differs": dict(sym=OFF, num=ROUND),
             "disagree": dict(sym=PROVED, num=BAD), "nothing": dict(), "undecided": dict(num=STAT, undecided=OPEN)}
ROLE_TABLE = {
    Role.DETAIL: {"exact": Effect.DETAIL_HOLDS, "model": Effect.DETAIL_HOLDS, "approximate": Effect.DETAIL_HOLDS,
                  "counterexample": Effect.CORRECTION, "derived-differs": Effect.CORRECTION,
                  "disagree": Effect.NOT_CHECKED, "nothing": Effect.NOT_CHECKED, "undecided": Effect.UNDECIDED},
    Role.PREMISE: {"exact": Effect.PREMISE_HOLDS, "model": Effect.PREMISE_HOLDS, "approximate": Effect.PREMISE_HOLDS,
                   "counterexample": Effect.PREMISE_FAILS, "derived-differs": Effect.PREMISE_FAILS,
                   "disagree": Effect.NOT_CHECKED, "nothing": Effect.NOT_CHECKED, "undecided": Effect.UNDECIDED},
    Role.SCOPE: {"exact": Effect.SCOPE_HOLDS, "model": Effect.SCOPE_HOLDS, "approximate": Effect.SCOPE_HOLDS,
                 "counterexample": Effect.LIMIT, "derived-differs": Effect.LIMIT,
                 "disagree": Effect.NOT_CHECKED, "nothing": Effect.NOT_CHECKED, "undecided": Effect.UNDECIDED},
}
_ROLE_ROWS = [(role, ev, eff) for role, row in ROLE_TABLE.items() for ev, eff in row.items()]


@pytest.mark.parametrize("role,ev,effect", _ROLE_ROWS, ids=[f"{r.value}-{e}" for r, e, _ in _ROLE_ROWS])
def test_every_role_against_every_kind_of_evidence(role, ev, effect):
    p = part(role, **_EVIDENCE[ev])
    assert p.effect is effect
    core = part(pid="core", **E)
    res = ClaimResult("CX", "t", "s", [core, p])
    assert res.verdict is Verdict.EXACT                       # never the verdict
    assert [q.id for q in res.corrections_parts] == (["p"] if effect is Effect.CORRECTION else [])
    assert [q.id for q in res.limits_parts] == (["p"] if effect is Effect.LIMIT else [])
    assert [q.id for q in res.premise_parts] == (["p"] if role is Role.PREMISE else [])
    assert [q.id for q in res.undecided_parts] == (["p"] if effect is Effect.UNDECIDED else [])
    assert res.to_dict()["evidence"]["parts"][1]["outcome"] == effect.value


@pytest.mark.parametrize("ev", list(_EVIDENCE)[:3] + ["counterexample", "nothing", "undecided"])
def test_a_core_part_always_sets_the_verdict(ev):
    kw = {k: v for k, v in _EVIDENCE[ev].items()}
    assert part(**kw).effect is Effect.SETS_VERDICT


@pytest.mark.parametrize("cores,expected", [
    ([dict(pid="a", finding="holds", **A), dict(pid="b", finding="unmeasured", **N)],
     "approximate: holds; not checked: unmeasured"),
    ([dict(pid="a", finding="moves by 0.08", **A), dict(pid="b", finding="moves by 0.01", **A)],
     "approximate: (1) moves by 0.08, (2) moves by 0.01"),
    ([dict(pid="a", finding="proved", **E), dict(pid="b", finding="measured", **A)], "approximate: measured"),
    ([dict(pid="a", **A), dict(pid="b", **N), dict(pid="c", **N)], "approximate; not checked: (1) b, (2) c"),
    ([dict(pid="a", finding="fails here", **R), dict(pid="b", finding="unmeasured", **N)], "refuted: fails here"),
    ([dict(pid="a", finding="x", **R), dict(pid="b", finding="y", **R)], "refuted: (1) x, (2) y"),
    ([dict(pid="a", **R)], "refuted: statement"),
], ids=["one-unchecked", "two-measured", "measured-beside-proved", "two-unchecked-by-id", "refuted-hides-unchecked",
        "two-refuted", "refuted-no-finding"])
def test_headline_names_failed_then_unchecked_cores(cores, expected):
    res = ClaimResult("CX", "t", "s", [part(**c) for c in cores])
    assert res.headline == expected


def test_headline_counts_and_numbers_corrections_and_limits():
    parts = [part(pid="core", **E),
             part(Role.DETAIL, pid="d1", cx=CX, finding="first"), part(Role.DETAIL, pid="d2", sym=OFF, finding="second"),
             part(Role.DETAIL, pid="d3", **E, finding="holds"), part(Role.SCOPE, pid="s1", cx=CX, finding="edge"),
             part(Role.PREMISE, pid="p1", num=STAT, finding="measured"), part(Role.PREMISE, pid="p2", **N)]
    assert ClaimResult("CX", "t", "s", parts).headline == (
        "exact; 2 corrections: (1) first, (2) second; premise holds on NW heads (measured); not checkable; "
        "1 limit: edge")


def test_headline_says_undecided_in_words_apart_from_approximate():
    """An undecided reading names what could not decide; undecided non-core parts are counted by
    label; a premise that could not decide reads "premise undecided"; report.json carries
    ``outcome`` and ``reason`` for each, and the claim's ``undecided`` list."""
    parts = [part(pid="core", finding="the heads do not move", num=STAT, undecided=OPEN),
             part(Role.SCOPE, pid="s1", num=STAT, undecided=OPEN, label="Gaussian design"),
             part(Role.PREMISE, pid="p1", num=STAT, undecided=OPEN, finding="R² near 0")]
    res = ClaimResult("CX", "t", "s", parts)
    assert res.verdict is Verdict.UNDECIDED
    assert res.headline == ("undecided: the heads do not move; premise undecided (R² near 0); "
                            "1 undecided: Gaussian design")
    doc = res.to_dict()
    assert [p["outcome"] for p in doc["evidence"]["parts"]] == ["undecided", "undecided", "undecided"]
    assert {p["reason"] for p in doc["evidence"]["parts"]} == {OPEN}
    assert [u["part"] for u in doc["undecided"]] == ["core", "s1", "p1"] and doc["limits"] == []
    assert doc["premise"][0]["outcome"] == "undecided"


def test_an_undecided_reading_ranks_below_evidence_and_above_a_refutation():
    readings = (Reading("i", "one"), Reading("ii", "two"))
    open_, refuted, approx = dict(num=STAT, undecided=OPEN), dict(cx=CX), dict(num=STAT)
    res = ClaimResult("CX", "t", "s", [part(pid="a", reading="i", **open_), part(pid="b", reading="ii", **refuted)],
                      readings=readings)
    assert (res.verdict, res.reading) == (Verdict.UNDECIDED, "i")
    res = ClaimResult("CX", "t", "s", [part(pid="a", reading="i", **open_), part(pid="b", reading="ii", **approx)],
                      readings=readings)
    assert (res.verdict, res.reading) == (Verdict.APPROXIMATE, "ii")
    assert "reading i, one: undecided" in res.headline
