"""Measured vs predicted: the serving model's prediction of every row of a measurements file.

Each row is predicted under a profile with `engine.serve` (docs/model.md, "Serving model");
its error is predicted / measured − 1. A row the model cannot express (unknown model or
accelerator, a model without shapes, a split the model refuses, a batch that does not fit in
memory) keeps its place with the reason, so nothing is dropped silently. See docs/model.md
("Accuracy").
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace

import numpy as np
import pandas as pd

from engine.api import default_catalog, resolve_hardware, resolve_model
from engine.catalog import Catalog
from engine.measurements import Measurement, ape_summary, to_frame
from engine.profiles import Profile, get_profile
from engine.serve import serve
from engine.specs import Assumptions

RESULT_COLUMNS = ("predicted", "error", "ape_pct", "reason")


def _predict_one(m: Measurement, a: Assumptions, profile: str, catalog: Catalog):
    """(predicted value, None) or (NaN, the reason it cannot be predicted)."""
    try:
        model = resolve_model(m.model, catalog)
        hardware = resolve_hardware(m.hardware, catalog)
        result = serve(model, hardware, tp=m.tp, pp=m.pp, batch_size=m.batch_size,
                       input_tokens=m.input_tokens, output_tokens=m.output_tokens,
                       precision=m.precision, kv_precision=m.kv_precision, profile=profile,
                       assumptions=a, catalog=catalog)  # fmt: skip
    except (KeyError, ValueError) as exc:
        return float("nan"), str(exc).strip('"')
    if not result["fits_in_memory"]:
        need, usable = result["memory_per_device_bytes"], result["usable_memory_bytes"]
        return float("nan"), (
            f"does not fit in memory: {need / 1e9:.1f} GB per device > {usable / 1e9:.1f} GB usable"
        )
    value = result[m.metric]
    if not np.isfinite(value):
        return float("nan"), f"the model gives no {m.metric} for this scenario"
    return float(value), None


def predict(
    rows: Sequence[Measurement],
    assumptions: Assumptions,
    *,
    profile: str = "custom",
    catalog: Catalog | None = None,
) -> tuple[np.ndarray, list[str | None]]:
    """Predicted values (each row's metric unit; NaN where it cannot) and the reasons."""
    catalog = catalog or default_catalog()
    pairs = [_predict_one(m, assumptions, profile, catalog) for m in rows]
    return np.array([p for p, _ in pairs], dtype=float), [r for _, r in pairs]


def memory_fractions(
    rows: Sequence[Measurement], assumptions: Assumptions, catalog: Catalog | None = None
) -> np.ndarray:
    """Memory per device / capacity that each row needs (NaN where the model cannot say)."""
    catalog = catalog or default_catalog()
    bare = replace(assumptions, memory_reserve=0.0)
    out = []
    for m in rows:
        try:
            r = serve(resolve_model(m.model, catalog), resolve_hardware(m.hardware, catalog),
                      tp=m.tp, pp=m.pp, batch_size=m.batch_size, input_tokens=m.input_tokens,
                      output_tokens=m.output_tokens, precision=m.precision,
                      kv_precision=m.kv_precision, assumptions=bare, catalog=catalog)  # fmt: skip
            out.append(r["memory_per_device_bytes"] / r["memory_capacity_bytes"])
        except (KeyError, ValueError):
            out.append(float("nan"))
    return np.array(out, dtype=float)


def predict_values(
    rows: Sequence[Measurement], assumptions: Assumptions, catalog: Catalog | None = None
) -> np.ndarray:
    """The calibration's predictor: predicted values under `assumptions` (NaN: cannot)."""
    return predict(rows, assumptions, catalog=catalog)[0]


def validate(
    rows: Iterable[Measurement],
    profile: str | Profile = "tutorial",
    *,
    catalog: Catalog | None = None,
) -> pd.DataFrame:
    """Every row with its prediction under `profile`.

    Returns:
        The measurement columns plus `predicted` (the metric's unit), `error` (predicted /
        measured − 1), `ape_pct` (|error| in %) and `reason` (empty when predicted).
    """
    rows = list(rows)
    p = get_profile(profile)
    predicted, reasons = predict(rows, p.assumptions, profile=p.name, catalog=catalog)
    df = to_frame(rows)
    df["predicted"] = predicted
    df["error"] = predicted / df["value"].to_numpy(dtype=float) - 1.0
    df["ape_pct"] = df["error"].abs() * 100.0
    df["reason"] = [r or "" for r in reasons]
    df["profile"] = p.name
    return df


def summarise(df: pd.DataFrame, worst: int = 5) -> dict[str, object]:
    """MAPE overall, per accelerator and per metric, the worst rows, the unpredicted rows."""
    ok = df[df["reason"] == ""]
    out: dict[str, object] = {
        "profile": str(df["profile"].iloc[0]) if len(df) else "",
        "rows": len(df),
        "predicted_rows": len(ok),
        **ape_summary(ok["error"]),
    }
    for key in ("hardware", "metric", "model"):
        out[f"mape_pct_by_{key}"] = {
            str(k): float(g["ape_pct"].mean()) for k, g in ok.groupby(key, sort=True)
        }
    top = ok.reindex(ok["ape_pct"].sort_values(ascending=False).index).head(worst)
    out["worst"] = top[["file", "row", "model", "hardware", "metric", "error"]].to_dict("records")
    out["unpredicted"] = df.loc[df["reason"] != "", ["file", "row", "reason"]].to_dict("records")
    return out
