"""The layers stay apart.

- The engine is pure: it never imports streamlit, plotly or ui, and never prints (bar the CLI).
- Pages and ui/ use only the engine's public API: `import engine` and the names in
  `engine.__all__`, never `engine.<module>` (so the engine's modules can change freely).
- ui/ is folders by role and by page (docs/architecture.md), shared folders lowest first:
  ui/words (translation, formatting) and ui/runtime (the server's memory) import nothing else
  of ui/; ui/links (share-link parameters) only those two; ui/core (what every page needs) the
  three; ui/charts the four; ui/widgets the five (the arrow runs widgets -> charts, never
  back); a page's folder ui/<page>/ only the shared folders, never another page's folder;
  pages/<page>.py only the shared folders and its own ui/<page>/; app.py only the shared ones.
  No import cycles, between folders or between modules.
- bench/ never imports tests/ (shared code lives in tools/).
- The engine is cut by concept: at most four shared modules at its root, folders that import
  downward only (catalog, report, scenarios, roofline, serving, load/training, accuracy, cli)
  and no import cycles.
- Shape (tests/test_code_shape.py): the formatter lays the code out; a module holds one concept.
"""

import ast
from pathlib import Path

import pytest

import engine
from tests.conftest import repo_files

ROOT = Path(__file__).resolve().parent.parent
ENGINE_FILES = sorted((ROOT / "engine").rglob("*.py"))
UI_FILES = sorted([*(ROOT / "pages").glob("*.py"), *(ROOT / "ui").rglob("*.py"), ROOT / "app.py"])
BENCH_FILES = sorted((ROOT / "bench").glob("*.py"))


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
    "explore": 2,  # constraints and the Pareto front over any table
    "scenarios": 3,
    "roofline": 4,
    "serving": 5,
    "load": 6,
    "training": 6,
    "accuracy": 7,
    "deploy": 7,
    "footprint": 7,  # energy, carbon, water and cost of ownership
    "cli": 8,
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
            found += [
                f"{base}.{a.name}" if f"{base}.{a.name}" in ENGINE_MODULES else base
                for a in node.names
            ]
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


# --- ui/ and pages/: folders by role and by page, no cycles -----------------
UI = ROOT / "ui"
# The folders shared by every page, lowest first (the rest of ui/ is page folders): a shared
# folder imports its own modules and those of the ranks below it, never one beside or above it.
LAYER_RANKS = {"words": 0, "runtime": 0, "links": 1, "core": 2, "charts": 3, "widgets": 4}
LAYERS = tuple(LAYER_RANKS)
MAY_IMPORT = {
    layer: {other for other, below in LAYER_RANKS.items() if below < rank or other == layer}
    for layer, rank in LAYER_RANKS.items()
}


def module_name(path: Path) -> str:
    """ui/core/frame.py -> 'ui.core.frame'; ui/core/__init__.py -> 'ui.core'; app.py -> 'app'."""
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def folder(module: str) -> str:
    """Where a module lives, for the rules: a shared folder ('words', 'core', ...), a page folder,
    'pages/<page>' for a page script, 'ui' for ui/__init__, 'app' for app.py."""
    parts = module.split(".")
    if parts[0] == "pages":
        return f"pages/{parts[1]}"
    return parts[1] if parts[0] == "ui" and len(parts) > 1 else parts[0]


def allowed(src: str, dst: str) -> bool:
    """May a module in folder `src` import one in folder `dst`?"""
    if src in MAY_IMPORT:
        return dst in MAY_IMPORT[src]
    if src.startswith("pages/"):
        return dst in LAYERS or dst == src.removeprefix("pages/")
    if src == "app":
        return dst in LAYERS
    if src == "ui":
        return False  # ui/__init__.py imports nothing
    return dst in LAYERS or dst == src  # a page's folder


def imported(module: str, tree: ast.AST, known: set[str]) -> set[str]:
    """The project modules (ui.*, pages.*, app) `module` imports, each resolved to the most
    specific module in `known` (`from ui.core import frame` -> ui.core.frame), relative imports
    included."""
    package = module if _is_package(module, known) else module.rpartition(".")[0]
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*up, *([base] if base else [])])
            names = [f"{base}.{a.name}" for a in node.names] + [base]
        else:
            continue
        for name in names:
            while name and name not in known:
                name = name.rpartition(".")[0]
            if name and name != module:
                found.add(name)
    return found


