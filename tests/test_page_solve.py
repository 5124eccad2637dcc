"""AppTest of the overview and the single-solve page: defaults, widgets, share links, warnings."""

import io
import json
from pathlib import Path

import pandas as pd
import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

import engine
from tests.conftest import chart_spec
from ui.core.frame import share_key
from ui.solve.breakdown import DETAILS_KEY
from ui.words.format import fmt

ROOT = Path(__file__).resolve().parent.parent


OPENED = (DETAILS_KEY, "solve:table.open")  # the expanders drawn only while open


def solve_page(query: dict[str, str] | None = None, opened: bool = False) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.switch_page("pages/solve.py")
    at.query_params.update(query or {})
    for key in OPENED if opened else ():
        at.session_state[key] = True  # the user opened them
    return at.run()


def param(at: AppTest, key: str) -> str:
    """The URL's value for `key` after the run (AppTest keeps lists for what the page wrote)."""
    value = at.query_params[key]
    return value[-1] if isinstance(value, list) else value


def metrics(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def test_overview_runs_and_links_every_page():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60).run()
    assert not at.exception
    assert "Roofline Explorer" in at.title[0].value


def test_default_is_the_reference_case():
    at = solve_page()
    assert not at.exception
    m = metrics(at)
    assert m["Bottleneck"] == "memory" and m["Latency"] == "543 µs"  # 0.5426 ms, 3 figures
    assert m["MFU (% of peak)"] == "2.42%"
    assert m["Achieved / roof (TFLOP/s)"] == "7.56 / 148" and m["Energy per batch"] == "68.8 mJ"
    assert m["Arithmetic intensity (FLOP/byte)"] == "72.8"
    assert not at.warning


def test_query_string_sets_the_widgets_and_the_numbers():
    at = solve_page(
        {
            "model": "llama-3.1-8b",
            "hardware": "h100",
            "batch": "16",
            "precision": "fp8",
            "efficiency": "0.7",
            "flop_convention": "mac2",
        }
    )
    assert not at.exception and not at.warning
    assert at.selectbox(key="solve:model").value == "Llama-3.1-8B"
    assert at.selectbox(key="solve:hardware").value == "H100"
    assert at.number_input(key="solve:batch").value == 16
    assert at.number_input(key="solve:efficiency").value == pytest.approx(0.7)
    expected = engine.solve(
        model="Llama-3.1-8B",
        hardware="H100",
        batch_size=16,
        precision="fp8",
        efficiency=0.7,
        flop_convention="mac2",
    )
    assert metrics(at)["Latency"] == fmt(expected.latency_s, "s")
    assert param(at, "model") == "Llama-3.1-8B" and param(at, "batch") == "16"


def test_changing_widgets_changes_the_result_and_the_url():
    at = solve_page()
    at.number_input(key="solve:batch").set_value(64).run()
    expected = engine.solve("ResNet-50", "A100", 64)
    assert metrics(at)["Bottleneck"] == expected.bottleneck == "compute"
    assert param(at, "batch") == "64"
    at.radio(key="solve:flop_convention").set_value("mac2").run()
    assert param(at, "flop_convention") == "mac2"
    doubled = engine.solve("ResNet-50", "A100", 64, flop_convention="mac2")
    assert metrics(at)["Latency"] == fmt(doubled.latency_s, "s")


def test_dispatch_override_is_applied_and_recorded():
    at = solve_page({"dispatch_overhead_ms": "0"})
    expected = engine.solve("ResNet-50", "A100", 1, dispatch_overhead_ms=0)
    assert metrics(at)["Latency"] == fmt(expected.latency_s, "s")
    assert param(at, "dispatch_overhead_ms") == "0"


@pytest.mark.parametrize(
    "query, fragment",
    [
        ({"batch": "abc"}, "batch"),
        ({"model": "NoSuchNet"}, "unknown model"),
        ({"hardware": "<script>alert(1)</script>"}, "hardware"),
        ({"efficiency": "nan"}, "efficiency"),
        ({"efficiency": "7"}, "efficiency"),
        ({"precision": "fp12"}, "precision"),
        ({"frobnicate": "1"}, "frobnicate"),
    ],
)
def test_invalid_query_warns_and_falls_back(query, fragment):
    at = solve_page(query)
    assert not at.exception
    text = " ".join(w.value for w in at.warning)
    assert fragment in text
    assert metrics(at)["Latency"] == "543 µs"  # the rest of the page uses the defaults


