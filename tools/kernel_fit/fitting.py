"""Fitting one curve: candidate forms, a held-out split by shape, and the form that predicts best.

Every candidate form frees a few of the law's parameters (at most four) and keeps the others
at their neutral value (no exposed share, no narrow-N penalty, ...). Each is fitted by least
squares on log(predicted / measured) (a soft-L1 loss, so a few odd measurements do not steer
it). The groups (shapes) are split once: 70 % to fit, 30 % held out, never seen until the
end. The form is chosen inside the 70 %: each candidate is fitted on three quarters of those
groups and scored on the last quarter (one with more parameters must win by half a point);
the chosen form is then refitted on the whole 70 % and judged on the held-out 30 %. The laws
are the engine's own (engine/catalog/kernels.py), so the curve shipped is the curve judged.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy.optimize import least_squares

from engine.catalog import kernels as k
from tools.kernel_fit.problems import Problem

FIT_SHARE = 0.7
CHOOSE_SHARE = 0.75  # of the fitted groups, the share the candidate forms are fitted on
PARSIMONY_PCT = 0.5  # a form with more parameters must beat a simpler one by this much
WORST = 3  # held-out rows described in the file


@dataclass(frozen=True, slots=True)
class Param:
    """A fitted parameter's bounds, start and typical size (the optimiser works in units of
    `scale`)."""

    low: float
    high: float
    start: float
    scale: float


_OVERHEAD = Param(low=0.0, high=1e-3, start=5e-6, scale=1e-6)
_ETA = Param(low=1e-3, high=1.0, start=0.6, scale=1.0)
SPACES: dict[str, dict[str, Param]] = {
    "gemm": {
        "overhead_s": _OVERHEAD,
        "eta_compute": _ETA,
        "eta_memory": _ETA,
        "exposed": Param(low=0.0, high=1.0, start=0.2, scale=1.0),
        "narrow_n": Param(low=0.0, high=1e5, start=256.0, scale=100.0),
    },
    "decode_attention": {
        "overhead_s": _OVERHEAD,
        "eta_memory": _ETA,
        "per_row_s": Param(low=0.0, high=1e-6, start=5e-9, scale=1e-9),
        "pairs_half": Param(low=0.0, high=1e5, start=2.0, scale=1.0),
        "eta_compute": Param(low=1e-3, high=1.0, start=0.3, scale=1.0),
    },
    "prefill_attention": {
        "overhead_s": _OVERHEAD,
        "eta_compute": _ETA,
        "eta_memory": _ETA,
        "keys_half": Param(low=0.0, high=1e5, start=500.0, scale=100.0),
        "per_row_s": Param(low=0.0, high=1e-6, start=5e-9, scale=1e-9),
    },
}
_GEMM = ("overhead_s", "eta_compute", "eta_memory")
_DECODE = ("overhead_s", "eta_memory", "per_row_s")
_PREFILL = ("overhead_s", "eta_compute", "eta_memory")
FORMS: dict[str, tuple[tuple[str, ...], ...]] = {
    "gemm": (_GEMM, (*_GEMM, "exposed"), (*_GEMM, "narrow_n")),
    "decode_attention": (
        ("overhead_s", "eta_memory"),
        _DECODE,
        (*_DECODE, "pairs_half"),
        (*_DECODE, "eta_compute"),
    ),
    "prefill_attention": (_PREFILL, (*_PREFILL, "keys_half"), (*_PREFILL, "per_row_s")),
}
TIME: dict[str, Callable] = {
    "gemm": k.gemm_time_s,
    "decode_attention": k.decode_attention_time_s,
    "prefill_attention": k.prefill_attention_time_s,
}


@dataclass(frozen=True)
class Fitted:
    """A problem's chosen law and its errors."""

    problem: Problem
    law: k.Law
    fit: k.KernelFit


def _draw(count: int, share: float, rng: np.random.Generator) -> np.ndarray:
    """True for about `share` of `count` groups, drawn with `rng`; at least one on each side
    when there are two or more."""
    chosen = rng.random(count) < share
    if count > 1 and (chosen.all() or not chosen.any()):
        chosen = np.arange(count) < min(max(1, round(count * share)), count - 1)
    return chosen


