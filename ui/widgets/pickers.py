"""Shared pickers: model, hardware, precision, the assumptions and the custom-spec editors.

Every widget has a key `<page>:<param>` bound to a share-link parameter (ui.core.state). The
assumption defaults are the engine's (docs/model.md) and always on screen, so nothing is hidden.
"""

from __future__ import annotations

import streamlit as st

from engine import DEFAULTS, MAX_BATCH, PRECISIONS, Catalog
from ui.core import custom
from ui.core.params import (
    MAX_LIST_ITEMS,
    MAX_VALUE_CHARS,
    Param,
    choice,
    listing,
    number,
    whole_ranges,
    write_list,
    write_number,
    write_ranges,
)
from ui.core.state import widget_key

ASSUMPTION_DEFAULTS = {
    "efficiency": DEFAULTS.efficiency,
    "layer_overhead_us": DEFAULTS.layer_overhead_s * 1e6,
    "dispatch_overhead_ms": None,  # None: the accelerator's catalogued figure
    "activation_fraction": DEFAULTS.activation_fraction,
    "flop_convention": DEFAULTS.flop_convention,
}
EFFICIENCY_MIN = 0.01  # the efficiency widget's and the link's lower bound (one range)
ASSUMPTION_INPUTS = {  # name: (label, low, high, options): the widget's and the link's range
    "efficiency": (
        "Compute efficiency η (fraction of peak)",
        EFFICIENCY_MIN,
        1.0,
        dict(step=0.05, format="%.2f", help=f"Default {DEFAULTS.efficiency} (docs/model.md)."),
    ),
    "layer_overhead_us": (
        "Layer overhead τ (µs per layer)",
        0.0,
        1e6,
        dict(step=1.0, help="Framework/launch cost per layer per forward pass; default 10 µs."),
    ),
    "dispatch_overhead_ms": (
        "Dispatch overhead d (ms per call)",
        0.0,
        1e4,
        dict(
            value=None,
            step=0.005,
            format="%.3f",
            placeholder="accelerator's figure",
            help="Blank = the accelerator's catalogued figure.",
        ),
    ),
    "activation_fraction": (
        "Activation traffic α (× weight bytes per sample)",
        0.0,
        1e3,
        dict(
            step=0.05,
            format="%.3f",
            help="Bytes moved per extra sample as a fraction of weight bytes; default 0.1.",
        ),
    ),
}
CONVENTION_LABELS = {"catalog": "as catalogued", "mac2": "normalise to 2 FLOPs per MAC"}
SHARED_NAMES = ("model", "precision", *ASSUMPTION_DEFAULTS, "custom_hw", "custom_model")
SHARED_NAMES += ("view", "context", "memory_reserve")  # the LLM view (ui.widgets.llm_view)


def _model_reader(cat: Catalog):
    return choice(
        (), canon=lambda t: custom.CUSTOM_MODEL_ID if custom.is_custom(t) else cat.find_model(t).id
    )


def _hardware_reader(cat: Catalog):
    return choice(
        (), canon=lambda t: custom.CUSTOM_HW_ID if custom.is_custom(t) else cat.find_hardware(t).id
    )


def assumption_params() -> list[Param]:
    """The assumptions' link parameters, each over its widget's range (ASSUMPTION_INPUTS)."""
    numbers = [
        Param(name, number(lo, hi), write_number)
        for name, (_, lo, hi, _) in ASSUMPTION_INPUTS.items()
    ]
    return [
        Param("precision", choice(PRECISIONS)),
        *numbers,
        Param("flop_convention", choice(tuple(CONVENTION_LABELS))),
        Param("custom_hw", custom.read_custom_hw),
        Param("custom_model", custom.read_custom_model),
    ]


def model_param(cat: Catalog) -> Param:
    return Param("model", _model_reader(cat))


def hardware_param(cat: Catalog, name: str = "hardware") -> Param:
    return Param(name, _hardware_reader(cat))


def hardware_list_param(cat: Catalog, max_items: int = 8) -> Param:
    return Param("hardware", listing(_hardware_reader(cat), max_items=max_items), write_list)


def batch_param(name: str = "batch") -> Param:
    return Param(name, number(1, MAX_BATCH, whole=True), write_number)


def batch_input(page: str, label: str = "Batch size (samples)") -> int:
    """The batch-size field (whole numbers, the same range as `batch_param`)."""
    return int(st.number_input(label, 1, MAX_BATCH, step=1, key=widget_key(page, "batch")))


def batches_param(max_items: int = 4096, *, ranges: bool = False) -> Param:
    """A batch list; with `ranges`, `1..2000` and `8..512:8` are read and written compactly."""
    if ranges:
        reader = whole_ranges(1, MAX_BATCH, max_items=max_items)
        return Param("batches", reader, write_ranges, text_widget=True)
    reader = listing(number(1, MAX_BATCH, whole=True), max_items=max_items)
    return Param("batches", lambda t: sorted(reader(t)), write_list, text_widget=True)


