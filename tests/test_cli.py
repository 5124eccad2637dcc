"""The command line: the reference case through `python -m engine`, and every bad-input class.

Each case runs the real CLI in a subprocess (as a user's script would) from the repo root.
"""

import csv
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def run(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "engine", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )


def test_solve_reference_case_json():
    out = run(
        "solve",
        "--model",
        "ResNet-50",
        "--hardware",
        "A100",
        "--batch-size",
        "1",
        "--precision",
        "fp16",
        "--format",
        "json",
    )
    assert out.returncode == 0, out.stderr
    r = json.loads(out.stdout)
    assert (r["model"], r["hardware"], r["bottleneck"]) == ("ResNet-50", "A100", "memory")
    assert r["latency_ms"] == pytest.approx(0.543, rel=1e-3)
    assert r["throughput_per_s"] == pytest.approx(1843, rel=1e-3)
    assert r["arithmetic_intensity_flop_per_byte"] == pytest.approx(72.8, rel=1e-3)
    assert r["mfu"] == pytest.approx(0.024, abs=5e-4)
    assert r["achieved_tflops"] == pytest.approx(7.56, rel=2e-3)
    assert r["attainable_tflops"] == pytest.approx(148, rel=3e-3)
    assert r["assumptions"] == {
        "efficiency": 0.5,
        "layer_overhead_us": 10.0,
        "dispatch_overhead_ms": pytest.approx(0.015),
        "activation_fraction": 0.1,
        "flop_convention": "catalog",
    }
    assert r["warnings"] == []


def test_solve_assumption_flags_change_the_answer():
    out = run(
        "solve",
        "--model",
        "resnet50",
        "--hardware",
        "a100",
        "--efficiency",
        "1.0",
        "--layer-overhead-us",
        "0",
        "--dispatch-overhead-ms",
        "0",
        "--flop-convention",
        "mac2",
        "--format",
        "json",
    )
    r = json.loads(out.stdout)
    # no overhead: latency = max(8.2e9 / 312e12, 56.32e6 / 2.039e12) = 27.6 µs (memory)
    assert r["t_overhead_ms"] == 0 and r["latency_ms"] == pytest.approx(0.02762, rel=1e-3)
    assert r["assumptions"]["flop_convention"] == "mac2"


def test_solve_table_format_is_readable():
    out = run("solve", "--model", "ResNet-50", "--hardware", "A100")
    assert out.returncode == 0 and "bottleneck" in out.stdout and "memory" in out.stdout


def test_sweep_json_has_the_solve_keys_and_csv_parses():
    out = run(
        "sweep",
        "--model",
        "ResNet-50",
        "--model",
        "MobileNetV2",
        "--hardware",
        "A100",
        "--hardware",
        "H100",
        "--batch-sizes",
        "1,2,4",
        "--format",
        "json",
    )
    rows = json.loads(out.stdout)
    solo = json.loads(
        run("solve", "--model", "ResNet-50", "--hardware", "A100", "--format", "json").stdout
    )
    assert len(rows) == 2 * 2 * 3 and set(rows[0]) == set(solo)
    assert rows[0]["latency_ms"] == pytest.approx(solo["latency_ms"])
    text = run(
        "sweep",
        "--model",
        "ResNet-50",
        "--hardware",
        "A100",
        "--batch-sizes",
        "1,8",
        "--precision",
        "fp16",
        "--precision",
        "int8",
        "--format",
        "csv",
    ).stdout
    table = list(csv.DictReader(io.StringIO(text)))
    assert len(table) == 4 and "latency_ms" in table[0] and "mfu_fraction" in table[0]


def test_list_models_and_hardware():
    models = json.loads(run("list", "models", "--format", "json").stdout)
    hardware = json.loads(run("list", "hardware", "--format", "json").stdout)
    assert {"ResNet-50", "Llama-3.1-8B"} <= {m["id"] for m in models}
    assert {"A100", "H100", "MI300X"} <= {h["id"] for h in hardware}
    assert all(h["source"].startswith("https://") for h in hardware)


