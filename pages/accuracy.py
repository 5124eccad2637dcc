"""Accuracy: the serving model's predictions against measured results, per profile.

Upload your own measurements (CSV, checked row by row), see the current profile's errors on
them, fit a team profile in one click, download it as TOML and share a link that carries it.
"""

import streamlit as st

import engine
from engine import (
    MAX_MEASUREMENTS_BYTES,
    profile_from_toml,
    profile_to_toml,
)
from ui.accuracy import session
from ui.accuracy import view as av
from ui.core import frame, state
from ui.core.downloads import download_csv
from ui.core.profiles import profile_from_query
from ui.core.text import plain

PAGE = "accuracy"
frame.setup_page("Accuracy")
ss = st.session_state
st.title("Accuracy: measured vs predicted")
frame.show_catalog_notes(frame.catalog())


# --- inputs -----------------------------------------------------------------
if "acc:data" not in ss:
    session.load_shipped()
    linked, warnings = profile_from_query(state.raw_query())
    if linked.origin != "built-in":
        ss["acc:custom"] = {linked.name: profile_to_toml(linked)}
    ss["acc:profile"], ss["acc:link_warnings"] = linked.name, warnings
frame.show_param_warnings(ss.get("acc:link_warnings", []))
left, right = st.columns([2, 3])
with left:
    name = st.selectbox(
        "Profile",
        list(session.profiles()),
        key="acc:profile",
        help="A named set of assumptions (docs/model.md, Accuracy)",
    )
    upload = st.file_uploader(
        f"Your measurements (CSV, up to {MAX_MEASUREMENTS_BYTES / 1e6:g} MB)",
        type=["csv"],
        key="acc:upload",
    )
    if upload is not None and upload.file_id != ss.get("acc:upload_id"):
        ss["acc:upload_id"] = upload.file_id
        data = upload.getvalue()
        ss["acc:errors"] = session.check(data, upload.name)
        if not ss["acc:errors"]:  # a broken file changes nothing else
            ss["acc:data"], ss["acc:label"] = data, upload.name
    st.button(
        "Fit a team profile to these measurements",
        key="acc:fit",
        on_click=session.fit,
        type="primary",
        help="Least squares on log(predicted/measured)",
    )
    st.button("Back to the shipped measurements", key="acc:reset", on_click=session.load_shipped)
if ss.get("acc:errors"):
    st.error(
        f"That file was not used ({len(ss['acc:errors'])} problem(s)); nothing else changed:\n\n"
        + "\n".join(f"- {plain(p)}" for p in ss["acc:errors"][:20]),
        icon="🚫",
    )

# --- engine -----------------------------------------------------------------
texts = session.profiles()
frames = {n: session.validated(ss["acc:data"], ss["acc:label"], t) for n, t in texts.items()}
df = frames[name]
profile = profile_from_toml(
    texts[name], name, origin="built-in" if name in engine.profile_names() else "page"
)
summary = engine.summarise(df)
query = profile.link_params()
if dict(st.query_params) != query:
    st.query_params.from_dict(query)

# --- render -----------------------------------------------------------------
with right:
    st.caption(
        f"Profile **{plain(name)}** · measurements {plain(ss['acc:label'])} "
        f"({summary['rows']} rows, {summary['predicted_rows']} predicted) · "
        "error = predicted / measured − 1; MAPE = mean |error|"
    )
    before = ss.get("acc:before") if name == "team" else None
    delta = None
    if before in frames:
        was = engine.summarise(frames[before])["mape_pct"]
        delta = f"{summary['mape_pct'] - was:+.1f} % points vs {before} ({was:.1f} %)"
    c1, c2, c3 = st.columns(3)
    c1.metric("MAPE", av.pct(summary["mape_pct"]), delta=delta, delta_color="inverse")
    c2.metric("Median APE", av.pct(summary["median_ape_pct"]))
    c3.metric("Rows predicted", f"{summary['predicted_rows']} of {summary['rows']}")
    if not summary["predicted_rows"]:
        st.warning("The model can predict none of these rows: the table says why for each.")
st.plotly_chart(av.accuracy_figure(df, f"Profile {name}"), key="acc:figure")
cols = st.columns(3)
for col, key in zip(cols, (None, "hardware", "metric"), strict=True):
    col.dataframe(av.mape_by(frames, key), hide_index=True, key=f"acc:mape_{key}")
table = av.results_table(df)
st.dataframe(table, hide_index=True, key="acc:table")
download_csv(table, f"accuracy_{name}.csv", "acc:csv", "Download the table (CSV)")
st.subheader(f"Profile {plain(name)}")
st.dataframe(av.profile_table(profile), hide_index=True, key="acc:values")
if "mape_pct" in profile.residuals:
    st.caption(
        f"Fitted on {profile.rows} rows of {plain(', '.join(profile.fitted_on))}; "
        f"in-sample MAPE {profile.residuals['mape_pct']:.1f} %."
    )
st.download_button(
    "Download the profile (TOML)",
    texts[name],
    file_name=f"{name}.toml",
    mime="application/toml",
    key="acc:toml",
    icon="⬇️",
)
frame.share_link(PAGE, query)
st.caption(
    "Model and profiles: docs/model.md (Serving model; Accuracy). Shipped measurements: "
    "NVIDIA TensorRT-LLM 0.6.1 performance tables (source URL on every row)."
)
