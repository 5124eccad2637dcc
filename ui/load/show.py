"""The serving-under-load page's main-area sections (Streamlit glue over ui/load/view.py and
ui/load/figures.py): the notes beside the numbers, the metric cards, the charts and the tables
with their CSV downloads."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import streamlit as st

import engine
from ui.core import frame, profiles
from ui.core.downloads import NO_RERUN, download_csv
from ui.load import figures as lf
from ui.load import run as lr
from ui.load import view as lv
from ui.widgets.cards import chart_row
from ui.words import tables as wt
from ui.words.i18n import N_, _, message_text
from ui.words.text import plain

PNG = {"toImageButtonOptions": {"format": "png"}}


def notes(d, sched, band, arch) -> None:
    """The scheduler in use, the error band and where the scenario leaves calibrated ground."""
    st.caption(plain(lv.scheduler_text(sched.as_dict())))
    if d.overrides:  # which of the profile's assumptions the page edits, and from what
        profile = engine.get_profile(d.profile)
        st.caption(plain(profiles.describe(profile, profiles.edits(profile, d.overrides_dict))))
    st.caption(plain(lv.band_text(band, d.profile_name)))
    kept = engine.get_profile(d.profile).assumptions.as_dict()
    if moved := profiles.transfer_text(d.hardware.id, d.precision, kept):
        st.caption(plain(moved))
    reasons = engine.off_ground(
        profile=engine.get_profile(d.profile),
        arch=arch,
        hardware=d.hardware.id,
        precision=d.precision,
    )
    if reasons:
        st.info(
            _(
                "Off profile {profile}'s calibrated ground: {reasons}. Its error band is then a "
                "floor, not an estimate."
            ).format(
                profile=d.profile_name, reasons="; ".join(plain(message_text(r)) for r in reasons)
            ),
            icon="🧭",
        )


def fit_and_warnings(r) -> None:
    """Why a run does not fit (an error, when it does not), how its replica runs its batches
    (attention DP ranks, pipeline stages: notes, not warnings), then the engine's warnings."""
    fit = [x for x in r.warnings if x.code in lr.NO_FIT]
    if fit:
        said = plain(message_text(fit[0]))
        st.error(f"{said[:1].upper()}{said[1:]}.", icon="🚫")
    layout = [x for x in r.warnings if x.code in lr.LAYOUT]
    for note in dict.fromkeys(layout):
        st.info(plain(message_text(note)), icon="🧩")
    frame.show_engine_warnings(x for x in r.warnings if x not in fit and x not in layout)


@dataclass(frozen=True)
class ChartSlots:
    """Where the charts go, made before anything is simulated: the fast path's curves are drawn
    at once and drawn again, in the same places, with what the simulator adds."""

    ttft: object
    tpot: object
    throughput: object
    timeline: object


def chart_slots() -> ChartSlots:
    """Latency side by side, throughput under them with its caption, then the run's timeline."""
    ttft, tpot = (col.empty() for col in chart_row(2))
    throughput = st.empty()
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
    return ChartSlots(ttft=ttft, tpot=tpot, throughput=throughput, timeline=st.empty())


def charts(slots: ChartSlots, grid, pts, slo, marks, band, d, *, final: bool) -> None:
    """Latency and throughput against rate in their slots: the fast path alone (`final`
    False: drawn again when the simulator's points come), or with the simulated points."""
    key = "load_{}" if final else None
    limits = (slo.ttft_ms, slo.tpot_ms)
    for slot, metric, limit in zip((slots.ttft, slots.tpot), ("ttft", "tpot"), limits, strict=True):
        fig = lf.latency_figure(
            curve=grid,
            points=pts,
            metric=metric,
            slo_ms=limit,
            marks=marks,
            band_pct=band.pct,
            profile=d.profile_name,
        )
        slot.plotly_chart(fig, key=key and key.format(metric), config=PNG)
    fig = lf.throughput_figure(
        curve=grid, points=pts, marks=marks, band_pct=band.pct, profile=d.profile_name
    )
    slots.throughput.plotly_chart(fig, key=key and key.format("throughput"), config=PNG)


def timeline(r, title: str, where=st) -> None:
    """One run's running and queued requests and KV pool in use against time."""
    if r is not None and r["fits_in_memory"] and len(r.timeseries.get("time_s", [])):
        fig = lf.timeline_figure(r.timeseries, _("One run: {title}").format(title=title))
        where.plotly_chart(fig, key="load_timeline", config=PNG)


def _scalar(v) -> bool:
    return v is None or isinstance(v, int | float | str | bool | np.number)


TABLES_TITLE = N_("Tables: the curve, the simulated rates and the search, with their CSVs")


