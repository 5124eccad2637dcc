"""A table's figures as the reader sees them: readable headers, numbers through ui.words.format,
true and false as yes and no, words translated (pure: no streamlit).

A spec maps a column to (header, unit, factor): the header is an `N_`-marked English text;
unit "" or an SI unit formats numbers (× factor) with `fmt_all`, None shows the values as they
are, YES_NO reads them as true or false, WORDS translates each value (an `N_`-marked word).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from ui.words.format import fmt_all
from ui.words.i18n import _

YES_NO = "yes/no"  # a column read as true or false (a bool, or the fast path's 1.0 and 0.0)
WORDS = "words"  # a column of English words, shown translated


def yes_no(values) -> list[str]:
    """True or false in the reader's language; "—" where there is no value."""
    return ["—" if pd.isna(v) else _("yes") if v else _("no") for v in values]


def table(df: pd.DataFrame, spec: Mapping) -> pd.DataFrame:
    """`df`'s columns of `spec` under readable headers, numbers as ui.words.format text."""
    out = {}
    for column, (header, unit, factor) in spec.items():
        if column not in df:
            continue
        values = df[column].to_numpy()
        if unit == YES_NO:
            out[_(header)] = yes_no(values)
        elif unit == WORDS:
            out[_(header)] = [_(str(v)) for v in values]
        elif unit is None:
            out[_(header)] = list(values)
        else:
            out[_(header)] = fmt_all(np.asarray(values, dtype=float) * factor, unit)
    return pd.DataFrame(out)
