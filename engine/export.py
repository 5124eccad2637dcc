"""Turn sweep DataFrames into the public JSON records and self-contained CSV files.

JSON records have exactly the keys of `SolveResult.as_dict()` (a contract with users' scripts).
CSV headers carry their units (`mfu_fraction`, `work_flop_per_batch`, ...) and every row carries
the assumptions it was computed with, so a downloaded file stands alone.
"""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # imported lazily: `import engine` stays fast
    import pandas as pd

ASSUMPTION_COLUMNS = (
    "efficiency",
    "layer_overhead_us",
    "dispatch_overhead_ms",
    "activation_fraction",
    "flop_convention",
)
CSV_RENAMES = {
    "flops": "work_flop_per_batch",
    "bytes": "traffic_bytes_per_batch",
    "mfu": "mfu_fraction",
    "overhead_share": "overhead_share_fraction",
    "efficiency": "compute_efficiency_fraction",
    "activation_fraction": "activation_traffic_fraction",
    "warnings": "warning",
    "context": "context_tokens",
    "prompt": "prompt_tokens",
    "max_context_at_batch": "max_context_at_batch_tokens",
    "decode_flops": "decode_work_flop_per_step",
    "decode_bytes": "decode_traffic_bytes_per_step",
    "prefill_flops": "prefill_work_flop_per_batch",
    "prefill_bytes": "prefill_traffic_bytes_per_batch",
    "decode_mfu": "decode_mfu_fraction",
    "prefill_mfu": "prefill_mfu_fraction",
    "decode_overhead_share": "decode_overhead_share_fraction",
    "prefill_overhead_share": "prefill_overhead_share_fraction",
}


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
    """Sweep rows as the CLI's JSON objects: assumptions nested, warnings as a list."""
    out = []
    for row in df.to_dict(orient="records"):
        record = {k: _plain(v) for k, v in row.items() if k not in ASSUMPTION_COLUMNS}
        record["assumptions"] = {k: _plain(row[k]) for k in ASSUMPTION_COLUMNS if k in row}
        warning = record.pop("warnings", "") or ""
        record["warnings"] = [warning] if warning else []
        out.append(record)
    return out


def key_value_table(mapping: dict[str, object]) -> str:
    """A readable two-column text table (the CLI's `--format table`)."""
    width = max(len(k) for k in mapping)

    def shown(value: object) -> str:
        if isinstance(value, float):
            return f"{value:.4g}"
        return json.dumps(value) if isinstance(value, dict | list) else str(value)

    return "\n".join(f"{k:<{width}}  {shown(v)}" for k, v in mapping.items())


def to_csv(df: pd.DataFrame) -> str:
    """CSV text with unit-bearing headers; numbers at full precision."""
    return df.rename(columns=CSV_RENAMES).to_csv(index=False)