def tables(grid, pts, r, m, band, names: tuple[str, str, object]) -> None:
    """Every table with its CSV (the engine's columns, the error band on every row)."""
    model_id, hw_id, d = names
    st.subheader(_("The curve (fast path)"))
    curve = lv.steady_curve(grid)
    st.dataframe(wt.table(curve, lv.CURVE_TABLE), key="load_curve_table", hide_index=True)
    if not curve["stable"].all():
        st.caption(
            _(
                "Past the saturation rate (steady state: no) the queue grows without bound: the "
                "fast path has no latency, throughput or KV use there, and the cells are empty."
            )
        )
    download_csv(
        df=lv.csv_frame(curve, band),
        filename=lv.file_name(kind="curve", d=d, hw_id=hw_id, model_id=model_id),
        key="load_curve_csv",
        label=_("Download the curve CSV"),
    )
    if pts is not None and len(pts):
        st.subheader(_("Simulated rates"))
        st.dataframe(wt.table(pts, lv.POINTS_TABLE), key="load_points_table", hide_index=True)
        download_csv(
            df=lv.csv_frame(pts, band),
            filename=lv.file_name(kind="rates", d=d, hw_id=hw_id, model_id=model_id),
            key="load_points_csv",
            label=_("Download the simulated rates CSV"),
        )
    if m is not None and m.tried:
        st.subheader(_("Max-rate search: the rates tried"))
        tried = lv.tried_frame(m)
        st.dataframe(wt.table(tried, lv.TRIED_TABLE), key="load_tried_table", hide_index=True)
        download_csv(
            df=lv.csv_frame(tried, band),
            filename=lv.file_name(kind="search", d=d, hw_id=hw_id, model_id=model_id),
            key="load_search_csv",
            label=_("Download the search CSV"),
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
        per = lv.csv_frame(per.assign(**run), band)
        download_csv(
            df=per,
            filename=lv.file_name(kind="requests", d=d, hw_id=hw_id, model_id=model_id),
            key="load_requests_csv",
            label=_("Download the run's requests CSV"),
        )
        series = lv.csv_frame(lv.series_frame(r), band)
        download_csv(
            df=series,
            filename=lv.file_name(kind="timeline", d=d, hw_id=hw_id, model_id=model_id),
            key="load_series_csv",
            label=_("Download the run's timeline CSV"),
        )


def speculation(grid, plain_grid, band, names: tuple[str, str, object]) -> None:
    """Each user's tokens/s against the rate with and without speculative decoding (the fast
    path), where it stops helping, and the table with its CSV."""
    model_id, hw_id, d = names
    st.subheader(_("Speculative decoding against the load"))
    frame_ = lv.speculation_frame(grid, plain_grid)
    st.plotly_chart(lf.speculation_figure(frame_), key="load_spec_chart", config=PNG)
    st.caption(plain(lv.crossing_text(frame_)))
    st.dataframe(wt.table(frame_, lv.SPEC_TABLE), key="load_spec_table", hide_index=True)
    download_csv(
        df=lv.csv_frame(frame_, band),
        filename=lv.file_name(kind="speculation", d=d, hw_id=hw_id, model_id=model_id),
        key="load_spec_csv",
        label=_("Download the speculation CSV"),
    )


def trace_download(r, run: tuple, names: tuple[str, str, object]) -> None:
    """The run's timeline as a Chrome trace (engine.chrome_trace: the same run, recorded; the
    file is written only when the button is clicked)."""
    if r is None or not r["fits_in_memory"]:
        return
    model_id, hw_id, d = names
    d, sched, w, slo = run
    name = lv.file_name(kind="trace", d=d, hw_id=hw_id, model_id=model_id)
    st.download_button(
        _("Download the run's Chrome trace (JSON)"),
        lambda: engine.chrome_trace(d, w, scheduler=sched, slo=slo).to_json(),
        file_name=name.removesuffix(".csv") + ".json",
        mime="application/json",
        key="load_chrome_trace",
        icon="⬇️",
        on_click=NO_RERUN,
        help=_(
            "Every step (prefill, decode runs), preemption and request of this run on a "
            "timeline, in the Trace Event Format: open it in ui.perfetto.dev or chrome://tracing."
        ),
    )


def footer(page: str, query: dict, hw, model) -> None:
    """The share link and the sources, last on the page."""
    frame.share_link(page, query)
    sources = frame.source_md(hw.name, hw.source)
    sources += f" · {frame.source_md(model.name, model.source)}" if model.source else ""
    st.caption(
        _("Sources: {sources}. Model: docs/model.md, 'Serving under load'.").format(sources=sources)
    )
