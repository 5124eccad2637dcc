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
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from typing import TYPE_CHECKING

from engine.checks import check_whole
from engine.scenarios.bind import bind
from engine.scenarios.deployment import HardwareRef, ModelRef
from engine.scenarios.fleet_parts import PARTS, FleetParts
from engine.scenarios.training import (
    CHECKPOINT_S,
    GPU_MTTF_HOURS,
    JOB_HOURS,
    Failures,
    TrainLayout,
    TrainRun,
    check_positive,
)

if TYPE_CHECKING:
    import pandas as pd

MAX_CLUSTER = 10_000_000  # GPUs a cluster's reliability is computed for
TUTORIAL_LAYOUT = {"tp": 8}  # the tutorial's: TP within a node, data parallel across
TUTORIAL_SEQ_LEN = 2048
TUTORIAL_MIN_BATCH = 64  # the global batch: max(64, gpus) unless the run gives one


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
    n = check_whole(gpus, "gpus", high=MAX_CLUSTER)
    failures = Failures(
        gpu_mttf_hours=gpu_mttf_hours, checkpoint_s=checkpoint_s, job_hours=job_hours
    )
    return cluster_reliability(n, failures, interval_hours)


def cluster_reliability(
    gpus: int, failures: Failures, interval_hours: float | None = None
) -> Reliability:
    """`reliability` of a cluster of `gpus` GPUs (checked) under `failures`."""
    delta_h = failures.checkpoint_s / 3600
    job = failures.job_hours
    mtbf = failures.gpu_mttf_hours / gpus
    interval = young_daly_hours(delta_h, mtbf) if interval_hours is None else interval_hours
    interval = check_positive("interval_hours", interval)
    expected = job / mtbf
    write = job / interval * delta_h
    rollback = expected * interval / 2
    return Reliability(
        gpus=gpus,
        gpu_mttf_hours=failures.gpu_mttf_hours,
        checkpoint_s=failures.checkpoint_s,
        job_hours=job,
        mtbf_hours=mtbf,
        expected_failures=expected,
        checkpoint_interval_hours=interval,
        checkpoint_write_hours=write,
        rollback_hours=rollback,
        checkpoint_loss_hours=write + rollback,
    )


def young_daly_hours(checkpoint_hours: float, mtbf_hours: float) -> float:
    """Young (1974) and Daly (2006): the checkpoint interval that loses the least,
    sqrt(2 · δ · MTBF), in hours (δ the write time in hours)."""
    return math.sqrt(2 * checkpoint_hours * mtbf_hours)


