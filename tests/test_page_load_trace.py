"""AppTest tests of the serving-under-load page's trace mode (pages/load.py, ui/load/trace.py):
an uploaded trace runs as `engine.serve_load(trace=...)` runs it, a file with problems is named
row by row and refused, a file over the limit is refused with its size, file names stay inert
text, and a link saying `mode=trace` asks for the file it cannot carry."""

from __future__ import annotations

import time

import numpy as np
from streamlit.testing.v1 import AppTest

import engine
from tests.conftest import ROOT
from ui.load import trace as lt
from ui.words.format import fmt
from ui.words.text import plain

PAGE = "pages/load.py"
SMALL = {"model": "Llama-3.1-8B", "hardware": "H100", "tp": "1", "profile": "tutorial"}
SMALL |= {"input_tokens": "512", "output_tokens": "128", "mode": "trace"}
UPLOADER = "load:trace.file"
HOSTILE = "**bold** [click](http://evil.example) `x` trace.csv"


def open_page(query: dict[str, str] | None = None) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    at.switch_page(PAGE)
    at.query_params.update(SMALL | (query or {}))
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def upload(at: AppTest, data: bytes, name: str = "mine.csv") -> AppTest:
    at.file_uploader(key=UPLOADER).set_value((name, data, "text/csv")).run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def trace_csv(rows: int = 60, seed: int = 1) -> bytes:
    rng = np.random.default_rng(seed)
    arrival = np.cumsum(rng.exponential(0.5, rows))
    lines = ["arrival_s,input_tokens,output_tokens"]
    lines += [f"{t:.3f},{rng.integers(200, 800)},{rng.integers(50, 200)}" for t in arrival]
    return ("\n".join(lines) + "\n").encode()


def text(elements) -> str:
    return " ".join(str(e.value) for e in elements).replace("\\", "")


def cards(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def markdown(at: AppTest) -> str:
    kinds = ("caption", "markdown", "subheader", "info", "warning", "error", "success", "title")
    return "\n".join(e.value for kind in kinds for e in at.get(kind))


def test_a_valid_trace_runs_as_the_engine_runs_it():
    data = trace_csv()
    at = upload(open_page(), data).run()  # the rerun reads the trace back from the caches
    assert not at.exception, [e.message for e in at.exception]
    r = engine.serve_load(
        "Llama-3.1-8B", "H100", tp=1, profile="tutorial", trace=engine.parse_trace(data)
    )
    got = cards(at)
    assert got["Requests measured"] == f"{int(r['requests_measured']):,}"
    assert int(r["requests_measured"]) > 0
    for stat in ("p50", "p90", "p99"):
        assert got[f"TTFT {stat}"] == fmt(r[f"ttft_ms_{stat}"] * 1e-3, "s")
        assert got[f"TPOT {stat}"] == fmt(r[f"tpot_ms_{stat}"] * 1e-3, "s")
    assert got["Goodput (requests/s)"] == fmt(r["goodput_requests_per_s"])
    assert got["Served (requests/s)"] == fmt(r["requests_per_s"])
    charts = [c.proto.id.split("-")[-1] for c in at.get("plotly_chart")]
    assert charts == ["load_timeline"]  # no rate sweep for a trace: said instead
    assert "do not apply to a trace" in text(at.info)
    assert "Max rate within SLOs (requests/s)" not in got
    assert at.download_button(key="load_requests_csv").label.startswith("Download")
    assert "mine.csv: 60 requests over" in text(at.caption)
    assert not at.error
    assert at.query_params["mode"] in ("trace", ["trace"])


def test_a_trace_with_bad_rows_names_each_row_and_runs_nothing():
    bad = b"arrival_s,input_tokens,output_tokens\n0,512,128\nsoon,512,128\n1,0,128\n2,512,1.5\n"
    at = upload(open_page(), bad)
    at.run()  # a rerun reads the file's problems back from the cache
    assert not at.exception, [e.message for e in at.exception]
    shown = text(at.error)
    assert "mine.csv was not used" in shown
    assert "row 2, column 'arrival_s': must be a number, got 'soon'" in shown
    assert "row 3, column 'input_tokens'" in shown and "row 4, column 'output_tokens'" in shown
    assert not at.metric and not at.get("plotly_chart")
    assert "problems are listed beside the uploader" in text(at.info)


def test_many_bad_rows_are_cut_at_twenty_with_how_many_more():
    rows = "\n".join(f"{i},x,1" for i in range(30))
    at = upload(open_page(), f"arrival_s,input_tokens,output_tokens\n{rows}\n".encode())
    shown = text(at.error)
    assert "row 20, column 'input_tokens'" in shown and "row 21," not in shown
    assert "… and 10 more problems" in shown


def test_a_file_over_the_limit_is_refused_with_its_size():
    big = b"arrival_s,input_tokens,output_tokens\n" + b"0,1,1\n" * 200_000  # 1.2 MB
    at = upload(open_page(), big)
    shown = text(at.error)
    assert f"the file is {len(big):,} bytes, more than the limit of 1,000,000 bytes" in shown
    assert not at.metric


def test_a_hostile_file_name_is_shown_as_inert_text():
    for data in (trace_csv(rows=30), b"arrival_s,input_tokens,output_tokens\nx,1,1\n"):
        at = upload(open_page(), data, HOSTILE)
        shown = markdown(at)
        assert plain(HOSTILE) in shown
        assert HOSTILE not in shown


def test_a_link_with_mode_trace_asks_for_the_file_and_keeps_the_other_inputs():
    at = open_page({"rate": "5", "slo_ttft_ms_p90": "1500"})
    assert "Upload the trace to run it" in text(at.info)
    assert not at.error and not at.metric and not at.get("plotly_chart")
    assert at.radio(key="load:mode").value == "trace"
    assert at.number_input(key="load:rate").value == 5.0
    assert at.number_input(key="load:slo_ttft_ms_p90").value == 1500.0
    assert at.download_button(key="load_trace_template").label.startswith("Download a template")


def test_the_template_is_a_valid_trace_of_the_scenarios_lengths():
    work = {"seed": 0, "rate": 3.0, "burstiness": 1.0, "input_tokens": 512}
    work |= {"output_tokens": 128, "length_spread": 0.5}
    df = lt.template(work)
    trace = engine.parse_trace(df.to_csv(index=False).encode())
    assert len(trace) == lt.TEMPLATE_ROWS and trace.arrival_s[0] == 0
    assert trace.input_tokens.min() >= 256 and trace.input_tokens.max() <= 768
    assert trace.output_tokens.min() >= 64 and trace.output_tokens.max() <= 192


def test_a_trace_over_the_pages_budget_is_refused_before_any_work(monkeypatch):
    # 70,000 requests at once, each of 1 prompt token and 99,999 output tokens (700 kB): the
    # older estimate (4 events per request) let it run, 50 s of CPU per upload
    data = ("arrival_s,input_tokens,output_tokens\n" + "0,1,99999\n" * 70_000).encode()
    runs = []
    monkeypatch.setattr(engine, "serve_load", lambda *a, **kw: runs.append(a))
    start = time.process_time()
    at = upload(open_page(), data)
    took = time.process_time() - start
    shown = text(at.error)
    d = engine.Deployment("Llama-3.1-8B", "H100", profile="tutorial")
    bound = engine.load_events(d, engine.Workload(arrivals=engine.Replay(engine.parse_trace(data))))
    assert f"This trace would take up to {bound:,} events to simulate" in shown
    assert "more than this page's budget of 1,000,000" in shown
    assert "Upload fewer requests (now 70,000)" in shown
    assert not at.metric and not runs  # nothing simulated
    assert took < 15
