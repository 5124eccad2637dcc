"""The engine figures the lessons needed beyond the existing views: the input pipeline beside the
accelerator (tutorial 04, `pipeline_sweep`) and failures and checkpoints on a cluster (tutorial
06, `reliability`, `scaling_overheads`), each against the tutorial's text and by hand."""

import math

import pytest

import engine


def test_transform_time_is_batch_times_sample_over_cpu_rate():
    # Tutorial 04: "A typical CPU worker processes ImageNet images at ~250 MB/s. With 8
    # workers, total CPU throughput is ~2 GB/s"; samples are "~500 KB each".
    # Batch 256: 256 · 500e3 B / 2e9 B/s = 64 ms.
    rows = engine.pipeline_sweep("ResNet-50", "A100", [256])
    row = rows.iloc[0]
    assert row["transform_ms"] == pytest.approx(64.0)
    solve = engine.solve("ResNet-50", "A100", 256)
    assert row["accelerator_step_ms"] == pytest.approx(solve.latency_s * 1e3)
    # 7.243 ms of GPU step against 64 ms of CPU work: the GPU is busy 11.3 % of the time.
    assert row["binding"] == "transform"
    assert row["accelerator_utilization"] == pytest.approx(solve.latency_s * 1e3 / 64.0)
    assert row["samples_per_s"] == pytest.approx(256 / 0.064)


def test_the_cpu_binds_from_the_bottom_of_the_tutorials_sweep():
    # Tutorial 04: "The crossover sits at the very bottom of the sweep." Batch 2: GPU 0.555 ms
    # vs CPU 0.5 ms (GPU-bound); batch 4: GPU 0.620 ms vs CPU 1.0 ms (CPU-bound).
    batches = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024]
    rows = engine.pipeline_sweep("ResNet-50", "A100", batches)
    assert rows["batch_size"].tolist() == batches
    assert engine.first_transform_bound(rows) == 4
    assert rows["binding"].tolist()[:3] == ["memory", "compute", "transform"]
    # GPU utilisation levels off at per-sample GPU time / per-sample CPU time (not to zero).
    util = rows["accelerator_utilization"].to_numpy()
    assert util[-1] == pytest.approx(util[-2], rel=0.02) and util[-1] > 0.1


def test_a_faster_cpu_moves_the_binding_back_to_the_accelerator():
    # Tutorial 04, exercise 3: DALI as 50 GB/s of preprocessing.
    rows = engine.pipeline_sweep("ResNet-50", "A100", [512], cpu_bytes_per_s=50e9)
    assert rows["binding"].iloc[0] == "compute"
    assert rows["accelerator_utilization"].iloc[0] == 1.0
    assert engine.first_transform_bound(rows) is None


def test_pipeline_refuses_bad_rates():
    with pytest.raises(ValueError, match="sample_bytes"):
        engine.pipeline_sweep("ResNet-50", "A100", [1], sample_bytes=0)
    with pytest.raises(ValueError):
        engine.pipeline_sweep("ResNet-50", "A100", [0])


def test_cluster_mtbf_and_the_young_daly_interval():
    # Tutorial 06: "If a single GPU has a Mean Time To Failure (MTTF) of 50,000 hours, a
    # cluster of N GPUs has a collective MTBF of approximately MTTF / N. At 512 GPUs, that is
    # ~97 hours." 50,000 / 512 = 97.66 h. T_opt = sqrt(2 · δ · M) with δ = 60 s:
    # sqrt(2 · (60/3600) h · 97.66 h) = 1.80 h ("drops to about 1-2 hours").
    r = engine.reliability(512)
    assert r.mtbf_hours == pytest.approx(97.66, abs=0.01)
    assert r.checkpoint_interval_hours == pytest.approx(1.804, abs=0.001)
    assert 1 <= r.checkpoint_interval_hours <= 2
    # 30 days = 720 h: 720 / 97.66 = 7.37 failures; writes 720 / 1.804 · 60 s = 6.65 h, and
    # rollbacks 7.37 · 1.804 / 2 = 6.65 h (at the optimum the two are equal).
    assert r.expected_failures == pytest.approx(7.3728)
    assert r.checkpoint_write_hours == pytest.approx(r.rollback_hours)
    assert r.checkpoint_loss_hours == pytest.approx(13.30, abs=0.01)
    # "1024 GPUs means failures every ~20-50 hours": 50,000 / 1024 = 48.8 h.
    assert 20 <= engine.reliability(1024).mtbf_hours <= 50


def test_young_daly_is_the_minimum_of_the_loss():
    best = engine.reliability(512)
    for factor in (0.5, 0.8, 1.25, 2.0):
        other = engine.reliability(512, interval_hours=best.checkpoint_interval_hours * factor)
        assert other.checkpoint_loss_hours > best.checkpoint_loss_hours


def test_reliability_refuses_bad_inputs():
    with pytest.raises(ValueError, match="gpus"):
        engine.reliability(0)
    with pytest.raises(ValueError, match="checkpoint_s"):
        engine.reliability(8, checkpoint_s=-1)


def test_scaling_overheads_sets_communication_beside_checkpoints():
    rows = engine.scaling_overheads("Llama-3.1-70B", "H100", [64, 1024], zero=1)
    assert rows["gpus"].tolist() == [64, 1024] and rows["dp"].tolist() == [8, 128]
    assert rows["global_batch_size"].tolist() == [64, 1024]  # the tutorial's max(64, N)
    for row in rows.itertuples():
        t = engine.train(
            "Llama-3.1-70B",
            "H100",
            gpus=row.gpus,
            tp=8,
            global_batch_size=row.gpus if row.gpus > 64 else 64,
            seq_len=2048,
            zero=1,
        ).as_dict()
        share = (t["comm_exposed_s"] + t["bubble_s"]) / t["step_time_s"]
        assert row.comm_fraction == pytest.approx(share)
        assert row.comm_loss_hours == pytest.approx(share * 720)
        rel = engine.reliability(row.gpus)
        assert row.checkpoint_loss_hours == pytest.approx(rel.checkpoint_loss_hours)
        assert row.ckpt_to_comm_ratio == pytest.approx(rel.checkpoint_loss_hours / (share * 720))
    assert math.isfinite(rows["ckpt_to_comm_ratio"].max())
