"""Vectorised sweeps: the cartesian product of models × accelerators × precisions × batches.

All scenarios are evaluated at once with numpy broadcasting through the same kernel as the
scalar solve (`roofline_terms`), then returned as one tidy DataFrame whose column names carry
their units and match the CLI's JSON keys. No per-row Python loop and no pint here.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from engine.api import check_batches, make_assumptions, resolve_hardware, resolve_model
from engine.catalog import Catalog
from engine.roofline import fallback_warning, roofline_terms
from engine.specs import BYTES_PER_PARAM, Assumptions, HardwareSpec, ModelSpec, check_precision

if TYPE_CHECKING:  # pandas is imported on first sweep, not with `import engine` (0.5 s)
    import pandas as pd

MAX_SWEEP_ROWS = 2_000_000  # refused before any work: about 1 GB of DataFrame
GROUP = ["model", "hardware", "precision"]


def as_list(value, name: str) -> list:
    """One value or an iterable of them, as a non-empty list (ValueError when empty)."""
    single = isinstance(value, str | ModelSpec | HardwareSpec) or not isinstance(value, Iterable)
    items = [value] if single else list(value)  # one value (a batch of 4, None, ...) or a list
    if not items:
        raise ValueError(f"{name}: give at least one")
    return items


def categorical(codes: np.ndarray, labels: Sequence[str]) -> pd.Categorical:
    """A categorical column from integer codes into `labels` (labels may repeat)."""
    unique = list(dict.fromkeys(labels))
    remap = np.array([unique.index(label) for label in labels], dtype=np.int32)
    import pandas as pd

    return pd.Categorical.from_codes(remap[codes], categories=unique)


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
        with the assumptions flattened into columns and the warnings as text.
    """
    ms = [resolve_model(m, catalog) for m in as_list(models, "models")]
    hs = [resolve_hardware(h, catalog) for h in as_list(hardware, "hardware")]
    ps = [check_precision(p) for p in as_list(precisions, "precisions")]
    batches = check_batches(as_list(batch_sizes, "batch_sizes"))
    rows = len(ms) * len(hs) * len(ps) * len(batches)
    if rows > MAX_SWEEP_ROWS:
        raise ValueError(f"sweep of {rows:,} scenarios is over the limit of {MAX_SWEEP_ROWS:,}")
    a = make_assumptions(assumptions, **overrides)

    # Per-axis arrays, shaped to broadcast to (model, hardware, precision, batch).
    params = np.array([m.params for m in ms])[:, None, None, None]
    flops_1 = np.array([m.flops_for(a.flop_convention) for m in ms])[:, None, None, None]
    layers = np.array([m.layers for m in ms], float)[:, None, None, None]
    peaks_used = [[h.peak_for(p) for p in ps] for h in hs]
    peak = np.array([[pk for pk, _ in row] for row in peaks_used])[None, :, :, None]
    bw = np.array([h.memory_bandwidth_bytes_per_s for h in hs])[None, :, None, None]
    cap = np.array([h.memory_capacity_bytes for h in hs])[None, :, None, None]
    tdp = np.array([h.tdp_w for h in hs])[None, :, None, None]
    dispatch = np.array(
        [
            h.dispatch_overhead_s if a.dispatch_overhead_s is None else a.dispatch_overhead_s
            for h in hs
        ]
    )[None, :, None, None]
    b_param = np.array([BYTES_PER_PARAM[p] for p in ps])[None, None, :, None]
    batch = batches[None, None, None, :]

    shape = (len(ms), len(hs), len(ps), len(batches))
    weight_bytes = params * b_param
    flops = flops_1 * batch
    bytes_moved = weight_bytes * (1 + a.activation_fraction * batch)
    overhead = dispatch + layers * a.layer_overhead_s
    r = roofline_terms(
        flops=flops,
        bytes_moved=bytes_moved,
        peak=peak,
        bandwidth=bw,
        efficiency=a.efficiency,
        overhead_s=overhead,
        tdp_w=tdp,
    )

    def col(x) -> np.ndarray:
        return np.broadcast_to(x, shape).ravel()

    mi, hi, pi, bi = (ix.ravel() for ix in np.indices(shape))
    hp = hi * len(ps) + pi  # (hardware, precision) pair index
    used = [u for row in peaks_used for _, u in row]
    warns = [
        fallback_warning(h, p, peaks_used[i][j][1]) or ""
        for i, h in enumerate(hs)
        for j, p in enumerate(ps)
    ]
    latency = col(r["latency_s"])
    import pandas as pd

    df = pd.DataFrame(
        {
            "model": categorical(mi, [m.id for m in ms]),
            "hardware": categorical(hi, [h.id for h in hs]),
            "batch_size": batches.astype(np.int64)[bi],
            "precision": categorical(pi, ps),
            "peak_precision": categorical(hp, used),
            "bottleneck": categorical(
                col(r["compute_bound"]).astype(np.int8), ["memory", "compute"]
            ),
            "latency_ms": latency * 1e3,
            "t_compute_ms": col(r["t_compute_s"]) * 1e3,
            "t_memory_ms": col(r["t_memory_s"]) * 1e3,
            "t_overhead_ms": col(overhead) * 1e3,
            "overhead_share": col(overhead) / latency,
            "throughput_per_s": batches[bi] / latency,
            "flops": col(flops),
            "bytes": col(bytes_moved),
            "arithmetic_intensity_flop_per_byte": col(r["intensity"]),
            "ridge_flop_per_byte": col(r["ridge"]),
            "effective_ridge_flop_per_byte": col(r["ridge_eff"]),
            "peak_tflops": col(peak) / 1e12,
            "attainable_tflops": col(r["attainable"]) / 1e12,
            "achieved_tflops": col(r["achieved"]) / 1e12,
            "mfu": col(r["mfu"]),
            "energy_j": col(r["energy_j"]),
            "weight_bytes": col(weight_bytes),
            "memory_capacity_bytes": col(cap),
            "fits_in_memory": col(weight_bytes <= cap),
            "sample": categorical(mi, [m.sample for m in ms]),
            "efficiency": a.efficiency,
            "layer_overhead_us": a.layer_overhead_s * 1e6,
            "dispatch_overhead_ms": col(dispatch) * 1e3,
            "activation_fraction": a.activation_fraction,
            "flop_convention": a.flop_convention,
            "warnings": categorical(hp, warns),
        }
    )
    df["overhead_gap_tflops"] = df["attainable_tflops"] - df["achieved_tflops"]
    return df


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
