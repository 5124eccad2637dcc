"""The planner's share-link parameters and sidebar inputs (Streamlit glue around ui.core.params).

Link parameters (a public contract): model, hardware (comma list), input_tokens, output_tokens,
ttft_ms, tpot_ms, min_tokens_per_s_per_user (a number, or `none` for no limit), tp, pp
(comma lists), precisions (comma list), batches (`1,2,4` or ranges `1..256`, `8..512:8`),
profile (a built-in profile), prices, and the serving assumptions by their CLI names
(efficiency, layer_overhead_us, dispatch_overhead_ms, bandwidth_efficiency, memory_reserve,
attention_efficiency, expert_efficiency, link_efficiency, link_latency_us; absent = the
profile's value). Prices are one parameter, `prices=H100:6.16,A100:2.7,Gaudi3:none` (USD per
accelerator-hour; `none`: no price; an accelerator left out: the catalogue's list price).
The page writes every chosen accelerator's price back, so a link keeps the prices it was made
with. Serving model and profiles: docs/model.md.
"""

from __future__ import annotations

from collections.abc import Mapping

import streamlit as st

import engine
from ui.core import custom, state
from ui.core.format import fmt
from ui.core.params import (
    MAX_VALUE_CHARS,
    Param,
    ParamError,
    choice,
    listing,
    number,
    write_list,
)
from ui.widgets import pickers as widgets

PAGE = "plan"
MAX_TOKENS = engine.MAX_CONTEXT  # tokens per request (input or output)
MAX_DEGREE = 1024  # a TP or PP degree; the serving model refuses more
NONE = "none"  # the link's word for "no limit" / "no price"
MAX_HARDWARE = 8
DEFAULT_BATCHES = [2**k for k in range(9)]  # 1, 2, 4, ..., 256
DEFAULTS = {"model": "Llama-3.1-70B", "hardware": ["H100", "A100", "MI300X"]}
DEFAULTS |= {"input_tokens": 1024, "output_tokens": 256, "ttft_ms": 2000.0, "tpot_ms": 50.0}
DEFAULTS |= {"min_tokens_per_s_per_user": NONE, "tp": [1, 2, 4, 8], "pp": [1]}
DEFAULTS |= {"precisions": ["fp16", "fp8"], "batches": DEFAULT_BATCHES, "profile": "tutorial"}
SLOS = {  # link name: (widget label, help)
    "ttft_ms": ("TTFT ≤ (ms)", "Time to first token: the prefill of the whole batch."),
    "tpot_ms": ("TPOT ≤ (ms)", "Time per output token: one decode step."),
    "min_tokens_per_s_per_user": (
        "Tokens/s per user ≥",
        "Output tokens per second each user sees (= 1000 / TPOT in ms).",
    ),
}
# name: (label, lowest, highest, step); blank = the profile's value
ASSUMPTIONS = {
    "efficiency": ("Compute efficiency η (fraction of peak)", widgets.EFFICIENCY_MIN, 1.0, 0.05),
    "bandwidth_efficiency": ("Bandwidth efficiency (fraction of peak)", 0.01, 1.0, 0.05),
    "attention_efficiency": ("Attention compute efficiency (fraction)", 0.01, 1.0, 0.05),
    "expert_efficiency": ("MoE expert compute efficiency (fraction)", 0.01, 1.0, 0.05),
    "link_efficiency": ("Interconnect efficiency (fraction of peak)", 0.01, 1.0, 0.05),
    "link_latency_us": ("Link latency (µs per hop)", 0.0, 1e6, 1.0),
    "layer_overhead_us": ("Layer overhead τ (µs per layer per step)", 0.0, 1e6, 1.0),
    "dispatch_overhead_ms": ("Dispatch overhead d (ms per step)", 0.0, 1e4, 0.005),
    "memory_reserve": ("Memory reserve (fraction of capacity held back)", 0.0, 0.95, 0.05),
}


def k(name: str) -> str:
    """The planner's session key of a widget (`plan:<name>`)."""
    return state.widget_key(PAGE, name)


