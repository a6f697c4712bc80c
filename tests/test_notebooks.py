"""The reader notebooks run top to bottom, their stored outputs are current, and the steps they
show read as a derivation.

Every ``notebooks/*.ipynb`` is re-executed in a fresh ``python3`` kernel (nbclient, this
interpreter's ipykernel) and every text output - stream, text/plain, text/latex, text/markdown -
must equal the stored one; execution counts, timing metadata and image bytes are ignored. Refresh
the stored outputs with ``python tools/notebooks.py refresh``. A notebook added to the folder is
picked up without a change here.
"""

from __future__ import annotations

import ast
import os
import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import nbformat
import pytest
import sympy as sp

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
#: One notebook per claim group (SPEC); more may follow (07_training, C9), each numbered.
GROUPS = ["01_decomposition", "02_hdi_and_orthogonality", "03_scaling_law", "04_weighting",
          "05_attention_as_nw", "06_pretrained_hdi"]
# Per-cell limit for nbclient: a hung cell fails the test instead of blocking the suite.
CELL_TIMEOUT = 120
TEXT_MIMES = ("text/plain", "text/latex", "text/markdown")
# Two notebooks at a time: each waits on its own kernel process.
WORKERS = 2
# Statements a notebook may not contain: it calls proofs and verify, it defines no logic.
FORBIDDEN = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda, ast.For, ast.While,
             ast.If, ast.ListComp, ast.DictComp, ast.SetComp, ast.GeneratorExp)
# How the display helpers name the method of a step they show ("checked by **expand**").
CHECKED_BY = re.compile(r"checked by \*\*([^*]+)\*\*")


def _texts(nb: nbformat.NotebookNode) -> list[list[tuple]]:
    """Per code cell, its text outputs in order; errors are kept so that they show in a diff."""
    cells = []
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        outs = []
        for out in cell.get("outputs", []):
            kind = out["output_type"]
            if kind == "stream":
                outs.append(("stream", out["name"], out["text"]))
            elif kind == "error":
                outs.append(("error", out["ename"], out["evalue"]))
            else:
                data = out.get("data", {})
                outs.append((kind, tuple((m, data[m]) for m in TEXT_MIMES if m in data)))
        cells.append(outs)
    return cells


@pytest.fixture(scope="module")
def executed() -> dict[str, nbformat.NotebookNode]:
    """Every notebook executed by tools/notebooks.py, two at a time, this checkout importable in
    their kernels (set for the whole pool: each execution sets and restores it, and they overlap)."""
    from tools.notebooks import execute

    with pytest.MonkeyPatch.context() as mp, ThreadPoolExecutor(WORKERS) as pool:
        mp.setenv("PYTHONPATH", os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p))
        return dict(zip((p.stem for p in NOTEBOOKS), pool.map(lambda p: execute(p, timeout=CELL_TIMEOUT), NOTEBOOKS)))


# --- what a notebook shows -------------------------------------------------------------------------


def _shown_steps(path: Path) -> list[tuple[str, str | None, str]]:
    """(claim, step name or None for every step, call) for each show_step/show_steps call of the
    notebook, read from its code (string literals only)."""
    nb = nbformat.read(path, as_version=4)
    shown = []
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        for node in ast.walk(ast.parse(cell.source)):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr in ("show_step", "show_steps")):
                continue
            args = [a.value if isinstance(a, ast.Constant) else a for a in node.args]
            claim = args[0]
            assert isinstance(claim, str), f"{path.name}: {node.func.attr} needs a literal claim"
            if node.func.attr == "show_step":
                assert isinstance(args[1], str), f"{path.name}: show_step needs a literal step name"
                shown.append((claim, args[1], "show_step"))
            elif len(args) == 1:
                shown.append((claim, None, "show_steps"))
            else:
                assert isinstance(args[1], ast.List), f"{path.name}: show_steps names must be a literal list"
                shown += [(claim, el.value, "show_steps") for el in args[1].elts]
    return shown


