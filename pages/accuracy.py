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
from ui.core.text import plain

frame.setup_page("Accuracy")
ss = st.session_state
st.title("Accuracy: measured vs predicted")
frame.show_catalog_notes(frame.catalog())

# --- inputs -----------------------------------------------------------------
link = declare()
frame.show_param_warnings(session.start(link))
section = st.radio("Section", SECTIONS, key=link.key("section"), horizontal=True,
                   format_func=lambda s: f"{s.capitalize()} profiles")  # fmt: skip
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
    name = st.selectbox("Profile (serving stack, release, scheduler)", list(offered),
                        key=session.PROFILE, help="docs/model.md, Accuracy",
                        format_func=lambda n: av.picker_label(offered[n], engines))  # fmt: skip
    st.selectbox("Measurements (shipped)", SHIPPED, key=link.key("measurements"),
                 disabled=bool(ss.get(session.UPLOAD)))  # fmt: skip
    upload = st.file_uploader(
        f"Your measurements (CSV, up to {engine.MAX_MEASUREMENTS_BYTES / 1e6:g} MB)",
        type=["csv"],
        key="acc:upload",
    )
    st.caption(plain(sections.upload_summary()))
    if upload is not None and upload.file_id != ss.get("acc:upload_id"):
        ss["acc:upload_id"] = upload.file_id
        session.take_upload(upload.getvalue(), upload.name)
    st.button("Fit a team profile to these measurements", key="acc:fit", on_click=session.fit,
              type="primary", help="engine.calibrate: identifiable parameters only, "
              "cross-validated (docs/model.md, Calibration, honestly)")  # fmt: skip
    st.button("Back to the shipped measurements", key="acc:reset", on_click=session.use_shipped)
sections.upload_help(expanded=bool(ss.get("acc:errors")))
if ss.get("acc:errors"):
    st.error(
        f"That file was not used ({len(ss['acc:errors'])} problem(s)); nothing else changed:\n\n"
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
        f"Profile **{plain(name)}** · measurements {plain(label)} ({summary['rows']} rows, "
        f"{summary['predicted_rows']} predicted) · error = predicted / measured − 1; MAPE = "
        "mean |error|" + (" · your upload is not in the share link" if uploaded else "")
    )
    before, delta = ss.get("acc:before") if name == "team" else None, None
    if before in frames:
        was = engine.summarise(frames[before])["mape_pct"]
        delta = f"{av.signed(summary['mape_pct'] - was, '')} points vs {before} ({av.pct(was)})"
    c1, c2, c3, c4 = st.columns(4)
    c1.metric("MAPE", av.pct(summary["mape_pct"]), delta=delta, delta_color="inverse")
    c2.metric("Median APE", av.pct(summary["median_ape_pct"]))
    c3.metric("Rows predicted", f"{summary['predicted_rows']} of {summary['rows']}")
    c4.metric("Out of sample (band)", av.error_cells(profile)["Error band"], help=band.basis)
    if label in profile.fitted_on:
        st.info(plain(av.in_sample_note(profile)))
    if not summary["predicted_rows"]:
        st.warning("The model can predict none of these rows: the table says why for each.")
sections.profile_section(profile, texts[name])
sections.charts(df, name, band)
sections.tables(frames, av.per_file_table(per_file, offered))
st.subheader("Every serving profile")
st.dataframe(av.profiles_table(offered, engines), hide_index=True, key="acc:profiles")
table = av.results_table(df)
st.subheader(f"Every row under profile {plain(name)}")
st.dataframe(table, hide_index=True, key="acc:table")
download_csv(table, f"accuracy_{name}.csv", "acc:csv", "Download the table (CSV)")
frame.share_link(PAGE, query)
st.caption(
    "Model and profiles: docs/model.md (Serving model; Accuracy). Shipped measurements: "
    "NVIDIA TensorRT-LLM 0.6.1 performance tables and Oracle Cloud's vLLM MI300X latencies "
    "(source URL on every row)."
)
