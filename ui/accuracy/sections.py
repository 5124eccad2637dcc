"""The accuracy page's sections (Streamlit glue over ui/accuracy/view.py and figures.py): what
file to upload and why a file was refused, what the last fit did, the chosen profile's errors
in and out of sample with its fit and ground, its downloads (TOML, its parameters as CSV) and
links to /load and /plan with it, the measured-vs-predicted charts, and the training profile.
User text through ui.words.text.plain; words through ui.words.i18n.
"""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd
import streamlit as st

import engine
from ui.accuracy import figures, session
from ui.accuracy import view as av
from ui.accuracy.link import profile_values
from ui.core.downloads import NO_RERUN, download_csv
from ui.widgets import page_links
from ui.widgets.cards import cards, chart_row
from ui.words.data_text import said
from ui.words.i18n import _, message_text
from ui.words.text import plain

PNG = {"toImageButtonOptions": {"format": "png"}}


def upload_summary() -> str:
    """The file the upload wants, in one line (beside the uploader)."""
    required = [c for c, w in engine.MEASUREMENT_COLUMNS.items() if not w.startswith("optional")]
    optional = [c for c in engine.MEASUREMENT_COLUMNS if c not in required]
    metrics = [f"{m} ({said(u)})" for m, u in engine.MEASUREMENT_METRICS.items()]
    return _(
        "A CSV with the columns {required} (optional: {optional}); metric is one of "
        "{metrics}, and value is in its unit."
    ).format(required=", ".join(required), optional=", ".join(optional), metrics=", ".join(metrics))


def upload_help(expanded: bool) -> None:
    """What file the upload wants: columns, metric names and units, a template to download."""
    with st.expander(_("What file to upload: columns, metrics, units, a template"), expanded):
        st.markdown(
            _(
                "A CSV file, one row per measured scenario and metric, with a header row "
                "(columns in any order; up to {size} MB and 5,000 rows). Each row is predicted "
                "with the serving model and compared: error = predicted / measured − 1."
            ).format(size=f"{engine.MAX_MEASUREMENTS_BYTES / 1e6:g}")
        )
        st.dataframe(av.schema_table(), hide_index=True, key="acc:schema")
        st.dataframe(av.metrics_table(), hide_index=True, key="acc:metrics")
        st.download_button(
            _("Download a template (CSV: every column, one shipped row per metric)"),
            engine.measurements_template(),
            file_name="measurements-template.csv",
            mime="text/csv",
            key="acc:template",
            icon="⬇️",
            on_click=NO_RERUN,
        )


def upload_problems(problems: list[str]) -> None:
    """Why the last upload was refused (its rows and columns), under the uploader."""
    if problems:
        st.error(
            _("That file was not used ({n} problem(s)); nothing else changed:").format(
                n=len(problems)
            )
            + "\n\n"
            + "\n".join(f"- {plain(p)}" for p in problems[:20]),
            icon="🚫",
        )


def fit_note(note: tuple[str, bool] | None) -> None:
    """Under the fit button: what the last fit made, or why it made no profile."""
    if note is not None:
        text, failed = note
        if failed:
            st.error(plain(text), icon="🚫")
        else:
            st.success(plain(text), icon="✅")


def errors(profile: engine.Profile) -> None:
    """The profile's errors in sample and out of sample side by side, and its band."""
    cells = av.error_cells(profile)
    tips = {
        av.IN_SAMPLE: _("on the rows it was fitted on: flatters the fit"),
        av.LOMO: _("refit without each model, predict its rows"),
        av.LOAO: _("refit without each accelerator, predict its rows"),
        av.BAND: cells[av.BASIS],
    }
    cards([(_(label), cells[label], plain(tip)) for label, tip in tips.items()])  # tip: a file
    st.caption(_("Error band: {basis}.").format(basis=plain(cells[av.BASIS])))


def profile_section(profile: engine.Profile, toml: str) -> None:
    """The chosen profile: errors, what was fitted and what was not, its ground, warnings."""
    st.subheader(
        _("Profile {profile}: its errors, fit and calibrated ground").format(
            profile=plain(profile.name)
        )
    )
    errors(profile)
    for warning in engine.fit_warnings(profile):
        st.warning(plain(message_text(warning)), icon="⚠️")
    left, right = st.columns(2)
    with left:
        if profile.fitted:
            st.markdown(_("**Parameters fitted**"))
            st.dataframe(av.fitted_table(profile), hide_index=True, key="acc:fitted")
        else:
            st.markdown(
                _("**Parameters fitted**: none ({description})").format(
                    description=plain(said(profile.description))
                )
            )
        st.markdown(_("**Calibrated ground** (the rows it was fitted on cover)"))
        for line in av.ground_lines(profile) or [_("none: nothing fitted")]:
            st.markdown(f"- {plain(line)}")
        if profile.worst:
            with st.expander(_("Its worst-predicted rows (in sample)")):
                for line in profile.worst:
                    st.markdown(f"- {plain(line)}")
    with right:
        st.markdown(_("**Every assumption it sets**"))
        st.dataframe(av.profile_table(profile), hide_index=True, key="acc:values")
    # the downloads and links at the page's width: a half column cuts their labels at 800 px
    st.download_button(
        _("Download the profile (TOML)"),
        toml,
        file_name=f"{profile.name}.toml",
        mime="application/toml",
        key="acc:toml",
        icon="⬇️",
        on_click=NO_RERUN,
    )
    download_csv(
        df=av.parameters_csv(profile),
        filename=f"{profile.name}-parameters.csv",
        key="acc:parameters_csv",
        label=_("Download its parameters (CSV)"),
    )
    page_links.profile_links(profile_values(profile))