def split(problem: Problem, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(rows fitted, rows the candidate forms are fitted on): FIT_SHARE of the groups, and
    CHOOSE_SHARE of those, drawn with `seed`; the rest of the fitted rows choose the form."""
    rng = np.random.default_rng(seed)
    count = int(problem.groups.max()) + 1
    fitted = _draw(count, FIT_SHARE, rng)
    choose = np.zeros(count, dtype=bool)
    choose[np.flatnonzero(fitted)] = _draw(int(fitted.sum()), CHOOSE_SHARE, rng)
    return fitted[problem.groups], choose[problem.groups]


def _describe(problem: Problem, predicted: np.ndarray, i: int) -> str:
    """A held-out row's shape and the curve's error on it (never the measured value)."""
    return f"{problem.labels[i]}: {(predicted[i] / problem.measured_s[i] - 1) * 100:+.0f} %"


def _stats(problem: Problem, *, predicted: np.ndarray, fitted: np.ndarray, free) -> k.KernelFit:
    ape = np.abs(predicted / problem.measured_s - 1.0) * 100.0
    held = ~fitted
    order = np.argsort(-np.where(held, ape, -1.0))[:WORST]
    worst = tuple(_describe(problem, predicted, i) for i in order)
    return k.KernelFit(
        free=tuple(free),
        rows=int(fitted.sum()),
        held_out_rows=int(held.sum()),
        held_out=problem.held_out,
        mape_pct=round(float(ape[held].mean()), 2),
        median_ape_pct=round(float(np.median(ape[held])), 2),
        p90_ape_pct=round(float(np.quantile(ape[held], 0.9)), 2),
        max_ape_pct=round(float(ape[held].max()), 2),
        in_sample_mape_pct=round(float(ape[fitted].mean()), 2),
        worst=worst,
    )


def _solve(residuals: Callable, space: list[Param]) -> np.ndarray:
    """Least squares in units of each parameter's scale; returns SI values."""
    scales = np.array([p.scale for p in space])
    result = least_squares(
        lambda x: residuals(x * scales),
        x0=np.array([p.start for p in space]) / scales,
        bounds=(
            np.array([p.low for p in space]) / scales,
            np.array([p.high for p in space]) / scales,
        ),
        loss="soft_l1",
        f_scale=0.1,
        x_scale="jac",
    )
    return np.array([float(f"{v:.6g}") for v in result.x * scales])  # as the file writes them


def _law(problem: Problem, *, device: tuple[dict, float], free, values) -> k.Law:
    peaks, bandwidth = device
    kind = k.LAWS[problem.op]
    chosen = {name: float(v) for name, v in zip(free, values, strict=True)}
    return kind(
        peak_flop_per_s=peaks[problem.peak],
        bandwidth_bytes_per_s=bandwidth,
        **problem.fixed,
        **chosen,
    )


def _fit_form(problem: Problem, *, device, free, rows: np.ndarray) -> k.Law:
    """The law with the parameters `free` fitted on `rows` (a mask)."""
    time, space = TIME[problem.op], SPACES[problem.op]
    inputs = {name: v[rows] for name, v in problem.inputs.items()}
    measured = problem.measured_s[rows]

    def residuals(values):
        law = _law(problem, device=device, free=free, values=values)
        return np.log(time(law, **inputs) / measured)

    values = _solve(residuals, [space[f] for f in free])
    return _law(problem, device=device, free=free, values=values)


def _mape_pct(problem: Problem, law: k.Law, rows: np.ndarray) -> float:
    predicted = TIME[problem.op](law, **{name: v[rows] for name, v in problem.inputs.items()})
    return float(np.mean(np.abs(predicted / problem.measured_s[rows] - 1.0))) * 100.0


def fit_roofline(problem: Problem, device, seed: int) -> Fitted:
    """The candidate form that predicts best the fitted groups it was not fitted on (more
    parameters must earn their place), refitted on every fitted group and judged on the
    held-out ones."""
    fitted, choose = split(problem, seed)
    check = fitted & ~choose
    if not choose.any() or not check.any():  # too few groups to choose out of sample
        choose = check = fitted
    best, best_pct = FORMS[problem.op][0], np.inf
    for free in FORMS[problem.op]:
        law = _fit_form(problem, device=device, free=free, rows=choose)
        score = _mape_pct(problem, law, check)
        if score < best_pct - PARSIMONY_PCT:
            best, best_pct = free, score
    law = _fit_form(problem, device=device, free=best, rows=fitted)
    predicted = TIME[problem.op](law, **problem.inputs)
    return Fitted(
        problem=problem, law=law, fit=_stats(problem, predicted=predicted, fitted=fitted, free=best)
    )


def _collective_one(message_bytes, measured) -> tuple[float, float, float, float]:
    """(α_s, β_s, α_l, β_l) of one GPU count: the lower-latency line first."""
    floor, rate = float(measured.min()), float(message_bytes.max() / measured.max())
    space = [
        Param(low=0.0, high=1e-3, start=floor, scale=1e-6),
        Param(low=1e6, high=1e14, start=0.2 * rate, scale=1e9),
        Param(low=0.0, high=1e-3, start=4 * floor, scale=1e-6),
        Param(low=1e6, high=1e14, start=rate, scale=1e9),
    ]

    def residuals(v):
        small, large = v[0] + message_bytes / v[1], v[2] + message_bytes / v[3]
        return np.log(np.minimum(small, large) / measured)

    a1, b1, a2, b2 = _solve(residuals, space)
    return (a1, b1, a2, b2) if a1 <= a2 else (a2, b2, a1, b1)


def fit_collective(problem: Problem, seed: int) -> Fitted:
    """Both lines per GPU count, each count on its own rows; message sizes held out."""
    fitted, _ = split(problem, seed)
    gpus, message_bytes = problem.inputs["gpus"], problem.inputs["message_bytes"]
    counts = tuple(int(p) for p in np.unique(gpus))
    lines = []
    for p in counts:
        mine = fitted & (gpus == p)
        lines.append(_collective_one(message_bytes[mine], problem.measured_s[mine]))
    a1, b1, a2, b2 = (tuple(float(v) for v in column) for column in zip(*lines, strict=True))
    law = k.CollectiveLaw(
        gpus=counts,
        small_latency_s=a1,
        small_bandwidth_bytes_per_s=b1,
        large_latency_s=a2,
        large_bandwidth_bytes_per_s=b2,
    )
    predicted = np.empty_like(problem.measured_s)
    for p in counts:
        predicted[gpus == p] = k.collective_time_s(
            law, gpus=p, message_bytes=message_bytes[gpus == p]
        )
    free = (
        "small_latency_s",
        "small_bandwidth_bytes_per_s",
        "large_latency_s",
        "large_bandwidth_bytes_per_s",
    )
    return Fitted(
        problem=problem, law=law, fit=_stats(problem, predicted=predicted, fitted=fitted, free=free)
    )
