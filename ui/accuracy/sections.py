"""The accuracy page's sections (Streamlit glue over ui/accuracy/view.py and figures.py): what
file to upload, the chosen profile's errors in and out of sample with its fit and ground, the
measured-vs-predicted charts, and the training profile. User text through ui.core.text.plain.
"""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd
import streamlit as st

import engine
from ui.accuracy import figures, session
from ui.accuracy import view as av
from ui.core.downloads import download_csv
from ui.core.text import plain

PNG = {"toImageButtonOptions": {"format": "png"}}


def upload_summary() -> str:
    """The file the upload wants, in one line (beside the uploader)."""
    required = [c for c, w in engine.MEASUREMENT_COLUMNS.items() if not w.startswith("optional")]
    optional = [c for c in engine.MEASUREMENT_COLUMNS if c not in required]
    metrics = [f"{m} ({u})" for m, u in engine.MEASUREMENT_METRICS.items()]
    return (
        f"A CSV with the columns {', '.join(required)} (optional: {', '.join(optional)}); "
        f"metric is one of {', '.join(metrics)}, and value is in its unit."
    )


def upload_help(expanded: bool) -> None:
    """What file the upload wants: columns, metric names and units, a template to download."""
    with st.expander("What file to upload: columns, metrics, units, a template", expanded):
        st.markdown(
            "A CSV file, one row per measured scenario and metric, with a header row "
            f"(columns in any order; up to {engine.MAX_MEASUREMENTS_BYTES / 1e6:g} MB and 5,000 "
            "rows). Each row is predicted with the serving model and compared: error = "
            "predicted / measured − 1."
        )
        st.dataframe(av.schema_table(), hide_index=True, key="acc:schema")
        st.dataframe(av.metrics_table(), hide_index=True, key="acc:metrics")
        st.download_button(
            "Download a template (CSV: every column, one shipped row per metric)",
            engine.measurements_template(),
            file_name="measurements-template.csv",
            mime="text/csv",
            key="acc:template",
            icon="⬇️",
        )


def _tile(col, label: str, value: str, tip: str) -> None:
    col.metric(label, value, help=tip)


def errors(profile: engine.Profile) -> None:
    """The profile's errors in sample and out of sample side by side, and its band."""
    cells = av.error_cells(profile)
    tips = {
        "In sample (MAPE)": "on the rows it was fitted on: flatters the fit",
        "Leave one model out (MAPE)": "refit without each model, predict its rows",
        "Leave one accelerator out (MAPE)": "refit without each accelerator, predict its rows",
        "Error band": cells["Band basis"],
    }
    for col, (label, tip) in zip(st.columns(4), tips.items(), strict=True):
        _tile(col, label, cells[label], tip)
    st.caption(plain(f"Error band: {cells['Band basis']}."))


def profile_section(profile: engine.Profile, toml: str) -> None:
    """The chosen profile: errors, what was fitted and what was not, its ground, warnings."""
    st.subheader(f"Profile {plain(profile.name)}: its errors, fit and calibrated ground")
    errors(profile)
    for warning in engine.fit_warnings(profile):
        st.warning(plain(warning), icon="⚠️")
    left, right = st.columns(2)
    with left:
        if profile.fitted:
            st.markdown("**Parameters fitted**")
            st.dataframe(av.fitted_table(profile), hide_index=True, key="acc:fitted")
        else:
            st.markdown(f"**Parameters fitted**: none ({plain(profile.description)})")
        st.markdown("**Calibrated ground** (the rows it was fitted on cover)")
        for line in av.ground_lines(profile) or ["none: nothing fitted"]:
            st.markdown(f"- {plain(line)}")
        if profile.worst:
            with st.expander("Its worst-predicted rows (in sample)"):
                for line in profile.worst:
                    st.markdown(f"- {plain(line)}")
    with right:
        st.markdown("**Every assumption it sets**")
        st.dataframe(av.profile_table(profile), hide_index=True, key="acc:values")
        st.download_button("Download the profile (TOML)", toml, file_name=f"{profile.name}.toml",
                           mime="application/toml", key="acc:toml", icon="⬇️")  # fmt: skip


def charts(df: pd.DataFrame, profile: str, band: engine.Band) -> None:
    """One measured-vs-predicted chart per metric, two to a row (one on a phone)."""
    figs = figures.metric_figures(df, profile, band)
    cols = st.columns(2)
    for i, (metric, fig) in enumerate(figs.items()):
        cols[i % 2].plotly_chart(fig, key=f"acc:figure:{metric}", config=PNG)
    if band.pct is None:
        st.caption(plain(f"No ±band lines: profile {profile}'s error is {band.basis}."))


def tables(frames: Mapping[str, pd.DataFrame], per_file: pd.DataFrame) -> None:
    """MAPE of every profile on the measurements in use (all, per accelerator, per metric),
    then on every file."""
    cols = st.columns(3)
    for col, key in zip(cols, (None, "hardware", "metric"), strict=True):
        col.dataframe(av.mape_by(frames, key), hide_index=True, key=f"acc:mape_{key}")
    st.markdown("**Every profile on every file** (a profile on another stack's file is out of "
                "sample; rows predicted of rows given)")  # fmt: skip
    st.dataframe(per_file, hide_index=True, key="acc:per_file")


def training() -> None:
    """The megatron training profile: its fitted values, its errors in and out of sample, the
    runs it was fitted on (table, chart, CSV)."""
    profile = engine.get_training_profile("megatron")
    st.subheader("Training profile megatron")
    st.caption(plain(f"{profile.description}; command: {profile.command}. docs/model.md, "
                     "'The megatron profile and its errors'."))  # fmt: skip
    cells = av.training_cells(profile)
    for col, (label, (value, tip)) in zip(st.columns(3), cells.items(), strict=True):
        _tile(col, label, value, tip)
    rows = session.training_rows()
    band = engine.Band(profile.residuals.get("loo_row_mape_pct"), "leave one row out")
    left, right = st.columns(2)
    left.markdown("**Fitted values** (every assumption the training profile sets)")
    left.dataframe(av.training_values(profile), hide_index=True, key="acc:train_values")
    right.plotly_chart(figures.training_figure(rows, band), key="acc:train_figure", config=PNG)
    st.markdown(f"**The {len(rows)} runs it was fitted on** (predicted in sample)")
    st.dataframe(av.training_table(rows), hide_index=True, key="acc:train_rows")
    download_csv(rows, "megatron-fit-rows.csv", "acc:train_csv", "Download the runs (CSV)")
