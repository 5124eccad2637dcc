"""A training prediction's error band: the public runs it is checked on out of sample and
the band built on them, widened off the fitted ground (docs/model.md, "Training: published
ceilings and bands"). The published MFU ceilings are engine/training/ground.py's.

**Public checks.** data/measurements/training/public-h100-training.csv: two H100 runs
(torchtitan's Llama 3.1 8B and 405B), predicted by
the profile as it is (nothing fitted to them): their MAPE is the profile's out-of-sample error
on Hopper with FlashAttention.

**Bands.** On the fitted ground (the calibration runs' accelerators, precisions and attention
kernel, dense models) the band is the larger of the leave-one-run-out and leave-one-table-out
MAPE. Off it, each difference is named beside the number; on Hopper the band is at least the
public checks' MAPE, and for fp8 under delayed scaling at least the MAPE on the measured H100
fp8 runs of the profile's own stack (FILE_STACKS: Megatron's MLPerf runs or FSDP's llm-foundry
runs; the other stack's error is named beside it, and with no stack of its own a profile takes
the larger); where nothing measured covers the difference (another generation, another fp8
recipe, MoE) the band is a floor, and says so.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from engine.accuracy.bands import Band
from engine.catalog.profiles import Profile, get_training_profile
from engine.files import read_bounded
from engine.report.messages import Message, MessageKind
from engine.scenarios.training import TrainRun
from engine.training.ground import (
    ABOVE_CEILING,
    ABOVE_FP8_CEILING,
    CEILING_BORROWED,
    generation_of,
)

if TYPE_CHECKING:
    import pandas as pd

PUBLIC_FILE = (
    Path(__file__).resolve().parents[2] / "data/measurements/training/public-h100-training.csv"
)
MAX_PUBLIC_BYTES = 100_000


@dataclass(frozen=True, slots=True)
class PublicRun:
    """One public training run: the layout as `train` takes it, the measured metric."""

    model: str
    hardware: str
    fields: dict
    metric: str
    value: float
    source: str


def read_public(path: str | Path = PUBLIC_FILE) -> list[PublicRun]:
    """The public runs of a CSV in the shipped file's columns."""
    rows = csv.DictReader(io.StringIO(read_bounded(path, MAX_PUBLIC_BYTES).decode("utf-8")))
    counts = ("gpus", "tp", "pp", "cp", "vp", "zero")
    out = []
    for row in rows:
        fields = {k: int(row[k]) for k in counts}
        fields |= {
            "micro_batch_size": int(row["micro_batch"]),
            "global_batch_size": int(row["global_batch"]),
            "seq_len": int(row["seq_len"]),
            "precision": row["precision"],
            "recompute": row["recompute"],
            "attention": row["attention"],
            "first_stage_layers": int(row["first_stage_layers"]) or None,
            "last_stage_layers": int(row["last_stage_layers"]) or None,
        }
        # optional columns: an fp8 run's recipe and weight gathers, the run's TP overlap
        if (row.get("fp8_recipe") or "").strip():
            fields["fp8_recipe"] = row["fp8_recipe"].strip()
        if (row.get("fp8_param_gather") or "").strip():
            fields["fp8_param_gather"] = row["fp8_param_gather"].strip().lower() == "true"
        if (row.get("tp_overlap") or "").strip():
            fields["tp_overlap"] = float(row["tp_overlap"])
        out.append(
            PublicRun(
                model=row["model"],
                hardware=row["hardware"],
                fields=fields,
                metric=row["metric"],
                value=float(row["value"]),
                source=row["source"],
            )
        )
    return out


def _predicted(run: PublicRun, profile: str | Profile) -> float:
    """The profile's prediction of a public run's metric (as `train` names it)."""
    from engine.training.train import train  # train's module reads this one

    return float(train(run.model, run.hardware, profile=profile, **run.fields)[run.metric])


def public_errors(profile: str | Profile, path: str | Path = PUBLIC_FILE) -> list[float]:
    """Signed relative error (%) of the profile's prediction of each public run of `path`."""
    return [100.0 * (_predicted(run, profile) / run.value - 1.0) for run in read_public(path)]


@lru_cache(maxsize=8)
def _public_mape(name: str) -> float:
    errors = public_errors(name)
    return sum(abs(e) for e in errors) / len(errors)


