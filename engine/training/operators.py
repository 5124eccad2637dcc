"""`training_operators`: one micro-batch's forward and backward passes as a table, per operator.

The operators are the training kernel's own (engine/training/compute.py `pass_ops`): each on
one GPU of a tp × cp split (ep for MoE experts) with its FLOPs, bytes, roofline terms and time,
in the forward pass and in the backward pass (2× a GEMM's FLOPs and bytes: the input and the
weight gradients; attention `attention_backward_factor`× its forward, FlashAttention's five
matrix products against two plus the recomputed scores). One row per operator and pass, with
the columns of `engine.operators` plus `phase` (forward | backward), so a roofline of the
operators in training is drawn like the serving one. Σ count · time over the rows is the
micro-batch's compute on a GPU holding every layer (pp = 1): `train(...)["compute_s"]` divided
by the micro-batches per step without recomputation (tests/test_train_operators.py). Pipeline
stages hold ⌈L/pp⌉ of the layers each; recomputation runs a layer's forward rows again.
docs/model.md, "Training step".
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from engine.scenarios.bind import bind
from engine.scenarios.deployment import HardwareRef, ModelRef
from engine.scenarios.training import TrainLayout, TrainRun
from engine.serving.op_table import layer_labels
from engine.serving.operators import OP_CLASSES
from engine.training.compute import pass_ops, roofs
from engine.training.config import REASONS, make_config, reason_codes
from engine.training.kernel import device_layout
from engine.training.setup import Setup, setup

if TYPE_CHECKING:
    import pandas as pd

PASSES = ("forward", "backward")


def _row(p, phase: str, peak_of: dict, rate_of: dict, bandwidth: float, label: str) -> dict:
    scale = 1.0 if phase == "forward" else float(p.backward)
    op = p.op
    flops, moved = float(p.flop) * scale, float(p.moved) * scale
    t_c, t_m = float(p.t_compute) * scale, float(p.t_memory) * scale
    seconds = float(p.fwd if phase == "forward" else p.bwd)
    count = int(op.count)
    weights = float(op.weight_bytes) * scale if moved else 0.0
    return {
        "phase": phase,
        "name": op.name,
        "layer": label,
        "count": count,
        "op_class": op.cls,
        "flops": flops,
        "bytes": moved,
        "weight_bytes": weights,
        "kv_bytes": 0.0,
        "activation_bytes": moved - weights,
        "t_compute_ms": t_c * 1e3,
        "t_memory_ms": t_m * 1e3,
        "time_ms": seconds * 1e3,
        "total_time_ms": count * seconds * 1e3,
        "bottleneck": "compute" if t_c > t_m else "memory",
        "arithmetic_intensity_flop_per_byte": flops / moved if moved else float("nan"),
        "peak_flop_per_s": peak_of[p.roof],
        "achievable_flop_per_s": rate_of[p.roof],
        "achievable_bytes_per_s": bandwidth,
    }


def training_operators(
    run: TrainRun | ModelRef | None = None,
    hardware: TrainLayout | HardwareRef | None = None,
    /,
    layout: TrainLayout | None = None,
    **fields: object,
) -> pd.DataFrame:
    """The operators of one micro-batch's forward and backward passes on one GPU.

    Args:
        run: a TrainRun, or the keyword form's model with `hardware` and the run's other
            fields as keywords, as `engine.train` takes them: seq_len (s tokens per sequence),
            precision, attention, profile, assumptions, catalog and the assumptions by their
            user names (gpus, global_batch_size and the budget do not change a micro-batch).
        layout: a TrainLayout, or its fields as keywords: tp, cp, ep (tensor with sequence
            parallelism, context and expert parallel degrees) and micro_batch_size (b
            sequences: b·s/cp tokens per GPU); pp, vp, zero and recompute do not change the
            operators (pipeline stages hold ⌈L/pp⌉ layers each; recomputation runs a layer's
            forward rows again).

    Returns:
        One row per operator and pass (`phase` forward or backward), with `engine.operators`'
        columns: FLOPs, bytes, compute and memory times, time per layer (`time_ms`) and over
        the layers that carry it (`total_time_ms`, `count` of them), the bound, the intensity
        and the roofs of its class (datasheet peak, peak × efficiency, bandwidth × efficiency).

    Raises:
        ValueError: a bad argument, or a split the model refuses (tp not dividing the heads,
            seq_len not divisible by tp or 2·cp, ep without experts dividing them).
    """
    import pandas as pd

    run, layout = bind((run, hardware), {"layout": layout, **fields}, TrainRun, TrainLayout)
    if run is None:
        raise ValueError("TrainRun: give model, hardware, seq_len")
    layout = layout or TrainLayout()
    st = setup(run)
    _check_split(st=st, run=run, layout=layout)
    rate_of = roofs(st.dev, st.eta)
    peak_of = roofs(st.dev, st.eta._replace(**dict.fromkeys(OP_CLASSES, 1.0)))
    bandwidth = float(st.dev.bandwidth)
    ops = pass_ops(
        s=st.s,
        lay=device_layout(
            tp=float(layout.tp),
            etp=float(layout.etp or layout.tp),
            ep=float(layout.ep),
            weight_bytes=st.numerics.weight_bytes,
            imbalance=st.assumptions.expert_imbalance,
        ),
        tokens=np.float64(layout.micro_batch_size * run.seq_len / layout.cp),
        seq=float(run.seq_len),
        ep=float(layout.ep),
        rate_of=rate_of,
        bandwidth=bandwidth,
        attention_backward=st.assumptions.attention_backward_factor,
        num=st.numerics,
    )
    labels = layer_labels(st.arch)
    rows = [
        _row(
            p=p,
            phase=phase,
            peak_of=peak_of,
            rate_of=rate_of,
            bandwidth=bandwidth,
            label=labels[p.op.layers],
        )
        for phase in PASSES
        for p in ops
        if int(p.op.count)
    ]
    return pd.DataFrame(rows)


def _check_split(st: Setup, run: TrainRun, layout: TrainLayout) -> None:
    """ValueError naming the rule a micro-batch's tp × cp (× ep) split breaks: one micro-batch
    per data-parallel replica, on tp·cp·ep GPUs, no pipeline."""
    b, gpus = layout.micro_batch_size, layout.tp * layout.cp * layout.ep
    cfg = make_config(
        gpus=gpus,
        tp=layout.tp,
        pp=1,
        cp=layout.cp,
        vp=1,
        ep=layout.ep,
        etp=layout.etp or 0,
        micro_batch=b,
        global_batch=b * layout.ep,
        seq_len=run.seq_len,
        zero=0,
        recompute=0,
    )
    code = int(reason_codes(cfg, st.s)[0])
    if code:
        raise ValueError(
            f"{st.name}: {REASONS[code]()} (tp {layout.tp}, cp {layout.cp}, ep {layout.ep}, "
            f"seq_len {run.seq_len:,})"
        )
