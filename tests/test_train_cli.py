"""`python -m engine train|train-search|calibrate-train` (engine/cli/train.py): the flags have
the API's names, the JSON has the contract's keys, bad input exits 2 with one line."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

import engine
from engine.cli.main import build_parser, main

ROOT = Path(__file__).resolve().parent.parent
TRAIN = [
    "train",
    "--model",
    "Llama-3.1-8B",
    "--hardware",
    "H100",
    "--gpus",
    "64",
    "--global-batch-size",
    "512",
    "--seq-len",
    "8192",
]
SEARCH = [
    "train-search",
    "--model",
    "Llama-3.1-8B",
    "--hardware",
    "H100",
    "--gpus",
    "64",
    "--global-batch-size",
    "512",
    "--seq-len",
    "8192",
]
CONTRACT = (
    "step_time_s",
    "tokens_per_s",
    "tokens_per_s_per_gpu",
    "model_flops_per_token",
    "model_tflops_per_gpu",
    "mfu",
    "hfu",
    "bubble_fraction",
    "comm_exposed_s",
    "memory_per_gpu_bytes",
    "fits_in_memory",
    "dp",
    "assumptions",
    "warnings",
)


def cli(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_the_commands_and_flags_have_the_apis_names():
    sub = next(a for a in build_parser()._actions if hasattr(a, "choices") and a.choices)
    for command in ("train", "train-search", "calibrate-train"):
        assert command in sub.choices
    flags = {s for a in sub.choices["train"]._actions for s in a.option_strings}
    assert {
        "--micro-batch-size",
        "--global-batch-size",
        "--seq-len",
        "--tp",
        "--pp",
        "--cp",
        "--vp",
        "--ep",
        "--gpus",
        "--zero",
        "--recompute",
        "--precision",
        "--profile",
        "--format",
        "--overlap-fraction",
        "--network-efficiency",
    } <= flags


def test_train_json_has_the_contract_keys_and_equals_the_api(capsys):
    code, out, err = cli(
        capsys,
        *TRAIN,
        "--tp",
        "2",
        "--pp",
        "2",
        "--micro-batch-size",
        "2",
        "--zero",
        "1",
        "--recompute",
        "selective",
        "--format",
        "json",
    )
    assert code == 0, err
    r = json.loads(out)
    assert set(CONTRACT) <= set(r)
    api = engine.train(
        "Llama-3.1-8B",
        "H100",
        gpus=64,
        tp=2,
        pp=2,
        micro_batch_size=2,
        global_batch_size=512,
        seq_len=8192,
        zero=1,
        recompute="selective",
    ).as_dict()
    band = ["error_band_pct", "error_band_basis", "off_calibrated_ground"]
    assert list(r) == [*api, *band] and r["step_time_s"] == api["step_time_s"]
    assert r["dp"] == 16 and r["micro_batches"] == 16  # 64/(2·2); 512/(16·2)


def test_gpt_shape_and_assumption_flags(capsys):
    code, out, _ = cli(
        capsys,
        "train",
        "--gpt-shape",
        "96,12288,96",
        "--hardware",
        "A100",
        "--gpus",
        "1536",
        "--tp",
        "8",
        "--pp",
        "12",
        "--global-batch-size",
        "1536",
        "--seq-len",
        "2048",
        "--precision",
        "fp16",
        "--recompute",
        "full",
        "--attention",
        "unfused",
        "--overlap-fraction",
        "0.25",
        "--format",
        "json",
    )
    r = json.loads(out)
    assert code == 0 and r["matmul_params"] == pytest.approx(174.6e9, rel=0.001)
    assert r["assumptions"]["overlap_fraction"] == 0.25


def test_train_csv_and_table(capsys):
    code, out, _ = cli(capsys, *TRAIN, "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(out)))
    assert code == 0 and len(rows) == 1 and float(rows[0]["step_time_s"]) > 0
    assert "overlap_fraction" in rows[0]  # the assumptions flattened
    # unitless columns say so in the CSV (the JSON keeps mfu and hfu)
    assert 0 < float(rows[0]["mfu_fraction"]) <= float(rows[0]["hfu_fraction"]) < 1
    assert "mfu" not in rows[0] and "hfu" not in rows[0]
    code, out, _ = cli(capsys, *TRAIN)
    assert code == 0 and "tokens_per_s_per_gpu" in out


def test_train_search_json_csv_and_table(capsys):
    code, out, _ = cli(
        capsys, *SEARCH, "--zero", "1", "--recompute", "none,full", "--format", "json"
    )
    rows = json.loads(out)
    assert code == 0 and rows and all(r["reason"] == "" for r in rows)
    assert rows[0]["tokens_per_s"] >= rows[-1]["tokens_per_s"]
    assert {r["recompute"] for r in rows} <= {"none", "full"} and {r["zero"] for r in rows} == {1}
    code, out, _ = cli(capsys, *SEARCH, "--tp", "1,2", "--include-rejected", "--format", "csv")
    table = list(csv.DictReader(io.StringIO(out)))
    assert code == 0 and any(r["reason"] for r in table)
    assert {"mfu_fraction", "hfu_fraction", "published_mfu_ceiling_fraction"} <= set(table[0])
    code, out, _ = cli(capsys, *SEARCH, "--top", "3")
    lines = out.splitlines()
    table, notes = lines[:4], lines[4:]  # header + 3, then what the JSON says per row
    assert code == 0 and len(table[1:]) == 3 and not table[3].startswith("warning")
    # the default (A100-fitted) profile puts these rows above the best published Hopper MFU:
    # the table says so below itself, as the JSON's above_published_mfu does per row
    _, same, _ = cli(capsys, *SEARCH, "--format", "json")
    above = [r for r in json.loads(same)[:3] if r["above_published_mfu"]]
    assert above and notes[0].startswith(f"warning: MFU {max(r['mfu'] for r in above):.1%} is")
    assert "best published Hopper 16-bit training MFU, 46.4%" in notes[0]
    assert notes[-1] == f"warning: {len(above)} of the 3 rows shown are above that ceiling"
    # the Hopper-fitted profile stays under it here: no note
    code, out, _ = cli(capsys, *SEARCH, "--top", "3", "--profile", "llm-foundry-h100")
    assert code == 0 and len(out.splitlines()) == 4 and "warning" not in out


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        ([*TRAIN, "--tp", "3"], "tp must divide the attention heads"),
        ([*TRAIN, "--recompute", "some"], "invalid choice"),
        ([*TRAIN, "--precision", "int8"], "invalid choice"),
        ([*TRAIN[:-2]], "required: --seq-len"),
        ([*TRAIN, "--gpt-shape", "2,64,4"], "give one of --model, --model-config or --gpt-shape"),
        (
            [
                "train",
                "--gpt-shape",
                "2,64",
                "--hardware",
                "A100",
                "--gpus",
                "8",
                "--global-batch-size",
                "8",
                "--seq-len",
                "16",
            ],
            "--gpt-shape takes",
        ),
        ([*TRAIN, "--overlap-fraction", "3"], "overlap_fraction must be"),
        ([*TRAIN, "--profile", "trtllm"], "unknown training profile 'trtllm'"),
        ([*SEARCH, "--tp", "1,x"], "not a list of whole numbers"),
        ([*SEARCH, "--recompute", "none,sometimes"], "recompute must be one of"),
        ([*SEARCH, "--top", "0"], "--top must be 1 or more"),
        (["calibrate-train", "no-such-file.csv"], "cannot read no-such-file.csv"),
    ],
)
def test_bad_input_exits_2_with_one_line(capsys, args, fragment):
    code, out, err = cli(capsys, *args)
    assert code == 2 and out == ""
    assert err.startswith("error: ") and fragment in err and err.count("\n") == 1


def test_the_real_module_runs(tmp_path):
    run = subprocess.run(
        [sys.executable, "-m", "engine", *TRAIN, "--format", "json"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["hardware"] == "H100"
