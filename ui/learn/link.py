"""The lessons page's share link: `lesson` and that lesson's own parameters, each declared once
(ui.links.params), with the lesson's scenario as their defaults.

`/learn?lesson=0` … `12` (the tutorial's chapter numbers); every other lesson's
parameters are accepted silently (a link keeps working when the lesson changes), and `lang`
is every page's (ui.words.i18n).
"""

from __future__ import annotations

from collections.abc import Mapping

import engine
from ui.links.params import (
    Link,
    Param,
    ParamError,
    choice,
    listing,
    number,
    write_list,
    write_number,
)
from ui.words.i18n import _

PAGE = "learn"
NUMBERS = tuple(str(n) for n in range(13))  # the tutorial's chapters, as in links
LESSON = Param("lesson", choice(NUMBERS), default="0")
LLM_PRECISIONS = ("fp16", "int8", "int4")
BATCHES = (256, 512, 1024, 2048, 4096, 8192, 16384)  # lesson 12's global batches (sequences)
HARDWARE = {  # the accelerators a lesson offers (catalogue ids)
    "0": ("A100", "H100", "V100", "B200"),
    "2": ("A100", "H100", "H200", "B200", "T4"),
    "3": ("H100", "H200", "A100", "MI300X"),
    "9": ("A100", "H100", "H200"),
}


def _batch(text: str) -> int:
    """One of lesson 12's global batches (BATCHES)."""
    value = number(1, max(BATCHES), whole=True)(text)
    if value not in BATCHES:
        raise ParamError(
            _("{value} is not one of {batches}").format(
                value=value, batches=", ".join(map(str, BATCHES))
            )
        )
    return value


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
        "batches": Param("batches", listing(_batch, max_items=len(BATCHES)), write_list),
        "max_step_s": Param("max_step_s", number(0.01, 1000), write_number),
        "days": Param("days", number(0.1, 3650), write_number),
        "carbon_price": Param("carbon_price", number(0, 10_000), write_number),
        "qps": Param("qps", number(0.01, 10_000), write_number),
        "hard_share": Param("hard_share", number(0, 1), write_number),
        "target_ms": Param("target_ms", number(0.01, 1e6), write_number),
        "step_pct": Param("step_pct", number(0.1, 50), write_number),
        "stream_tbps": Param("stream_tbps", number(0.001, 1000), write_number),
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
    "7": {"days": 30.0, "carbon_price": 50.0},
    "8": {"qps": 100.0, "hard_share": 0.3},
    "9": {"hardware": "A100", "target_ms": 50.0, "step_pct": 10.0},
    "10": {"batch": 1, "stream_tbps": 1.2},
    "11": {"zero": "2", "recompute": "none"},
    "12": {"batches": [1024, 2048, 4096, 8192], "max_step_s": 3.0},
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
        Param(name=p.name, read=p.read, write=p.write, default=own[name], widget=p.widget)
        for name, p in PARAMS.items()
        if name in own
    ]
    return Link(PAGE, [LESSON, *params], ignore=[n for n in PARAMS if n not in own])
