"""Predict measurement rows with the serving model, vectorised over the rows.

Each row is its own scenario (model, accelerator, TP/PP, batch, tokens, precision), so this is
not a grid: the rows are resolved and checked once (`plan_rows`), their operator lists built
once on numpy arrays, and then `evaluate` runs the serving model's kernel on all rows at once
for any assumptions, which is what a least-squares fit needs (a few hundred evaluations). The
numbers are those of `engine.serve` row by row (a test checks it); see docs/model.md
("Serving model", "Accuracy").

A row measured under load (no batch: N closed-loop clients or a max-throughput run) is
predicted on the same folded arrays by the load model's fast path (engine/load/analytic.py:
`closed_loop` in lockstep, as fixed-length benchmark clients move, or `max_throughput`) with
the scheduler of the profile the rows are predicted under (engine/catalog/scheduler.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from engine.accuracy.measurements import Measurement
from engine.assumptions import DEFAULTS, Assumptions
from engine.catalog.formats import check_kv_format, number_format
from engine.catalog.reader import Catalog
from engine.catalog.resolve import default_catalog, resolve_model
from engine.catalog.scheduler import DEFAULT_SCHEDULER, SchedulerDefaults
from engine.catalog.shapes import Shapes, shapes_of
from engine.load import analytic as load_analytic
from engine.load.grid import limits
from engine.serving import inputs as si
from engine.serving.kernel import Device, Efficiencies, fold
from engine.serving.kernel import evaluate as evaluate_folded
from engine.serving.operators import Layout, step_lists

# metric -> (the kernel's SI term, scale to the metric's unit)
TERMS = {
    "output_tokens_per_s_per_gpu": ("output_tokens_per_s_per_gpu", 1.0),
    "ttft_ms": ("ttft_s", 1e3),
    "tpot_ms": ("tpot_s", 1e3),
    "e2e_latency_ms": ("e2e_latency_s", 1e3),
}
MEMORY_KEYS = ("memory_per_device_bytes", "usable_memory_bytes", "memory_capacity_bytes")


@dataclass(frozen=True)
class RowPlan:
    """The rows resolved once: which can be predicted (and why not), and their arrays."""

    rows: int
    index: np.ndarray  # positions of the predictable rows
    reasons: tuple[str | None, ...]  # per row: None, or why the model cannot express it
    s: Shapes | None  # shapes, one value per predictable row (None: no such row)
    lay: Layout | None  # TP, PP and element sizes, one value per predictable row
    request: tuple  # (batch, input tokens, output tokens), one array each
    steps: tuple  # operator lists on those arrays (assumption-free)
    groups: tuple  # distinct (HardwareSpec, precision) pairs
    group_of: np.ndarray  # each predictable row's group
    metrics: tuple[str, ...]
    clients: np.ndarray  # per predictable row: NaN for a static batch, 0 for max, else N
    scheduler: SchedulerDefaults = DEFAULT_SCHEDULER
    # the expert imbalance and grouped-GEMM waste the layouts and steps were made with
    moe: tuple[float, float] = (DEFAULTS.expert_imbalance, DEFAULTS.grouped_gemm_tokens)


def _resolve(m: Measurement, catalog: Catalog):
    number_format(m.precision)  # a format the model does not compute (fp6): skipped
    check_kv_format(m.kv_precision, None)
    model = resolve_model(m.model, catalog)
    placed = si.placement(
        model=model, hardware=m.hardware, tp=m.tp, pp=m.pp, catalog=catalog, split=_split(m)
    )  # name, arch, hw, tp, pp
    return placed[1], placed[2]


def _split(m: Measurement) -> si.Split:
    """The row's MoE layout: its expert-parallel ranks and attention DP (neither: a dense split)."""
    return si.Split(ep=m.ep, attention_dp=m.attention_dp)


def _clients(m: Measurement) -> float:
    if m.batch_size is not None:
        return np.nan
    return 0.0 if m.concurrency == "max" else float(m.concurrency)


def plan_rows(
    rows: Sequence[Measurement],
    catalog: Catalog | None = None,
    scheduler: SchedulerDefaults | None = None,
) -> RowPlan:
    """Resolve every row's model and accelerator and check its split, once (`scheduler`: the
    one rows under load are predicted with; vLLM's defaults if None)."""
    catalog = catalog or default_catalog()
    reasons, keep, found = [], [], []
    for i, m in enumerate(rows):
        try:
            found.append(_resolve(m, catalog))
        except (KeyError, ValueError) as exc:
            reasons.append(str(exc).strip('"'))
            continue
        reasons.append(None)
        keep.append(i)
    kept = [rows[i] for i in keep]
    s = Shapes.stack([shapes_of(arch) for arch, _ in found]) if kept else None
    lay = None
    if kept:
        layouts = [
            si.layout(
                tp=m.tp,
                pp=m.pp,
                precision=m.precision,
                kv_precision=m.kv_precision,
                split=_split(m),
            )
            for m in kept
        ]
        lay = Layout(*(np.array(column, dtype=float) for column in zip(*layouts, strict=True)))
    request = tuple(  # a row under load runs the static kernel at batch 1 (then replaced)
        np.array([float(getattr(m, attr) or 1) for m in kept])
        for attr in ("batch_size", "input_tokens", "output_tokens")
    )
    pairs = [(hw.id, m.precision) for (_, hw), m in zip(found, kept, strict=True)]
    unique = list(dict.fromkeys(pairs))
    specs = {hw.id: hw for _, hw in found}
    return RowPlan(
        rows=len(rows),
        index=np.array(keep, dtype=int),
        reasons=tuple(reasons),
        s=s,
        lay=lay,
        request=request,
        steps=step_lists(s, lay, np) if kept else ((), ()),
        groups=tuple((specs[h], p) for h, p in unique),
        group_of=np.array([unique.index(p) for p in pairs], dtype=int),
        metrics=tuple(m.metric for m in kept),
        clients=np.array([_clients(m) for m in kept]),
        scheduler=scheduler or DEFAULT_SCHEDULER,
    )