# Ampere's public check: llm-foundry's A100 runs (FSDP, FlashAttention, BF16), in the training
# measurements' schema, fitted by no shipped profile
AMPERE_FILE = "llm-foundry-a100-bf16-training.csv"


@lru_cache(maxsize=8)
def _ampere_mape(name: str) -> tuple[float, int]:
    return _file_errors(get_training_profile(name), AMPERE_FILE)


def _file_errors(profile: Profile, file: str) -> tuple[float, int]:
    """(MAPE %, runs) of a profile on a shipped training measurements file."""
    from engine.training.measurements import MEASUREMENTS_DIR, predict, read_runs

    runs = read_runs(MEASUREMENTS_DIR / file)
    predicted = predict(runs, profile.assumptions)
    errors = [abs(p / r.value - 1.0) * 100.0 for p, r in zip(predicted, runs, strict=True)]
    return sum(errors) / len(errors), len(errors)


def public_check(profile: str | Profile, generation: str) -> tuple[float, int, str] | None:
    """(MAPE %, runs, file) of a profile on the public 16-bit FlashAttention runs of
    `generation` that it was not fitted on: torchtitan's H100 runs for Hopper, llm-foundry's
    A100 runs for Ampere; None for another generation."""
    prof = get_training_profile(profile)
    if generation == "Hopper":
        return public_mape(profile), len(read_public()), PUBLIC_FILE.name
    if generation == "Ampere" and AMPERE_FILE not in prof.fitted_on:
        built_in = prof.origin == "built-in"
        mape, n = _ampere_mape(prof.name) if built_in else _file_errors(prof, AMPERE_FILE)
        return mape, n, AMPERE_FILE
    return None


# fp8's check on Hopper: llm-foundry's H100 fp8 runs (FSDP, FlashAttention, Transformer Engine's
# delayed scaling), in the training measurements' schema, fitted by no shipped profile
FP8_FILE = "llm-foundry-h100-fp8-training.csv"


@lru_cache(maxsize=8)
def _fp8_mape(name: str) -> tuple[float, int]:
    return _file_errors(get_training_profile(name), FP8_FILE)


# fp8's second check on Hopper: MLPerf Training's H100 runs of NVIDIA's NeMo (Megatron-Core,
# Transformer Engine's delayed scaling, TP overlap), in the public runs' schema
MLPERF_FILE = PUBLIC_FILE.parent / "mlperf-training-hopper-fp8.csv"


def mlperf_errors(profile: str | Profile) -> list[float]:
    """Signed relative error (%) of the profile's prediction of each MLPerf Training H100 run."""
    return public_errors(profile, MLPERF_FILE)


@lru_cache(maxsize=8)
def _mlperf_mape(name: str) -> tuple[float, int]:
    errors = mlperf_errors(name)
    return sum(abs(e) for e in errors) / len(errors), len(errors)


# metric of a public run -> its unit
CHECK_UNITS = {"step_time_s": "s", "tokens_per_s_per_gpu": "tokens/s per GPU", "mfu": "fraction"}
CHECK_COLUMNS = ("gpus", "tp", "pp", "cp", "vp", "micro_batch_size", "global_batch_size")
CHECK_COLUMNS += ("seq_len", "precision", "recompute", "zero")


def check_rows(profile: str | Profile) -> pd.DataFrame:
    """The public runs that check the training profiles out of sample (torchtitan's H100 runs,
    MLPerf Training's Hopper runs; no shipped profile is fitted on them), each measured against
    the profile's prediction, with its file's stack (FILE_STACKS), the run's TP overlap and its
    source: the numbers behind `public_mape` and the fp8 check."""
    import pandas as pd  # loaded on first use, keeping `import engine` fast

    rows = []
    for path in (PUBLIC_FILE, MLPERF_FILE):
        for run in read_public(path):
            predicted = _predicted(run, profile)
            rows.append(
                {"file": path.name, "stack": FILE_STACKS[path.name]}
                | {"model": run.model, "hardware": run.hardware}
                | {k: run.fields[k] for k in CHECK_COLUMNS}
                | {
                    "tp_overlap": run.fields.get("tp_overlap", 0.0),
                    "metric": run.metric,
                    "unit": CHECK_UNITS[run.metric],
                    "measured": run.value,
                    "predicted": predicted,
                    "error_pct": 100.0 * (predicted / run.value - 1.0),
                    "source": run.source,
                }
            )
    return pd.DataFrame(rows)


