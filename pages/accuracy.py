"""Accuracy: the serving model's predictions against measured results, per profile.

Every serving profile with its stack, release and scheduler, its errors in sample and out of
sample (leave one model out, leave one accelerator out) and its band; upload your own
measurements (CSV, checked row by row; the page says what file it wants), fit a team profile
honestly (engine.calibrate), download it as TOML and share a link that carries it and its band.
The training profile beside them. docs/model.md, "Accuracy".
"""

import streamlit as st

import engine
from ui.accuracy import sections, session
from ui.accuracy import view as av
from ui.accuracy.link import PAGE, SECTIONS, SHIPPED, declare, profile_values
from ui.core import frame, state
from ui.core.downloads import download_csv
from ui.core.i18n import N_, _, band_basis
from ui.core.text import plain
from ui.widgets.cards import cards

frame.setup_page("Accuracy")
ss = st.session_state
st.title(_("Accuracy: measured vs predicted"))
frame.show_catalog_notes(frame.catalog())

# --- inputs -----------------------------------------------------------------
link = declare()
frame.show_param_warnings(session.start(link))
SECTION_LABELS = {"serving": N_("Serving profiles"), "training": N_("Training profiles")}
section = st.radio(_("Section"), SECTIONS, key=link.key("section"), horizontal=True,
                   format_func=lambda s: _(SECTION_LABELS[s]))  # fmt: skip
texts, engines = session.texts(), session.engines()
offered = {name: session.profile(name) for name in texts}
if ss.get(session.PROFILE) not in offered:
    ss[session.PROFILE] = "tutorial"
values = {"profile": ss[session.PROFILE], "section": section}
if section == "training":
    sections.training()
    values = profile_values(offered[ss[session.PROFILE]]) | values
    frame.share_link(PAGE, state.publish(link, values))
    st.stop()

left, right = st.columns([2, 3])
with left:
    name = st.selectbox(_("Profile (serving stack, release, scheduler)"), list(offered),
                        key=session.PROFILE, help=_("docs/model.md, Accuracy"),
                        format_func=lambda n: av.picker_label(offered[n], engines))  # fmt: skip
    st.selectbox(_("Measurements (shipped)"), SHIPPED, key=link.key("measurements"),
                 disabled=bool(ss.get(session.UPLOAD)))  # fmt: skip
    upload = st.file_uploader(
        _("Your measurements (CSV, up to {size} MB)").format(
            size=f"{engine.MAX_MEASUREMENTS_BYTES / 1e6:g}"
        ),
        type=["csv"],
        key="acc:upload",
    )
    st.caption(plain(sections.upload_summary()))
    if upload is not None and upload.file_id != ss.get("acc:upload_id"):
        ss["acc:upload_id"] = upload.file_id
        session.take_upload(upload.getvalue(), upload.name)
    st.button(_("Fit a team profile to these measurements"), key="acc:fit", on_click=session.fit,
              type="primary", help=_("engine.calibrate: identifiable parameters only, "
              "cross-validated (docs/model.md, Calibration, honestly)"))  # fmt: skip
    st.button(_("Back to the shipped measurements"), key="acc:reset",
              on_click=session.use_shipped)  # fmt: skip
sections.upload_help(expanded=bool(ss.get("acc:errors")))
if ss.get("acc:errors"):
    st.error(
        _("That file was not used ({n} problem(s)); nothing else changed:").format(
            n=len(ss["acc:errors"])
        )
        + "\n\n"
        + "\n".join(f"- {plain(p)}" for p in ss["acc:errors"][:20]),
        icon="🚫",
    )

# --- engine -----------------------------------------------------------------
data, label, uploaded = session.in_use()
frames = {n: session.validated(data, label, t) for n, t in texts.items()}
per_file = {f: {n: session.validated(d, f, t) for n, t in texts.items()}
            for f, d in session.files().items()}  # fmt: skip
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
    cards([
        {"label": _("MAPE"), "value": mape, "delta": delta, "delta_color": "inverse"},
        (_("Median APE"), av.pct(summary["median_ape_pct"]), None),
        (_("Rows predicted"), predicted, None),
        (_("Out of sample (band)"), av.error_cells(profile)[av.BAND], plain(band_basis(band))),
    ])  # fmt: skip
    if label in profile.fitted_on:
        st.info(plain(av.in_sample_note(profile)))
    if not summary["predicted_rows"]:
        st.warning(_("The model can predict none of these rows: the table says why for each."))
sections.profile_section(profile, texts[name])
sections.charts(df, name, band)
sections.tables(frames, av.per_file_table(per_file, offered))
st.subheader(_("Every serving profile"))
st.dataframe(av.profiles_table(offered, engines), hide_index=True, key="acc:profiles")
table = av.results_table(df)
st.subheader(_("Every row under profile {profile}").format(profile=plain(name)))
st.dataframe(table, hide_index=True, key="acc:table")
download_csv(table, f"accuracy_{name}.csv", "acc:csv", _("Download the table (CSV)"))
frame.share_link(PAGE, query)
st.caption(
    _(
        "Model and profiles: docs/model.md (Serving model; Accuracy). Shipped measurements: "
        "NVIDIA TensorRT-LLM 0.6.1 performance tables and Oracle Cloud's vLLM MI300X latencies "
        "(source URL on every row)."
    )
)
