"""The architecture as tests: the layers import one way, no module imports itself through others
(no import circle), and the installed package imports no test-only reference (torch, nbclient, nbformat) at import time.

The layers, bottom to top (a module may import its own layer and the ones below, never above):
``proofs`` → the foundation (``verify.errors``, ``verify._validate``, ``verify.schema``, ``verify.io``,
``verify._processes``, ``verify``'s ``__init__``) → ``verify.numeric`` → the drawing primitives
``verify.outputs.plots`` (matplotlib only, so that experiments and checks can draw) → ``verify.experiments`` → ``verify.judgment`` →
``verify.claims`` → ``verify.outputs`` → the entry points (``verify.run``, ``verify.cli``,
``verify.snapshot``, ``verify.replay``, ``verify.notebook``, ``verify.pytest_plugin``).
"""

from __future__ import annotations

import ast
import graphlib
import subprocess
import sys
from pathlib import Path


ROOT = Path(__file__).resolve().parent.parent

#: layer of each module or package prefix, bottom (0) to top; the first matching entry counts
LAYERS = (("proofs", 0), ("verify.errors", 1), ("verify._validate", 1), ("verify.schema", 1), ("verify.io", 1),
          ("verify._processes", 1),
          ("verify.numeric", 2),
          ("verify.outputs.plots", 3), ("verify.experiments", 4), ("verify.judgment", 5), ("verify.claims", 6),
          ("verify.outputs", 7), ("verify", 8))
#: imported lazily inside a function by design (named with the reason); all other imports count
LAZY_UPWARD = {
    # the sweep's progress line (lazily, when a terminal shows it)
    "verify.experiments.sweep": {"verify.outputs.report"},
    # `latex` without --report runs the checks first, as the main run does
    "verify.outputs.latex": {"verify.run"},
}
HEAVY = ("torch", "nbclient", "nbformat")


def _modules() -> dict[str, Path]:
    out = {}
    for base in ("proofs", "verify"):
        for path in sorted((ROOT / base).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


def _layer(module: str) -> int | None:
    if module == "verify":  # the package's __init__: the foundation's exceptions and the version
        return 1
    return next((level for prefix, level in LAYERS if module == prefix or module.startswith(prefix + ".")), None)


def _imports(path: Path, module: str) -> set[str]:
    """Every module ``path`` imports anywhere in its body (top level and inside functions)."""
    found, known = set(), _modules()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            # `from package import module` imports the module (the package's __init__ only docs)
            subs = {f"{node.module}.{a.name}" for a in node.names} & set(known)
            found |= subs or {node.module}
    return {m for m in found if m in known and m != module}


def test_the_layer_table_covers_every_module():
    assert len(_modules()) > 50
    for module in _modules():
        assert _layer(module) is not None, module


def _upward(graph: dict[str, set[str]]) -> list[str]:
    """The imports of ``graph`` (module -> what it imports) that go against the layers."""
    out = []
    for module, deps in graph.items():
        own = _layer(module)
        for dep in deps:
            dep_layer = _layer(dep)
            if dep_layer > own and dep not in LAZY_UPWARD.get(module, ()):
                out.append(f"{module} (layer {own}) -> {dep} (layer {dep_layer})")
    return sorted(out)


def test_imports_go_one_way():
    upward = _upward({module: _imports(path, module) for module, path in _modules().items()})
    assert not upward, "imports against the layers:\n" + "\n".join(upward)


def _circle(graph: dict[str, set[str]]) -> list[str]:
    """One import circle of ``graph`` (module -> what it imports), or [] when there is none; the
    lazy upward imports named in LAZY_UPWARD are left out (their reasons are given there)."""
    edges = {m: {d for d in deps if d not in LAZY_UPWARD.get(m, ())} for m, deps in graph.items()}
    try:
        graphlib.TopologicalSorter(edges).prepare()
    except graphlib.CycleError as exc:
        return exc.args[1]
    return []


def test_no_import_circle():
    circle = _circle({module: _imports(path, module) for module, path in _modules().items()})
    assert not circle, "import circle: " + " -> ".join(circle)


def test_the_check_can_fail(tmp_path):
    """An upward import written anywhere in a module (here inside a function) is found and
    reported; the same import downward is not."""
    path = tmp_path / "nw.py"
    path.write_text("def f():\n    from verify.cli import main\n")
    deps = _imports(path, "verify.numeric.nw")
    assert deps == {"verify.cli"}
    assert _upward({"verify.numeric.nw": deps}) == ["verify.numeric.nw (layer 2) -> verify.cli (layer 8)"]
    assert _upward({"verify.cli": {"verify.numeric.nw"}}) == []
    assert _circle({"proofs.markup": {"proofs.notation"}, "proofs.notation": {"proofs.markup"}})
    assert _circle({"verify.outputs.latex": {"verify.run"}, "verify.run": {"verify.outputs.latex"}}) == []


def test_no_test_only_reference_at_import_time():
    """Every module of the package imported in a fresh interpreter: none of torch, nbclient,
    nbformat is loaded (a converter such as ``from_torch`` imports torch when called)."""
    modules = [m for m in _modules() if m != "proofs.__main__" and m != "verify.__main__"]
    code = ("import importlib, sys\n"
            f"for m in {modules!r}:\n    importlib.import_module(m)\n"
            f"print(','.join(sorted(m for m in sys.modules if m.split('.')[0] in {HEAVY!r})))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert proc.stdout.strip() == "", f"importing the package loads {proc.stdout.strip()}"
