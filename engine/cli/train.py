"""`python -m engine train|train-search|calibrate-train`: the training model from the shell.

`train` prints one configuration's training step (JSON keys: `TrainResult.as_dict()`, a
contract); `train-search` the ranked configurations (JSON records, CSV, or a table of the
best); `calibrate-train` fits the training profile to measured runs and prints (and writes)
it with its in-sample and leave-one-out errors. The flags have the API's names
(`--micro-batch-size`, `--global-batch-size`, `--seq-len`, ...). A model is `--model ID`,
`--model-config FILE` or `--gpt-shape LAYERS,HIDDEN,HEADS[,VOCAB]` (a Megatron/GPT-3-style
model of that sequence length). The flags build the engine's scenario objects once (a
TrainRun, and a TrainLayout or a LayoutSpace: engine/scenarios/training.py). Bad input raises
ValueError, which engine/cli/main.py turns into one line on stderr and exit status 2.
docs/model.md, "Training step".
"""

from __future__ import annotations

import argparse
from pathlib import Path

from engine.accuracy.bands import PredictionBand
from engine.accuracy.training_bands import training_band
from engine.assumptions import BY_NAME, TRAINING_NAMES
from engine.catalog.reader import Catalog
from engine.cli.model_args import add_model_args, model_from_args
from engine.cli.output import json_text, table_text
from engine.report.export import english_frame, key_value_table, to_csv
from engine.scenarios.training import (
    ATTENTION_KERNELS,
    CP_COMM_TYPES,
    DEFAULT_FP8_RECIPE,
    DEFAULT_RECOMPUTE_MODULES,
    FP8_RECIPES,
    PP_SCHEDULES,
    RECOMPUTE,
    RECOMPUTE_MODULES,
    TRAIN_PRECISIONS,
    LayoutSpace,
    TrainLayout,
    TrainRun,
)
from engine.training.gpt import gpt_architecture
from engine.training.ground import ceiling_messages
from engine.training.search import RANKS, train_search
from engine.training.train import train

TABLE_COLUMNS = (
    "gpus",
    "tp",
    "pp",
    "cp",
    "cp_comm_type",
    "vp",
    "pp_schedule",
    "ep",
    "etp",
    "dp",
    "micro_batch_size",
    "zero",
    "recompute",
    "step_time_s",
    "tokens_per_s_per_gpu",
    "mfu",
    "memory_per_gpu_bytes",
    "reason",
)


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def _model_flags(p: argparse.ArgumentParser) -> None:
    add_model_args(p)
    p.add_argument(
        "--gpt-shape",
        metavar="L,H,A[,V]",
        help="a GPT-3-style model: layers, hidden, heads[, vocab (51200)]",
    )
    p.add_argument("--hardware", required=True)
    p.add_argument("--global-batch-size", type=int, required=True, help="sequences per step")
    p.add_argument("--seq-len", type=int, required=True, help="tokens per sequence")
    p.add_argument("--precision", default="bf16", choices=TRAIN_PRECISIONS)
    p.add_argument(
        "--fp8-recipe",
        choices=FP8_RECIPES,
        help=f"how fp8 tensors are scaled (--precision fp8 only; default {DEFAULT_FP8_RECIPE})",
    )
    p.add_argument(
        "--fp8-param-gather",
        action="store_true",
        help="keep the weights in fp8 and all-gather them in fp8 (--precision fp8 only)",
    )
    p.add_argument("--attention", default="flash", choices=ATTENTION_KERNELS)
    p.add_argument("--profile", default="megatron", help="training profile (default megatron)")
    p.add_argument("--token-budget", type=float, default=1e12, help="tokens to train on")
    p.add_argument("--price-per-gpu-hour", type=float, help="USD (default: the catalogue's)")
    for name in TRAINING_NAMES:
        a = BY_NAME[name]
        unit = f", {a.unit}" if a.unit else ""
        kind = dict(choices=list(a.choices)) if a.choices else dict(type=float)
        p.add_argument(_flag(name), **kind, help=f"{a.label}{unit} (default: the profile's)")


