"""Fit a profile to measurements: least squares on log(predicted / measured), honestly.

The fitted parameters are global (compute efficiency of GEMMs, of 8-bit GEMMs and of
attention, bandwidth efficiency, the efficiency of decode attention's KV reads, the overheads
per layer and per sequence, interconnect efficiency and latency), each bounded to its
physical range (FIT_BOUNDS); nothing is per model or per accelerator. The solver
(scipy.optimize.least_squares, trust-region reflective) starts from a fixed profile and uses
no randomness, so the same measurements always give the same profile.

Honest by construction (docs/model.md, "Accuracy"):
- only what the rows can identify is fitted: a parameter no row is sensitive to keeps its
  start value, and the profile lists it as not identified;
- the memory reserve is never fitted from speed rows (it stays the start profile's);
- the error is reported in sample and out of sample: leave one model out and leave one
  accelerator out refit on the other rows and predict the held-out ones;
- fewer than MIN_ROWS_PER_PARAMETER rows per fitted parameter is flagged;
- a fit whose parameters or errors are not finite numbers is refused with the row it could not
  express (`finite_or_refused`), never made into a profile (TOML holds no inf or nan); the
  measured values are within their physical range already (engine/accuracy/measurements.py).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np

from engine.accuracy.bands import families
from engine.accuracy.measurements import Measurement, ape_summary, describe, read_measurements
from engine.accuracy.validate import ServingPredictor
from engine.assumptions import Assumptions
from engine.catalog.formats import format_name
from engine.catalog.profiles import Profile, assumptions_from, get_profile, today
from engine.catalog.reader import Catalog
from engine.catalog.resolve import resolve_model
from engine.report.messages import Message, MessageKind

# The overheads a fit may use, each no larger than a public source shows, so that a fit cannot
# hide slow physics in them (docs/model.md, "Accuracy", "Bounds of the overheads"):
# name -> (upper bound in the assumption's unit, the source, what it shows).
CUDA_GRAPHS = "https://developer.nvidia.com/blog/cuda-graphs/"
VLLM_CPU = "https://blog.vllm.ai/2024/09/05/perf-update.html"
OVERHEAD_BOUNDS: Mapping[str, tuple[float, str, str]] = {
    "layer_overhead_us": (
        15.0,
        CUDA_GRAPHS,
        "a decode step is one captured CUDA graph (TensorRT-LLM 1.0 and vLLM capture it); a "
        "replayed graph costs about 0.5 µs per kernel beyond the kernel (3.4 µs per 2.9 µs "
        "kernel), eager launches about 0.9 µs: 10-15 kernels per layer at 1 µs",
    ),
    "prefill_layer_overhead_us": (
        70.0,
        CUDA_GRAPHS,
        "prefill runs eagerly; a launch followed by a synchronisation costs about 6.7 µs beyond "
        "the kernel (9.6 µs per 2.9 µs kernel): about 10 kernels per layer at 7 µs",
    ),
    "sequence_overhead_us": (
        20.0,
        VLLM_CPU,
        "per-sequence CPU work (scheduling, sampling, detokenisation) stays off the GPU's "
        "critical path once it overlaps the step (vLLM 0.6's asynchronous output processing "
        "and multi-step scheduling, TensorRT-LLM's overlap scheduler); 20 µs per sequence is "
        "an upper figure for what remains on it",
    ),
}
# Fitted parameter (user name and unit) -> (lower, upper) bound, each with a physical meaning:
# efficiencies are fractions of a datasheet peak (below 5 % no production kernel runs; dense
# GEMMs stay under 95 %, FlashAttention under 80 %: FlashAttention-3 reaches about 75 % of
# H100's fp16 peak, Shah et al. 2024); decode attention's KV reads reach at least half the
# bandwidth that weight streaming reaches (FlashDecoding-style split-K kernels stream the KV
# at near-copy speed); the overheads as OVERHEAD_BOUNDS; a link hop beyond 50 µs is a
# network, not NVLink or PCIe. The grouped GEMM of the routed experts has its own efficiency
# (small, ragged per-expert GEMMs run further below peak than dense ones); the busiest
# expert-parallel rank carries at least the mean (1); twice the mean is our ceiling for a group
# without an expert load balancer (an assumption: docs/model.md, "Profiles").
FIT_BOUNDS: Mapping[str, tuple[float, float]] = {
    "efficiency": (0.05, 0.95),
    "fp8_efficiency": (0.05, 0.95),
    "attention_efficiency": (0.05, 0.8),
    "bandwidth_efficiency": (0.3, 1.0),
    "kv_bandwidth_efficiency": (0.5, 1.0),
    **{name: (0.0, high) for name, (high, _, _) in OVERHEAD_BOUNDS.items()},
    "link_efficiency": (0.05, 1.0),
    "link_latency_us": (0.0, 50.0),
    "expert_efficiency": (0.05, 0.95),
    "expert_imbalance": (1.0, 2.0),
}
FIT_PARAMS = tuple(FIT_BOUNDS)
EXTRA_STARTS = 3  # starts beyond the start profile's values (`_starts`)
FIT_SEED = 0
MIN_ROWS_PER_PARAMETER = 5  # fewer rows per fitted parameter: the fit is flagged
# Start values for parameters a profile may leave unset: "the same as efficiency" (or the
# layer overhead), or (unset meaning each interconnect's catalogued figure) 1 µs per hop.
_FALLBACK = {
    "attention_efficiency": "efficiency",
    "expert_efficiency": "efficiency",
    "fp8_efficiency": "efficiency",
    "prefill_layer_overhead_us": "layer_overhead_us",
}
_UNSET_START = {"link_latency_us": 1.0}
# A row the model stops expressing mid-fit counts as this log error (a factor e^3 ~ 20x).
_PENALTY = 3.0
# A parameter is identifiable when a 10 % step moves some row's prediction by at least this
# (relative): below it no row can tell its value.
_SENSITIVITY = 1e-3

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


def _snapped(x: np.ndarray, params: Sequence[str]) -> np.ndarray:
    """Values within a billionth of their range from a bound are the bound (a fit pressed
    against 0 µs reports 0, not 5e-16)."""
    lower, upper = np.array([FIT_BOUNDS[p] for p in params]).T
    close = 1e-9 * (upper - lower)
    return np.where(x - lower < close, lower, np.where(upper - x < close, upper, x))


def _log_residuals(predictor, rows, log_measured, start, params):
    def residuals(x: np.ndarray) -> np.ndarray:
        return _penalised(predictor(rows, _assumptions(start, params, x)), log_measured)

    return residuals


def _jacobian_points(predictor, rows, log_measured, start, params):
    """For least_squares' `workers` (a map-like it calls with its residual function and the
    points of a finite-difference Jacobian): the residuals at every point in one
    `predictor.many` call, the same numbers as the residual function's point by point. None
    when the predictor has no `many` (each point is then its own call)."""
    many = getattr(predictor, "many", None)
    if many is None:
        return None

    def points(_residuals, xs) -> list[np.ndarray]:
        predicted = many(rows, [_assumptions(start, params, x) for x in xs])
        return list(_penalised(predicted, log_measured))

    return points


def _penalised(predicted: np.ndarray, log_measured: np.ndarray) -> np.ndarray:
    """log(predicted / measured), _PENALTY where the model cannot express a row."""
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.log(predicted) - log_measured
    return np.where(np.isfinite(r), r, _PENALTY)


def identifiable(residuals: Callable, x0: np.ndarray, params: Sequence[str]) -> list[str]:
    """The parameters some row is sensitive to: a 10 % step of each (or +0.1 for one at 0)
    moves at least one log-residual by _SENSITIVITY."""
    base = residuals(x0)
    found = []
    for i, name in enumerate(params):
        lo, hi = FIT_BOUNDS[name]
        step = x0.copy()
        step[i] = min(max(x0[i] * 1.1 if x0[i] else 0.1 * (hi - lo), lo), hi)
        if step[i] == x0[i]:  # at an upper bound: step down
            step[i] = max(x0[i] * 0.9, lo)
        if np.max(np.abs(residuals(step) - base)) >= _SENSITIVITY:
            found.append(name)
    return found


def fit(
    rows: Sequence[Measurement],
    predictor: Predictor,
    start: Profile,
    params: Sequence[str] = FIT_PARAMS,
) -> tuple[Assumptions, np.ndarray, list[str]]:
    """Least-squares fit of the identifiable `params` over the rows the start can predict.

    Returns:
        The fitted Assumptions, the boolean mask of the rows used and the parameters fitted
        (the others keep the start profile's values).

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
    everything = _log_residuals(
        predictor=predictor, rows=kept, log_measured=log_measured, start=start, params=params
    )
    chosen = identifiable(everything, _start_values(start, params), params)
    if not chosen:
        return start.assumptions, used, []
    given = dict(predictor=predictor, rows=kept, log_measured=log_measured, start=start)
    residuals = _log_residuals(**given, params=chosen)
    workers = _jacobian_points(**given, params=chosen)
    ends = [
        _least_squares(residuals=residuals, x0=x0, params=chosen, workers=workers)
        for x0 in _starts(_start_values(start, chosen), chosen)
    ]
    x = min(ends, key=lambda end: float(np.sum(residuals(end) ** 2)))  # the first of equals
    return _assumptions(start, chosen, _rounded(_snapped(x, chosen))), used, chosen


def _starts(x0: np.ndarray, params: Sequence[str]) -> list[np.ndarray]:
    """Where the fit starts: the start profile's values, then EXTRA_STARTS points drawn
    uniformly within FIT_BOUNDS by a fixed seed (the same on every machine). A least-squares
    fit ends at the minimum nearest its start; several starts keep one profile's fit and its
    leave-one-out refits from stopping in a shallower minimum than the others found
    (docs/model.md, "Profiles")."""
    lower, upper = np.array([FIT_BOUNDS[p] for p in params]).T
    draws = np.random.default_rng(FIT_SEED).uniform(size=(EXTRA_STARTS, len(params)))
    return [x0, *(lower + draws * (upper - lower))]


def _least_squares(
    residuals: Callable, x0: np.ndarray, params: Sequence[str], workers: Callable | None = None
) -> np.ndarray:
    """Trust-region reflective least squares within FIT_BOUNDS, from x0, deterministic
    (`workers`: how a Jacobian's points are evaluated, `_jacobian_points`)."""
    from scipy.optimize import least_squares  # loaded by the first fit, not by `import engine`

    lower, upper = np.array([FIT_BOUNDS[p] for p in params]).T
    result = least_squares(
        residuals,
        x0,
        bounds=(lower, upper),
        method="trf",
        x_scale="jac",
        diff_step=1e-4,
        xtol=1e-10,
        ftol=1e-10,
        max_nfev=400,
        workers=workers,
    )
    return result.x


def cross_validated(
    rows: Sequence[Measurement], predictor: Predictor, start: Profile, params, key: str
) -> dict[str, float] | None:
    """Leave-one-group-out error: for each value of `key` ("model", "hardware"), refit on the
    other rows and predict the held-out ones. None when there is only one group, or when no
    held-out row could be predicted (the error is then not measured, and fit_warnings says so).

    Returns:
        mape_pct, median_ape_pct, max_ape_pct and the rows predicted out of sample.
    """
    groups = list(dict.fromkeys(getattr(m, key) for m in rows))
    if len(groups) < 2:
        return None
    errors = []
    for group in groups:
        train = [m for m in rows if getattr(m, key) != group]
        test = [m for m in rows if getattr(m, key) == group]
        try:
            assumptions, _, _ = fit(rows=train, predictor=predictor, start=start, params=params)
        except ValueError:  # nothing predictable left to fit on
            continue
        errors += [e for e in _errors(predictor(test, assumptions), test) if np.isfinite(e)]
    if not errors:  # no held-out row could be predicted: the error is not measured
        return None
    return ape_summary(errors) | {"rows": float(len(errors))}


def _errors(predicted: np.ndarray, rows: Sequence[Measurement]) -> np.ndarray:
    """predicted / measured - 1 per row; inf where the ratio overflows (said, not warned)."""
    with np.errstate(over="ignore", invalid="ignore"):
        return predicted / np.array([m.value for m in rows], dtype=float) - 1.0


def calibrate(
    measurements: Sequence[Measurement] | Iterable[str | Path],
    start: str | Profile = "tutorial",
    *,
    name: str = "fitted",
    predictor: Predictor | None = None,
    params: Sequence[str] = FIT_PARAMS,
    command: str = "",
    catalog: Catalog | None = None,
    cross_validate: bool = True,
) -> Profile:
    """Fit a profile to measured results (files or rows).

    Args:
        measurements: measurement rows, or paths of measurements CSV files.
        start: the profile the fit starts from (and keeps for what it does not fit, the
            memory reserve included).
        name: the new profile's name.
        predictor: predicts rows under some assumptions; the serving model if None.
        params: the parameters that may be fitted (user names; see FIT_BOUNDS); only the
            identifiable ones are.
        command: the command that reproduces the fit, recorded in the profile.
        catalog: where the rows' models and accelerators are looked up (default catalogue).
        cross_validate: also refit leaving one model out and one accelerator out.

    Returns:
        The fitted Profile: its residuals in sample (mape_pct, ...) and, when there are two or
        more models or accelerators, out of sample (lomo_mape_pct, loao_mape_pct), the
        parameters fitted and those left at their start values.
    """
    rows = _rows(measurements)
    base = get_profile(start)
    predictor = predictor or ServingPredictor(catalog, base.scheduler)
    assumptions, used, chosen = fit(rows=rows, predictor=predictor, start=base, params=params)
    kept = [m for m, u in zip(rows, used, strict=True) if u]
    errors = _errors(predictor(kept, assumptions), kept)
    residuals = ape_summary(errors)
    if cross_validate:
        for key, short in (("model", "lomo"), ("hardware", "loao")):
            cv = cross_validated(rows=kept, predictor=predictor, start=base, params=params, key=key)
            if cv is not None:
                residuals |= {f"{short}_{k}": v for k, v in cv.items()}
    not_fitted = tuple(p for p in params if p not in chosen)
    extra = {
        "fitted": tuple(chosen),
        "not_identified": not_fitted,
        "ground": ground_of(kept, catalog),
    }
    profile = _fitted_profile(
        name=name,
        assumptions=assumptions,
        base=base,
        rows=rows,
        kept=kept,
        errors=errors,
        command=command,
        residuals=residuals,
        extra=extra,
    )
    return finite_or_refused(profile)


def with_held_out(
    profile: Profile, rows: Sequence[Measurement], catalog: Catalog | None = None
) -> Profile:
    """`profile` with the errors of the rows of its files its fit left out (`calibrate
    --precisions`): each number format's MAPE and rows predicted, `held_out_<format>_mape_pct`
    and `held_out_<format>_rows` (fp4 counted as nvfp4, int4 as w4a16); engine/accuracy/
    bands.py widens the band of a prediction in that format to it."""
    predictor = ServingPredictor(catalog, profile.scheduler)
    extra = held_out_errors(rows, predictor, profile.assumptions)
    if not extra:
        return profile
    return finite_or_refused(replace(profile, residuals={**profile.residuals, **extra}))


def held_out_errors(
    rows: Sequence[Measurement], predictor: Predictor, assumptions: Assumptions
) -> dict[str, float]:
    """The MAPE and the count of `rows` predicted under `assumptions`, per number format."""
    rows = list(rows)
    if not rows:
        return {}
    errors = _errors(predictor(rows, assumptions), rows)
    out: dict[str, float] = {}
    for name in dict.fromkeys(format_name(m.precision) for m in rows):
        mine = [e for m, e in zip(rows, errors, strict=True) if format_name(m.precision) == name]
        mine = [e for e in mine if np.isfinite(e)]
        if mine:
            out[f"held_out_{name}_mape_pct"] = ape_summary(mine)["mape_pct"]
            out[f"held_out_{name}_rows"] = float(len(mine))
    return out


def finite_or_refused(profile: Profile) -> Profile:
    """The fitted profile if every parameter and error is a finite number.

    Raises:
        ValueError: naming the first value that is not and the worst-predicted row (a profile
            with inf or nan would predict nothing and could not be written as TOML).
    """
    values = profile.values() | dict(profile.residuals)
    numbers = {k: v for k, v in values.items() if not isinstance(v, str)}  # words are checked
    bad = next((k for k, v in numbers.items() if not math.isfinite(v)), None)
    if bad is None:
        return profile
    worst = f" (worst row: {profile.worst[0]})" if profile.worst else ""
    raise ValueError(
        f"the fit gave {bad} = {values[bad]}, not a finite number{worst}: no profile was made; "
        "check that row's measured value"
    )


def ground_of(rows: Sequence[Measurement], catalog: Catalog | None) -> dict[str, tuple]:
    """What the fitted rows cover: accelerators, precisions, models and their families."""
    found = {
        "hardware": tuple(dict.fromkeys(m.hardware for m in rows)),
        "precisions": tuple(dict.fromkeys(m.precision for m in rows)),
        "models": tuple(dict.fromkeys(m.model for m in rows)),
    }
    kinds = []
    for model in found["models"]:
        try:
            arch = resolve_model(model, catalog).arch
        except (KeyError, ValueError):  # a model only a test's predictor knows
            continue
        kinds += list(families(arch)) if arch is not None else []
    return found | ({"families": tuple(dict.fromkeys(kinds))} if kinds else {})


def _fitted_profile(
    name, assumptions, base, rows, kept, errors, command, residuals, extra
) -> Profile:
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
        residuals=residuals,
        worst=tuple(f"{describe(kept[i])}: {errors[i]:+.1%}" for i in order),
        origin="fitted",
        **extra,
        scheduler=base.scheduler,  # the stack's scheduler is not fitted: kept as it was
    )


