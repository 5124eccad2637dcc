"""Kernel efficiency curves: a measured kernel's time as a small roofline with named parameters.

One curve per accelerator, serving stack, operator class and data type, fitted by
`python -m tools.kernel_fit` to public measurements of single kernels (aiconfigurator's kernel
tables; data/kernels/<stack>.toml says which file, at which commit, for every curve) and judged
on shapes the fit never saw. Each law is the operator's roofline, max(F/(Π·η_c), bytes/(β·η_m)),
plus the few terms the measurements show, each with a physical meaning (docs/model.md, "Kernel
efficiency curves"):

- `GemmLaw`: t = t0 + max(t_c, t_m) + s·min(t_c, t_m), t_c = 2MNK/(Π·η_c),
  t_m = (K·w·(N + N½) + 2·(MK + MN))/(β·η_m): a launch floor t0, the compute and memory
  fractions η_c and η_m, the share s of the shorter time the kernel does not hide behind the
  longer, and N½, the output columns below which too few tiles keep the memory system busy.
- `DecodeAttentionLaw`: t = t0 + τ·B·H + max(KV bytes/(β·η_m·u), F/(Π·η_c)),
  u = B·H_kv/(B·H_kv + P½): τ per sequence and query head (the query's own work), P½ the
  sequence × KV-head pairs at which the kernel reaches half its bandwidth.
- `PrefillAttentionLaw`: t = t0 + τ·B·H + max(F/(Π·η_c·w/(w + w½)), bytes/(β·η_m)), with F the
  causal FLOPs and w the keys a query can see (the sequence, or the window): short key runs
  leave the tensor cores waiting.
- `CollectiveLaw`: per GPU count p, t = min(α_s + S/β_s, α_l + S/β_l): the stack's
  small-message algorithm (one-shot, low latency) and its large-message one (two-shot or ring,
  high bandwidth), whichever is faster.

The evaluation functions are pure and take floats or numpy arrays alike. The serving model
reads the GEMM curves through `gemm_transfer`: a profile fitted on one accelerator's kernels
scales its GEMM efficiencies on another by the ratio of their curves (docs/model.md, "Kernel
transfer").
"""

from __future__ import annotations

import functools
import math
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import NamedTuple

import numpy as np

from engine.assumptions import KERNEL_ACCELERATORS, KERNEL_STACKS  # noqa: F401 (re-exported)
from engine.catalog.units import to_si

KERNEL_DIR = Path(__file__).resolve().parents[2] / "data" / "kernels"
MAX_KERNEL_FILE_BYTES = 2_000_000
OPS = ("gemm", "decode_attention", "prefill_attention", "all_reduce")
NCCL_OPS = ("all_reduce", "all_gather", "reduce_scatter", "alltoall")
PEAK_KEYS = ("bf16", "fp8", "int8", "fp4")
ACTIVATION_BYTES = 2.0  # GEMM inputs and outputs, attention's queries and outputs: 16-bit


def _check(what: str, value: float, bounds: tuple[float, float]) -> None:
    """ValueError unless `value` is a finite number within `bounds`; `what` names it."""
    low, high = bounds
    if not (isinstance(value, int | float) and math.isfinite(value) and low <= value <= high):
        raise ValueError(f"{what} must be a number from {low:g} to {high:g}, got {value!r}")


@dataclass(frozen=True, slots=True)
class GemmLaw:
    """A GEMM's time: roofline with a launch floor, an exposed share and a narrow-N penalty."""

    peak_flop_per_s: float  # Π of the data type (datasheet, dense)
    bandwidth_bytes_per_s: float  # β (datasheet)
    weight_bytes: float  # bytes per weight element (2 bf16, 1 fp8, 0.5 fp4)
    overhead_s: float  # t0: launch and tail, the time of an empty GEMM
    eta_compute: float  # η_c: fraction of Π a large GEMM reaches
    eta_memory: float  # η_m: fraction of β a weight-bound GEMM reaches
    exposed: float = 0.0  # s: share of the shorter of compute and memory time not hidden
    narrow_n: float = 0.0  # N½: output columns that halve a narrow GEMM's bandwidth

    def __post_init__(self) -> None:
        _check_law(self)


