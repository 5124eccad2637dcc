"""Decoder LLMs give the same numbers on every page: Sweep and Compare draw the serving model's
rows (engine.serve_sweep: one decode step, or whole requests, at one request shape), the
numbers of /decode, /plan and the CLI's `serve`; the tutorial's whole-model view stays
available as a labelled choice (`view=tutorial`). An older link's `context=` becomes the
request's input tokens."""

from __future__ import annotations

import io
from pathlib import Path

import pandas as pd
import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

import engine
from ui.words.format import fmt_all

ROOT = Path(__file__).resolve().parent.parent
BATCHES = "1,8,64,256"
LLAMA = {"model": "Llama-3.1-8B", "precision": "bf16", "batches": BATCHES}
VIEWS = {  # view -> (serve_sweep latency column, throughput column)
    "decode": ("tpot_ms", "decode_tokens_per_s"),
    "request": ("e2e_latency_ms", "output_tokens_per_s"),
}


def run(page: str, query: dict[str, str]) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.query_params.update(query)
    at.switch_page(f"pages/{page}.py").run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def url(at: AppTest, key: str) -> str:
    value = at.query_params[key]
    return value[-1] if isinstance(value, list) else value


def cell(table, column: str, batch: int, accelerator: str | None = None) -> str:
    """The table cell of `column` at `batch` (and accelerator)."""
    rows = table[table["Batch size"] == batch]
    if accelerator is not None:
        rows = rows[rows["Accelerator"] == accelerator]
    return rows[column].iloc[0]


def comparison_table(at: AppTest) -> pd.DataFrame:
    (table,) = [
        d.value
        for d in at.dataframe
        if {"Accelerator", "Batch size", "Throughput (tokens/s)"} <= set(d.value.columns)
    ]
    return table


@pytest.fixture
def no_decode_view(monkeypatch):
    """engine.decode and engine.decode_sweep fail the test if a page calls them."""

    def refuse(*args, **kwargs):
        raise AssertionError("the page called the tutorial decode view")

    monkeypatch.setattr(engine, "decode", refuse)
    monkeypatch.setattr(engine, "decode_sweep", refuse)


@pytest.fixture
def csvs(monkeypatch) -> dict:
    """The CSV each download button of the run offers, by the button's key."""
    captured, original = {}, st.download_button

    def spy(label, data, **kwargs):
        captured[kwargs.get("key")] = data
        return original(label, data, **kwargs)

    monkeypatch.setattr(st, "download_button", spy)
    return captured


def read(captured: dict, key: str) -> pd.DataFrame:
    data = captured[key]
    return pd.read_csv(io.StringIO(data() if callable(data) else data))


@pytest.mark.parametrize("view", list(VIEWS))
def test_sweep_and_compare_show_serve_sweep_and_never_the_decode_view(view, no_decode_view, csvs):
    tokens = {"input_tokens": "2048", "output_tokens": "128"}
    query = {**LLAMA, **tokens, "view": view, "profile": "trtllm"}
    sweep = run("sweep", query | {"hardware": "A100"})
    sweep_csv = read(csvs, "sweep_csv")
    compare = run("compare", query | {"hardware": "A100,H100", "deployments": "8xH100/tp8"})
    want = engine.serve_sweep(
        "Llama-3.1-8B",
        ["A100", "H100"],
        batch_sizes=[1, 8, 64, 256],
        input_tokens=2048,
        output_tokens=128,
        precisions="bf16",
        profile="trtllm",
    )
    latency, throughput = VIEWS[view]
    a100 = want[want["hardware"] == "A100"].reset_index(drop=True)
    # the CSVs hold the engine's rows unchanged (every column, the same floats)
    for column in ("ttft_ms", "tpot_ms", "e2e_latency_ms", "decode_tokens_per_s"):
        assert list(sweep_csv[column]) == pytest.approx(list(a100[column]), rel=1e-12)
    compare_csv = read(csvs, "compare_csv")
    assert list(compare_csv[throughput]) == pytest.approx(list(want[throughput]), rel=1e-12)
    # on screen: the same number in both pages' tables, formatted by the one formatter
    name = engine.default_catalog().hardware["A100"].name
    shown = fmt_all(a100.loc[a100["batch_size"] == 64, throughput].to_numpy(), "")[0]
    assert cell(sweep.dataframe[0].value, "Throughput (tokens/s)", 64) == shown
    assert (
        cell(
            table=comparison_table(compare),
            column="Throughput (tokens/s)",
            batch=64,
            accelerator=name,
        )
        == shown
    )
    late = fmt_all(a100.loc[a100["batch_size"] == 64, latency].to_numpy() / 1e3, "s")[0]
    header = {"decode": "TPOT (mean decode step)", "request": "End-to-end latency (request)"}
    assert cell(sweep.dataframe[0].value, header[view], 64) == late
    for at in (sweep, compare):
        assert url(at, "view") == view and url(at, "input_tokens") == "2048"
        assert "context" not in at.query_params
        assert any(
            c.value.startswith("Serving model (docs/model.md), profile trtllm") for c in at.caption
        )
    # one request shape on /compare: the deployments use the same tokens
    deploy = read(csvs, "compare_deploy_csv")
    assert set(deploy["input_tokens"]) == {2048} and set(deploy["output_tokens"]) == {128}
    assert [n.key for n in compare.number_input].count("compare:input_tokens") == 1


