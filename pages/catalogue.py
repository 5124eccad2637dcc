"""Catalogue: every accelerator and model with its figures (pint-converted, units in the headers),
source and origin; plus an in-memory preview of a team catalogue file (never stored)."""

import numpy as np
import pandas as pd
import streamlit as st

import engine
from engine import PRECISIONS, TASKS, normalise_id
from ui.charts.tables import readable
from ui.core import custom, frame, state
from ui.core.downloads import download_csv
from ui.core.params import Param, ParamError, choice, listing, write_list
from ui.search import matches
from ui.widgets.editors import custom_editors
from ui.widgets.pickers import SHARED_NAMES, assumption_params

PAGE = "catalogue"
frame.setup_page("Catalogue")
BUILTIN = {str(p) for p in engine.BUILTIN_FILES}
RIDGE = "Ridge fp16 (FLOP/byte)"
UNIT = {p: "TOPS" if "int" in p else "TFLOP/s" for p in PRECISIONS}  # TOPS: 1 int op = 1 FLOP
PEAKS = {p: f"Peak {p.replace('fp16', 'fp16/bf16')} ({UNIT[p]}, dense)" for p in PRECISIONS}
UNITS = dict.fromkeys(PEAKS.values(), ("flop/s", "TFLOP/s")) | {"Dispatch (ms)": ("s", "ms")}
UNITS |= {"Bandwidth (GB/s)": ("byte/s", "GB/s"), "Capacity (GiB)": ("byte", "GiB")}
UNITS |= {"Params (B)": ("", "gigacount"), "Active params (B)": ("", "gigacount")}
UNITS |= {"FLOPs/sample (GFLOP)": ("flop", "GFLOP")}  # header: (SI unit, display unit)
WHOLE = ("Layers", "Hidden", "Heads", "KV heads", "Context (tokens)")
CONVENTION = {"mac1": "1 per MAC", "mac2": "2 per MAC"}


def vendor_of(h) -> str:
    return "Custom" if h.origin == custom.ORIGIN else (h.vendor or "unknown")


def provenance(spec) -> dict:
    """Origin, a link only for http(s) sources (else the text goes to the notes), date, notes."""
    url = spec.source if spec.source.startswith(("https://", "http://")) else None
    notes = f"{spec.notes} (source: {spec.source})" if spec.source and not url else spec.notes
    origin = "built-in" if spec.origin in BUILTIN else spec.origin
    return {"Origin": origin, "Source": url, "Retrieved": spec.retrieved, "Notes": notes.strip()}


def in_units(rows: list[dict]) -> pd.DataFrame:
    """Rows of SI values -> a table in the units its headers name."""
    df = pd.DataFrame(rows)
    for header in df.columns.intersection(list(UNITS)):
        si, shown = UNITS[header]
        df[header] = engine.quantity(df[header].to_numpy(float), si).m_as(shown).round(6)
    return df


def hardware_frame(specs: list) -> pd.DataFrame:
    rows = [
        {"Id": h.id, "Name": h.name, "Vendor": vendor_of(h)}
        | {PEAKS[p]: h.peak_flop_per_s.get(p, np.nan) for p in PRECISIONS}
        | {"Bandwidth (GB/s)": h.memory_bandwidth_bytes_per_s, "TDP (W)": h.tdp_w}
        | {"Capacity (GiB)": h.memory_capacity_bytes, "Dispatch (ms)": h.dispatch_overhead_s}
        | {RIDGE: h.peak_flop_per_s["fp16"] / h.memory_bandwidth_bytes_per_s}
        | provenance(h)
        for h in specs
    ]
    df = in_units(rows)
    return df.drop(columns=[c for c in PEAKS.values() if c in df and df[c].isna().all()])


def model_frame(specs: list) -> pd.DataFrame:
    rows = [
        {"Id": m.id, "Name": m.name, "Task": m.task, "Params (B)": m.params}
        | {"Active params (B)": m.active_params, "FLOPs/sample (GFLOP)": m.flops_per_sample}
        | {"FLOP convention": CONVENTION[m.flop_convention], "Sample": m.sample}
        | dict(zip(WHOLE, (m.layers, m.hidden, m.heads, m.kv_heads, m.context_length), strict=True))
        | provenance(m)
        for m in specs
    ]
    return in_units(rows).astype({w: "Int64" for w in WHOLE if rows})


