"""Number formats of the serving model: weights, the GEMMs' activations and the KV cache.

A weight format names the bits of a weight element and of its scales (one scale of
`scale_bits` per block of `block` elements), the width of the activations its GEMMs multiply
(16 for weight-only formats), and the peak it runs at natively: a key of the accelerator's
`peak` table (data/hardware.toml). On an accelerator without that peak a format either takes a
listed, slower precision's peak (the tutorial's fallback: bf16 on fp16, tf32 on fp32) or runs
on its emulated path: the weights stay in memory in the format and are dequantised to 16 bits
inside the GEMM, which then runs at the fp16 peak plus the dequantisation cost, as the
weight-only w4a16 always does (vLLM's Marlin kernels do this for fp8, int8, nvfp4 and mxfp4
weights on GPUs without those tensor cores). A KV-cache format is bytes per element, and nvfp4
KV needs FP4 tensor cores (refused elsewhere). docs/model.md, "Number formats".

Sources: NVFP4, NVIDIA, "Introducing NVFP4 for Efficient and Accurate Low-Precision Inference"
(2025): E2M1 values, one FP8 E4M3 scale per 16, a per-tensor FP32 scale; MXFP4, OCP
"Microscaling Formats (MX) v1.0" (2023): E2M1, one E8M0 scale per 32; w4a16, Frantar et al.,
"MARLIN" (PPoPP 2025) and github.com/IST-DASLab/marlin (groups of 128 with an fp16 scale:
0.125 bits per weight); fp8-block, DeepSeek-V3 technical report (arXiv 2412.19437): 128×128
weight blocks with an fp32 scale; int8 (w8a8), Xiao et al., "SmoothQuant" (ICML 2023).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from engine.catalog.specs import FP4_PEAKS, HardwareSpec

# How a format runs on an accelerator that lists no peak for it.
FALLBACK = "fallback"  # a listed precision that is never faster (bf16 -> fp16, tf32 -> fp32)
DEQUANTISE = "dequantise"  # weight-only: dequantised to 16 bits, the fp16 peak + its cost
WIDE_PEAK = "fp16"  # the peak of a weight-only GEMM (16-bit activations, 16-bit tensor cores)


@dataclass(frozen=True, slots=True)
class NumberFormat:
    """A weight format: element and scale bits, the GEMMs' activation width and native peak."""

    name: str
    weight_bits: int  # bits per weight element, scales apart
    activation_bits: int  # the GEMM's activation inputs (16: weight-only)
    block: int  # elements sharing one scale; 0: per tensor or per channel (negligible)
    scale_bits: int  # bits of one scale (and zero point)
    peak: str  # the peak key it computes at natively
    missing: str  # FALLBACK or DEQUANTISE: on an accelerator without `peak`
    kv_default: str  # the KV-cache format when none is given
    summary: str  # one line: what it is and who uses it

    @property
    def weight_bytes(self) -> float:
        """Bytes per weight element with its share of a scale: nvfp4 (4 + 8/16)/8 = 0.5625."""
        scales = self.scale_bits / self.block if self.block else 0.0
        return (self.weight_bits + scales) / 8.0

    @property
    def weight_only(self) -> bool:
        """True when the weights are dequantised to the activations' 16 bits inside the GEMM."""
        return self.activation_bits > self.weight_bits


@dataclass(frozen=True, slots=True)
class KVFormat:
    """A KV-cache format: bits per element with its scales, and the peak it needs (if any)."""

    name: str
    bits: int
    block: int  # elements sharing one scale; 0: none counted
    scale_bits: int
    needs_peak: str = ""  # refused on an accelerator without this peak ("" : any)
    summary: str = ""

    @property
    def element_bytes(self) -> float:
        scales = self.scale_bits / self.block if self.block else 0.0
        return (self.bits + scales) / 8.0


def _float(name: str, bits: int, summary: str) -> NumberFormat:
    """An unscaled floating-point format: weights and activations alike, its own peak and KV."""
    return NumberFormat(
        name=name,
        weight_bits=bits,
        activation_bits=bits,
        block=0,
        scale_bits=0,
        peak=name,
        missing=FALLBACK,
        kv_default=name,
        summary=summary,
    )


def _kv(name: str, bits: int, summary: str) -> KVFormat:
    """A KV-cache format whose scales are not counted (per tensor or per head)."""
    return KVFormat(name=name, bits=bits, block=0, scale_bits=0, summary=summary)


