"""Each layer of a catalogued CNN on its own roofline (the layer lists: engine/catalog/cnn.py).

The per-layer view beside the tutorial's whole-model point: every convolution's FLOPs and bytes
come from the network's architecture (He et al. 2016; Sandler et al. 2018), each on
max(FLOPs / (peak·η), bytes / (bandwidth·η_mem)) without overheads (docs/model.md).
"""

from __future__ import annotations

import numpy as np

from engine.assumptions import make_assumptions
from engine.catalog.cnn import Layer, network_layers
from engine.catalog.resolve import resolve_hardware, resolve_model
from engine.catalog.specs import BYTES_PER_PARAM, check_precision
from engine.checks import MAX_BATCH, check_whole


def layer_table(model, hardware, *, batch_size: int = 1, precision: str = "fp16", **assumptions):
    """Each layer of a catalogued CNN on its own roofline, as a DataFrame (one row per layer).

    FLOPs follow the assumptions' FLOP convention like the whole-model solve ("catalog": the
    catalogued 1 FLOP per MAC for these networks; "mac2": 2). Bytes are the layer's weights
    plus its input and output activations for the batch, at `precision`. Time is the layer's
    own roofline max(FLOPs / (peak·η), bytes / (bandwidth·η_mem)), without overheads.
    """
    import pandas as pd

    spec, hw = resolve_model(model), resolve_hardware(hardware)
    batch = check_whole(batch_size, "batch_size", high=MAX_BATCH)
    precision = check_precision(precision)
    a = make_assumptions(**assumptions)
    layers = network_layers(spec.id)
    per_mac = 2.0 if a.flop_convention == "mac2" or spec.flop_convention == "mac2" else 1.0
    peak, used = hw.peak_for(precision)
    b = BYTES_PER_PARAM[precision]
    macs = np.array([lay.macs for lay in layers], dtype=float) * batch
    weight_bytes = np.array([lay.params for lay in layers], dtype=float) * b
    act = np.array([lay.activations_in + lay.activations_out for lay in layers], float) * batch * b
    flops, moved = macs * per_mac, weight_bytes + act
    t_compute = flops / (peak * a.efficiency)
    t_memory = moved / (hw.memory_bandwidth_bytes_per_s * a.bandwidth_efficiency)
    return pd.DataFrame(
        {
            "name": [lay.name for lay in layers],
            "kind": [lay.kind for lay in layers],
            "shape": [_shape(lay) for lay in layers],
            "params": [lay.params for lay in layers],
            "macs": macs,
            "flops": flops,
            "weight_bytes": weight_bytes,
            "activation_bytes": act,
            "bytes": moved,
            "arithmetic_intensity_flop_per_byte": flops / moved,
            "t_compute_ms": t_compute * 1e3,
            "t_memory_ms": t_memory * 1e3,
            "time_ms": np.maximum(t_compute, t_memory) * 1e3,
            "bottleneck": np.where(t_compute > t_memory, "compute", "memory"),
            "peak_precision": used,
            "peak_flop_per_s": peak,  # the roofs every layer sits under
            "achievable_flop_per_s": peak * a.efficiency,
            "achievable_bytes_per_s": hw.memory_bandwidth_bytes_per_s * a.bandwidth_efficiency,
        }
    )


def layer_totals(layers) -> dict[str, float]:
    """The whole forward pass as the layer view counts it, from a `layer_table` frame.

    Each layer moves its own bytes (its weights and its input and output activations), so
    the pass moves more than the tutorial's whole-model figure (weights · (1 + α·batch)) and
    sits at a lower intensity. Returns the summed FLOPs, bytes (weights, activations), the
    pass's intensity (FLOPs ÷ bytes) and the sum of the layers' own roofline times in
    seconds, without overheads.
    """
    flops, moved = float(layers["flops"].sum()), float(layers["bytes"].sum())
    return {
        "flops": flops,
        "bytes": moved,
        "weight_bytes": float(layers["weight_bytes"].sum()),
        "activation_bytes": float(layers["activation_bytes"].sum()),
        "arithmetic_intensity_flop_per_byte": flops / moved,
        "time_s": float(layers["time_ms"].sum()) * 1e-3,
    }


def _shape(lay: Layer) -> str:
    if lay.kind == "fc":
        return f"fc {lay.in_channels}→{lay.out_channels}"
    dw = " depthwise" if lay.kind == "depthwise" else ""
    return (
        f"{lay.kernel}×{lay.kernel}{dw}, {lay.in_channels}→{lay.out_channels}, "
        f"stride {lay.stride}, {lay.out_side}×{lay.out_side} out"
    )
