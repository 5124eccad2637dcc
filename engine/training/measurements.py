"""Measured training runs, and the training model's prediction of each (docs/model.md,
"Training step"; data/measurements/README.md).

The shipped file is the Megatron-LM paper's Tables 1 and 2 (Narayanan et al. 2021, A100, GPT
models of 1.7B to 1T parameters, PTD-P and ZeRO-3), copied unchanged. What a row leaves out is
filled in here, each rule stated once:

- Micro-batch and interleaving of Table 1 (not printed): Megatron-LM's own reproduction script
  of that table (github.com/NVIDIA/Megatron-LM, examples/sc21/run_table_1.sh: MBS and
  --num-layers-per-virtual-pipeline-stage), by model size.
- Shapes of Table 2's models: 529.6B is Table 1's; 174.6B is GPT-3 175B (Brown et al. 2020,
  Table 2.1: 96 layers, d_model 12,288, 96 heads). Vocabulary 51,200 and sequence 2,048 as in
  the rows.
- Table 2's PTD-P rows give a "model-parallel size" N: tp = 8 (one DGX A100 node, as in every
  Table 1 row of that size) and pp = N/8; not interleaved (v = 1: the table does not say).
  ZeRO-3 rows: tp = pp = 1, ZeRO stage 3. Every run uses full recomputation (the rows say so).
- Attention is unfused (the 2021 code predates FlashAttention, Dao et al. 2022): the score
  matrices go through memory (engine/training/compute.py). A file with an `attention` column
  (flash or unfused) says it per row, an `fp8_recipe` column an fp8 row's scaling recipe
  (engine/training/numerics.py; empty: delayed, Transformer Engine's default).

The same schema holds MosaicML's llm-foundry benchmark tables (MPT models with FSDP on A100 and
H100, FlashAttention; data/measurements/README.md): their scheme is PyTorch FSDP's sharding
strategy (`FSDP`: FULL_SHARD as ZeRO-3, SHARD_GRAD_OP as ZeRO-2), their metric tokens/s per
GPU.

The paper's TFLOP/s per GPU count the recomputed forward pass (its Eq. 3: 96·B·s·l·h²·(1 + s/
(6h) + V/(16·l·h))), so they are predicted by `hardware_tflops_per_gpu`, which for these GPT
shapes is exactly Eq. 3 over the predicted step time (tests/test_train_published.py).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import numpy as np

from engine.catalog.arch import Architecture
from engine.catalog.profiles import DEFAULT_TRAINING_PROFILE
from engine.catalog.shapes import Shapes, shapes_of
from engine.files import echo, read_bounded, repeated
from engine.scenarios.training import RECOMPUTE, check_fp8_recipe, check_train_precision
from engine.training.config import make_config
from engine.training.gpt import gpt_architecture
from engine.training.kernel import evaluate
from engine.training.setup import fold

MAX_RUNS_BYTES = 1_000_000  # a training measurements file is a few kB

MEASUREMENTS_DIR = Path(__file__).resolve().parents[2] / "data" / "measurements" / "training"
MEGATRON_FILE = MEASUREMENTS_DIR / "megatron-2104.04473-training.csv"
METRICS = {  # measured metric -> predicted key
    "tflops_per_gpu": "hardware_tflops_per_gpu",
    "tokens_per_s_per_gpu": "tokens_per_s_per_gpu",
}
# PyTorch FSDP's sharding strategies as ZeRO stages (Zhao et al. 2023, PyTorch FSDP): FULL_SHARD
# shards parameters, gradients and optimizer state (ZeRO-3), SHARD_GRAD_OP gradients and
# optimizer state (ZeRO-2)
FSDP = {"FSDP FULL_SHARD": 3, "FSDP SHARD_GRAD_OP": 2}
# examples/sc21/run_table_1.sh: model size -> (micro-batch, layers per virtual stage or None)
SC21_TABLE_1 = {
    1.7: (16, None),
    3.6: (16, None),
    7.5: (16, None),
    18.4: (8, None),
    39.1: (4, None),
    76.1: (2, 5),
    145.6: (2, 5),
    310.1: (1, 3),
    529.6: (1, 1),
    1008.0: (1, None),
}
GPT3_175B = {174.6: (96, 12288, 96)}  # Brown et al. 2020, Table 2.1 (layers, hidden, heads)
NODE = 8  # GPUs per DGX A100 node: Table 2's tensor-parallel size
ATTENTION_2021 = "unfused"  # Megatron-LM in 2021: scale-mask-softmax kernels, no FlashAttention


@dataclass(frozen=True, slots=True)
class TrainingRun:
    """One measured row with everything the model needs (filled-in values listed)."""

    file: str
    row: int  # 1 = the first data row
    table: str
    scheme: str
    hardware: str
    precision: str
    fp8_recipe: str | None  # an fp8 row's scaling recipe (None: 16-bit)
    arch: Architecture
    gpus: int
    tp: int
    pp: int
    vp: int
    micro_batch: int
    global_batch: int
    seq_len: int
    recompute: str
    zero: int
    attention: str  # flash or unfused
    metric: str
    value: float
    filled: str  # what the row left out and this module assumed

    def describe(self) -> str:
        return (
            f"{self.table}, {self.scheme}, {self.arch.layers}-layer h={self.arch.hidden} "
            f"on {self.gpus:,} {self.hardware} (tp {self.tp}, pp {self.pp}, v {self.vp}, "
            f"b {self.micro_batch}, B {self.global_batch})"
        )


def _int(text: str) -> int | None:
    return int(text) if text.strip() else None


def _shapes(row: dict, table1: dict) -> tuple[int, int, int]:
    size = float(row["params_b"])
    if row["layers"].strip():
        return int(row["layers"]), int(row["hidden"]), int(row["heads"])
    if size in table1:
        return table1[size]
    if size in GPT3_175B:
        return GPT3_175B[size]
    raise ValueError(f"{row['table']}: no shapes known for a {size}B model")


def _layout(row: dict, layers: int) -> tuple[int, int, int, int, int, str]:
    """(tp, pp, vp, micro-batch, zero, what was filled in) of one row."""
    size, mb = float(row["params_b"]), _int(row["micro_batch"])
    if row["scheme"] == "ZeRO-3":
        return 1, 1, 1, mb, 3, "tp = pp = 1, ZeRO-3"
    if row["scheme"] in FSDP:
        zero = FSDP[row["scheme"]]
        return 1, 1, 1, mb, zero, f"tp = pp = 1, {row['scheme']} read as ZeRO-{zero}"
    if row["tp"].strip():
        tp, pp = int(row["tp"]), int(row["pp"])
        script_mb, per_virtual = SC21_TABLE_1[size]
        vp = layers // (pp * per_virtual) if per_virtual else 1
        return tp, pp, vp, script_mb, 0, f"micro-batch {script_mb}, v {vp} (sc21 script)"
    size_mp = int(row["note"].split("model-parallel size")[1].split(";")[0])
    return NODE, size_mp // NODE, 1, mb, 0, f"tp {NODE}, pp {size_mp // NODE}, v 1"


def read_runs(path: str | Path = MEGATRON_FILE) -> list[TrainingRun]:
    """The rows of a training measurements file (the Megatron-LM schema), filled in."""
    path = Path(path)
    data = read_bounded(path, MAX_RUNS_BYTES, path.name)
    try:
        reader = csv.DictReader(io.StringIO(data.decode("utf-8-sig"), newline=""))
        header = [h.strip() for h in reader.fieldnames or []]
        twice = repeated(header)
        rows = list(reader)
    except (UnicodeDecodeError, csv.Error) as exc:
        raise ValueError(f"{path.name}: not a readable CSV file ({exc})") from None
    if twice:  # csv keeps the last of two cells silently
        raise ValueError(
            f"{path.name}: column {echo(twice[0])} is given {header.count(twice[0])} times "
            "(give each column once)"
        )
    try:
        return _runs(path.name, rows)
    except (ValueError, KeyError, IndexError, TypeError, AttributeError) as exc:
        # a short row (cells None), a missing column, a cell that is not a number
        raise ValueError(
            f"{path.name}: not a training measurements file the engine reads "
            f"({type(exc).__name__}: {str(exc)[:120]})"
        ) from None


def _runs(name: str, rows: list[dict]) -> list[TrainingRun]:
    table1 = {
        float(r["params_b"]): (int(r["layers"]), int(r["hidden"]), int(r["heads"]))
        for r in rows
        if r["layers"].strip()
    }
    runs = []
    for i, row in enumerate(rows, 1):
        layers, hidden, heads = _shapes(row, table1)
        tp, pp, vp, mb, zero, filled = _layout(row, layers)
        arch = gpt_architecture(
            layers=layers,
            hidden=hidden,
            heads=heads,
            vocab=int(row["vocab"]),
            seq_len=int(row["seq_len"]),
        )
        runs.append(
            TrainingRun(
                file=name,
                row=i,
                table=row["table"],
                scheme=row["scheme"],
                hardware=row["hardware"],
                precision=row["precision"],
                fp8_recipe=check_fp8_recipe(
                    (row.get("fp8_recipe") or "").strip() or None, row["precision"]
                ),
                arch=arch,
                gpus=int(row["gpus"]),
                tp=tp,
                pp=pp,
                vp=vp,
                micro_batch=mb,
                global_batch=int(row["global_batch"]),
                seq_len=int(row["seq_len"]),
                recompute=row["recompute"],
                zero=zero,
                attention=(row.get("attention") or ATTENTION_2021).strip(),
                metric=row["metric"],
                value=float(row["value"]),
                filled=filled,
            )
        )
    return runs


def predict(runs: Iterable[TrainingRun], assumptions) -> np.ndarray:
    """Each run's metric under `assumptions` (a training profile's), in one kernel call per
    accelerator and precision."""
    return predict_many(runs, (assumptions,))[0]


class _PerRow(NamedTuple):
    """The assumptions the training kernel reads itself, one value per row (`predict_many`)."""

    overlap_fraction: object
    expert_overlap: object
    tp_overlap: object
    attention_backward_factor: object
    expert_imbalance: object


def predict_many(runs: Iterable[TrainingRun], many: Sequence) -> np.ndarray:
    """`predict` under each of `many` assumptions at once (a line each): each group's runs are
    repeated once per assumptions and go through the kernel in one call. The kernel's arithmetic
    is elementwise, so every line equals `predict(runs, a)` to the last bit (a fit's
    finite-difference Jacobian asks for one point per parameter)."""
    runs = list(runs)
    k = len(many)
    out = np.full((k, len(runs)), np.nan)
    groups: dict[tuple, list[int]] = {}
    for i, r in enumerate(runs):
        groups.setdefault((r.hardware, r.precision, r.fp8_recipe, r.attention), []).append(i)
    for (hardware, precision, recipe, attention), idx in groups.items():
        setups = [
            fold(
                model=runs[idx[0]].arch,
                hardware=hardware,
                precision=check_train_precision(precision),
                assumptions=a,
                profile=DEFAULT_TRAINING_PROFILE,
                catalog=None,
                fp8_recipe=recipe,
                attention=attention,
            )
            for a in many
        ]
        rs = [runs[i] for i in idx] * k
        kernel_reads = [_PerRow(*(getattr(a, f) for f in _PerRow._fields)) for a in many]
        t = evaluate(
            s=Shapes.stack([shapes_of(r.arch) for r in rs]),
            c=_config(rs),
            dev=_per_row([st.dev for st in setups], len(idx)),
            links=_per_row([st.links for st in setups], len(idx)),
            eta=_per_row([st.eta for st in setups], len(idx)),
            a=setups[0].assumptions if k == 1 else _per_row(kernel_reads, len(idx)),
            num=setups[0].numerics,
        )
        for j, (i, r) in enumerate(zip(idx * k, rs, strict=True)):
            out[j // len(idx), i] = t[METRICS[r.metric]][j]
    return out


def _per_row(items: list, rows: int):
    """A NamedTuple of `items`' type whose every field holds item i's value on rows
    i·rows … (i + 1)·rows − 1; the item itself when there is one."""
    if len(items) == 1:
        return items[0]
    return type(items[0])(
        *(np.repeat(np.array(column), rows) for column in zip(*items, strict=True))
    )


def _config(rs: list[TrainingRun]):
    return make_config(
        gpus=[r.gpus for r in rs],
        tp=[r.tp for r in rs],
        pp=[r.pp for r in rs],
        cp=1.0,
        vp=[r.vp for r in rs],
        ep=1.0,
        micro_batch=[r.micro_batch for r in rs],
        global_batch=[r.global_batch for r in rs],
        seq_len=[r.seq_len for r in rs],
        zero=[r.zero for r in rs],
        recompute=[RECOMPUTE.index(r.recompute) for r in rs],
    )
