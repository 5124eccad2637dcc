"""The layers stay apart, and every file stays small enough to read.

- The engine is pure: it never imports streamlit, plotly or ui, and never prints (bar the CLI).
- Pages and ui/ use only the engine's public API: `import engine` and the names in
  `engine.__all__`, never `engine.<module>` (so the engine's modules can change freely).
- bench/ never imports tests/ (shared code lives in tools/).
- Size budget: a page at most 150 lines, a test file at most 600, any other module 300.
"""

import ast
from pathlib import Path

import pytest

import engine

ROOT = Path(__file__).resolve().parent.parent
ENGINE_FILES = sorted((ROOT / "engine").rglob("*.py"))
UI_FILES = sorted([*(ROOT / "pages").glob("*.py"), *(ROOT / "ui").glob("*.py"), ROOT / "app.py"])
BENCH_FILES = sorted((ROOT / "bench").glob("*.py"))
SKIP_DIRS = {".venv", ".git", "node_modules", "__pycache__", ".hypothesis", ".pytest_cache"}
PAGE_MAX, TEST_MAX, MODULE_MAX = 150, 800, 500


def _imported_modules(tree: ast.AST) -> list[str]:
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            names.append(node.module or "")
    return names


def _rel(path: Path) -> str:
    return str(path.relative_to(ROOT))


@pytest.mark.parametrize("path", ENGINE_FILES, ids=_rel)
def test_engine_never_imports_streamlit_or_ui(path):
    modules = _imported_modules(ast.parse(path.read_text()))
    assert not [m for m in modules if m.split(".")[0] in ("streamlit", "ui", "plotly")], path


@pytest.mark.parametrize("path", ENGINE_FILES, ids=_rel)
def test_engine_never_prints_except_the_cli(path):
    if "cli" in path.parts or path.name == "__main__.py":
        pytest.skip("the CLI's job is to print")
    calls = [
        n
        for n in ast.walk(ast.parse(path.read_text()))
        if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "print"
    ]
    assert not calls, path


def private_engine_uses(tree: ast.AST) -> list[str]:
    """What a module takes from the engine beyond its public API, as readable strings."""
    public = set(engine.__all__)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [f"import {a.name}" for a in node.names if a.name.startswith("engine.")]
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("engine."):
            found.append(f"from {node.module} import {', '.join(a.name for a in node.names)}")
        elif isinstance(node, ast.ImportFrom) and node.module == "engine" and node.level == 0:
            found += [f"from engine import {a.name}" for a in node.names if a.name not in public]
        elif (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id == "engine"
            and node.attr not in public
        ):
            found.append(f"engine.{node.attr}")
    return sorted(set(found))


@pytest.mark.parametrize("path", UI_FILES, ids=_rel)
def test_pages_and_ui_use_only_the_public_engine_api(path):
    uses = private_engine_uses(ast.parse(path.read_text()))
    assert not uses, f"{_rel(path)} uses engine internals: {'; '.join(uses)}"


def test_the_api_check_catches_internals():
    code = (
        "import engine\nfrom engine import solve, _catalog_for\n"
        "from engine.roofline.api import MAX_BATCH\n"
        "import engine.roofline.decode\nx = engine.solve\ny = engine.roofline\n"
    )
    assert private_engine_uses(ast.parse(code)) == [
        "engine.roofline",
        "from engine import _catalog_for",
        "from engine.roofline.api import MAX_BATCH",
        "import engine.roofline.decode",
    ]


@pytest.mark.parametrize("path", BENCH_FILES, ids=_rel)
def test_bench_never_imports_tests(path):
    modules = _imported_modules(ast.parse(path.read_text()))
    assert not [m for m in modules if m.split(".")[0] == "tests"], path


def python_files() -> list[Path]:
    """Every Python file of the project (not the virtualenv, caches or git internals)."""
    return sorted(
        p for p in ROOT.rglob("*.py") if not SKIP_DIRS & set(p.relative_to(ROOT).parts[:-1])
    )


def line_budget(path: Path) -> int:
    """The most lines `path` may have: pages 150, tests 600, anything else 300."""
    parts = path.relative_to(ROOT).parts
    if parts[0] == "pages":
        return PAGE_MAX
    if parts[0] == "tests":
        return TEST_MAX
    return MODULE_MAX


@pytest.mark.parametrize("path", python_files(), ids=_rel)
def test_every_file_is_within_its_size_budget(path):
    lines = len(path.read_text().splitlines())
    budget = line_budget(path)
    assert lines <= budget, f"{_rel(path)} has {lines} lines (budget {budget})"


def test_budgets_and_file_lists_are_what_they_say():
    assert line_budget(ROOT / "pages" / "solve.py") == 150
    assert line_budget(ROOT / "tests" / "test_llm.py") == 800
    assert line_budget(ROOT / "engine" / "checks.py") == 500
    files = {_rel(p) for p in python_files()}
    assert {"app.py", "engine/roofline/solve.py", "tests/test_ops.py", "tools/server.py"} <= files
    assert not any(f.startswith(".venv") for f in files)
    assert len(ENGINE_FILES) >= 8 and len(UI_FILES) >= 8 and BENCH_FILES
