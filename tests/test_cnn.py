"""CNN layer tables from the architecture: totals against the catalogue, shapes, per-layer roofs."""

import pytest

import engine
from engine.catalog.cnn import NETWORKS, mobilenet_v2, network_layers, resnet50

# torchvision's published totals (pytorch.org/vision/stable/models: ResNet50_Weights.IMAGENET1K_V1
# 25,557,032 params, 4.09 GFLOPS; MobileNet_V2_Weights.IMAGENET1K_V1 3,504,872 params,
# 0.30 GFLOPS; torchvision's "GFLOPS" there are multiply-accumulates).
TORCHVISION = {"ResNet-50": (25_557_032, 4.09e9), "MobileNetV2": (3_504_872, 0.30e9)}


@pytest.mark.parametrize("model_id", list(NETWORKS))
def test_totals_match_the_catalogue_within_2_percent(model_id):
    spec = engine.default_catalog().find_model(model_id)
    layers = network_layers(model_id)
    assert sum(x.params for x in layers) == pytest.approx(spec.params, rel=0.02)
    # catalogued as 1 FLOP per MAC: the catalogue's FLOPs are the MAC count
    assert spec.flop_convention == "mac1"
    assert sum(x.macs for x in layers) == pytest.approx(spec.flops_per_sample, rel=0.02)


@pytest.mark.parametrize("model_id", list(NETWORKS))
def test_totals_match_torchvision(model_id):
    params, macs = TORCHVISION[model_id]
    layers = network_layers(model_id)
    assert sum(x.params for x in layers) == params  # exact: BN scale+shift, fc bias included
    assert sum(x.macs for x in layers) == pytest.approx(macs, rel=0.01)


def test_resnet50_stem_and_head_by_hand():
    layers = resnet50()
    stem, fc = layers[0], layers[-1]
    # 7·7·3·64 = 9,408 weights; 112² = 12,544 outputs -> 118,013,952 MACs
    assert stem.weights == 9_408 and stem.macs == 118_013_952 and stem.in_side == 224
    assert fc.params == 2048 * 1000 + 1000 and fc.macs == 2_048_000
    # 16 bottlenecks of 3 convs + 4 projection shortcuts + stem + fc = 54 layers
    assert len(layers) == 54
    assert [x.out_side for x in layers if x.name.endswith("downsample")] == [56, 28, 14, 7]


def test_mobilenet_v2_depthwise_by_hand():
    layers = mobilenet_v2()
    dw = next(x for x in layers if x.kind == "depthwise")
    # first block: 3·3 depthwise over 32 channels at 112² -> 288 weights, 3,612,672 MACs
    assert (dw.in_channels, dw.groups, dw.weights, dw.macs) == (32, 32, 288, 288 * 112**2)
    assert layers[-2].out_channels == 1280 and layers[-2].out_side == 7


def test_unknown_network_is_refused_with_choices():
    with pytest.raises(ValueError, match="available: ResNet-50, MobileNetV2"):
        network_layers("BERT-Base")


def test_layer_table_stem_roofline_by_hand():
    df = engine.layer_table("ResNet-50", "A100", batch_size=1, precision="fp16")
    stem = df.iloc[0]
    # params 9,408 + 128 (BN) = 9,536 × 2 B = 19,072 B of weights;
    # activations (3·224² + 64·112²) × 2 B = (150,528 + 802,816) × 2 = 1,906,688 B
    assert stem["bytes"] == pytest.approx(19_072 + 1_906_688)
    # 118,013,952 MACs as catalogued (1 FLOP per MAC) / (312e12 · 0.5) = 0.7565 µs
    assert stem["t_compute_ms"] == pytest.approx(118_013_952 / 156e12 * 1e3)
    # 1,925,760 B / 2.039e12 B/s = 0.9445 µs > 0.7565 µs: memory-bound
    assert stem["t_memory_ms"] == pytest.approx(1_925_760 / 2.039e12 * 1e3)
    assert stem["bottleneck"] == "memory"


def test_layer_table_flops_follow_the_convention_and_batch():
    one = engine.layer_table("MobileNetV2", "H100", batch_size=1)
    mac2 = engine.layer_table("MobileNetV2", "H100", batch_size=8, flop_convention="mac2")
    assert mac2["flops"].sum() == pytest.approx(one["flops"].sum() * 2 * 8)
    # weights do not grow with the batch, activations do
    assert mac2["weight_bytes"].sum() == pytest.approx(one["weight_bytes"].sum())
    assert mac2["activation_bytes"].sum() == pytest.approx(8 * one["activation_bytes"].sum())


def test_layer_totals_of_resnet50_by_hand():
    # 54 layers at batch 1, fp16: weights 25,557,032 params × 2 B = 51.1 MB, plus each layer's
    # activations in and out; the tutorial's whole-model figure moves 51.2 MB × 1.1 = 56.3 MB
    df = engine.layer_table("ResNet-50", "A100", batch_size=1, precision="fp16")
    t = engine.layer_totals(df)
    assert t["weight_bytes"] == 25_557_032 * 2 == df["params"].sum() * 2
    assert t["bytes"] == pytest.approx(t["weight_bytes"] + t["activation_bytes"])
    assert t["bytes"] == pytest.approx(94.67e6, rel=1e-3)  # more than the tutorial's 56.3 MB
    assert t["arithmetic_intensity_flop_per_byte"] == pytest.approx(t["flops"] / t["bytes"])
    assert t["arithmetic_intensity_flop_per_byte"] == pytest.approx(43.19, rel=1e-3)
    assert t["time_s"] == pytest.approx(df["time_ms"].sum() * 1e-3)
    assert t["time_s"] == pytest.approx(48.98e-6, rel=1e-3)  # the layers' rooflines, summed