def _is_package(module: str, known: set[str]) -> bool:
    return any(m.startswith(module + ".") for m in known)


def import_graph(sources: dict[str, str]) -> dict[str, set[str]]:
    """Module -> the project modules it imports, for `sources` (module name -> code)."""
    known = set(sources)
    return {m: imported(m, ast.parse(code), known) for m, code in sources.items()}


def forbidden_arrows(graph: dict[str, set[str]]) -> list[str]:
    """Every import that breaks a folder rule, as 'a -> b'."""
    return sorted(
        f"{src} -> {dst}"
        for src, dsts in graph.items()
        for dst in dsts
        if not allowed(folder(src), folder(dst))
    )


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import cycles: every strongly connected set of two or more modules (Tarjan), and
    a module that imports itself; each sorted, the list sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in graph.get(node, ()):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                top = stack.pop()
                group.append(top)
                if top == node:
                    break
            if len(group) > 1 or node in graph.get(node, ()):
                found.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def folder_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """The same imports between folders (a folder's own imports left out)."""
    out: dict[str, set[str]] = {}
    for src, dsts in graph.items():
        out.setdefault(folder(src), set()).update(
            folder(d) for d in dsts if folder(d) != folder(src)
        )
    return out


PROJECT = {module_name(p): p.read_text() for p in UI_FILES}
GRAPH = import_graph(PROJECT)


def test_ui_folders_follow_the_rules():
    assert not forbidden_arrows(GRAPH)


def test_ui_has_no_import_cycles():
    assert not cycles(GRAPH), cycles(GRAPH)
    assert not cycles(folder_graph(GRAPH)), cycles(folder_graph(GRAPH))


def test_the_folder_check_catches_a_forbidden_arrow_and_a_cycle():
    sources = {
        "ui.core.frame": "from ui.widgets import pickers",  # core may import nothing above it
        "ui.core.downloads": "import streamlit",
        "ui.words.format": "import numpy",
        "ui.words.i18n": "import gettext",
        "ui.runtime.memo": "from ui.words import i18n",  # beside, at the same rank: no
        "ui.links.params": "from ui.words.i18n import _\nfrom ui.core.frame import x",  # above
        "ui.widgets.pickers": (
            "from ui.words.format import fmt\nfrom ui.charts import theme\n"
            "from ui.core import downloads"
        ),
        "ui.charts.theme": "from ui.widgets.pickers import x",  # charts -> widgets: no
        "ui.solve.view": "from ui.sweep import view\nfrom ui.core import frame",  # another page
        "ui.sweep.view": "from ..words import format\nfrom . import link",  # relative: fine
        "ui.sweep.link": "from ui.sweep.view import y",  # a cycle inside one folder
        "pages.solve": "from ui.solve import view\nfrom ui.sweep.link import PAGE",
        "app": "from ui.core.frame import setup_page",
    }
    graph = import_graph(sources)
    assert graph["ui.sweep.view"] == {"ui.words.format", "ui.sweep.link"}
    assert forbidden_arrows(graph) == [
        "pages.solve -> ui.sweep.link",
        "ui.charts.theme -> ui.widgets.pickers",
        "ui.core.frame -> ui.widgets.pickers",
        "ui.links.params -> ui.core.frame",
        "ui.runtime.memo -> ui.words.i18n",
        "ui.solve.view -> ui.sweep.view",
    ]
    assert cycles(graph) == [
        ["ui.charts.theme", "ui.widgets.pickers"],
        ["ui.sweep.link", "ui.sweep.view"],
    ]
    assert cycles(folder_graph(graph)) == [["charts", "core", "widgets"]]