def test_the_tutorial_view_is_a_labelled_choice_and_differs():
    at = run("sweep", {**LLAMA, "hardware": "A100", "view": "tutorial"})
    tutorial = engine.sweep(
        models="Llama-3.1-8B", hardware="A100", batch_sizes=[1, 8, 64, 256], precisions=["bf16"]
    )
    serving = engine.serve_sweep(
        "Llama-3.1-8B",
        "A100",
        batch_sizes=64,
        input_tokens=1024,
        output_tokens=256,
        precisions="bf16",
    )
    tp = float(tutorial.loc[tutorial["batch_size"] == 64, "throughput_per_s"].iloc[0])
    table = at.dataframe[0].value
    (column,) = [c for c in table.columns if c.startswith("Throughput")]
    assert cell(table, column, 64) == fmt_all([tp], "")[0]
    # the vision rule moves 10 % of the weights again per extra sample: fewer tokens/s
    assert tp < float(serving["decode_tokens_per_s"].iloc[0])
    assert at.radio(key="sweep:view").value == "tutorial"
    assert "Tutorial whole-model view" in " ".join(c.value for c in at.caption)
    at.radio(key="sweep:view").set_value("request").run()
    assert url(at, "view") == "request"


def test_an_older_links_context_becomes_the_requests_input_tokens():
    at = run("sweep", {**LLAMA, "hardware": "A100", "context": "8192"})
    assert at.number_input(key="sweep:input_tokens").value == 8192
    assert url(at, "input_tokens") == "8192" and "context" not in at.query_params
    assert not [w for w in at.warning if "ignored" in w.value]
    # a link with both keeps its input tokens
    at = run(
        "compare", {**LLAMA, "hardware": "A100,H100", "context": "8192", "input_tokens": "512"}
    )
    assert url(at, "input_tokens") == "512"


def test_view_tokens_and_reserve_are_validated_in_the_link():
    query = {**LLAMA, "hardware": "A100,H100", "view": "vision", "input_tokens": "0"}
    at = run("compare", query | {"memory_reserve": "1.5", "context": "-3"})
    text = " ".join(w.value for w in at.warning).replace("\\", "")
    for name in ("view", "input_tokens", "memory_reserve", "context"):
        assert f"ignored '{name}'" in text
    assert url(at, "view") == "decode" and url(at, "input_tokens") == "1024"
    assert url(at, "memory_reserve") == "0.1"  # the engine's default, recorded in the link


def test_non_llm_models_have_no_llm_view_in_the_link():
    at = run("sweep", {"model": "ResNet-50", "hardware": "A100"})
    for name in ("view", "input_tokens", "output_tokens", "memory_reserve"):
        assert name not in at.query_params
    assert not [r for r in at.radio if r.key == "sweep:view"]


def test_one_output_token_has_no_decode_step_and_the_page_says_so():
    at = run("sweep", {**LLAMA, "hardware": "A100", "output_tokens": "1"})
    assert any("has no decode step" in w.value for w in at.warning)
    assert not at.dataframe  # nothing drawn from empty rows
    at.radio(key="sweep:view").set_value("request").run()
    assert not at.exception and at.dataframe


def kinds(at: AppTest) -> list[str]:
    main = at.main.children
    return [type(main[k]).__name__ for k in sorted(main)]


def test_rows_that_do_not_fit_are_said_first_and_marked_hypothetical():
    # Llama-3.1-70B at fp16: 141 GB of weights > one H100's 80 GiB at every batch
    query = {"model": "Llama-3.1-70B", "precision": "fp16", "batches": "1,8"}
    at = run("sweep", query | {"hardware": "H100"})
    assert kinds(at)[:3] == ["Title", "Caption", "Error"]
    assert "Does not fit" in at.error[0].value and "hypothetical" in at.error[0].value
    # the tutorial view: 70.6e9 params × 2 B = 141.2 GB > 80 GiB (H100) and > 141 GB (H200)
    at = run("compare", query | {"hardware": "H100,H200", "view": "tutorial"})
    df = engine.sweep(
        models="Llama-3.1-70B", hardware=["H100", "H200"], batch_sizes=[1, 8], precisions=["fp16"]
    )
    assert not df["fits_in_memory"].any()
    assert "Does not fit" in at.error[0].value and "every row" in at.error[0].value
    small = {"model": "Llama-3.1-8B", "precision": "fp16", "batches": "1,256"}
    at = run("sweep", small | {"hardware": "A100", "input_tokens": "8192"})
    d = engine.serve_sweep(
        "Llama-3.1-8B", "A100", batch_sizes=[1, 256], input_tokens=8192, output_tokens=256
    )
    # 16 GB of weights + 256 × 8,448 tokens × 131,072 B of KV = 300 GB > 72 GiB usable
    assert list(d["fits_in_memory"]) == [True, False]
    assert "1 of 2 rows do not fit" in at.error[0].value


def test_compare_puts_deployments_first_and_folds_one_accelerator_each_when_nothing_fits():
    # Llama-3.1-70B fp16: 141 GB of weights, more than one A100 or H100 (80 GiB) holds
    at = run("compare", {"model": "Llama-3.1-70B", "precision": "fp16", "batches": "1,8"})
    (fold,) = [e for e in at.expander if e.label.startswith("One accelerator each")]
    assert "nothing fits on one device" in fold.label
    headers = [s.value for s in at.subheader]
    assert headers.index("Per accelerator") > 0  # inside the fold, after the deployments
    assert any("Deployment" in d.value.columns for d in at.dataframe)
    at = run("compare", {"model": "Llama-3.1-8B", "precision": "fp16", "batches": "1,8"})
    assert not [e for e in at.expander if e.label.startswith("One accelerator each")]
