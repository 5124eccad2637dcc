"""Sensitivity and synthesis of a served request: the serving model re-run with one figure moved.

`sensitivity`: the elasticity e = (ΔT/T)/(Δp/p) of each metric to each named parameter, by a
central difference: T at p·(1+h) and at p·(1−h), e = (T₊ − T₋)/T₀ / (2h). A parameter whose
raised value is refused (an efficiency above 1) takes the one-sided difference (T₀ − T₋)/T₀ / h.
`synthesis`: for a target (a TPOT of 50 ms by default), the smallest value of each parameter,
alone, the others as catalogued, that meets it (scipy's brentq on the serving model's own
result; memory capacity by bisection on `fits_in_memory`). Every figure is `engine.serve` on a
copy of the HardwareSpec (dataclasses.replace) or of the resolved Assumptions: no second model.
docs/model.md, "Sensitivity and synthesis".
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from engine.catalog.resolve import resolve_hardware
from engine.catalog.specs import RANGES, HardwareSpec
from engine.checks import MAX_BATCH
from engine.scenarios.deployment import Deployment
from engine.scenarios.requests import Batch
from engine.scenarios.sensitivity import METRICS, PARAMETERS, Perturbation, Target
from engine.serving import inputs as si
from engine.serving.serve import serve

if TYPE_CHECKING:  # pandas and scipy load when first used: `import engine` stays quick
    import pandas as pd

__all__ = ["Sensitivity", "Synthesis", "decode_crossover_batch", "sensitivity", "synthesis"]

# CSV headers (units in the names: SI values carry `_si` beside their `unit` column; metric
# values are in the unit their metric's name says, e.g. tpot_ms).
SENSITIVITY_CSV = {
    "parameter": "parameter",
    "unit": "parameter_unit",
    "value": "parameter_value_si",
    "metric": "metric",
    "baseline": "metric_at_baseline",
    "at_minus_step": "metric_at_minus_step",
    "at_plus_step": "metric_at_plus_step",
    "change_at_minus_step": "change_at_minus_step_fraction",
    "change_at_plus_step": "change_at_plus_step_fraction",
    "elasticity": "elasticity",
    "method": "method",
}
SYNTHESIS_CSV = {
    "parameter": "parameter",
    "unit": "parameter_unit",
    "catalogued": "catalogued_si",
    "required": "required_si",
    "required_over_catalogued": "required_over_catalogued",
    "met_as_catalogued": "met_as_catalogued",
    "required_others_unbounded": "required_others_unbounded_si",
}
# The HardwareSpec field each hardware parameter scales (peak_flops scales every peak).
HARDWARE_FIELDS = {
    "memory_bandwidth": "memory_bandwidth_bytes_per_s",
    "memory_capacity": "memory_capacity_bytes",
    "interconnect_bandwidth": "interconnect_bandwidth_bytes_per_s",
    "weight_stream_bandwidth": "weight_stream_bandwidth_bytes_per_s",
}
ASSUMPTION_FIELDS = {
    "efficiency": "efficiency",
    "layer_overhead": "layer_overhead_s",
    "dispatch_overhead": "dispatch_overhead_s",
}
RATES = ("peak_flops", "memory_bandwidth", "weight_stream_bandwidth")
UNBOUNDED = 1e3  # "the others unbounded": raised this many times (within RANGES)
MAX_SCALE = 1e4  # a synthesis looks from 1/MAX_SCALE to MAX_SCALE times the catalogued figure
RELATIVE_TOLERANCE = 1e-6


@dataclass(frozen=True, slots=True)
class Case:
    """A deployment with its hardware and assumptions resolved (what the perturbations copy)."""

    dep: Deployment
    batch: Batch
    hw: HardwareSpec
    assumptions: object  # engine.Assumptions

    @classmethod
    def of(cls, dep: Deployment, batch: Batch) -> Case:
        hw = resolve_hardware(dep.hardware, dep.catalog)
        a = si.setup_for(dep, dep.precision).assumptions
        if a.dispatch_overhead_s is None:  # the catalogued figure, made explicit to scale it
            a = dataclasses.replace(a, dispatch_overhead_s=hw.dispatch_overhead_s)
        return cls(dep=dep, batch=batch, hw=hw, assumptions=a)

    def value(self, parameter: str) -> float:
        """The parameter's figure in SI (peak_flops: the peak of the deployment's format)."""
        if parameter == "peak_flops":  # the peak the deployment's number format runs at
            return si.run_on(self.hw, self.dep.precision).peak_flop_per_s
        if parameter in HARDWARE_FIELDS:
            return getattr(self.hw, HARDWARE_FIELDS[parameter]) or 0.0
        return getattr(self.assumptions, ASSUMPTION_FIELDS[parameter])

    def scaled(self, parameter: str, scale: float) -> tuple[HardwareSpec, object]:
        """(hardware, assumptions) with `parameter` times `scale`."""
        hw, a = self.hw, self.assumptions
        if parameter == "peak_flops":
            peaks = {k: v * scale for k, v in hw.peak_flop_per_s.items()}
            fp4 = {k: v * scale for k, v in hw.fp4_peak_flop_per_s.items()}
            hw = dataclasses.replace(hw, peak_flop_per_s=peaks, fp4_peak_flop_per_s=fp4)
        elif parameter in HARDWARE_FIELDS:
            name = HARDWARE_FIELDS[parameter]
            hw = dataclasses.replace(hw, **{name: getattr(hw, name) * scale})
        else:
            name = ASSUMPTION_FIELDS[parameter]
            a = dataclasses.replace(a, **{name: getattr(a, name) * scale})
        return hw, a

    def unbounded(self, parameter: str) -> Case:
        """This case with every rate but `parameter` (peak FLOP/s, memory bandwidth, weight
        stream) raised UNBOUNDED times, within the catalogue's ranges: the inverse roofline's
        requirement of one resource alone."""
        case = self
        for other in RATES:
            if other != parameter and case.value(other):
                high = _limits(case, other)[1]
                hw, _ = case.scaled(other, min(UNBOUNDED, high))
                case = dataclasses.replace(case, hw=hw)
        return case

    def run(self, parameter: str | None = None, scale: float = 1.0) -> dict[str, float]:
        """Every metric of the serving model with `parameter` times `scale` (None: as given)."""
        hw, a = (self.hw, self.assumptions) if parameter is None else self.scaled(parameter, scale)
        dep = dataclasses.replace(self.dep, hardware=hw, assumptions=a, overrides=())
        r = serve(dep, self.batch)
        return metrics_of(r.values, hw.price_per_hour_usd, dep.devices)


def metrics_of(values: dict, price_per_hour_usd: float | None, devices: int) -> dict:
    """The METRICS of one serve result: its keys, and the cost of its output tokens at the
    accelerators' on-demand list price (None without a price)."""
    out = {k: float(values[k]) for k in METRICS if k in values}
    rate = values["output_tokens_per_s"]
    cost = None
    if price_per_hour_usd is not None and rate > 0:
        cost = price_per_hour_usd * devices / (3600.0 * rate) * 1e6
    out["cost_per_million_output_tokens_usd"] = cost
    out["fits_in_memory"] = bool(values["fits_in_memory"])
    return out


