"""Measured vs predicted: the serving model's prediction of every row of a measurements file.

Each row is predicted under a profile with the serving model (docs/model.md, "Serving model";
vectorised over the rows by engine/accuracy/rows.py, equal to `engine.serve` row by row);
its error is predicted / measured − 1. A row the model cannot express (unknown model or
accelerator, a model without shapes, a split the model refuses, a batch that does not fit in
memory) keeps its place with the reason, so nothing is dropped silently. See docs/model.md
("Accuracy").
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from engine.accuracy.measurements import Measurement, ape_summary, to_frame
from engine.accuracy.rows import RowPlan, evaluate, evaluate_many, plan_rows
from engine.assumptions import Assumptions
from engine.catalog.profiles import DEFAULT_PROFILE, Profile, get_profile
from engine.catalog.reader import Catalog

if TYPE_CHECKING:  # pandas loads with the first table, keeping `import engine` fast
    import pandas as pd


NO_VALUE = "the model gives no value of this metric for this scenario"
MAX_RUN = (
    "a max-throughput run's TTFT and end-to-end latency depend on how many requests "
    "were queued: give the run's concurrency"
)


def _reasons(plan: RowPlan, result: dict) -> list[str | None]:
    reasons = list(plan.reasons)
    for i in plan.index:
        if not result["fits"][i]:
            need, usable = result["memory_per_device_bytes"][i], result["usable_memory_bytes"][i]
            reasons[i] = (
                f"does not fit in memory: {need / 1e9:.1f} GB per device > "
                f"{usable / 1e9:.1f} GB usable"
            )
        elif not np.isfinite(result["value"][i]):
            reasons[i] = NO_VALUE
    for i, clients in zip(plan.index, plan.clients, strict=True):
        if clients == 0 and reasons[i] == NO_VALUE:
            reasons[i] = MAX_RUN
    return reasons


def predict(
    rows: Sequence[Measurement],
    assumptions: Assumptions,
    *,
    catalog: Catalog | None = None,
    plan: RowPlan | None = None,
    scheduler=None,
) -> tuple[np.ndarray, list[str | None]]:
    """Predicted values (each row's metric unit; NaN where it cannot) and the reasons.

    Args:
        rows: the measurement rows.
        assumptions: what the serving model assumes (a profile's).
        catalog: where models and accelerators are looked up (the default catalogue if None).
        plan: `plan_rows(rows, catalog)` if already made (calibration reuses it).
        scheduler: the serving stack's scheduler for rows under load (vLLM's if None).
    """
    plan = plan or plan_rows(rows, catalog, scheduler)
    return _shown(plan, evaluate(plan, assumptions))


def _shown(plan: RowPlan, result: dict) -> tuple[np.ndarray, list[str | None]]:
    """An evaluation's values where the row is predicted (NaN where not), and the reasons."""
    reasons = _reasons(plan, result)
    return np.where([r is None for r in reasons], result["value"], np.nan), reasons


class ServingPredictor:
    """The calibration's predictor: predicted values under some assumptions (NaN: cannot).

    The rows are resolved once per list of rows (the fit calls it a few hundred times with the
    same rows): the last list's plan is kept.
    """

    def __init__(self, catalog: Catalog | None = None, scheduler=None):
        self.catalog, self.scheduler = catalog, scheduler
        self._plan = functools.lru_cache(maxsize=1)(self._plan_rows)

    def _plan_rows(self, rows: tuple[Measurement, ...]) -> RowPlan:
        return plan_rows(rows, self.catalog, self.scheduler)

    def __call__(self, rows: Sequence[Measurement], assumptions: Assumptions) -> np.ndarray:
        return predict(rows, assumptions, plan=self._plan(tuple(rows)))[0]

    def many(self, rows: Sequence[Measurement], many: Sequence[Assumptions]) -> np.ndarray:
        """`self(rows, a)` for each of `many` in one vectorised pass (a line each): a fit's
        finite-difference Jacobian asks for one point per parameter at once."""
        plan = self._plan(tuple(rows))
        result = evaluate_many(plan, many)
        lines = [
            _shown(plan, {key: c[k] for key, c in result.items()})[0] for k in range(len(many))
        ]
        return np.array(lines).reshape(len(many), plan.rows)


def validate(
    rows: Iterable[Measurement],
    profile: str | Profile = DEFAULT_PROFILE,
    *,
    catalog: Catalog | None = None,
) -> pd.DataFrame:
    """Every row with its prediction under `profile`.

    Returns:
        The measurement columns plus `predicted` (the metric's unit), `error` (predicted /
        measured − 1), `ape_pct` (|error| in %), `reason` (empty when predicted) and
        `in_sample` (True where the profile was fitted on the row).
    """
    rows = list(rows)
    p = get_profile(profile)
    predicted, reasons = predict(rows, p.assumptions, catalog=catalog, scheduler=p.scheduler)
    df = to_frame(rows)
    df["predicted"] = predicted
    df["error"] = predicted / df["value"].to_numpy(dtype=float) - 1.0
    df["ape_pct"] = df["error"].abs() * 100.0
    df["reason"] = [r or "" for r in reasons]
    df["profile"] = p.name
    df["in_sample"] = in_sample(p, df)
    return df


def in_sample(profile: Profile, df: pd.DataFrame) -> np.ndarray:
    """Per row of a validate frame, True when `profile` was fitted on it: a predicted row of a
    file it was fitted on, in a precision its fit kept (its ground's precisions; a fit given
    `--precisions` keeps only some, and predicts the others out of sample)."""
    kept = profile.ground.get("precisions") or ()
    fitted = df["file"].isin(profile.fitted_on) & (df["reason"] == "")
    if kept:
        fitted &= df["precision"].isin(kept)
    return fitted.to_numpy(dtype=bool)


def fit_parts(frames: Mapping[str, pd.DataFrame]) -> list[tuple[str, np.ndarray]]:
    """How one file's rows are tabulated, given each profile's validate frame of that file:
    one part (labelled ''), or, where a profile was fitted on some of the file's rows only,
    the rows it was fitted on and the others, each labelled by its precisions."""
    first = next(iter(frames.values()))
    everything = np.ones(len(first), dtype=bool)
    for df in frames.values():
        fitted = df["in_sample"].to_numpy(dtype=bool)
        rest = ~fitted & (df["reason"] == "").to_numpy()
        if fitted.any() and rest.any():
            return [
                (", ".join(dict.fromkeys(map(str, first.loc[mask, "precision"]))), mask)
                for mask in (fitted, ~fitted)
            ]
    return [("", everything)]


def overall(df: pd.DataFrame) -> dict[str, object]:
    """The profile, the rows given and predicted, and the error of the predicted rows (MAPE,
    median and largest, in %): the head of `summarise`, without its per-group breakdowns."""
    ok = df[df["reason"] == ""]
    return {
        "profile": str(df["profile"].iloc[0]) if len(df) else "",
        "rows": len(df),
        "predicted_rows": len(ok),
        **ape_summary(ok["error"]),
    }


def summarise(df: pd.DataFrame, worst: int = 5) -> dict[str, object]:
    """MAPE overall, per accelerator and per metric, the worst rows, the unpredicted rows."""
    ok = df[df["reason"] == ""]
    out = overall(df)
    for key in ("hardware", "metric", "model"):
        out[f"mape_pct_by_{key}"] = {
            str(k): float(g["ape_pct"].mean()) for k, g in ok.groupby(key, sort=True)
        }
    top = ok.reindex(ok["ape_pct"].sort_values(ascending=False).index).head(worst)
    out["worst"] = top[["file", "row", "model", "hardware", "metric", "error"]].to_dict("records")
    out["unpredicted"] = df.loc[df["reason"] != "", ["file", "row", "reason"]].to_dict("records")
    return out
