"""Shared pickers: model, accelerators, batch, batch list, precision and the assumptions.

Every widget is bound to a share-link parameter by its key `<page>:<name>` (ui.links.state) and
takes what it needs from the parameter's one declaration (ui.links.params.Param): a number
field's range is its reader's range, a picker's fallback is the declared default. A value
outside the range that reaches a number field (a profile's, another page's) is refused with a
warning beside the field, never silently clamped or blanked. The assumption defaults are the
engine's (docs/model.md) and always on screen, so nothing is hidden.
"""

from __future__ import annotations

import numbers

import streamlit as st

from engine import DEFAULTS, FORMATS, KV_FORMATS, PRECISIONS
from ui.links.params import MAX_LIST_ITEMS, MAX_VALUE_CHARS, Link, Number, write_list
from ui.links.state import drawn_index, drawn_with, show_link_notes, widget_key
from ui.words.format import sig
from ui.words.i18n import N_, _
from ui.words.text import plain

ASSUMPTION_INPUTS = {  # name: (label, widget options); the range is the parameter's. The
    # label, help and placeholder are English (N_) and translated where drawn (_assumption).
    "efficiency": (
        N_("Compute efficiency η (fraction of peak)"),
        dict(step=0.05, format="%.2f", help=N_("Default {default} (docs/model.md).")),
    ),
    "layer_overhead_us": (
        N_("Layer overhead τ (µs per layer)"),
        dict(step=1.0, help=N_("Framework/launch cost per layer per forward pass; default 10 µs.")),
    ),
    "dispatch_overhead_ms": (
        N_("Dispatch overhead d (ms per call)"),
        dict(
            value=None,
            step=0.005,
            format="%.3f",
            placeholder=N_("accelerator's figure"),
            help=N_("Blank = the accelerator's catalogued figure."),
        ),
    ),
    "activation_fraction": (
        N_("Activation traffic α (× weight bytes per sample)"),
        dict(
            step=0.05,
            format="%.3f",
            help=N_("Bytes moved per extra sample as a fraction of weight bytes; default 0.1."),
        ),
    ),
}
CONVENTION_LABELS = {"catalog": N_("as catalogued"), "mac2": N_("normalise to 2 FLOPs per MAC")}


def _is_number(value: object) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def number_field(key: str, reader: Number, label: str, *, where=None, default=None, **options):
    """A number field over exactly the range `reader` accepts, bound to `key`.

    A value already in the session but outside that range (a profile's or another page's)
    is refused: the field starts at `default` instead (blank if that is not a number), and a
    warning under the field says so, rather than Streamlit clamping or blanking it silently.
    """
    where = st if where is None else where
    refused = st.session_state.get(key)
    if _is_number(refused) and not reader.lo <= refused <= reader.hi:
        st.session_state[key] = default if _is_number(default) else None
    else:
        refused = None
    current = drawn_with(key)  # the first paint shows the value used (ui.links.state)
    if _is_number(current) and "value" not in options:  # value=None: a field that may be blank
        options["value"] = type(reader.lo)(current)  # Streamlit takes one numeric type
    value = where.number_input(label, reader.lo, reader.hi, key=key, **options)
    if refused is not None:
        where.warning(
            _("{value} was not used here: this field takes {lo} to {hi}.").format(
                value=sig(refused), lo=sig(reader.lo), hi=sig(reader.hi)
            ),
            icon="⚠️",
        )
    return value


def number_input(link: Link, name: str, label: str, *, where=None, **options):
    """The number field of link parameter `name`: its range and default from the declaration."""
    p = link[name]
    return number_field(link.key(name), p.read, label, where=where, default=p.default, **options)


def _keep_valid(key: str, options: list[str], fallback: str) -> None:
    """A state value no longer among the options (e.g. a custom entry switched off) resets."""
    if st.session_state.get(key) not in options:
        st.session_state[key] = fallback


def select_entry(
    link: Link, name: str, label: str, entries: dict, fallback: str | None = None
) -> str:
    """A selectbox over catalogue entries (shown by display name), bound to `<page>:name`; an
    entry no longer offered falls back to `fallback` (else the declared default, else the
    first entry)."""
    key = link.key(name)
    options = list(entries)
    fallback = fallback if fallback is not None else link[name].default
    _keep_valid(key, options, fallback if fallback in entries else options[0])
    index = drawn_index(key, options)
    chosen = st.selectbox(label, options, index, key=key, format_func=lambda k: entries[k].name)
    show_link_notes(link, name)
    return chosen


