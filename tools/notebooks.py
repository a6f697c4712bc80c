"""Re-execute the derivation notebooks and store their outputs (a developer tool; needs the
test extras' nbformat, nbclient and ipykernel).

    python tools/notebooks.py refresh [notebooks/01_decomposition.ipynb ...]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any, Iterable

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from verify.errors import VerifyError  # noqa: E402

__all__ = ["NOTEBOOK_DIR", "CELL_TIMEOUT", "notebooks", "execute", "refresh", "main"]

NOTEBOOK_DIR = ROOT / "notebooks"
#: Per-cell limit when a notebook is executed: a hung cell fails instead of blocking.
CELL_TIMEOUT = 300



def notebooks() -> list[Path]:
    """The notebooks of the repository, in order: every ``notebooks/*.ipynb``."""
    return sorted(NOTEBOOK_DIR.glob("*.ipynb"))


def _notebook_path(path: str | Path) -> Path:
    path = Path(path)
    if path.suffix != ".ipynb" or not path.is_file():
        raise VerifyError(f"notebook: expected an existing .ipynb file, got {str(path)!r}")
    return path


def execute(path: str | Path, *, timeout: int = CELL_TIMEOUT) -> Any:
    """Run a notebook top to bottom in a fresh ``python3`` kernel (this interpreter's ipykernel),
    in its own folder, with this checkout importable; returns the executed notebook."""
    import nbformat
    from nbclient import NotebookClient

    path = _notebook_path(path)
    nb = nbformat.read(path, as_version=4)
    old = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), old) if p)  # the kernel inherits it
    try:
        client = NotebookClient(nb, timeout=timeout, kernel_name="python3", record_timing=False,
                                resources={"metadata": {"path": str(path.parent)}})
        client.execute()
    finally:
        if old is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = old
    return nb


def refresh(paths: Iterable[str | Path] | None = None) -> dict[Path, float]:
    """Re-execute notebooks (default: every ``notebooks/*.ipynb``) and store their outputs, each
    written atomically; returns the seconds each took. A notebook that raises is not written."""
    import nbformat

    from verify.io import atomic_write_text

    chosen = [_notebook_path(p) for p in (notebooks() if paths is None else paths)]
    times = {}
    for path in chosen:
        t0 = time.perf_counter()
        nb = execute(path)
        times[path] = time.perf_counter() - t0
        for cell in nb.cells:
            cell.get("metadata", {}).pop("execution", None)
        text = nbformat.writes(nb)
        atomic_write_text(path, text if text.endswith("\n") else text + "\n")
    return times


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m verify.notebook",
                                description="Re-execute the derivation notebooks and store their outputs.")
    p.add_argument("command", choices=["refresh"])
    p.add_argument("notebooks", nargs="*", type=Path, help="default: every notebooks/*.ipynb")
    args = p.parse_args(argv)
    from nbclient.exceptions import CellExecutionError

    try:
        paths = [_notebook_path(x) for x in args.notebooks] or notebooks()
    except VerifyError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for path in paths:
        try:
            seconds = refresh([path])[path]
        except CellExecutionError as exc:
            print(f"error: {path}: a cell raised {exc.ename}: {exc.evalue}; its stored outputs are unchanged",
                  file=sys.stderr)
            return 1
        print(f"{path}: executed and stored in {seconds:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