def test_list_prints_the_2025_26_catalogue_ids():
    hardware = run("list", "hardware").stdout.split()
    models = run("list", "models").stdout.split()
    new_hardware = {"GB200", "GB300", "B300", "RTX-PRO-6000", "H20", "H800", "MI355X", "MI325X"}
    assert new_hardware <= set(hardware)
    new_models = {"Llama-4-Maverick", "DeepSeek-R1", "Qwen3-8B", "Qwen3-32B", "Kimi-K2", "GLM-4.5"}
    assert new_models <= set(models)
    rows = {h["id"]: h for h in json.loads(run("list", "hardware", "--format", "json").stdout)}
    # each accelerator lists the formats it runs natively: FP4 tensor cores on Blackwell only
    assert {"nvfp4", "mxfp4", "fp8", "w4a16"} <= set(rows["B200"]["native_formats"])
    assert "nvfp4" not in rows["H100"]["native_formats"] and "fp8" in rows["H100"]["native_formats"]
    assert "mxfp4" in rows["MI355X"]["native_formats"]
    assert "fp8" not in rows["A100"]["native_formats"]  # Ampere: no FP8 tensor cores


@pytest.mark.parametrize(
    "args, fragment",
    [
        (["solve", "--model", "NoSuchNet", "--hardware", "A100"], "closest"),
        (["solve", "--model", "ResNet-50", "--hardware", "A1OO"], "closest"),
        (["solve", "--model", "ResNet-50", "--hardware", "A100", "--batch-size", "0"], "batch"),
        (["solve", "--model", "ResNet-50", "--hardware", "A100", "--batch-size", "-3"], "batch"),
        (
            ["solve", "--model", "ResNet-50", "--hardware", "A100", "--efficiency", "nan"],
            "efficiency",
        ),
        (
            ["solve", "--model", "ResNet-50", "--hardware", "A100", "--efficiency", "-1"],
            "efficiency",
        ),
        (
            ["solve", "--model", "ResNet-50", "--hardware", "A100", "--layer-overhead-us", "inf"],
            "layer_overhead",
        ),
        (["solve", "--model", "ResNet-50", "--hardware", "A100", "--precision", "fp12"], "fp12"),
        (["solve", "--model", "ResNet-50", "--hardware", "A100", "--batch-size", "two"], "two"),
        (["sweep", "--model", "ResNet-50", "--hardware", "A100", "--batch-sizes", "1,x"], "batch"),
        (["list", "gpus"], "gpus"),
        (["frobnicate"], "frobnicate"),
    ],
)
def test_bad_input_exits_2_with_one_line(args, fragment):
    out = run(*args)
    assert out.returncode == 2
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in out.stderr, out.stderr
    assert fragment in lines[0]
    assert out.stdout == ""


def test_malformed_explicit_catalogue_exits_2(tmp_path):
    bad = tmp_path / "team.toml"
    bad.write_text('[hardware.X]\nname = "X"\nmemory_bandwidth = "3.35 TB/z"\n')
    out = run("--catalog", str(bad), "solve", "--model", "ResNet-50", "--hardware", "A100")
    assert out.returncode == 2 and len(out.stderr.strip().splitlines()) == 1
    assert str(bad) in out.stderr and "hardware.X" in out.stderr


def test_team_catalogue_adds_and_overrides(tmp_path):
    team = tmp_path / "team.toml"
    team.write_text(
        '[hardware.A100]\nname = "Our A100 (derated)"\nmemory_bandwidth = "1000 GB/s"\n'
        'memory_capacity = "80 GiB"\ndispatch_overhead = "0.015 ms"\ntdp = "400 W"\n'
        'peak = { fp16 = "312 TFLOP/s", fp32 = "19.5 TFLOP/s" }\ninterconnect = "none"\n'
        'source = "https://example.com/derated"\n'
    )
    out = run(
        "solve",
        "--model",
        "ResNet-50",
        "--hardware",
        "A100",
        "--format",
        "json",
        "--catalog",
        str(team),
    )
    r = json.loads(out.stdout)
    # memory term doubles: 56.32e6 / 1e12 = 56.3 µs instead of 27.6 µs
    assert r["t_memory_ms"] == pytest.approx(0.05632, rel=1e-3)
    env_out = run(
        "solve",
        "--model",
        "ResNet-50",
        "--hardware",
        "A100",
        "--format",
        "json",
        env={**os.environ, "ROOFLINE_CATALOG": str(team)},
    )
    assert json.loads(env_out.stdout)["t_memory_ms"] == pytest.approx(0.05632, rel=1e-3)
