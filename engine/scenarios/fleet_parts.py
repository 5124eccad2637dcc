"""`FleetParts`: the parts of a training cluster that fail, how often, and what a failure costs.

A cluster is `gpus` GPUs in hosts of `gpus_per_host`. Each kind of part has a mean time to
failure (MTTF, hours) of one unit and is counted per GPU (the GPU itself, its HBM, its NIC, the
software on its rank) or per host (the host, its power supplies, the network switches and cables
that serve it). The defaults are the unexpected interruptions Meta counted in a 54-day snapshot
of Llama 3 405B pre-training on 16,384 H100 GPUs in 2,048 hosts (Llama Team, "The Llama 3 Herd
of Models", arXiv 2407.21783, 2024, section 3.3.4 and its table of root causes), each turned
into the MTTF of one unit: MTTF = units in that cluster × 1,296 h ÷ interruptions. A checkpoint
takes `checkpoint_s` to write; a failure costs `restart_s` to restart (reload, relaunch, warm
up) plus the work since the last checkpoint. docs/model.md, "Reliability of a fleet".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from engine.checks import check_whole
from engine.scenarios.bind import Fields
from engine.scenarios.training import CHECKPOINT_S, JOB_HOURS, check_positive

LLAMA3_GPUS = 16_384  # H100 GPUs in the Llama 3 405B pre-training cluster
LLAMA3_HOSTS = 2_048  # 8 GPUs per host
LLAMA3_HOURS = 54 * 24.0  # the 54-day snapshot
LLAMA3_SOURCE = (
    "Llama Team, AI @ Meta, 'The Llama 3 Herd of Models', arXiv 2407.21783 (2024), "
    "section 3.3.4, root causes of 419 unexpected interruptions in 54 days on 16,384 H100"
)
LLAMA3_URL = "https://arxiv.org/abs/2407.21783"
RESTART_S = 300.0  # the tutorial library's average recovery (reload, restart, warm-up)
RESTART_SOURCE = "MLSys·im ReliabilityModel, avg_recovery_time_s default (harvard-edge/cs249r_book)"
RESTART_URL = "https://github.com/harvard-edge/cs249r_book/tree/dev/mlsysim"
MAX_GPUS = 10_000_000


@dataclass(frozen=True)
class Part:
    """One kind of part: its name, what it is counted per ("gpu" or "host"), the root-cause
    categories and interruption count it stands for, and the MTTF of one unit (hours)."""

    name: str
    per: str
    causes: str
    interruptions: int

    @property
    def mttf_hours(self) -> float:
        units = LLAMA3_GPUS if self.per == "gpu" else LLAMA3_HOSTS
        return units * LLAMA3_HOURS / self.interruptions


PARTS = (  # the Llama 3 table's 419 unexpected interruptions, grouped by part
    Part(
        name="gpu",
        per="gpu",
        causes="faulty GPU 148, GPU SRAM 19, GPU system processor 17, thermal interface and "
        "sensor 6, silent data corruption 6",
        interruptions=196,
    ),
    Part(name="hbm", per="gpu", causes="GPU HBM3 memory 72", interruptions=72),
    Part(name="nic", per="gpu", causes="NIC 7", interruptions=7),
    Part(
        name="software",
        per="gpu",
        causes="software bug 54, NCCL watchdog timeouts 7, dependency 2",
        interruptions=63,
    ),
    Part(name="switch", per="host", causes="network switch and cable 35", interruptions=35),
    Part(
        name="host",
        per="host",
        causes="host maintenance 32, SSD 3, server chassis 2, IO expansion board 2, CPU 2, "
        "system memory 2",
        interruptions=43,
    ),
    Part(name="psu", per="host", causes="power supply 3", interruptions=3),
)
BY_NAME = {p.name: p for p in PARTS}


@dataclass(frozen=True)
class FleetParts(Fields):
    """A cluster's size, each part's MTTF (hours, one unit) and the checkpoint costs.

    Attributes:
        gpus: GPUs in the cluster; gpus_per_host: GPUs per host (hosts = ceil(gpus / that)).
        gpu_mttf_hours ... psu_mttf_hours: the MTTF of one unit of each part (PARTS).
        checkpoint_s: the time to write one checkpoint; restart_s: to recover from a failure.
        job_hours: the job's length; interval_hours: the checkpoint interval (None: Young-Daly).
    """

    gpus: int = 512
    gpus_per_host: int = 8
    gpu_mttf_hours: float = BY_NAME["gpu"].mttf_hours
    hbm_mttf_hours: float = BY_NAME["hbm"].mttf_hours
    nic_mttf_hours: float = BY_NAME["nic"].mttf_hours
    software_mttf_hours: float = BY_NAME["software"].mttf_hours
    switch_mttf_hours: float = BY_NAME["switch"].mttf_hours
    host_mttf_hours: float = BY_NAME["host"].mttf_hours
    psu_mttf_hours: float = BY_NAME["psu"].mttf_hours
    checkpoint_s: float = CHECKPOINT_S
    restart_s: float = RESTART_S
    job_hours: float = JOB_HOURS
    interval_hours: float | None = None

    ARG: ClassVar[str] = "fleet"

    def __post_init__(self) -> None:
        object.__setattr__(self, "gpus", check_whole(self.gpus, "gpus", high=MAX_GPUS))
        per_host = check_whole(self.gpus_per_host, "gpus_per_host", high=1024)
        object.__setattr__(self, "gpus_per_host", per_host)
        names = [f"{p.name}_mttf_hours" for p in PARTS] + ["checkpoint_s", "job_hours"]
        for name in names:
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
        """The MTTF (hours) of one unit of `part`."""
        return getattr(self, f"{part}_mttf_hours")