# The training stack each shipped measurement file's runs ran on: Megatron (Megatron-LM's
# tensor, pipeline and data parallelism; NeMo on Megatron-Core) or FSDP (PyTorch's sharded data
# parallelism: llm-foundry on Composer, torchtitan). A profile's stack is its fitted files'.
# The 2021 paper's file is Megatron's: 16 of its 22 runs are Megatron-LM's PTD-P, the other 6
# the ZeRO-3 runs its Table 2 compares them with.
FILE_STACKS = {
    "megatron-2104.04473-training.csv": "Megatron",
    MLPERF_FILE.name: "Megatron",
    "llm-foundry-a100-bf16-training.csv": "FSDP",
    "llm-foundry-h100-bf16-training.csv": "FSDP",
    FP8_FILE: "FSDP",
    PUBLIC_FILE.name: "FSDP",
}


def profile_stack(profile: str | Profile) -> str | None:
    """The stack of the runs a profile was fitted on (FILE_STACKS), or None: fitted on no
    shipped file, or on files of several stacks."""
    stacks = {FILE_STACKS.get(f) for f in get_training_profile(profile).fitted_on}
    return stacks.pop() if len(stacks) == 1 else None


class Check(NamedTuple):
    """A profile's error on one set of measured runs it was not fitted on."""

    mape: float  # %
    runs: int
    file: str
    stack: str

    @property
    def measured(self) -> tuple[float, int, str]:
        """(MAPE %, runs, file): the form the band's reasons read."""
        return self.mape, self.runs, self.file


def fp8_checks(profile: str | Profile, generation: str, recipe: str | None) -> list[Check]:
    """The profile's errors on the measured fp8 runs of `generation` under `recipe` that it was
    not fitted on, one per stack: llm-foundry's H100 runs (FSDP) and MLPerf Training's (NeMo on
    Megatron-Core), both delayed scaling, for Hopper; none otherwise."""
    prof = get_training_profile(profile)
    if generation != "Hopper" or recipe != "delayed":
        return []
    built_in = prof.origin == "built-in"
    checks = []
    if FP8_FILE not in prof.fitted_on:
        mape, n = _fp8_mape(prof.name) if built_in else _file_errors(prof, FP8_FILE)
        checks.append(Check(mape=mape, runs=n, file=FP8_FILE, stack=FILE_STACKS[FP8_FILE]))
    if MLPERF_FILE.name not in prof.fitted_on:
        if built_in:
            mape, n = _mlperf_mape(prof.name)
        else:
            errors = mlperf_errors(prof)
            mape, n = sum(abs(e) for e in errors) / len(errors), len(errors)
        stack = FILE_STACKS[MLPERF_FILE.name]
        checks.append(Check(mape=mape, runs=n, file=MLPERF_FILE.name, stack=stack))
    return checks


def own_stack(checks: list[Check], stack: str | None) -> tuple[Check | None, list[Check]]:
    """The check that sets a profile's band and the others: the largest error on runs of the
    profile's own stack, the others reported beside it; without one (or without a stack), the
    largest of all, as no stack is known to be the run's."""
    mine = [c for c in checks if c.stack == stack]
    if not mine:
        return (max(checks) if checks else None), []
    return max(mine), [c for c in checks if c.stack != stack]


def fp8_check(
    profile: str | Profile, generation: str, recipe: str | None
) -> tuple[float, int, str] | None:
    """(MAPE %, runs, file) of the fp8 check that sets the profile's band (`fp8_checks`,
    `own_stack`); None where no fp8 run of `generation` under `recipe` is measured."""
    chosen, _ = own_stack(fp8_checks(profile, generation, recipe), profile_stack(profile))
    return None if chosen is None else chosen.measured


def public_mape(profile: str | Profile) -> float:
    """The profile's MAPE (%) on the public H100 runs (a named profile's is computed once)."""
    if isinstance(profile, str):
        return _public_mape(get_training_profile(profile).name)
    errors = public_errors(profile)
    return sum(abs(e) for e in errors) / len(errors)


