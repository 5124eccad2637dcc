"""What a training result says beyond its numbers: time and cost to a token budget, warnings.

Both work on a single result's values (floats) and, for the budget, on a search's columns
(numpy arrays) alike.
"""

from __future__ import annotations

import numpy as np

from engine.catalog.specs import HardwareSpec
from engine.report.messages import Message, MessageKind
from engine.training.memory import WEIGHT_BYTES
from engine.training.numerics import PARAM_GATHER_BYTES, Numerics

SECONDS_PER_DAY = 86_400.0


def budget(values: dict, hw: HardwareSpec, token_budget: float, price: float | None) -> dict:
    """Days, GPU-hours and cost to train on `token_budget` tokens at this throughput; the
    price (USD per GPU-hour) is `price` or the catalogue's list price (None: no cost). Both
    were checked by the run (engine/scenarios/training.py)."""
    price = hw.price_per_hour_usd if price is None else price
    seconds = token_budget / np.asarray(values["tokens_per_s"], dtype=float)
    gpu_hours = values["gpus"] * seconds / 3600.0
    cost = gpu_hours * price if price is not None else np.nan * gpu_hours
    out = {
        "token_budget": token_budget,
        "time_to_train_days": seconds / SECONDS_PER_DAY,
        "gpu_hours": gpu_hours,
        "price_per_gpu_hour_usd": price,
        "cost_to_train_usd": cost,
    }
    if np.ndim(seconds) == 0:  # one result: plain floats, no cost as None
        out = {
            k: (None if v is None or (k == "cost_to_train_usd" and price is None) else float(v))
            for k, v in out.items()
        }
    return out


# Why a configuration does not fit, by its largest memory term (the need, the usable memory,
# the term and what makes it up)
MEMORY_SHORTFALL = {
    "weight": MessageKind(
        "weights_do_not_fit",
        "does not fit: {needed} GB per GPU needed, {usable} GB usable ({capacity} less the "
        "{reserve} memory reserve); the largest term is the 16-bit weights, {size} GB = "
        "{bytes_per_param} B × {params} B parameters on this GPU (ZeRO stage {zero}, tp {tp}, "
        "pp {pp})",
    ),
    "fp8_weight": MessageKind(
        "fp8_weights_do_not_fit",
        "does not fit: {needed} GB per GPU needed, {usable} GB usable ({capacity} less the "
        "{reserve} memory reserve); the largest term is the fp8 weights, {size} GB = "
        "{bytes_per_param} B × {params} B parameters on this GPU (ZeRO stage {zero}, tp {tp}, "
        "pp {pp})",
    ),
    "gradient": MessageKind(
        "gradients_do_not_fit",
        "does not fit: {needed} GB per GPU needed, {usable} GB usable ({capacity} less the "
        "{reserve} memory reserve); the largest term is the gradients, {size} GB = "
        "{bytes_per_param} B × {params} B parameters on this GPU (ZeRO stage {zero}, tp {tp}, "
        "pp {pp})",
    ),
    "optimizer": MessageKind(
        "optimizer_state_does_not_fit",
        "does not fit: {needed} GB per GPU needed, {usable} GB usable ({capacity} less the "
        "{reserve} memory reserve); the largest term is the optimizer state (fp32 master "
        "weights, Adam momentum and variance), {size} GB = {bytes_per_param} B × {params} B "
        "parameters on this GPU (ZeRO stage {zero}, tp {tp}, pp {pp})",
    ),
    "activation": MessageKind(
        "activations_do_not_fit",
        "does not fit: {needed} GB per GPU needed, {usable} GB usable ({capacity} less the "
        "{reserve} memory reserve); the largest term is the activations of the micro-batches "
        "in flight, {size} GB = {recompute} recomputation, micro-batch {micro_batch} (ZeRO "
        "stage {zero}, tp {tp}, pp {pp})",
    ),
}


def _gb(x: float) -> str:
    return f"{x / 1e9:,.1f}"


