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
from dataclasses import dataclass, field, replace

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
    # k -> the plan's rows repeated k times (`tile`), made once per k
    tiles: dict = field(default_factory=dict, compare=False, repr=False)


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
    return {key: column[0] for key, column in evaluate_many(plan, (a,)).items()}


def evaluate_many(plan: RowPlan, many: Sequence[Assumptions]) -> dict[str, np.ndarray]:
    """`evaluate` under each of `many` at once: every output has one line per assumptions
    (shape: len(many) × rows). The rows are repeated once per assumptions and run through the
    model in one vectorised pass; each row's arithmetic is elementwise, so each line equals
    `evaluate(plan, a)` exactly (what a fit's finite-difference Jacobian needs, a few hundred
    times, in one call per Jacobian)."""
    k, n = len(many), plan.rows
    out = {key: np.full((k, n), np.nan) for key in ("value", *MEMORY_KEYS)}
    out["fits"] = np.zeros((k, n), dtype=bool)
    if not plan.index.size:
        return out
    tiled = _with_moe(tile(plan, k), many)
    values = [
        si.format_values(hw=hw, precision=p, a=a, sched=plan.scheduler)
        for a in many
        for hw, p in plan.groups
    ]
    dev = Device(*(np.array(c)[tiled.group_of] for c in zip(*(d for d, _ in values), strict=True)))
    per_group = [a for a in many for _ in plan.groups]
    etas = [si.efficiencies(a, used) for a, (_, used) in zip(per_group, values, strict=True)]
    eta = Efficiencies(*(np.array(c)[tiled.group_of] for c in zip(*etas, strict=True)))
    with np.errstate(all="ignore"):  # one-output-token rows have no decode step (NaN TPOT)
        folded = fold(s=tiled.s, dev=dev, lay=tiled.lay, eta=eta, xp=np, steps=tiled.steps)
        t = evaluate_folded(folded, *tiled.request, np)
    metric = np.array(tiled.metrics)
    value = np.full(metric.size, np.nan)
    for name, (term, scale) in TERMS.items():
        value = np.where(metric == name, np.broadcast_to(t[term], value.shape) * scale, value)
    fits = np.broadcast_to(t["fits_in_memory"], value.shape)
    if np.isfinite(tiled.clients).any():
        with np.errstate(all="ignore"):
            value, fits = _under_load(
                plan=tiled, folded=folded, metric=metric, value=value, fits=fits
            )
    out["value"][:, plan.index] = value.reshape(k, -1)
    out["fits"][:, plan.index] = fits.reshape(k, -1)
    for key in MEMORY_KEYS:
        out[key][:, plan.index] = np.broadcast_to(t[key], value.shape).reshape(k, -1)
    return out


def tile(plan: RowPlan, k: int) -> RowPlan:
    """The plan's predictable rows repeated `k` times, one block per assumptions; the groups
    likewise (block i's rows point to groups i·G … i·G + G − 1)."""
    if k == 1 or not plan.index.size:
        return plan
    if k not in plan.tiles:
        s = plan.s.map(lambda v: np.tile(v, k))
        lay = Layout(*(np.tile(v, k) for v in plan.lay))
        plan.tiles[k] = replace(
            plan,
            s=s,
            lay=lay,
            request=tuple(np.tile(r, k) for r in plan.request),
            steps=step_lists(s, lay, np),
            group_of=np.concatenate([plan.group_of + i * len(plan.groups) for i in range(k)]),
            metrics=plan.metrics * k,
            clients=np.tile(plan.clients, k),
            tiles={},
        )
    return plan.tiles[k]


def _with_moe(plan: RowPlan, many: Sequence[Assumptions]) -> RowPlan:
    """The plan (its rows in len(many) equal blocks) with each block's expert imbalance and
    grouped-GEMM waste, its MoE operators remade when they differ from the plan's (a dense row
    does not read them)."""
    moe = [(a.expert_imbalance, a.grouped_gemm_tokens) for a in many]
    if plan.lay is None or all(m == plan.moe for m in moe):
        return plan
    per_row = np.repeat(np.array(moe, dtype=float), plan.lay.tp.size // len(many), axis=0)
    lay = plan.lay._replace(
        imbalance=np.where(plan.lay.ep > 1, per_row[:, 0], 1.0),
        expert_rows=per_row[:, 1] + np.zeros_like(plan.lay.tp),
    )
    return replace(plan, lay=lay, steps=step_lists(plan.s, lay, np), moe=moe[0], tiles={})


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
    lim = limits(folded, plan.scheduler, stages=plan.lay.pp)  # a batch in flight per stage
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