@dataclass(frozen=True, slots=True)
class DecodeAttentionLaw:
    """One decode step's attention over a KV cache: bandwidth-bound, with per-row work."""

    peak_flop_per_s: float  # Π of the compute type (16-bit for decode)
    bandwidth_bytes_per_s: float  # β
    kv_bytes: float  # bytes per cached K or V element (2 bf16, 1 fp8)
    overhead_s: float  # t0
    eta_memory: float  # η_m: fraction of β reading a long KV cache
    per_row_s: float = 0.0  # τ: per sequence and query head (rotary, cache append, softmax)
    pairs_half: float = 0.0  # P½: sequence × KV-head pairs that reach half the bandwidth
    eta_compute: float = 1.0  # η_c of the score and context products

    def __post_init__(self) -> None:
        _check_law(self)


@dataclass(frozen=True, slots=True)
class PrefillAttentionLaw:
    """A prefill's causal attention (FlashAttention-style): compute-bound for long prompts."""

    peak_flop_per_s: float  # Π of the compute type (bf16, or fp8 attention)
    bandwidth_bytes_per_s: float  # β
    kv_bytes: float  # bytes per K or V element written to the cache
    overhead_s: float  # t0
    eta_compute: float  # η_c: fraction of Π for long key runs
    eta_memory: float = 1.0  # η_m: fraction of β moving Q, K, V and O
    keys_half: float = 0.0  # w½: keys per query at which half of η_c is reached
    per_row_s: float = 0.0  # τ: per sequence and query head

    def __post_init__(self) -> None:
        _check_law(self)


@dataclass(frozen=True, slots=True)
class CollectiveLaw:
    """A collective's time per GPU count: the faster of a small- and a large-message line."""

    gpus: tuple[int, ...]  # the GPU counts measured
    small_latency_s: tuple[float, ...]  # α_s per count: the low-latency algorithm's floor
    small_bandwidth_bytes_per_s: tuple[float, ...]  # β_s per count: its message bytes per s
    large_latency_s: tuple[float, ...]  # α_l per count: the bandwidth algorithm's floor
    large_bandwidth_bytes_per_s: tuple[float, ...]  # β_l per count

    def __post_init__(self) -> None:
        columns = [getattr(self, f.name) for f in fields(self)]
        if not self.gpus or len({len(c) for c in columns}) != 1:
            raise ValueError("CollectiveLaw: one value per GPU count in every field")
        for p in self.gpus:
            _check("CollectiveLaw: gpus", p, (2, 1_000_000))
        for name in ("small_latency_s", "large_latency_s"):
            for value in getattr(self, name):
                _check(f"CollectiveLaw: {name}", value, (0.0, 1.0))
        for name in ("small_bandwidth_bytes_per_s", "large_bandwidth_bytes_per_s"):
            for value in getattr(self, name):
                _check(f"CollectiveLaw: {name}", value, (1e6, 1e15))


Law = GemmLaw | DecodeAttentionLaw | PrefillAttentionLaw | CollectiveLaw
LAWS: Mapping[str, type] = {
    "gemm": GemmLaw,
    "decode_attention": DecodeAttentionLaw,
    "prefill_attention": PrefillAttentionLaw,
    **dict.fromkeys(NCCL_OPS, CollectiveLaw),
}
# The ranges a fitted parameter may take (SI); a value outside is a slip in the file.
RANGES = {
    "peak_flop_per_s": (1e9, 1e19),
    "bandwidth_bytes_per_s": (1e9, 1e16),
    "weight_bytes": (0.25, 4.0),
    "kv_bytes": (0.25, 4.0),
    "overhead_s": (0.0, 0.01),
    "eta_compute": (1e-4, 1.0),
    "eta_memory": (1e-4, 1.0),
    "exposed": (0.0, 1.0),
    "narrow_n": (0.0, 1e6),
    "per_row_s": (0.0, 1e-3),
    "pairs_half": (0.0, 1e7),
    "keys_half": (0.0, 1e7),
}


def _check_law(law) -> None:
    for f in fields(law):
        _check(f"{type(law).__name__}: {f.name}", getattr(law, f.name), RANGES[f.name])


@dataclass(frozen=True, slots=True)
class KernelSource:
    """Where a curve's measurements come from: a file of a repository at a commit."""

    repository: str  # https URL of the repository
    commit: str  # 40 hex digits
    path: str  # the file, from the repository root
    version: str  # the serving stack's (or NCCL's) release that was measured

    @property
    def url(self) -> str:
        return f"{self.repository}/blob/{self.commit}/{self.path}"


