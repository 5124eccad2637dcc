"""Read the accelerator and model catalogues (TOML) into frozen specs, with provenance.

The built-in catalogue is `data/hardware.toml` and `data/models.toml`; a team adds or overrides
entries with its own TOML files of the same schema (data/README.md), named in the
ROOFLINE_CATALOG environment variable (a path list) or passed explicitly. A broken user file
never takes the built-in catalogue down: each problem is recorded with its file, entry and
field, and everything else loads. This is the only module of the engine that reads files.
"""

from __future__ import annotations

import difflib
import functools
import os
import re
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

from engine.catalog.parse import CatalogError, parse_hardware, parse_model
from engine.files import MAX_UPLOAD_BYTES, FileLimitError, read_bounded, toml_problem

DATA_DIR = Path(__file__).resolve().parents[2] / "data"
BUILTIN_FILES = (DATA_DIR / "hardware.toml", DATA_DIR / "models.toml")
ENV_VAR = "ROOFLINE_CATALOG"
MAX_FILE_BYTES = MAX_UPLOAD_BYTES  # a larger user catalogue is refused unread (engine/files.py)
MAX_ENTRIES_PER_FILE = 500
_SECTIONS = {"hardware": parse_hardware, "models": parse_model}


def normalise_id(text: str) -> str:
    """The lookup form of an id: lower case, letters and digits only ("ResNet-50" -> "resnet50")."""
    return re.sub(r"[^0-9a-z]", "", str(text).lower())


def display_origin(origin: str) -> str:
    """Where an entry came from, fit to show: "built-in", or a team file's name (no path)."""
    if origin in {str(p) for p in BUILTIN_FILES}:
        return "built-in"
    if origin.startswith(("/", "~", ".")) or os.sep in origin:
        return Path(origin).name
    return origin  # "built-in", "upload: NAME", "custom (share link)"


class UnknownIdError(KeyError, ValueError):
    """No catalogue entry has this id; the message lists the closest ones."""

    def __str__(self) -> str:
        return str(self.args[0])


@dataclass(frozen=True, slots=True, eq=False)
class Catalog:
    """Accelerators and models by id, plus what went wrong and what was overridden.

    Compared and hashed by identity: a catalogue is one loaded object (caches key on it)."""

    hardware: Mapping[str, object]
    models: Mapping[str, object]
    problems: tuple[CatalogError, ...] = ()
    overrides: tuple[str, ...] = ()

    def find_hardware(self, text: str):
        """The HardwareSpec whose id, alias or name matches `text` (case/punctuation-blind)."""
        return _find(self.hardware, text, "accelerator")

    def find_model(self, text: str):
        """The ModelSpec whose id, alias or name matches `text` (case/punctuation-blind)."""
        return _find(self.models, text, "model")


def _keys_of(spec) -> list[str]:
    return [normalise_id(k) for k in (spec.id, *spec.aliases, spec.name)]


def _find(entries: Mapping[str, object], text: str, kind: str):
    if not isinstance(text, str) or not text.strip():
        raise UnknownIdError(f"no {kind} id given")
    if text in entries:
        return entries[text]
    wanted = normalise_id(text)
    for spec in entries.values():  # ids first, then aliases and names
        if normalise_id(spec.id) == wanted:
            return spec
    for spec in entries.values():
        if wanted and wanted in _keys_of(spec):
            return spec
    lookup = {normalise_id(s.id): s.id for s in entries.values()}
    close = difflib.get_close_matches(wanted, list(lookup), n=3, cutoff=0.5)
    hint = ", ".join(lookup[c] for c in close) or ", ".join(list(entries)[:8]) + ", ..."
    shown = text if len(text) <= 40 else text[:40] + "..."
    raise UnknownIdError(f"unknown {kind} {shown!r} (closest: {hint})")


def read_catalog_file(path: Path) -> tuple[dict[str, dict], list[CatalogError]]:
    """Parse one catalogue file into {"hardware": {id: spec}, "models": {...}} and problems."""
    label = str(path)
    if not label.strip() or label == ".":
        return _empty(), [
            CatalogError(file=label, entry="", field="", message="no file named (an empty path)")
        ]
    try:
        data = read_bounded(path, MAX_FILE_BYTES, "catalogue")
    except FileLimitError as exc:
        return _empty(), [
            CatalogError(file=label, entry="", field="", message=str(exc).split(": ", 1)[1])
        ]
    return read_catalog_bytes(data, label)