def select_hardware_list(
    link: Link, label: str, hardware: dict, max_selections: int
) -> tuple[list[str], bool]:
    """A multiselect of accelerators (shown by display name), bound to `<page>:hardware`. Ids
    no longer in `hardware` (e.g. the custom accelerator switched off) are dropped first.

    Returns:
        (the chosen ids, whether any was dropped).
    """
    key = link.key("hardware")
    before = st.session_state.get(key, [])
    kept = [h for h in before if h in hardware]
    if len(kept) < len(before):
        st.session_state[key] = kept
    ids = st.multiselect(
        label,
        list(hardware),
        default=drawn_with(key),
        key=key,
        max_selections=max_selections,
        format_func=lambda h: hardware[h].name,
    )
    show_link_notes(link, "hardware")
    return ids, len(kept) < len(before)


def select_precision(link: Link) -> str:
    key = link.key("precision")
    _keep_valid(key, list(PRECISIONS), link["precision"].default)
    return st.selectbox(
        _("Precision"),
        PRECISIONS,
        drawn_index(key, PRECISIONS),
        key=key,
        help=_(
            "Bytes per parameter: fp32/tf32 4, fp16/bf16 2, fp8/int8 1, int4 0.5. A chip without "
            "a peak for it uses one that is not faster (tf32 → fp32; fp8, int8, int4 → fp16), "
            "with a warning."
        ),
    )


FORMAT_HELP = N_(
    "The weights' and GEMMs' number format. Bits per weight with its scales: fp16/bf16 16, "
    "fp8 and int8 8, fp8-block 8.002, w4a16 4.125 (AWQ/GPTQ: 16-bit GEMMs after dequantising, "
    "at a cost: dequant_overhead), nvfp4 4.5 and mxfp4 4.25 (4-bit tensor cores). A chip "
    "without the format's tensor cores runs it emulated (weight-only, at the fp16 peak), with "
    "a warning. Older links' int4 is w4a16, fp4 is nvfp4."
)
KV_HELP = N_(
    "Bytes per KV-cache element: fp16/bf16 2, fp8 and int8 1, int4 0.5, nvfp4 0.5625 (needs "
    "FP4 tensor cores: refused elsewhere). 'same': the weight format's usual cache (w4a16: "
    "fp16, nvfp4: fp8, mxfp4: bf16)."
)


def select_format(link: Link) -> str:
    """The number format of the weights and GEMMs (engine.FORMATS), the link's note beside."""
    key = link.key("precision")
    options = list(FORMATS)
    _keep_valid(key, options, link["precision"].default)
    value = st.selectbox(
        _("Number format (weights and GEMMs)"),
        options,
        drawn_index(key, options),
        key=key,
        help=_(FORMAT_HELP),
    )
    show_link_notes(link, "precision")
    return value


def select_kv_format(link: Link, precision: str) -> str | None:
    """The KV-cache format; None for `same` (the weight format's default)."""
    key = link.key("kv_precision")
    options = ["same", *KV_FORMATS]
    _keep_valid(key, options, link["kv_precision"].default)
    kv = st.selectbox(
        _("KV-cache format"),
        options,
        drawn_index(key, options),
        key=key,
        help=_(KV_HELP),
        format_func=lambda v: (
            _("same as weights ({precision})").format(precision=precision) if v == "same" else v
        ),
    )
    show_link_notes(link, "kv_precision")
    return None if kv == "same" else kv


def batch_input(link: Link, label: str = N_("Batch size (samples)")) -> int:
    """The batch-size field (whole numbers, the range of the `batch` parameter; `label`:
    English, translated here)."""
    return int(number_input(link, "batch", _(label), step=1))


def _fill_batches(page: str, kind: str) -> None:
    """Generator buttons' callback: write a batch list into the text field before it runs."""
    n = int(st.session_state[widget_key(page, "batches.up_to")])
    text = f"1..{n}" if kind == "all" else write_list([2**k for k in range(n.bit_length())])
    st.session_state[widget_key(page, "batches")] = text


