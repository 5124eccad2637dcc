"""`operators`: one forward step of a decoder LLM as a table, one row per operator.

Each row is one operator of one layer (identical layers grouped, with their range and count) or
of the step (embedding, final norm, LM head), with its FLOPs, bytes (weights, KV cache,
activations) and its own roofline on one device (docs/model.md, "Serving model"). The step
time of `engine.serve` is Σ total_time_ms: the operators, communication rows when the step
spans several devices, and one row of fixed overhead (per-layer and dispatch).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from engine.arrays import SCALAR
from engine.catalog.arch import layer_windows
from engine.catalog.shapes import shapes_of
from engine.checks import MAX_BATCH, MAX_SEQUENCE, check_whole
from engine.serving import inputs as si
from engine.serving import parallel
from engine.serving.kernel import Device, rates
from engine.serving.operators import OP_CLASSES, kv_read_factor, step_ops

if TYPE_CHECKING:
    import pandas as pd

PHASES = ("decode", "prefill")
NAN = float("nan")


def _span(indices: list[int]) -> str:
    """'0–31' for a contiguous run, '5' for one layer, '21 layers of 0–41' otherwise."""
    if not indices:
        return ""
    lo, hi = indices[0], indices[-1]
    if hi - lo + 1 == len(indices):
        return f"{lo}–{hi}" if hi > lo else str(lo)
    return f"{len(indices)} layers of 0–{hi}"


def layer_labels(arch) -> dict[str, str]:
    """Which layers carry each group of operators, as text."""
    every = list(range(arch.layers))
    moe = arch.layers - arch.dense_layers if arch.experts else 0
    windows = layer_windows(arch)
    return {
        "all": _span(every),
        "dense": _span(every[: arch.layers - moe]),
        "moe": _span(every[arch.layers - moe :]),
        "global": _span([i for i in every if windows[i] is None]),
        "local": _span([i for i in every if windows[i] is not None]),
        "once": "step",
    }


def _row(op, dev: Device, rates_of: tuple, context: float, label: str, kv_factor: float) -> dict:
    peak_of, rate_of = rates_of
    x = min(context, op.window)
    flops = op.flop + op.flop_per_context * x
    kv = op.kv_write_bytes + op.kv_bytes_per_context * kv_factor * x  # decode reads (GQA)
    moved = op.weight_bytes + op.act_bytes + kv
    t_c = flops / rate_of[op.cls]
    t_m = moved / dev.bandwidth
    return {
        "name": op.name,
        "layer": label,
        "count": int(op.count),
        "op_class": op.cls,
        "flops": flops,
        "bytes": moved,
        "weight_bytes": op.weight_bytes,
        "kv_bytes": kv,
        "activation_bytes": op.act_bytes,
        "t_compute_ms": t_c * 1e3,
        "t_memory_ms": t_m * 1e3,
        "time_ms": max(t_c, t_m) * 1e3,
        "total_time_ms": op.count * max(t_c, t_m) * 1e3,
        "bottleneck": "compute" if t_c > t_m else "memory",
        "arithmetic_intensity_flop_per_byte": flops / moved if moved else float("nan"),
        "peak_flop_per_s": peak_of[op.cls],  # the datasheet roof of its class
        "achievable_flop_per_s": rate_of[op.cls],  # × its efficiency
        "achievable_bytes_per_s": dev.bandwidth,  # the bandwidth × its efficiency
    }


def _extra_rows(s, dev: Device, step: tuple, tp: int, pp: int, ba, label: str) -> list[dict]:
    """Communication (the all-reduces of each layer, stage-to-stage sends) and the step's
    overhead (per layer, per call and per sequence), so that Σ total_time_ms is the step time.
    `step` is (new tokens, sequences, phase)."""
    tokens, sequences, phase = step
    nbytes = tokens * s.hidden * ba
    rows = []
    if tp > 1:
        per_layer = parallel.all_reduces_per_layer(s, SCALAR)  # 1 with parallel attention
        t = per_layer * parallel.ring_all_reduce_s(nbytes, tp, dev.link_bw, dev.link_lat)
        moved = per_layer * nbytes
        rows.append(("all_reduce", label, int(s.layers), moved, t, "communication"))
    if pp > 1:
        t = parallel.send_s(nbytes, dev.link_bw, dev.link_lat)
        rows.append(("stage_send", "between stages", pp - 1, nbytes, t, "communication"))
    tau = dev.tau_prefill if phase == "prefill" else dev.tau
    overhead = s.layers * tau + dev.dispatch + dev.seq_overhead * sequences
    rows.append(("overhead", "step", 1, 0.0, overhead, "overhead"))
    return [
        {"name": n, "layer": g, "count": c, "op_class": k, "flops": 0.0,
         "bytes": b, "weight_bytes": 0.0, "kv_bytes": 0.0, "activation_bytes": b,
         "t_compute_ms": 0.0, "t_memory_ms": 0.0, "time_ms": t * 1e3,
         "total_time_ms": c * t * 1e3, "bottleneck": k,
         "arithmetic_intensity_flop_per_byte": 0.0, "peak_flop_per_s": NAN,
         "achievable_flop_per_s": NAN, "achievable_bytes_per_s": NAN}
        for n, g, c, b, t, k in rows
    ]  # fmt: skip


def operators(
    model,
    hardware,
    *,
    phase: str = "decode",
    batch_size: int = 1,
    context: int,
    tp: int = 1,
    pp: int = 1,
    precision: str = "fp16",
    kv_precision: str | None = None,
    assumptions=None,
    catalog=None,
    **overrides: object,
) -> pd.DataFrame:
    """The operators of one forward step on one device, one row per operator group.

    Args:
        model, hardware: as for `serve` (ids or specs; the model needs shapes).
        phase: "decode" (batch_size new tokens at `context`) or "prefill" (prompts of `context`).
        batch_size, context: sequences, tokens per sequence; tp, pp: parallel degrees.
        precision, kv_precision, assumptions, catalog, **overrides: as for `serve`.
    """
    import pandas as pd

    if phase not in PHASES:
        raise ValueError(f"phase must be one of {', '.join(PHASES)}, got {phase!r}")
    st = si.setup(precision, kv_precision, assumptions, "tutorial", overrides)
    _, arch, hw, tp, pp = si.placement(model, hardware, tp, pp, catalog)
    b = check_whole(batch_size, "batch_size", high=MAX_BATCH)
    c = check_whole(context, "context", high=MAX_SEQUENCE)  # a decode step reaches I + O
    dev, used = si.device_values(hw, st.precision, st.assumptions)
    lay = si.layout(tp, pp, st.precision, st.kv_precision)
    s = shapes_of(arch)
    tokens = float(b * c if phase == "prefill" else b)
    prompt = float(c) if phase == "prefill" else None
    step = step_ops(s, lay, T=tokens, B=float(b), xp=SCALAR, prefill_tokens=prompt)
    eta = si.efficiencies(st.assumptions, used)
    labels, rate_of = layer_labels(arch), rates(dev, eta)
    peak_of = rates(dev, eta._replace(**dict.fromkeys(OP_CLASSES, 1.0)))
    factor = kv_read_factor(s, float(tp), eta.kv_reuse, SCALAR) if phase == "decode" else 1.0
    both = (peak_of, rate_of)
    rows = [_row(op, dev, both, float(c), labels[op.layers], factor) for op in step if op.count]
    extra = _extra_rows(s, dev, (tokens, float(b), phase), tp, pp, lay.act_bytes, labels["all"])
    return pd.DataFrame(rows + extra)
