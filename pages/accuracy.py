"""Accuracy: the serving model's predictions against measured results, per profile.

Every serving profile with its stack, release and scheduler, its errors in sample and out of
sample (leave one model out, leave one accelerator out) and its band; upload your own
measurements (CSV, checked row by row; the page says what file it wants), fit a team profile
honestly (engine.calibrate), download it as TOML and share a link that carries it and its band.
The training profile beside them, and the kernel efficiency curves (docs/model.md, "Kernel
efficiency curves"). docs/model.md, "Accuracy".
"""

import streamlit as st

import engine
from ui.accuracy import kernel_section, sections, session
from ui.accuracy import view as av
from ui.accuracy.link import PAGE, SECTIONS, SHIPPED, declare, profile_values
from ui.core import frame
from ui.core.downloads import download_csv
from ui.links import state
from ui.widgets.cards import cards
from ui.words.i18n import N_, _, message_text
from ui.words.text import plain

frame.setup_page("Accuracy")
ss = st.session_state
st.title(_("Accuracy: measured vs predicted"))
frame.show_catalog_notes(frame.catalog())

# --- inputs -----------------------------------------------------------------
link = declare()
frame.show_param_warnings(session.start(link))
SECTION_LABELS = {
    "serving": N_("Serving profiles"),
    "training": N_("Training profiles"),
    "kernels": N_("Kernel curves"),
}
section = st.radio(
    _("Section"),
    SECTIONS,
    key=link.key("section"),
    horizontal=True,
    format_func=lambda s: _(SECTION_LABELS[s]),
)
session.choose_fitted()
texts, engines = session.texts(), session.engines()
offered = {name: session.profile(name) for name in texts}
if ss.get(session.PROFILE) not in offered:
    ss[session.PROFILE] = engine.DEFAULT_PROFILE
values = {"profile": ss[session.PROFILE], "section": section}
if section != "serving":
    if section == "training":
        values["training_profile"] = sections.training(link)
    else:
        kernel_section.show(link, offered[ss[session.PROFILE]])
    values = profile_values(offered[ss[session.PROFILE]]) | values
    frame.share_link(PAGE, state.publish(link, values))
    st.stop()

left, right = st.columns([2, 3])
with left:
    name = st.selectbox(
        _("Profile (serving stack, release, scheduler)"),
        list(offered),
        key=session.PROFILE,
        help=_("docs/model.md, Accuracy"),
        format_func=lambda n: av.picker_label(offered[n], engines),
    )
    st.selectbox(
        _("Measurements (shipped)"),
        SHIPPED,
        key=link.key("measurements"),
        disabled=bool(ss.get(session.UPLOAD)),
    )
    upload = st.file_uploader(
        _("Your measurements (CSV, up to {size} MB)").format(
            size=f"{engine.MAX_MEASUREMENTS_BYTES / 1e6:g}"
        ),
        type=["csv"],
        key="acc:upload",
        max_upload_size=engine.MAX_UPLOAD_MB,
    )
    st.caption(plain(sections.upload_summary()))
    if upload is not None and upload.file_id != ss.get("acc:upload_id"):
        ss["acc:upload_id"] = upload.file_id
        session.take_upload(upload.getvalue(), upload.name)
    sections.upload_problems(ss.get("acc:errors") or [])
# The actions at the page's width: in the left column their labels were cut at 800 px.
if st.button(
    _("Fit a team profile to these measurements"),
    key="acc:fit",
    type="primary",
    help=_(
        "Fits the model's efficiencies and overheads to the measured rows in use, in a few "
        "seconds. Only what the rows can tell apart is fitted, and the error is also "
        "measured on rows each fit has not seen (one model or accelerator left out at a "
        "time), so the new profile does not flatter itself."
    ),
):
    session.fit()
sections.fit_note(ss.get(session.FIT_NOTE))
st.button(_("Back to the shipped measurements"), key="acc:reset", on_click=session.use_shipped)
sections.upload_help(expanded=bool(ss.get("acc:errors")))

# --- engine -----------------------------------------------------------------
data, label, uploaded = session.in_use()
frames = {n: session.validated(data, label, t) for n, t in texts.items()}
df, profile = frames[name], offered[name]
band, summary = engine.error_band(profile), engine.summarise(frames[name])
values |= profile_values(profile) | {"measurements": None if uploaded else label}
query = state.publish(link, values)

# --- render -----------------------------------------------------------------
with right:
    st.caption(
        _(
            "Profile **{profile}** · measurements {file} ({rows} rows, {predicted} predicted) · "
            "error = predicted / measured − 1; MAPE = mean |error|"
        ).format(
            profile=plain(name),
            file=plain(label),
            rows=summary["rows"],
            predicted=summary["predicted_rows"],
        )
        + (_(" · your upload is not in the share link") if uploaded else "")
    )
    before, delta = ss.get("acc:before") if name == "team" else None, None
    if before in frames:
        was = engine.summarise(frames[before])["mape_pct"]
        delta = _("{change} points vs {profile} ({mape})").format(
            change=av.signed(summary["mape_pct"] - was, ""), profile=before, mape=av.pct(was)
        )
    predicted = _("{predicted} of {rows}").format(
        predicted=summary["predicted_rows"], rows=summary["rows"]
    )
    mape = av.pct(summary["mape_pct"])
    cards(
        [
            {"label": _("MAPE"), "value": mape, "delta": delta, "delta_color": "inverse"},
            (_("Median APE"), av.pct(summary["median_ape_pct"]), None),
            (_("Rows predicted"), predicted, None),
            (
                _("Out of sample (band)"),
                av.error_cells(profile)[av.BAND],
                plain(message_text(band.basis)),
            ),
        ]
    )
    fitted = int(df["in_sample"].sum())
    if fitted and fitted == summary["predicted_rows"]:
        st.info(plain(av.in_sample_note(profile)))
    elif fitted:
        st.info(plain(av.part_sample_note(profile, df)))
    if not summary["predicted_rows"]:
        st.warning(_("The model can predict none of these rows: the table says why for each."))
sections.profile_section(profile, texts[name])
sections.charts(df, name, band)
sections.tables(frames, session.per_file_table(texts))
st.subheader(_("Every serving profile"))
st.dataframe(av.profiles_table(offered, engines), hide_index=True, key="acc:profiles")
table = av.results_table(df)
st.subheader(_("Every row under profile {profile}").format(profile=plain(name)))
st.dataframe(table, hide_index=True, key="acc:table")
download_csv(
    df=table, filename=f"accuracy_{name}.csv", key="acc:csv", label=_("Download the table (CSV)")
)
frame.share_link(PAGE, query)
st.caption(
    _(
        "Model and profiles: docs/model.md (Serving model; Accuracy). Shipped measurements: "
        "NVIDIA TensorRT-LLM 0.6.1 performance tables and Oracle Cloud's vLLM MI300X latencies "
        "(source URL on every row)."
    )
)
