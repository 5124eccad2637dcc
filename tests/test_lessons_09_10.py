"""Lessons 09 "Where to Invest: Sensitivity Analysis" and 10 "GPU vs. Wafer-Scale": the
chapters' published figures (harvard-edge/cs249r_book, mlsysim/docs/tutorials/09_sensitivity.qmd
and 10_gpu_vs_wafer.qmd) quoted beside the engine's, with the arithmetic; where they differ the
test pins OUR figure and the page says why. Then the pages themselves in English and 中文."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

import engine
from tests.conftest import ROOT
from ui.learn.lessons import LESSONS
from ui.words import i18n

REQ_70B = engine.Batch(input_tokens=1024, output_tokens=128)
REQ_GPT3 = engine.Batch(input_tokens=2048, output_tokens=128)


def dep(model: str, hardware: str) -> engine.Deployment:
    """The lessons show the tutorial's figures: its profile (efficiency 0.5, full bandwidth,
    10 µs per layer, 10 % reserve), named (the default is a fitted one)."""
    return engine.Deployment(model, hardware, profile=engine.TUTORIAL_PROFILE)


A100_70B = dep("Llama-3.1-70B", "A100")


# --- 09 Where to Invest ---------------------------------------------------------------------


def test_09_bandwidth_elasticity_is_ours_not_the_chapters_minus_0_88():
    # Chapter: "dT/dBW = -0.88 means a 10% bandwidth increase yields 8.8% latency reduction".
    # A pure 1/BW term: +10 % gives 1 − 1/1.1 = 9.09 % less, a one-sided elasticity of −0.909;
    # the central difference ±10 % gives (1/1.1 − 1/0.9)/0.2 = −1.0101. Ours: the memory share
    # of the A100's step, (69.181 − 0.815)/69.181 = 0.98822, × −1.0101 = −0.99820.
    s = engine.sensitivity(A100_70B, REQ_70B)
    r = engine.serve(A100_70B, REQ_70B)
    assert r["decode_overhead_ms"] == pytest.approx(0.815, rel=1e-9)  # 80 × 10 µs + 15 µs
    e = s.elasticity("memory_bandwidth", "tpot_ms")
    share = (r["tpot_ms"] - 0.815) / r["tpot_ms"]
    assert e == pytest.approx(-share / (1 - 0.01), rel=1e-6)
    assert round(e, 3) == -0.998 and e != pytest.approx(-0.88, abs=0.05)
    row = next(
        x for x in s.rows if x["parameter"] == "memory_bandwidth" and x["metric"] == "tpot_ms"
    )
    # +10 %: −(1 − 1/1.1) × share = −0.0898, not the chapter's −0.088
    assert row["change_at_plus_step"] == pytest.approx(-(1 - 1 / 1.1) * share, rel=1e-6)


def test_09_flops_elasticity_is_zero_not_minus_0_06():
    # Chapter: "dT/dFLOPS = -0.06 means 10% more FLOPS yields only 0.6% improvement" and
    # "bandwidth is ~15x more valuable". At batch 1 every decode GEMM is memory-bound (≈1 FLOP/B
    # against the A100's effective ridge 312e12 × 0.5 / 2.039e12 = 76.5), so ours is exactly 0.
    s = engine.sensitivity(A100_70B, REQ_70B)
    assert s.elasticity("peak_flops", "tpot_ms") == 0.0
    assert s.binding("tpot_ms") == "memory_bandwidth"
    # the prefill is the other way round: TTFT moves with FLOP/s (−1.01 × compute share)
    assert s.elasticity("peak_flops", "ttft_ms") < -0.99


def test_09_the_50ms_synthesis_agrees_with_the_chapters_2_8_tb_s():
    # Chapter: "we need approximately 2.8 TB/s of memory bandwidth --- 1.4x what the A100
    # provides". 141.1e9 B / 0.05 s = 2.822 TB/s; ours 2.834 (KV read, 0.815 ms overhead).
    syn = engine.synthesis(A100_70B, REQ_70B)
    need = syn.required("memory_bandwidth")
    assert need / 1e12 == pytest.approx(2.834, abs=0.001)
    assert round(need / 2.039e12, 1) == 1.4
    # and the minimum memory: (141.107 GB + 0.377 GB KV) / 0.9 = 157.2 GB; FLOP/s: none at the
    # A100's bandwidth, 5.77 TFLOP/s with unbounded bandwidth
    assert syn.required("memory_capacity") / 1e9 == pytest.approx(157.2, abs=0.1)
    flops = next(r for r in syn.rows if r["parameter"] == "peak_flops")
    assert flops["required"] is None
    assert flops["required_others_unbounded"] / 1e12 == pytest.approx(5.77, abs=0.01)


def test_09_every_generation_is_bandwidth_bound():
    # Chapter §6: "If all three GPUs show memory_bandwidth as the binding constraint, it
    # confirms that the memory wall persists across generations."
    for hw, e_bw in (("A100", -0.998), ("H100", -0.991), ("H200", -0.983)):
        s = engine.sensitivity(dep("Llama-3.1-70B", hw), REQ_70B)
        assert s.binding("tpot_ms") == "memory_bandwidth"
        assert round(s.elasticity("memory_bandwidth", "tpot_ms"), 3) == e_bw


# --- 10 GPU vs. Wafer-Scale -----------------------------------------------------------------


def test_10_the_self_check_per_layer_injection_time():
    # Chapter: "If the WSE-3 injection bandwidth is 1.2 TB/s and GPT-3 weights are 350 GB
    # (fp16), what is the minimum per-layer injection time for a 96-layer model?"
    # 350e9 / 96 / 1.2e12 = 3.04 ms; ours counts 174.6e9 params (349.1 GB): 3.03 ms.
    r = engine.serve(dep("GPT-3-175B", "CS-3"), REQ_GPT3)
    assert r["weight_bytes_per_device"] / 1.2e12 * 1e3 == pytest.approx(3.031, abs=0.001)


def test_10_the_wall_moves_and_at_1_2_tb_s_the_gpu_is_faster_per_token():
    # Chapter: GPU "Limited by HBM bandwidth (~3.35 TB/s)", WSE-3 "Limited by MemoryX injection
    # bandwidth (~1.2 TB/s)". 349.1 GB / 3.35 TB/s = 104 ms (+KV 10 GB/3.35 TB/s, overhead) =
    # 108.2 ms on an H100 that could hold it; 349.1 GB / 1.2 TB/s + 0.97 ms = 291.9 ms.
    gpu = engine.serve(dep("GPT-3-175B", "H100"), REQ_GPT3)
    wafer = engine.serve(dep("GPT-3-175B", "CS-3"), REQ_GPT3)
    assert gpu["tpot_ms"] == pytest.approx(108.2, abs=0.1) and not gpu["fits_in_memory"]
    assert wafer["tpot_ms"] == pytest.approx(291.9, abs=0.1) and wafer["fits_in_memory"]
    s = engine.sensitivity(dep("GPT-3-175B", "CS-3"), REQ_GPT3)
    assert s.binding("tpot_ms") == "weight_stream_bandwidth"


def test_10_the_sram_fills_long_before_b_star():
    # Chapter: "At the optimal batch size B*, the two pipelines overlap perfectly ... Beyond
    # B*, SRAM fills up". GPT-3's KV: 2 × 96 × 96 × 128 × 2 B = 4,718,592 B per token, 10.27 GB
    # per sequence of 2,176 tokens; (39.6 − 3.64) GB / 10.27 GB = 3.5: 3 sequences fit, while
    # B* = 62.5e15 × 0.5 / 1.2e12 ≈ 26,000 (the engine: 26,417).
    d = dep("GPT-3-175B", "CS-3")
    assert engine.serve(d, REQ_GPT3)["max_batch_size"] == 3
    assert engine.decode_crossover_batch(d, REQ_GPT3) == 26_417


# --- the pages ------------------------------------------------------------------------------


def learn(query: dict[str, str]) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    at.switch_page("pages/learn.py")
    at.query_params.update(query)
    return at.run()


def shown(at: AppTest) -> str:
    return "\n".join([m.value for m in at.markdown] + [c.value for c in at.caption])


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_lesson_9_shows_the_chapters_figure_beside_ours_with_the_reason(lang):
    at = learn({"lesson": "9", **({"lang": lang} if lang != "en" else {})})
    assert not at.exception and not at.warning
    cat = i18n.catalogue(lang)
    text = shown(at)
    p = LESSONS["9"].published[0]
    ours = cat.gettext("Tutorial: {tutorial}  \nOurs: **{ours}**")
    assert ours.format(tutorial=cat.gettext(p.tutorial), ours="-0.998") in text
    assert cat.gettext(p.why).split("{")[0] in text
    tornado = at.get("plotly_chart")[0]
    assert "Memory bandwidth" in tornado.proto.spec or lang == "zh"


def test_lesson_10_at_the_datasheets_0_15_tb_s_is_8_times_slower():
    at = learn({"lesson": "10", "stream_tbps": "0.15"})
    assert not at.exception and not at.warning
    table = at.dataframe[0].value
    cs3 = table[table["Accelerator"] == "Cerebras CS-3 (WSE-3)"].iloc[0]
    # 349.137e9 / 0.15e12 = 2.328 s, + 0.97 ms
    assert cs3["TPOT"] == "2.33 s"


def test_lesson_links_open_the_decode_page_with_the_scenario():
    at = learn({"lesson": "9", "target_ms": "30"})
    link = next(p for p in at.main.get("page_link"))
    assert "target_tpot_ms=30" in link.proto.query_string
    assert "model=Llama-3.1-70B" in link.proto.query_string
