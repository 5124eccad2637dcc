"""The measured kernel tables the curves are fitted to: where they are and how to read them.

aiconfigurator (https://github.com/ai-dynamo/aiconfigurator) ships, per GPU, operator, serving
stack and stack release, the latencies it measured of single kernels:
`aic-core/src/aiconfigurator_core/systems/data/<gpu>/<family>/<stack>/<version>/<table>.parquet`
(gemm_perf, generation_attention_perf, context_attention_perf, custom_allreduce_perf,
nccl_perf, moe_perf). Only these kernel tables are read: nothing outside `systems/data/`
(its end-to-end samples stay held back). The tables are read from a checkout's `systems/data`
directory or straight from a bare git mirror (`git ls-tree`, `git cat-file`), which also gives
the commit every curve cites. Nothing read here is written to the repository.
"""

from __future__ import annotations

import io
import subprocess
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import pandas as pd
from packaging.version import InvalidVersion, Version

REPOSITORY = "https://github.com/ai-dynamo/aiconfigurator"
DATA_PREFIX = "aic-core/src/aiconfigurator_core/systems/data"
# aiconfigurator's GPU directory -> this project's accelerator id (data/hardware.toml).
ACCELERATORS = {
    "a100_sxm": "A100",
    "h100_sxm": "H100",
    "h200_sxm": "H200",
    "b200_sxm": "B200",
    "b300_sxm": "B300",
    "gb200": "GB200",
    "gb300": "GB300",
    "l40s": "L40S",
    "rtx_pro_6000_server": "RTX-PRO-6000",
}
STACKS = ("trtllm", "vllm", "sglang")
# The kernel tables read, by the operator family directory they live in.
TABLES = {
    "gemm_perf": "gemm",
    "generation_attention_perf": "attention",
    "context_attention_perf": "attention",
    "custom_allreduce_perf": "comm",
    "nccl_perf": "comm",
    "moe_perf": "moe",
}


@dataclass(frozen=True, slots=True)
class TableFile:
    """One measured table: which GPU, stack and release, and its path in the repository."""

    gpu: str
    stack: str  # trtllm | vllm | sglang | nccl
    version: str
    table: str  # gemm_perf, ...
    path: str  # repository path, from the repository root

    @property
    def accelerator(self) -> str:
        return ACCELERATORS[self.gpu]


def version_key(text: str) -> tuple:
    """Releases in order: 1.3.0rc5 < 1.3.0rc20 < 1.3.0; 0.5.6.post2 > 0.5.6."""
    try:
        return (1, Version(text))
    except InvalidVersion:
        return (0, text)


class Tables:
    """The tables of a checkout (`…/systems/data`) or of a bare git mirror (its HEAD)."""

    def __init__(self, location: str | Path) -> None:
        self.root = Path(location)
        self.is_git = (self.root / "HEAD").is_file() and (self.root / "objects").is_dir()
        if not self.is_git and not self.root.is_dir():
            raise ValueError(f"{location}: neither a systems/data directory nor a git mirror")

    @cached_property
    def commit(self) -> str:
        """The commit the tables come from (a checkout: its repository's HEAD, if any)."""
        where = self.root if self.is_git else self.root.resolve()
        run = subprocess.run(
            ["git", "-C", str(where), "rev-parse", "HEAD"], capture_output=True, text=True
        )
        if run.returncode:
            raise ValueError(f"{self.root}: cannot tell the commit of these tables")
        return run.stdout.strip()

    def _paths(self) -> list[str]:
        if self.is_git:
            run = subprocess.run(
                ["git", "-C", str(self.root), "ls-tree", "-r", "--name-only", "HEAD", DATA_PREFIX],
                capture_output=True,
                text=True,
                check=True,
            )
            return run.stdout.split()
        return [f"{DATA_PREFIX}/{p.relative_to(self.root)}" for p in self.root.rglob("*.parquet")]

    @cached_property
    def files(self) -> tuple[TableFile, ...]:
        """Every kernel table of the accelerators and stacks this project fits."""
        found = []
        for path in self._paths():
            parts = path[len(DATA_PREFIX) + 1 :].split("/")
            if len(parts) != 5 or not parts[4].endswith(".parquet"):
                continue
            gpu, family, stack, version, name = parts
            table = name.removesuffix(".parquet")
            if gpu in ACCELERATORS and TABLES.get(table) == family:
                found.append(
                    TableFile(gpu=gpu, stack=stack, version=version, table=table, path=path)
                )
        return tuple(found)

    def latest(self, gpu: str, stack: str, table: str) -> TableFile | None:
        """The newest release of `stack` that measured `table` on `gpu`, if any."""
        mine = [f for f in self.files if (f.gpu, f.stack, f.table) == (gpu, stack, table)]
        return max(mine, key=lambda f: version_key(f.version), default=None)

    def read(self, file: TableFile) -> pd.DataFrame:
        """The table's rows."""
        if self.is_git:
            blob = subprocess.run(
                ["git", "-C", str(self.root), "cat-file", "blob", f"HEAD:{file.path}"],
                capture_output=True,
                check=True,
            ).stdout
            return pd.read_parquet(io.BytesIO(blob))
        return pd.read_parquet(self.root / file.path[len(DATA_PREFIX) + 1 :])

    def url(self, file: TableFile) -> str:
        """The file at the commit, on GitHub."""
        return f"{REPOSITORY}/blob/{self.commit}/{file.path}"