ETP_HELP = (
    "the routed experts' tensor parallelism (Megatron-Core's --expert-tensor-parallel-size; "
    "MoE, dividing --tp)"
)


SCHEDULE_HELP = (
    "the pipeline schedule: 1f1b (Megatron-LM's; interleaved with --vp > 1), dualpipe "
    "(DeepSeek's: an even --pp, --vp 1, an even number of micro-batches, at least 2·pp) or "
    "dualpipev (its cut-in-half V of 2·pp stages: --vp 1, at least 2·pp micro-batches)"
)


CP_HELP = (
    "how context parallelism exchanges keys and values (Megatron-Core's --cp-comm-type): p2p "
    "(the ring, hidden under attention), allgather (Llama 3's) or a2a (DeepSpeed-Ulysses: "
    "heads and KV heads divisible by tp·cp)"
)


def _modules_flag(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--recompute-modules",
        metavar="M[,M...]",
        help="what --recompute selective runs again, comma-separated (Megatron-Core's "
        f"--recompute-modules): {', '.join(RECOMPUTE_MODULES)} (default core_attn)",
    )


def add_train_commands(sub) -> None:
    """Register `train`, `train-search` and `calibrate-train` on `sub` (argparse subparsers)."""
    p = sub.add_parser("train", help="one training step on a configuration of GPUs")
    _model_flags(p)
    p.add_argument("--gpus", type=int, required=True)
    for name in ("tp", "pp", "cp", "vp", "ep", "micro-batch-size"):
        p.add_argument(f"--{name}", type=int, default=1, help="(default 1)")
    p.add_argument("--etp", type=int, help=ETP_HELP + " (default: --tp)")
    p.add_argument("--recompute", default="none", choices=RECOMPUTE)
    _modules_flag(p)
    p.add_argument("--zero", type=int, default=0, choices=(0, 1, 2, 3))
    p.add_argument(
        "--pp-schedule",
        default="1f1b",
        choices=PP_SCHEDULES,
        help=SCHEDULE_HELP + " (default 1f1b)",
    )
    p.add_argument(
        "--cp-comm-type", default="p2p", choices=CP_COMM_TYPES, help=CP_HELP + " (default p2p)"
    )
    for end in ("first", "last"):
        p.add_argument(
            f"--{end}-stage-layers",
            type=int,
            help=f"layers on the {end} pipeline stage (default: balanced, the ends short first)",
        )
    p.add_argument("--format", choices=["json", "csv", "table"], default="table")
    p = sub.add_parser("train-search", help="every parallel configuration, ranked")
    _model_flags(p)
    p.add_argument("--gpus", required=True, help="a GPU count or a list: 64,128,256")
    space_flags(p)
    p.add_argument("--rank-by", default="tokens_per_s", choices=tuple(RANKS))
    p.add_argument("--include-rejected", action="store_true", help="list rejected ones too")
    p.add_argument("--top", type=int, default=20, help="rows in the table format (default 20)")
    p.add_argument("--format", choices=["json", "csv", "table"], default="table")
    p = sub.add_parser("calibrate-train", help="fit the training profile to measured runs")
    shipped = "training measurements (default: the shipped Megatron-LM tables)"
    p.add_argument("files", nargs="*", metavar="FILE", help=shipped)
    p.add_argument("--name", default="megatron", help="the profile's name (default megatron)")
    p.add_argument("--out", metavar="TOML", help="write the profile there")
    p.add_argument("--format", choices=["json", "table"], default="table")