@dataclass(frozen=True, slots=True)
class KernelFit:
    """How the curve was fitted and how far off it is on shapes the fit never saw."""

    free: tuple[str, ...]  # the parameters fitted (the others keep their neutral value)
    rows: int  # measurements fitted
    held_out_rows: int  # measurements of held-out shapes, predicted after the fit
    held_out: str  # what was held out
    mape_pct: float  # held-out mean |predicted/measured − 1|
    median_ape_pct: float
    p90_ape_pct: float
    max_ape_pct: float
    in_sample_mape_pct: float
    worst: tuple[str, ...] = ()  # the worst held-out measurements, described


@dataclass(frozen=True, slots=True)
class KernelCurve:
    """One accelerator × stack × operator class × data type: its law, source and errors."""

    accelerator: str  # catalogue id (data/hardware.toml)
    stack: str  # trtllm | vllm | sglang | nccl
    op: str  # OPS, or NCCL_OPS for the nccl stack
    dtype: str  # bf16, fp8, fp8_block, nvfp4, bf16_fp8kv, ...
    law: Law
    source: KernelSource
    fit: KernelFit

    @property
    def key(self) -> tuple[str, str, str, str]:
        return (self.accelerator, self.stack, self.op, self.dtype)


def _law(curve: KernelCurve | Law, kind: type) -> Law:
    law = curve.law if isinstance(curve, KernelCurve) else curve
    if not isinstance(law, kind):
        raise ValueError(f"expected a {kind.__name__} curve, got a {type(law).__name__}")
    return law


def gemm_time_s(curve: KernelCurve | GemmLaw, *, m, n, k):
    """Seconds of an (M×K)·(K×N) GEMM: M tokens, N outputs, K inputs (floats or arrays)."""
    law = _law(curve, GemmLaw)
    compute = 2.0 * m * n * k / (law.peak_flop_per_s * law.eta_compute)
    moved = k * law.weight_bytes * (n + law.narrow_n) + ACTIVATION_BYTES * (m * k + m * n)
    memory = moved / (law.bandwidth_bytes_per_s * law.eta_memory)
    longer, shorter = np.maximum(compute, memory), np.minimum(compute, memory)
    return law.overhead_s + longer + law.exposed * shorter


def gemm_efficiency(curve: KernelCurve | GemmLaw, *, m, n, k):
    """The fraction of the data type's peak the GEMM reaches: 2MNK / (Π·t)."""
    law = _law(curve, GemmLaw)
    return 2.0 * m * n * k / (law.peak_flop_per_s * gemm_time_s(law, m=m, n=n, k=k))


def decode_kv_bytes(law: DecodeAttentionLaw, *, batch, keys, kv_heads, head_dim):
    """KV-cache bytes one decode step reads: each cached K and V once per sequence."""
    return batch * keys * 2.0 * kv_heads * head_dim * law.kv_bytes


def decode_attention_time_s(
    curve: KernelCurve | DecodeAttentionLaw, *, batch, keys, heads, kv_heads, head_dim
):
    """Seconds of one decode step's attention: `batch` sequences each attending `keys` cached
    tokens (the window applied), `heads` query and `kv_heads` KV heads on this GPU."""
    law = _law(curve, DecodeAttentionLaw)
    kv = decode_kv_bytes(law, batch=batch, keys=keys, kv_heads=kv_heads, head_dim=head_dim)
    moved = kv + batch * heads * head_dim * 2.0 * ACTIVATION_BYTES  # queries in, outputs out
    pairs = batch * kv_heads
    spread = pairs / (pairs + law.pairs_half)
    memory = moved / (law.bandwidth_bytes_per_s * law.eta_memory * spread)
    compute = batch * keys * heads * 4.0 * head_dim / (law.peak_flop_per_s * law.eta_compute)
    return law.overhead_s + law.per_row_s * batch * heads + np.maximum(memory, compute)


def decode_attention_efficiency(
    curve: KernelCurve | DecodeAttentionLaw, *, batch, keys, heads, kv_heads, head_dim
):
    """The fraction of β the step reaches reading its KV cache: KV bytes / (β·t)."""
    law = _law(curve, DecodeAttentionLaw)
    shape = {"batch": batch, "keys": keys, "kv_heads": kv_heads, "head_dim": head_dim}
    seconds = decode_attention_time_s(law, heads=heads, **shape)
    return decode_kv_bytes(law, **shape) / (law.bandwidth_bytes_per_s * seconds)


