"""The repo's text stands on its own in a clone: every file path it names exists, and it cites
no ticket numbers (the word issue and a number, a number after "(#"), which mean nothing to
a reader of the code.

A path is repo-relative and starts at one of the top folders (`engine/serving/kernel.py`,
`ui/links/`, `data/profiles/*.toml`, `../engine/...` from a file below the root). A glob must
match something; a placeholder written `<page>` (or an f-string's `{page}`) stands for any one
name and must match something too; a module may be named without its `.py` (`ui/solve/explain`).
The few paths the docs tell a reader to create are listed in `CREATED`, each with its reason.
An upstream project's issue is cited by its URL (`.../issues/62144`), which says where it is.
"""

import glob
import re
from pathlib import Path

import pytest

from tests.conftest import repo_files

ROOT = Path(__file__).resolve().parent.parent
TEXT_SUFFIXES = {".py", ".md", ".toml", ".cfg", ".sh", ".yml", ".yaml", ".json", ".txt"}
TEXT_NAMES = {"Dockerfile", "run"}  # run: .ci/run, the CI entry point (a shell script)
TOP_FOLDERS = (
    "engine",
    "ui",
    "pages",
    "tests",
    "data",
    "docs",
    "bench",
    "tools",
    "deploy",
    "ci",
    "locales",
    r"\.ci",
    r"\.streamlit",
)
PLACEHOLDER = r"<[^>\s]*>|\{[^}\s]*\}"
PATH = re.compile(
    rf"(?<![\w./<>{{}}-])((?:\.\./)*(?:{'|'.join(TOP_FOLDERS)})/(?:[\w.*/-]|{PLACEHOLDER})*)"
)
TICKET = re.compile(r"\bissues? #?\d+|\(#\d+\)", re.IGNORECASE)  # not #333: a colour
CREATED = {  # named by the docs as what the reader makes, so not in a clone
    "data/profiles/team.toml": "README's calibrate example writes the team's profile there",
    "deploy/kubernetes/overlays/my-team": "a team's copy of the example overlay (docs/deploy.md)",
}


def text_files() -> list[Path]:
    """The repo's text files (not the virtualenv, caches, git internals or binaries)."""
    files = repo_files(suffixes=TEXT_SUFFIXES, names=TEXT_NAMES)
    return [p for p in files if not p.is_symlink()]


def named_paths(text: str) -> list[tuple[int, str]]:
    """The repo-relative paths `text` names, with their line numbers (a sentence's full stop,
    a comma or a closing bracket after a path is not part of it)."""
    return [
        (text.count("\n", 0, m.start()) + 1, m.group(1).rstrip(".,:;)"))
        for m in PATH.finditer(text)
    ]


def exists(path: str, base: Path = ROOT) -> bool:
    """Does `path` (relative to `base`) name something here? Placeholders and globs must match."""
    pattern = re.sub(PLACEHOLDER, "*", path).rstrip("/")
    if "*" in pattern:
        return bool(glob.glob(pattern, root_dir=base, recursive=True))
    target = base / pattern
    return target.exists() or target.with_name(target.name + ".py").exists()


def missing_paths(path: Path) -> list[str]:
    """The paths `path`'s text names that do not exist, as 'line: path'."""
    found = named_paths(path.read_text(errors="replace"))
    return [
        f"{line}: {named}"
        for line, named in found
        if named not in CREATED and not exists(named, path.parent if named[:3] == "../" else ROOT)
    ]


@pytest.mark.parametrize("path", text_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_path_named_exists(path):
    assert not missing_paths(path), f"{path.relative_to(ROOT)} names paths that do not exist"


def test_the_created_paths_are_still_named_and_not_shipped():
    named = {p for f in text_files() for _, p in named_paths(f.read_text(errors="replace"))}
    for path in CREATED:
        assert path in named, f"{path} is no longer named: drop it from CREATED"
        assert not (ROOT / path).exists(), f"{path} exists now: drop it from CREATED"


def test_the_walk_reads_the_repos_text():
    files = {str(p.relative_to(ROOT)) for p in text_files()}
    assert {"README.md", "docs/architecture.md", "babel.cfg", "Dockerfile", ".ci/run"} <= files
    assert {
        "engine/serving/kernel.py",
        "tests/test_paths.py",
        "deploy/kubernetes/base/hpa.yaml",
    } <= files
    assert not any(f.startswith((".venv/", ".git/")) or f.endswith((".mo", ".png")) for f in files)


def test_the_path_reader_finds_what_it_should():
    text = (
        "See engine/serving/kernel.py. Then `ui/<page>/link.py`, data/profiles/*.toml,\n"
        'f"pages/{name}.py", (docs/model.md), ../engine/arrays.py and ui/solve/explain;\n'
        "not https://github.com/x/engine/y.py, metadata/z or engine.serving.kernel.\n"
    )
    assert named_paths(text) == [
        (1, "engine/serving/kernel.py"),
        (1, "ui/<page>/link.py"),
        (1, "data/profiles/*.toml"),
        (2, "pages/{name}.py"),
        (2, "docs/model.md"),
        (2, "../engine/arrays.py"),
        (2, "ui/solve/explain"),
    ]
    assert all(exists(p) for _, p in named_paths(text) if not p.startswith(".."))
    assert exists("../engine/arrays.py", ROOT / "tests")
    gone = ["engine/" + "ops.py", "ui/<page>/" + "nothing.py", "data/profiles/" + "*.yaml"]
    assert not any(exists(p) for p in gone)  # built from parts: this file's text names none


def ticket_numbers(text: str) -> list[str]:
    """Where `text` cites a ticket by number, as 'line: citation'."""
    return [f"{text.count(chr(10), 0, m.start()) + 1}: {m.group(0)}" for m in TICKET.finditer(text)]


@pytest.mark.parametrize("path", text_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_ticket_numbers(path):
    found = ticket_numbers(path.read_text(errors="replace"))
    assert not found, f"{path.relative_to(ROOT)} cites tickets: say what, not which ticket"


def test_the_ticket_reader_finds_what_it_should():
    # written with {W}/{w} for the word and {h} for the hash, so this file cites no ticket itself
    parts = ["{W} 18", "{w}s 3", "({h}12)", "{w} {h}9"]
    cites = [part.format(W="Issue", w="issue", h="#") for part in parts]
    found = ticket_numbers("as {} asked; {} and 4; fixed {}; see {}".format(*cites))
    assert [c.split(": ", 1)[1] for c in found] == cites
    fine = "https://github.com/pandas-dev/pandas/issues/62144, &#8212;, colour #333, 4 issues"
    assert ticket_numbers(fine) == []