def _model(args: argparse.Namespace):
    if args.gpt_shape is None:
        return model_from_args(args)
    if args.model or args.model_config:
        raise ValueError("give one of --model, --model-config or --gpt-shape")
    parts = [t.strip() for t in args.gpt_shape.split(",")]
    if len(parts) not in (3, 4) or not all(t.isdigit() for t in parts):
        raise ValueError(f"--gpt-shape takes LAYERS,HIDDEN,HEADS[,VOCAB], got {args.gpt_shape!r}")
    layers, hidden, heads, *vocab = (int(t) for t in parts)
    return gpt_architecture(
        layers=layers,
        hidden=hidden,
        heads=heads,
        vocab=vocab[0] if vocab else 51_200,
        seq_len=args.seq_len,
    )


def _run(args: argparse.Namespace, catalog: Catalog, gpus: object) -> TrainRun:
    """The run the flags name (the assumption flags given are its overrides)."""
    overrides = {name: getattr(args, name) for name in TRAINING_NAMES}
    return TrainRun(
        _model(args),
        args.hardware,
        gpus=gpus,
        global_batch_size=args.global_batch_size,
        seq_len=args.seq_len,
        precision=args.precision,
        fp8_recipe=args.fp8_recipe,
        fp8_param_gather=args.fp8_param_gather,
        attention=args.attention,
        profile=args.profile,
        overrides=overrides,
        catalog=catalog,
        token_budget=args.token_budget,
        price_per_gpu_hour=args.price_per_gpu_hour,
    )


def cmd_train(args: argparse.Namespace, catalog: Catalog) -> str:
    layout = TrainLayout(
        tp=args.tp,
        pp=args.pp,
        cp=args.cp,
        vp=args.vp,
        ep=args.ep,
        etp=args.etp,
        micro_batch_size=args.micro_batch_size,
        zero=args.zero,
        recompute=args.recompute,
        recompute_modules=_modules(args),
        pp_schedule=args.pp_schedule,
        cp_comm_type=args.cp_comm_type,
        first_stage_layers=args.first_stage_layers,
        last_stage_layers=args.last_stage_layers,
    )
    run = _run(args, catalog, args.gpus)
    result = train(run, layout).as_dict()
    band, why = training_band(run)
    edited = any(getattr(args, name) is not None for name in TRAINING_NAMES)
    said = PredictionBand(profile=str(run.profile), band=band, off=tuple(why), edited=edited)
    result |= said.as_dict()
    if args.format == "json":
        return json_text(result)
    flat = {k: v for k, v in result.items() if k not in ("assumptions", "warnings")}
    flat |= result["assumptions"] | {"warnings": "; ".join(result["warnings"])}
    if args.format == "csv":
        import pandas as pd

        return to_csv(pd.DataFrame([flat])).rstrip("\n")
    return table_text(flat)


def _list(text: str | None, name: str, word: bool = False) -> list | None:
    if text is None:
        return None
    items = [t.strip() for t in text.split(",") if t.strip()]
    if not items or len(items) > 1000:
        raise ValueError(f"--{name} takes 1 to 1,000 comma-separated values, got {text[:40]!r}")
    if word:
        return items
    if not all(t.isdigit() for t in items):
        raise ValueError(f"--{name}: {text[:40]!r} is not a list of whole numbers")
    return [int(t) for t in items]


def space_flags(p: argparse.ArgumentParser) -> None:
    """The flags of the layouts a search tries (train-search, train-pareto)."""
    for name in ("tp", "pp", "cp", "vp", "ep", "micro-batch-size", "zero", "recompute"):
        p.add_argument(f"--{name}", help="values to try, comma-separated (default: all)")
    p.add_argument("--etp", help=ETP_HELP + ", values to try (default: each layout's tp)")
    p.add_argument("--pp-schedule", help=SCHEDULE_HELP + ", values to try (default 1f1b)")
    p.add_argument("--cp-comm-type", help=CP_HELP + ", values to try (default p2p)")
    _modules_flag(p)