def _defects(step) -> list[str]:
    """Why a shown step would not read as a checked derivation step (empty when it does): sides
    that print alike in text or in LaTeX (sympy.latex, not the package's printer), a method
    outside proofs.core.METHODS (such as "custom"), or a status other than checked."""
    from proofs.core import METHODS

    out = []
    parts = step.relation.args if isinstance(step.relation, sp.And) else (step.relation,)
    for p in parts:
        if hasattr(p, "lhs") and (str(p.lhs) == str(p.rhs) or sp.latex(p.lhs) == sp.latex(p.rhs)):
            out.append(f"identical sides {p.lhs}")
    if step.method == "custom" or step.method not in METHODS:
        out.append(f"method {step.method!r}")
    if step.status != "checked":
        out.append(f"status {step.status}")
    return out


def test_rounding_residuals_are_shown_as_a_bound() -> None:
    from verify.notebook import stable_text

    assert (stable_text("error 2.2e-16, tolerance 1e-9, 7e-52 and 4.10e-10; 3e-12 vs 3e-11")
            == "error <1e-12, tolerance 1e-9, <1e-12 and 4.10e-10; <1e-12 vs 3e-11")


def test_one_notebook_per_claim_group() -> None:
    stems = [p.stem for p in NOTEBOOKS]
    assert set(GROUPS) <= set(stems), sorted(set(GROUPS) - set(stems))
    assert all(re.fullmatch(r"\d\d_[a-z0-9_]+", s) for s in stems), stems


def test_the_defect_check_catches_a_tautology_and_a_custom_method() -> None:
    """The check the next test relies on must fail on each defect of issue 11."""
    from proofs.core import Step

    V = sp.Symbol("V", positive=True)
    premise = sp.Subs(V**2, V, 2)
    assert _defects(Step("s", sp.Eq(V, V, evaluate=False), method="expand", status="checked")) == ["identical sides V"]
    assert _defects(Step("s", sp.Eq(premise, 4, evaluate=False), method="custom", status="checked")) == \
        ["method 'custom'"]
    assert _defects(Step("s", sp.Eq(premise, 4, evaluate=False), method="simplify", status="failed")) == \
        ["status failed"]
    assert _defects(Step("s", sp.Eq(premise, 4, evaluate=False), method="simplify", status="checked")) == []


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_shown_steps_read_as_a_derivation(path: Path) -> None:
    """No step a notebook shows prints with identical sides, none is checked by an unnamed
    method ("custom"), and the stored outputs name a known method for every step shown."""
    from proofs import derivation
    from proofs.core import METHODS

    shown = _shown_steps(path)
    steps = []
    for claim, name, _ in shown:
        der = derivation(claim)
        by_name = {s.name: s for s in der.steps}
        if name is None:
            steps += der.steps
        else:
            assert name in by_name, f"{path.name}: no step {claim}/{name}"
            steps.append(by_name[name])
    bad = {s.name: _defects(s) for s in steps if _defects(s)}
    assert not bad, f"{path.name}: {bad}"
    nb = nbformat.read(path, as_version=4)
    named = [m for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
             for m in CHECKED_BY.findall(o.get("data", {}).get("text/markdown", ""))]
    assert len(named) == len(steps), f"{path.name}: {len(named)} stored steps name a method, {len(steps)} shown"
    assert set(named) <= set(METHODS), sorted(set(named) - set(METHODS))


