"""Vectorised sweeps: the cartesian product of models × accelerators × precisions × batches.

All scenarios are evaluated at once with numpy broadcasting through the same workload function
as the scalar solve (`engine.roofline.solve.solve_terms`) and mapped to columns by the same table
(`engine.report.columns.SOLVE_COLUMNS`), so a row equals `solve(...).as_dict()` with the assumptions
flattened. No per-row Python loop and no pint here. Also the exact crossover batch
(`compute_bound_batch`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from engine.assumptions import Assumptions, make_assumptions
from engine.catalog.reader import Catalog
from engine.catalog.resolve import resolve_hardware, resolve_model
from engine.catalog.specs import BYTES_PER_PARAM, HardwareSpec, ModelSpec, check_precision
from engine.checks import MAX_BATCH, as_list, check_whole_numbers
from engine.report.columns import assumption_values, display
from engine.report.frames import categorical
from engine.roofline.solve import REGIMES, dispatch_s, fallback_warning, regime_codes, solve_terms

if TYPE_CHECKING:  # pandas is imported on first sweep, not with `import engine` (0.5 s)
    import pandas as pd

MAX_SWEEP_ROWS = 2_000_000  # refused before any work: about 1 GB of DataFrame
GROUP = ["model", "hardware", "precision"]


def sweep(
    models,
    hardware,
    batch_sizes,
    precisions=("fp16",),
    *,
    catalog: Catalog | None = None,
    assumptions: Assumptions | None = None,
    **overrides: object,
) -> pd.DataFrame:
    """Evaluate every combination; one row per scenario, same numbers as `solve`.

    Args:
        models, hardware: ids or specs (one, or a list of them).
        batch_sizes: whole numbers >= 1.
        precisions: one precision name or a list of them.
        catalog, assumptions, **overrides: as for `engine.solve`.

    Returns:
        Rows ordered model, hardware, precision, then batch; columns as `SolveResult.as_dict`
        with the assumptions flattened into columns and each row's warnings a tuple of
        Messages (engine.to_csv and engine.records write their English).
    """
    ms = [resolve_model(m, catalog) for m in as_list(models, "models")]
    hs = [resolve_hardware(h, catalog) for h in as_list(hardware, "hardware")]
    ps = [check_precision(p) for p in as_list(precisions, "precisions")]
    batches = check_whole_numbers(as_list(batch_sizes, "batch_sizes"), "batch_size", high=MAX_BATCH)
    rows = len(ms) * len(hs) * len(ps) * len(batches)
    if rows > MAX_SWEEP_ROWS:
        raise ValueError(f"sweep of {rows:,} scenarios is over the limit of {MAX_SWEEP_ROWS:,}")
    a = make_assumptions(assumptions, **overrides)
    shape = (len(ms), len(hs), len(ps), len(batches))
    r, peaks_used = _grid_terms(ms=ms, hs=hs, ps=ps, batches=batches, a=a)

    def col(x) -> np.ndarray:
        return np.broadcast_to(x, shape).ravel()

    mi, hi, pi, bi = (ix.ravel() for ix in np.indices(shape))
    hp = hi * len(ps) + pi  # (hardware, precision) pair index
    used = [u for row in peaks_used for _, u in row]
    warns = [  # each pair's warnings: the fallback or none
        tuple(filter(None, [fallback_warning(h, p, peaks_used[i][j][1])]))
        for i, h in enumerate(hs)
        for j, p in enumerate(ps)
    ]
    compute, overhead = col(r.pop("compute_bound")), col(r.pop("overhead_bound"))
    echoed = assumption_values(a)
    echoed["dispatch_overhead_ms"] = col(r.pop("dispatch_s")) * 1e3
    ids = {
        "model": categorical(mi, [m.id for m in ms]),
        "hardware": categorical(hi, [h.id for h in hs]),
        "batch_size": batches.astype(np.int64)[bi],
        "precision": categorical(pi, ps),
        "peak_precision": categorical(hp, used),
        "bottleneck": categorical(compute.astype(np.int8), ["memory", "compute"]),
        "regime": categorical(regime_codes(compute, overhead), REGIMES),
    }
    rest = {
        "fits_in_memory": col(r["fits_in_memory"]),
        "sample": categorical(mi, [m.sample for m in ms]),
        **echoed,
        "warnings": categorical(hp, warns),
    }
    import pandas as pd

    return pd.DataFrame(ids | {k: col(v) for k, v in display(r).items()} | rest)


def _grid_terms(ms, hs, ps, batches, a: Assumptions) -> tuple[dict, list]:
    """`solve_terms` over (model, hardware, precision, batch) by broadcasting per-axis arrays."""

    def axis(values, i: int) -> np.ndarray:
        shape = [1, 1, 1, 1]
        shape[i] = len(values)
        return np.asarray(values, dtype=float).reshape(shape)

    peaks_used = [[h.peak_for(p) for p in ps] for h in hs]
    model_in = {
        "params": axis([m.params for m in ms], 0),
        "flops_per_sample": axis([m.flops_for(a.flop_convention) for m in ms], 0),
        "layers": axis([m.layers for m in ms], 0),
        "bytes_per_param": axis([BYTES_PER_PARAM[p] for p in ps], 2),
    }
    hw_in = {
        "peak": np.array([[pk for pk, _ in row] for row in peaks_used])[None, :, :, None],
        "bandwidth": axis([h.memory_bandwidth_bytes_per_s for h in hs], 1),
        "capacity": axis([h.memory_capacity_bytes for h in hs], 1),
        "dispatch_s": axis([dispatch_s(h, a) for h in hs], 1),
        "tdp_w": axis([h.tdp_w for h in hs], 1),
    }
    r = solve_terms(model=model_in, hw=hw_in, batch=axis(batches, 3), a=a)
    r["dispatch_s"] = hw_in["dispatch_s"]
    return r, peaks_used


def compute_bound_batch(
    model: str | ModelSpec,
    hardware: str | HardwareSpec,
    *,
    precision: str = "fp16",
    catalog: Catalog | None = None,
    assumptions: Assumptions | None = None,
    **overrides: object,
) -> int | None:
    """The smallest whole batch at which the single-model solve is compute-bound.

    From the closed form (docs/model.md, "Crossover batch"): t_compute > t_memory exactly
    when B·(F/(Π·η) − W·α/β) > W/β, so the crossover is floor(W/β ÷ slope) + 1 when the slope
    is positive; the result is checked against the solve's own comparison, one batch either
    side, so `solve(..., batch_size=n).bottleneck` is "compute" from n on and "memory" below.

    Args:
        model, hardware: catalogue ids or specs. precision, catalog, assumptions,
            **overrides: as for `engine.solve`.

    Returns:
        The batch (1 to MAX_BATCH), or None when no batch up to MAX_BATCH is compute-bound.
    """
    m, h = resolve_model(model, catalog), resolve_hardware(hardware, catalog)
    p = check_precision(precision)
    a = make_assumptions(assumptions, **overrides)
    b = compute_bound_batches(
        flops_per_sample=m.flops_for(a.flop_convention),
        weight_bytes=m.params * BYTES_PER_PARAM[p],
        peak=h.peak_for(p)[0],
        bandwidth=h.memory_bandwidth_bytes_per_s,
        a=a,
    )
    return None if np.isnan(b) else int(b)


def compute_bound_batches(flops_per_sample, weight_bytes, peak, bandwidth, a: Assumptions):
    """Vectorised crossover batch (floats or arrays); NaN where none is <= MAX_BATCH."""

    def compute_bound(batch):  # the very comparison `roofline_terms` makes, term by term
        t_compute = flops_per_sample * batch / (peak * a.efficiency)
        return t_compute > weight_bytes * (1 + a.activation_fraction * batch) / bandwidth

    per_sample_compute = flops_per_sample / (peak * a.efficiency)
    slope = np.asarray(per_sample_compute - weight_bytes * a.activation_fraction / bandwidth, float)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        b = np.where(slope > 0, np.floor(weight_bytes / bandwidth / slope) + 1, np.inf)
    b = np.clip(b, 1, MAX_BATCH + 1)  # past MAX_BATCH is "never"; the check below needs finite
    b = np.where((b > 1) & compute_bound(b - 1), b - 1, b)  # rounding: one step either way
    b = np.where(compute_bound(b), b, b + 1)
    return np.where(b <= MAX_BATCH, b, np.nan)


def crossover_batch(df: pd.DataFrame) -> pd.DataFrame:
    """Per model × hardware × precision, the first batch whose solve is compute-bound.

    Returns:
        Columns model, hardware, precision, crossover_batch (<NA> when no batch in the sweep is
        compute-bound).
    """
    ordered = df.sort_values([*GROUP, "batch_size"])
    compute = ordered[ordered["bottleneck"] == "compute"]
    first = compute.groupby(GROUP, observed=True, sort=False)["batch_size"].min()
    keys = ordered[GROUP].drop_duplicates()
    out = keys.merge(first.rename("crossover_batch").reset_index(), on=GROUP, how="left")
    out["crossover_batch"] = out["crossover_batch"].astype("Int64")
    return out.reset_index(drop=True)


def marginal_gain(df: pd.DataFrame) -> pd.DataFrame:
    """Add `marginal_throughput_gain_pct`: throughput change from the previous batch, in %.

    The first batch of each model × hardware × precision group has <NA>.
    """
    out = df.sort_values([*GROUP, "batch_size"]).copy()
    previous = out.groupby(GROUP, observed=True, sort=False)["throughput_per_s"].shift(1)
    out["marginal_throughput_gain_pct"] = (out["throughput_per_s"] / previous - 1) * 100
    return out
