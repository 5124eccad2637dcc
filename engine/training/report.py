"""What a training result says beyond its numbers: time and cost to a token budget, warnings.

Both work on a single result's values (floats) and, for the budget, on a search's columns
(numpy arrays) alike.
"""

from __future__ import annotations

import math

import numpy as np

from engine.catalog.specs import HardwareSpec
from engine.report.messages import N_
from engine.training.memory import GRADIENT_BYTES, OPTIMIZER_BYTES, WEIGHT_BYTES

MAX_TOKEN_BUDGET = 1e17  # tokens; far beyond any published run (Llama 3: 1.5e13)
SECONDS_PER_DAY = 86_400.0
_TERMS = {
    "weight": ("16-bit weights", WEIGHT_BYTES),
    "gradient": ("16-bit gradients", GRADIENT_BYTES),
    "optimizer": ("optimizer state (fp32 master weights, Adam momentum and variance)",
                  OPTIMIZER_BYTES),
    "activation": ("activations of the micro-batches in flight", None),
}  # fmt: skip


def check_budget(token_budget: object, price: object) -> tuple[float, float | None]:
    """The token budget (1 to 1e17 tokens) and a price per GPU-hour (> 0) if one is given."""
    ok = isinstance(token_budget, int | float) and not isinstance(token_budget, bool)
    if not (ok and math.isfinite(token_budget) and 1 <= token_budget <= MAX_TOKEN_BUDGET):
        raise ValueError(f"token_budget must be 1 to {MAX_TOKEN_BUDGET:g} tokens, got "
                         f"{token_budget!r}"[:200])  # fmt: skip
    if price is None:
        return float(token_budget), None
    ok = isinstance(price, int | float) and not isinstance(price, bool)
    if not (ok and math.isfinite(price) and 0 < price < 1e6):
        raise ValueError(f"price_per_gpu_hour must be a number of USD > 0, got {price!r}"[:200])
    return float(token_budget), float(price)


def budget(values: dict, hw: HardwareSpec, token_budget, price) -> dict:
    """Days, GPU-hours and cost to train on `token_budget` tokens at this throughput; the
    price is `price` or the catalogue's list price per accelerator-hour (None: no cost)."""
    tokens, price = check_budget(token_budget, price)
    price = hw.price_per_hour_usd if price is None else price
    seconds = tokens / np.asarray(values["tokens_per_s"], dtype=float)
    gpu_hours = values["gpus"] * seconds / 3600.0
    cost = gpu_hours * price if price is not None else np.nan * gpu_hours
    out = {
        "token_budget": tokens,
        "time_to_train_days": seconds / SECONDS_PER_DAY,
        "gpu_hours": gpu_hours,
        "price_per_gpu_hour_usd": price,
        "cost_to_train_usd": cost,
    }
    if np.ndim(seconds) == 0:  # one result: plain floats, no cost as None
        out = {k: (None if v is None or (k == "cost_to_train_usd" and price is None)
                   else float(v)) for k, v in out.items()}  # fmt: skip
    return out


def _gb(x: float) -> str:
    return f"{x / 1e9:,.1f} GB"


def memory_warning(values: dict, capacity_label: str, reserve: float) -> str:
    """Why a configuration does not fit: the need, the usable memory and the largest term."""
    term = values["largest_memory_term"]
    what, per_param = _TERMS[term]
    size = values[f"{term}_bytes_per_gpu"]
    detail = (f"{per_param:g} B × {size / per_param / 1e9:,.3g} B parameters on this GPU"
              if per_param else f"{values['recompute']} recomputation, micro-batch "
              f"{values['micro_batch_size']}")  # fmt: skip
    return (
        f"does not fit: {_gb(values['memory_per_gpu_bytes'])} per GPU needed, "
        f"{_gb(values['usable_memory_bytes'])} usable ({capacity_label} less the "
        f"{reserve:.0%} memory reserve); the largest term is the {what}, {_gb(size)} = {detail}"
        f" (ZeRO stage {values['zero']}, tp {values['tp']}, pp {values['pp']})"
    )


NO_PEAK = N_(
    "no {precision} peak listed for {hardware}: the {used} peak is used (see peak_precision)"
)
TP_SPANS_NODES = N_(
    "tp {tp} spans nodes ({per_node} GPUs per node): its collectives run on the inter-node network"
)
NEVER_FILLS = N_(
    "{micro_batches} micro-batches per step for {pp} pipeline stages: the pipeline never fills"
)


def warnings_for(st, values: dict) -> list[str]:
    """Every warning a result carries (call-wide notes first)."""
    out = []
    if st.dev.fallback:
        out.append(NO_PEAK.format(precision=st.precision, hardware=st.hw.id,
                                  used=st.peak_precision))  # fmt: skip
    if values["tp"] > st.hw.devices_per_node:
        out.append(TP_SPANS_NODES.format(tp=values["tp"], per_node=st.hw.devices_per_node))
    if values["pp"] > 1 and values["micro_batches"] < values["pp"]:
        out.append(NEVER_FILLS.format(micro_batches=values["micro_batches"], pp=values["pp"]))
    if not values["fits_in_memory"]:
        out.append(memory_warning(values, st.hw.capacity_label, st.dev.reserve))
    return out