def causal_pairs(tokens, window=None):
    """(query, key) pairs of a causal prompt of `tokens`, each query seeing at most `window`
    keys (itself included): S(S+1)/2 without a window."""
    span = tokens if window is None else np.minimum(tokens, window)
    return span * (span + 1) / 2.0 + (tokens - span) * span


def prefill_flop(*, batch, tokens, heads, head_dim, window=None):
    """FLOPs of causal attention: the score and context products, 4·d per pair and head."""
    return batch * heads * 4.0 * head_dim * causal_pairs(tokens, window)


def prefill_attention_time_s(
    curve: KernelCurve | PrefillAttentionLaw,
    *,
    batch,
    tokens,
    heads,
    kv_heads,
    head_dim,
    window=None,
):
    """Seconds of a prefill's attention: `batch` prompts of `tokens` each, causal, with
    `heads` query and `kv_heads` KV heads on this GPU; `window` keys at most per query."""
    law = _law(curve, PrefillAttentionLaw)
    span = tokens if window is None else np.minimum(tokens, window)
    flop = prefill_flop(batch=batch, tokens=tokens, heads=heads, head_dim=head_dim, window=window)
    eta = law.eta_compute * span / (span + law.keys_half)
    compute = flop / (law.peak_flop_per_s * eta)
    kv = 2.0 * kv_heads * (2.0 * ACTIVATION_BYTES + law.kv_bytes)  # K, V read and cached
    moved = batch * tokens * head_dim * (2.0 * heads * ACTIVATION_BYTES + kv)
    memory = moved / (law.bandwidth_bytes_per_s * law.eta_memory)
    return law.overhead_s + law.per_row_s * batch * heads + np.maximum(compute, memory)


def prefill_attention_efficiency(
    curve: KernelCurve | PrefillAttentionLaw,
    *,
    batch,
    tokens,
    heads,
    kv_heads,
    head_dim,
    window=None,
):
    """The fraction of the compute type's peak the prefill reaches: F / (Π·t)."""
    law = _law(curve, PrefillAttentionLaw)
    shape = {"batch": batch, "tokens": tokens, "heads": heads, "head_dim": head_dim}
    seconds = prefill_attention_time_s(law, kv_heads=kv_heads, window=window, **shape)
    return prefill_flop(window=window, **shape) / (law.peak_flop_per_s * seconds)


def collective_time_s(curve: KernelCurve | CollectiveLaw, *, gpus: int, message_bytes):
    """Seconds of one collective over `gpus` GPUs of `message_bytes` (floats or arrays)."""
    law = _law(curve, CollectiveLaw)
    if gpus not in law.gpus:
        measured = ", ".join(str(p) for p in law.gpus)
        raise ValueError(f"no measurement over {gpus!r} GPUs (measured: {measured})")
    i = law.gpus.index(gpus)
    small = law.small_latency_s[i] + message_bytes / law.small_bandwidth_bytes_per_s[i]
    large = law.large_latency_s[i] + message_bytes / law.large_bandwidth_bytes_per_s[i]
    return np.minimum(small, large)


@dataclass(frozen=True, slots=True)
class KernelCurves:
    """Every curve of the shipped files (or of the files given), in file order."""

    curves: tuple[KernelCurve, ...]

    def find(self, accelerator: str, stack: str, *, op: str, dtype: str) -> KernelCurve:
        """The curve of one accelerator, stack, operator class and data type, or ValueError
        naming what there is."""
        for curve in self.curves:
            if curve.key == (accelerator, stack, op, dtype):
                return curve
        mine = [c for c in self.curves if c.key[:3] == (accelerator, stack, op)]
        if mine:
            known = ", ".join(c.dtype for c in mine)
            raise ValueError(f"no {dtype!r} curve for {accelerator} {stack} {op} (known: {known})")
        known = ", ".join(sorted({f"{c.accelerator} {c.stack} {c.op}" for c in self.curves}))
        raise ValueError(f"no {op!r} curve for {accelerator} on {stack} (known: {known})")

    def select(self, accelerator=None, stack=None, op=None) -> tuple[KernelCurve, ...]:
        """The curves matching every criterion given (None: any)."""
        wanted = (accelerator, stack, op)
        return tuple(
            c
            for c in self.curves
            if all(w in (None, v) for w, v in zip(wanted, c.key, strict=False))
        )


def _text(table: Mapping, key: str, label: str) -> str:
    value = table.get(key)
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{label}: {key} must be text")
    return value