@dataclass(frozen=True, slots=True)
class Sensitivity:
    """Elasticities: one row per parameter × metric; `baseline` the unperturbed metrics."""

    model: str
    hardware: str
    step: float
    baseline: dict
    rows: tuple[dict, ...]

    def binding(self, metric: str) -> str | None:
        """The parameter with the largest |elasticity| of `metric` (None: all zero)."""
        found = [r for r in self.rows if r["metric"] == metric and r["elasticity"]]
        return max(found, key=lambda r: abs(r["elasticity"]))["parameter"] if found else None

    def elasticity(self, parameter: str, metric: str) -> float | None:
        for r in self.rows:
            if r["parameter"] == parameter and r["metric"] == metric:
                return r["elasticity"]
        raise KeyError(f"no row for {parameter} × {metric}")

    def as_dict(self) -> dict:
        metrics = list(dict.fromkeys(r["metric"] for r in self.rows))
        return {
            "model": self.model,
            "hardware": self.hardware,
            "step": self.step,
            "method": "central difference (one-sided where the raised value is refused)",
            "baseline": dict(self.baseline),
            "binding": {m: self.binding(m) for m in metrics},
            "elasticities": [dict(r) for r in self.rows],
        }

    def frame(self) -> pd.DataFrame:
        """One row per parameter × metric under the CSV headers (SENSITIVITY_CSV), with the
        step as a column."""
        import pandas as pd

        df = pd.DataFrame(list(self.rows), columns=list(SENSITIVITY_CSV))
        return df.rename(columns=SENSITIVITY_CSV).assign(step_fraction=self.step)


