"""Checked inputs of the training model: the model's shapes, the accelerator and its links, the
profile and its assumptions (docs/model.md, "Training step").

Shared by `train` and `train_search`, so a bad argument gets the same one-line message from
both before any arithmetic. The model is a catalogue id, a ModelSpec with shapes (e.g. from
`engine.model_from_config`) or an Architecture (e.g. `gpt_architecture(...)`); the accelerator
an id or a HardwareSpec. Assumptions start from a training profile (`megatron` by default) and
take overrides by their user names; only those the training model reads are accepted.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.arrays import INF
from engine.assumptions import TRAINING_NAMES, Assumptions, make_assumptions
from engine.catalog.arch import Architecture
from engine.catalog.profiles import get_training_profile
from engine.catalog.resolve import resolve_hardware
from engine.catalog.shapes import Shapes, shapes_of
from engine.catalog.specs import BYTES_PER_PARAM, HardwareSpec
from engine.checks import MAX_BATCH, MAX_DEGREE, MAX_TOKENS, check_whole
from engine.serving.inputs import device_values, efficiencies, llm_architecture
from engine.serving.kernel import Device, Efficiencies
from engine.training.collectives import Links
from engine.training.compute import ATTENTION_KERNELS
from engine.training.config import RECOMPUTE, TRAIN_PRECISIONS, ZERO_STAGES

MAX_GPUS = 1_000_000
# Count arguments and the most each may be (engine/checks.py gives the message).
LIMITS = {"gpus": MAX_GPUS, "tp": MAX_DEGREE, "pp": MAX_DEGREE, "cp": MAX_DEGREE,
          "vp": MAX_DEGREE, "ep": MAX_DEGREE, "micro_batch_size": MAX_BATCH,
          "global_batch_size": MAX_BATCH * 1000, "seq_len": MAX_TOKENS}  # fmt: skip


@dataclass(frozen=True, slots=True)
class Setup:
    """Everything but the configuration: checked, with the assumptions applied."""

    name: str
    arch: Architecture
    s: Shapes
    hw: HardwareSpec
    precision: str
    peak_precision: str
    dev: Device
    links: Links
    eta: Efficiencies
    assumptions: Assumptions
    profile: str
    weight_bytes: float  # bytes per weight element a GEMM reads
    echo: dict  # the assumptions the training model reads, user names and units


def check_recompute(value: object) -> int:
    if value not in RECOMPUTE:
        raise ValueError(f"recompute must be one of {', '.join(RECOMPUTE)}, got {value!r}"[:200])
    return RECOMPUTE.index(value)


def check_attention(value: object) -> str:
    if value not in ATTENTION_KERNELS:
        known = ", ".join(ATTENTION_KERNELS)
        raise ValueError(f"attention must be one of {known}, got {value!r}"[:200])
    return value


def check_zero(value: object) -> int:
    if isinstance(value, bool) or value not in ZERO_STAGES:
        raise ValueError(f"zero must be one of 0, 1, 2, 3 (the ZeRO stage), got {value!r}"[:200])
    return int(value)


def check_count(value: object, name: str) -> int:
    return check_whole(value, name, high=LIMITS[name])


def _assumptions(profile, assumptions, overrides: dict) -> tuple[str, Assumptions]:
    unknown = sorted(k for k, v in overrides.items() if v is not None and k not in TRAINING_NAMES)
    if unknown:
        known = ", ".join(TRAINING_NAMES)
        raise ValueError(f"the training model does not use {unknown[0]!r} (it reads: {known})")
    chosen = get_training_profile(profile)
    base = chosen.assumptions if assumptions is None else assumptions
    if not isinstance(base, Assumptions):
        raise ValueError(f"assumptions must be an Assumptions, got {type(base).__name__}")
    return chosen.name, make_assumptions(base, **overrides)


def links_of(hw: HardwareSpec, dev: Device, a: Assumptions) -> Links:
    """The in-node link and the network per GPU with their efficiencies (no network: INF
    bandwidth, never used because configurations spanning nodes are refused)."""
    net = hw.network_bandwidth_bytes_per_s
    latency = a.network_latency_s if a.network_latency_s is not None else hw.network_latency_s
    return Links(
        node_bw=dev.link_bw,
        node_lat=dev.link_lat,
        net_bw=INF if net is None else net * a.network_efficiency,
        net_lat=0.0 if latency is None else latency,
        per_node=float(hw.devices_per_node),
    )


def setup(model, hardware, *, precision, profile, assumptions, catalog, overrides) -> Setup:
    """Resolve and check everything a training call fixes besides its configurations."""
    if precision not in TRAIN_PRECISIONS:
        known = ", ".join(TRAIN_PRECISIONS)
        raise ValueError(f"training precision must be one of {known}, got {precision!r}"[:200])
    name, arch = (
        ("custom", model) if isinstance(model, Architecture) else llm_architecture(model, catalog)
    )
    hw = resolve_hardware(hardware, catalog)
    profile_name, a = _assumptions(profile, assumptions, overrides)
    dev, used = device_values(hw, precision, a)
    echo = a.as_dict()
    return Setup(
        name=name, arch=arch, s=shapes_of(arch), hw=hw, precision=precision,
        peak_precision=used, dev=dev, links=links_of(hw, dev, a), eta=efficiencies(a),
        assumptions=a, profile=profile_name, weight_bytes=BYTES_PER_PARAM[precision],
        echo={k: echo[k] for k in TRAINING_NAMES},
    )  # fmt: skip