def _device(table: object, label: str) -> tuple[dict[str, float], float]:
    """An [accelerators.<id>] table: (peak FLOP/s by PEAK_KEYS, memory bytes/s)."""
    if not isinstance(table, dict) or not isinstance(table.get("peak"), dict):
        raise ValueError(f"{label}: needs memory_bandwidth and a peak table")
    _text(table, "source", label)
    unknown = sorted(set(table["peak"]) - set(PEAK_KEYS))
    if unknown:
        raise ValueError(f"{label}: unknown peak {unknown[0]!r} (known: {', '.join(PEAK_KEYS)})")
    peaks = {k: to_si(v, "flop/s", what=f"{label}.peak.{k}") for k, v in table["peak"].items()}
    bandwidth = to_si(table.get("memory_bandwidth"), "byte/s", what=f"{label}.memory_bandwidth")
    return peaks, bandwidth


def _make_law(op: str, *, params: object, device: tuple, peak: str | None, label: str) -> Law:
    kind = LAWS.get(op)
    if kind is None:
        raise ValueError(f"{label}: unknown op {op!r} (known: {', '.join(LAWS)})")
    if not isinstance(params, dict):
        raise ValueError(f"{label}: [curves.params] must be a table")
    names = {f.name for f in fields(kind)} - {"peak_flop_per_s", "bandwidth_bytes_per_s"}
    unknown = sorted(set(params) - names)
    if unknown:
        raise ValueError(f"{label}: unknown parameter {unknown[0]!r} (known: {', '.join(names)})")
    try:
        if kind is CollectiveLaw:
            return CollectiveLaw(**{k: tuple(v) for k, v in params.items()})
        peaks, bandwidth = device
        if peak not in peaks:
            raise ValueError(f"peak {peak!r} is not among the accelerator's ({', '.join(peaks)})")
        return kind(peak_flop_per_s=peaks[peak], bandwidth_bytes_per_s=bandwidth, **params)
    except ValueError as exc:
        raise ValueError(f"{label}: {exc}") from None


def _fit(table: Mapping, label: str) -> KernelFit:
    numbers = ("mape_pct", "median_ape_pct", "p90_ape_pct", "max_ape_pct", "in_sample_mape_pct")
    for key in numbers:
        _check(f"{label}: {key}", table.get(key), (0.0, 1e6))
    return KernelFit(
        free=tuple(str(p) for p in table.get("free", ())),
        rows=int(table["rows"]),
        held_out_rows=int(table["held_out_rows"]),
        held_out=_text(table, "held_out", label),
        worst=tuple(str(w) for w in table.get("worst", ())),
        **{key: float(table[key]) for key in numbers},
    )


def _curve(table: object, *, doc: Mapping, devices: Mapping, label: str) -> KernelCurve:
    if not isinstance(table, dict):
        raise ValueError(f"{label}: every [[curves]] entry must be a table")
    accelerator, op = _text(table, "accelerator", label), _text(table, "op", label)
    label = f"{label}: {accelerator} {op} {table.get('dtype')}"
    device = devices.get(accelerator)
    if device is None and LAWS.get(op) is not CollectiveLaw:
        raise ValueError(f"{label}: no [accelerators.{accelerator}] table")
    source = KernelSource(
        repository=_text(doc, "repository", label),
        commit=_text(doc, "commit", label),
        path=_text(table, "path", label),
        version=_text(table, "version", label),
    )
    return KernelCurve(
        accelerator=accelerator,
        stack=_text(doc, "stack", label),
        op=op,
        dtype=_text(table, "dtype", label),
        law=_make_law(
            op, params=table.get("params"), device=device, peak=table.get("peak"), label=label
        ),
        source=source,
        fit=_fit(table, label),
    )