def scaling_overheads(
    run: TrainRun | ModelRef | None = None,
    hardware: TrainLayout | HardwareRef | None = None,
    gpus: Sequence[int] | Failures | None = None,
    /,
    layout: TrainLayout | None = None,
    failures: Failures | None = None,
    **fields: object,
) -> pd.DataFrame:
    """Per cluster size: the training step (`train`), its communication share and the hours it
    costs over the job, beside the checkpoint hours.

    Args:
        run: a TrainRun whose `gpus` are the cluster sizes (each a multiple of the layout's
            tp·pp·cp), or the keyword form's model with `hardware`, the sizes third and the
            run's other fields as keywords, as `train` takes them (seq_len: the tutorial's
            2048 unless given). A run without a global_batch_size takes the tutorial's
            max(64, gpus) sequences at each size.
        layout: a TrainLayout, or its fields as keywords (the keyword form's tp defaults to
            the tutorial's 8: TP within a node, data parallel across).
        failures: a Failures, or gpu_mttf_hours, checkpoint_s and job_hours (the tutorial's
            50,000 h, 60 s and 30 days by default).

    Returns:
        A DataFrame, one row per size: gpus, dp, global_batch_size, step_time_s,
        comm_exposed_s, bubble_s, comm_fraction ((exposed communication + bubble) / step),
        scaling_efficiency (1 − comm_fraction), comm_loss_hours (comm_fraction × job_hours),
        fits_in_memory, and every `Reliability` field; ckpt_to_comm_ratio =
        checkpoint_loss_hours / comm_loss_hours.
    """
    import pandas as pd

    from engine.training.train import train

    run, layout, failures = _bound(
        leading=(run, hardware, gpus), layout=layout, failures=failures, fields=fields
    )
    rows = []
    for n in run.gpu_counts:
        batch = run.global_batch_size or max(TUTORIAL_MIN_BATCH, n)
        v = train(replace(run, gpus=n, global_batch_size=batch), layout).as_dict()
        share = (v["comm_exposed_s"] + v["bubble_s"]) / v["step_time_s"]
        rel = cluster_reliability(n, failures)
        comm_h = share * failures.job_hours
        rows.append(
            {
                "gpus": n,
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


def _bound(leading: tuple, layout, failures, fields: dict) -> tuple:
    """(run, layout, failures): the typed form as given, the keyword form with the tutorial's
    sequence length and tp."""
    run, hardware, gpus = leading
    given = {"layout": layout, "failures": failures, **fields}
    if isinstance(gpus, Failures):  # the typed form's third object
        given["failures"] = gpus
    elif gpus is not None:
        if "gpus" in fields:
            raise ValueError("gpus: given twice (by position and by name)")
        given["gpus"] = gpus
    if not isinstance(run, TrainRun) and "run" not in fields:  # the keyword form
        given.setdefault("seq_len", TUTORIAL_SEQ_LEN)
        if layout is None and "layout" not in fields:
            given = TUTORIAL_LAYOUT | given
    run, layout, failures = bind((run, hardware), given, TrainRun, TrainLayout, Failures)
    if run is None:
        raise ValueError("TrainRun: give model, hardware, gpus")
    run.needs("gpus")
    return run, layout or TrainLayout(), failures or Failures()


@dataclass(frozen=True)
class FleetReliability:
    """A cluster's failures by part and the checkpoint costs over a job (hours unless named).

    `parts` holds one dict per kind of part: part, per ("gpu" or "host"), units in the
    cluster, mttf_hours (one unit), failures_per_hour (units ÷ MTTF), share (of the fleet's
    rate) and causes (what the part stands for); mttf_hours None: the part is not counted."""

    gpus: int
    hosts: int
    mtbf_hours: float
    failures_per_hour: float
    expected_failures: float
    failure_probability: float
    checkpoint_s: float
    restart_s: float
    job_hours: float
    checkpoint_interval_hours: float
    checkpoint_write_hours: float
    rollback_hours: float
    restart_hours: float
    lost_hours: float
    goodput: float
    parts: tuple[dict, ...]

    def as_dict(self) -> dict:
        return asdict(self) | {"parts": [dict(p) for p in self.parts]}


def fleet_reliability(fleet: FleetParts | None = None, /, **fields: object) -> FleetReliability:
    """A cluster's MTBF from its parts, the Young-Daly checkpoint interval and the hours lost.

    Failures of independent parts add their rates: λ = Σ_i n_i / MTTF_i (n_i units of part i in
    the cluster); MTBF = 1 / λ. With δ the write time and R the restart time, over H hours:
    failures = H / MTBF, T = sqrt(2 · δ · MTBF) (or the fleet's interval), writes = (H / T) · δ,
    rollback = failures · T / 2, restarts = failures · R, lost = their sum, goodput = 1 − lost / H
    (at least 0); P(at least one failure) = 1 − exp(−H / MTBF).

    Args:
        fleet: a FleetParts, or its fields as keywords (gpus, gpus_per_host, <part>_mttf_hours,
            checkpoint_s, restart_s, job_hours, interval_hours).
    """
    if fleet is None:
        fleet = FleetParts.of(**fields)
    elif fields:
        fleet = FleetParts.from_fields(fleet, dict(fields))
    units = {"gpu": fleet.gpus, "host": fleet.hosts}
    rates = {p.name: units[p.per] / fleet.mttf(p.name) for p in PARTS}
    rate = sum(rates.values())
    mtbf = 1 / rate
    job = fleet.job_hours
    delta_h = fleet.checkpoint_s / 3600
    interval = fleet.interval_hours or young_daly_hours(delta_h, mtbf)
    expected = job * rate
    write = job / interval * delta_h
    rollback = expected * interval / 2
    restart = expected * fleet.restart_s / 3600
    lost = write + rollback + restart
    parts = tuple(
        {
            "part": p.name,
            "per": p.per,
            "units": units[p.per],
            "mttf_hours": getattr(fleet, f"{p.name}_mttf_hours"),  # None: not counted
            "failures_per_hour": rates[p.name],
            "share": rates[p.name] / rate,
            "causes": p.causes,
        }
        for p in PARTS
    )
    return FleetReliability(
        gpus=fleet.gpus,
        hosts=fleet.hosts,
        mtbf_hours=mtbf,
        failures_per_hour=rate,
        expected_failures=expected,
        failure_probability=-math.expm1(-job * rate),
        checkpoint_s=fleet.checkpoint_s,
        restart_s=fleet.restart_s,
        job_hours=job,
        checkpoint_interval_hours=interval,
        checkpoint_write_hours=write,
        rollback_hours=rollback,
        restart_hours=restart,
        lost_hours=lost,
        goodput=max(0.0, 1 - lost / job),
        parts=parts,
    )


def fleet_parts_frame(result: FleetReliability) -> pd.DataFrame:
    """`result.parts` as a table (CSV columns carry their units)."""
    import pandas as pd

    return pd.DataFrame(list(result.parts))
