"""What the fit writes: data/kernels/<stack>.toml (schema in data/README.md) and the table of
held-out errors docs/model.md shows ("Kernel efficiency curves").

A file holds, per accelerator, the datasheet figures its curves are fractions of, then one
[[curves]] entry per operator class and data type: the table it was fitted on (release and
path; the repository and commit are the file's), the law's parameters (SI, units in the
names), which of them were fitted, and the errors on held-out shapes. No measured row is
written, only the few worst held-out ones described in words.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, fields

from engine.catalog import kernels as k
from tools.kernel_fit.datasheets import Datasheet
from tools.kernel_fit.fitting import Fitted
from tools.kernel_fit.tables import REPOSITORY, TableFile

STACK_NAMES = {
    "trtllm": "TensorRT-LLM",
    "vllm": "vLLM",
    "sglang": "SGLang",
    "nccl": "NCCL (nccl-tests)",
}
HARDWARE_FIELDS = {"peak_flop_per_s", "bandwidth_bytes_per_s"}


@dataclass(frozen=True)
class Entry:
    """One fitted curve with where its rows came from."""

    accelerator: str
    file: TableFile
    fitted: Fitted


def _value(value: object) -> str:
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, tuple | list):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    if isinstance(value, int):
        return str(value)
    if not math.isfinite(value):
        raise ValueError(f"cannot write {value!r} to TOML")
    return f"{value:.6g}" if value != int(value) or abs(value) >= 1e6 else f"{value:.1f}"


def _key(name: str) -> str:
    return name if re.fullmatch(r"[A-Za-z0-9_-]+", name) else _value(name)


def _device_lines(accelerator: str, sheet: Datasheet) -> list[str]:
    peaks = ", ".join(f'{key} = "{v}"' for key, v in sheet.peaks.items())
    return [
        f"[accelerators.{_key(accelerator)}]",
        f"memory_bandwidth = {_value(sheet.memory_bandwidth)}",
        f"peak = {{ {peaks} }}",
        f"source = {_value(sheet.source)}",
        f"notes = {_value(sheet.notes)}",
        "",
    ]


def _curve_lines(entry: Entry) -> list[str]:
    problem, law, fit = entry.fitted.problem, entry.fitted.law, entry.fitted.fit
    lines = [
        "[[curves]]",
        f"accelerator = {_value(entry.accelerator)}",
        f"op = {_value(problem.op)}",
        f"dtype = {_value(problem.dtype)}",
        *([f"peak = {_value(problem.peak)}"] if problem.peak else []),
        f"version = {_value(entry.file.version)}",
        f"path = {_value(entry.file.path)}",
        f"free = {_value(fit.free)}",
    ]
    for f in fields(k.KernelFit):
        if f.name not in ("free", "worst"):
            lines.append(f"{f.name} = {_value(getattr(fit, f.name))}")
    lines.append("worst = [")
    lines += [f"  {_value(w)}," for w in fit.worst]
    lines += ["]", "[curves.params]"]
    for f in fields(law):
        if f.name not in HARDWARE_FIELDS:
            lines.append(f"{f.name} = {_value(getattr(law, f.name))}")
    return [*lines, ""]


def stack_toml(
    stack: str, *, commit: str, command: str, sheets: dict[str, Datasheet], entries: Iterable[Entry]
) -> str:
    """One stack's file."""
    lines = [
        f"# Kernel efficiency curves of {STACK_NAMES[stack]}: docs/model.md, "
        '"Kernel efficiency curves"; schema in data/README.md.',
        "# Written by tools/kernel_fit (do not edit by hand; refit instead).",
        f"stack = {_value(stack)}",
        f"repository = {_value(REPOSITORY)}",
        f"commit = {_value(commit)}",
        f"command = {_value(command)}",
        "",
    ]
    entries = list(entries)
    for accelerator in dict.fromkeys(e.accelerator for e in entries):
        if any(e.fitted.problem.peak for e in entries if e.accelerator == accelerator):
            lines += _device_lines(accelerator, sheets[accelerator])
    for entry in entries:
        lines += _curve_lines(entry)
    return "\n".join(lines).rstrip("\n") + "\n"


def _cell(curves: list[k.KernelCurve]) -> str:
    return " · ".join(f"{c.dtype} {c.fit.mape_pct:.1f}" for c in curves) or "–"


def errors_table(curves: k.KernelCurves) -> str:
    """Markdown: held-out MAPE (%) per accelerator, operator class, stack and data type."""
    stacks = [s for s in STACK_NAMES if curves.select(stack=s)]
    lines = [
        "| accelerator | class | " + " | ".join(STACK_NAMES[s] for s in stacks) + " |",
        "|---|---|" + "---|" * len(stacks),
    ]
    accelerators = dict.fromkeys(c.accelerator for c in curves.curves)
    ops = dict.fromkeys([*k.OPS, *k.NCCL_OPS])
    for accelerator in accelerators:
        for op in ops:
            cells = [_cell(list(curves.select(accelerator, s, op))) for s in stacks]
            if any(c != "–" for c in cells):
                lines.append(f"| {accelerator} | {op} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"