def curves_from_toml(data: bytes | str, label: str) -> tuple[KernelCurve, ...]:
    """Parse one data/kernels/<stack>.toml; errors name the file and the curve."""
    raw = data.encode() if isinstance(data, str) else data
    if len(raw) > MAX_KERNEL_FILE_BYTES:
        raise ValueError(f"{label}: larger than {MAX_KERNEL_FILE_BYTES:,} bytes")
    try:
        doc = tomllib.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ValueError(f"{label}: not a TOML file ({exc})") from None
    tables = doc.get("accelerators", {})
    if not isinstance(tables, dict):
        raise ValueError(f"{label}: [accelerators] must be a table of tables")
    devices = {k: _device(v, f"{label}: accelerators.{k}") for k, v in tables.items()}
    try:
        curves = tuple(
            _curve(t, doc=doc, devices=devices, label=label) for t in doc.get("curves", ())
        )
    except (KeyError, TypeError) as exc:
        raise ValueError(f"{label}: a curve lacks or mistypes {exc}") from None
    keys = [c.key for c in curves]
    if len(set(keys)) != len(keys):
        twice = next(k for k in keys if keys.count(k) > 1)
        raise ValueError(f"{label}: the curve {' '.join(twice)} appears twice")
    return curves


def load_kernel_curves(directory: Path = KERNEL_DIR) -> KernelCurves:
    """Every curve of `directory`'s *.toml files, in name order."""
    curves = []
    for path in sorted(Path(directory).glob("*.toml")):
        curves += curves_from_toml(path.read_bytes(), path.name)
    return KernelCurves(tuple(curves))


@functools.cache
def kernel_curves() -> KernelCurves:
    """The shipped curves (data/kernels/), read once."""
    return load_kernel_curves()


# The kernel curve a weight format's GEMMs run on, then the curves whose efficiency a profile's
# efficiency for that format stands for when the reference accelerator has no curve of the
# format itself (engine/serving/inputs.py `efficiencies`: 4-bit floats inherit the 8-bit GEMMs'
# efficiency, block-scaled fp8 the fp8 GEMMs'). A format absent here has no transfer.
GEMM_DTYPES = {
    "fp16": ("bf16",),
    "bf16": ("bf16",),
    "fp8": ("fp8",),
    "fp8-block": ("fp8_block", "fp8"),
    "int8": ("int8_sq",),
    "w4a16": ("int4_wo",),
    "nvfp4": ("nvfp4", "fp8"),
}


class Transfer(NamedTuple):
    """How a profile's GEMM efficiencies move from its reference accelerator to another: the
    ratios of their curves' compute and memory fractions (1 where a curve is missing), and the
    two curves (None: no transfer)."""

    compute: float = 1.0  # η_c(target, format) / η_c(reference, its curve)
    bandwidth: float = 1.0  # η_m(target, format) / η_m(reference, its curve)
    target: KernelCurve | None = None
    reference: KernelCurve | None = None


NO_TRANSFER = Transfer()


@functools.lru_cache(maxsize=256)
def gemm_transfer(stack: str, *, reference: str, accelerator: str, fmt: str) -> Transfer:
    """The Transfer of the weight format `fmt`'s GEMMs from `reference` to `accelerator` in
    `stack`'s kernel curves: NO_TRANSFER for the stack "none", a format without a curve, an
    accelerator (or a reference) the stack's tables do not measure."""
    dtypes = GEMM_DTYPES.get(fmt, ())
    if stack == "none" or not dtypes:
        return NO_TRANSFER
    mine = {c.dtype: c for c in kernel_curves().select(accelerator, stack, "gemm")}
    theirs = {c.dtype: c for c in kernel_curves().select(reference, stack, "gemm")}
    target = mine.get(dtypes[0])
    base = next((theirs[d] for d in dtypes if d in theirs), None)
    if target is None or base is None:
        return NO_TRANSFER
    t, b = target.law, base.law
    return Transfer(
        compute=t.eta_compute / b.eta_compute,
        bandwidth=t.eta_memory / b.eta_memory,
        target=target,
        reference=base,
    )


def kernel_transfers(stack: str, reference: str) -> list[dict[str, object]]:
    """Every accelerator × weight format with a transfer in `stack`'s tables from `reference`
    (empty for the stack "none"): the ratios and the two curves compared, one dict per row
    (English ids, as every CSV)."""
    rows = []
    for accelerator in KERNEL_ACCELERATORS:
        for fmt in GEMM_DTYPES:
            t = gemm_transfer(stack, reference=reference, accelerator=accelerator, fmt=fmt)
            if t.target is None:
                continue
            rows.append(
                {
                    "accelerator": accelerator,
                    "format": fmt,
                    "curve": t.target.dtype,
                    "reference_curve": f"{t.reference.accelerator} {t.reference.dtype}",
                    "compute_ratio": t.compute,
                    "weight_bandwidth_ratio": t.bandwidth,
                    "stack_release": t.target.source.version,
                    "source": t.target.source.url,
                }
            )
    return rows