@pytest.mark.parametrize("path", [ROOT / "notebooks" / f"{g}.ipynb" for g in GROUPS[:5]], ids=lambda p: p.stem)
def test_group_notebooks_show_key_steps_and_the_full_list(path: Path) -> None:
    """A reader's notebook: key steps one at a time, then every step of each claim shown."""
    shown = _shown_steps(path)
    key = [(c, n) for c, n, call in shown if call == "show_step"]
    claims = {c for c, _ in key}
    assert len(key) >= 4 * len(claims) and all(len([1 for c, _ in key if c == k]) <= 10 for k in claims), key
    assert {c for c, n, call in shown if call == "show_steps" and n is None} == claims


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_defines_no_logic(path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        tree = ast.parse(cell.source)
        bad = [type(node).__name__ for node in ast.walk(tree) if isinstance(node, FORBIDDEN)]
        assert not bad, f"{path.name}: cell {cell.source[:60]!r} defines logic ({bad})"
        imported = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        imported |= {n.module.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
        assert imported <= {"verify", "proofs", "torch", "importlib", "pathlib"}, imported


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_stored_outputs_are_complete(path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(c.get("outputs") is not None for c in code)
    assert all(o["output_type"] != "error" for c in code for o in c.outputs), f"{path.name} stores an error"
    shown = [o for c in code for o in c.outputs]
    assert any("image/png" in o.get("data", {}) for o in shown), f"{path.name} stores no plot"
    assert any("text/latex" in o.get("data", {}) or "text/markdown" in o.get("data", {}) or o["output_type"] == "stream"
               for o in shown)


#: Figures that measure floating-point rounding itself, with how they print. They depend on the
#: CPU's vector path (numpy's float64 exp and matmul differ between AVX2 and AVX-512 in the last
#: bit), not on the claim, so a notebook stored on one machine is compared on another with them
#: masked. The figures are pinned elsewhere against independent computations (mpmath, arb).
ROUNDING_FIGURES = (
    (re.compile(r"agrees to \d+\.\d digits"), "agrees to # digits"),
    (re.compile(r"at most \$[0-9.]+\$ of the (?:float64 )?rounding bound"), "at most # of the rounding bound"),
    (re.compile(r"agrees (?:exactly|to \$< 10\^\{-12\}\$)"), "agrees to #"),
    (re.compile(r"at most \$(?:0|< 10\^\{-12\})\$"), "at most #"),
)


def _rounding_masked(text):
    """``text`` (any nesting of tuples and strings) with :data:`ROUNDING_FIGURES` masked."""
    if isinstance(text, str):
        for pattern, mask in ROUNDING_FIGURES:
            text = pattern.sub(mask, text)
        return text
    if isinstance(text, (tuple, list)):
        return type(text)(_rounding_masked(t) for t in text)
    return text


@pytest.mark.parametrize("a, b, same", [
    ("float64 agrees to 15.7 digits; MSE 0.093", "float64 agrees to 15.4 digits; MSE 0.093", True),
    ("(at most $0.0067$ of the rounding bound)", "(at most $0.0071$ of the rounding bound)", True),
    ("`c2_mha` agrees exactly.", "`c2_mha` agrees to $< 10^{-12}$.", True),
    ("permutations by at most $0$;", "permutations by at most $< 10^{-12}$;", True),
    ("float64 agrees to 15.7 digits; MSE 0.093", "float64 agrees to 15.7 digits; MSE 0.094", False),
    ("permutations by at most $0$;", "permutations by at most $0.01$;", False),
    ("`c2_mha` agrees exactly.", "`c2_mha` agrees to $10^{-3}$.", False),
    ("at most $0.0067$ of the rounding bound", "at most $0.0067$ of the sample", False),
], ids=["digits", "bound-fraction", "exactly", "zero", "mse-differs", "not-rounding", "loose-agreement", "other-noun"])
def test_only_rounding_figures_are_masked(a, b, same) -> None:
    assert (_rounding_masked(a) == _rounding_masked(b)) is same


@pytest.mark.slow  # re-executes every notebook in its own kernel
@pytest.mark.parametrize("name", [p.stem for p in NOTEBOOKS])
def test_notebook_runs_and_matches_stored_text(executed: dict, name: str) -> None:
    fresh = _texts(executed[name])
    errors = [o for cell in fresh for o in cell if o[0] == "error"]
    assert not errors, f"{name} raised: {errors}"
    stored = _texts(nbformat.read(ROOT / "notebooks" / f"{name}.ipynb", as_version=4))
    assert len(fresh) == len(stored)
    for k, (a, b) in enumerate(zip(fresh, stored)):
        assert _rounding_masked(a) == _rounding_masked(b), (
            f"{name}: code cell {k} output differs from the stored one; "
            "run `python tools/notebooks.py refresh` if the change is intended")
    # Time is measured, not asserted (python tools/notebooks.py refresh prints it per notebook).


# --- the helpers -----------------------------------------------------------------------------------


def test_show_step_prints_the_checked_relation_and_its_method(capsys) -> None:
    from proofs import derivation
    from verify import notebook as nb

    der = derivation("C5")
    k, step = next((k, s) for k, s in enumerate(der.steps, 1) if s.name == "non_increasing")
    nb.show_step("C5", "non_increasing")
    out = capsys.readouterr().out
    assert f"**Step {k} of {len(der.steps)}** `non_increasing`: checked by **certificate**" in out
    assert sp.latex(step.relation) in out                           # the relation itself, one line
    assert sp.latex(step.params["certificate"]) in out              # and what proves it
    nb.show_step("C5", "non_increasing", computed=False)
    assert "certificate" not in capsys.readouterr().out.split("\n", 1)[1]


@pytest.mark.parametrize("show, call", [("show_step", ("C5", "no_such_step")), ("show_step", ("C5", None)),
                                        ("show_step", ("C99", "mse_line")), ("show_step", (5, "mse_line")),
                                        ("show_steps", ("C7", ["a_corr_optimum", "no_such_step"]))])
def test_show_step_refuses_an_unknown_name(show, call) -> None:
    from verify import notebook as nb
    from verify.errors import VerifyError

    with pytest.raises(VerifyError, match=r"^(name|claim|names): expected"):
        getattr(nb, show)(*call)


def test_prose_typesets_mathematics_and_keeps_code() -> None:
    from verify.notebook import _prose

    assert _prose("bandwidth $d_k^{1/4}$ of `c3_decomposition`") == "bandwidth $d_{k}^{1/4}$ of `c3_decomposition`"
    # text that is not markup is shown literally, never guessed at
    assert _prose("bandwidth d_k^(1/4)") == r"bandwidth d\_k\^\(1/4\)"
    assert _prose("error 2.2e-16") == "error $< 10^{-12}$"
    assert _prose("error $e = 2.2e-16$ and $3 \\times 10^{-40}$") == "error $e = < 10^{-12}$ and $< 10^{-12}$"
    assert _prose("error 2.2e-11") == "error 2.2e-11"           # above the rounding level: kept


def _tiny(path: Path, source: str) -> Path:
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source)]), path)
    return path


