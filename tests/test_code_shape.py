"""Code the formatter can read: what the old line budgets were meant to protect.

- `ruff format` lays out every file (CI runs `ruff format --check`); `# fmt: skip` is kept only
  on aligned data tables, at most MAX_FMT_SKIPS in the repository, each with its reason on the
  same line (`# fmt: skip  (aligned table: ...)`).
- A call of one of the project's own functions with more than three arguments names them
  (keyword arguments): `Template(n, "attention", g, c, w, 0.0, ...)` hides which is which.
- A module holds one concept: it opens with a docstring whose first line says what it holds.
- A function reads top to bottom on a screen or so (at most MAX_FUNCTION_LINES lines as
  formatted); past it, it is split by what it does, never packed.
"""

from __future__ import annotations

import ast
import io
import tokenize
from functools import cache
from pathlib import Path

import pytest

from tests.conftest import repo_files

ROOT = Path(__file__).resolve().parent.parent
MAX_FMT_SKIPS = 20
MAX_POSITIONAL = 3
MAX_FUNCTION_LINES = 100


def python_files() -> list[Path]:
    return repo_files(suffixes=(".py",))


FILES = python_files()


def _rel(path: Path) -> str:
    return str(path.relative_to(ROOT))


@cache
def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text())


def fmt_skips(source: str) -> list[tuple[int, str]]:
    """(line, comment) of every `# fmt: skip` comment (comments only, not strings)."""
    tokens = tokenize.generate_tokens(io.StringIO(source).readline)
    return [
        (t.start[0], t.string)
        for t in tokens
        if t.type == tokenize.COMMENT and t.string.lstrip("# ").startswith("fmt: skip")
    ]


def test_fmt_skip_only_on_aligned_tables_with_a_reason():
    found = [(_rel(p), line, c) for p in FILES for line, c in fmt_skips(p.read_text())]
    assert len(found) <= MAX_FMT_SKIPS, f"{len(found)} '# fmt: skip' markers: {found[:5]}"
    unexplained = [(f, line) for f, line, c in found if "aligned table" not in c]
    assert not unexplained, f"'# fmt: skip' without '(aligned table: why)': {unexplained}"


def test_the_skip_finder_reads_comments_not_strings():
    source = 'x = "# fmt: skip"\nt = [1,  2]  # fmt: skip  (aligned table: columns)\n'
    assert fmt_skips(source) == [(2, "# fmt: skip  (aligned table: columns)")]


@cache
def _project_signatures() -> dict[str, bool]:
    """Every function and class name defined at module or class level in the project (not
    nested helpers, which may share a library function's name) ->
    whether every definition of that name takes a fixed number of positional arguments."""
    fixed: dict[str, bool] = {}
    for path in FILES:
        tree = _tree(path)
        members = [n for c in tree.body if isinstance(c, ast.ClassDef) for n in c.body]
        for node in [*tree.body, *members]:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                ok = node.args.vararg is None
            elif isinstance(node, ast.ClassDef):
                ok = True
            else:
                continue
            fixed[node.name] = fixed.get(node.name, True) and ok
    return fixed


def positional_calls(tree: ast.AST, signatures: dict[str, bool]) -> list[tuple[int, str]]:
    """(line, name) of calls of a project function or class with more than MAX_POSITIONAL
    positional arguments (functions that take *args are left alone: their arguments are a
    list, not named parameters)."""
    hits = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = getattr(func, "id", None) or getattr(func, "attr", None)
        if not signatures.get(name, False):
            continue
        positional = [a for a in node.args if not isinstance(a, ast.Starred)]
        if len(positional) > MAX_POSITIONAL and len(positional) == len(node.args):
            hits.append((node.lineno, name))
    return hits


@pytest.mark.parametrize("path", FILES, ids=_rel)
def test_calls_with_more_than_three_arguments_name_them(path):
    hits = positional_calls(_tree(path), _project_signatures())
    assert not hits, f"{_rel(path)}: calls with more than three positional arguments: {hits}"


def test_the_call_check_catches_a_positional_call():
    tree = ast.parse("f(a, b, c, d)\nf(a, b, c, d=1)\ng(*xs)\nf(a, *xs, b, c, d)\n")
    assert positional_calls(tree, {"f": True, "g": True}) == [(1, "f")]
    assert positional_calls(tree, {"f": False}) == []  # f takes *args


@pytest.mark.parametrize("path", FILES, ids=_rel)
def test_every_module_opens_with_what_it_holds(path):
    doc = ast.get_docstring(_tree(path))
    if path.name == "__init__.py" and not path.read_text().strip():
        return
    assert doc and doc.splitlines()[0].strip(), f"{_rel(path)} does not say what it holds"


def long_functions(tree: ast.AST, limit: int) -> list[tuple[str, int]]:
    return [
        (node.name, node.end_lineno - node.lineno + 1)
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.end_lineno - node.lineno + 1 > limit
    ]


@pytest.mark.parametrize("path", FILES, ids=_rel)
def test_functions_read_on_a_screen(path):
    long = long_functions(_tree(path), MAX_FUNCTION_LINES)
    assert not long, f"{_rel(path)}: split by what they do: {long}"


def test_the_length_check_counts_lines_as_formatted():
    tree = ast.parse("def f():\n" + "    x = 1\n" * 5 + "def g():\n    pass\n")
    assert long_functions(tree, 5) == [("f", 6)]
