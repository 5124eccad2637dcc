"""Failures and checkpoints on a cluster (MLSys·im tutorial 06, "Scaling to 1000 GPUs").

The tutorial's first-order reliability model: N GPUs that each fail at random (a Poisson
process) with a mean time to failure MTTF make a cluster that fails every

    MTBF = MTTF / N                                  (GPUs only; NICs, PSUs ... would add)

A job checkpoints every T hours; writing one takes δ; a failure loses on average half an
interval. Young (1974) and Daly (2006): the interval that loses the least is

    T_opt = sqrt(2 · δ · MTBF)

and over a job of H hours: failures = H / MTBF, write time = (H / T) · δ, rollback = failures ·
T / 2. `scaling_overheads` sets these beside the communication the training model exposes in
each step (`train`: exposed communication and the pipeline bubble as a share of the step).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

from engine.checks import check_whole

GPU_MTTF_HOURS = 50_000.0  # the tutorial's single-GPU MTTF
CHECKPOINT_S = 60.0  # the tutorial's checkpoint write time
JOB_HOURS = 30 * 24.0  # the tutorial's 30-day run


@dataclass(frozen=True)
class Reliability:
    """One cluster's failures and checkpoint costs over a job (hours unless named)."""

    gpus: int
    gpu_mttf_hours: float
    checkpoint_s: float
    job_hours: float
    mtbf_hours: float
    expected_failures: float
    checkpoint_interval_hours: float
    checkpoint_write_hours: float
    rollback_hours: float
    checkpoint_loss_hours: float

    def as_dict(self) -> dict:
        return asdict(self)


def _positive(name: str, value: float) -> float:
    if not (isinstance(value, int | float) and math.isfinite(value) and value > 0):
        raise ValueError(f"{name}: must be a positive number, got {value!r}")
    return float(value)


def reliability(
    gpus: int,
    *,
    gpu_mttf_hours: float = GPU_MTTF_HOURS,
    checkpoint_s: float = CHECKPOINT_S,
    job_hours: float = JOB_HOURS,
    interval_hours: float | None = None,
) -> Reliability:
    """Failures, the Young-Daly checkpoint interval (or `interval_hours`) and the hours lost
    to writing checkpoints and to rollbacks over a job of `job_hours`."""
    n = check_whole(gpus, "gpus", high=10_000_000)
    mttf = _positive("gpu_mttf_hours", gpu_mttf_hours)
    delta_h = _positive("checkpoint_s", checkpoint_s) / 3600
    job = _positive("job_hours", job_hours)
    mtbf = mttf / n
    interval = math.sqrt(2 * delta_h * mtbf) if interval_hours is None else interval_hours
    interval = _positive("interval_hours", interval)
    failures = job / mtbf
    write = job / interval * delta_h
    rollback = failures * interval / 2
    return Reliability(
        n, mttf, checkpoint_s, job, mtbf, failures, interval, write, rollback, write + rollback
    )


def scaling_overheads(
    model,
    hardware,
    gpus,
    *,
    tp: int = 8,
    seq_len: int = 2048,
    global_batch_size=None,
    gpu_mttf_hours: float = GPU_MTTF_HOURS,
    checkpoint_s: float = CHECKPOINT_S,
    job_hours: float = JOB_HOURS,
    **train_args: object,
):
    """Per cluster size: the training step (`train`, TP within a node, data parallel across),
    its communication share and the hours it costs over the job, beside the checkpoint hours.

    Args:
        gpus: cluster sizes (multiples of `tp`).
        global_batch_size: sequences per step; default the tutorial's max(64, gpus).
        train_args: passed to `train` (precision, zero, recompute, profile, ...).

    Returns:
        A DataFrame, one row per size: gpus, dp, step_time_s, comm_exposed_s, bubble_s,
        comm_fraction ((exposed communication + bubble) / step), scaling_efficiency
        (1 − comm_fraction), comm_loss_hours (comm_fraction × job_hours), fits_in_memory, and
        every `Reliability` field; ckpt_to_comm_ratio = checkpoint_loss_hours / comm_loss_hours.
    """
    import pandas as pd

    from engine.training.train import train

    rows = []
    for n in gpus:
        batch = global_batch_size or max(64, int(n))
        r = train(
            model, hardware, gpus=n, tp=tp, global_batch_size=batch, seq_len=seq_len, **train_args
        )
        v = r.as_dict()
        share = (v["comm_exposed_s"] + v["bubble_s"]) / v["step_time_s"]
        rel = reliability(
            n, gpu_mttf_hours=gpu_mttf_hours, checkpoint_s=checkpoint_s, job_hours=job_hours
        )
        comm_h = share * job_hours
        rows.append(
            {
                "gpus": int(n),
                "dp": v["dp"],
                "global_batch_size": batch,
                "step_time_s": v["step_time_s"],
                "comm_exposed_s": v["comm_exposed_s"],
                "bubble_s": v["bubble_s"],
                "comm_fraction": share,
                "scaling_efficiency": 1 - share,
                "comm_loss_hours": comm_h,
                "fits_in_memory": v["fits_in_memory"],
                **{k: v for k, v in rel.as_dict().items() if k != "gpus"},
                "ckpt_to_comm_ratio": rel.checkpoint_loss_hours / comm_h if comm_h else math.inf,
            }
        )
    return pd.DataFrame(rows)
