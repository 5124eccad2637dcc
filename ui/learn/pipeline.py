"""Lesson 4's experiment, "Starving the GPU": the accelerator's step against the CPU's
transform time, batch by batch (engine.pipeline_sweep), on the general lines chart."""

from __future__ import annotations

import streamlit as st

import engine
from ui.charts.lines import Series, lines_figure
from ui.core.downloads import download_csv
from ui.learn.content import Outcome
from ui.links.params import Link
from ui.widgets.pickers import number_input
from ui.words.format import fmt, pct
from ui.words.i18n import _

BATCHES = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024]  # the chapter's sweep
WORKER_BYTES_PER_S = 250e6  # one CPU worker (the chapter's ~250 MB/s)


def starving(link: Link, cat) -> Outcome:
    a, b, c = st.columns(3)
    with a:
        batch = int(number_input(link, "batch", _("Batch size (images)"), step=1))
    with b:
        gbps = float(number_input(link, "cpu_gbps", _("CPU throughput (GB/s)"), step=0.25))
    with c:
        kb = float(number_input(link, "sample_kb", _("Sample size (KB)"), step=50.0))
    kw = {"sample_bytes": kb * 1e3, "cpu_bytes_per_s": gbps * 1e9, "catalog": cat}
    rows = engine.pipeline_sweep("ResNet-50", "A100", sorted({*BATCHES, batch}), **kw)
    first = engine.first_transform_bound(rows)
    here = rows[rows["batch_size"] == batch].iloc[0]
    st.markdown(
        _(
            "**Batch {batch}:** GPU step {gpu}, CPU transform {cpu}: the {binding} binds, GPU "
            "busy {util}, {rate}. CPU workers at 250 MB/s each: {workers}."
        ).format(
            batch=f"{batch:,}",
            gpu=fmt(here["accelerator_step_ms"] * 1e-3, "s"),
            cpu=fmt(here["transform_ms"] * 1e-3, "s"),
            binding=_("CPU") if here["binding"] == "transform" else _("GPU"),
            util=pct(here["accelerator_utilization"]),
            rate=fmt(here["samples_per_s"], "images/s"),
            workers=fmt(gbps * 1e9 / WORKER_BYTES_PER_S),
        )
    )
    series = [
        Series(
            name=_("GPU step (ResNet-50 on A100)"),
            values=rows["accelerator_step_ms"],
            unit="s",
            scale=1e-3,
        ),
        Series(
            name=_("CPU transform"), values=rows["transform_ms"], unit="s", scale=1e-3, dash="dash"
        ),
    ]
    marks = [(first, _("CPU binds from batch {batch}").format(batch=first))] if first else []
    figure = lines_figure(
        rows["batch_size"],
        series,
        title=_("GPU step vs CPU preprocessing"),
        x_title=_("Batch size"),
        y_title=_("Time per batch (ms)"),
        marks=marks,
    )
    st.plotly_chart(figure, key="l4")
    download_csv(rows, "lesson_4_pipeline.csv", "learn:l4_csv")
    return _outcome(cat=cat, batch=batch, gbps=gbps, kb=kb)


def _outcome(cat, batch: int, gbps: float, kb: float) -> Outcome:
    base = engine.pipeline_sweep("ResNet-50", "A100", BATCHES, catalog=cat).set_index("batch_size")
    medical = engine.pipeline_sweep("ResNet-50", "A100", BATCHES, sample_bytes=5e6, catalog=cat)
    dali = engine.pipeline_sweep("ResNet-50", "A100", [512], cpu_bytes_per_s=50e9, catalog=cat)
    at = base.loc[256]
    first = engine.first_transform_bound(base.reset_index())
    ours = {
        "cpu": fmt(2e9, "B/s"),
        "step256": _("{gpu} against {cpu}").format(
            gpu=fmt(at["accelerator_step_ms"] * 1e-3, "s"), cpu=fmt(at["transform_ms"] * 1e-3, "s")
        ),
        "crossover": _("batch {batch}").format(batch=first),
        "selfcheck": _("the same rule"),
    }
    values = {
        "times": fmt(at["transform_ms"] / at["accelerator_step_ms"], "×"),
        "util": pct(at["accelerator_utilization"]),
        "batch": str(first),
    }
    answers = {
        "util64": base.loc[64, "accelerator_utilization"] * 100,
        "medical": engine.first_transform_bound(medical),
        "dali": dali["accelerator_utilization"].iloc[0] * 100,
    }
    pages = [
        (
            _("Batch sweep"),
            "pages/sweep.py",
            {"model": "ResNet-50", "hardware": "A100", "batches": ",".join(map(str, BATCHES))},
        )
    ]
    return Outcome(ours=ours, values=values, answers=answers, pages=pages, command="")
