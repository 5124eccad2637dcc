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


def download_csv(
    df: pd.DataFrame, filename: str, key: str, label: str | None = None, *, lazy: bool = False
) -> None:
    """CSV download with unit-bearing headers and the assumptions on every row.

    With `lazy` the CSV is written only when the button is clicked (a 2,000-row sweep takes
    longer to format than the rest of the page's rerun). `label`: the button's text (default
    "Download CSV", translated).
    """
    label = _("Download CSV") if label is None else label
    data = (lambda: to_csv(df)) if lazy else to_csv(df)
    st.download_button(
        label, data, file_name=filename, mime="text/csv", key=key, icon="⬇️", on_click=NO_RERUN
    )
