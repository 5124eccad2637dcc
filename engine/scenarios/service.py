"""What a serving run is held to and run with: SLOs and scheduler overrides.

`SLO`: per-request latency limits in milliseconds (None: not applied). `serve_load` counts a
request as good (goodput) when its TTFT and TPOT are within them; `max_rate`, `load_grid` and
`load_plan` judge a rate by the p90 TTFT and the p99 TPOT against them (docs/model.md, "Serving
under load"). The keyword form names them `slo_ttft_ms`/`slo_tpot_ms` (serve_load) or
`slo_ttft_ms_p90`/`slo_tpot_ms_p99` (the searches and grids): the same two fields.

`Scheduler`: overrides of the serving stack's scheduler settings (engine/catalog/scheduler.py:
the profile's `[scheduler]` table, vLLM's defaults without one); None keeps the stack's value.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields
from typing import ClassVar

from engine.catalog.scheduler import OVERRIDABLE, SchedulerDefaults, check_setting, with_overrides
from engine.scenarios.bind import Fields

DEFAULT_TTFT_MS = 2000.0  # 2 s to the first token
DEFAULT_TPOT_MS = 100.0  # 100 ms per output token (10 tokens/s per user)
MAX_SLO_MS = 1e9


def check_slo_ms(value: object, name: str) -> float | None:
    """A limit in ms above 0 (at most MAX_SLO_MS), or None (not applied)."""
    if value is None:
        return None
    ok = isinstance(value, int | float) and not isinstance(value, bool)
    if not (ok and math.isfinite(value) and 0 < value <= MAX_SLO_MS):
        message = f"{name}: expected a number of ms above 0 (at most {MAX_SLO_MS:g}), got {value!r}"
        raise ValueError(message[:200])
    return float(value)


@dataclass(frozen=True, slots=True)
class SLO(Fields):
    """Time to the first token and time per output token, in ms (None: not applied)."""

    ttft_ms: float | None = DEFAULT_TTFT_MS
    tpot_ms: float | None = DEFAULT_TPOT_MS

    ARG: ClassVar[str] = "slo"
    ALIASES: ClassVar[dict[str, str]] = {
        "slo_ttft_ms": "ttft_ms",
        "slo_tpot_ms": "tpot_ms",
        "slo_ttft_ms_p90": "ttft_ms",
        "slo_tpot_ms_p99": "tpot_ms",
    }

    def __post_init__(self) -> None:
        object.__setattr__(self, "ttft_ms", check_slo_ms(self.ttft_ms, "slo_ttft_ms"))
        object.__setattr__(self, "tpot_ms", check_slo_ms(self.tpot_ms, "slo_tpot_ms"))


@dataclass(frozen=True, slots=True)
class Scheduler(Fields):
    """Scheduler settings that replace the stack's (None: the profile's value)."""

    max_num_seqs: int | None = None
    max_batched_tokens: int | None = None
    chunked_prefill: bool | None = None
    block_size: int | None = None
    kv_policy: str | None = None
    watermark: float | None = None

    ARG: ClassVar[str] = "scheduler"

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if value is not None:
                object.__setattr__(self, f.name, check_setting(f.name, value))

    def applied_to(self, base: SchedulerDefaults) -> SchedulerDefaults:
        """`base` with the settings given here (checked together: engine/catalog/scheduler.py)."""
        return with_overrides(base, **asdict(self))

    def as_dict(self) -> dict[str, object]:
        """The settings given (not None)."""
        return {k: v for k, v in asdict(self).items() if v is not None}


assert tuple(f.name for f in fields(Scheduler)) == OVERRIDABLE  # one list of what may change