def _row(case: Case, parameter: str, metrics: tuple, step: float, base: dict) -> list[dict]:
    """The rows of one parameter: each metric at p·(1−h) and p·(1+h), and its elasticity."""
    value = case.value(parameter)
    low = case.run(parameter, 1.0 - step) if value else base
    method = "central"
    try:
        high = case.run(parameter, 1.0 + step) if value else base
    except ValueError:  # e.g. an efficiency raised above 1: the one-sided difference
        high, method = base, "backward"
    one_sided = method == "backward"
    span = step if one_sided else 2.0 * step
    rows = []
    for m in metrics:
        t0, lo, hi = base[m], low[m], high[m]
        e = None if None in (t0, lo, hi) or t0 == 0 else (hi - lo) / t0 / span
        rows.append(
            {
                "parameter": parameter,
                "unit": PARAMETERS[parameter][1],
                "value": value,
                "metric": m,
                "baseline": t0,
                "at_minus_step": lo,
                "at_plus_step": None if method == "backward" else hi,
                "change_at_minus_step": None if e is None else (lo - t0) / t0,
                "change_at_plus_step": None if e is None or one_sided else (hi - t0) / t0,
                "elasticity": e,
                "method": method if value else "not used (zero)",
            }
        )
    return rows


def sensitivity(
    deployment: Deployment, batch: Batch, perturbation: Perturbation | None = None
) -> Sensitivity:
    """The elasticity of each metric to each parameter of `perturbation` (default: ±10 %, every
    parameter, every metric) for one static batch on one deployment (engine.serve's model).

    A parameter the deployment does not have (no weight-streaming bandwidth, no price for the
    cost) has elasticity 0 or None; its row says so in `method`."""
    p = perturbation or Perturbation()
    case = Case.of(deployment, batch)
    base = case.run()
    names = [n for n in p.parameters if n != "weight_stream_bandwidth" or case.value(n)]
    rows = [
        r
        for n in names
        for r in _row(case=case, parameter=n, metrics=p.metrics, step=p.step, base=base)
    ]
    return Sensitivity(
        model=str(base_id(deployment.model)),
        hardware=case.hw.id,
        step=p.step,
        baseline={k: base[k] for k in p.metrics},
        rows=tuple(rows),
    )


def base_id(model) -> str:
    return model if isinstance(model, str) else getattr(model, "id", getattr(model, "name", ""))


@dataclass(frozen=True, slots=True)
class Synthesis:
    """The smallest figure of each parameter that meets the target (`rows`): `required` with
    the others as catalogued, `required_others_unbounded` with the other rates raised
    UNBOUNDED times (the inverse roofline of that resource alone); None where no figure within
    MAX_SCALE× the catalogued one does."""

    model: str
    hardware: str
    metric: str
    target: float
    baseline: float | None
    rows: tuple[dict, ...]

    def required(self, parameter: str) -> float | None:
        for r in self.rows:
            if r["parameter"] == parameter:
                return r["required"]
        raise KeyError(parameter)

    def as_dict(self) -> dict:
        return {
            "model": self.model,
            "hardware": self.hardware,
            "metric": self.metric,
            "target": self.target,
            "baseline": self.baseline,
            "requirements": [dict(r) for r in self.rows],
        }

    def frame(self) -> pd.DataFrame:
        """One row per parameter under the CSV headers (SYNTHESIS_CSV), with the target."""
        import pandas as pd

        df = pd.DataFrame(list(self.rows), columns=list(SYNTHESIS_CSV))
        return df.rename(columns=SYNTHESIS_CSV).assign(
            target_metric=self.metric, target_value=self.target
        )


def _limits(case: Case, parameter: str) -> tuple[float, float]:
    """The scales a synthesis may try: MAX_SCALE either way, within the catalogue's ranges."""
    value = case.value(parameter)
    key = {"peak_flops": "peak", "memory_bandwidth": "memory_bandwidth"}.get(parameter)
    key = key or {"weight_stream_bandwidth": "memory_bandwidth"}.get(parameter)
    key = key or {"memory_capacity": "memory_capacity"}.get(parameter)
    low, high = 1.0 / MAX_SCALE, MAX_SCALE
    if key:
        hw, figures = case.hw, [value]
        if parameter == "peak_flops":  # every peak scales: the fastest and slowest bound it
            figures = [*hw.peak_flop_per_s.values(), *hw.fp4_peak_flop_per_s.values()]
        low = max(low, RANGES[key][0] / min(figures))
        high = min(high, RANGES[key][1] / max(figures))
    return low, high


