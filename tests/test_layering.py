"""The engine is pure: it never imports streamlit, and never prints."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
ENGINE_FILES = sorted((ROOT / "engine").rglob("*.py"))


def _imported_modules(tree: ast.AST) -> list[str]:
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            names.append(node.module or "")
    return names


@pytest.mark.parametrize("path", ENGINE_FILES, ids=lambda p: p.name)
def test_engine_never_imports_streamlit_or_ui(path):
    modules = _imported_modules(ast.parse(path.read_text()))
    assert not [m for m in modules if m.split(".")[0] in ("streamlit", "ui", "plotly")], path


@pytest.mark.parametrize("path", ENGINE_FILES, ids=lambda p: p.name)
def test_engine_never_prints_except_the_cli(path):
    if path.name.startswith("cli") or path.name == "__main__.py":
        pytest.skip("the CLI's job is to print")
    calls = [
        n
        for n in ast.walk(ast.parse(path.read_text()))
        if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "print"
    ]
    assert not calls, path


def test_there_are_engine_files_to_check():
    assert len(ENGINE_FILES) >= 8
