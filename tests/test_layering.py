"""The layers stay apart, and every file stays small enough to read.

- The engine is pure: it never imports streamlit, plotly or ui, and never prints (bar the CLI).
- Pages and ui/ use only the engine's public API: `import engine` and the names in
  `engine.__all__`, never `engine.<module>` (so the engine's modules can change freely).
- bench/ never imports tests/ (shared code lives in tools/).
- The engine is cut by concept: at most four shared modules at its root, folders that import
  downward only (catalog, report, roofline, serving, load/training, accuracy, cli) and no
  import cycles.
- Size budget: a page at most 150 lines, a test file at most 800, any other module 500 (a soft
  limit: a file is small because its scope is small).
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


# The engine's concept folders, bottom up: a module may import its own folder, the root's shared
# modules and the folders below it, never one above (or beside, at the same rank).
ENGINE_RANKS = {
    "": 0,  # engine/arrays.py, checks.py, assumptions.py: shared by all
    "catalog": 1,
    "report": 2,
    "roofline": 3,
    "serving": 4,
    "load": 5,
    "training": 5,
    "accuracy": 6,
    "cli": 7,
}
ENGINE_ROOT_MAX = 4  # modules at engine/'s root besides __init__ and __main__
TOP_MODULES = ("engine", "engine.__main__")  # the public API and the CLI entry: above all


def engine_folder(module: str) -> str | None:
    """The concept folder of an engine module name ("" for the root), None outside the engine."""
    parts = module.split(".")
    if parts[0] != "engine" or len(parts) == 1:
        return None
    return parts[1] if parts[1] in ENGINE_RANKS and len(parts) > 2 else ""


def module_name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = [p for p in rel.parts if p != "__init__"]
    return ".".join(parts)


def engine_imports(path: Path) -> list[str]:
    """Engine modules a file imports (absolute, also inside functions)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names if a.name.startswith("engine")]
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("engine"):
            base = node.module
            found += [f"{base}.{a.name}" if f"{base}.{a.name}" in ENGINE_MODULES else base
                      for a in node.names]  # fmt: skip
    return found


def arrows_against_the_grain(src: str, imports: list[str]) -> list[str]:
    """Imports of `src` that reach a folder above its own (or a sibling of the same rank)."""
    own = engine_folder(src)
    bad = []
    for target in imports:
        folder = engine_folder(target)
        if own is None or folder is None or folder in ("", own) or src in TOP_MODULES:
            continue
        if ENGINE_RANKS[folder] >= ENGINE_RANKS[own]:
            bad.append(f"{src} -> {target}")
    return bad


ENGINE_MODULES = {module_name(p) for p in ENGINE_FILES}


def test_the_engine_is_cut_by_concept():
    root = [p.name for p in (ROOT / "engine").glob("*.py")]
    shared = sorted(set(root) - {"__init__.py", "__main__.py"})
    assert len(shared) <= ENGINE_ROOT_MAX, shared
    folders = [p for p in (ROOT / "engine").iterdir() if (p / "__init__.py").exists()]
    assert len(folders) >= 4 and {p.name for p in folders} <= set(ENGINE_RANKS)
    for folder in folders:  # each folder says what lives there
        assert ast.get_docstring(ast.parse((folder / "__init__.py").read_text())), folder


def test_engine_folders_import_downward_only():
    bad = [
        arrow
        for path in ENGINE_FILES
        for arrow in arrows_against_the_grain(module_name(path), engine_imports(path))
    ]
    assert not bad, bad


def test_the_engine_has_no_import_cycles():
    graph = {module_name(p): set(engine_imports(p)) & ENGINE_MODULES for p in ENGINE_FILES}
    graph = {m: {t for t in targets if t != m and m != "engine"} for m, targets in graph.items()}
    assert find_cycle(graph) is None


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """A cycle of the directed graph as a list of nodes, or None (depth-first search)."""
    state: dict[str, int] = {}  # 1: on the stack, 2: done

    def visit(node: str, stack: list[str]) -> list[str] | None:
        state[node] = 1
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt) :], nxt] if nxt in stack else [node, nxt]
            if nxt not in state and (found := visit(nxt, [*stack, nxt])):
                return found
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state and (found := visit(start, [start])):
            return found
    return None


def test_the_folder_rules_catch_what_they_forbid():
    assert arrows_against_the_grain("engine.catalog.specs", ["engine.serving.kernel"]) == [
        "engine.catalog.specs -> engine.serving.kernel"
    ]
    assert arrows_against_the_grain("engine.load.sim", ["engine.training.step"])  # siblings
    assert not arrows_against_the_grain("engine.serving.kernel", ["engine.catalog.shapes"])
    assert not arrows_against_the_grain("engine.serving.kernel", ["engine.checks"])
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


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