_ROWS = (
    _float("fp32", 32, "32-bit floats"),
    _float("tf32", 32, "fp32 weights, GEMMs on tf32 tensor cores"),
    _float("fp16", 16, "16-bit floats"),
    _float("bf16", 16, "bfloat16"),
    NumberFormat(
        name="fp8",
        weight_bits=8,
        activation_bits=8,
        block=0,
        scale_bits=0,
        peak="fp8",
        missing=DEQUANTISE,
        kv_default="fp8",
        summary="FP8 E4M3 weights and activations, per-tensor scales (W8A8)",
    ),
    NumberFormat(
        name="fp8-block",
        weight_bits=8,
        activation_bits=8,
        block=128 * 128,
        scale_bits=32,
        peak="fp8",
        missing=DEQUANTISE,
        kv_default="fp8",
        summary="FP8 with an fp32 scale per 128×128 weight block (DeepSeek-V3, Qwen3 FP8)",
    ),
    NumberFormat(
        name="int8",
        weight_bits=8,
        activation_bits=8,
        block=0,
        scale_bits=0,
        peak="int8",
        missing=DEQUANTISE,
        kv_default="int8",
        summary="INT8 weights and activations, per-channel and per-token scales (W8A8)",
    ),
    NumberFormat(
        name="w4a16",
        weight_bits=4,
        activation_bits=16,
        block=128,
        scale_bits=16,
        peak=WIDE_PEAK,
        missing=FALLBACK,
        kv_default="fp16",
        summary="4-bit weights, an fp16 scale per 128, 16-bit GEMMs (AWQ, GPTQ: Marlin)",
    ),
    NumberFormat(
        name="nvfp4",
        weight_bits=4,
        activation_bits=4,
        block=16,
        scale_bits=8,
        peak="nvfp4",
        missing=DEQUANTISE,
        kv_default="fp8",
        summary="NVFP4: E2M1 with an FP8 scale per 16, weights and activations (W4A4)",
    ),
    NumberFormat(
        name="mxfp4",
        weight_bits=4,
        activation_bits=4,
        block=32,
        scale_bits=8,
        peak="mxfp4",
        missing=DEQUANTISE,
        kv_default="bf16",
        summary="MXFP4: E2M1 with an E8M0 scale per 32 (gpt-oss's experts)",
    ),
)
FORMATS: Mapping[str, NumberFormat] = MappingProxyType({f.name: f for f in _ROWS})
_KV_ROWS = (
    _kv("fp32", 32, "32-bit floats"),
    _kv("tf32", 32, "stored as fp32"),
    _kv("fp16", 16, "16-bit floats"),
    _kv("bf16", 16, "bfloat16"),
    _kv("fp8", 8, "FP8 E4M3, per-tensor scales"),
    _kv("int8", 8, "INT8, per-head scales"),
    _kv("int4", 4, "INT4 (LMDeploy's KV int4), scales not counted"),
    KVFormat(
        name="nvfp4",
        bits=4,
        block=16,
        scale_bits=8,
        needs_peak="nvfp4",
        summary="NVFP4 (TensorRT-LLM on Blackwell: dequantised to FP8 for attention)",
    ),
)
KV_FORMATS: Mapping[str, KVFormat] = MappingProxyType({k.name: k for k in _KV_ROWS})
# Names read as a format, with a note: `int4` was "4-bit weights" before formats existed (W4A4
# at an FP4 peak on some chips, W4A16 on others); `fp4` is what datasheets call nvfp4's peak.
ALIASES: Mapping[str, str] = MappingProxyType({"int4": "w4a16", "fp4": "nvfp4"})
KV_ALIASES: Mapping[str, str] = MappingProxyType({"fp4": "nvfp4"})
FORMAT_NAMES: tuple[str, ...] = tuple(FORMATS)
KV_FORMAT_NAMES: tuple[str, ...] = tuple(KV_FORMATS)
# What the CLI and links accept: the formats and the names read as one.
FORMAT_CHOICES: tuple[str, ...] = (*FORMAT_NAMES, *ALIASES)
KV_FORMAT_CHOICES: tuple[str, ...] = (*KV_FORMAT_NAMES, *KV_ALIASES)


def _clean(name: object) -> str:
    return name if type(name) is str and name in FORMATS else str(name).strip().lower()


def check_format(name: object) -> str:
    """A weight format's name as given, tidied (`int4` and `fp4` kept: the serving model reads
    them as w4a16 and nvfp4 and says so), or ValueError listing the formats."""
    tidy = _clean(name)
    if tidy not in FORMATS and tidy not in ALIASES:
        raise ValueError(
            f"unknown precision {str(name)[:40]!r} (the number formats: "
            f"{', '.join(FORMAT_NAMES)}; int4 is read as w4a16, fp4 as nvfp4)"
        )
    return tidy