def _keep_valid(key: str, options: list[str], fallback: str) -> None:
    """A state value no longer among the options (e.g. a custom entry switched off) resets."""
    if st.session_state.get(key) not in options:
        st.session_state[key] = fallback


def select_entry(page: str, name: str, label: str, entries: dict, fallback: str) -> str:
    """A selectbox over catalogue entries (shown by display name), bound to `page:name`."""
    key = widget_key(page, name)
    options = list(entries)
    _keep_valid(key, options, fallback if fallback in entries else options[0])
    return st.selectbox(label, options, key=key, format_func=lambda k: entries[k].name)


def select_hardware_list(
    page: str, label: str, hardware: dict, max_selections: int
) -> tuple[list[str], bool]:
    """A multiselect of accelerators (shown by display name), bound to `page:hardware`. Ids no
    longer in `hardware` (e.g. the custom accelerator switched off) are dropped first.

    Returns:
        (the chosen ids, whether any was dropped).
    """
    key = widget_key(page, "hardware")
    before = st.session_state.get(key, [])
    kept = [h for h in before if h in hardware]
    if len(kept) < len(before):
        st.session_state[key] = kept
    ids = st.multiselect(
        label,
        list(hardware),
        key=key,
        max_selections=max_selections,
        format_func=lambda h: hardware[h].name,
    )
    return ids, len(kept) < len(before)


def select_precision(page: str) -> str:
    key = widget_key(page, "precision")
    _keep_valid(key, list(PRECISIONS), "fp16")
    return st.selectbox(
        "Precision",
        PRECISIONS,
        key=key,
        help="Bytes per parameter: fp32/tf32 4, fp16/bf16 2, fp8/int8 1, int4 0.5."
        " A chip without a peak for it uses one that is not faster (tf32 → fp32; fp8, int8,"
        " int4 → fp16), with a warning.",
    )


def _fill_batches(page: str, kind: str) -> None:
    """Generator buttons' callback: write a batch list into the text field before it runs."""
    n = int(st.session_state[widget_key(page, "batches.up_to")])
    text = f"1..{n}" if kind == "all" else write_list([2**k for k in range(n.bit_length())])
    st.session_state[widget_key(page, "batches")] = text


def batch_list_input(
    page: str, param: Param, default: list[int], *, generator: bool = False
) -> list[int]:
    """The batch-list text field, bound to `page:batches`; returns the batch sizes to use.

    Text that does not parse shows an error under the field naming the problem, and the last
    valid list (else `default`) is used. With `generator`, two buttons fill the field with
    "powers of two up to N" or "every batch 1..N" (read by `batches_param(ranges=True)`).
    """
    valid_key = widget_key(page, "batches.valid")
    text = st.text_input(
        "Batch sizes (comma-separated; ranges a..b or a..b:step)",
        key=widget_key(page, "batches"),
        max_chars=MAX_VALUE_CHARS,
        help=f"e.g. 1,2,4,8 · 1..2000 (every batch) · 8..512:8. At most {MAX_LIST_ITEMS:,}.",
    )
    try:
        batches = param.read(text)
        st.session_state[valid_key] = batches
    except ValueError as exc:
        batches = st.session_state.get(valid_key, default)
        st.error(f"Batch list not used: {exc}. Showing {param.write(batches)}.", icon="🚫")
    if generator:
        with st.popover("Generate a batch list"):
            up_to = widget_key(page, "batches.up_to")
            st.number_input("Up to N (batch size)", 1, MAX_LIST_ITEMS, 2000, key=up_to)
            for kind, label in (("pow2", "Powers of two up to N"), ("all", "Every batch 1..N")):
                key = widget_key(page, f"batches.{kind}")
                st.button(label, key=key, on_click=_fill_batches, args=(page, kind))
    return batches


def assumption_inputs(page: str) -> dict[str, object]:
    """The single-model solve's assumptions (docs/model.md), editable; returns override keywords."""
    with st.expander("Assumptions", expanded=True):
        values = {
            name: st.number_input(label, lo, hi, key=widget_key(page, name), **options)
            for name, (label, lo, hi, options) in ASSUMPTION_INPUTS.items()
        }
        values["flop_convention"] = st.radio(
            "FLOP convention",
            list(CONVENTION_LABELS),
            key=widget_key(page, "flop_convention"),
            format_func=CONVENTION_LABELS.get,
            help="Datasheets count a multiply-accumulate as 2 FLOPs; some model "
            "figures (ResNet-50's 4.1 G) count it as 1.",
        )
    return values