def _llm_reader(cat: engine.Catalog):
    def read(text: str) -> str:
        model = cat.find_model(text)
        if getattr(model, "arch", None) is None:
            raise ParamError(f"{model.id} has no shapes: the planner needs a decoder LLM")
        return model.id

    return read


def _limit(text: str) -> float | str:
    """A limit in its unit, or "none" (no limit)."""
    return NONE if text.strip().lower() == NONE else number(0.0, 1e9, lo_open=True)(text)


def _prices_reader(cat: engine.Catalog):
    def read(text: str) -> dict[str, float | None]:
        out = {}
        for item in (p.strip() for p in text.split(",")):
            name, sep, price = item.rpartition(":")
            if not item or not sep:
                raise ParamError(f"{item[:40]!r}: write ACCELERATOR:USD (e.g. H100:6.16)")
            key = custom.CUSTOM_HW_ID if custom.is_custom(name) else cat.find_hardware(name).id
            out[key] = None if price.strip().lower() == NONE else number(0.0, 1e6)(price)
        if len(out) > 32:
            raise ParamError("more than 32 accelerators")
        return out

    return read


def _write_prices(prices: Mapping[str, float | None]) -> str:
    return ",".join(f"{h}:{NONE if v is None else f'{v:.6g}'}" for h, v in prices.items())


def _whole_list(top: int, max_items: int = 16):
    reader = listing(number(1, top, whole=True), max_items=max_items)
    return lambda text: sorted(reader(text))


def params(cat: engine.Catalog) -> list[Param]:
    """Every link parameter of the planner, as the page and the fuzz tests build them."""
    tokens = number(1, MAX_TOKENS, whole=True)
    out = [Param("model", _llm_reader(cat)), widgets.hardware_list_param(cat, MAX_HARDWARE)]
    out += [Param("input_tokens", tokens, widgets.write_number)]
    out += [Param("output_tokens", number(2, MAX_TOKENS, whole=True), widgets.write_number)]
    out += [Param(name, _limit, widgets.write_number) for name in SLOS]
    out += [Param(n, _whole_list(MAX_DEGREE), write_list, text_widget=True) for n in ("tp", "pp")]
    out += [Param("precisions", listing(choice(engine.PRECISIONS), max_items=8), write_list)]
    out += [widgets.batches_param(4096, ranges=True)]
    out += [Param("profile", choice(engine.profile_names()))]
    out += [Param("prices", _prices_reader(cat), _write_prices)]
    out += [Param(name, number(lo, hi), widgets.write_number) for name, (_, lo, hi, _) in
            ASSUMPTIONS.items()]  # fmt: skip
    return out + [p for p in widgets.assumption_params() if p.name.startswith("custom_")]


def keep_profile_values() -> None:
    """Before binding: an assumption not in the link starts blank (the profile's value), not
    at another page's choice (those are relative to the tutorial defaults)."""
    in_link = set(state.raw_query())
    for name in ASSUMPTIONS:
        if k(name) not in st.session_state and name not in in_link:
            st.session_state[k(name)] = None


def workload_inputs(llms: Mapping[str, engine.ModelSpec]) -> tuple[str, tuple[int, int]]:
    """The model (decoder LLMs with shapes) and the request: input and output tokens."""
    model_id = widgets.select_entry(
        PAGE, "model", "Model (decoder LLMs)", dict(llms), DEFAULTS["model"]
    )
    left, right = st.columns(2)
    n_in = left.number_input("Input tokens", 1, MAX_TOKENS, step=128, key=k("input_tokens"))
    n_out = right.number_input("Output tokens", 2, MAX_TOKENS, step=64, key=k("output_tokens"))
    return model_id, (int(n_in), int(n_out))


