"""The CNN layer table on screen, in the CSV and on the roofline (ui.solve.layers)."""

import pytest

import engine
from ui.solve import layers as lv

CAT = engine.default_catalog()
A100 = CAT.hardware["A100"]


@pytest.fixture(scope="module")
def resnet():
    return lv.layer_frame("ResNet-50", A100, batch_size=1, precision="fp16")


def test_display_has_units_and_the_stem_by_hand(resnet):
    shown = lv.display_table(resnet)
    assert list(shown.columns) == [header for header, _, _ in lv.DISPLAY.values()]
    stem = shown.iloc[0]
    # 7·7·3·64 = 9,408 weights + 128 BN = 9,536 parameters; 9,408 · 112² = 118,013,952 MACs
    assert stem["Parameters"] == "9,536"
    assert stem["Multiply-accumulates (batch)"] == "118 million MAC"
    # weights 9,536 × 2 B = 19,072 B; activations (3·224² + 64·112²) × 2 = 1,906,688 B
    assert stem["Weights"] == "19.1 kB" and stem["Activations in + out (batch)"] == "1.91 MB"
    assert stem["Shape (kernel, channels in→out, stride, output side)"].startswith("7×7, 3→64")
    # times carry their unit: 1,925,760 B / 2.039e12 B/s = 0.944 µs on A100's memory roof
    assert shown["Memory time"].iloc[0] == "944 ns"


def test_csv_keeps_snake_case_and_the_scenario(resnet):
    scenario = {"model": "ResNet-50", "hardware": "A100", "batch_size": 1, "profile": "trtllm"}
    csv = lv.csv_table(resnet, scenario)
    assert list(csv.columns[:4]) == list(scenario)
    assert {"layer", "mac", "flop", "bytes_moved", "time_ms", "t_memory_ms"} <= set(csv.columns)
    assert (csv["profile"] == "trtllm").all() and len(csv) == 54
    assert all(c == c.lower() and " " not in c for c in csv.columns)


@pytest.mark.parametrize(
    ("model_id", "macs", "params"), [("ResNet-50", 4.1e9, 25.6e6), ("MobileNetV2", 0.3e9, 3.5e6)]
)
def test_totals_match_the_catalogue_within_2_percent(model_id, macs, params):
    # the catalogued 4.1 G / 0.3 G MACs and 25.6 M / 3.5 M parameters (data/models.toml)
    layers = lv.layer_frame(model_id, A100, batch_size=8, precision="fp16")
    t = lv.totals(layers, CAT.models[model_id])
    assert t["catalogue_macs"] == macs and t["catalogue_params"] == params
    assert abs(t["macs_diff"]) < 0.02 and abs(t["params_diff"]) < 0.02
    assert t["macs_per_sample"] == pytest.approx(layers["macs"].sum() / 8)  # per sample
    text = lv.totals_text(t, model_id)
    assert "layers generated from" in text and "catalogue" in text


def test_resnet_totals_sentence(resnet):
    t = lv.totals(resnet, CAT.models["ResNet-50"])
    # 54 layers; 4,089,184,256 MACs vs 4.1e9 -> -0.264 %; 25,557,032 vs 25.6e6 -> -0.168 %
    assert lv.totals_text(t, "ResNet-50").startswith(
        "54 layers generated from ResNet-50's architecture: 4.09 billion MACs per sample "
        "(catalogue 4.1 billion MACs, -0.264%) and 25.6 million parameters (catalogue "
        "25.6 million, -0.168%)."
    )


def test_every_layer_is_a_point_on_the_roofline(resnet):
    r = engine.solve("ResNet-50", "A100", batch_size=1, precision="fp16")
    fig = lv.layer_roofline(
        layers=resnet, hw=A100, overhead_s=r.t_overhead_s, title="Layers: A100, fp16"
    )
    traces = fig.data
    layers = next(t for t in traces if t.name.startswith("Layers"))
    assert len(layers["x"]) == 54
    assert list(layers.x) == pytest.approx(resnet["arithmetic_intensity_flop_per_byte"].tolist())
    # y is achieved TFLOP/s: FLOPs / time; the stem: 118,013,952 FLOP / 0.944 µs ≈ 125 TFLOP/s
    achieved = resnet["flops"] / (resnet["time_ms"] * 1e-3) / 1e12
    assert list(layers.y) == pytest.approx(achieved.tolist())
    assert "conv1" in layers.hovertext[0] and "7×7, 3→64" in layers.hovertext[0]
    whole = next(t for t in traces if t.name == "Whole forward pass")
    # filled star at the layers' time + the solve's overhead (0.515 ms at batch 1)
    step_s = resnet["time_ms"].sum() * 1e-3 + r.t_overhead_s
    assert whole.y[1] == pytest.approx(resnet["flops"].sum() / step_s / 1e12)
    assert "overhead (layers · τ + dispatch)" in whole.hovertext[0]
    assert not any("TTFT" in str(t.name) or "prefill" in str(t.name) for t in traces)


def test_user_text_in_the_title_is_escaped(resnet):
    fig = lv.layer_roofline(layers=resnet, hw=A100, overhead_s=0.0, title="Layers: <b>x</b>")
    assert "<b>x</b>" not in fig.layout.title.text and "&lt;b&gt;" in fig.layout.title.text


def test_only_the_cnns_with_an_architecture_have_layers():
    assert lv.has_layers("ResNet-50") and lv.has_layers("MobileNetV2")
    assert not lv.has_layers("Llama-3.1-8B") and not lv.has_layers("BERT-Base")