def test_refresh_stores_outputs_and_the_command_fails_cleanly(tmp_path: Path, capsys) -> None:
    from tools.notebooks import main

    good = _tiny(tmp_path / "a.ipynb", "print(6 * 7)")
    assert main(["refresh", str(good)]) == 0
    assert nbformat.read(good, as_version=4).cells[0].outputs[0]["text"] == "42\n"
    assert [p.name for p in tmp_path.iterdir()] == ["a.ipynb"]      # no temporary file left

    bad = _tiny(tmp_path / "b.ipynb", "1 / 0")
    before = bad.read_bytes()
    assert main(["refresh", str(bad)]) == 1
    assert "error:" in capsys.readouterr().err and bad.read_bytes() == before
    assert main(["refresh", str(tmp_path / "missing.ipynb")]) == 2
    assert capsys.readouterr().err.startswith("error: notebook: expected an existing .ipynb file")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_stored_notebooks_show_each_claims_title_and_headline(path: Path, quick_run) -> None:
    """The notebooks show the same title and the same headline as the terminal, report.md and the
    PDF (tests/test_rendering.py, tests/test_latex.py): for every claim a notebook introduces
    (``## CX: title``), the title is the claim's, and where it shows the verdict, the headline is
    the quick run's, rendered for Markdown."""
    from proofs.markup import render
    from verify.notebook import stable_text

    nb = nbformat.read(path, as_version=4)
    shown = "\n".join(o.get("data", {}).get("text/markdown", "") for c in nb.cells if c.cell_type == "code"
                      for o in c.get("outputs", []))
    claims = re.findall(r"^## (C\d): (.*)$", shown, flags=re.M)
    assert claims or path.stem == "06_pretrained_hdi", f"{path.name} introduces no claim"
    for cid, title in claims:
        result, _ = quick_run(cid)
        assert title == render(" ".join(result.title.split()), "markdown"), (path.name, cid)
        if "### Verdict:" in shown:
            headline = render(" ".join(stable_text(result.headline, markup=True).split()), "markdown")
            assert f"*{headline}*" in shown, (path.name, cid)
