"""The fleet's reliability from its parts (`engine.fleet_reliability`): hand arithmetic, the
published interruption counts it is built from, and properties (hypothesis)."""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import engine


def test_the_parts_reproduce_llamas_419_interruptions_in_54_days():
    # Llama 3 (arXiv 2407.21783, section 3.3.4): 419 unexpected interruptions in a 54-day
    # snapshot on 16,384 H100 in 2,048 hosts: one every 1,296 h / 419 = 3.093 h.
    counts = {p.name: p.interruptions for p in engine.FLEET_PARTS}
    assert sum(counts.values()) == 419
    assert counts["gpu"] == 148 + 19 + 17 + 6 + 6  # faulty GPU, SRAM, processor, thermal, SDC
    assert counts["hbm"] == 72
    r = engine.fleet_reliability(gpus=16_384)
    assert r.hosts == 2_048
    assert r.mtbf_hours == pytest.approx(1296 / 419)
    assert r.expected_failures == pytest.approx(720 * 419 / 1296)


def test_512_gpus_by_hand():
    # 512 GPUs in 64 hosts. Per-GPU parts (GPU 196, HBM 72, NIC 7, software 63 = 338 of the
    # 16,384 GPUs' interruptions) and per-host parts (switch 35, host 43, PSU 3 = 81 of the
    # 2,048 hosts'): λ = 512·338/(16,384·1,296) + 64·81/(2,048·1,296) = 419 / 41,472 per hour,
    # MTBF = 98.98 h (the tutorial's GPU-only 50,000 h / 512 = 97.66 h).
    r = engine.fleet_reliability(gpus=512)
    assert r.hosts == 64
    assert r.mtbf_hours == pytest.approx(41_472 / 419)
    assert r.mtbf_hours == pytest.approx(98.98, abs=0.01)
    # Young-Daly with δ = 60 s: T = sqrt(2 · (1/60 h) · 98.98 h) = 1.816 h.
    assert r.checkpoint_interval_hours == pytest.approx(math.sqrt(2 / 60 * 41_472 / 419))
    assert r.checkpoint_interval_hours == pytest.approx(1.816, abs=0.001)
    # Over 720 h: 7.274 failures; writes 720 / 1.816 · (1/60) = 6.606 h; rollback 7.274 ·
    # 1.816 / 2 = 6.606 h (equal at the optimum); restarts 7.274 · 300 s = 0.606 h.
    assert r.expected_failures == pytest.approx(7.274, abs=0.001)
    assert r.checkpoint_write_hours == pytest.approx(6.606, abs=0.001)
    assert r.rollback_hours == pytest.approx(r.checkpoint_write_hours)
    assert r.restart_hours == pytest.approx(7.274 * 300 / 3600, abs=0.001)
    assert r.lost_hours == pytest.approx(13.819, abs=0.001)
    assert r.goodput == pytest.approx(1 - 13.819 / 720, abs=1e-5)
    assert r.failure_probability == pytest.approx(1 - math.exp(-720 / (41_472 / 419)))


def test_a_small_fleet_by_hand():
    # 16 GPUs (2 hosts): GPU MTTF 1,000 h, host 4,000 h, the others as good as never failing:
    # λ = 16/1,000 + 2/4,000 = 0.0165 per hour, MTBF 60.61 h.
    never = 1e15
    others = {f"{p}_mttf_hours": never for p in ("hbm", "nic", "software", "switch", "psu")}
    r = engine.fleet_reliability(
        gpus=16, gpu_mttf_hours=1000, host_mttf_hours=4000, restart_s=0, **others
    )
    assert r.mtbf_hours == pytest.approx(1 / 0.0165)
    shares = {p["part"]: p["share"] for p in r.parts}
    assert shares["gpu"] == pytest.approx(0.016 / 0.0165)
    assert shares["host"] == pytest.approx(0.0005 / 0.0165)
    assert r.restart_hours == 0


def test_gpus_only_is_the_tutorials_model():
    # Every other part never failing: the fleet model is tutorial 06's MTTF / N exactly.
    never = {f"{p.name}_mttf_hours": 1e18 for p in engine.FLEET_PARTS if p.name != "gpu"}
    fleet = engine.fleet_reliability(gpus=512, gpu_mttf_hours=50_000, restart_s=0, **never)
    tutorial = engine.reliability(512)
    assert fleet.mtbf_hours == pytest.approx(tutorial.mtbf_hours, rel=1e-9)
    assert fleet.checkpoint_interval_hours == pytest.approx(tutorial.checkpoint_interval_hours)
    assert fleet.lost_hours == pytest.approx(tutorial.checkpoint_loss_hours, rel=1e-9)


def test_a_fleet_object_and_keywords_agree():
    fleet = engine.FleetParts(gpus=1024, checkpoint_s=120)
    assert engine.fleet_reliability(fleet) == engine.fleet_reliability(gpus=1024, checkpoint_s=120)
    assert engine.fleet_reliability(fleet, gpus=64).gpus == 64


@pytest.mark.parametrize(
    "bad",
    [
        {"gpus": 0},
        {"gpus": 1.5},
        {"gpu_mttf_hours": 0},
        {"checkpoint_s": -1},
        {"restart_s": -1},
        {"interval_hours": 0},
        {"job_hours": float("nan")},
        {"nonsense": 1},
    ],
)
def test_bad_fleets_are_refused(bad):
    with pytest.raises((ValueError, TypeError)):
        engine.fleet_reliability(**bad)


@settings(max_examples=60, deadline=None)
@given(
    gpus=st.integers(1, 200_000),
    per_host=st.sampled_from([1, 4, 8, 16]),
    ckpt=st.floats(1, 3600),
    restart=st.floats(0, 3600),
)
def test_properties(gpus, per_host, ckpt, restart):
    fleet = engine.FleetParts(
        gpus=gpus, gpus_per_host=per_host, checkpoint_s=ckpt, restart_s=restart
    )
    r = engine.fleet_reliability(fleet)
    assert sum(p["share"] for p in r.parts) == pytest.approx(1)
    assert 0 <= r.goodput <= 1 and 0 <= r.failure_probability <= 1
    assert r.lost_hours == pytest.approx(
        r.checkpoint_write_hours + r.rollback_hours + r.restart_hours
    )
    bigger = engine.fleet_reliability(fleet, gpus=gpus * 2)
    assert bigger.mtbf_hours < r.mtbf_hours  # more parts fail more often
    # the Young-Daly interval loses the least to writes and rollbacks (first order)
    best = r.checkpoint_write_hours + r.rollback_hours
    for factor in (0.5, 0.9, 1.1, 2.0):
        other = engine.fleet_reliability(fleet, interval_hours=r.checkpoint_interval_hours * factor)
        assert other.checkpoint_write_hours + other.rollback_hours >= best * (1 - 1e-12)
