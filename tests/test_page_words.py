"""What the pages say in words: one forward pass explained where two
intensities show, the operator that binds a step, the tutorial's crossover beside the exact one.
AppTest, each page opened from the entry file as a browser routes it; figures from the engine.
"""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

import engine
from tests.conftest import ROOT
from ui.charts import operator_table as ov
from ui.solve.breakdown import DETAILS_KEY
from ui.words.format import fmt


def open_page(page: str, query: dict[str, str]) -> AppTest:
    """The page with its details open (/solve's layers or operators are drawn on a click)."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.switch_page(f"pages/{page}.py")
    at.query_params.update(query)
    at.session_state[DETAILS_KEY] = True
    at.run()
    assert not at.exception, at.exception
    return at


def words(at: AppTest) -> str:
    """Every caption and markdown of the page, markdown escapes removed."""
    return " ".join(e.value for kind in ("caption", "markdown") for e in at.get(kind)).replace(
        "\\", ""
    )


def test_solve_resnet50_explains_its_two_intensities_and_the_layers_time():
    at = open_page("solve", {"model": "ResNet-50", "hardware": "A100", "batch": "1"})
    r = engine.solve(model="ResNet-50", hardware="A100", batch_size=1, precision="fp16")
    layers = engine.layer_table("ResNet-50", "A100", batch_size=1, precision="fp16")
    t = engine.layer_totals(layers)
    text = words(at)
    assert "Two intensities for one forward pass" in text
    assert fmt(r.arithmetic_intensity_flop_per_byte, "FLOP/byte") in text  # 72.8, headline
    assert fmt(t["arithmetic_intensity_flop_per_byte"], "FLOP/byte") in text  # 43.2, layers
    assert f"{fmt(t['bytes'], 'B')}: " in text and fmt(r.bytes, "B") in text  # 94.7 vs 56.3 MB
    # the 49 µs is named as what it is, beside the times it adds up to
    assert f"layers' own rooflines sum to {fmt(t['time_s'], 's')}" in text
    assert f"the headline's {fmt(r.latency_s, 's')}" in text
    assert "Sum of the layers' own rooflines, without overheads" not in text


def test_solve_llm_caption_names_the_mean_context_and_the_binding_operator():
    at = open_page("solve", {"model": "Llama-3.1-8B", "hardware": "A100", "batch": "1"})
    text = words(at)
    # 1,024 input + half of 256 output tokens: the decode step shown is at 1,152 tokens
    assert "the decode step at the mean context of 1,152 tokens" in text
    assert "mean context of 256 output tokens" not in text
    assert "**Which operator binds.** In a decode step (TPOT" in text


def test_decode_says_which_operator_binds():
    at = open_page("decode", {"model": "Llama-3.1-70B", "hardware": "H100", "tp": "2"})
    ops = ov.step_table(
        engine.Deployment("Llama-3.1-70B", "H100", tp=2),  # the page's default profile
        engine.Batch(input_tokens=1024, output_tokens=256),
    )
    assert ov.binding_text(ops) in [m.value for m in at.markdown]


def test_sweep_and_compare_say_the_tutorials_4_is_the_first_power_of_two_exact_3():
    assert engine.compute_bound_batch("ResNet-50", "H100") == 3
    sweep = words(open_page("sweep", {"model": "ResNet-50", "hardware": "H100"}))
    assert "4 is the first compute-bound batch of the list" in sweep
    assert "first power of two in its sweep" in sweep and "the exact crossover is 3" in sweep
    link = {"model": "ResNet-50", "hardware": "A100,H100", "batches": "1,2,4,8,16"}
    compare = words(open_page("compare", link))
    assert "NVIDIA H100 SXM 4 in your list, exactly 3" in compare
    assert "first power of two in its sweep, where the exact crossover is 3" in compare
