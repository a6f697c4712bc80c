"""The derivation notebooks run top to bottom and their stored outputs are current.

Each notebook is re-executed in a fresh ``python3`` kernel (nbclient, this interpreter's
ipykernel) and every text output - stream, text/plain, text/latex, text/markdown - must equal
the stored one; execution counts, timing metadata and image bytes are ignored. Refresh the stored
outputs with ``python -m verify.notebook refresh``.
"""

from __future__ import annotations

import ast
import os
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
EXPECTED = ["01_decomposition", "02_hdi_and_orthogonality", "03_scaling_law", "04_weighting",
            "05_attention_as_nw", "06_pretrained_hdi", "07_training"]
# Per-cell limit for nbclient: a hung cell fails the test instead of blocking the suite.
CELL_TIMEOUT = 120
TEXT_MIMES = ("text/plain", "text/latex", "text/markdown")
# Two notebooks at a time: each waits on its own kernel process.
WORKERS = 2
# Statements a notebook may not contain: it calls proofs and verify, it defines no logic.
FORBIDDEN = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda, ast.For, ast.While,
             ast.If, ast.ListComp, ast.DictComp, ast.SetComp, ast.GeneratorExp)


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


def _execute(path: Path) -> tuple[nbformat.NotebookNode, float]:
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(nb, timeout=CELL_TIMEOUT, kernel_name="python3", record_timing=False,
                            resources={"metadata": {"path": str(path.parent)}})
    t0 = time.perf_counter()
    client.execute()
    return nb, time.perf_counter() - t0


@pytest.fixture(scope="module")
def executed() -> dict[str, tuple[nbformat.NotebookNode, float]]:
    old = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), old) if p)  # the kernel imports this checkout
    try:
        with ThreadPoolExecutor(WORKERS) as pool:
            runs = dict(zip(NOTEBOOKS, pool.map(_execute, NOTEBOOKS)))
    finally:
        if old is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = old
    return {p.stem: r for p, r in runs.items()}


def test_rounding_residuals_are_shown_as_a_bound() -> None:
    from verify.notebook import stable_text

    assert (stable_text("error 2.2e-16, tolerance 1e-9, 7e-52 and 4.10e-10; 3e-12 vs 3e-11")
            == "error <1e-12, tolerance 1e-9, <1e-12 and 4.10e-10; <1e-12 vs 3e-11")


def test_one_notebook_per_claim_group() -> None:
    assert [p.stem for p in NOTEBOOKS] == EXPECTED


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


@pytest.mark.parametrize("name", EXPECTED)
def test_notebook_runs_and_matches_stored_text(executed: dict, name: str) -> None:
    nb, _seconds = executed[name]
    fresh = _texts(nb)
    errors = [o for cell in fresh for o in cell if o[0] == "error"]
    assert not errors, f"{name} raised: {errors}"
    stored = _texts(nbformat.read(ROOT / "notebooks" / f"{name}.ipynb", as_version=4))
    assert len(fresh) == len(stored)
    for k, (a, b) in enumerate(zip(fresh, stored)):
        assert a == b, (f"{name}: code cell {k} output differs from the stored one; "
                        "run `python -m verify.notebook refresh` if the change is intended")
    # Time is measured, not asserted (python -m verify.notebook refresh prints it per notebook).
