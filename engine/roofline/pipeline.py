"""The input pipeline beside the accelerator (MLSys·im tutorial 04, "Starving the GPU").

A training or inference step needs its batch prepared first: read, decoded and augmented on the
host's CPU workers. The tutorial's first-order view: the CPU transforms a batch in

    t_transform = batch · sample_bytes / cpu_bytes_per_s

while the accelerator's step is the whole-model solve's latency (`solve`, the tutorial's
`SingleNodeModel`); with prefetching the two overlap, so the slower one sets the pace:

    step = max(t_accelerator, t_transform)
    accelerator utilisation = t_accelerator / step
    binding = "transform" when t_transform > t_accelerator, else the solve's bottleneck

Defaults are the tutorial's: an ImageNet JPEG of 500 KB and 8 workers × 250 MB/s = 2 GB/s.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from engine.checks import MAX_BATCH, as_list, check_whole_numbers
from engine.roofline.sweep import sweep

if TYPE_CHECKING:
    import pandas as pd

SAMPLE_BYTES = 500e3  # an average ImageNet JPEG (the tutorial's 500 KB)
CPU_BYTES_PER_S = 2e9  # 8 workers × 250 MB/s each (the tutorial's)


def pipeline_sweep(
    model,
    hardware,
    batch_sizes,
    precision: str = "fp16",
    *,
    sample_bytes: float = SAMPLE_BYTES,
    cpu_bytes_per_s: float = CPU_BYTES_PER_S,
    catalog=None,
    **overrides: object,
) -> pd.DataFrame:
    """The accelerator's step and the CPU's transform per batch size, and which one binds.

    Args:
        model, hardware: catalogue ids or specs (as for `solve`).
        batch_sizes: whole numbers (one row each, in the order given).
        sample_bytes: bytes the CPU decodes per sample (> 0).
        cpu_bytes_per_s: the CPU workers' combined transform rate (> 0).
        overrides: the whole-model assumptions (efficiency, layer_overhead_us, ...).

    Returns:
        One row per batch: batch_size, accelerator_step_ms (the solve's latency), bottleneck
        (the solve's), transform_ms, step_ms (the slower of the two), binding ("transform" or
        the solve's bottleneck), accelerator_utilization (fraction), samples_per_s,
        sample_bytes, cpu_bytes_per_s.
    """
    for name, value in (("sample_bytes", sample_bytes), ("cpu_bytes_per_s", cpu_bytes_per_s)):
        if not float(value) > 0:
            raise ValueError(f"{name}: must be a positive number, got {value!r}")
    checked = check_whole_numbers(as_list(batch_sizes, "batch_sizes"), "b", high=MAX_BATCH)
    batches = [int(b) for b in checked]
    rows = sweep(
        models=model,
        hardware=hardware,
        batch_sizes=batches,
        precisions=[precision],
        catalog=catalog,
        **overrides,
    )
    rows = rows.set_index("batch_size").loc[batches].reset_index()
    batch = rows["batch_size"].to_numpy(dtype=float)
    gpu_ms = rows["latency_ms"].to_numpy(dtype=float)
    transform_ms = batch * float(sample_bytes) / float(cpu_bytes_per_s) * 1e3
    step_ms = np.maximum(gpu_ms, transform_ms)
    bottleneck = rows["bottleneck"].astype(str).to_numpy()
    import pandas as pd

    return pd.DataFrame(
        {
            "model": rows["model"].astype(str),
            "hardware": rows["hardware"].astype(str),
            "precision": precision,
            "batch_size": batches,
            "accelerator_step_ms": gpu_ms,
            "bottleneck": bottleneck,
            "transform_ms": transform_ms,
            "step_ms": step_ms,
            "binding": np.where(transform_ms > gpu_ms, "transform", bottleneck),
            "accelerator_utilization": gpu_ms / step_ms,
            "samples_per_s": batch / (step_ms * 1e-3),
            "sample_bytes": float(sample_bytes),
            "cpu_bytes_per_s": float(cpu_bytes_per_s),
        }
    )


def first_transform_bound(rows: pd.DataFrame) -> int | None:
    """The smallest batch of a `pipeline_sweep` at which the CPU binds (None: never)."""
    hit = rows.loc[rows["binding"] == "transform", "batch_size"]
    return int(hit.min()) if len(hit) else None
