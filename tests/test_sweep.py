"""The vectorised sweep agrees with the scalar solve, and its helpers do what they say."""

import csv
import io
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import engine
from engine.roofline.sweep import MAX_SWEEP_ROWS

MODELS = ["ResNet-50", "Llama-3.1-8B", "MobileNetV2"]
HARDWARE = ["A100", "H100", "T4"]
BATCHES = [1, 2, 3, 8, 64, 1000]
PRECISIONS = ["fp16", "int8", "fp32"]
NUMERIC = [
    "latency_ms",
    "t_compute_ms",
    "t_memory_ms",
    "t_overhead_ms",
    "throughput_per_s",
    "flops",
    "bytes",
    "arithmetic_intensity_flop_per_byte",
    "ridge_flop_per_byte",
    "effective_ridge_flop_per_byte",
    "attainable_tflops",
    "achieved_tflops",
    "mfu",
    "energy_j",
    "weight_bytes",
    "overhead_share",
    "overhead_gap_tflops",
]


def test_sweep_equals_looped_solve_on_a_grid():
    df = engine.sweep(
        models=MODELS,
        hardware=HARDWARE,
        batch_sizes=BATCHES,
        precisions=PRECISIONS,
        efficiency=0.6,
        flop_convention="mac2",
    )
    assert len(df) == len(MODELS) * len(HARDWARE) * len(BATCHES) * len(PRECISIONS)
    for row in df.itertuples(index=False):
        expected = engine.solve(
            model=row.model,
            hardware=row.hardware,
            batch_size=row.batch_size,
            precision=row.precision,
            efficiency=0.6,
            flop_convention="mac2",
        ).as_dict()
        for col in NUMERIC:
            assert getattr(row, col) == pytest.approx(expected[col], rel=1e-12), col
        assert row.bottleneck == expected["bottleneck"]
        assert row.regime == expected["regime"]
        assert row.memory_bandwidth_bytes_per_s == expected["memory_bandwidth_bytes_per_s"]
        assert bool(row.fits_in_memory) == expected["fits_in_memory"]
        assert [str(m) for m in row.warnings] == expected["warnings"]  # the row's messages


def test_columns_carry_units_and_assumptions():
    df = engine.sweep("ResNet-50", "A100", [1, 2])
    for col in (
        "latency_ms",
        "throughput_per_s",
        "arithmetic_intensity_flop_per_byte",
        "attainable_tflops",
        "efficiency",
        "layer_overhead_us",
        "dispatch_overhead_ms",
        "activation_fraction",
        "flop_convention",
    ):
        assert col in df.columns
    assert df["dispatch_overhead_ms"].tolist() == pytest.approx([0.015, 0.015])


def test_crossover_batch_is_the_first_compute_bound_batch():
    df = engine.sweep(
        models=["ResNet-50"],
        hardware=["A100", "H100"],
        batch_sizes=[1, 2, 4, 8, 16, 32, 64],
        precisions=["fp16"],
    )
    cross = engine.crossover_batch(df).set_index("hardware")["crossover_batch"]
    for hw, first in cross.items():
        rows = df[df["hardware"] == hw].sort_values("batch_size")
        compute = rows[rows["bottleneck"] == "compute"]["batch_size"]
        assert first == compute.min()
        assert (rows[rows["batch_size"] < first]["bottleneck"] == "memory").all()
    assert cross["A100"] == 2  # B > 1.056 on A100 (tests/test_roofline.py, by hand)


def test_sweep_crossover_on_a_dense_range_is_the_exact_crossover_batch():
    # A list 1, 8, 64, 256 can only say "8" for ResNet-50 on an A100; every batch from 1
    # says 2, which is engine.compute_bound_batch's exact answer.
    coarse = engine.crossover_batch(engine.sweep("ResNet-50", "A100", [1, 8, 64, 256]))
    assert coarse["crossover_batch"].tolist() == [8]
    hardware = ["A100", "H100", "T4"]
    dense = engine.crossover_batch(engine.sweep("ResNet-50", hardware, list(range(1, 257))))
    for hw, first in zip(dense["hardware"], dense["crossover_batch"], strict=True):
        assert first == engine.compute_bound_batch("ResNet-50", hw)


