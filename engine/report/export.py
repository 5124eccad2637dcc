"""Turn sweep DataFrames into the public JSON records and self-contained CSV files.

JSON records have exactly the keys of `SolveResult.as_dict()` (a contract with users' scripts).
CSV headers carry their units (`mfu_fraction`, `work_flop_per_batch`, ...): they come from the
same column registry as the JSON keys (engine/report/columns.py).
Every row carries the assumptions it was computed with, so a downloaded file stands alone.
What the engine says in words (a `warnings` or `reason` column of Messages) is written as its
English text (engine/report/messages.py).
"""

from __future__ import annotations

import functools
import json
import math
from typing import TYPE_CHECKING

from engine.report import columns
from engine.report.messages import english

if TYPE_CHECKING:  # imported lazily: `import engine` stays fast
    import pandas as pd


@functools.cache
def csv_headers() -> dict[str, str]:
    """Display key -> CSV header for the solve's and the decode view's frames."""
    out = columns.decode_csv_headers()
    out |= {key: csv for key, _, csv in columns.SOLVE_COLUMNS.values()}
    out |= {key: csv for key, _, csv in columns.ASSUMPTION_COLUMNS.values()}
    return out | columns.TRAIN_CSV_HEADERS | {"warnings": "warning"}


@functools.cache
def assumption_keys() -> frozenset[str]:
    """Display keys of every echoed assumption (nested under "assumptions" in JSON records)."""
    tables = (columns.ASSUMPTION_COLUMNS, columns.DECODE_ASSUMPTION_COLUMNS)
    keys = {key for table in tables for key, _, _ in table.values()}
    return frozenset(keys | set(columns.DECODE_FIXED_ASSUMPTIONS))


def _plain(value):
    """numpy/pandas scalars to JSON-safe Python values (NaN and <NA> become None)."""
    import pandas as pd

    if value is pd.NA or value is None:
        return None
    if hasattr(value, "item"):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def records(df: pd.DataFrame) -> list[dict[str, object]]:
    """Sweep rows as the CLI's JSON objects: assumptions nested, warnings as a list (a row's
    warnings in one item, '; '-joined, as the CSV writes them)."""
    out = []
    for row in english_frame(df).to_dict(orient="records"):
        nested = assumption_keys()
        record = {k: _plain(v) for k, v in row.items() if k not in nested}
        record["assumptions"] = {k: _plain(v) for k, v in row.items() if k in nested}
        warning = record.pop("warnings", "") or ""
        record["warnings"] = [warning] if warning else []
        out.append(record)
    return out


def english_frame(df: pd.DataFrame) -> pd.DataFrame:
    """`df` with every column of messages as their English text (`df` itself when none)."""
    said = {c: english(df[c]) for c in df.columns}
    changed = {c: v for c, v in said.items() if v is not df[c]}
    return df.assign(**changed) if changed else df


def key_value_table(mapping: dict[str, object]) -> str:
    """A readable two-column text table (the CLI's `--format table`)."""
    width = max(len(k) for k in mapping)

    def shown(value: object) -> str:
        if isinstance(value, float):
            return f"{value:.4g}"
        return json.dumps(value) if isinstance(value, dict | list) else str(value)

    return "\n".join(f"{k:<{width}}  {shown(v)}" for k, v in mapping.items())


def to_csv(df: pd.DataFrame) -> str:
    """A solve, decode sweep or training frame as CSV text with unit-bearing headers; numbers at
    full precision."""
    return write_csv(df.rename(columns=csv_headers()))


RISKY = r"^[=+\-@\t\r]"  # what a spreadsheet would run as a formula (OWASP "CSV injection")


def defuse_formulas(df: pd.DataFrame) -> pd.DataFrame:
    """Text cells that a spreadsheet would run as a formula (=, +, -, @, tab, CR first) get a
    leading apostrophe; numbers are untouched. Returns `df` itself when nothing is risky."""
    text = [c for c in df.columns if df[c].dtype.kind not in "fiub"]
    risky = [c for c in text if df[c].astype(str).str.match(RISKY).any()]
    if not risky:
        return df
    out = df.copy()
    for c in risky:
        col = out[c].astype(str)
        out[c] = col.where(~col.str.match(RISKY), "'" + col)
    return out


def write_csv(df: pd.DataFrame) -> str:
    """The one CSV writer of the project: messages in English, formulas defused, no index,
    numbers at full precision."""
    return defuse_formulas(english_frame(df)).to_csv(index=False)