def space_of(args: argparse.Namespace) -> LayoutSpace:
    """The LayoutSpace `space_flags` give."""
    return LayoutSpace(
        **{
            n: _list(getattr(args, n), n.replace("_", "-"))
            for n in ("tp", "pp", "cp", "vp", "ep", "micro_batch_size", "zero", "etp")
        },
        recompute=_list(args.recompute, "recompute", word=True),
        recompute_modules=_modules(args),
        pp_schedule=_list(args.pp_schedule, "pp-schedule", word=True) or ("1f1b",),
        cp_comm_type=_list(args.cp_comm_type, "cp-comm-type", word=True) or ("p2p",),
    )


def _modules(args: argparse.Namespace) -> tuple[str, ...]:
    text = args.recompute_modules
    if text is None:
        return DEFAULT_RECOMPUTE_MODULES
    return tuple(_list(text, "recompute-modules", word=True))


def cmd_train_search(args: argparse.Namespace, catalog: Catalog) -> str:
    space = space_of(args)
    df = train_search(
        _run(args, catalog, _list(args.gpus, "gpus")),
        space,
        rank_by=args.rank_by,
        include_rejected=args.include_rejected,
    )
    df = english_frame(df)  # a rejected row's reason as its English
    if args.format == "json":
        return json_text(df.to_dict(orient="records"))
    if args.format == "csv":
        return to_csv(df).rstrip("\n")
    if args.top < 1:
        raise ValueError("--top must be 1 or more")
    if not len(df):
        return "no configuration fits (--include-rejected lists why)"
    shown = df.head(args.top)
    return "\n".join([shown[list(TABLE_COLUMNS)].to_string(index=False), *ceiling_lines(shown)])


def ceiling_lines(shown) -> list[str]:
    """Below the table: the warnings of the best shown row above its generation's published
    MFU ceiling (the JSON and CSV carry them per row: above_published_mfu)."""
    above = shown[shown["above_published_mfu"].astype(bool)]
    if not len(above):
        return []
    row = above.loc[above["mfu"].idxmax()]
    words = ceiling_messages(str(row["hardware"]), str(row["precision"]), float(row["mfu"]))
    count = f"{len(above)} of the {len(shown)} rows shown are above that ceiling"
    return [f"warning: {m}" for m in words] + [f"warning: {count}"]


def cmd_calibrate_train(args: argparse.Namespace, catalog: Catalog) -> str:
    """Fit, optionally write the TOML, and print the parameters and errors."""
    from engine.catalog.profiles import check_profile_name, profile_to_toml
    from engine.training.calibrate import FIT_PARAMS, calibrate
    from engine.training.measurements import MEGATRON_FILE, read_runs

    name = check_profile_name(args.name)
    files = args.files or [str(MEGATRON_FILE.relative_to(MEGATRON_FILE.parents[3]))]
    command = " ".join(
        ["python -m engine calibrate-train", *args.files, "--name", name]
        + (["--out", args.out] if args.out else [])
    )
    runs = [run for f in files for run in _read(read_runs, f)]
    profile = calibrate(runs, name=name, command=command)
    if args.out:
        try:
            Path(args.out).write_text(profile_to_toml(profile))
        except OSError as exc:
            raise ValueError(f"--out {args.out[:60]!r}: cannot write it ({exc.strerror})") from None
    if args.format == "json":
        return json_text(profile.as_dict())
    fitted = {k: v for k, v in profile.values().items() if k in FIT_PARAMS}
    lines = [
        key_value_table({"profile": profile.name, "rows": profile.rows}),
        "",
        "fitted parameters:",
        key_value_table(fitted),
        "",
        "errors (%):",
        key_value_table({k: round(v, 2) for k, v in profile.residuals.items()}),
        "",
        "every run, worst first:",
    ]
    return "\n".join(lines + [f"  {w}" for w in profile.worst])


def _read(read_runs, path: str) -> list:
    try:
        return read_runs(path)
    except OSError as exc:
        raise ValueError(f"{path[:80]}: cannot read it ({exc.strerror})") from None
    except (KeyError, IndexError) as exc:
        raise ValueError(f"{path[:80]}: not a training measurements file ({exc})") from None