def test_precision_fallback_is_a_visible_warning():
    at = solve_page({"hardware": "A100", "precision": "fp8"})
    assert any("no fp8 peak" in w.value for w in at.warning)


def test_custom_accelerator_from_the_link_is_usable():
    at = solve_page(
        {
            "hardware": "Custom-HW",
            "custom_hw": "name=Lab chip;fp16=100 TFLOP/s;fp32=20 TFLOP/s;"
            "bandwidth=1 TB/s;capacity=16 GiB;dispatch=0.01 ms;tdp=100 W",
        }
    )
    assert not at.exception and not at.warning
    assert at.selectbox(key="solve:hardware").value == "Custom-HW"
    assert "Lab chip" in at.title[0].value
    assert param(at, "hardware") == "Custom-HW"


def test_bad_custom_accelerator_is_refused_with_the_field_named():
    at = solve_page(
        {
            "custom_hw": "name=X;fp16=100 TFLOP/s;fp32=1 TFLOP/s;bandwidth=3.35 TB/z;"
            "capacity=1 GiB;dispatch=0 ms;tdp=1 W"
        }
    )
    assert not at.exception
    text = " ".join(w.value for w in at.warning).replace("\\", "")
    assert "custom_hw" in text and "memory_bandwidth" in text and "did you mean" in text


def test_chart_is_a_log_log_roofline_with_the_gap():
    at = solve_page()
    specs = [chart_spec(c) for c in at.get("plotly_chart")]
    roof = next(s for s in specs if s["layout"]["title"]["text"].startswith("Roofline"))
    names = [t["name"] for t in roof["data"]]
    assert "Fixed-overhead gap" in names and "Achieved (with overhead)" in names
    assert roof["layout"]["xaxis"]["type"] == "log"


def headline(at: AppTest) -> str:
    return at.subheader[0].value


def test_headline_shows_the_regime_with_the_roofline_bound_beside_it():
    # ResNet-50 / A100 / batch 1: overhead 0.015 ms + 50 × 10 µs = 0.515 ms of 0.543 ms (94.9 %)
    # -> overhead-bound, while the roofline's bound is memory (regime "overhead", bottleneck
    # "memory" in engine.solve)
    at = solve_page()
    r = engine.solve("ResNet-50", "A100", 1)
    assert (r.regime, r.bottleneck) == ("overhead", "memory")
    assert headline(at) == "Overhead-bound · roofline bound: memory"
    assert not at.error
    at.number_input(key="solve:batch").set_value(256).run()
    assert headline(at).startswith("Compute-bound") and "roofline bound: compute" in headline(at)


def test_explanation_uses_the_engines_exact_crossover():
    at = solve_page()
    cross = engine.compute_bound_batch("ResNet-50", "A100")  # 2: the engine's exact batch
    text = " ".join(m.value for m in at.markdown)
    assert f"Batch ≥ {cross:,} crosses the effective ridge" in text and cross == 2


def test_a_model_that_does_not_fit_says_so_first_and_marks_the_figures_hypothetical():
    # Llama-3.1-70B at fp16: 70.6e9 params × 2 bytes = 141 GB of weights > H100's 80 GB
    at = solve_page({"model": "Llama-3.1-70B", "hardware": "H100", "precision": "fp16"})
    assert not at.exception
    r = engine.solve(model="Llama-3.1-70B", hardware="H100", batch_size=1, precision="fp16")
    assert not r.fits_in_memory and r.weight_bytes > 140e9
    assert "Does not fit" in at.error[0].value and "hypothetical" in at.error[0].value
    assert headline(at).startswith("Hypothetical: ")
    order = [type(e).__name__ for e in walk(at.main)]
    assert order.index("Error") < order.index("Subheader") < order.index("Metric")


def walk(node) -> list:
    """The elements under `node` in page order."""
    children = getattr(node, "children", None)
    if not children:
        return [node]
    return [e for key in sorted(children) for e in walk(children[key])]


