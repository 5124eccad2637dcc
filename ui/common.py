"""Page setup shared by every page: config, navigation, the cached catalogue, share links, CSV.

Pages are Streamlit's file-based `pages/` (so a deep link is correct as the very first request
to a fresh server); each page calls `setup_page` first, which draws our own navigation with
readable labels (the built-in one is hidden in .streamlit/config.toml).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from urllib.parse import urlencode, urlsplit, urlunsplit

import pandas as pd
import streamlit as st

from engine import ENV_VAR, Catalog, load_catalog, to_csv, user_catalog_paths
from ui.format import sig

ROOT = Path(__file__).resolve().parent.parent
PAGES = (
    ("app.py", "Overview", ":material/home:"),
    ("pages/solve.py", "Single solve", ":material/target:"),
    ("pages/sweep.py", "Batch sweep", ":material/show_chart:"),
    ("pages/compare.py", "Hardware comparison", ":material/compare_arrows:"),
    ("pages/decode.py", "LLM decode", ":material/chat:"),
    ("pages/plan.py", "Planner", ":material/savings:"),
    ("pages/accuracy.py", "Accuracy", ":material/verified:"),
    ("pages/catalogue.py", "Catalogue", ":material/menu_book:"),
)
FLOP_NOTE = {
    "catalog": "FLOPs as catalogued (CNN figures count 1 FLOP per MAC; transformers 2)",
    "mac2": "FLOPs normalised to 2 per multiply-accumulate (datasheet convention)",
}


def num(value: float, digits: int = 3) -> str:
    """A plain number for people: ui.format.sig (3 significant figures, 4 for whole numbers
    below 10,000, thousands separators, "—" for none). Prefer ui.format.fmt(value, unit)."""
    return sig(value, min(digits, 3))


def source_md(label: str, url: str) -> str:
    """A markdown link to a catalogue source, only for plain http(s) URLs; else plain text."""
    safe = plain(label)  # the label is catalogue or user text: never a link of its own
    if re.fullmatch(r"https?://[^\s()<>\[\]]+", url or ""):
        return f"[{safe}]({url})"
    return f"{safe} (source: {plain((url or 'none')[:60])})"


def setup_page(title: str) -> None:
    """Page config and the sidebar navigation; call first on every page."""
    st.set_page_config(page_title=f"{title} · Roofline Explorer", page_icon="📈", layout="wide")
    with st.sidebar:
        st.markdown("**Roofline Explorer**")
        for path, label, icon in PAGES:
            if (ROOT / path).exists():
                st.page_link(path, label=label, icon=icon)
        st.divider()


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


def catalog() -> Catalog:
    """Built-in + team catalogue (ROOFLINE_CATALOG), reloaded only when those files change."""
    return _catalog(os.environ.get(ENV_VAR, ""), _file_stamp())


# What can make links, images, code, HTML, maths or emphasis: backslashed.
_MARKDOWN = re.compile(r"([\\`\[\]()<>!$*_~#|])")
# What GFM turns into a link by itself (after escapes are read): a bare URL, www., an e-mail.
_AUTOLINK = re.compile(r"(?i)(?<=[a-z])(?=://)|(?<=www)(?=\.)|(?=@)")
WORD_JOINER = "\u2060"  # invisible, not a space: breaks the autolink patterns


def plain(text: object) -> str:
    """User or file text made inert for st.markdown/st.warning: markdown syntax backslashed, so
    `[x](javascript:...)` shows as text, and an invisible word joiner after `http`, `www` and
    before `@`, so `http://x.example`, `www.x.example` and `a@x.example` never become links
    (HTML is already escaped by Streamlit)."""
    return _AUTOLINK.sub(WORD_JOINER, _MARKDOWN.sub(r"\\\1", str(text)))


def show_catalog_notes(cat: Catalog) -> None:
    """Team-catalogue problems and overrides, visible but out of the way."""
    if cat.problems:
        with st.expander(f"⚠️ {len(cat.problems)} problem(s) in team catalogue files", True):
            for problem in cat.problems:
                st.warning(plain(problem), icon="⚠️")
            st.caption("Entries with problems were skipped; everything else works.")
    if cat.overrides:
        with st.expander(f"{len(cat.overrides)} built-in entries overridden by team files"):
            for note in cat.overrides:
                st.markdown(plain(note))


def show_param_warnings(warnings: list[str]) -> None:
    """Share-link values that were dropped, and why (plain text: st.warning escapes it)."""
    if warnings:
        st.warning(
            "Some share-link parameters were ignored; defaults used instead:\n\n"
            + "\n".join(f"- {plain(w)}" for w in warnings),
            icon="🔗",
        )


def share_link(url_path: str, query: dict[str, str]) -> str:
    """Show a copyable link that reproduces this scenario; returns it.

    Args:
        url_path: the page's URL path, e.g. "solve".
        query: the canonical query parameters (ui.state.publish's result).
    """
    parts = urlsplit(st.context.url or "")
    base = (st.get_option("server.baseUrlPath") or "").strip("/")
    path = "/" + "/".join(p for p in (base, url_path.strip("/")) if p)
    link = urlunsplit((parts.scheme, parts.netloc, path, urlencode(query), ""))
    with st.expander("🔗 Share this scenario"):
        st.code(link, language=None, wrap_lines=True)
        st.caption("The address bar always holds this link too; opening it reproduces the page.")
    return link


def defuse_formulas(df: pd.DataFrame) -> pd.DataFrame:
    """Text cells that a spreadsheet would run as a formula (=, +, -, @ first) get a leading
    apostrophe (OWASP "CSV injection"); numbers are untouched."""
    text_cols = [c for c in df.columns if df[c].dtype.kind not in "fiub"]
    risky = [c for c in text_cols if df[c].astype(str).str.match(r"^[=+\-@\t\r]").any()]
    if not risky:
        return df
    out = df.copy()
    for c in risky:
        col = out[c].astype(str)
        out[c] = col.where(~col.str.match(r"^[=+\-@\t\r]"), "'" + col)
    return out


def download_csv(
    df: pd.DataFrame, filename: str, key: str, label: str = "Download CSV", *, lazy: bool = False
) -> None:
    """CSV download with unit-bearing headers and the assumptions on every row.

    With `lazy` the CSV is written only when the button is clicked (a 2,000-row sweep takes
    longer to format than the rest of the page's rerun).
    """
    data = (lambda: to_csv(defuse_formulas(df))) if lazy else to_csv(defuse_formulas(df))
    st.download_button(label, data, file_name=filename, mime="text/csv", key=key, icon="⬇️")
