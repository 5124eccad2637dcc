"""`python -m engine serve|ops` (engine/cli/serve.py): outputs and every bad-input path.

Most cases call `engine.cli.main` in-process (fast); one runs the real module in a subprocess.
"""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from engine import DEFAULT_PROFILE, serve
from engine.cli.main import main

ROOT = Path(__file__).resolve().parent.parent
SERVE = [
    "serve",
    "--model",
    "Llama-3.1-70B",
    "--hardware",
    "H100",
    "--input-tokens",
    "128",
    "--output-tokens",
    "128",
]
OPS = ["ops", "--model", "Llama-3.1-8B", "--hardware", "A100", "--context", "1024"]


def cli(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_serve_json_equals_the_api(capsys):
    code, out, err = cli(
        capsys,
        *SERVE,
        "--tp",
        "4",
        "--batch-size",
        "8",
        "--link-efficiency",
        "0.7",
        "--format",
        "json",
    )
    assert code == 0, err
    r = json.loads(out)
    api = serve(
        "Llama-3.1-70B",
        "H100",
        tp=4,
        batch_size=8,
        input_tokens=128,
        output_tokens=128,
        link_efficiency=0.7,
    ).as_dict()
    band = ("error_band_pct", "error_band_basis", "off_calibrated_ground")
    assert list(r) == [*api, *band]  # the band after the API's keys (tests/test_cli_bands.py)
    assert r["tpot_ms"] == pytest.approx(api["tpot_ms"])
    assert r["assumptions"]["link_efficiency"] == 0.7 and r["devices"] == 4


def test_serve_json_has_null_for_undefined_values(capsys):
    code, out, _ = cli(capsys, *SERVE[:-1], "1", "--format", "json")
    r = json.loads(out)  # strict JSON: no NaN tokens
    assert code == 0 and r["tpot_ms"] is None and r["decode_bottleneck"] == "none"


def test_serve_profile_flag(capsys):
    code, out, _ = cli(capsys, *SERVE, "--tp", "2", "--profile", "trtllm", "--format", "json")
    r = json.loads(out)
    assert code == 0 and r["profile"] == "trtllm"
    tutorial = json.loads(
        cli(capsys, *SERVE, "--tp", "2", "--profile", "tutorial", "--format", "json")[1]
    )
    assert tutorial["profile"] == "tutorial" and r["assumptions"] != tutorial["assumptions"]
    # no --profile: the default, recorded by its name, not the tutorial's
    default = json.loads(cli(capsys, *SERVE, "--tp", "2", "--format", "json")[1])
    assert default["profile"] == DEFAULT_PROFILE
    assert default["assumptions"] != tutorial["assumptions"]


def test_ops_csv_has_unit_bearing_headers_and_sums(capsys):
    # the tutorial profile: full bandwidth, 10 µs per layer (the arithmetic below)
    code, out, _ = cli(capsys, *OPS, "--profile", "tutorial", "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(out)))
    assert code == 0 and {"work_flop", "t_compute_ms", "time_ms", "weight_bytes"} <= set(rows[0])
    names = [r["name"] for r in rows]
    assert names[:4] == ["norm", "qkv_projection", "output_projection", "attention"]
    # one decode token reads the weights but the embedding table (16.06 GB − 128256·4096·2 B)
    # and 1024 tokens of KV cache (1024 · 131,072 B) at 2,039 GB/s: 7.43 ms; then the
    # overhead row: 32 layers · 10 µs + A100's 15 µs dispatch = 0.335 ms
    total = sum(float(r["total_time_ms"]) for r in rows)
    moved = 16.06e9 - 128256 * 4096 * 2 + 1024 * 131072
    assert total == pytest.approx(moved / 2.039e12 * 1e3 + 0.335, rel=0.005)
    assert rows[-1]["name"] == "overhead" and rows[-1]["op_class"] == "overhead"


def test_ops_table_and_json(capsys):
    code, out, _ = cli(capsys, *OPS, "--phase", "prefill", "--tp", "2")
    assert code == 0 and "all_reduce" in out and "compute" in out
    code, out, _ = cli(capsys, *OPS, "--format", "json")
    assert code == 0 and json.loads(out)[0]["layer"] == "0–31"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([*SERVE, "--tp", "3"], "tp 3 does not divide"),
        ([*SERVE, "--tp", "two"], "invalid int value"),
        (SERVE[:-2], "--output-tokens"),
        (
            [
                "serve",
                "--model",
                "ResNet-50",
                "--hardware",
                "A100",
                "--input-tokens",
                "1",
                "--output-tokens",
                "1",
            ],
            "needs a decoder LLM with shapes",
        ),
        ([*SERVE, "--batch-size", "0"], "batch_size"),
        ([*SERVE, "--memory-reserve", "1.5"], "memory_reserve"),
        ([*SERVE, "--profile", "nope"], "unknown profile"),
        ([*SERVE, "--precision", "fp12"], "invalid choice"),
        (
            [
                "serve",
                "--model",
                "Llama-3.1-8B",
                "--hardware",
                "no-such-gpu",
                "--input-tokens",
                "1",
                "--output-tokens",
                "1",
            ],
            "no-such-gpu",
        ),
        ([*OPS, "--phase", "train"], "invalid choice"),
        (OPS[:-2], "--context"),
        ([*OPS, "--context", "-5"], "context"),
    ],
)
def test_bad_input_exits_2_with_one_line(capsys, args, message):
    code, out, err = cli(capsys, *args)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("error: ") and message in err


def test_real_module_in_a_subprocess():
    done = subprocess.run(
        [sys.executable, "-m", "engine", *SERVE, "--tp", "2", "--format", "table"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "ttft_ms" in done.stdout and "fits_in_memory" in done.stdout


def test_serve_from_a_config_json_matches_the_catalogue(capsys):
    # The catalogue's Mixtral-8x7B shapes come from this very config.json
    config = str(ROOT / "tests" / "fixtures" / "configs" / "Mixtral-8x7B.json")
    args = [
        "--hardware",
        "H100",
        "--tp",
        "2",
        "--batch-size",
        "4",
        "--input-tokens",
        "300",
        "--output-tokens",
        "30",
        "--format",
        "json",
    ]
    code, out, err = cli(capsys, "serve", "--model-config", config, *args)
    assert code == 0, err
    from_config = json.loads(out)
    catalogued = json.loads(cli(capsys, "serve", "--model", "Mixtral-8x7B", *args)[1])
    for key in ("ttft_ms", "tpot_ms", "kv_cache_bytes", "weight_bytes_per_device"):
        assert from_config[key] == pytest.approx(catalogued[key], rel=1e-3), key