def test_llm_solve_shows_the_serving_models_figure_beside_the_tutorials_with_a_link():
    query = {"model": "Llama-3.1-8B", "hardware": "A100", "batch": "64", "profile": "trtllm"}
    at = solve_page(query | {"input_tokens": "2048", "output_tokens": "128", "efficiency": "0.6"})
    # the page's whole-model figure: the trtllm profile's layer overhead, the edited η
    tutorial = engine.solve("Llama-3.1-8B", "A100", 64, efficiency=0.6, layer_overhead_us=0.0)
    r = engine.serve(
        "Llama-3.1-8B",
        "A100",
        batch_size=64,
        input_tokens=2048,
        output_tokens=128,
        profile="trtllm",
        efficiency=0.6,
    )
    note = next(i.value for i in at.info if "serving model gives" in i.value)
    assert f"{fmt(r['tpot_ms'] / 1e3, 's')} per output token (TPOT)" in note
    assert f"{fmt(r['decode_tokens_per_s'], 'tokens/s')} while decoding" in note
    assert f"TTFT of {fmt(r['ttft_ms'] / 1e3, 's')}" in note
    assert "the tutorial's first-order whole-model view" in note
    # the serving page at the same scenario: the request, the profile and the edit
    to = "./decode?model=Llama-3.1-8B&hardware=A100&batch=64&precision=fp16&input_tokens=2048"
    assert to + "&output_tokens=128&profile=trtllm&efficiency=0.6)" in note
    assert metrics(at)["Latency"] == fmt(tutorial.latency_s, "s")  # kept
    assert r["tpot_ms"] / 1e3 < tutorial.latency_s  # the vision rule moves more bytes per sample


def test_efficiency_below_the_widgets_minimum_is_refused_in_the_link():
    at = solve_page({"efficiency": "0.005"})  # the widget's minimum is 0.01
    assert not at.exception
    assert any("efficiency" in w.value for w in at.warning)
    assert at.number_input(key="solve:efficiency").value == pytest.approx(0.5)


def test_a_chip_name_in_an_engine_warning_is_inert_text():
    chip = "name=[x](http://e.example) www.e.example;fp16=100 TFLOP/s;fp32=20 TFLOP/s;"
    chip += "bandwidth=1 TB/s;capacity=16 GiB;dispatch=0.01 ms;tdp=100 W"
    at = solve_page({"hardware": "Custom-HW", "custom_hw": chip, "precision": "fp8"})
    warning = next(w.value for w in at.warning if "fp8" in w.value)
    # markdown syntax backslashed; a word joiner (U+2060) breaks the bare-URL autolinks
    assert "\\[x\\]\\(http\u2060://e.example\\) www\u2060.e.example" in warning
    assert "[x](http" not in warning


def test_llm_solve_keeps_the_tutorials_published_figure():
    # the tutorial's whole-model view of Llama-3.1-8B on A100 at batch 1, fp16:
    # 16.06 GB × (1 + 0.1) ÷ 2.039 TB/s = 8.664 ms memory + 32 × 10 µs layers + dispatch
    # = 9.0 ms, i.e. 111 tokens/s (the tutorial's published 9.0 ms / 111 tok/s)
    at = solve_page({"model": "Llama-3.1-8B", "hardware": "A100", "batch": "1"})
    r = engine.solve("Llama-3.1-8B", "A100", 1)
    assert r.latency_s == pytest.approx(9.0e-3, abs=0.05e-3)
    assert r.throughput_per_s == pytest.approx(111, abs=0.5)
    assert metrics(at)["Latency"] == fmt(r.latency_s, "s") == "9 ms"
    note = next(i.value for i in at.info if "serving model gives" in i.value)  # and its figure
    # under the page's profile, the tutorial's (Solve's default; the serving default is trtllm-1.0)
    r = engine.serve(
        "Llama-3.1-8B",
        "A100",
        batch_size=1,
        input_tokens=1024,
        output_tokens=256,
        profile="tutorial",
    )
    assert r["tpot_ms"] == pytest.approx(7.77, abs=0.005)  # per operator, not the 9.0 ms
    assert "7.77 ms per output token" in note


# --- the profile picker, the layer table and the operator view -----------------------------
def caption_text(at: AppTest) -> str:
    return "\n".join(c.value for c in at.caption)


def chart(at: AppTest, key: str) -> dict:
    """A chart's figure by its element key (the roofline, layer or operator chart)."""
    for element in at.get("plotly_chart"):
        if element.proto.id.endswith(key) or key in element.proto.id:
            return json.loads(element.proto.spec)
    raise AssertionError(f"no chart {key}")


