"""Catalogue: every accelerator and model with its figures (pint-converted, units in the headers),
source and origin; plus an in-memory preview of a team catalogue file (never stored)."""

import pandas as pd
import streamlit as st

import engine
from engine import TASKS, normalise_id
from ui.catalogue import frames as fr
from ui.catalogue.link import PAGE, declare, vendors
from ui.catalogue.search import keep
from ui.charts.tables import readable
from ui.core import frame
from ui.core.downloads import download_csv
from ui.links import custom, state
from ui.links import link_params as lp
from ui.widgets.editors import custom_editors
from ui.words.i18n import _

frame.setup_page("Catalogue")


def show_table(df: pd.DataFrame, key: str, filename: str, ids=None) -> None:
    df = df if ids is None else df[df["Id"].isin(ids)]  # headers stay when nothing matches
    ridge = _(fr.RIDGE)  # the screen's headers are translated (fr.shown), the CSV's are not
    config = {_("Source"): st.column_config.LinkColumn(display_text=r"https?://([^/]+)")}
    config[ridge] = st.column_config.NumberColumn(ridge, help=_("fp16 peak ÷ BW"))
    st.dataframe(readable(fr.shown(df)), key=key, hide_index=True, column_config=config)
    download_csv(df, filename, f"{key}_csv")


# --- inputs -----------------------------------------------------------------
base = frame.catalog()
link = declare(base)
warnings = state.bind(link)
with st.sidebar:
    q = st.text_input(_("Search id, name, vendor or task"), key=link.key("q"), max_chars=100)
    picked_vendors = st.multiselect(_("Vendor"), vendors(base), key=link.key("vendor"))
    picked_tasks = st.multiselect(_("Task"), TASKS, key=link.key("task"))
    custom_hw, custom_model = custom_editors(PAGE)
cat = custom.with_custom(base, custom_hw, custom_model)

# --- engine -----------------------------------------------------------------
hardware = [
    h.id
    for h in cat.hardware.values()
    if keep(spec=h, group=fr.vendor_of(h), query=q, picked=picked_vendors)
]
models = [
    m.id for m in cat.models.values() if keep(spec=m, group=m.task, query=q, picked=picked_tasks)
]
query = state.publish(link, shared=lp.SHARED_NAMES)

# --- render -----------------------------------------------------------------
st.title(_("Catalogue"))
frame.show_param_warnings(warnings)
frame.show_catalog_notes(cat)
if team := sorted({s.origin for s in (*cat.hardware.values(), *cat.models.values())} - fr.BUILTIN):
    st.info(
        _("Entries not built in come from: {files}").format(
            files=", ".join(f"`{t}`" for t in team)
        ),
        icon="📂",
    )
st.caption(
    _(
        "GB = 10⁹ bytes, GB/s = 10⁹ bytes/s, GiB = 2³⁰ bytes. Peaks are dense (no 2:4 "
        "sparsity); int8/int4 peaks are TOPS; bf16 shares the fp16 peak unless listed; "
        "nvfp4/mxfp4 are the 4-bit block-scaled tensor cores' (Blackwell, CDNA4), which the "
        "serving model's number formats read. FLOP convention: 1 per MAC counts "
        "multiply-accumulates, 2 per MAC is the datasheets'. Dispatch is an assumption."
    )
)
st.subheader(
    _("Accelerators ({shown} of {total})").format(shown=len(hardware), total=len(cat.hardware))
)
show_table(
    df=fr.hardware_frame([*cat.hardware.values()]),
    key="catalogue_hw",
    filename="accelerators.csv",
    ids=hardware,
)
st.subheader(_("Models ({shown} of {total})").format(shown=len(models), total=len(cat.models)))
show_table(
    df=fr.model_frame([*cat.models.values()]),
    key="catalogue_models",
    filename="models.csv",
    ids=models,
)
label = _("Preview a team catalogue file (TOML, ≤ {size} bytes; never stored)").format(
    size=f"{engine.MAX_FILE_BYTES:,}"
)
upload = st.file_uploader(label, key=link.key("upload"), max_upload_size=engine.MAX_UPLOAD_MB)
if upload is not None:
    found, problems = engine.read_catalog_bytes(upload.getvalue(), f"upload: {upload.name[:80]}")
    new_hw, new_models = list(found["hardware"].values()), list(found["models"].values())
    old = {normalise_id(k) for k in (*base.hardware, *base.models)}
    clash = [f"`{s.id}`" for s in (*new_hw, *new_models) if normalise_id(s.id) in old]
    st.info(
        _(
            "{accelerators} accelerators, {models} models, {problems} problems. Would "
            "override: {clash}."
        ).format(
            accelerators=len(new_hw),
            models=len(new_models),
            problems=len(problems),
            clash=", ".join(clash) or _("nothing"),
        ),
        icon="📄",
    )
    if problems:
        rows = [(p.file, p.entry, p.field, p.message) for p in problems]
        st.warning(
            _("{count} problem(s) in the file; those entries would be skipped.").format(
                count=len(problems)
            )
        )
        columns = [_("File"), _("Entry"), _("Field"), _("Problem")]
        st.dataframe(pd.DataFrame(rows, columns=columns))
    for df, name in ((fr.hardware_frame(new_hw), "hw"), (fr.model_frame(new_models), "models")):
        if len(df):
            show_table(df, f"upload_{name}", f"uploaded_{name}.csv")
frame.share_link(PAGE, query)