BASIS = MessageKind(
    "train_band_larger_of_both",
    "the larger of the leave-one-run-out ({row}) and leave-one-table-out ({table}) MAPE on "
    "{rows} runs of {files}",
)
BASIS_ROW = MessageKind(
    "train_band_row_only", "the leave-one-run-out MAPE on {rows} runs of {files}"
)
NOT_MEASURED = MessageKind("train_band_not_measured", "not measured (a hand-set training profile)")
OFF_GENERATION_MEASURED = MessageKind(
    "train_off_generation_measured",
    "{generation} is not the fitted {fitted}: the band is at least the {mape} MAPE on {n} "
    "public {generation} runs predicted out of sample ({file})",
)
OFF_GENERATION = MessageKind(
    "train_off_generation",
    "{generation} is not the fitted {fitted} and no run of it at this precision and attention "
    "kernel is measured: the band is at least the {mape} MAPE of the public Hopper runs, and a "
    "floor",
)
OFF_ATTENTION = MessageKind(
    "train_off_attention",
    "the fitted runs used {fitted} attention, not {attention}: the band is a floor",
)
OFF_ATTENTION_COVERED = MessageKind(
    "train_off_attention_covered",
    "the fitted runs used {fitted} attention, not {attention}: the public {generation} runs' "
    "error covers it ({mape} MAPE on {n} runs, {file})",
)
OFF_PRECISION = MessageKind(
    "train_off_precision",
    "{precision} was not among the fitted precisions ({fitted}): the band is a floor",
)
OFF_PRECISION_MEASURED = MessageKind(
    "train_off_precision_measured",
    "{precision} was not among the fitted precisions ({fitted}): the band is at least the "
    "{mape} MAPE on {n} {generation} {precision} runs ({recipe} scaling) predicted out of "
    "sample ({file})",
)
OFF_MOE = MessageKind(
    "train_off_moe",
    "mixture-of-experts models were not in the fitted runs: the band is a floor",
)
OTHER_STACK = MessageKind(
    "train_other_stack_check",
    "on {n} {generation} {precision} runs of another stack ({stack}: {file}) this profile is "
    "{mape} off, outside its band, which follows its own stack's runs ({own}): for a run on "
    "{stack}, choose a profile fitted on it",
)
FITTED_ON_GENERATION = MessageKind(
    "train_profile_for_generation",
    "training profile {name} is fitted on {rows} {generation} runs ({files}; band {band}): "
    "choose it for a run of that stack on this accelerator",
)
BAND_KINDS = (
    ABOVE_CEILING,
    ABOVE_FP8_CEILING,
    CEILING_BORROWED,
    BASIS,
    BASIS_ROW,
    NOT_MEASURED,
    OFF_GENERATION_MEASURED,
    OFF_GENERATION,
    OFF_ATTENTION,
    OFF_ATTENTION_COVERED,
    OFF_PRECISION,
    OFF_PRECISION_MEASURED,
    OFF_MOE,
    OTHER_STACK,
    FITTED_ON_GENERATION,
)
SIXTEEN_BIT = {"fp16": "16-bit", "bf16": "16-bit"}  # one number format for the GEMMs' rate


@lru_cache(maxsize=8)
def fitted_ground(files: tuple[str, ...]) -> dict[str, tuple[str, ...]]:
    """The accelerators, 16-bit-or-not precisions and attention kernels of the shipped
    measurement files a profile was fitted on (empty: none of them shipped)."""
    from engine.training.measurements import MEASUREMENTS_DIR, read_runs

    runs = [
        r
        for f in files
        if (MEASUREMENTS_DIR / f).is_file()
        for r in read_runs(MEASUREMENTS_DIR / f)
    ]
    return {
        "generations": tuple(sorted({generation_of(r.hardware) or r.hardware for r in runs})),
        "precisions": tuple(sorted({SIXTEEN_BIT.get(r.precision, r.precision) for r in runs})),
        "attention": tuple(sorted({r.attention for r in runs})),
    }


def profile_band(profile: str | Profile) -> Band:
    """A training profile's band on its fitted ground (the larger of its leave-one-run-out and
    leave-one-table-out MAPE; "not measured" for a hand-set profile): what `training_band`
    widens off that ground."""
    return _base(get_training_profile(profile))


def _base(profile: Profile) -> Band:
    r = profile.residuals
    where = {"rows": f"{profile.rows}", "files": ", ".join(profile.fitted_on) or "no file"}
    if "loo_row_mape_pct" in r and "loo_table_mape_pct" in r:
        row, table = r["loo_row_mape_pct"], r["loo_table_mape_pct"]
        basis = BASIS(row=f"{row:.1f} %", table=f"{table:.1f} %", **where)
        return Band(max(row, table), basis)
    if "loo_row_mape_pct" in r:
        return Band(r["loo_row_mape_pct"], BASIS_ROW(**where))
    return Band(None, NOT_MEASURED())


