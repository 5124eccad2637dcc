"""`FleetParts`: the parts of a training cluster that fail, how often, and what a failure costs.

A cluster is `gpus` GPUs in hosts of `gpus_per_host`. Each kind of part has a mean time to
failure (MTTF, hours) of one unit and is counted per GPU (the GPU itself, its HBM, its NIC, the
software on its rank) or per host (the host, its power supplies, the network switches and cables
that serve it). By default only the GPU is counted, at the tutorial's MTTF (MLSys·im's 50,000 h,
tutorial 06): the repository ships no per-part failure table, so every other part is "not
counted" (None) until its MTTF is given (a team's own failure records, for instance). A
checkpoint takes `checkpoint_s` to write; a failure costs `restart_s` to restart (reload,
relaunch, warm up) plus the work since the last checkpoint. docs/model.md, "Reliability of a
fleet".
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

from engine.checks import check_whole
from engine.scenarios.bind import Fields
from engine.scenarios.training import CHECKPOINT_S, GPU_MTTF_HOURS, JOB_HOURS, check_positive

RESTART_S = 300.0  # the tutorial library's average recovery (reload, restart, warm-up)
RESTART_SOURCE = "MLSys·im ReliabilityModel, avg_recovery_time_s default (harvard-edge/cs249r_book)"
RESTART_URL = "https://github.com/harvard-edge/cs249r_book/tree/dev/mlsysim"
MAX_GPUS = 10_000_000


@dataclass(frozen=True)
class Part:
    """One kind of part: its name, what it is counted per ("gpu" or "host"), what it stands
    for, and the default MTTF of one unit (hours; None: not counted)."""

    name: str
    per: str
    causes: str
    mttf_hours: float | None = None


PARTS = (
    Part(
        name="gpu",
        per="gpu",
        causes="the GPU (die, SRAM, system processor, thermal, silent data corruption)",
        mttf_hours=GPU_MTTF_HOURS,
    ),
    Part(name="hbm", per="gpu", causes="HBM memory"),
    Part(name="nic", per="gpu", causes="network card"),
    Part(name="software", per="gpu", causes="software bugs, collective timeouts, dependencies"),
    Part(name="switch", per="host", causes="network switches and cables"),
    Part(name="host", per="host", causes="host: CPU, memory, SSD, chassis, maintenance"),
    Part(name="psu", per="host", causes="power supply"),
)
BY_NAME = {p.name: p for p in PARTS}


@dataclass(frozen=True)
class FleetParts(Fields):
    """A cluster's size, each part's MTTF (hours, one unit) and the checkpoint costs.

    Attributes:
        gpus: GPUs in the cluster; gpus_per_host: GPUs per host (hosts = ceil(gpus / that)).
        gpu_mttf_hours ... psu_mttf_hours: the MTTF of one unit of each part (PARTS; None: the
            part is not counted).
        checkpoint_s: the time to write one checkpoint; restart_s: to recover from a failure.
        job_hours: the job's length; interval_hours: the checkpoint interval (None: Young-Daly).
    """

    gpus: int = 512
    gpus_per_host: int = 8
    gpu_mttf_hours: float | None = BY_NAME["gpu"].mttf_hours
    hbm_mttf_hours: float | None = BY_NAME["hbm"].mttf_hours
    nic_mttf_hours: float | None = BY_NAME["nic"].mttf_hours
    software_mttf_hours: float | None = BY_NAME["software"].mttf_hours
    switch_mttf_hours: float | None = BY_NAME["switch"].mttf_hours
    host_mttf_hours: float | None = BY_NAME["host"].mttf_hours
    psu_mttf_hours: float | None = BY_NAME["psu"].mttf_hours
    checkpoint_s: float = CHECKPOINT_S
    restart_s: float = RESTART_S
    job_hours: float = JOB_HOURS
    interval_hours: float | None = None

    ARG: ClassVar[str] = "fleet"

    def __post_init__(self) -> None:
        object.__setattr__(self, "gpus", check_whole(self.gpus, "gpus", high=MAX_GPUS))
        per_host = check_whole(self.gpus_per_host, "gpus_per_host", high=1024)
        object.__setattr__(self, "gpus_per_host", per_host)
        for name in [f"{p.name}_mttf_hours" for p in PARTS]:
            if getattr(self, name) is not None:  # None: the part is not counted
                object.__setattr__(self, name, check_positive(name, getattr(self, name)))
        if all(getattr(self, f"{p.name}_mttf_hours") is None for p in PARTS):
            raise ValueError("FleetParts: give the MTTF of at least one part")
        for name in ("checkpoint_s", "job_hours"):
            object.__setattr__(self, name, check_positive(name, getattr(self, name)))
        if not (isinstance(self.restart_s, int | float) and 0 <= self.restart_s < 1e9):
            raise ValueError(f"restart_s: must be 0 or more seconds, got {self.restart_s!r}")
        object.__setattr__(self, "restart_s", float(self.restart_s))
        if self.interval_hours is not None:
            interval = check_positive("interval_hours", self.interval_hours)
            object.__setattr__(self, "interval_hours", interval)

    @property
    def hosts(self) -> int:
        return -(-self.gpus // self.gpus_per_host)

    def mttf(self, part: str) -> float:
        """The MTTF (hours) of one unit of `part` (infinite when it is not counted)."""
        value = getattr(self, f"{part}_mttf_hours")
        return math.inf if value is None else value