def read_catalog_bytes(data: bytes, label: str) -> tuple[dict[str, dict], list[CatalogError]]:
    """Parse a catalogue file's contents (e.g. an upload) as `read_catalog_file` does.

    Args:
        data: the file's bytes; more than MAX_FILE_BYTES is refused unread.
        label: names the file in every problem (a path, or "upload: NAME").
    """
    if len(data) > MAX_FILE_BYTES:
        return _empty(), [CatalogError(file=label, entry="", field="", message=_too_big(len(data)))]
    try:
        text = data.decode("utf-8-sig")  # a byte order mark dropped, as every reader drops it
        raw = tomllib.loads(text)
    except UnicodeDecodeError:
        return _empty(), [
            CatalogError(file=label, entry="", field="", message="file is not UTF-8 text")
        ]
    except ValueError as exc:  # TOMLDecodeError (a key given twice...), or a 4,301-digit integer
        message = f"not valid TOML: {toml_problem(exc, text)[:200]}"
        return _empty(), [CatalogError(file=label, entry="", field="", message=message)]
    except RecursionError:  # tomllib recurses once per nested [ or {
        return _empty(), [
            CatalogError(
                file=label, entry="", field="", message="not valid TOML: nested too deeply"
            )
        ]
    return _parse_tables(raw, label, _empty())


def _empty() -> dict[str, dict]:
    return {"hardware": {}, "models": {}}


def _too_big(size: int) -> str:
    return f"file is {size:,} bytes; the limit is {MAX_FILE_BYTES:,} bytes"


def _parse_tables(raw: dict, label: str, found: dict) -> tuple[dict, list[CatalogError]]:
    problems: list[CatalogError] = []
    unknown = sorted(set(raw) - set(_SECTIONS))
    if unknown:
        problems.append(
            CatalogError(
                file=label,
                entry="",
                field=unknown[0],
                message="unknown top-level table (expected [hardware.ID] or [models.ID])",
            )
        )
    count = 0
    for section, parser in _SECTIONS.items():
        tables = raw.get(section, {})
        if not isinstance(tables, dict):
            problems.append(
                CatalogError(
                    file=label, entry=section, field="", message="must be a table of entries"
                )
            )
            continue
        seen: dict[str, str] = {}
        for entry_id, table in tables.items():
            count += 1
            if count > MAX_ENTRIES_PER_FILE:
                problems.append(
                    CatalogError(
                        file=label,
                        entry=entry_id,
                        field="",
                        message=f"more than {MAX_ENTRIES_PER_FILE} entries; rest ignored",
                    )
                )
                return found, problems
            key = normalise_id(entry_id)
            if key in seen:
                problems.append(
                    CatalogError(
                        file=label,
                        entry=f"{section}.{entry_id}",
                        field="",
                        message=f"duplicate of {seen[key]!r} (ids ignore case and punctuation)",
                    )
                )
                continue
            try:
                found[section][entry_id] = parser(entry_id, table, origin=label)
                seen[key] = entry_id
            except CatalogError as exc:
                problems.append(exc)
    return found, problems


@functools.cache
def _builtin() -> tuple[dict[str, dict], tuple[CatalogError, ...]]:
    merged: dict[str, dict] = {"hardware": {}, "models": {}}
    problems: list[CatalogError] = []
    for path in BUILTIN_FILES:
        found, errs = read_catalog_file(path)
        problems.extend(errs)
        for section in merged:
            merged[section].update(found[section])
    return merged, tuple(problems)


def user_catalog_paths(env: Mapping[str, str] | None = None) -> list[Path]:
    """The user catalogue paths named in ROOFLINE_CATALOG (os.pathsep-separated; blanks skipped)."""
    value = (os.environ if env is None else env).get(ENV_VAR, "")
    return [Path(p).expanduser() for p in value.split(os.pathsep) if p.strip()]


def load_catalog(extra_paths: Iterable[str | Path] = (), *, use_env: bool = True) -> Catalog:
    """The built-in catalogue plus user files (ROOFLINE_CATALOG first, then `extra_paths`).

    Later files override earlier entries with the same id; each override is listed in
    `Catalog.overrides`, and each bad file or entry in `Catalog.problems`.

    Raises:
        CatalogError: only if the built-in catalogue itself is broken (a bug in data/).
    """
    builtin, builtin_problems = _builtin()
    if builtin_problems:
        raise builtin_problems[0]
    merged = {section: dict(entries) for section, entries in builtin.items()}
    problems: list[CatalogError] = []
    overrides: list[str] = []
    paths = [*(user_catalog_paths() if use_env else []), *map(Path, extra_paths)]
    for path in paths:
        found, errs = read_catalog_file(path)
        problems.extend(errs)
        for section, entries in found.items():
            for entry_id, spec in entries.items():
                replaced = _pop_same_id(merged[section], entry_id)
                if replaced is not None:
                    overrides.append(
                        f"{section} {entry_id!r} from {path} overrides the entry "
                        f"from {replaced.origin}"
                    )
                merged[section][entry_id] = spec
    return Catalog(
        hardware=MappingProxyType(merged["hardware"]),
        models=MappingProxyType(merged["models"]),
        problems=tuple(problems),
        overrides=tuple(overrides),
    )


def _pop_same_id(entries: dict, entry_id: str):
    key = normalise_id(entry_id)
    for existing in list(entries):
        if normalise_id(existing) == key:
            return entries.pop(existing)
    return None
