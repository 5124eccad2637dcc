"""The fleet's reliability from its parts (`engine.fleet_reliability`): hand arithmetic, the
defaults (the tutorial's GPU MTTF, the other parts not counted), and properties (hypothesis)."""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import engine


def test_by_default_only_the_gpu_counts_at_the_tutorials_mttf():
    # no per-part failure table ships: the GPU at tutorial 06's 50,000 h, the rest not counted
    assert [p.mttf_hours for p in engine.FLEET_PARTS] == [50_000.0] + [None] * 6
    r = engine.fleet_reliability(gpus=16_384)
    assert r.hosts == 2_048
    assert r.mtbf_hours == pytest.approx(50_000 / 16_384)  # 3.052 h
    assert r.expected_failures == pytest.approx(720 * 16_384 / 50_000)
    assert [p["share"] for p in r.parts] == [1.0] + [0.0] * 6
    with pytest.raises(ValueError, match="at least one part"):
        engine.FleetParts(gpu_mttf_hours=None)


def test_512_gpus_by_hand():
    # 512 GPUs in 64 hosts; the GPU alone counted: λ = 512 / 50,000 per hour, MTBF 97.66 h;
    # the hosts' switches at 20,000 h each add 64 / 20,000: λ = 0.01024 + 0.0032 = 0.01344
    r = engine.fleet_reliability(gpus=512)
    assert r.hosts == 64 and r.mtbf_hours == pytest.approx(97.656, abs=0.001)
    r = engine.fleet_reliability(gpus=512, switch_mttf_hours=20_000)
    assert r.mtbf_hours == pytest.approx(1 / 0.01344)
    assert r.mtbf_hours == pytest.approx(74.405, abs=0.001)
    # Young-Daly with δ = 60 s: T = sqrt(2 · (1/60 h) · 74.405 h) = 1.575 h.
    assert r.checkpoint_interval_hours == pytest.approx(math.sqrt(2 / 60 / 0.01344))
    assert r.checkpoint_interval_hours == pytest.approx(1.575, abs=0.001)
    # Over 720 h: 720 · 0.01344 = 9.677 failures; writes 720 / 1.575 · (1/60) = 7.619 h;
    # rollback 9.677 · 1.575 / 2 = 7.619 h (equal at the optimum); restarts 9.677 · 300 s
    # = 0.806 h.
    assert r.expected_failures == pytest.approx(9.677, abs=0.001)
    assert r.checkpoint_write_hours == pytest.approx(7.619, abs=0.001)
    assert r.rollback_hours == pytest.approx(r.checkpoint_write_hours)
    assert r.restart_hours == pytest.approx(720 * 0.01344 * 300 / 3600)
    lost = 2 * r.checkpoint_write_hours + r.restart_hours
    assert r.lost_hours == pytest.approx(lost) and r.lost_hours == pytest.approx(16.05, abs=0.01)
    assert r.goodput == pytest.approx(1 - lost / 720)
    assert r.failure_probability == pytest.approx(1 - math.exp(-720 * 0.01344))
    shares = {p["part"]: p["share"] for p in r.parts}
    assert shares["gpu"] == pytest.approx(0.01024 / 0.01344) and shares["hbm"] == 0.0


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
