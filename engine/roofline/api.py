"""The public entry points' argument handling: ids or specs in, validated values out.

`solve` takes catalogue ids (case- and punctuation-blind) or spec objects, a batch size, a
precision and the assumptions by their user-facing names and units (the CLI flags' names):
efficiency, layer_overhead_us, dispatch_overhead_ms, activation_fraction, flop_convention.
Every argument is checked before any arithmetic, with a message that says what is wrong.
"""

from __future__ import annotations

import functools
import os

import numpy as np

from engine.catalog.load import ENV_VAR, Catalog, load_catalog
from engine.catalog.specs import DEFAULTS, Assumptions, HardwareSpec, ModelSpec, check_precision
from engine.roofline.solve import SolveResult, solve_specs

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


_PAIRS: dict[tuple, tuple] = {}  # (catalogue id, model text, hardware text) -> specs


def resolve_pair(model, hardware, catalog: Catalog | None = None) -> tuple[ModelSpec, HardwareSpec]:
    """`resolve_model` and `resolve_hardware` at once, remembering what ids resolved to.

    The memo is per catalogue object (kept alongside, so a recycled id never matches); only
    successful lookups are kept, so an unknown id is refused with its message every time.
    """
    if type(model) is not str or type(hardware) is not str:
        return resolve_model(model, catalog), resolve_hardware(hardware, catalog)
    catalog = catalog or default_catalog()
    key = (id(catalog), model, hardware)
    hit = _PAIRS.get(key)
    if hit is None or hit[0] is not catalog:
        if len(_PAIRS) > 4096:
            _PAIRS.clear()
        hit = _PAIRS[key] = (catalog, catalog.find_model(model), catalog.find_hardware(hardware))
    return hit[1], hit[2]


def check_whole_numbers(
    values: object, name: str, *, high: int, low: int = 1, noun: str = "whole numbers"
) -> np.ndarray:
    """The one whole-number check: every value a whole number from `low` to `high`.

    Accepts Python and numpy integers and whole floats (4, np.int64(4), 4.0); refuses
    booleans, text, None, fractions, NaN/inf and out-of-range values with a ValueError that
    names `name` and the range (`noun` words it: "a whole number" for one value). One value
    or a sequence of them; returns float64 values.
    """
    try:
        raw = np.asarray(values)
    except (ValueError, TypeError, OverflowError):  # ragged or unconvertible input
        raw = np.asarray([None], dtype=object)
    what = f"{name}: expected {noun} from {low:,} to {high:,}"
    if raw.dtype.kind not in "iuf":  # rejects text, None, booleans, mixtures and huge ints
        raise ValueError(f"{what}, got {values!r}"[:200])
    x = raw.astype(float).ravel()
    if x.size == 0:
        raise ValueError(f"{name}: give at least one")
    bad = ~np.isfinite(x) | (x != np.round(x)) | (x < low) | (x > high)
    if bad.any():
        raise ValueError(f"{what}, got {raw.ravel()[int(np.argmax(bad))].item()!r}"[:200])
    return x


def check_whole(value: object, name: str, *, high: int, low: int = 1) -> int:
    """One whole number from `low` to `high` as an int (`check_whole_numbers` for one value)."""
    if type(value) is int and low <= value <= high:  # the common case, without numpy
        return value
    try:
        scalar = np.ndim(value) == 0
    except ValueError:  # a ragged nest of lists
        scalar = False
    if not scalar:
        raise ValueError(
            f"{name}: expected a whole number from {low:,} to {high:,}, got {value!r}"[:200]
        )
    return int(check_whole_numbers(value, name, high=high, low=low, noun="a whole number")[0])


def check_batch(batch_size: object) -> int:
    """A whole number of samples from 1 to MAX_BATCH, or ValueError."""
    return check_whole(batch_size, "batch size", high=MAX_BATCH)


def check_batches(batch_sizes: object) -> np.ndarray:
    """Batch sizes, each a whole number from 1 to MAX_BATCH, as float64 (or ValueError)."""
    return check_whole_numbers(batch_sizes, "batch sizes", high=MAX_BATCH)


def make_assumptions(assumptions: Assumptions | None = None, **overrides: object) -> Assumptions:
    """Assumptions from the defaults (or `assumptions`) with user-unit overrides applied.

    Args:
        assumptions: a starting point; the defaults of docs/model.md if None.
        **overrides: any of ASSUMPTION_NAMES; None leaves a value as it is.

    Raises:
        ValueError: an unknown name, or a value out of range (the message names it).
    """
    base = assumptions or DEFAULTS
    if not overrides:  # nothing to apply: `base` was checked when it was built
        return base
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
    """The first-order roofline solve (docs/model.md) of one model on one accelerator.

    Args:
        model: a catalogue id ("ResNet-50", "resnet50") or a ModelSpec.
        hardware: a catalogue id ("A100") or a HardwareSpec.
        batch_size: samples per forward pass, a whole number (int, numpy integer or whole
            float) from 1 to MAX_BATCH.
        precision: fp32, tf32, fp16, bf16, fp8, int8 or int4.
        catalog: where ids are looked up; the default catalogue (with ROOFLINE_CATALOG) if None.
        assumptions: a starting Assumptions; the defaults of docs/model.md if None.
        **overrides: efficiency, layer_overhead_us, dispatch_overhead_ms, activation_fraction,
            flop_convention ("catalog" or "mac2").

    Returns:
        A SolveResult; `.as_dict()` is the CLI's JSON object.
    """
    spec_m, spec_h = resolve_pair(model, hardware, catalog)
    return solve_specs(
        spec_m,
        spec_h,
        check_batch(batch_size),
        check_precision(precision),
        make_assumptions(assumptions, **overrides),
    )
