"""Fit the kernel efficiency curves: python -m tools.kernel_fit --tables PATH --out data/kernels/

    python -m tools.kernel_fit --tables /path/to/aiconfigurator.git --out data/kernels/
    python -m tools.kernel_fit --table     # print docs/model.md's table of held-out errors

PATH is a bare git mirror of https://github.com/ai-dynamo/aiconfigurator (its HEAD is read
and cited) or a checkout's aic-core/src/aiconfigurator_core/systems/data directory. For every
accelerator of tools/kernel_fit/tables.py and every stack, the newest release that measured
each data type is fitted (docs/model.md, "Kernel efficiency curves"). Needs pyarrow and scipy
(requirements-dev.txt). Takes about ten minutes on two cores.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from pathlib import Path

from engine.catalog import kernels as k
from engine.catalog.units import to_si
from tools.kernel_fit import fitting, problems, report
from tools.kernel_fit.datasheets import datasheet
from tools.kernel_fit.tables import ACCELERATORS, STACKS, Tables, version_key

STACK_TABLES = {
    **dict.fromkeys(
        STACKS,
        (
            "gemm_perf",
            "generation_attention_perf",
            "context_attention_perf",
            "custom_allreduce_perf",
        ),
    ),
    "nccl": ("nccl_perf",),
}
MIN_ROWS, MIN_GROUPS = 40, 4


def newest_problems(tables: Tables, *, gpu: str, stack: str, table: str) -> Iterator[tuple]:
    """(file, problem) for each operator class and data type, from the newest release of
    `stack` that measured it on `gpu`."""
    files = [f for f in tables.files if (f.gpu, f.stack, f.table) == (gpu, stack, table)]
    seen = set()
    for file in sorted(files, key=lambda f: version_key(f.version), reverse=True):
        for problem in problems.problems(table, tables.read(file)):
            enough = len(problem.measured_s) >= MIN_ROWS and problem.groups.max() >= MIN_GROUPS
            if (problem.op, problem.dtype) not in seen and enough:
                seen.add((problem.op, problem.dtype))
                yield file, problem


def _device(sheet) -> tuple[dict[str, float], float]:
    peaks = {key: to_si(v, "flop/s") for key, v in sheet.peaks.items()}
    return peaks, to_si(sheet.memory_bandwidth, "byte/s")


def fit_stack(tables: Tables, *, stack: str, gpus: list[str], seed: int) -> list[report.Entry]:
    """Every curve of one stack, accelerator by accelerator."""
    entries = []
    for gpu in gpus:
        accelerator = ACCELERATORS[gpu]
        device = _device(datasheet(accelerator))
        for table in STACK_TABLES[stack]:
            for file, problem in newest_problems(tables, gpu=gpu, stack=stack, table=table):
                if problem.peak is None:
                    fitted = fitting.fit_collective(problem, seed)
                else:
                    fitted = fitting.fit_roofline(problem, device, seed)
                entries.append(report.Entry(accelerator=accelerator, file=file, fitted=fitted))
                print(
                    f"{stack:7s} {accelerator:13s} {problem.op:18s} {problem.dtype:11s} "
                    f"{file.version:10s} held-out MAPE {fitted.fit.mape_pct:5.1f} % "
                    f"(median {fitted.fit.median_ape_pct:.1f}, {fitted.fit.held_out_rows} rows) "
                    f"free {','.join(fitted.fit.free)}",
                    file=sys.stderr,
                )
    return entries


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.kernel_fit", description=__doc__)
    parser.add_argument("--tables", help="aiconfigurator git mirror or systems/data directory")
    parser.add_argument("--out", type=Path, default=k.KERNEL_DIR, help="where to write")
    parser.add_argument("--stacks", default=",".join((*STACKS, "nccl")))
    parser.add_argument("--accelerators", default=",".join(ACCELERATORS), help="gpu dirs")
    parser.add_argument("--seed", type=int, default=0, help="the held-out split's seed")
    parser.add_argument("--table", action="store_true", help="print the docs table and stop")
    args = parser.parse_args(argv)
    if args.table:
        print(report.errors_table(k.load_kernel_curves(args.out)), end="")
        return 0
    if not args.tables:
        parser.error("--tables is required (or --table)")
    tables = Tables(args.tables)
    gpus = [g for g in args.accelerators.split(",") if g]
    unknown = sorted(set(gpus) - set(ACCELERATORS))
    if unknown:
        parser.error(f"unknown accelerator {unknown[0]!r} (known: {', '.join(ACCELERATORS)})")
    command = f"python -m tools.kernel_fit --tables <aiconfigurator mirror> --seed {args.seed}"
    for stack in args.stacks.split(","):
        entries = fit_stack(tables, stack=stack, gpus=gpus, seed=args.seed)
        sheets = {ACCELERATORS[g]: datasheet(ACCELERATORS[g]) for g in gpus}
        text = report.stack_toml(
            stack, commit=tables.commit, command=command, sheets=sheets, entries=entries
        )
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / f"{stack}.toml").write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
