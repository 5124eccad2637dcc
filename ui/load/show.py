"""The serving-under-load page's main-area sections (Streamlit glue over ui/load/view.py and
ui/load/figures.py): the notes beside the numbers, the metric cards, the charts and the tables
with their CSV downloads."""

from __future__ import annotations

import numpy as np
import streamlit as st

import engine
from ui.core import frame
from ui.core.downloads import download_csv
from ui.core.i18n import _, engine_text
from ui.core.text import plain
from ui.load import figures as lf
from ui.load import view as lv
from ui.widgets.cards import chart_row

PNG = {"toImageButtonOptions": {"format": "png"}}


def notes(d, sched, band, arch) -> None:
    """The scheduler in use, the error band and where the scenario leaves calibrated ground."""
    st.caption(plain(lv.scheduler_text(sched.as_dict())))
    st.caption(plain(lv.band_text(band, d.profile)))
    reasons = engine.off_ground(engine.get_profile(d.profile), arch, d.hw.id, d.precision)
    if reasons:
        st.info(
            _(
                "Off profile {profile}'s calibrated ground: {reasons}. Its error band is then a "
                "floor, not an estimate."
            ).format(profile=d.profile, reasons="; ".join(plain(engine_text(r)) for r in reasons)),
            icon="🧭",
        )


def charts(grid, pts, r, slo, marks, band, d, title: str) -> None:
    """Latency and throughput against rate, then the run's timeline."""
    for col, metric, limit in zip(chart_row(2), ("ttft", "tpot"), slo, strict=True):
        fig = lf.latency_figure(grid, pts, metric, limit, marks, band.pct, d.profile)
        col.plotly_chart(fig, key=f"load_{metric}", config=PNG)
    fig = lf.throughput_figure(grid, pts, marks, band.pct, d.profile)
    st.plotly_chart(fig, key="load_throughput", config=PNG)
    st.caption(
        _(
            "Lines: the analytic fast path (engine.load_grid) up to its saturation rate; circles "
            "and dots: the simulator at checked rates (engine.serve_load, open loop). Goodput: "
            "requests/s whose TTFT and TPOT both meet the SLOs. Max rate: the highest rate whose "
            "simulated p90 TTFT and p99 TPOT meet them (engine.max_rate). A rate whose queue grew "
            "through its run keeps its served point but not its latencies (they grow with the "
            "run's length); past saturation there is no steady state (shaded)."
        )
    )
    timeline(r, title)


def timeline(r, title: str) -> None:
    """One run's running and queued requests and KV pool in use against time."""
    if r is not None and r["fits_in_memory"] and len(r.timeseries.get("time_s", [])):
        fig = lf.timeline_figure(r.timeseries, _("One run: {title}").format(title=title))
        st.plotly_chart(fig, key="load_timeline", config=PNG)


def _scalar(v) -> bool:
    return v is None or isinstance(v, int | float | str | bool | np.number)


def tables(grid, pts, r, m, band, names: tuple[str, str, object]) -> None:
    """Every table with its CSV (the engine's columns, the error band on every row)."""
    model_id, hw_id, d = names
    st.subheader(_("The curve (fast path)"))
    st.dataframe(lv.table(grid, lv.CURVE_TABLE), key="load_curve_table", hide_index=True)
    download_csv(
        lv.with_band(grid, band),
        lv.file_name("curve", d, hw_id, model_id),
        "load_curve_csv",
        _("Download the curve CSV"),
        lazy=True,
    )
    if pts is not None and len(pts):
        st.subheader(_("Simulated rates"))
        st.dataframe(lv.table(pts, lv.POINTS_TABLE), key="load_points_table", hide_index=True)
        download_csv(
            lv.with_band(pts, band),
            lv.file_name("rates", d, hw_id, model_id),
            "load_points_csv",
            _("Download the simulated rates CSV"),
            lazy=True,
        )
    if m is not None and m.tried:
        st.subheader(_("Max-rate search: the rates tried"))
        tried = lv.tried_frame(m)
        st.dataframe(lv.table(tried, lv.TRIED_TABLE), key="load_tried_table", hide_index=True)
        download_csv(
            lv.with_band(tried, band),
            lv.file_name("search", d, hw_id, model_id),
            "load_search_csv",
            _("Download the search CSV"),
            lazy=True,
        )
    run_tables(r, band, names)


def run_tables(r, band, names: tuple[str, str, object]) -> None:
    """One run's summary, and its requests and timeline as CSV."""
    model_id, hw_id, d = names
    if r is not None and r["fits_in_memory"]:
        st.subheader(_("This run"))
        st.dataframe(lv.summary_table(r.values), key="load_run_table", hide_index=True)
        per = lv.per_request_frame(r)
        run = {k: v for k, v in r.values.items() if k not in per and _scalar(v)}
        per = lv.with_band(per.assign(**run), band)
        download_csv(
            per,
            lv.file_name("requests", d, hw_id, model_id),
            "load_requests_csv",
            _("Download the run's requests CSV"),
            lazy=True,
        )
        series = lv.with_band(lv.series_frame(r), band)
        download_csv(
            series,
            lv.file_name("timeline", d, hw_id, model_id),
            "load_series_csv",
            _("Download the run's timeline CSV"),
            lazy=True,
        )


def footer(page: str, query: dict, hw, model) -> None:
    """The share link and the sources, last on the page."""
    frame.share_link(page, query)
    sources = frame.source_md(hw.name, hw.source)
    sources += f" · {frame.source_md(model.name, model.source)}" if model.source else ""
    st.caption(
        _("Sources: {sources}. Model: docs/model.md, 'Serving under load'.").format(sources=sources)
    )
