"""Lesson 6's communication split: who the exposed communication belongs to, at 8 GPUs
(tensor parallelism alone) and at 1,024 (tensor and data parallelism), from engine.train."""

import pytest

import engine
from ui.learn.training import _split_values, comm_split


@pytest.fixture(scope="module")
def cat():
    return engine.load_catalog(use_env=False)


def test_at_8_gpus_all_exposed_communication_is_tensor_parallel(cat):
    r = comm_split(cat, 8)
    assert r["dp"] == 1 and r["comm_dp_s"] == 0.0
    assert r["comm_tp_s"] == pytest.approx(r["comm_exposed_s"])
    # By hand: 4 collectives (all-gather + reduce-scatter, attention and MLP) of 7/8 of a
    # micro-batch's activations, 2,048 × 8,192 × 2 B = 33.5 MB, per layer and pass: 80 layers,
    # 2 passes, 64 micro-batches = 1.20 TB at 450 GB/s × link efficiency; each of the 40,960
    # collectives a ring of 7 hops of 0.6 µs (NVLink's latency in the catalogue).
    eff = engine.get_training_profile("megatron").assumptions.link_efficiency
    volume = 4 * 7 / 8 * 2048 * 8192 * 2 * 80 * 2 * 64
    latency = 4 * 80 * 2 * 64 * 7 * 0.6e-6
    assert r["comm_tp_s"] == pytest.approx(volume / (450e9 * eff) + latency, rel=1e-3)
    sheet = comm_split(cat, 8, {"link_efficiency": 1.0})
    assert sheet["tp_share"] < 0.23 < r["tp_share"]  # the hand count's ~a fifth vs the fit


def test_at_1024_gpus_the_exposed_communication_splits_into_tp_and_dp(cat):
    r = comm_split(cat, 1024)
    assert r["comm_tp_s"] + r["comm_dp_s"] == pytest.approx(r["comm_exposed_s"])
    assert 0.3 < r["comm_dp_s"] / r["comm_exposed_s"] < 0.6  # DP is a large part, not nil
    words = _split_values(cat)
    assert words["dp_1024"] != words["tp_1024"]
