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
from engine.scenarios.bind import bind
from engine.scenarios.deployment import Deployment, HardwareRef, ModelRef
from engine.serving import inputs as si
from engine.serving import parallel
from engine.serving.collectives import all_reduce_s, send_s
from engine.serving.decode_step import operator_s
from engine.serving.kernel import Device, fabric_of, rates
from engine.serving.operators import OP_CLASSES, Layout, step_ops

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


def _row(op, dev: Device, rates_of: tuple, context: float, label: str, kv_efficiency) -> dict:
    """One operator's row; decode attention reads the KV that exists at `kv_efficiency` of the
    achieved bandwidth (1 elsewhere)."""
    peak_of, rate_of = rates_of
    x = min(context, op.window)
    flops = op.flop + op.flop_per_context * x
    reads = op.kv_bytes_per_context * x  # each KV head once
    kv = op.kv_write_bytes + reads
    moved = op.weight_bytes + op.act_bytes + kv
    # slower KV reads, and weights at the bandwidth this accelerator's GEMMs stream them
    # (kernel.Device.kernel_bandwidth), as bytes at the achieved bandwidth
    slower = reads * (1.0 / kv_efficiency - 1.0) + op.weight_bytes * (
        1.0 / dev.kernel_bandwidth - 1.0
    )
    at_full_bandwidth = moved + slower
    t_c, t_m, t = operator_s(  # a grouped GEMM's wasted rows take time, not work
        flop=flops + op.wasted_flop,
        moved_bytes=at_full_bandwidth,
        rate=rate_of[op.rate or op.cls],
        bandwidth=dev.bandwidth,
        xp=SCALAR,
    )
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
        "time_ms": t * 1e3,
        "total_time_ms": op.count * t * 1e3,
        "bottleneck": "compute" if t_c > t_m else "memory",
        "arithmetic_intensity_flop_per_byte": flops / moved if moved else float("nan"),
        "peak_flop_per_s": peak_of[op.rate or op.cls],  # the datasheet roof it runs on
        "achievable_flop_per_s": rate_of[op.rate or op.cls],  # × its efficiency
        "achievable_bytes_per_s": dev.bandwidth,  # the bandwidth × its efficiency
    }


def _comm_rows(s, dev: Device, lay: Layout, tokens, label: str, prefill: bool) -> list[tuple]:
    """The step's collectives (engine/serving/parallel.py `comm_of`) as rows (name, layers,
    count, bytes moved, seconds each, kind): a layer's all-reduces together, a MoE layer's
    dispatch and combine together (a prefill step's on DeepEP's normal kernels), the sends
    between stages (inside a node, across nodes)."""
    c = parallel.comm_of(s=s, lay=lay, fabric=fabric_of(dev), xp=SCALAR)
    f, rows = c.fabric, []
    if c.all_reduces and c.reduce_group > 1:
        per_layer = c.all_reduces / s.layers  # 1 with parallel attention
        nbytes = c.reduce_bytes * tokens
        t = per_layer * all_reduce_s(nbytes, c.reduce_group, f, xp=SCALAR)
        rows.append(("all_reduce", label, int(s.layers), per_layer * nbytes, t))
    if c.all_to_alls:
        nbytes = c.a2a_bytes * tokens
        t = 2.0 * parallel.all_to_all_step_s(c, tokens, SCALAR, prefill=prefill)
        rows.append(("dispatch_combine", label, int(s.moe_layers), 2.0 * nbytes, t))
    nbytes = c.send_bytes * tokens
    if c.sends > c.net_sends:
        t = send_s(nbytes, f.link_bw, f.link_lat)
        rows.append(("stage_send", "between stages", int(c.sends - c.net_sends), nbytes, t))
    if c.net_sends:
        t = send_s(nbytes, f.net_bw, f.net_lat)
        rows.append(("stage_send_network", "across nodes", int(c.net_sends), nbytes, t))
    return rows