def test_default_profile_is_tutorial_and_keeps_the_published_figures():
    at = solve_page()
    m = metrics(at)
    # ResNet-50 on A100, batch 1, fp16: the tutorial's 0.5426 ms and 1,843 images/s
    assert m["Latency"] == "543 µs" and m["Throughput (images/s)"] == "1,843"
    assert at.selectbox(key="solve:profile").value == "tutorial"
    assert "Profile tutorial: its assumptions, unedited." in caption_text(at)
    assert param(at, "profile") == "tutorial"


def test_choosing_a_profile_seeds_the_assumptions_and_an_edit_is_said():
    at = solve_page()
    at.selectbox(key="solve:profile").set_value("trtllm").run()
    # data/profiles/trtllm-1.0.toml (trtllm): efficiency 0.866565, 0.00206525 µs per layer
    assert at.number_input(key="solve:efficiency").value == pytest.approx(0.866565)
    assert at.number_input(key="solve:layer_overhead_us").value == pytest.approx(0.00206525)
    trt = engine.solve("ResNet-50", "A100", 1, efficiency=0.866565, layer_overhead_us=0.00206525)
    assert metrics(at)["Latency"] == fmt(trt.latency_s, "s")
    assert "Profile trtllm: its assumptions, unedited." in caption_text(at)
    at.number_input(key="solve:efficiency").set_value(0.45).run()
    assert "Profile trtllm, edited: efficiency 0.45 (profile: 0.867)." in caption_text(at)
    # the link records both: the profile's name and the value on screen
    assert param(at, "profile") == "trtllm" and param(at, "efficiency") == "0.45"


def test_a_profile_link_seeds_the_widgets_it_leaves_out():
    at = solve_page({"profile": "trtllm", "layer_overhead_us": "50"})
    assert at.number_input(key="solve:efficiency").value == pytest.approx(0.866565)
    assert at.number_input(key="solve:layer_overhead_us").value == pytest.approx(50)
    assert "Profile trtllm, edited: layer_overhead_us 50 (profile: " in caption_text(at)


def test_a_custom_profile_travels_in_the_link_as_its_values():
    at = solve_page({"profile": "team", "efficiency": "0.4", "bandwidth_efficiency": "0.8"})
    assert at.selectbox(key="solve:profile").value == "team"
    assert at.number_input(key="solve:efficiency").value == pytest.approx(0.4)
    assert "Profile team (custom, from the link): its assumptions, unedited." in caption_text(at)
    assert param(at, "bandwidth_efficiency") == "0.8" and param(at, "profile") == "team"
    assert not at.warning


@pytest.mark.parametrize(
    ("query", "fragment"),
    [({"profile": "nope"}, "unknown profile"), ({"profile": "team", "efficiency": "7"}, "custom")],
)
def test_a_bad_profile_in_the_link_warns_and_uses_tutorial(query, fragment):
    at = solve_page(query)
    assert not at.exception
    assert any(fragment in w.value for w in at.warning)
    assert at.selectbox(key="solve:profile").value == "tutorial"


def test_resnet50_shows_its_layer_table_with_the_catalogued_totals():
    at = solve_page(opened=True)
    layers = next(d.value for d in at.dataframe if "Layer" in d.value.columns)
    assert len(layers) == 54 and layers["Layer"].iloc[0] == "conv1"
    assert (
        layers["Shape (kernel, channels in→out, stride, output side)"]
        .iloc[0]
        .startswith("7×7, 3→64, stride 2")
    )
    # 4,089,184,256 MACs vs the catalogued 4.1e9 (-0.264 %), 25,557,032 vs 25.6e6 (-0.168 %)
    text = caption_text(at)
    assert "54 layers generated from ResNet-50's architecture: 4.09 billion MACs" in text
    assert "-0.264%" in text and "-0.168%" in text
    fig = chart(at, "solve_layers_roofline")
    points = next(t for t in fig["data"] if t["name"].startswith("Layers"))
    assert len(points["hovertext"]) == 54


