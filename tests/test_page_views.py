"""The pages' pure builders and prose (ui/solve/explain, ui/charts/decode_rows, ui/compare/view,
ui/sweep/view, ui/widgets/editors, ui.core.text.plain), tested without a page run."""

from __future__ import annotations

import re

import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as hs

import engine
from ui.charts import decode_rows
from ui.compare import view as compare_view
from ui.core.text import WORD_JOINER, plain
from ui.solve import explain
from ui.sweep import view as sweep_view
from ui.widgets import editors

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


def test_the_decode_view_renames_decode_columns_onto_the_sweeps():
    raw, shown = decode_rows.decode_frame(
        CAT.models["Llama-3.1-8B"], [CAT.hardware["A100"]], [1, 64], 4096, "bf16", {}
    )
    for decode_column, sweep_column in decode_rows.AS_SWEEP.items():
        pd.testing.assert_series_equal(
            raw[decode_column], shown[sweep_column], check_names=False, check_dtype=False
        )
    assert list(shown["sample"].unique()) == ["token"]  # throughput in tokens/s
    r = engine.decode("Llama-3.1-8B", "A100", 64, 4096, precision="bf16")
    assert shown["throughput_per_s"].iloc[1] == pytest.approx(64 / r.tpot_s)


def test_decode_overrides_drop_what_the_decode_model_does_not_use():
    given_ = {"efficiency": 0.6, "activation_fraction": 0.2, "flop_convention": "mac2"}
    assert decode_rows.decode_overrides(given_) == {"efficiency": 0.6}


def test_compare_summary_puts_the_exact_crossover_beside_the_first_in_the_list():
    df = engine.sweep("ResNet-50", ["A100", "T4"], [1, 8], ["fp16"])
    cross = engine.crossover_batch(df)
    out = compare_view.summary(df, cross, {"A100": "A", "T4": "T"}, {"A100": 2, "T4": None})
    columns = list(out.columns)
    assert columns.index(compare_view.EXACT) + 1 == columns.index(compare_view.LISTED)
    assert list(out[compare_view.EXACT]) == ["2", "never"]
    assert compare_view.EXACT not in compare_view.summary(df, cross, {}, None)


def test_sweep_never_text_points_past_the_list_or_says_never():
    df = engine.sweep("ResNet-50", "A100", [1], ["fp16"])
    assert "batch ≥ 2 would cross it" in sweep_view.never_text(df, 2, decode=False)
    assert "never crosses it" in sweep_view.never_text(df, None, decode=False)
    assert "KV cache" in sweep_view.never_text(df, None, decode=True)


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
def test_plain_leaves_no_live_markdown_or_autolink(text):
    out = plain(text)
    assert not UNESCAPED.search(out.replace("\\\\", ""))
    assert not re.search(r"(?i)[a-z]://|www\.|[^\u2060]@", out.replace("\\", ""))
    assert out.replace(WORD_JOINER, "").replace("\\", "") == text.replace("\\", "")
