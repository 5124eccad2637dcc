"""The frame of every page: config, navigation, the cached catalogue, notes and the share link.

Pages are Streamlit's file-based `pages/` (so a deep link is correct as the very first request
to a fresh server); each page calls `setup_page` first, which draws our own navigation with
readable labels (the built-in one is hidden in .streamlit/config.toml) and settles the
session's language (ui.words.i18n) before anything is drawn; everything here is translated.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from urllib.parse import urlencode, urlsplit, urlunsplit

import streamlit as st

from engine import ENV_VAR, Catalog, Message, load_catalog, user_catalog_paths
from ui.runtime import heap, sessions
from ui.words import i18n
from ui.words.i18n import N_, _, ngettext
from ui.words.text import plain

ROOT = Path(__file__).resolve().parents[2]
PAGES = (
    ("app.py", N_("Overview"), ":material/home:"),
    ("pages/solve.py", N_("Single solve"), ":material/target:"),
    ("pages/sweep.py", N_("Batch sweep"), ":material/show_chart:"),
    ("pages/compare.py", N_("Hardware comparison"), ":material/compare_arrows:"),
    ("pages/decode.py", N_("LLM decode"), ":material/chat:"),
    ("pages/plan.py", N_("Planner"), ":material/savings:"),
    ("pages/load.py", N_("Serving under load"), ":material/speed:"),
    ("pages/train.py", N_("Training planner"), ":material/model_training:"),
    ("pages/accuracy.py", N_("Accuracy"), ":material/verified:"),
    ("pages/learn.py", N_("Lessons"), ":material/school:"),
    ("pages/catalogue.py", N_("Catalogue"), ":material/menu_book:"),
)  # a page listed here appears once its file exists; labels translated where shown
# Titles pages pass to setup_page that are not navigation labels (translated there too).
TITLES = (N_("LLM serving"),)


def source_md(label: str, url: str) -> str:
    """A markdown link to a catalogue source, only for plain http(s) URLs; else plain text."""
    safe = plain(label)  # the label is catalogue or user text: never a link of its own
    if re.fullmatch(r"https?://[^\s()<>\[\]]+", url or ""):
        return f"[{safe}]({url})"
    return _("{label} (source: {url})").format(label=safe, url=plain((url or "none")[:60]))


def setup_page(title: str) -> None:
    """The session's language, page config, the sidebar navigation and the language picker;
    call first on every page (`title`: the English title, translated here)."""
    heap.return_freed_arrays()  # once per process (ui/runtime/heap.py)
    sessions.start()  # once per process: ends the sessions Streamlit lets lapse
    i18n.choose()
    page_title = _("{title} · Roofline Explorer").format(title=_(title))
    st.set_page_config(page_title=page_title, page_icon="📈", layout="wide")
    i18n.widget_words()  # Streamlit's own words, where they can be replaced
    with st.sidebar:
        st.markdown(_("**Roofline Explorer**"))
        for path, label, icon in PAGES:
            if (ROOT / path).exists():
                st.page_link(path, label=_(label), icon=icon)
        st.divider()
        i18n.picker()


def _file_stamp() -> tuple:
    stamps = []
    for path in user_catalog_paths():
        try:
            stat = Path(path).stat()
            stamps.append((str(path), stat.st_mtime_ns, stat.st_size))
        except OSError:
            stamps.append((str(path), 0, 0))
    return tuple(stamps)


@st.cache_resource(max_entries=4, show_spinner=False)
def _catalog(env_value: str, stamp: tuple) -> Catalog:
    return load_catalog()


def catalog_key() -> tuple:
    """What the catalogue in use is loaded from: ROOFLINE_CATALOG and its files' stamps. A key
    for results computed from it that, unlike id(catalog()), no later catalogue can reuse."""
    return os.environ.get(ENV_VAR, ""), _file_stamp()


def catalog() -> Catalog:
    """Built-in + team catalogue (ROOFLINE_CATALOG), reloaded only when those files change."""
    return _catalog(*catalog_key())


def show_catalog_notes(cat: Catalog) -> None:
    """Team-catalogue problems and overrides, visible but out of the way."""
    if cat.problems:
        n = len(cat.problems)
        head = ngettext(
            "⚠️ {n} problem in team catalogue files", "⚠️ {n} problems in team catalogue files", n
        )
        with st.expander(head.format(n=n), True):
            for problem in cat.problems:
                st.warning(plain(problem), icon="⚠️")
            st.caption(_("Entries with problems were skipped; everything else works."))
    if cat.overrides:
        n = len(cat.overrides)
        head = ngettext(
            "{n} built-in entry overridden by team files",
            "{n} built-in entries overridden by team files",
            n,
        )
        with st.expander(head.format(n=n)):
            for note in cat.overrides:
                st.markdown(plain(note))


def show_param_warnings(warnings: list[str]) -> None:
    """Share-link values that were dropped, and why (plain text: st.warning escapes it)."""
    if warnings:
        st.warning(
            _("Some share-link parameters were ignored; defaults used instead:")
            + "\n\n"
            + "\n".join(f"- {plain(w)}" for w in warnings),
            icon="🔗",
        )


def show_engine_warnings(warnings: Iterable[Message]) -> None:
    """The engine's warnings, each once, in the reader's language (they may quote catalogue or
    custom names: inert text)."""
    for w in dict.fromkeys(warnings):
        st.warning(plain(i18n.message_text(w)), icon="⚠️")


def share_link(url_path: str, query: dict[str, str]) -> str:
    """Show a copyable link that reproduces this scenario; returns it.

    Args:
        url_path: the page's URL path, e.g. "solve".
        query: the canonical query parameters (ui.links.state.publish's result).
    """
    parts = urlsplit(st.context.url or "")
    base = (st.get_option("server.baseUrlPath") or "").strip("/")
    path = "/" + "/".join(p for p in (base, url_path.strip("/")) if p)
    link = urlunsplit((parts.scheme, parts.netloc, path, urlencode(query), ""))
    # a code block in the first render costs a fresh browser its syntax-highlighter code
    # (1.5 MB) before the first chart is drawn: the box is drawn only while open
    box = lazy_expander(_("🔗 Share this scenario"), share_key(url_path))
    if box is not None:
        with box:
            st.code(link, language=None, wrap_lines=True)
            text = _("The address bar always holds this link too; opening it reproduces the page.")
            st.caption(text)
    return link


def lazy_expander(label: str, key: str):
    """An expander whose body is drawn (and computed) only while it is open: opening or closing
    it reruns the page. Returns its container while open, else None.

    What waits here costs a fresh browser nothing before the page's first chart: a table in
    the first render loads the data-grid code (about 0.8 s on two cores), a code block the
    syntax highlighter, each chart its drawing (bench/bench_pages.py --first-chart).

    Args:
        label: the expander's title (translated by the caller; plain text).
        key: its session-state key (True while open), unique on the page.
    """
    box = st.expander(label, key=key, on_change="rerun")
    return box if box.open else None


def share_key(url_path: str) -> str:
    """The session-state key of a page's share box (True while it is open)."""
    return section_key(url_path.strip("/"), "share")


def section_key(page: str, name: str) -> str:
    """The session-state key of the page's lazy expander `name` (True while it is open)."""
    return f"{page}:{name}.open"


def lazy_sections(page: str, titles: Mapping[str, str]) -> dict[str, object]:
    """One lazy_expander per entry of `titles` (name: untranslated title), drawn in order;
    returns name: its container while open, else None."""
    return {
        name: lazy_expander(_(title), section_key(page, name)) for name, title in titles.items()
    }