def training_band(run: TrainRun) -> tuple[Band, list[Message]]:
    """A training prediction's error band (MAPE, %) and why it differs from the fitted
    ground's (each difference a Message, to show beside the number): the run's profile,
    accelerator, precision, attention kernel and model (dense or MoE)."""
    from engine.training.setup import setup  # setup's module reads the train module's

    st = setup(run)
    return _band(
        profile=run.profile,
        hardware=st.hw.id,
        precision=run.precision,
        recipe=run.fp8_recipe,
        attention=run.attention,
        moe=bool(st.arch.experts),
    )


def fitted_for(generation: str) -> list[Profile]:
    """The built-in training profiles fitted on runs of `generation` (with their bands)."""
    from engine.catalog.profiles import training_profile_names

    out = []
    for name in training_profile_names():
        prof = get_training_profile(name)
        ground = fitted_ground(tuple(prof.fitted_on))
        if generation in ground["generations"] and _base(prof).pct is not None:
            out.append(prof)
    return out


def _suggest(prof: Profile, generation: str) -> Message:
    return FITTED_ON_GENERATION(
        name=prof.name,
        rows=f"{prof.rows}",
        generation=generation,
        files=", ".join(prof.fitted_on),
        band=f"±{_base(prof).pct:.1f} %",
    )


def _band(
    profile: str | Profile,
    hardware: str,
    precision: str,
    recipe: str | None,
    attention: str,
    moe: bool,
) -> tuple[Band, list[Message]]:
    prof = get_training_profile(profile)
    band = _base(prof)
    ground = fitted_ground(tuple(prof.fitted_on))
    if band.pct is None or not ground["generations"]:
        return band, []
    gen = generation_of(hardware) or hardware
    pct, why = band.pct, []
    fitted = ", ".join(ground["generations"])
    stack = profile_stack(prof)
    fp8 = precision == "fp8" and attention == "flash"
    chosen, others = own_stack(fp8_checks(profile, gen, recipe), stack) if fp8 else (None, [])
    measured = None if chosen is None else chosen.measured
    if attention == "flash" and precision != "fp8":
        check = public_check(profile, gen)
    else:
        # fp8 runs of the profile's own stack on this generation and kernel measure all three
        check = measured if chosen is not None and chosen.stack == stack else None
    if gen not in ground["generations"]:
        if check is not None:
            mape, n, file = check
            pct = max(pct, mape)
            why.append(
                OFF_GENERATION_MEASURED(
                    generation=gen, fitted=fitted, mape=f"{mape:.1f} %", n=f"{n}", file=file
                )
            )
        else:
            mape = public_mape(profile)
            pct = max(pct, mape)
            why.append(OFF_GENERATION(generation=gen, fitted=fitted, mape=f"{mape:.1f} %"))
        why += [_suggest(other, gen) for other in fitted_for(gen) if other.name != prof.name]
    if attention not in ground["attention"]:
        fitted_kernels = ", ".join(ground["attention"])
        if check is not None:
            mape, n, file = check
            pct = max(pct, mape)
            covered = {"generation": gen, "mape": f"{mape:.1f} %", "n": f"{n}", "file": file}
            why.append(OFF_ATTENTION_COVERED(fitted=fitted_kernels, attention=attention, **covered))
        else:
            why.append(OFF_ATTENTION(fitted=fitted_kernels, attention=attention))
    if SIXTEEN_BIT.get(precision, precision) not in ground["precisions"]:
        fitted = ", ".join(ground["precisions"])
        if measured is not None:
            mape, n, file = measured
            pct = max(pct, mape)
            where = {"generation": gen, "recipe": recipe, "n": f"{n}", "file": file}
            why.append(
                OFF_PRECISION_MEASURED(
                    precision=precision, fitted=fitted, mape=f"{mape:.1f} %", **where
                )
            )
        else:
            why.append(OFF_PRECISION(precision=precision, fitted=fitted))
        for other in others:
            where = {"generation": gen, "precision": precision, "file": other.file, "own": stack}
            mape = f"{other.mape:.1f} %"
            why.append(OTHER_STACK(n=f"{other.runs}", stack=other.stack, mape=mape, **where))
    if moe:
        why.append(OFF_MOE())
    return Band(pct, band.basis), why
