"""`python -m engine reliability|train-pareto`: a fleet's failures and checkpoints, and the
Pareto front of the training search, from the shell.

`reliability` prints `FleetReliability.as_dict()` (JSON: its keys, `parts` one object per
kind of part; CSV: the parts, one row each, with the fleet's figures on every row; table: the
fleet's figures). `train-pareto` runs `train-search` (the same flags) and marks, among the
configurations that fit and meet the `--max-*`/`--min-*` limits, those on the Pareto front of
`--objectives` (JSON records, CSV, or a table of the front). docs/model.md, "Reliability of a
fleet" and "Design-space exploration".
"""

from __future__ import annotations

import argparse

from engine.cli.output import json_text, table_text
from engine.cli.train import (
    TABLE_COLUMNS,
    _list,
    _model_flags,
    _run,
    ceiling_lines,
    space_flags,
    space_of,
)
from engine.explore.pareto import DIRECTIONS, pareto_table
from engine.report.export import english_frame, write_csv
from engine.scenarios.fleet_parts import PARTS, FleetParts
from engine.training.reliability import fleet_reliability
from engine.training.search import train_search

DEFAULT_OBJECTIVES = "step_time_s:min,memory_per_gpu_bytes:min"
LIMITS = {  # flag: (column, side)
    "max_step_time_s": ("step_time_s", "max"),
    "max_memory_per_gpu_bytes": ("memory_per_gpu_bytes", "max"),
    "min_memory_headroom_bytes": ("memory_headroom_bytes", "min"),
    "max_cost_to_train_usd": ("cost_to_train_usd", "max"),
    "min_mfu": ("mfu", "min"),
}


def add_dse_commands(sub) -> None:
    """Register `reliability` and `train-pareto` on `sub` (argparse subparsers)."""
    p = sub.add_parser("reliability", help="a fleet's MTBF from its parts, Young-Daly, goodput")
    p.add_argument("--gpus", type=int, required=True)
    p.add_argument("--gpus-per-host", type=int, default=8, help="(default 8)")
    for part in PARTS:
        p.add_argument(
            f"--{part.name}-mttf-hours",
            type=float,
            default=part.mttf_hours,
            help=f"one {part.name}'s MTTF, hours (per {part.per}: {part.causes}; default "
            + (
                "not counted"
                if part.mttf_hours is None
                else f"{part.mttf_hours:,.0f}, the tutorial's"
            )
            + ")",
        )
    p.add_argument("--checkpoint-s", type=float, default=60.0, help="write time (default 60)")
    p.add_argument("--restart-s", type=float, default=300.0, help="recovery (default 300)")
    p.add_argument("--job-hours", type=float, default=720.0, help="(default 720: 30 days)")
    p.add_argument("--interval-hours", type=float, help="checkpoint interval (default Young-Daly)")
    p.add_argument("--format", choices=["json", "csv", "table"], default="table")
    p = sub.add_parser("train-pareto", help="the Pareto front of the training search")
    _model_flags(p)
    p.add_argument("--gpus", required=True, help="a GPU count or a list: 64,128,256")
    space_flags(p)
    p.add_argument(
        "--objectives",
        default=DEFAULT_OBJECTIVES,
        help=f"COLUMN:min|max, comma-separated (default {DEFAULT_OBJECTIVES})",
    )
    for flag in LIMITS:
        p.add_argument("--" + flag.replace("_", "-"), type=float, help="a constraint")
    p.add_argument("--format", choices=["json", "csv", "table"], default="table")


def cmd_reliability(args: argparse.Namespace, catalog) -> str:
    fleet = FleetParts(
        gpus=args.gpus,
        gpus_per_host=args.gpus_per_host,
        checkpoint_s=args.checkpoint_s,
        restart_s=args.restart_s,
        job_hours=args.job_hours,
        interval_hours=args.interval_hours,
        **{f"{p.name}_mttf_hours": getattr(args, f"{p.name}_mttf_hours") for p in PARTS},
    )
    result = fleet_reliability(fleet).as_dict()
    if args.format == "json":
        return json_text(result)
    fleet_figures = {k: v for k, v in result.items() if k != "parts"}
    if args.format == "csv":
        import pandas as pd

        rows = [p | {f"fleet_{k}": v for k, v in fleet_figures.items()} for p in result["parts"]]
        return write_csv(pd.DataFrame(rows)).rstrip("\n")
    return table_text(fleet_figures)


def objectives_of(text: str) -> dict[str, str]:
    """`COLUMN:min|max,...` as a mapping (ValueError on a malformed item)."""
    out = {}
    for item in [t.strip() for t in text.split(",") if t.strip()][:8]:
        column, _, way = item.partition(":")
        if way not in DIRECTIONS or not column:
            raise ValueError(f"--objectives: write COLUMN:min or COLUMN:max, got {item[:40]!r}")
        out[column] = way
    if not out:
        raise ValueError("--objectives: give at least one COLUMN:min|max")
    return out


def cmd_train_pareto(args: argparse.Namespace, catalog) -> str:
    objectives = objectives_of(args.objectives)  # refused before the search runs
    df = train_search(_run(args, catalog, _list(args.gpus, "gpus")), space_of(args))
    limits = {}
    for flag, (column, side) in LIMITS.items():
        value = getattr(args, flag)
        if value is not None:
            limits[column] = (value, None) if side == "min" else (None, value)
    df = english_frame(pareto_table(df, objectives, limits))
    if args.format == "json":
        return json_text(df.to_dict(orient="records"))
    if args.format == "csv":
        return write_csv(df).rstrip("\n")
    front = df[df["pareto"]]
    shown = [c for c in TABLE_COLUMNS if c != "reason"] + [
        c for c in objectives if c not in TABLE_COLUMNS
    ]
    if not len(front):
        return "no configuration meets the limits"
    return "\n".join([front[shown].to_string(index=False), *ceiling_lines(front)])