def _meets(case: Case, target: Target, parameter: str, scale: float) -> float:
    """How far the metric is from the target (≤ 0: met), or 1 − fits for memory capacity."""
    m = case.run(parameter, scale)
    if parameter == "memory_capacity":
        return 0.0 if m["fits_in_memory"] else 1.0
    value = m[target.metric]
    if value is None:
        return math.inf
    gap = value - target.value if target.lower_is_better else target.value - value
    return gap / target.value


def _solve_scale(case: Case, target: Target, parameter: str) -> float | None:
    """The smallest scale of `parameter` that meets the target; None when none does."""
    low, high = _limits(case, parameter)
    if _meets(case, target, parameter=parameter, scale=high) > 0:
        return None
    if _meets(case, target, parameter=parameter, scale=low) <= 0:
        return low
    if parameter == "memory_capacity":  # a step, not a curve: bisect it
        while high / low - 1 > RELATIVE_TOLERANCE:
            mid = math.sqrt(low * high)
            met = _meets(case, target, parameter=parameter, scale=mid) <= 0
            low, high = (low, mid) if met else (mid, high)
        return high
    f = lambda x: _meets(case, target, parameter=parameter, scale=math.exp(x))  # noqa: E731
    from scipy.optimize import brentq

    x = brentq(f, math.log(low), math.log(high), xtol=RELATIVE_TOLERANCE / 4)
    return math.exp(x)


def synthesis(deployment: Deployment, batch: Batch, target: Target | None = None) -> Synthesis:
    """The inverse roofline: for each parameter of `target` (default: memory bandwidth, peak
    FLOP/s and memory capacity), the smallest figure at which the deployment meets it (default:
    TPOT ≤ 50 ms; memory capacity: the smallest at which the request fits). Each parameter is
    solved alone on engine.serve's own result: the others as catalogued, and the other rates
    unbounded."""
    t = target or Target()
    case = Case.of(deployment, batch)
    base = case.run()
    if base[t.metric] is None or math.isnan(base[t.metric]):  # no figure can meet it
        why = " (with one output token no decode step runs)" if batch.output_tokens < 2 else ""
        raise ValueError(
            f"target_metric {t.metric}: undefined for this request{why}; give 2 or more output "
            "tokens, or another target metric"
        )
    rows = []
    for parameter in t.parameters:
        value = case.value(parameter)
        scale = _solve_scale(case, t, parameter) if value else None
        alone = _solve_scale(case.unbounded(parameter), t, parameter) if value else None
        rows.append(
            {
                "parameter": parameter,
                "unit": PARAMETERS[parameter][1],
                "catalogued": value,
                "required": None if scale is None else value * scale,
                "required_over_catalogued": scale,
                "met_as_catalogued": scale is not None and scale <= 1.0,
                "required_others_unbounded": None if alone is None else value * alone,
            }
        )
    return Synthesis(
        model=base_id(deployment.model),
        hardware=case.hw.id,
        metric=t.metric,
        target=t.value,
        baseline=base[t.metric],
        rows=tuple(rows),
    )


def decode_crossover_batch(deployment: Deployment, batch: Batch) -> int | None:
    """The smallest batch whose decode step engine.serve calls compute-bound, at the request's
    input and output tokens (None: none up to MAX_BATCH). On a weight-streaming device this is
    where compute takes over from the injection of the weights (docs/model.md, "Weight
    streaming"); whether that batch's KV cache fits is the result's `fits_in_memory`."""

    def compute_bound(b: int) -> bool:
        r = serve(deployment, dataclasses.replace(batch, batch_size=b))
        return str(r["decode_bottleneck"]) == "compute"

    low, high = 1, MAX_BATCH
    if compute_bound(low):
        return low
    if not compute_bound(high):
        return None
    while high - low > 1:  # compute_bound(low) is False, compute_bound(high) True
        mid = (low + high) // 2
        low, high = (low, mid) if compute_bound(mid) else (mid, high)
    return high