def show_table(df: pd.DataFrame, key: str, filename: str, ids=None) -> None:
    df = df if ids is None else df[df["Id"].isin(ids)]  # headers stay when nothing matches
    config = {"Source": st.column_config.LinkColumn(display_text=r"https?://([^/]+)")}
    config[RIDGE] = st.column_config.NumberColumn(RIDGE, help="fp16 peak ÷ BW")
    st.dataframe(readable(df), key=key, hide_index=True, column_config=config)
    download_csv(df, filename, f"{key}_csv")


def search_text(text: str) -> str:
    if len(text) > 100:
        raise ParamError("search text longer than 100 characters")
    return text.strip()


def keep(spec, group: str, q: str, picked: list) -> bool:
    return matches(q, spec.id, spec.name, *spec.aliases, group) and (not picked or group in picked)


# --- inputs -----------------------------------------------------------------
base = frame.catalog()
vendors = sorted({vendor_of(h) for h in base.hardware.values()} | {"Custom"})
params = [Param("q", search_text), Param("task", listing(choice(TASKS)), write_list)]
params += [Param("vendor", listing(choice(vendors), max_items=50), write_list)]
params += [p for p in assumption_params() if p.name in ("custom_hw", "custom_model")]
warnings = state.bind(PAGE, params, {"q": ""})
key = {name: state.widget_key(PAGE, name) for name in ("q", "vendor", "task", "upload")}
with st.sidebar:
    q = st.text_input("Search id, name, vendor or task", key=key["q"], max_chars=100)
    picked_vendors = st.multiselect("Vendor", vendors, key=key["vendor"])
    picked_tasks = st.multiselect("Task", TASKS, key=key["task"])
    custom_hw, custom_model = custom_editors(PAGE)
cat = custom.with_custom(base, custom_hw, custom_model)

# --- engine -----------------------------------------------------------------
hardware = [h.id for h in cat.hardware.values() if keep(h, vendor_of(h), q, picked_vendors)]
models = [m.id for m in cat.models.values() if keep(m, m.task, q, picked_tasks)]
values = {"q": q or None, "vendor": picked_vendors or None, "task": picked_tasks or None}
values |= {"custom_hw": custom_hw, "custom_model": custom_model}
query = state.publish(PAGE, params, values, shared=[n for n in SHARED_NAMES if n in values])

# --- render -----------------------------------------------------------------
st.title("Catalogue")
frame.show_param_warnings(warnings)
frame.show_catalog_notes(cat)
if team := sorted({s.origin for s in (*cat.hardware.values(), *cat.models.values())} - BUILTIN):
    st.info("Entries not built in come from: " + ", ".join(f"`{t}`" for t in team), icon="📂")
st.caption(
    "GB = 10⁹ bytes, GB/s = 10⁹ bytes/s, GiB = 2³⁰ bytes. Peaks are dense (no 2:4 sparsity); "
    "int8/int4 peaks are TOPS; bf16 shares the fp16 peak unless listed. FLOP convention: 1 per "
    "MAC counts multiply-accumulates, 2 per MAC is the datasheets'. Dispatch is an assumption."
)
st.subheader(f"Accelerators ({len(hardware)} of {len(cat.hardware)})")
show_table(hardware_frame([*cat.hardware.values()]), "catalogue_hw", "accelerators.csv", hardware)
st.subheader(f"Models ({len(models)} of {len(cat.models)})")
show_table(model_frame([*cat.models.values()]), "catalogue_models", "models.csv", models)
label = f"Preview a team catalogue file (TOML, ≤ {engine.MAX_FILE_BYTES / 1e6:g} MB; never stored)"
upload = st.file_uploader(label, key=key["upload"], max_upload_size=1)
if upload is not None:
    found, problems = engine.read_catalog_bytes(upload.getvalue(), f"upload: {upload.name[:80]}")
    new_hw, new_models = list(found["hardware"].values()), list(found["models"].values())
    old = {normalise_id(k) for k in (*base.hardware, *base.models)}
    clash = [f"`{s.id}`" for s in (*new_hw, *new_models) if normalise_id(s.id) in old]
    counts = f"{len(new_hw)} accelerators, {len(new_models)} models, {len(problems)} problems"
    st.info(f"{counts}. Would override: {', '.join(clash) or 'nothing'}.", icon="📄")
    if problems:
        rows = [(p.file, p.entry, p.field, p.message) for p in problems]
        st.warning(f"{len(problems)} problem(s) in the file; those entries would be skipped.")
        st.dataframe(pd.DataFrame(rows, columns=["File", "Entry", "Field", "Problem"]))
    for df, name in ((hardware_frame(new_hw), "hw"), (model_frame(new_models), "models")):
        if len(df):
            show_table(df, f"upload_{name}", f"uploaded_{name}.csv")
frame.share_link(PAGE, query)
