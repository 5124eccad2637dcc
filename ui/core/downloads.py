"""CSV downloads: unit-bearing headers, the assumptions on every row, formulas defused.

The CSV is the engine's (`engine.to_csv`: snake_case, unit-suffixed columns, and text cells a
spreadsheet would run as a formula given a leading apostrophe, OWASP "CSV injection").
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from engine import to_csv
from ui.words.i18n import _

# Every download button's on_click: no rerun. A click's rerun registers the button's file again
# under a new id and revokes the old one; the browser's request for the file, sent with the
# old id, raced it and sometimes found nothing (no download; 1 run in 4 of
# tests/test_browser_load.py's CSV download on an idle machine). A download changes nothing
# on the page, so nothing needs to rerun.
NO_RERUN = "ignore"


def download_csv(df: pd.DataFrame, filename: str, key: str, label: str | None = None) -> None:
    """CSV download with unit-bearing headers and the assumptions on every row.

    The CSV is written when the button is clicked, not on every rerun (a 2,000-row sweep takes
    longer to format than the rest of the page's rerun; the tables of a lesson, the accuracy
    page and the catalogue took 6 % of their reruns). `label`: the button's text (default
    "Download CSV", translated).
    """
    label = _("Download CSV") if label is None else label
    st.download_button(
        label,
        lambda: to_csv(df),
        file_name=filename,
        mime="text/csv",
        key=key,
        icon="⬇️",
        on_click=NO_RERUN,
    )
