"""Untrusted files and hostile CLI input: bounded reads, row errors, no non-finite output.

Each case was found by probing the app and CLI (an over-long CSV cell, /dev/zero, a chip with
1e-300 B/s, a config.json named like a spreadsheet formula, an empty --catalog=): every one
must end in a clear message and exit status 2, never a traceback, a hang or invalid JSON.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

import engine
from engine.cli.output import json_text
from engine.files import FileLimitError, read_bounded
from engine.report.export import defuse_formulas

ROOT = Path(__file__).resolve().parent.parent
HEADER = "source,engine,hardware,tp,model,precision,kv_precision,batch_size,input_tokens,"
HEADER += "output_tokens,metric,value\n"
ROW = "https://x,e,A100,1,Llama-3.1-8B,fp16,,1,128,128,ttft_ms,20\n"


def cli(*args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "engine", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=timeout,
        check=False,
    )


def one_line_error(run: subprocess.CompletedProcess) -> str:
    assert run.returncode == 2, (run.returncode, run.stdout[:200], run.stderr[-400:])
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), run.stderr
    return lines[0]


def test_a_csv_cell_over_the_csv_modules_limit_is_a_row_error(tmp_path):
    # 131,072 characters is the csv module's field limit; the file stays under 1 MB
    data = (HEADER + ROW + "https://" + "x" * 200_000 + ROW[9:]).encode()
    assert len(data) < engine.MAX_MEASUREMENTS_BYTES
    with pytest.raises(engine.MeasurementsError) as err:
        engine.parse_measurements(data, "long.csv")
    assert err.value.problems == [err.value.problems[0]]
    assert err.value.problems[0].startswith("row 2: not readable as CSV")
    path = tmp_path / "long.csv"
    path.write_bytes(data)
    for command in ("validate", "calibrate"):
        assert "row 2: not readable as CSV" in one_line_error(cli(command, str(path)))


def test_the_header_row_over_the_limit_is_refused_too():
    data = ("x" * 140_000 + "," + HEADER).encode()
    with pytest.raises(engine.MeasurementsError, match="header is not readable"):
        engine.parse_measurements(data, "h.csv")


@pytest.mark.parametrize("command", ["calibrate", "validate"])
def test_a_device_that_never_ends_is_read_to_the_limit_only(command):
    start = time.perf_counter()
    message = one_line_error(cli(command, "/dev/zero", timeout=30))
    assert "/dev/zero is not a regular file" in message  # refused before a byte is read
    assert time.perf_counter() - start < 20


def test_the_bounded_reader_trusts_no_reported_size(tmp_path):
    with pytest.raises(FileLimitError, match="is not a regular file"):
        read_bounded("/dev/zero", 10, "zero")  # a device: endless
    small = tmp_path / "a.txt"
    small.write_bytes(b"0123456789")
    assert read_bounded(small, 10) == b"0123456789"  # exactly the limit is fine
    small.write_bytes(b"0123456789A")
    with pytest.raises(FileLimitError, match="larger than the limit of 10 bytes"):
        read_bounded(small, 10)
    with pytest.raises(FileLimitError, match="is not a regular file"):
        read_bounded(tmp_path, 10)  # a directory
    with pytest.raises(FileLimitError, match="cannot read"):
        read_bounded(tmp_path / "missing.csv", 10)


def test_a_fifo_is_refused_at_once_not_waited_on(tmp_path):
    """A FIFO with no writer blocks open() for ever: every file the CLI takes refuses it."""
    fifo = tmp_path / "pipe.csv"
    os.mkfifo(fifo)
    runs = (
        ("validate", str(fifo)),
        ("calibrate-train", str(fifo)),
        (f"--catalog={fifo}", "list", "hardware"),
        (
            "serve",
            "--hardware",
            "H100",
            "--model-config",
            str(fifo),
            "--input-tokens",
            "512",
            "--output-tokens",
            "128",
        ),
        (
            "load",
            "--model",
            "Llama-3.1-8B",
            "--hardware",
            "H100",
            "--input-tokens",
            "512",
            "--output-tokens",
            "128",
            f"--trace={fifo}",
        ),
    )
    for args in runs:
        assert "is not a regular file" in one_line_error(cli(*args, timeout=30)), args


def test_a_trace_cell_over_the_csv_limit_and_a_short_training_row_are_one_line_errors(tmp_path):
    trace = tmp_path / "trace.csv"
    trace.write_text("arrival_s,input_tokens,output_tokens\n0," + "1" * 131_073 + ",5\n")
    with pytest.raises(engine.TraceError, match="not a readable CSV file"):
        engine.parse_trace(trace.read_bytes(), "trace.csv")
    load = (
        "load",
        "--model",
        "Llama-3.1-8B",
        "--hardware",
        "H100",
        "--input-tokens",
        "512",
        "--output-tokens",
        "128",
        f"--trace={trace}",
    )
    assert "not a readable CSV file" in one_line_error(cli(*load))
    runs = ROOT / "data" / "measurements" / "training"
    header = next(runs.glob("*.csv")).read_text().splitlines()[0]
    short = tmp_path / "runs.csv"
    short.write_text(header + "\n=1+1,@SUM(1),-2+3,+cmd\n")  # four cells of twenty-one
    message = one_line_error(cli("calibrate-train", str(short)))
    assert "not a training measurements file the engine reads" in message


def test_a_profile_written_to_a_full_device_is_a_one_line_error():
    meas = str(ROOT / "data" / "measurements" / "trtllm-v0.6.1.csv")
    message = one_line_error(cli("calibrate", meas, "--out=/dev/full", timeout=120))
    assert "cannot write it" in message


@pytest.mark.parametrize(
    ("flags", "name"),
    [
        (["--efficiency", "1e-320"], "efficiency"),
        (["--layer-overhead-us", "1e308"], "layer_overhead_us"),
        (["--bandwidth-efficiency", "0"], "bandwidth_efficiency"),
    ],
)
def test_assumptions_outside_their_range_exit_2(flags, name):
    run = cli(
        "serve",
        "--model",
        "Llama-3.1-8B",
        "--hardware",
        "A100",
        "--input-tokens",
        "8",
        "--output-tokens",
        "8",
        "--format",
        "json",
        *flags,
    )
    assert one_line_error(run).startswith(f"error: {name} must be a number from")


def test_a_chip_with_an_absurd_bandwidth_never_loads(tmp_path):
    team = tmp_path / "team.toml"
    team.write_text(
        (ROOT / "tests" / "fixtures" / "team_catalog.toml").read_text()
        + '\n[hardware.Slow]\nname = "Slow"\nmemory_bandwidth = "1e-300 B/s"\n'
        'memory_capacity = "16 GB"\ndispatch_overhead = "0.01 ms"\ntdp = "100 W"\n'
        'peak = { fp16 = "10 TFLOP/s", fp32 = "5 TFLOP/s" }\ninterconnect = "none"\n'
        'source = "https://example.com"\n'
    )
    runs = [
        cli("--catalog", str(team), "solve", "--model", "ResNet-50", "--hardware", "Slow"),
        cli(
            "--catalog",
            str(team),
            "decode",
            "--model",
            "Llama-3.1-8B",
            "--hardware",
            "Slow",
            "--context",
            "128",
            "--format",
            "json",
        ),
    ]
    for run in runs:  # the file is named explicitly: its problem stops the command
        assert "memory_bandwidth must be from 1e+06 to 1e+17 B/s" in one_line_error(run)


def test_json_output_is_strict_and_refuses_infinity():
    assert json.loads(json_text({"tpot_ms": float("nan"), "a": [1.5]})) == {
        "tpot_ms": None,
        "a": [1.5],
    }
    with pytest.raises(ValueError, match="not finite: ttft_ms = inf"):
        json_text({"ttft_ms": float("inf")})


def test_cli_csv_defuses_a_formula_in_a_model_name(tmp_path):
    config = tmp_path / "=HYPERLINK(1).json"
    config.write_text(
        json.dumps(
            {
                "architectures": ["LlamaForCausalLM"],
                "hidden_size": 64,
                "num_hidden_layers": 2,
                "num_attention_heads": 4,
                "num_key_value_heads": 2,
                "intermediate_size": 128,
                "vocab_size": 100,
                "max_position_embeddings": 1024,
            }
        )
    )
    run = cli(
        "sweep",
        "--model-config",
        str(config),
        "--hardware",
        "A100",
        "--batch-sizes",
        "1",
        "--format",
        "csv",
    )
    assert run.returncode == 0, run.stderr
    first_cell = run.stdout.splitlines()[1].split(",")[0]
    assert first_cell == "'=HYPERLINK(1)"


def test_defusing_leaves_numbers_and_safe_text_alone():
    import pandas as pd

    df = pd.DataFrame({"x": [-1.5, 2.0], "name": ["-dash", "ok"], "n": [1, 2]})
    out = defuse_formulas(df)
    assert out["x"].tolist() == [-1.5, 2.0] and out["name"].tolist() == ["'-dash", "ok"]
    safe = pd.DataFrame({"name": ["ok"]})
    assert defuse_formulas(safe) is safe


def test_an_empty_catalog_flag_exits_2():
    assert "--catalog needs a file name" in one_line_error(cli("--catalog=", "list", "models"))