def _extra_rows(s, dev: Device, step: tuple, lay: Layout, labels: dict) -> list[dict]:
    """Communication (`_comm_rows`) and the step's overhead (per layer, per call and per
    sequence), so that Σ total_time_ms is the step time. `step` is (new tokens, sequences,
    phase)."""
    tokens, sequences, phase = step
    moe = labels["moe"] or labels["all"]
    rows = [
        (*row, "communication")
        for row in _comm_rows(
            s=s, dev=dev, lay=lay, tokens=tokens, label=labels["all"], prefill=phase == "prefill"
        )
    ]
    rows = [(n, moe if n == "dispatch_combine" else g, c, b, t, k) for n, g, c, b, t, k in rows]
    tau = dev.tau_prefill if phase == "prefill" else dev.tau
    overhead = s.layers * tau + dev.dispatch + dev.seq_overhead * sequences
    rows.append(("overhead", "step", 1, 0.0, overhead, "overhead"))
    return [
        {
            "name": n,
            "layer": g,
            "count": c,
            "op_class": k,
            "flops": 0.0,
            "bytes": b,
            "weight_bytes": 0.0,
            "kv_bytes": 0.0,
            "activation_bytes": b,
            "t_compute_ms": 0.0,
            "t_memory_ms": 0.0,
            "time_ms": t * 1e3,
            "total_time_ms": c * t * 1e3,
            "bottleneck": k,
            "arithmetic_intensity_flop_per_byte": 0.0,
            "peak_flop_per_s": NAN,
            "achievable_flop_per_s": NAN,
            "achievable_bytes_per_s": NAN,
        }
        for n, g, c, b, t, k in rows
    ]


def operators(
    deployment: Deployment | ModelRef | None = None,
    hardware: HardwareRef | None = None,
    /,
    *,
    phase: str = "decode",
    batch_size: int = 1,
    context: int,
    **fields: object,
) -> pd.DataFrame:
    """The operators of one forward step on one device, one row per operator group.

    Args:
        deployment: a Deployment, or (the keyword form) the model with the accelerator second
            and the Deployment's other fields as keywords, as for `serve`.
        phase: "decode" (batch_size new tokens at `context`) or "prefill" (prompts of `context`).
        batch_size, context: sequences, tokens per sequence.
    """
    import pandas as pd

    (dep,) = bind((deployment, hardware), fields, Deployment)
    if phase not in PHASES:
        raise ValueError(f"phase must be one of {', '.join(PHASES)}, got {phase!r}")
    st = si.setup_for(dep, dep.precision)
    split = si.split_of(dep)
    _, arch, hw, tp, pp = si.placement(
        model=dep.model,
        hardware=dep.hardware,
        tp=dep.tp,
        pp=dep.pp,
        catalog=dep.catalog,
        split=split,
    )
    b = check_whole(batch_size, "batch_size", high=MAX_BATCH)
    c = check_whole(context, "context", high=MAX_SEQUENCE)  # a decode step reaches I + O
    dev, used = si.setup_values(hw, st)
    lay = si.layout(
        tp=tp,
        pp=pp,
        precision=st.precision,
        kv_precision=st.kv_precision,
        split=split,
        a=st.assumptions,
    )
    s = shapes_of(arch)
    tokens = float(b * c if phase == "prefill" else b)
    prompt = float(c) if phase == "prefill" else None
    step = step_ops(s, lay, T=tokens, B=float(b), xp=SCALAR, prefill_tokens=prompt)
    eta = si.efficiencies(st.assumptions, used)
    labels, rate_of = layer_labels(arch), rates(dev, eta)
    datasheet = dev._replace(kernel_compute=1.0)  # the roofs: no efficiency, no transfer
    peak_of = rates(datasheet, eta._replace(**dict.fromkeys(OP_CLASSES, 1.0)))
    kv_efficiency = eta.kv_bandwidth if phase == "decode" else 1.0
    both = (peak_of, rate_of)
    rows = [
        _row(
            op=op,
            dev=dev,
            rates_of=both,
            context=float(c),
            label=labels[op.layers],
            kv_efficiency=kv_efficiency,
        )
        for op in step
        if op.count
    ]
    extra = _extra_rows(s=s, dev=dev, step=(tokens, float(b), phase), lay=lay, labels=labels)
    return pd.DataFrame(rows + extra)