def charts(df: pd.DataFrame, profile: str, band: engine.Band) -> None:
    """One measured-vs-predicted chart per metric, two to a row (one on a phone)."""
    figs = figures.metric_figures(df, profile, band)
    for col, (metric, fig) in zip(chart_row(len(figs)), figs.items(), strict=True):
        col.plotly_chart(fig, key=f"acc:figure:{metric}", config=PNG)
    if band.pct is None:
        st.caption(
            _("No ±band lines: profile {profile}'s error is {basis}.").format(
                profile=plain(profile), basis=plain(message_text(band.basis))
            )
        )


def tables(frames: Mapping[str, pd.DataFrame], per_file: pd.DataFrame) -> None:
    """MAPE of every profile on the measurements in use (all, per accelerator, per metric),
    then on every file."""
    cols = st.columns(3)
    for col, key in zip(cols, (None, "hardware", "metric"), strict=True):
        col.dataframe(av.mape_by(frames, key), hide_index=True, key=f"acc:mape_{key}")
    st.markdown(
        _(
            "**Every profile on every file** (a profile on another stack's file is out "
            "of sample; rows predicted of rows given)"
        )
    )
    st.dataframe(per_file, hide_index=True, key="acc:per_file")


def training(link) -> str:
    """A training profile (picked among the built-in ones: the link's `training_profile`): its
    fitted values, its errors in and out of sample, the runs it was fitted on (table, chart,
    CSV). Returns the profile's name."""
    name = st.radio(
        _("Training profile"),
        engine.training_profile_names(),
        key=link.key("training_profile"),
        horizontal=True,
    )
    profile = engine.get_training_profile(name)
    st.subheader(_("Training profile {name}").format(name=profile.name))
    st.caption(
        _(
            "{description}; command: {command}. docs/model.md, 'The megatron profile and its "
            "errors' and 'Published MFU ceilings and the training band'."
        ).format(description=plain(said(profile.description)), command=plain(profile.command))
    )
    cells = av.training_cells(profile)
    cards([(_(label), value, plain(tip)) for label, (value, tip) in cells.items()])
    rows = session.training_rows(profile.name)
    band = engine.training_profile_band(profile.name)  # its out-of-sample error, as /train's
    left, right = st.columns(2)
    left.markdown(_("**Fitted values** (every assumption the training profile sets)"))
    left.dataframe(av.training_values(profile), hide_index=True, key="acc:train_values")
    figure = figures.training_figure(rows, band, profile=profile.name)
    right.plotly_chart(figure, key="acc:train_figure", config=PNG)
    st.markdown(_("**The {n} runs it was fitted on** (predicted in sample)").format(n=len(rows)))
    st.dataframe(av.training_table(rows), hide_index=True, key="acc:train_rows")
    download_csv(
        df=rows,
        filename=f"{profile.name}-fit-rows.csv",
        key="acc:train_csv",
        label=_("Download the runs (CSV)"),
    )
    checks = session.training_checks(profile.name)
    by_file = checks.groupby("file", sort=False)["error_pct"]
    st.markdown(
        _(
            "**{n} public runs no training profile is fitted on** (torchtitan's H100 runs and "
            "MLPerf Training's Hopper runs, each with its own TP overlap; predicted out of "
            "sample: MAPE {mape}). This profile's stack: {stack}; an fp8 band on Hopper follows "
            "the runs of that stack, and names the other's error beside it"
        ).format(
            n=len(checks),
            mape="; ".join(f"{av.pct(e.abs().mean())} ({name}, {len(e)})" for name, e in by_file),
            stack=session.training_stack(profile.name),
        )
    )
    st.dataframe(av.check_table(checks), hide_index=True, key="acc:train_checks")
    download_csv(
        df=checks,
        filename=f"{profile.name}-check-runs.csv",
        key="acc:train_checks_csv",
        label=_("Download the public runs (CSV)"),
    )
    return profile.name