def evaluate(plan: RowPlan, a: Assumptions) -> dict[str, np.ndarray]:
    """The serving model on every predictable row under `a` (one value per row, NaN elsewhere).

    Returns:
        value (each row's metric, in its unit), fits (bool), memory_per_device_bytes,
        usable_memory_bytes and memory_capacity_bytes.
    """
    plan = _with_moe(plan, a)
    n = plan.rows
    out = {k: np.full(n, np.nan) for k in ("value", *MEMORY_KEYS)}
    out["fits"] = np.zeros(n, dtype=bool)
    if not plan.index.size:
        return out
    values = [
        si.format_values(hw=hw, precision=p, a=a, sched=plan.scheduler) for hw, p in plan.groups
    ]
    dev = Device(*(np.array(c)[plan.group_of] for c in zip(*(d for d, _ in values), strict=True)))
    etas = [si.efficiencies(a, used) for _, used in values]
    eta = Efficiencies(*(np.array(c)[plan.group_of] for c in zip(*etas, strict=True)))
    with np.errstate(all="ignore"):  # one-output-token rows have no decode step (NaN TPOT)
        folded = fold(s=plan.s, dev=dev, lay=plan.lay, eta=eta, xp=np, steps=plan.steps)
        t = evaluate_folded(folded, *plan.request, np)
    metric = np.array(plan.metrics)
    value = np.full(plan.index.size, np.nan)
    for name, (term, scale) in TERMS.items():
        value = np.where(metric == name, np.broadcast_to(t[term], value.shape) * scale, value)
    fits = np.broadcast_to(t["fits_in_memory"], value.shape)
    if np.isfinite(plan.clients).any():
        with np.errstate(all="ignore"):
            value, fits = _under_load(
                plan=plan, folded=folded, metric=metric, value=value, fits=fits
            )
    out["value"][plan.index] = value
    out["fits"][plan.index] = fits
    for key in MEMORY_KEYS:
        out[key][plan.index] = np.broadcast_to(t[key], value.shape)
    return out


def _with_moe(plan: RowPlan, a: Assumptions) -> RowPlan:
    """The plan with `a`'s expert imbalance and grouped-GEMM waste (its MoE operators remade
    when they differ from the plan's; a dense row does not read them)."""
    moe = (a.expert_imbalance, a.grouped_gemm_tokens)
    if plan.lay is None or moe == plan.moe:
        return plan
    lay = plan.lay._replace(
        imbalance=np.where(plan.lay.ep > 1, a.expert_imbalance, 1.0),
        expert_rows=np.full_like(plan.lay.tp, a.grouped_gemm_tokens),
    )
    return replace(plan, lay=lay, steps=step_lists(plan.s, lay, np), moe=moe)


# metric -> the load model's term, its scale to the metric's unit, and whether a max-throughput
# run defines it (its TTFT and e2e depend on how many requests were queued: not predicted).
LOAD_TERMS = {
    "output_tokens_per_s_per_gpu": ("output_tokens_per_s", 1.0, True),
    "ttft_ms": ("ttft_s_mean", 1e3, False),
    "tpot_ms": ("tpot_s_mean", 1e3, True),
    "e2e_latency_ms": ("e2e_latency_s_mean", 1e3, False),
}


def _under_load(plan: RowPlan, folded, metric, value, fits) -> tuple:
    """Rows under load: the closed loop (N clients) or max-throughput fast path; a row fits
    when the KV pool holds one whole request."""
    n_in, n_out = plan.request[1], plan.request[2]
    lim = limits(folded, plan.scheduler)
    closed = load_analytic.closed_loop(
        f=folded, lim=lim, clients=np.nan_to_num(plan.clients, nan=1.0), n_in=n_in, n_out=n_out
    )
    top = load_analytic.max_throughput(f=folded, lim=lim, n_in=n_in, n_out=n_out)
    load = np.isfinite(plan.clients)
    is_max = plan.clients == 0
    devices = plan.lay.tp * plan.lay.pp
    for name, (term, scale, in_max) in LOAD_TERMS.items():
        got = np.where(is_max, top.get(term, np.nan) if in_max else np.nan, closed[term]) * scale
        if name.endswith("per_gpu"):
            got = got / devices
        value = np.where(load & (metric == name), got, value)
    holds = np.asarray(lim.pool_tokens) >= n_in + n_out
    return value, np.where(load, holds & np.asarray(folded.usable > folded.weights), fits)
