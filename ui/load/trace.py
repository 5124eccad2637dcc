"""The serving-under-load page's trace mode: an uploaded request trace (`engine.parse_trace`),
simulated as it is (`engine.serve_load(trace=...)`).

The uploader (sidebar, under the workload) reads at most engine.MAX_TRACE_BYTES + 1 bytes of
the file (one byte over refuses it, naming its size), says which columns it wants and offers a
template drawn from the page's scenario. A file's problems are listed beside it, each row's
(at most MAX_SHOWN, then how many more), as plain text: file names and cells never become
Markdown. A valid trace is simulated within the page's work budget (ui/load/run.py), refused
before any work above it by the engine's bound of its run (its own arrivals and lengths); the
page then shows one run's cards, timeline and per-request CSV (the rate-sweep charts do not
apply to a trace). A trace cannot travel in a share link: the link says `mode=trace` and the
page asks for the file.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass

import numpy as np
import pandas as pd
import streamlit as st

import engine
from ui.core.downloads import download_csv
from ui.links.params import Link
from ui.load import run as lr
from ui.load import show
from ui.load import view as lv
from ui.runtime import memo
from ui.widgets.cards import cards
from ui.words.format import fmt
from ui.words.i18n import _, ngettext
from ui.words.text import plain

TEMPLATE_ROWS = 50  # the template's requests
MAX_SHOWN = 20  # problems listed beside the uploader
MAX_NAME = 80  # characters of a file name shown
# the engine's last problem when it cut the list: "... and N more problems"
_MORE = re.compile(r"^\.\.\.\s\w+\s(\d+)\s\w+\s\w+$")


@dataclass(frozen=True)
class Upload:
    """The file in the uploader: its first MAX_TRACE_BYTES + 1 bytes at most, its name (as
    given: shown only through `plain`), its size, and its problems (empty: a valid trace)."""

    data: bytes
    name: str
    size: int
    problems: tuple[str, ...]

    @property
    def label(self) -> str:
        return self.name[:MAX_NAME]


@st.cache_data(max_entries=8, show_spinner=False)
def parse(data: bytes, label: str) -> tuple[object | None, tuple[str, ...]]:
    """(the trace of a file, ()) or (None, its problems) by engine.parse_trace; cached (as
    plain values: a TraceError would not survive the cache's pickling)."""
    try:
        return engine.parse_trace(data, label), ()
    except engine.TraceError as exc:
        return None, tuple(exc.problems)


def problems(data: bytes, size: int, label: str) -> tuple[str, ...]:
    """Why a file cannot be used (empty: it can): its size, then the engine's row problems."""
    if len(data) > engine.MAX_TRACE_BYTES:
        return (
            _(
                "the file is {size} bytes, more than the limit of {limit} bytes; it was not read"
            ).format(size=f"{max(size, len(data)):,}", limit=f"{engine.MAX_TRACE_BYTES:,}"),
        )
    return parse(data, label)[1]


def shown_problems(items) -> list[str]:
    """At most MAX_SHOWN problems, then "and N more" (the engine's own count kept)."""
    items = list(items)
    extra = 0
    if items and (cut := _MORE.match(items[-1])):
        items, extra = items[:-1], int(cut.group(1))
    extra += max(len(items) - MAX_SHOWN, 0)
    out = items[:MAX_SHOWN]
    if extra:
        out.append(
            ngettext("… and {n} more problem", "… and {n} more problems", extra).format(
                n=f"{extra:,}"
            )
        )
    return out


def template(work: dict, rows: int = TEMPLATE_ROWS) -> pd.DataFrame:
    """A small example trace from the page's scenario: `rows` arrivals at its rate (gamma gaps
    of its burstiness: Poisson at 1), its mean lengths ± its spread, drawn with its seed."""
    rng = np.random.default_rng(work["seed"])
    b, rate = work["burstiness"], work["rate"]
    arrival = np.cumsum(rng.gamma(b, 1.0 / (rate * b), rows))
    arrival -= arrival[0]
    out = {"arrival_s": np.round(arrival, 3)}
    for column in ("input_tokens", "output_tokens"):
        mean, r = work[column], work["length_spread"]
        lo = max(int(np.floor(mean * (1 - r))), 1)
        hi = min(max(int(np.ceil(mean * (1 + r))), lo), engine.MAX_TOKENS)
        out[column] = rng.integers(lo, hi + 1, rows)
    return pd.DataFrame(out, columns=list(engine.TRACE_COLUMNS))


def summary(trace) -> str:
    """One line about a valid trace (numbers only; the caller names the file)."""
    return _(
        "{requests} requests over {span}, {input_tokens} input and {output_tokens} output tokens "
        "on average"
    ).format(
        requests=f"{len(trace):,}",
        span=fmt(float(trace.arrival_s[-1]), "s"),
        input_tokens=fmt(float(trace.input_tokens.mean())),
        output_tokens=fmt(float(trace.output_tokens.mean())),
    )


def trace_input(link: Link, work: dict) -> Upload | None:
    """The uploader (disabled unless the workload is a trace, so a file survives a switch of
    mode) and, for a trace: the columns it wants, a template, and the file's problems."""
    on = work["mode"] == "trace"
    file = st.file_uploader(
        _("Trace (CSV, at most {size} bytes)").format(size=f"{engine.MAX_TRACE_BYTES:,}"),
        type=["csv"],
        key=link.key("trace.file"),
        max_upload_size=engine.MAX_UPLOAD_MB,  # larger: refused in the browser, with why
        disabled=not on,
    )
    if not on:
        return None
    st.caption(
        _(
            "One row per request, with the header {columns}: arrival time in seconds (any "
            "origin), input and output tokens (whole numbers). At most {rows} rows; every "
            "problem is named by its row and column. Not in the share link."
        ).format(columns=", ".join(engine.TRACE_COLUMNS), rows=f"{engine.MAX_TRACE_ROWS:,}")
    )
    download_csv(
        df=template(work),
        filename="load_trace_template.csv",
        key="load_trace_template",
        label=_("Download a template ({n} arrivals at the rate, lengths and seed above)").format(
            n=TEMPLATE_ROWS
        ),
    )
    if file is None:
        return None
    file.seek(0)
    data = file.read(engine.MAX_TRACE_BYTES + 1)
    name = str(file.name)
    upload = Upload(
        data=data,
        name=name,
        size=int(file.size),
        problems=problems(data, int(file.size), name[:MAX_NAME]),
    )
    if upload.problems:
        listed = "\n".join(f"- {plain(p)}" for p in shown_problems(upload.problems))
        st.error(
            _("{file} was not used:").format(file=plain(upload.label)) + "\n\n" + listed,
            icon="🚫",
        )
    else:
        trace = parse(data, upload.label)[0]
        st.caption(plain(f"{upload.label}: {summary(trace)}"))
    return upload


def refusal(d: engine.Deployment, sched: engine.Scheduler, w: engine.Workload, trace) -> str | None:
    """Why the trace is refused before any work (None: within the page's budget), by the
    engine's bound of its run (its own arrivals and lengths)."""
    replay = dataclasses.replace(w, arrivals=engine.Replay(trace))
    events = engine.load_events(d, replay, scheduler=sched)
    if events <= lr.BUDGET_EVENTS:
        return None
    return _(
        "This trace would take up to {events} events to simulate, up to {seconds} of CPU, more "
        "than this page's budget of {budget} ({budget_seconds}). Upload fewer requests (now "
        "{requests}) or shorter ones (now {input_tokens} input and {output_tokens} output "
        "tokens on average), or lower max_num_seqs, or raise max_batched_tokens; the command "
        "line runs it whole (python -m engine load --trace FILE) up to {cli_events} events."
    ).format(
        events=f"{events:,}",
        seconds=lr.seconds(events),
        budget=f"{lr.BUDGET_EVENTS:,}",
        budget_seconds=lr.seconds(lr.BUDGET_EVENTS),
        requests=f"{len(trace):,}",
        input_tokens=fmt(float(trace.input_tokens.mean())),
        output_tokens=fmt(float(trace.output_tokens.mean())),
        cli_events=f"{engine.MAX_LOAD_EVENTS:,}",
    )


@memo.cached(lr.SIMULATED)
def run(
    d: engine.Deployment,
    sched: engine.Scheduler,
    w: engine.Workload,
    data: bytes,
    label: str,
    slo: engine.SLO,
):
    """The trace, simulated (engine.serve_load of the workload replaying it). Read-only:
    shared by reruns and sessions (keyed on the file's SHA-256)."""
    replay = engine.Replay(engine.parse_trace(data, label))
    return engine.serve_load(d, dataclasses.replace(w, arrivals=replay), scheduler=sched, slo=slo)


def run_title(upload: Upload) -> str:
    """The timeline's subtitle: the trace's file and its requests."""
    trace = parse(upload.data, upload.label)[0]
    return _("trace {file}, {requests} requests").format(
        file=upload.label, requests=f"{len(trace):,}"
    )


def results(
    d: engine.Deployment,
    sched: engine.Scheduler,
    w: engine.Workload,
    upload: Upload | None,
    slo: engine.SLO,
    band,
    names: tuple,
) -> None:
    """The main area for a trace: what is missing, or the budget's refusal, or one run's
    cards, timeline and tables (no rate sweep: a trace's arrivals are its own)."""
    if upload is None:
        st.info(
            _(
                "Upload the trace to run it: a CSV of {columns} (the uploader is under Workload "
                "in the sidebar, with a template). A trace cannot travel in a share link; the "
                "link keeps every other input."
            ).format(columns=", ".join(engine.TRACE_COLUMNS)),
            icon="📄",
        )
        return
    if upload.problems:
        st.info(_("The trace was not used: its problems are listed beside the uploader."))
        return
    refused = refusal(d=d, sched=sched, w=w, trace=parse(upload.data, upload.label)[0])
    if refused:
        st.error(refused, icon="⏱️")
        return
    try:
        with st.spinner(_("Simulating the trace…")):
            r = run(d=d, sched=sched, w=w, data=upload.data, label=upload.label, slo=slo)
    except ValueError as exc:
        st.error(
            _("The simulator refused this workload: {error}").format(error=plain(exc)), icon="🚫"
        )
        return
    show.fit_and_warnings(r)
    if not r["fits_in_memory"]:
        return
    cards(lv.trace_cards(r, band, slo))
    st.info(
        _(
            "The rate-sweep charts (latency and throughput against the request rate, the highest "
            "rate meeting the SLOs, replicas and cost) do not apply to a trace: its arrivals are "
            "its own. Choose open loop for them."
        ),
        icon="🔀",
    )
    show.timeline(r, run_title(upload))
    show.run_tables(r, band, names)
