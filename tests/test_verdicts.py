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
]


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
]


@pytest.mark.parametrize("cores,verdict", CORE_SETS)
def test_verdict_from_cores(cores, verdict):
    parts = [part(pid=f"c{i}", **e) for i, e in enumerate(cores)]
    assert claim_verdict(parts) == (verdict, "")


NON_CORE = [(role, ev) for role, ev, _ in EFFECTS if role is not Role.CORE]


@pytest.mark.parametrize("core", [dict(sym=PROVED, num=ROUND), dict(sym=PROVED_UNDER), dict(num=STAT), dict(cx=CX)],
                         ids=["exact", "model", "approximate", "refuted"])
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
