"""A user's own hypothetical accelerator or model, typed as text and carried in the share link.

The link holds one compact string per spec, `name=My chip;fp16=400 TFLOP/s;bandwidth=1.5 TB/s`;
it is checked field by field by the engine's catalogue parser (the same rules as a catalogue
file), so "3.35 TB/z" or "-1 GiB" is refused with a message naming the field.
"""

from __future__ import annotations

from dataclasses import fields

from engine import Catalog, HardwareSpec, ModelSpec, normalise_id, parse_hardware, parse_model
from ui.core.params import ParamError

CUSTOM_HW_ID = "Custom-HW"
CUSTOM_MODEL_ID = "Custom-Model"
ORIGIN = "custom (share link)"

# (link field, label, example); the first group's fields map onto the catalogue schema.
HW_FIELDS = (
    ("name", "Name", "My accelerator"),
    ("fp16", "Peak fp16/bf16 (dense)", "400 TFLOP/s"),
    ("fp8", "Peak fp8 (optional)", ""),
    ("int8", "Peak int8 (optional)", ""),
    ("fp32", "Peak fp32 (dense, non-tensor)", "50 TFLOP/s"),
    ("bandwidth", "Memory bandwidth", "1.5 TB/s"),
    ("capacity", "Memory capacity", "64 GiB"),
    ("dispatch", "Dispatch overhead", "0.01 ms"),
    ("tdp", "TDP", "350 W"),
)
MODEL_FIELDS = (
    ("name", "Name", "My model"),
    ("params", "Parameters", "1e9"),
    ("flops", "FLOPs per sample", "2 GFLOP"),
    ("convention", "FLOP convention (mac1 or mac2)", "mac2"),
    ("layers", "Layers", "24"),
)
_PEAKS = ("fp16", "fp8", "int8", "fp32")
_LINKED = "interconnect_name" in {f.name for f in fields(HardwareSpec)}  # catalogues name links


def decode(text: str, fields: tuple) -> dict[str, str]:
    """'a=1;b=2' -> {'a': '1', 'b': '2'}; unknown or repeated fields are refused."""
    allowed = {f for f, _, _ in fields}
    out: dict[str, str] = {}
    for part in (p.strip() for p in text.split(";")):
        if not part:
            continue
        key, sep, value = part.partition("=")
        key = key.strip().lower()
        if not sep or key not in allowed:
            raise ParamError(f"unknown field {key[:20]!r} (known: {', '.join(sorted(allowed))})")
        if key in out:
            raise ParamError(f"field {key!r} given twice")
        out[key] = value.strip()
    return out


def encode(values: dict[str, str], fields: tuple) -> str:
    return ";".join(f"{f}={values[f]}" for f, _, _ in fields if values.get(f, "").strip())


def hardware_from(values: dict[str, str]) -> HardwareSpec:
    """The custom accelerator; ValueError naming the field on any problem."""
    peaks = {p: values[p] for p in _PEAKS if values.get(p)}
    table = {
        "name": values.get("name") or "Custom accelerator",
        "peak": peaks,
        "memory_bandwidth": values.get("bandwidth", ""),
        "memory_capacity": values.get("capacity", ""),
        "dispatch_overhead": values.get("dispatch", ""),
        "tdp": values.get("tdp", ""),
        "source": "user input",
    }
    if _LINKED:  # a custom chip is one device: no device-to-device link
        table["interconnect"] = "none"
    return parse_hardware(CUSTOM_HW_ID, table, origin=ORIGIN)


def model_from(values: dict[str, str]) -> ModelSpec:
    """The custom model; ValueError naming the field on any problem."""
    layers = values.get("layers", "")
    if not layers.strip().isdigit():
        raise ParamError(f"layers: {layers[:20]!r} is not a whole number")
    table = {
        "name": values.get("name") or "Custom model",
        "params": values.get("params", ""),
        "flops_per_sample": values.get("flops", ""),
        "flop_convention": values.get("convention", "mac2"),
        "layers": int(layers),
        "source": "user input",
    }
    return parse_model(CUSTOM_MODEL_ID, table, origin=ORIGIN)


def read_custom_hw(text: str) -> str:
    """Share-link reader: the canonical string of a valid custom accelerator."""
    values = decode(text, HW_FIELDS)
    hardware_from(values)
    return encode(values, HW_FIELDS)


def read_custom_model(text: str) -> str:
    """Share-link reader: the canonical string of a valid custom model."""
    values = decode(text, MODEL_FIELDS)
    model_from(values)
    return encode(values, MODEL_FIELDS)


def with_custom(catalog: Catalog, hw_text: str | None, model_text: str | None) -> Catalog:
    """`catalog` plus the custom entries (already validated strings; None for none)."""
    hardware, models = dict(catalog.hardware), dict(catalog.models)
    if hw_text:
        hardware[CUSTOM_HW_ID] = hardware_from(decode(hw_text, HW_FIELDS))
    if model_text:
        models[CUSTOM_MODEL_ID] = model_from(decode(model_text, MODEL_FIELDS))
    return Catalog(
        hardware=hardware, models=models, problems=catalog.problems, overrides=catalog.overrides
    )


def is_custom(entry_id: str) -> bool:
    return normalise_id(entry_id) in (normalise_id(CUSTOM_HW_ID), normalise_id(CUSTOM_MODEL_ID))