def test_ui_is_folders_each_saying_what_lives_there():
    assert sorted(p.name for p in UI.glob("*.py")) == ["__init__.py"]
    folders = sorted(d for d in UI.iterdir() if d.is_dir() and d.name != "__pycache__")
    assert {d.name for d in folders} >= {*LAYERS, "solve", "sweep", "compare", "decode", "plan"}
    for d in folders:
        init = d / "__init__.py"
        assert init.exists() and ast.get_docstring(ast.parse(init.read_text())), d
    for page in (ROOT / "pages").glob("*.py"):  # every page's own code in ui/<page>/ if any
        assert folder(f"pages.{page.stem}") == f"pages/{page.stem}"


@pytest.mark.parametrize("path", sorted(UI.rglob("*.py")), ids=_rel)
def test_every_ui_module_says_what_it_is(path):
    assert ast.get_docstring(ast.parse(path.read_text())), f"{_rel(path)} has no docstring"


@pytest.mark.parametrize("path", BENCH_FILES, ids=_rel)
def test_bench_never_imports_tests(path):
    modules = _imported_modules(ast.parse(path.read_text()))
    assert not [m for m in modules if m.split(".")[0] == "tests"], path


def python_files() -> list[Path]:
    """Every Python file of the project (not the virtualenv, caches or git internals)."""
    return repo_files(suffixes=(".py",))


def test_file_lists_are_what_they_say():
    files = {_rel(p) for p in python_files()}
    assert {"app.py", "engine/roofline/solve.py", "tools/server.py"} <= files
    assert not any(f.startswith(".venv") for f in files)
    assert len(ENGINE_FILES) >= 8 and len(UI_FILES) >= 8 and BENCH_FILES


def download_buttons_that_rerun(tree: ast.AST) -> list[int]:
    """Lines of st.download_button calls without on_click=NO_RERUN (ui/core/downloads.py)."""
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and getattr(node.func, "attr", None) == "download_button"
        and not any(
            k.arg == "on_click" and getattr(k.value, "id", None) == "NO_RERUN"
            for k in node.keywords
        )
    ]


@pytest.mark.parametrize("path", UI_FILES, ids=_rel)
def test_no_download_button_reruns_the_page(path):
    """A download's rerun revoked the file id the browser was about to fetch (no download)."""
    assert not download_buttons_that_rerun(ast.parse(path.read_text())), _rel(path)


def test_the_download_check_catches_a_button_that_reruns():
    bad = ast.parse('st.download_button("CSV", data, key="k")\nst.download_button("x", d)')
    good = ast.parse('st.download_button("CSV", data, key="k", on_click=NO_RERUN)')
    assert download_buttons_that_rerun(bad) == [1, 2] and not download_buttons_that_rerun(good)


def bare_expressions(tree: ast.AST) -> list[int]:
    """Lines of expression statements Streamlit's "magic" would have drawn (not a call, a
    docstring, a yield or an await): with magic off (.streamlit/config.toml) they show nothing."""
    quiet = ast.Call | ast.Yield | ast.YieldFrom | ast.Await
    lines = []
    for node in ast.walk(tree):
        body = getattr(node, "body", None)  # a statement list (a lambda's body is one expression)
        for i, n in enumerate(body if isinstance(body, list) else []):
            if not isinstance(n, ast.Expr) or isinstance(n.value, quiet):
                continue
            text = isinstance(n.value, ast.Constant) and isinstance(n.value.value, str)
            if not (text and i == 0 and isinstance(node, ast.Module | ast.FunctionDef)):
                lines.append(n.lineno)
    return lines


@pytest.mark.parametrize(
    "path", [ROOT / "app.py", *sorted((ROOT / "pages").glob("*.py"))], ids=_rel
)
def test_no_page_draws_by_magic(path):
    assert "magicEnabled = false" in (ROOT / ".streamlit" / "config.toml").read_text()
    assert not bare_expressions(ast.parse(path.read_text())), _rel(path)


def test_the_magic_check_catches_a_bare_expression():
    bad = ast.parse('"""Doc."""\ndf\nx == 1\n"text"\nif x:\n    total\n')
    good = ast.parse('"""Doc."""\nst.write(df)\n\ndef f():\n    """Doc."""\n    yield 1\n')
    assert bare_expressions(bad) == [2, 3, 4, 6] and not bare_expressions(good)
