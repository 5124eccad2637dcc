"""What a sensitivity study perturbs and what a synthesis aims at (docs/model.md, "Sensitivity").

`Perturbation`: the relative step h (default 10 %), the named parameters to perturb and the
results (metrics) whose elasticities are wanted. `Target`: the result a synthesis must meet
(default: a time per output token of 50 ms) and the parameters it solves for, one at a time.
Names are checked here, with the messages every entry point (API, CLI, page) gives.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

# Each parameter: (what it is, its unit). The hardware's figures are scaled on a copy of the
# HardwareSpec (dataclasses.replace); the overheads and the efficiency on the resolved
# Assumptions (the profile's, with the deployment's overrides).
PARAMETERS: dict[str, tuple[str, str]] = {
    "peak_flops": ("dense peak FLOP/s (every precision's)", "FLOP/s"),
    "memory_bandwidth": ("memory bandwidth", "B/s"),
    "memory_capacity": ("memory capacity", "B"),
    "interconnect_bandwidth": ("device-to-device link bandwidth", "B/s"),
    "weight_stream_bandwidth": ("weight-streaming injection bandwidth", "B/s"),
    "efficiency": ("compute efficiency η", ""),
    "layer_overhead": ("per-layer overhead τ", "s"),
    "dispatch_overhead": ("dispatch overhead d", "s"),
}
# Each metric: (the ServeResult key or the cost, True when lower is better).
METRICS: dict[str, tuple[str, bool]] = {
    "tpot_ms": ("time per output token (ITL), ms", True),
    "ttft_ms": ("time to first token, ms", True),
    "e2e_latency_ms": ("request latency, ms", True),
    "output_tokens_per_s": ("output tokens/s, all devices", False),
    "cost_per_million_output_tokens_usd": ("USD per 1M output tokens at the list price", True),
}
# Parameters a synthesis solves for: the three of the inverse roofline.
SYNTHESIS_PARAMETERS = ("memory_bandwidth", "peak_flops", "memory_capacity")
DEFAULT_STEP = 0.10
MAX_STEP = 0.5
DEFAULT_TARGET_MS = 50.0


def check_names(values: object, known: dict, what: str) -> tuple[str, ...]:
    """A tuple of known names (one or several, comma-separated text allowed), duplicates
    dropped; ValueError naming the first unknown one and the known ones."""
    items = values.split(",") if isinstance(values, str) else list(values or ())
    names = tuple(dict.fromkeys(str(v).strip() for v in items if str(v).strip()))
    if not names:
        raise ValueError(f"{what}: name at least one of {', '.join(known)}")
    for name in names:
        if name not in known:
            raise ValueError(f"unknown {what[:-1]} {name[:40]!r} (known: {', '.join(known)})")
    return names


def check_step(step: object) -> float:
    """The relative perturbation h: a number above 0 and at most MAX_STEP."""
    ok = isinstance(step, int | float) and not isinstance(step, bool)
    if not (ok and math.isfinite(step) and 0 < step <= MAX_STEP):
        raise ValueError(f"step: expected a fraction above 0 and at most {MAX_STEP}, got {step!r}")
    return float(step)


@dataclass(frozen=True, slots=True)
class Perturbation:
    """Perturb each parameter by ±step (relative) and report the metrics' elasticities."""

    step: float = DEFAULT_STEP
    parameters: tuple[str, ...] = tuple(PARAMETERS)
    metrics: tuple[str, ...] = tuple(METRICS)

    def __post_init__(self) -> None:
        object.__setattr__(self, "step", check_step(self.step))
        names = check_names(self.parameters, PARAMETERS, "parameters")
        object.__setattr__(self, "parameters", names)
        object.__setattr__(self, "metrics", check_names(self.metrics, METRICS, "metrics"))


@dataclass(frozen=True, slots=True)
class Target:
    """A result to meet (a latency at most `value`, a rate at least `value`, in the metric's
    unit) and the parameters to solve for, each alone, the others as catalogued."""

    metric: str = "tpot_ms"
    value: float = DEFAULT_TARGET_MS
    parameters: tuple[str, ...] = SYNTHESIS_PARAMETERS

    def __post_init__(self) -> None:
        object.__setattr__(self, "metric", check_names((self.metric,), METRICS, "metrics")[0])
        v = self.value
        ok = isinstance(v, int | float) and not isinstance(v, bool)
        if not (ok and math.isfinite(v) and 0 < v <= 1e12):
            raise ValueError(f"target: expected a number above 0, got {v!r}"[:200])
        object.__setattr__(self, "value", float(v))
        allowed = {k: PARAMETERS[k] for k in PARAMETERS if k != "efficiency"}
        object.__setattr__(self, "parameters", check_names(self.parameters, allowed, "parameters"))

    @property
    def lower_is_better(self) -> bool:
        return METRICS[self.metric][1]
