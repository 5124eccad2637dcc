"""The public entry points' argument handling: ids or specs in, validated values out.

`solve` takes catalogue ids (case- and punctuation-blind) or spec objects, a batch size, a
precision and the assumptions by their user-facing names and units (the CLI flags' names):
efficiency, layer_overhead_us, dispatch_overhead_ms, activation_fraction, flop_convention.
Every argument is checked before any arithmetic, with a message that says what is wrong.
"""

from __future__ import annotations

import functools
import math
import os

import numpy as np

from engine.catalog import ENV_VAR, Catalog, load_catalog
from engine.roofline import SolveResult, solve_specs
from engine.specs import DEFAULTS, Assumptions, HardwareSpec, ModelSpec, check_precision

MAX_BATCH = 1_000_000  # a batch larger than this is refused (no accelerator holds it)
# User-facing assumption name (CLI flag, JSON key, link parameter) -> (Assumptions field, scale
# from the user's unit to SI). The one table that maps the two.
ASSUMPTION_UNITS: dict[str, tuple[str, float]] = {
    "efficiency": ("efficiency", 1.0),
    "layer_overhead_us": ("layer_overhead_s", 1e-6),
    "dispatch_overhead_ms": ("dispatch_overhead_s", 1e-3),
    "activation_fraction": ("activation_fraction", 1.0),
    "flop_convention": ("flop_convention", 1.0),
    "bandwidth_efficiency": ("bandwidth_efficiency", 1.0),
    "memory_reserve": ("memory_reserve", 1.0),
    "attention_efficiency": ("attention_efficiency", 1.0),
    "expert_efficiency": ("expert_efficiency", 1.0),
    "link_efficiency": ("link_efficiency", 1.0),
    "link_latency_us": ("link_latency_s", 1e-6),
}
ASSUMPTION_NAMES = tuple(ASSUMPTION_UNITS)


@functools.lru_cache(maxsize=8)
def _catalog_for(env_value: str) -> Catalog:
    return load_catalog()


def default_catalog() -> Catalog:
    """The built-in catalogue plus ROOFLINE_CATALOG's files, cached per value of that variable."""
    return _catalog_for(os.environ.get(ENV_VAR, ""))


def resolve_model(model: str | ModelSpec, catalog: Catalog | None = None) -> ModelSpec:
    if isinstance(model, ModelSpec):
        return model
    return (catalog or default_catalog()).find_model(model)


def resolve_hardware(hardware: str | HardwareSpec, catalog: Catalog | None = None) -> HardwareSpec:
    if isinstance(hardware, HardwareSpec):
        return hardware
    return (catalog or default_catalog()).find_hardware(hardware)


def check_batch(batch_size: object) -> int:
    """A whole number of samples from 1 to MAX_BATCH, or ValueError."""
    if isinstance(batch_size, bool) or not isinstance(batch_size, int | float):
        raise ValueError(f"batch size must be a whole number, got {batch_size!r}")
    if isinstance(batch_size, int) and not 1 <= batch_size <= MAX_BATCH:  # 10**400 too
        raise ValueError(f"batch size must be a whole number between 1 and {MAX_BATCH:,}")
    if not math.isfinite(batch_size) or batch_size != int(batch_size):
        raise ValueError(f"batch size must be a whole number, got {batch_size!r}")
    if not 1 <= batch_size <= MAX_BATCH:
        raise ValueError(f"batch size must be between 1 and {MAX_BATCH:,}, got {batch_size!r}")
    return int(batch_size)


def check_batches(batch_sizes: object) -> np.ndarray:
    """Validate a list of batch sizes at once (vectorised check_batch); returns float64."""
    raw = np.asarray(batch_sizes).ravel()
    if raw.dtype.kind not in "iuf":  # rejects text, None, booleans and mixtures
        raise ValueError("batch sizes must be whole numbers")
    values = raw.astype(float)
    if values.size == 0:
        raise ValueError("batch sizes: give at least one")
    bad = ~np.isfinite(values) | (values != np.round(values)) | (values < 1) | (values > MAX_BATCH)
    if bad.any():
        raise ValueError(
            f"batch sizes must be whole numbers from 1 to {MAX_BATCH:,}, "
            f"got {batch_sizes[int(np.argmax(bad))]!r}"
        )
    return values


def make_assumptions(assumptions: Assumptions | None = None, **overrides: object) -> Assumptions:
    """Assumptions from the SPEC defaults (or `assumptions`) with user-unit overrides applied.

    Args:
        assumptions: a starting point; the SPEC §1 defaults if None.
        **overrides: any of ASSUMPTION_NAMES; None leaves a value as it is.

    Raises:
        ValueError: an unknown name, or a value out of range (the message names it).
    """
    base = assumptions or DEFAULTS
    unknown = sorted(set(overrides) - set(ASSUMPTION_NAMES))
    if unknown:
        known = ", ".join(ASSUMPTION_NAMES)
        raise ValueError(f"unknown assumption {unknown[0]!r} (known: {known})")
    values = {k: v for k, v in overrides.items() if v is not None}
    for name, value in values.items():
        if name != "flop_convention" and (
            isinstance(value, bool) or not isinstance(value, int | float)
        ):
            raise ValueError(f"{name} must be a number, got {value!r}")
        if isinstance(value, int) and abs(value) > 1e300:  # float(10**400) would overflow
            raise ValueError(f"{name} is out of range")
    kwargs = {field: getattr(base, field) for field, _ in ASSUMPTION_UNITS.values()}
    for name, value in values.items():
        field_name, factor = ASSUMPTION_UNITS[name]
        kwargs[field_name] = value * factor if name != "flop_convention" else value
    return Assumptions(**kwargs)


def solve(
    model: str | ModelSpec,
    hardware: str | HardwareSpec,
    batch_size: int = 1,
    precision: str = "fp16",
    *,
    catalog: Catalog | None = None,
    assumptions: Assumptions | None = None,
    **overrides: object,
) -> SolveResult:
    """The first-order roofline solve (SPEC §1) of one model on one accelerator.

    Args:
        model: a catalogue id ("ResNet-50", "resnet50") or a ModelSpec.
        hardware: a catalogue id ("A100") or a HardwareSpec.
        batch_size: samples per forward pass (1 to MAX_BATCH).
        precision: fp32, tf32, fp16, bf16, fp8, int8 or int4.
        catalog: where ids are looked up; the default catalogue (with ROOFLINE_CATALOG) if None.
        assumptions: a starting Assumptions; SPEC defaults if None.
        **overrides: efficiency, layer_overhead_us, dispatch_overhead_ms, activation_fraction,
            flop_convention ("catalog" or "mac2").

    Returns:
        A SolveResult; `.as_dict()` is the CLI's JSON object.
    """
    spec_m = resolve_model(model, catalog)
    spec_h = resolve_hardware(hardware, catalog)
    return solve_specs(
        spec_m,
        spec_h,
        check_batch(batch_size),
        check_precision(precision),
        make_assumptions(assumptions, **overrides),
    )