def batch_list_input(link: Link, *, generator: bool = False) -> list[int]:
    """The batch-list text field, bound to `<page>:batches`; returns the batch sizes to use.

    Text that does not parse shows an error under the field naming the problem, and the last
    valid list (else the declared default) is used. With `generator`, two buttons fill the
    field with "powers of two up to N" or "every batch 1..N" (ranges the parameter reads).
    """
    param, page = link["batches"], link.page
    valid_key = widget_key(page, "batches.valid")
    text = st.text_input(
        _("Batch sizes (comma-separated; ranges a..b or a..b:step)"),
        drawn_with(link.key("batches"), ""),
        key=link.key("batches"),
        max_chars=MAX_VALUE_CHARS,
        help=_("e.g. 1,2,4,8 · 1..2000 (every batch) · 8..512:8. At most {n}.").format(
            n=f"{MAX_LIST_ITEMS:,}"
        ),
    )
    try:
        batches = param.read(text)
        st.session_state[valid_key] = batches
    except ValueError as exc:
        batches = st.session_state.get(valid_key, param.default)
        st.error(
            _("Batch list not used: {reason}. Showing {batches}.").format(
                reason=plain(exc), batches=param.write(batches)
            ),
            icon="🚫",
        )
    show_link_notes(link, "batches")
    if generator:
        with st.popover(_("Generate a batch list")):
            up_to = widget_key(page, "batches.up_to")
            st.number_input(
                _("Up to N (batch size)"),
                min_value=1,
                max_value=MAX_LIST_ITEMS,
                value=2000,
                key=up_to,
            )
            kinds = (("pow2", _("Powers of two up to N")), ("all", _("Every batch 1..N")))
            for kind, label in kinds:
                key = widget_key(page, f"batches.{kind}")
                st.button(label, key=key, on_click=_fill_batches, args=(page, kind))
    return batches


def _translated(options: dict) -> dict:
    """An assumption field's options with its help and placeholder in the session's language
    (the efficiency's help names the engine's default)."""
    out = dict(options)
    for key in ("help", "placeholder"):
        if key in out:
            out[key] = _(out[key]).format(default=DEFAULTS.efficiency)
    return out


def assumption_inputs(link: Link) -> dict[str, object]:
    """The single-model solve's assumptions (docs/model.md), editable; returns override keywords."""
    with st.expander(_("Assumptions"), expanded=True):
        values = {
            name: number_input(link, name, _(label), **_translated(options))
            for name, (label, options) in ASSUMPTION_INPUTS.items()
        }
        values["flop_convention"] = st.radio(
            _("FLOP convention"),
            list(CONVENTION_LABELS),
            drawn_index(link.key("flop_convention"), list(CONVENTION_LABELS)),
            key=link.key("flop_convention"),
            format_func=lambda c: _(CONVENTION_LABELS[c]),
            help=_(
                "Datasheets count a multiply-accumulate as 2 FLOPs; some model figures "
                "(ResNet-50's 4.1 G) count it as 1."
            ),
        )
    return values


def split_inputs(link: Link) -> tuple[int, bool]:
    """An MoE model's layout inside the TP devices (the link's `ep` and `attention_dp`,
    ui.links.link_params.moe_split): expert-parallel ranks, and attention data parallelism. One
    under the other: beside each other in the sidebar the toggle's label was cut ("Attent…")."""
    ep = number_input(
        link,
        "ep",
        _("EP (expert-parallel ranks)"),
        help=_(
            "MoE models: the routed experts spread over this many of the TP devices (it must "
            "divide TP and the experts); 1: every device holds a slice of every expert."
        ),
    )
    on = st.toggle(
        _("Attention DP"),
        key=link.key("attention_dp"),
        help=_(
            "Attention (and every layer but the routed experts) data-parallel over the TP "
            "devices: each holds its own sequences and their whole KV cache; MoE layers send "
            "the tokens to their experts and back (docs/model.md, 'MoE layouts')."
        ),
    )
    return int(ep), bool(on)


def split_words(ep: int, attention_dp: bool) -> str:
    """', EP 8, attention DP' for an MoE layout, to follow 'TP 8 × PP 1' ('' for neither)."""
    text = _(", EP {ep}").format(ep=ep) if ep > 1 else ""
    return text + (_(", attention DP") if attention_dp else "")
