"""The lessons page's share link: `lesson` and that lesson's own parameters, each declared once
(ui.core.params), with the lesson's scenario as their defaults.

`/learn?lesson=0` … `5`, `6` and `11` (the tutorial's chapter numbers); every other lesson's
parameters are accepted silently (a link keeps working when the lesson changes), and `lang`
is every page's (ui.core.i18n).
"""

from __future__ import annotations

from collections.abc import Mapping

import engine
from ui.core.params import Link, Param, choice, number, write_number

PAGE = "learn"
NUMBERS = ("0", "1", "2", "3", "4", "5", "6", "11")  # the tutorial's chapters, as in links
LESSON = Param("lesson", choice(NUMBERS), default="0")
LLM_PRECISIONS = ("fp16", "int8", "int4")
HARDWARE = {  # the accelerators a lesson offers (catalogue ids)
    "0": ("A100", "H100", "V100", "B200"),
    "2": ("A100", "H100", "H200", "B200", "T4"),
    "3": ("H100", "H200", "A100", "MI300X"),
}


def _params() -> dict[str, Param]:
    whole = {"batch": engine.MAX_BATCH, "context": 131_072 * 4, "mttf_hours": 10_000_000}
    return {
        "model": Param("model", choice(("Llama-3.1-8B", "ResNet-50"))),
        "hardware": Param("hardware", choice(sorted({h for v in HARDWARE.values() for h in v}))),
        "batch": Param("batch", number(1, whole["batch"], whole=True), write_number),
        "context": Param("context", number(1, whole["context"], whole=True), write_number),
        "precision": Param("precision", choice(LLM_PRECISIONS)),
        "kv_precision": Param("kv_precision", choice(("fp16", "fp8", "int8", "int4"))),
        "cpu_gbps": Param("cpu_gbps", number(0.05, 1000), write_number),
        "sample_kb": Param("sample_kb", number(1, 1_000_000), write_number),
        "mttf_hours": Param("mttf_hours", number(100, whole["mttf_hours"]), write_number),
        "checkpoint_s": Param("checkpoint_s", number(1, 36_000), write_number),
        "zero": Param("zero", choice(("0", "1", "2", "3"))),
        "recompute": Param("recompute", choice(("none", "selective", "full"))),
    }


PARAMS = _params()
DEFAULTS: dict[str, dict[str, object]] = {  # each lesson's parameters and its scenario
    "0": {"hardware": "A100", "batch": 1},
    "1": {"model": "Llama-3.1-8B", "batch": 1},
    "2": {"hardware": "H100", "context": 2048, "precision": "fp16"},
    "3": {"hardware": "H100", "batch": 8, "kv_precision": "fp16"},
    "4": {"batch": 256, "cpu_gbps": 2.0, "sample_kb": 500.0},
    "5": {"precision": "int4"},
    "6": {"mttf_hours": 50_000.0, "checkpoint_s": 60.0},
    "11": {"zero": "2", "recompute": "none"},
}


def lesson_of(query: Mapping[str, list[str]], remembered: object) -> str:
    """The lesson to show: the picker's, else the link's (if valid), else lesson 0."""
    if remembered in NUMBERS:
        return str(remembered)
    given = (query.get("lesson") or [""])[-1]
    try:
        return LESSON.read(given)
    except ValueError:
        return LESSON.default


def declare(lesson: str) -> Link:
    """The link of one lesson: `lesson`, then its own parameters with its defaults."""
    own = DEFAULTS[lesson]
    params = [
        Param(p.name, p.read, p.write, own[name], p.widget)
        for name, p in PARAMS.items()
        if name in own
    ]
    return Link(PAGE, [LESSON, *params], ignore=[n for n in PARAMS if n not in own])