def number_format(name: object) -> NumberFormat:
    """The weight format a (checked) name stands for: aliases resolved."""
    tidy = check_format(name)
    return FORMATS[ALIASES.get(tidy, tidy)]


def format_name(name: object) -> str:
    """The number format a precision name stands for (fp4 -> nvfp4, int4 -> w4a16), or the
    name tidied when it is not one."""
    tidy = _clean(name)
    return ALIASES.get(tidy, tidy)


def renamed(name: object) -> bool:
    """True when `name` is one the serving model reads as another format (int4, fp4)."""
    return _clean(name) in ALIASES


def check_kv_format(kv: object, precision: object) -> str:
    """The KV-cache format: `kv` tidied (fp4 kept), or the weight format's default when None;
    ValueError for a name that is not a KV-cache format."""
    if kv is None:
        return number_format(precision).kv_default
    tidy = str(kv).strip().lower()
    if tidy not in KV_FORMATS and tidy not in KV_ALIASES:
        hint = " (a weight format)" if tidy in FORMATS or tidy in ALIASES else ""
        raise ValueError(
            f"unknown KV precision {str(kv)[:40]!r}{hint} (the KV-cache formats: "
            f"{', '.join(KV_FORMAT_NAMES)}; fp4 is read as nvfp4)"
        )
    return tidy


def kv_format(name: str) -> KVFormat:
    """The KV-cache format of a checked name (aliases resolved)."""
    return KV_FORMATS[KV_ALIASES.get(name, name)]


def has_peak(hw: HardwareSpec, key: str) -> bool:
    """True when the accelerator lists a dense peak for `key` (a precision or a 4-bit peak)."""
    table = hw.fp4_peak_flop_per_s if key in FP4_PEAKS else hw.peak_flop_per_s
    return key in table


@dataclass(frozen=True, slots=True)
class FormatRun:
    """A weight format on one accelerator: the peak its GEMMs run at, and how."""

    format: NumberFormat
    peak_flop_per_s: float
    peak_key: str  # the peak used (a result's `peak_precision`)
    dequantised: bool  # weights widened to 16 bits inside the GEMM: its cost applies
    emulated: bool  # the accelerator lacks the format's peak: the weight-only path
    fallback: bool  # a slower precision's peak stands in (said with a warning)


def run_on(hw: HardwareSpec, name: object) -> FormatRun:
    """How the weight format `name` runs on `hw` (docs/model.md, "Number formats")."""
    fmt = number_format(name)
    if has_peak(hw, fmt.peak):
        table = hw.fp4_peak_flop_per_s if fmt.peak in FP4_PEAKS else hw.peak_flop_per_s
        return FormatRun(
            format=fmt,
            peak_flop_per_s=table[fmt.peak],
            peak_key=fmt.peak,
            dequantised=fmt.weight_only,
            emulated=False,
            fallback=False,
        )
    if fmt.missing == FALLBACK:  # the tutorial's rule: bf16 on the fp16 peak, tf32 on fp32
        peak, used = hw.peak_for(fmt.peak)
        return FormatRun(
            format=fmt,
            peak_flop_per_s=peak,
            peak_key=used,
            dequantised=fmt.weight_only,
            emulated=False,
            fallback=(fmt.peak, used) != ("bf16", "fp16"),
        )
    peak, used = hw.peak_for(WIDE_PEAK)  # the emulated path: weight-only at 16 bits
    return FormatRun(
        format=fmt,
        peak_flop_per_s=peak,
        peak_key=used,
        dequantised=True,
        emulated=True,
        fallback=True,
    )


def runs_natively(hw: HardwareSpec, name: object) -> bool:
    """True when `hw` runs the weight format `name` on its own peak (bf16 on the shared fp16
    figure counts), neither on a slower precision's peak nor emulated."""
    run = run_on(hw, name)
    return not (run.fallback or run.emulated)


def check_kv_on(hw: HardwareSpec, kv: str) -> None:
    """ValueError when the KV-cache format needs a peak the accelerator lacks (nvfp4 KV)."""
    need = kv_format(kv).needs_peak
    if need and not has_peak(hw, need):
        raise ValueError(
            f"an {need} KV cache needs FP4 tensor cores; {hw.id} lists no {need} peak "
            "(use fp8 or int8 KV)"
        )
