"""Fit a profile to measurements: least squares on log(predicted / measured).

The fitted parameters are global (compute efficiency of GEMMs and of attention, bandwidth
efficiency, per-layer overhead, interconnect efficiency), each bounded to its physical range;
the start is a fixed profile and the solver (scipy.optimize.least_squares, trust-region
reflective) uses no randomness, so the same measurements always give the same profile.
See docs/model.md ("Accuracy").
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np

from engine.accuracy.measurements import Measurement, ape_summary, describe, read_measurements
from engine.accuracy.validate import ServingPredictor, memory_fractions
from engine.assumptions import Assumptions
from engine.catalog.load import Catalog
from engine.catalog.profiles import Profile, assumptions_from, get_profile, today

# Fitted parameter (user name and unit) -> (lower, upper) bound. Efficiencies are fractions of
# a datasheet peak, so in (0, 1]; the lower bound 0.02 keeps them away from a zero division.
FIT_BOUNDS: Mapping[str, tuple[float, float]] = {
    "efficiency": (0.02, 1.0),
    "attention_efficiency": (0.02, 1.0),
    "bandwidth_efficiency": (0.02, 1.0),
    "layer_overhead_us": (0.0, 500.0),
    "link_efficiency": (0.02, 1.0),
    "link_latency_us": (0.0, 100.0),
}
FIT_PARAMS = tuple(FIT_BOUNDS)
# Start values for parameters a profile may leave unset: "the same as efficiency", or (the
# link latency, unset meaning each interconnect's catalogued figure) a fixed 1 us per hop.
_FALLBACK = {"attention_efficiency": "efficiency", "expert_efficiency": "efficiency"}
_UNSET_START = {"link_latency_us": 1.0}
# A row the model stops expressing mid-fit counts as this log error (a factor e^3 ~ 20x).
_PENALTY = 3.0

# (rows, assumptions) -> predicted values in each row's metric unit; NaN where it cannot.
Predictor = Callable[[Sequence[Measurement], Assumptions], np.ndarray]


def _start_values(start: Profile, params: Sequence[str]) -> np.ndarray:
    values = start.values()
    x0 = []
    for name in params:
        value = values.get(name, values.get(_FALLBACK.get(name, ""), _UNSET_START.get(name)))
        if value is None:
            raise ValueError(f"profile {start.name!r} gives no start value for {name}")
        lo, hi = FIT_BOUNDS[name]
        x0.append(min(max(float(value), lo), hi))
    return np.array(x0)


def _assumptions(start: Profile, params: Sequence[str], x: np.ndarray) -> Assumptions:
    values = {n: float(v) for n, v in zip(params, x, strict=True)}
    return assumptions_from(values, f"fit from {start.name!r}", start.assumptions)


def _rounded(x: np.ndarray) -> np.ndarray:
    # 6 significant digits: what the profile file keeps, far below the fit's precision.
    return np.array([float(f"{v:.6g}") for v in x])


def fit(
    rows: Sequence[Measurement],
    predictor: Predictor,
    start: Profile,
    params: Sequence[str] = FIT_PARAMS,
) -> tuple[Assumptions, np.ndarray]:
    """Least-squares fit of `params` over the rows the start profile can predict.

    Returns:
        The fitted Assumptions and the boolean mask of the rows used.

    Raises:
        ValueError: an unknown parameter, or no row that the model can predict.
    """
    unknown = [p for p in params if p not in FIT_BOUNDS]
    if unknown:
        raise ValueError(f"cannot fit {unknown[0]!r} (fittable: {', '.join(FIT_BOUNDS)})")
    measured = np.array([m.value for m in rows], dtype=float)
    used = np.isfinite(predictor(rows, start.assumptions))
    if not used.any():
        raise ValueError("no measurement row can be predicted, so there is nothing to fit")
    kept = [m for m, u in zip(rows, used, strict=True) if u]
    log_measured = np.log(measured[used])

    def residuals(x: np.ndarray) -> np.ndarray:
        predicted = predictor(kept, _assumptions(start, params, x))
        with np.errstate(divide="ignore", invalid="ignore"):
            r = np.log(predicted) - log_measured
        return np.where(np.isfinite(r), r, _PENALTY)

    x = _least_squares(residuals, _start_values(start, params), params)
    return _assumptions(start, params, _rounded(x)), used


def _least_squares(residuals: Callable, x0: np.ndarray, params: Sequence[str]) -> np.ndarray:
    """Trust-region reflective least squares within FIT_BOUNDS, from x0, deterministic."""
    from scipy.optimize import least_squares  # loaded by the first fit, not by `import engine`

    lower, upper = np.array([FIT_BOUNDS[p] for p in params]).T
    result = least_squares(residuals, x0, bounds=(lower, upper), method="trf", x_scale="jac",
                           diff_step=1e-4, xtol=1e-10, ftol=1e-10, max_nfev=400)  # fmt: skip
    return result.x


def calibrate(
    measurements: Sequence[Measurement] | Iterable[str | Path],
    start: str | Profile = "tutorial",
    *,
    name: str = "fitted",
    predictor: Predictor | None = None,
    params: Sequence[str] = FIT_PARAMS,
    command: str = "",
    catalog: Catalog | None = None,
) -> Profile:
    """Fit a profile to measured results (files or rows).

    Args:
        measurements: measurement rows, or paths of measurements CSV files.
        start: the profile the fit starts from (and keeps for what it does not fit).
        name: the new profile's name.
        predictor: predicts rows under some assumptions; the serving model if None.
        params: the parameters to fit (user names; see FIT_BOUNDS).
        command: the command that reproduces the fit, recorded in the profile.
        catalog: where the rows' models and accelerators are looked up (default catalogue).

    Returns:
        The fitted Profile, with its in-sample residuals and worst rows.
    """
    rows = _rows(measurements)
    base = get_profile(start)
    if predictor is None:  # the serving model: its memory check applies too
        predictor = ServingPredictor(catalog, base.scheduler)
        fractions = memory_fractions(rows, base.assumptions, catalog)
        base = _with_observed_reserve(base, fractions)
    assumptions, used = fit(rows, predictor, base, params)
    kept = [m for m, u in zip(rows, used, strict=True) if u]
    errors = predictor(kept, assumptions) / np.array([m.value for m in kept]) - 1.0
    return _fitted_profile(name, assumptions, base, rows, kept, errors, command)


def _fitted_profile(name, assumptions, base, rows, kept, errors, command) -> Profile:
    """The fitted profile with what it was fitted on, when, how, and its residuals."""
    order = np.argsort(-np.abs(errors))[:3]
    return Profile(
        name=name,
        assumptions=assumptions,
        description=f"fitted from {base.name!r} on {len(kept)} measured rows",
        fitted_on=tuple(dict.fromkeys(m.file for m in rows)),
        rows=len(kept),
        fitted_at=today(),
        command=command,
        residuals=ape_summary(errors),
        worst=tuple(f"{describe(kept[i])}: {errors[i]:+.1%}" for i in order),
        origin="fitted",
        scheduler=base.scheduler,  # the stack's scheduler is not fitted: kept as it was
    )


def _with_observed_reserve(start: Profile, fractions: np.ndarray) -> Profile:
    """Lower the memory reserve so that every measured run fits: it ran, so it fitted.

    The largest fraction of capacity a measured run needs (up to 1) caps the reserve, rounded
    down to 0.5 %; a run needing more than the whole capacity stays unpredictable.
    """
    possible = fractions[np.isfinite(fractions) & (fractions <= 1.0)]
    if possible.size == 0:
        return start
    cap = np.floor((1.0 - possible.max()) * 200.0) / 200.0
    reserve = min(start.assumptions.memory_reserve, float(cap))
    return replace(start, assumptions=replace(start.assumptions, memory_reserve=reserve))


def _rows(measurements: Sequence[Measurement] | Iterable[str | Path]) -> list[Measurement]:
    items = list(measurements)
    if items and all(isinstance(m, Measurement) for m in items):
        return items
    if items and all(isinstance(m, str | Path) for m in items):
        return list(read_measurements(items))
    raise ValueError("measurements: give Measurement rows or measurement file paths")
