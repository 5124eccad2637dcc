"""The message catalogues (ui/words/i18n.py): extract, update and compile them with Babel.

    python -m tools.i18n update    # extract every marked message (babel.cfg) into each .po
    python -m tools.i18n compile   # write each .po's .mo beside it (committed too)
    python -m tools.i18n check     # exit 1 if a .po lacks a message or a .mo is stale

Messages are keyed by their English text; an updated .po keeps every translation whose
English is unchanged and lists new messages with an empty translation (no fuzzy guesses).
Locations name the file only (no line numbers), so an edit elsewhere in a file does not
touch the catalogue.
"""

from __future__ import annotations

import io
import sys
from pathlib import Path

from babel.messages.catalog import Catalog
from babel.messages.extract import extract_from_dir
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po, write_po

ROOT = Path(__file__).resolve().parent.parent
LOCALES = ROOT / "locales"
CONFIG = ROOT / "babel.cfg"
LANGUAGES = ("zh",)
PROJECT = "Roofline Explorer"
HEADER = (
    "# Messages of Roofline Explorer in {name} (ui/words/i18n.py).\n"
    "# Updated by `python -m tools.i18n update`; compiled by `python -m tools.i18n compile`."
)
NAMES = {"zh": "简体中文 (Simplified Chinese)"}


def po_path(lang: str) -> Path:
    return LOCALES / lang / "LC_MESSAGES" / "messages.po"


def template() -> Catalog:
    """Every message marked in the app's sources (babel.cfg), with the files that use it."""
    from babel.messages.frontend import parse_mapping_cfg

    with open(CONFIG) as f:
        method_map, options_map = parse_mapping_cfg(f)
    catalog = Catalog(project=PROJECT, fuzzy=False)
    for filename, lineno, message, comments, context in extract_from_dir(
        ROOT, method_map, options_map
    ):
        catalog.add(message, None, [(filename, lineno)], auto_comments=comments, context=context)
    return catalog


def read(lang: str) -> Catalog:
    with open(po_path(lang), "rb") as f:
        return read_po(f, locale=lang)


def po_bytes(catalog: Catalog) -> bytes:
    out = io.BytesIO()
    write_po(out, catalog, width=100, include_lineno=False, sort_by_file=True)
    return out.getvalue()


def mo_bytes(catalog: Catalog) -> bytes:
    """The compiled catalogue (translated, non-fuzzy messages only)."""
    out = io.BytesIO()
    write_mo(out, catalog, use_fuzzy=False)
    return out.getvalue()


def update() -> None:
    tmpl = template()
    for lang in LANGUAGES:
        path = po_path(lang)
        if path.exists():
            catalog = read(lang)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            catalog = Catalog(locale=lang, project=PROJECT, fuzzy=False)
        catalog.update(tmpl, no_fuzzy_matching=True, update_creation_date=False)
        catalog.obsolete.clear()  # a message no longer in the sources is dropped
        catalog.revision_date = catalog.creation_date  # stable header: no churn per run
        catalog.header_comment = HEADER.format(name=NAMES[lang])
        catalog.version, catalog.msgid_bugs_address = "1", ""
        catalog.last_translator = catalog.language_team = "Roofline Explorer"
        path.write_bytes(po_bytes(catalog))


def compile_all() -> None:
    for lang in LANGUAGES:
        po_path(lang).with_suffix(".mo").write_bytes(mo_bytes(read(lang)))


def check() -> list[str]:
    """What is out of date: messages missing from a .po, a .mo that is not its .po compiled."""
    problems = []
    wanted = {m.id for m in template() if m.id}
    for lang in LANGUAGES:
        catalog = read(lang)
        have = {m.id for m in catalog if m.id}
        problems += [f"{lang}: not in the .po: {m!r}" for m in sorted(wanted - have, key=str)]
        mo = po_path(lang).with_suffix(".mo")
        if not mo.exists() or mo.read_bytes() != mo_bytes(catalog):
            problems.append(f"{lang}: {mo.name} is not messages.po compiled")
    return problems


def main(argv: list[str]) -> int:
    command = argv[0] if argv else "check"
    if command == "update":
        update()
    elif command == "compile":
        compile_all()
    elif command == "check":
        problems = check()
        print("\n".join(problems) or "catalogues up to date")
        return 1 if problems else 0
    else:
        print(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
