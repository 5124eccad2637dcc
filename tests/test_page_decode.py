"""AppTest tests of the LLM decode page (pages/decode.py).

Every expected number is computed with the engine (`engine.decode`), never typed in; the page
is opened from the entry file, as a user's browser would route to it.
"""

from __future__ import annotations

import io
import json

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

import engine
from tests.conftest import ROOT
from ui import custom
from ui import decode_view as dv
from ui import figures_llm as fl
from ui.format import fmt

PAGE = "pages/decode.py"
DEFAULT = {"model": "Llama-3.1-8B", "hardware": "A100", "batch": 1, "context": 4096}
CONTEXTS, BATCHES = [1024, 4096, 16384, 65536], [2**k for k in range(9)]


def open_page(query: dict[str, str] | None = None) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    for key, value in (query or {}).items():
        at.query_params[key] = value
    at.run()
    at.switch_page(PAGE).run()
    assert not at.exception, at.exception
    return at


def shown(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def text(elements) -> str:
    """The elements' text with markdown escapes removed (warnings backslash user text)."""
    return " ".join(e.value for e in elements).replace("\\", "")


def url(at: AppTest, key: str) -> str:
    """What the page wrote into the share link for `key` (the last value if repeated)."""
    value = at.query_params[key]
    return value[-1] if isinstance(value, list) else value


def expected(model="Llama-3.1-8B", hardware="A100", batch=1, context=4096, prompt=1024, **kw):
    return engine.decode(model, hardware, batch, context, prompt=prompt, **kw).as_dict()


def cards(r: dict) -> dict[str, str]:
    """The metric cards the page must show for the engine's result `r` (the card builder's
    labels and formatting; speed labels marked when it does not fit)."""
    built = dv.hypothetical(fl.headline_metrics(r), bool(r["fits_in_memory"]))
    return {label: value for label, value, _ in built}


def card(at: AppTest, prefix: str) -> str:
    """The value of the one metric card whose label starts with `prefix`."""
    (value,) = [v for label, v in shown(at).items() if label.startswith(prefix)]
    return value


def assert_metrics_match(at: AppTest, r: dict) -> None:
    m = shown(at)
    assert m == cards(r)
    assert card(at, "Decode bottleneck") == r["decode_bottleneck"]
    assert card(at, "Max batch at this context") == f"{r['max_batch_at_context']:,}"
    assert card(at, "Max context at this batch") == f"{r['max_context_at_batch']:,}"
    memory = next(c.value for c in at.caption if c.value.startswith("Memory: "))
    assert memory.startswith(f"Memory: {fl.memory_split(r)}. Capacity ")
    usable = r["memory_capacity_bytes"] * (1 - r["assumptions"]["memory_reserve"])
    assert f"usable {fmt(usable, 'B')}" in memory and r["usable_memory_bytes"] == usable


def labels(at: AppTest) -> list[str]:
    return [m.label for m in at.metric]


def test_default_run_shows_the_engines_numbers():
    at = open_page()
    r = expected()
    assert_metrics_match(at, r)
    # 8.475 ms: the published-shape Llama-3.1-8B's decode step on A100 (engine.decode)
    assert card(at, "TPOT").startswith("8.47") and card(at, "Decode bottleneck") == "memory"
    assert not at.warning and not at.error  # no ignored assumption was passed to the engine
    charts = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    assert len(charts) == 4
    roofline = [t["name"] for t in charts[0]["data"]]
    assert "Attainable (on the roof)" in roofline and "Fixed-overhead gap" in roofline
    memory = [t["name"] for t in charts[3]["data"]]
    assert any(n.startswith("Capacity 85.9") for n in memory)  # 80 GiB = 85.9e9 bytes
    assert "Out of memory (above capacity)" in memory
    explained = text(at.markdown)
    assert "**Decode is memory-bound.**" in explained and "KV-cache quantisation" in explained
    assert "Assumptions" in " ".join(e.label for e in at.expander)
    assert url(at, "model") == "Llama-3.1-8B" and url(at, "context") == "4096"
    assert "activation_fraction" not in at.query_params


def test_changing_context_changes_tpot_and_kv_cache():
    at = open_page()
    before = shown(at)
    at.number_input(key="decode:context").set_value(16384).run()
    assert not at.exception
    r = expected(context=16384)
    assert_metrics_match(at, r)
    assert card(at, "TPOT") != next(v for k, v in before.items() if k.startswith("TPOT"))
    assert r["kv_cache_bytes"] == pytest.approx(4 * expected()["kv_cache_bytes"])
    assert url(at, "context") == "16384"


def test_kv_precision_fp8_halves_the_kv_cache():
    at = open_page()
    at.selectbox(key="decode:kv_precision").set_value("fp8").run()
    assert not at.exception
    r = expected(kv_precision="fp8")
    assert r["kv_cache_bytes"] == pytest.approx(expected()["kv_cache_bytes"] / 2)
    assert_metrics_match(at, r)
    assert url(at, "kv_precision") == "fp8"


def test_query_string_sets_the_widgets():
    query = {"model": "Llama-3.1-70B", "hardware": "H100", "context": "8192"}
    at = open_page(query | {"batch": "4", "kv_precision": "fp8"})
    assert at.selectbox(key="decode:model").value == "Llama-3.1-70B"
    assert at.selectbox(key="decode:hardware").value == "H100"
    assert at.number_input(key="decode:context").value == 8192
    assert at.number_input(key="decode:batch").value == 4
    assert at.selectbox(key="decode:kv_precision").value == "fp8"
    assert not at.warning
    r = expected("Llama-3.1-70B", "H100", 4, 8192, kv_precision="fp8")
    assert not r["fits_in_memory"]  # 141 GB of fp16 weights on an 80 GB card: said plainly
    assert "Does not fit" in text(at.error) and "hypothetical" in text(at.error)
    assert_metrics_match(at, r)
    speed = [k for k in shown(at) if k.startswith(("TPOT", "TTFT"))]
    assert len(speed) == 2 and all(k.endswith("— hypothetical") for k in speed)


def test_invalid_query_string_warns_and_uses_defaults():
    at = open_page({"context": "-5", "model": "ResNet-50", "kv_precision": "fp3"})
    warning = text(at.warning)
    assert "'context'" in warning and "whole number from 1 to" in warning
    assert "ResNet-50 is not a decoder LLM" in warning  # names why
    assert "'kv_precision'" in warning and "fp3" in warning
    assert at.selectbox(key="decode:model").value == DEFAULT["model"]
    assert at.number_input(key="decode:context").value == DEFAULT["context"]
    assert at.selectbox(key="decode:kv_precision").value == "same"
    assert_metrics_match(at, expected())
    assert url(at, "model") == "Llama-3.1-8B"  # the link heals itself


def test_prompt_longer_than_the_context_is_explained():
    at = open_page({"context": "512", "prompt": "1024"})
    errors = text(at.error)
    assert "longer than the context" in errors and "Showing a prompt of 512 tokens" in errors
    assert_metrics_match(at, expected(context=512, prompt=512))


def test_bad_context_list_is_reported_and_the_page_still_works():
    at = open_page()
    at.text_input(key="decode:contexts").set_value("1024, lots").run()
    assert not at.exception
    assert "Context list not used" in text(at.error)
    assert_metrics_match(at, expected())


def test_csv_of_the_table_parses_with_unit_bearing_columns():
    at = open_page()
    assert at.download_button(key="decode_csv").label == "Download CSV"
    df = engine.decode_sweep("Llama-3.1-8B", "A100", BATCHES, CONTEXTS, prompt=1024)
    shown_table = at.dataframe[0].value
    pd.testing.assert_frame_equal(shown_table, fl.display_table(df), check_dtype=False)
    csv = pd.read_csv(io.StringIO(engine.to_csv(df)))
    assert len(csv) == len(BATCHES) * len(CONTEXTS)
    for column in (
        "tpot_ms",
        "tokens_per_s",
        "aggregate_tokens_per_s",
        "ttft_ms",
        "kv_cache_bytes",
        "kv_cache_bytes_per_token",
        "weight_bytes",
        "memory_required_bytes",
        "memory_capacity_bytes",
        "decode_arithmetic_intensity_flop_per_byte",
        "compute_efficiency_fraction",
        "layer_overhead_us",
        "dispatch_overhead_ms",
        "kv_precision",
    ):
        assert column in csv.columns, column
    row = csv[(csv["context_tokens"] == 4096) & (csv["batch_size"] == 1)].iloc[0]
    assert row["tpot_ms"] == pytest.approx(expected()["tpot_ms"])
    assert row["kv_cache_bytes"] == 536_870_912  # 2·32·8·128·2 B × 4096 tokens (docs/model.md)


def test_custom_accelerator_from_the_link_is_used_and_custom_model_explained():
    chip = "name=My chip;fp16=400 TFLOP/s;fp32=50 TFLOP/s;bandwidth=1.5 TB/s;capacity=64 GiB"
    chip += ";dispatch=0.01 ms"
    chip += ";tdp=350 W"
    toy = "name=Mine;params=1e9;flops=2 GFLOP;convention=mac2;layers=24"
    at = open_page({"custom_hw": chip, "hardware": "Custom-HW", "custom_model": toy})
    assert not at.warning
    assert at.selectbox(key="decode:hardware").value == "Custom-HW"
    hw = custom.hardware_from(custom.decode(chip, custom.HW_FIELDS))
    assert_metrics_match(at, expected(hardware=hw))
    assert "Custom models are not offered here" in text(at.info)
    assert url(at, "custom_hw") == chip and url(at, "custom_model") == toy  # kept in the link


def test_capacity_is_shown_as_the_catalogue_states_it():
    at = open_page({"hardware": "H200"})  # the H200 datasheet states 141 GB (decimal)
    memory = next(c.value for c in at.caption if c.value.startswith("Memory: "))
    assert "Capacity 141 GB as catalogued" in memory
    at = open_page()  # the A100 80GB datasheet's 80 GB are GiB: 85.9e9 bytes
    memory = next(c.value for c in at.caption if c.value.startswith("Memory: "))
    assert "Capacity 80 GiB as catalogued" in memory


def test_not_fitting_leads_the_page_and_marks_the_speed_figures_hypothetical():
    # Llama-3.1-70B at fp16 on one H100: 141 GB of weights > 80 GB (less the 10 % reserve)
    at = open_page({"model": "Llama-3.1-70B", "hardware": "H100", "precision": "fp16"})
    r = expected("Llama-3.1-70B", "H100", 1, 4096, precision="fp16")
    assert not r["fits_in_memory"]
    first = at.main.children  # the error is drawn right after the title and its caption
    kinds = [type(first[k]).__name__ for k in sorted(first)][:3]
    assert kinds == ["Title", "Caption", "Error"], kinds
    assert "Does not fit" in at.error[0].value and "hypothetical" in at.error[0].value
    assert "H100 SXM has 80 GiB" in at.error[0].value  # the capacity as catalogued
    assert all(
        label.endswith("— hypothetical")
        for label in labels(at)
        if label.startswith(("TPOT", "Per user", "Aggregate", "TTFT"))
    )


def test_memory_reserve_is_editable_in_the_link_and_sets_max_batch():
    at = open_page({"memory_reserve": "0.3", "context": "8192"})
    assert not at.warning
    assert at.number_input(key="decode:memory_reserve").value == pytest.approx(0.3)
    r = expected(context=8192, memory_reserve=0.3)
    looser = expected(context=8192)  # the default reserve, 0.1
    assert r["max_batch_at_context"] < looser["max_batch_at_context"]
    assert_metrics_match(at, r)
    assert url(at, "memory_reserve") == "0.3"
    at = open_page({"memory_reserve": "0.99"})  # above the widget's maximum, 0.95
    assert "'memory_reserve'" in text(at.warning)


def test_table_row_and_headline_show_the_same_ttft_when_the_prompt_is_long():
    # prompt 2048 > the smallest curve context (1024): rows that hold the prompt use it
    at = open_page({"prompt": "2048", "context": "4096"})
    r = expected(prompt=2048)
    assert_metrics_match(at, r)
    df, shorter = dv.sweep("Llama-3.1-8B", "A100", BATCHES, CONTEXTS, 2048, {})
    assert shorter
    row = df[(df["context"] == 4096) & (df["batch_size"] == 1)].iloc[0]
    assert row["ttft_ms"] == pytest.approx(r["ttft_ms"]) and row["prompt"] == 2048
    short = df[(df["context"] == 1024) & (df["batch_size"] == 1)].iloc[0]  # its own length
    assert short["ttft_ms"] == pytest.approx(expected(context=1024, prompt=1024)["ttft_ms"])
    pd.testing.assert_frame_equal(at.dataframe[0].value, fl.display_table(df), check_dtype=False)
    assert "shorter contexts use their own length" in text(at.caption)


def test_engine_warnings_with_a_chip_name_are_inert():
    chip = "name=[x](http://e.example);fp16=400 TFLOP/s;fp32=50 TFLOP/s;bandwidth=1.5 TB/s"
    chip += ";capacity=64 GiB;dispatch=0.01 ms;tdp=350 W"
    at = open_page({"custom_hw": chip, "hardware": "Custom-HW", "precision": "fp8"})
    warning = next(w.value for w in at.warning if "fp8" in w.value)
    assert "\\[x\\]\\(http\u2060://e.example\\)" in warning and "http://" not in warning
