"""The one way the CLI writes a result: strict JSON, defused CSV, or a readable table.

NaN means "undefined" in the engine's results (TPOT with one output token) and is written as
JSON null or "-"; an infinite number is never a result, so it stops the command (exit 2, one
line) instead of writing `Infinity`, which is not JSON. CSV goes through the engine's one
defusing writer (engine/report/export.py).
"""

from __future__ import annotations

import json
import math

from engine.report.export import key_value_table


def clean(value: object, where: str = "result") -> object:
    """JSON-ready values: numpy scalars as Python ones, NaN as None; ValueError on ±inf."""
    if hasattr(value, "item") and not isinstance(value, dict | list):
        value = value.item()
    if isinstance(value, dict):
        return {
            k: clean(v, str(k) if where == "result" else f"{where}.{k}") for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return [clean(v, where) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        if math.isnan(value):
            return None
        raise ValueError(f"the result is not finite: {where} = {value} (check the inputs)")
    return value


def json_text(obj: object) -> str:
    """Strict JSON (no NaN or Infinity tokens), indented."""
    return json.dumps(clean(obj), indent=2, allow_nan=False)


def table_text(mapping: dict) -> str:
    """A two-column text table of a result, after the same finiteness check as JSON."""
    clean(mapping)
    return key_value_table(mapping)
