"""CSV downloads: unit-bearing headers, the assumptions on every row, formulas defused.

The CSV is the engine's (`engine.to_csv`: snake_case, unit-suffixed columns); text cells a
spreadsheet would run as a formula get a leading apostrophe first (OWASP "CSV injection").
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from engine import to_csv
from ui.core.i18n import _

# Every download button's on_click: no rerun. A click's rerun registers the button's file again
# under a new id and revokes the old one; the browser's request for the file, sent with the
# old id, raced it and sometimes found nothing (no download; 1 run in 4 of
# tests/test_browser_load.py's CSV download on an idle machine). A download changes nothing
# on the page, so nothing needs to rerun.
NO_RERUN = "ignore"


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
    df: pd.DataFrame, filename: str, key: str, label: str | None = None, *, lazy: bool = False
) -> None:
    """CSV download with unit-bearing headers and the assumptions on every row.

    With `lazy` the CSV is written only when the button is clicked (a 2,000-row sweep takes
    longer to format than the rest of the page's rerun). `label`: the button's text (default
    "Download CSV", translated).
    """
    label = _("Download CSV") if label is None else label
    data = (lambda: to_csv(defuse_formulas(df))) if lazy else to_csv(defuse_formulas(df))
    st.download_button(
        label, data, file_name=filename, mime="text/csv", key=key, icon="⬇️", on_click=NO_RERUN
    )