def memory_warning(values: dict, capacity_label: str, reserve: float, num: Numerics) -> Message:
    """Why a configuration does not fit: the need, the usable memory and the largest term
    (its bytes per parameter the run's: `gradient_bytes`, the optimizer's state)."""
    term = values["largest_memory_term"]
    size = values[f"{term}_bytes_per_gpu"]
    per_param = {
        "weight": WEIGHT_BYTES,
        "gradient": num.grad_bytes,
        "optimizer": num.optimizer_bytes,
        "activation": None,
    }[term]
    if term == "weight" and values["fp8_param_gather"]:
        term, per_param = "fp8_weight", PARAM_GATHER_BYTES
    detail = (
        {"bytes_per_param": f"{per_param:g}", "params": f"{size / per_param / 1e9:,.3g}"}
        if per_param
        else {"recompute": f"{values['recompute']}", "micro_batch": f"{values['micro_batch_size']}"}
    )
    return MEMORY_SHORTFALL[term](
        needed=_gb(values["memory_per_gpu_bytes"]),
        usable=_gb(values["usable_memory_bytes"]),
        capacity=capacity_label,
        reserve=f"{reserve:.0%}",
        size=_gb(size),
        zero=f"{values['zero']}",
        tp=f"{values['tp']}",
        pp=f"{values['pp']}",
        **detail,
    )


NO_PEAK = MessageKind(
    "training_peak_fallback",
    "no {precision} peak listed for {hardware}: the {used} peak is used (see peak_precision)",
)
TP_SPANS_NODES = MessageKind(
    "tp_spans_nodes",
    "tp {tp} spans nodes ({per_node} GPUs per node): its collectives run on the inter-node network",
)
NEVER_FILLS = MessageKind(
    "pipeline_never_fills",
    "{micro_batches} micro-batches per step for {pp} pipeline stages: the pipeline never fills",
)
SCHEDULE_UNMEASURED = MessageKind(
    "schedule_not_measured",
    "pipeline schedule {schedule}: its bubble and memory follow the schedule's published table "
    "(deepseek-ai/DualPipe), not a measured run; the band covers 1F1B runs only",
)
DUALPIPE_HIDES_A2A = MessageKind(
    "dualpipe_overlaps_all_to_all",
    "pipeline schedule {schedule} runs each chunk's all-to-alls under the paired chunk's "
    "compute, which expert_overlap 1 describes; this run charges them at expert_overlap "
    "{overlap}",
)
CP_EXCHANGE_UNMEASURED = MessageKind(
    "cp_exchange_not_measured",
    "cp_comm_type {kind}: its exchange is priced by the collectives' rules (docs/model.md), "
    "not checked against a measured run; the band covers the ring (p2p) only",
)
KINDS = (*MEMORY_SHORTFALL.values(), NO_PEAK, TP_SPANS_NODES, NEVER_FILLS)
KINDS += (SCHEDULE_UNMEASURED, DUALPIPE_HIDES_A2A, CP_EXCHANGE_UNMEASURED)


def warnings_for(st, values: dict) -> list[Message]:
    """Every warning a result carries (call-wide notes first)."""
    out = []
    if st.dev.fallback:
        out.append(NO_PEAK(precision=st.precision, hardware=st.hw.id, used=st.peak_precision))
    if values["tp"] > st.hw.devices_per_node:
        out.append(TP_SPANS_NODES(tp=f"{values['tp']}", per_node=f"{st.hw.devices_per_node}"))
    if values["pp"] > 1 and values["micro_batches"] < values["pp"]:
        out.append(NEVER_FILLS(micro_batches=f"{values['micro_batches']}", pp=f"{values['pp']}"))
    if values["pp_schedule"] != "1f1b":
        out.append(SCHEDULE_UNMEASURED(schedule=values["pp_schedule"]))
        overlap = st.assumptions.expert_overlap
        if values["ep"] > 1 and overlap < 1.0:
            out.append(DUALPIPE_HIDES_A2A(schedule=values["pp_schedule"], overlap=f"{overlap:g}"))
    if values["cp"] > 1 and values["cp_comm_type"] != "p2p":
        out.append(CP_EXCHANGE_UNMEASURED(kind=values["cp_comm_type"]))
    if not values["fits_in_memory"]:
        out.append(
            memory_warning(
                values=values,
                capacity_label=st.hw.capacity_label,
                reserve=st.dev.reserve,
                num=st.numerics,
            )
        )
    return out