def test_crossover_is_missing_when_never_compute_bound():
    df = engine.sweep("Llama-3.1-8B", "A100", [1, 2, 4])  # AI capped near 10 FLOP/byte
    assert engine.crossover_batch(df)["crossover_batch"].isna().all()


def test_marginal_gain_is_relative_throughput_step():
    df = engine.marginal_gain(engine.sweep("ResNet-50", "A100", [1, 2, 4]))
    t = df["throughput_per_s"].to_numpy()
    gains = df["marginal_throughput_gain_pct"].to_numpy()
    assert math.isnan(gains[0])
    assert gains[1] == pytest.approx((t[1] / t[0] - 1) * 100)
    assert gains[2] == pytest.approx((t[2] / t[1] - 1) * 100)


def test_sweep_refuses_oversized_grids_before_work():
    batches = list(range(1, MAX_SWEEP_ROWS // 9 + 2))  # 3 models x 3 chips x this > limit
    with pytest.raises(ValueError, match="over the limit"):
        engine.sweep(MODELS, HARDWARE, batches)


def test_numpy_batch_arrays_are_accepted():
    df = engine.sweep("ResNet-50", "A100", np.arange(1, 5))
    assert df["batch_size"].tolist() == [1, 2, 3, 4]


@pytest.mark.parametrize("batches", [[0], [1.5], [float("nan")], ["x"], [True], []])
def test_bad_batches_are_refused(batches):
    with pytest.raises(ValueError, match="batch"):
        engine.sweep("ResNet-50", "A100", batches)


def test_json_records_and_csv_export():
    df = engine.sweep(
        models="ResNet-50", hardware="A100", batch_sizes=[1, 2], precisions=["fp16", "fp8"]
    )
    recs = engine.records(df)
    assert recs[0]["assumptions"]["efficiency"] == 0.5
    assert recs[0]["warnings"] == [] and len(recs[2]["warnings"]) == 1  # A100: no fp8 peak
    solo = engine.solve("ResNet-50", "A100").as_dict()
    assert set(solo) == set(recs[0])
    csv = engine.to_csv(df)
    parsed = pd.read_csv(pd.io.common.StringIO(csv))
    assert "mfu_fraction" in parsed.columns and "latency_ms" in parsed.columns
    assert "compute_efficiency_fraction" in parsed.columns
    assert parsed["latency_ms"].iloc[0] == pytest.approx(solo["latency_ms"])
    assert parsed["regime"].tolist() == ["overhead", "overhead", "overhead", "overhead"]
    assert "overhead_share_fraction" in parsed.columns and "warning" in parsed.columns


def _cli(*args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "ROOFLINE_CATALOG"}
    root = Path(__file__).resolve().parent.parent
    cmd = [sys.executable, "-m", "engine", *args]
    return subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True, timeout=60)


def test_cli_reference_case_regime_is_overhead_in_json_and_csv():
    # ResNet-50 / A100 / batch 1: 0.515 ms of 0.543 ms is fixed overhead (95 %).
    scenario = ["--model", "ResNet-50", "--hardware", "A100"]
    out = _cli("solve", *scenario, "--batch-size", "1", "--format", "json")
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert (result["regime"], result["bottleneck"]) == ("overhead", "memory")
    out = _cli("sweep", *scenario, "--batch-sizes", "1", "--format", "csv")
    assert out.returncode == 0, out.stderr
    (row,) = list(csv.DictReader(io.StringIO(out.stdout)))
    assert (row["regime"], row["bottleneck"]) == ("overhead", "memory")
    out = _cli("sweep", *scenario, "--batch-sizes", "1", "--format", "json")
    assert json.loads(out.stdout)[0]["regime"] == "overhead"