def grid_inputs(cat: engine.Catalog, by_name: Mapping[str, Param]) -> dict:
    """Accelerators, TP and PP degrees, precisions and batch sizes (the grid's axes)."""
    label = f"Accelerators (1–{MAX_HARDWARE})"
    hw_ids, _ = widgets.select_hardware_list(PAGE, label, cat.hardware, MAX_HARDWARE)
    tip = "Comma-separated whole numbers; values the model cannot use are left out, with why."
    tps = list_input("tp", "Tensor-parallel degrees (TP)", by_name["tp"], tip)
    pps = list_input("pp", "Pipeline-parallel degrees (PP)", by_name["pp"], tip)
    precisions = st.multiselect(
        "Precisions (weights and KV cache)", engine.PRECISIONS, key=k("precisions"),
        help="A chip without a peak for a precision is not planned at it (said on the page).",
    )  # fmt: skip
    batches = widgets.batch_list_input(PAGE, by_name["batches"], DEFAULT_BATCHES, generator=True)
    return {"hardware": hw_ids, "tp": tps, "pp": pps, "precisions": precisions,
            "batches": batches}  # fmt: skip


def slo_inputs() -> dict[str, float | None]:
    """The three limits; blank = no limit."""
    out = {}
    for name, (label, tip) in SLOS.items():
        if st.session_state.get(k(name)) == NONE:
            st.session_state[k(name)] = None  # the link's "none": the field starts blank
        out[name] = st.number_input(
            label, 0.001, 1e9, value=None, step=1.0, key=k(name), placeholder="no limit",
            help=tip + " Blank: no limit.",
        )  # fmt: skip
    return out


def list_input(name: str, label: str, param: Param, tip: str) -> list:
    """A comma-list text field; text that does not parse is named under it, default used."""
    text = st.text_input(label, key=k(name), max_chars=MAX_VALUE_CHARS, help=tip)
    try:
        return param.read(text)
    except ValueError as exc:
        st.error(f"{label} not used: {exc}. Using {write_list(DEFAULTS[name])}.", icon="🚫")
        return DEFAULTS[name]


def price_inputs(hardware: Mapping[str, engine.HardwareSpec]) -> dict[str, float | None]:
    """One price field per chosen accelerator, seeded from the link, else the catalogue."""
    linked = st.session_state.get(k("prices")) or {}
    out = {}
    with st.expander("Prices (USD per accelerator-hour)", expanded=False):
        st.caption(
            "From the catalogue: public on-demand list prices, dated (table below the results). "
            "Blank: no price. In the link: prices=H100:6.16,A100:none."
        )
        for hw_id, hw in hardware.items():
            key = k(f"price.{hw_id}")
            if key not in st.session_state:
                st.session_state[key] = linked.get(hw_id, hw.price_per_hour_usd)
            out[hw_id] = st.number_input(
                hw.name, 0.0, 1e6, value=None, step=0.1, format="%.2f", key=key,
                placeholder="no price",
            )  # fmt: skip
    st.session_state[k("prices")] = {**linked, **out}  # an accelerator chosen again keeps it
    return out


def profile_input() -> engine.Profile:
    """The built-in profile whose assumptions the sweep starts from."""
    name = st.selectbox(
        "Profile (serving assumptions)", engine.profile_names(), key=k("profile"),
        help="tutorial: the tutorial's defaults; trtllm: fitted on TensorRT-LLM measurements "
        "(docs/model.md, Accuracy). Fields under Assumptions override it.",
    )  # fmt: skip
    return engine.get_profile(name)


def assumption_inputs(profile: engine.Profile) -> dict[str, float | None]:
    """Overrides of the profile's assumptions (blank: the profile's value, shown greyed)."""
    values = profile.values()
    out = {}
    with st.expander(f"Assumptions (profile {profile.name} unless set)", expanded=False):
        for name, (label, lo, hi, step) in ASSUMPTIONS.items():
            base = values.get(name)
            shown = "the catalogue's figure" if base is None else fmt(base)
            out[name] = st.number_input(
                label, lo, hi, value=None, step=step, key=k(name),
                placeholder=f"profile: {shown}", format="%.3f",
            )  # fmt: skip
    return out
