"""A user's own hypothetical accelerator or model, typed as text and carried in the share link.

The link holds one compact string per spec, `name=My chip;fp16=400 TFLOP/s;bandwidth=1.5 TB/s`;
it is checked field by field by the engine's catalogue parser (the same rules as a catalogue
file), so "3.35 TB/z" or "-1 GiB" is refused with a message naming the field.
"""

from __future__ import annotations

from dataclasses import fields

from engine import Catalog, HardwareSpec, ModelSpec, normalise_id, parse_hardware, parse_model
from ui.links.params import ParamError
from ui.words.i18n import N_, _

CUSTOM_HW_ID = "Custom-HW"
CUSTOM_MODEL_ID = "Custom-Model"
ORIGIN = N_("custom (share link)")  # data: the catalogue page compares it

# (link field, label, example); the first group's fields map onto the catalogue schema. Labels
# and the example names are translated where shown (ui/widgets/editors.py).
HW_FIELDS = (
    ("name", N_("Name"), N_("My accelerator")),
    ("fp16", N_("Peak fp16/bf16 (dense)"), "400 TFLOP/s"),
    ("fp8", N_("Peak fp8 (optional)"), ""),
    ("int8", N_("Peak int8 (optional)"), ""),
    ("fp32", N_("Peak fp32 (dense, non-tensor)"), "50 TFLOP/s"),
    ("bandwidth", N_("Memory bandwidth"), "1.5 TB/s"),
    ("capacity", N_("Memory capacity"), "64 GiB"),
    ("dispatch", N_("Dispatch overhead"), "0.01 ms"),
    ("tdp", "TDP", "350 W"),
)
MODEL_FIELDS = (
    ("name", N_("Name"), N_("My model")),
    ("params", N_("Parameters"), "1e9"),
    ("flops", N_("FLOPs per sample"), "2 GFLOP"),
    ("convention", N_("FLOP convention (mac1 or mac2)"), "mac2"),
    ("layers", N_("Layers"), "24"),
)
_PEAKS = ("fp16", "fp8", "int8", "fp32")
_LINKED = "interconnect_name" in {f.name for f in fields(HardwareSpec)}  # catalogues name links


def decode(text: str, fields: tuple) -> dict[str, str]:
    """'a=1;b=2' -> {'a': '1', 'b': '2'}; unknown or repeated fields are refused."""
    allowed = {f for f, *_rest in fields}
    out: dict[str, str] = {}
    for part in (p.strip() for p in text.split(";")):
        if not part:
            continue
        key, sep, value = part.partition("=")
        key = key.strip().lower()
        if not sep or key not in allowed:
            known = ", ".join(sorted(allowed))
            text = _("unknown field {field} (known: {known})")
            raise ParamError(text.format(field=repr(key[:20]), known=known))
        if key in out:
            raise ParamError(_("field {field} given twice").format(field=repr(key)))
        out[key] = value.strip()
    return out


def encode(values: dict[str, str], fields: tuple) -> str:
    return ";".join(f"{f}={values[f]}" for f, *_rest in fields if values.get(f, "").strip())


def hardware_from(values: dict[str, str]) -> HardwareSpec:
    """The custom accelerator; ValueError naming the field on any problem."""
    peaks = {p: values[p] for p in _PEAKS if values.get(p)}
    table = {
        "name": values.get("name") or _("Custom accelerator"),
        "peak": peaks,
        "memory_bandwidth": values.get("bandwidth", ""),
        "memory_capacity": values.get("capacity", ""),
        "dispatch_overhead": values.get("dispatch", ""),
        "tdp": values.get("tdp", ""),
        "source": _("user input"),
    }
    if _LINKED:  # a custom chip is one device: no device-to-device link
        table["interconnect"] = "none"
    return parse_hardware(CUSTOM_HW_ID, table, origin=ORIGIN)


def model_from(values: dict[str, str]) -> ModelSpec:
    """The custom model; ValueError naming the field on any problem."""
    layers = values.get("layers", "")
    if not layers.strip().isdigit():
        raise ParamError(_("layers: {value} is not a whole number").format(value=repr(layers[:20])))
    table = {
        "name": values.get("name") or _("Custom model"),
        "params": values.get("params", ""),
        "flops_per_sample": values.get("flops", ""),
        "flop_convention": values.get("convention", "mac2"),
        "layers": int(layers),
        "source": _("user input"),
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
