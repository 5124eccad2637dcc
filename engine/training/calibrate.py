"""Fit a training profile to measured runs: least squares on log(predicted / measured).

The parameters are global and physical, each bounded to its range (FIT_BOUNDS): the GEMM and
attention efficiencies, the in-node link and network efficiencies, the overlap of
data-parallel communication with compute and the per-layer overhead; nothing per model or per
accelerator. The solver (scipy.optimize.least_squares, trust-region reflective, from a fixed
start) uses no randomness, so the same file gives the same profile. Besides the in-sample
errors the fit reports two out-of-sample ones: leave one row out (refit without it, predict
it) and leave one table out (fit Table 1 alone and predict Table 2, and the reverse). All are
recorded in the profile (docs/model.md, "Training step"; data/profiles/training/).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from engine.assumptions import Assumptions, make_assumptions
from engine.catalog.profiles import Profile, get_training_profile, today
from engine.training.measurements import (
    MEASUREMENTS_DIR,
    TrainingRun,
    predict,
    predict_many,
    read_runs,
)

if TYPE_CHECKING:
    import pandas as pd

FIT_BOUNDS = {
    "efficiency": (0.2, 1.0),  # GEMMs, as a fraction of the dense datasheet peak
    "attention_efficiency": (0.02, 1.0),
    "link_efficiency": (0.2, 1.0),  # NVLink, of the catalogued bandwidth per direction
    "network_efficiency": (0.2, 1.0),  # InfiniBand per GPU
    "overlap_fraction": (0.0, 1.0),
    # per layer per micro-batch per pass: about 20 kernel launches of ~5 µs in eager PyTorch
    "layer_overhead_us": (0.0, 100.0),
}
FIT_PARAMS = tuple(FIT_BOUNDS)
START = {
    "efficiency": 0.7,
    "attention_efficiency": 0.3,
    "link_efficiency": 0.8,
    "network_efficiency": 0.8,
    "overlap_fraction": 0.5,
    "layer_overhead_us": 20.0,
}
Predictor = Callable[[Sequence[TrainingRun], Assumptions], np.ndarray]


def _assumptions(x: np.ndarray) -> Assumptions:
    return make_assumptions(**{k: float(v) for k, v in zip(FIT_PARAMS, x, strict=True)})


def fit(runs: Sequence[TrainingRun], predictor: Predictor = predict) -> Assumptions:
    """The bounded least-squares fit of FIT_PARAMS to `runs` (log errors), from START."""
    from scipy.optimize import least_squares  # loaded by the first fit, not by `import engine`

    measured = np.log([r.value for r in runs])

    def residuals(x: np.ndarray) -> np.ndarray:
        return np.log(predictor(runs, _assumptions(x))) - measured

    def jacobian_points(_residuals, xs) -> list[np.ndarray]:
        """least_squares' `workers`: a finite-difference Jacobian's points in one kernel call
        per group of runs (`predict_many`: the residuals' numbers, to the last bit)."""
        return list(np.log(predict_many(runs, [_assumptions(x) for x in xs])) - measured)

    lower, upper = np.array([FIT_BOUNDS[p] for p in FIT_PARAMS]).T
    x0 = np.array([START[p] for p in FIT_PARAMS])
    result = least_squares(
        residuals,
        x0,
        bounds=(lower, upper),
        method="trf",
        x_scale="jac",
        diff_step=1e-4,
        xtol=1e-10,
        ftol=1e-10,
        max_nfev=500,
        workers=jacobian_points if predictor is predict else None,
    )
    return _assumptions(np.array([float(f"{v:.6g}") for v in result.x]))


def errors(runs: Sequence[TrainingRun], a: Assumptions, predictor: Predictor = predict):
    """predicted / measured − 1 for every run."""
    return predictor(runs, a) / np.array([r.value for r in runs]) - 1.0


def leave_one_out(
    runs: Sequence[TrainingRun],
    key: Callable[[TrainingRun], object],
    predictor: Predictor = predict,
) -> np.ndarray:
    """Each run's error when the fit leaves out every run sharing its `key` (a row, a table)."""
    out = np.full(len(runs), np.nan)
    for group in dict.fromkeys(key(r) for r in runs):
        held = [i for i, r in enumerate(runs) if key(r) == group]
        kept = [r for r in runs if key(r) != group]
        a = fit(kept, predictor)
        out[held] = errors([runs[i] for i in held], a, predictor)
    return out


def _summary(prefix: str, e: np.ndarray) -> dict[str, float]:
    pct = 100.0 * np.abs(e)
    return {
        f"{prefix}mape_pct": float(pct.mean()),
        f"{prefix}median_ape_pct": float(np.median(pct)),
        f"{prefix}max_ape_pct": float(pct.max()),
    }


def calibrate(
    runs: Sequence[TrainingRun],
    *,
    name: str = "megatron",
    command: str = "",
    predictor: Predictor = predict,
) -> Profile:
    """A training profile fitted on `runs`, with its in-sample and leave-one-out errors and
    every run's residual (worst first) recorded."""
    runs = list(runs)
    if len(runs) < len(FIT_PARAMS) + 2:
        raise ValueError(
            f"a fit of {len(FIT_PARAMS)} parameters needs at least "
            f"{len(FIT_PARAMS) + 2} runs, got {len(runs)}"
        )
    a = fit(runs, predictor)
    e = errors(runs, a, predictor)
    loo_row = leave_one_out(runs, lambda r: (r.file, r.row), predictor)
    loo_table = leave_one_out(runs, lambda r: (r.file, r.table), predictor)
    residuals = _summary("", e) | _summary("loo_row_", loo_row) | _summary("loo_table_", loo_table)
    order = np.argsort(-np.abs(e))
    rows = tuple(
        f"{runs[i].file} row {runs[i].row}: {runs[i].describe()}: measured "
        f"{runs[i].value:g}, predicted {runs[i].value * (1 + e[i]):.1f} ({e[i]:+.1%}; "
        f"left out {loo_row[i]:+.1%})"
        for i in order
    )
    files = tuple(dict.fromkeys(r.file for r in runs))
    return Profile(
        name=name,
        assumptions=replace(a),
        kind="training",
        command=command,
        description=f"fitted on {len(runs)} measured training runs ({', '.join(files)})",
        fitted_on=files,
        rows=len(runs),
        fitted_at=today(),
        residuals=residuals,
        worst=rows,
        origin="fitted",
    )


UNITS = {  # measured metric -> its unit
    "tflops_per_gpu": "TFLOP/s per GPU",
    "tokens_per_s_per_gpu": "tokens/s per GPU",
}


def fit_rows(profile: Profile | str | None = None) -> pd.DataFrame:
    """The runs a training profile was fitted on (its `fitted_on` files, shipped in
    data/measurements/training/), each with the measured and the predicted metric and the
    in-sample error (predicted / measured − 1, in %); what the row left out and the model
    assumed is in `filled`."""
    import pandas as pd  # loaded on first use, keeping `import engine` fast

    profile = get_training_profile(profile)
    runs = [r for f in profile.fitted_on for r in read_runs(MEASUREMENTS_DIR / Path(f).name)]
    predicted = predict(runs, profile.assumptions)
    rows = [
        {
            "file": r.file,
            "row": r.row,
            "table": r.table,
            "scheme": r.scheme,
            "hardware": r.hardware,
            "precision": r.precision,
            "layers": r.arch.layers,
            "hidden": r.arch.hidden,
            "gpus": r.gpus,
            "tp": r.tp,
            "pp": r.pp,
            "vp": r.vp,
            "micro_batch_size": r.micro_batch,
            "global_batch_size": r.global_batch,
            "seq_len": r.seq_len,
            "zero": r.zero,
            "recompute": r.recompute,
            "metric": r.metric,
            "unit": UNITS.get(r.metric, ""),
            "measured": r.value,
            "predicted": float(p),
            "error_pct": (float(p) / r.value - 1.0) * 100.0,
            "filled": r.filled,
        }
        for r, p in zip(runs, predicted, strict=True)
    ]
    return pd.DataFrame(rows)