FEW_ROWS = MessageKind(
    "fit_few_rows",
    "{rows} rows for {fitted} fitted parameters (fewer than {per} per parameter): the in-sample "
    "error flatters the fit",
)
NOT_IDENTIFIED = MessageKind(
    "fit_not_identified",
    "no row is sensitive to {names}: kept at the start profile's values",
)
ONE_MODEL = MessageKind(
    "fit_one_model",
    "one model only: no leave-one-model-out error (it could not be measured)",
)
FIT_WARNING_KINDS = (FEW_ROWS, NOT_IDENTIFIED, ONE_MODEL)


def fit_warnings(profile: Profile) -> list[Message]:
    """What a reader of a fitted profile must know before trusting it."""
    out = []
    if profile.fitted and profile.rows < MIN_ROWS_PER_PARAMETER * len(profile.fitted):
        out.append(
            FEW_ROWS(
                rows=f"{profile.rows}",
                fitted=f"{len(profile.fitted)}",
                per=f"{MIN_ROWS_PER_PARAMETER}",
            )
        )
    if profile.not_identified:
        out.append(NOT_IDENTIFIED(names=", ".join(profile.not_identified)))
    if profile.fitted and "lomo_mape_pct" not in profile.residuals:
        out.append(ONE_MODEL())
    return out


def _rows(measurements: Sequence[Measurement] | Iterable[str | Path]) -> list[Measurement]:
    items = list(measurements)
    if items and all(isinstance(m, Measurement) for m in items):
        return items
    if items and all(isinstance(m, str | Path) for m in items):
        return list(read_measurements(items))
    raise ValueError("measurements: give Measurement rows or measurement file paths")
