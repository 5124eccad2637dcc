"""The pages' pure builders and prose (ui/solve/explain, ui/charts/serve_rows, ui/compare/view,
ui/sweep/view, ui/widgets/editors, ui.words.text.plain), tested without a page run."""

from __future__ import annotations

import re

import pandas as pd
import pytest
from hypothesis import example, given
from hypothesis import strategies as hs

import engine
from ui.charts import serve_rows
from ui.compare import view as compare_view
from ui.solve import explain
from ui.sweep import view as sweep_view
from ui.widgets import editors
from ui.words.text import WORD_JOINER, plain

CAT = engine.default_catalog()


def test_explanation_of_the_reference_case_names_the_bound_overhead_and_exact_crossover():
    r = engine.solve("ResNet-50", "A100", 1)
    cross = engine.compute_bound_batch("ResNet-50", "A100")
    lines = explain.explain(r, "A100", cross)
    assert lines[0].startswith("**Memory-bound on the roofline.**")
    assert lines[1] == f"Batch ≥ {cross:,} crosses the effective ridge (compute-bound)."
    # fixed overhead = 0.015 ms dispatch + 50 layers × 10 µs = 0.515 ms of 0.5426 ms: 94.9 %
    assert lines[2].startswith("**Overhead-bound:** fixed overhead is 94.9% of latency")
    assert explain.headline(r) == "Overhead-bound · roofline bound: memory"


def test_no_crossover_is_explained_and_a_compute_bound_batch_says_so():
    r = engine.solve("Llama-3.1-8B", "H100", 1)
    assert engine.compute_bound_batch("Llama-3.1-8B", "H100") is None
    assert "never crosses the ridge" in explain.explain(r, "H100", None)[1]
    big = engine.solve("ResNet-50", "A100", 256)
    assert explain.explain(big, "A100", 2)[0].startswith("**Compute-bound on the roofline.**")


def test_not_fit_text_uses_the_catalogues_capacity_and_says_hypothetical():
    r = engine.solve("Llama-3.1-70B", "H100", 1)
    text = explain.not_fit_text(r.weight_bytes, CAT.hardware["H100"], "H100")
    assert "141 GB" in text and "80 GiB" in text and "hypothetical" in text


@pytest.mark.parametrize("view", ["decode", "request"])
def test_the_serving_views_rename_serve_sweep_columns_onto_the_sweeps(view):
    model, hw = CAT.models["Llama-3.1-8B"], CAT.hardware["A100"]
    profile = engine.get_profile("trtllm")
    opts = serve_rows.options(profile, {"efficiency": 0.6, "activation_fraction": 0.2}, CAT)
    assert opts["efficiency"] == 0.6 and "activation_fraction" not in opts  # the tutorial's α
    tokens = {"input_tokens": 2048, "output_tokens": 128}
    raw, shown = serve_rows.serve_frame(
        model=model,
        hardware=[hw],
        batches=[1, 64],
        tokens=tokens,
        precision="bf16",
        opts=opts,
        view=view,
    )
    for serve_column, sweep_column in (serve_rows.VIEW_COLUMNS[view] | serve_rows.COMMON).items():
        pd.testing.assert_series_equal(
            raw[serve_column], shown[sweep_column], check_names=False, check_dtype=False
        )
    assert list(shown["sample"].unique()) == ["token"]  # throughput in tokens/s
    # the same numbers as engine.serve for the scenario, by name, with the profile and the edit
    r = engine.serve(
        "Llama-3.1-8B",
        "A100",
        batch_size=64,
        precision="bf16",
        profile="trtllm",
        efficiency=0.6,
        **tokens,
    )
    latency = {"decode": "tpot_ms", "request": "e2e_latency_ms"}[view]
    assert shown["latency_ms"].iloc[1] == pytest.approx(r[latency], rel=1e-12)
    throughput = {"decode": "decode_tokens_per_s", "request": "output_tokens_per_s"}[view]
    assert shown["throughput_per_s"].iloc[1] == pytest.approx(r[throughput], rel=1e-12)
    # display scaling only: 1e-12 × FLOP/s is TFLOP/s
    assert shown["achieved_tflops"].iloc[1] == pytest.approx(r["decode_achieved_flop_per_s"] / 1e12)


def test_compare_summary_puts_the_exact_crossover_beside_the_first_in_the_list():
    df = engine.sweep(
        models="ResNet-50", hardware=["A100", "T4"], batch_sizes=[1, 8], precisions=["fp16"]
    )
    cross = engine.crossover_batch(df)
    out = compare_view.summary(
        df=df, cross=cross, names={"A100": "A", "T4": "T"}, exact={"A100": 2, "T4": None}
    )
    columns = list(out.columns)
    assert columns.index(compare_view.EXACT) + 1 == columns.index(compare_view.LISTED)
    assert list(out[compare_view.EXACT]) == ["2", "never"]
    assert compare_view.EXACT not in compare_view.summary(df=df, cross=cross, names={}, exact=None)


def test_sweep_never_text_points_past_the_list_or_says_never():
    df = engine.sweep(models="ResNet-50", hardware="A100", batch_sizes=[1], precisions=["fp16"])
    assert "batch ≥ 2 would cross it" in sweep_view.never_text(df, 2, serving=False)
    assert "never crosses it" in sweep_view.never_text(df, None, serving=False)
    assert "KV cache" in sweep_view.never_text(df, None, serving=True)


def test_custom_error_lines_are_inert_and_say_what_is_still_used():
    errors = {"custom_hw": "bandwidth: '3 TBs' [x](http://e.example)", "custom_model": None}
    (line,) = editors.custom_error_lines(errors, {"custom_hw": "Chip *A*"})
    assert line.startswith("**Custom accelerator: not updated.**")
    assert "\\[x\\]\\(http" + WORD_JOINER + "://e.example\\)" in line
    assert "Still using the last valid one (Chip \\*A\\*)" in line
    (none,) = editors.custom_error_lines(errors, {})
    assert "No valid one yet" in none


UNESCAPED = re.compile(r"(?<!\\)[\[\]()<>`!*_]")


@given(hs.text(max_size=80))
@example("\u2060")  # a word joiner in the input itself
def test_plain_leaves_no_live_markdown_or_autolink(text):
    out = plain(text)
    assert not UNESCAPED.search(out.replace("\\\\", ""))
    assert not re.search(r"(?i)[a-z]://|www\.|[^\u2060]@", out.replace("\\", ""))
    # plain adds backslashes and word joiners, nothing else (a word joiner in the input stays)
    unmarked = text.replace(WORD_JOINER, "").replace("\\", "")
    assert out.replace(WORD_JOINER, "").replace("\\", "") == unmarked