def test_mobilenet_layer_table_and_no_operator_view():
    at = solve_page({"model": "MobileNetV2"}, opened=True)
    layers = next(d.value for d in at.dataframe if "Layer" in d.value.columns)
    assert len(layers) == 53 and "depthwise" in set(layers["Kind"])
    assert "301 million MACs per sample (catalogue 300 million MACs, +0.258%)" in caption_text(at)
    assert "input_tokens" not in at.query_params


def test_llm_solve_shows_the_operator_view_beside_the_tutorial_point():
    at = solve_page({"model": "Llama-3.1-8B", "hardware": "A100"}, opened=True)
    assert metrics(at)["Latency"] == "9 ms"  # the tutorial's whole-model point, kept
    ops = next(d.value for d in at.dataframe if "Operator" in d.value.columns)
    expected = engine.operators("Llama-3.1-8B", "A100", phase="prefill", context=1024, batch_size=1)
    prefill = ops[ops["Phase"] == "prefill"]
    assert prefill["Operator"].tolist() == expected["name"].tolist()
    assert set(ops["Phase"]) == {"prefill", "decode"}
    fig = chart(at, "solve_ops_roofline")
    assert any(t["name"].startswith("Operators:") for t in fig["data"])
    assert param(at, "input_tokens") == "1024" and param(at, "output_tokens") == "256"
    at.number_input(key="solve:input_tokens").set_value(2048).run()
    assert param(at, "input_tokens") == "2048"
    assert "A prefill of 2,048 tokens per sequence" in caption_text(at)


def test_a_vision_model_without_an_architecture_has_neither_view():
    at = solve_page({"model": "ViT-B/16"}, opened=True)
    assert not any(
        "Layer" in d.value.columns or "Operator" in d.value.columns for d in at.dataframe
    )
    assert len(at.get("plotly_chart")) == 2


def test_the_layer_operator_and_solve_csvs_name_the_profile(monkeypatch):
    captured, original = {}, st.download_button

    def spy(label, data, **kwargs):
        captured[kwargs.get("key")] = data
        return original(label, data, **kwargs)

    monkeypatch.setattr(st, "download_button", spy)
    solve_page({"model": "Llama-3.1-8B", "profile": "trtllm", "efficiency": "0.6"}, opened=True)
    solve_page({"model": "MobileNetV2"}, opened=True)
    read = {k: pd.read_csv(io.StringIO(d() if callable(d) else d)) for k, d in captured.items()}
    ops = read["solve_ops_csv"]
    assert set(ops["profile"]) == {"trtllm, edited"} and set(ops["tp"]) == {1}
    assert list(ops["compute_efficiency_fraction"].unique()) == pytest.approx([0.6])
    # trtllm-1.0.toml's attention_efficiency 0.636858 travels with the profile
    assert list(ops["attention_efficiency_fraction"].unique()) == pytest.approx([0.636858])
    layers = read["solve_layers_csv"]
    assert len(layers) == 53 and set(layers["profile"]) == {"tutorial"}
    assert {"layer", "mac", "flop", "bytes_moved", "time_ms"} <= set(layers.columns)
    assert set(read["solve_csv"]["profile"]) == {"tutorial"}  # the last page opened


def test_the_first_render_holds_two_charts_and_no_table_until_a_section_is_opened():
    # a table or code block in the first render delays a fresh browser's
    # first chart; the layers, the results table and the share link wait for a click
    at = solve_page()
    assert [c.proto.id != "" for c in at.get("plotly_chart")] == [True, True]
    assert not at.dataframe and not at.code
    labels = [e.label for e in at.main.expander]
    assert labels[-3:] == [
        "Every figure and assumption (table)",
        "Layers (from the architecture)",
        "🔗 Share this scenario",
    ]
    at.session_state[DETAILS_KEY] = True  # what a click on the expander does, then its rerun
    at.run()
    assert len(at.get("plotly_chart")) == 3 and len(at.dataframe) == 1  # the layers: 54 rows
    assert len(at.dataframe[0].value) == 54 and not at.code
    at.session_state[share_key("solve")] = True
    at.run()
    assert at.code[0].value.startswith("/solve?") and "model=ResNet-50" in at.code[0].value


def test_the_energy_formula_on_screen_is_the_engines():
    # the help beside 'Energy per batch' is written in the reader's language from the engine's
    # idle share; in English it is engine.ENERGY_FORMULA itself
    from ui.solve.metrics import energy_formula

    assert energy_formula() == engine.ENERGY_FORMULA
