"""`python -m engine calibrate|validate`: transcripts, JSON contract, exit statuses.

The shipped `trtllm` profile must be exactly what `calibrate` gives on the shipped
measurements (the refit test below), and validating the shipped file must list every row,
the unpredicted ones with their reason.
"""

import json
from pathlib import Path

import pytest

from engine.accuracy.measurements import REQUIRED
from engine.catalog.profiles import DEFAULT_PROFILE, get_profile, profile_from_toml
from engine.cli.main import main

ROOT = Path(__file__).resolve().parent.parent
SHIPPED = str(ROOT / "data" / "measurements" / "trtllm-v0.6.1.csv")
HEADER = ",".join(REQUIRED)


def run(capsys, *argv):
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


@pytest.fixture(scope="module")
def refit(tmp_path_factory):
    # exactly the command recorded in the shipped profile, writing elsewhere
    out = tmp_path_factory.mktemp("fit") / "trtllm.toml"
    argv = get_profile("trtllm-0.6.1").command.split()[3:]  # after "python -m engine"
    argv = [str(ROOT / a) if a.startswith("data/measurements") else a for a in argv]
    argv[argv.index("--out") + 1] = str(out)
    assert main(argv) == 0
    return profile_from_toml(out.read_bytes(), "trtllm.toml", origin="built-in")


def test_shipped_trtllm_profile_is_what_calibrate_gives(refit):
    shipped = get_profile("trtllm-0.6.1")
    assert set(refit.values()) == set(shipped.values())
    for name, value in shipped.values().items():
        if isinstance(value, str):  # a word: the kernel transfer's stack and reference
            assert refit.values()[name] == value, name
            continue
        assert refit.values()[name] == pytest.approx(value, rel=1e-3, abs=1e-6), name
    assert refit.rows == shipped.rows == 57
    assert refit.fitted_on == shipped.fitted_on == ("trtllm-v0.6.1.csv",)
    assert refit.residuals["mape_pct"] == pytest.approx(shipped.residuals["mape_pct"], rel=1e-3)


def test_fitted_profile_records_how_it_was_made(refit):
    shipped = get_profile("trtllm-0.6.1")
    assert shipped.command.startswith(
        "python -m engine calibrate data/measurements/trtllm-v0.6.1.csv "
    )
    assert "--memory-reserve 0.04" in shipped.command  # set, never fitted from speed rows
    assert len(shipped.fitted_at) == 10 and shipped.fitted_at.startswith("20")
    assert {"mape_pct", "lomo_mape_pct", "loao_mape_pct"} <= set(shipped.residuals)
    assert len(shipped.worst) == 3 and "memory_reserve" not in shipped.fitted
    assert set(shipped.ground["hardware"]) == {"A100", "H100", "L40S"}
    # every fitted parameter inside its physical range
    v = shipped.values()
    assert all(0 < v[k] <= 1 for k in ("efficiency", "attention_efficiency", "link_efficiency"))
    assert 0 < v["bandwidth_efficiency"] <= 1 and v["layer_overhead_us"] >= 0


def test_validate_tutorial_table_lists_every_row(capsys):
    status, out, err = run(capsys, "validate", SHIPPED, "--profile", "tutorial")
    assert status == 0 and not err
    assert "profile tutorial: 55 of 57 rows predicted" in out
    # Two runs need more than the tutorial's 90 % of memory (A100 80 GB, L40S 48 GB):
    assert "rows not predicted (2):" in out
    assert "row 22: does not fit in memory: 81.9 GB per device > 77.3 GB usable" in out
    assert "mape_pct by hardware: A100" in out and "worst rows:" in out


def test_validate_trtllm_predicts_every_row_better_than_tutorial(capsys):
    _, tutorial, _ = run(capsys, "validate", SHIPPED, "--profile", "tutorial", "--format", "json")
    status, fitted, _ = run(
        capsys, "validate", SHIPPED, "--profile", "trtllm-0.6.1", "--format", "json"
    )
    assert status == 0
    a, b = json.loads(tutorial), json.loads(fitted)
    assert len(a) == len(b) == 57
    mape = [sum(abs(r["error"]) for r in rows if r["error"] is not None) / 0.57 for rows in (a, b)]
    # a row not predicted counts 0 over all 57: tutorial 36.97 % (55 rows), trtllm-0.6.1 15.71 %
    # (56 rows: row 22 no longer fits under TensorRT-LLM's KV pool; the fit kept all 57)
    assert mape[1] < 16 < mape[0]


def test_validate_json_rows_carry_prediction_and_error(capsys):
    # the tutorial profile: rows 22 and 35 need more than its 90 % of memory
    status, out, _ = run(capsys, "validate", SHIPPED, "--profile", "tutorial", "--format", "json")
    assert status == 0
    rows = json.loads(out)
    first = rows[0]
    assert set(REQUIRED) <= set(first) and first["profile"] == "tutorial"
    assert first["error"] == pytest.approx(first["predicted"] / first["value"] - 1)
    missing = [r for r in rows if r["predicted"] is None]
    assert [r["row"] for r in missing] == [22, 35]
    assert all(r["reason"].startswith("does not fit") and r["error"] is None for r in missing)
    # no --profile: the default's, recorded by its name
    status, out, _ = run(capsys, "validate", SHIPPED, "--format", "json")
    assert status == 0 and json.loads(out)[0]["profile"] == DEFAULT_PROFILE


def test_rows_that_cannot_be_modelled_are_reported_one_by_one(capsys, tmp_path):
    good = "https://x.org,vLLM,H100,1,Llama-2-7B,fp16,,8,128,128,tpot_ms,12"
    bad = good.replace("Llama-2-7B", "Llama-9-1T")
    path = tmp_path / "mine.csv"
    path.write_text(f"{HEADER}\n{good}\n{bad}\n")
    status, out, _ = run(capsys, "validate", str(path))
    assert status == 0
    assert "1 of 2 rows predicted" in out
    assert "row 2: unknown model 'Llama-9-1T'" in out


def test_exit_2_only_when_no_row_can_be_predicted(capsys, tmp_path):
    bad = "https://x.org,vLLM,H100,1,Llama-9-1T,fp16,,8,128,128,tpot_ms,12"
    path = tmp_path / "none.csv"
    path.write_text(f"{HEADER}\n{bad}\n")
    status, out, err = run(capsys, "validate", str(path))
    assert status == 2 and not out
    assert err.startswith("error: no row of none.csv can be predicted (row 1: unknown model")
    assert len(err.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["validate", "nope.csv"], "nope.csv: cannot read nope.csv"),
        (["validate", SHIPPED, "--profile", "fast"], "unknown profile 'fast'"),
        (["validate", SHIPPED, "--profile", "gone.toml"], "--profile 'gone.toml': cannot read"),
        (["calibrate", SHIPPED, "--name", "a b"], "profile name 'a b'"),
        (["calibrate", SHIPPED, "--start", "nope"], "unknown profile 'nope'"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(capsys, argv, message):
    status, out, err = run(capsys, *argv)
    assert status == 2 and not out
    assert message in err and len(err.strip().splitlines()) == 1


def test_a_bad_cell_is_named_by_row_and_column(capsys, tmp_path):
    path = tmp_path / "neg.csv"
    path.write_text(f"{HEADER}\nhttps://x.org,vLLM,H100,1,Llama-2-7B,fp16,,8,128,128,tpot_ms,-4\n")
    status, _, err = run(capsys, "validate", str(path))
    assert status == 2
    assert "neg.csv: row 1, column 'value': must be a positive number, got '-4'" in err


def test_calibrate_table_shows_parameters_and_in_sample_errors(capsys, tmp_path):
    path = tmp_path / "few.csv"
    rows = Path(SHIPPED).read_text().splitlines()
    path.write_text("\n".join(rows[:1] + rows[17:25]) + "\n")  # the A100 throughput rows
    status, out, _ = run(capsys, "calibrate", str(path), "--format", "table")
    assert status == 0
    assert "fitted parameters:" in out and "efficiency" in out
    assert "errors (in sample" in out and "mape_pct" in out and "loao_mape_pct" not in out
    assert "note: 7 rows for" in out  # one accelerator: no leave-one-accelerator-out error
    status, out, _ = run(capsys, "calibrate", str(path), "--format", "json")
    doc = json.loads(out)
    assert doc["name"] == "fitted" and doc["fitted_on"] == ["few.csv"]
    _, out, _ = run(capsys, "validate", str(path), "--format", "json")
    errors = [abs(r["error"]) for r in json.loads(out) if r["error"] is not None]
    assert doc["residuals"]["mape_pct"] < 100 * sum(errors) / len(errors)  # the fit helps


def test_docs_accuracy_tables_are_current():
    # docs/model.md's tables are bench/accuracy_report.py's output; rerun it when this fails.
    import subprocess
    import sys

    report = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "accuracy_report.py")],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    docs = (ROOT / "docs" / "model.md").read_text()
    tables = [line for line in report.splitlines() if line.startswith("|")]
    assert len(tables) > 20
    missing = [line for line in tables if line not in docs]
    assert not missing, missing[:3]


V1 = str(ROOT / "data" / "measurements" / "trtllm-v1.0-perf-overview.csv")


def test_calibrate_precisions_fits_only_those_rows_and_records_the_flag(capsys):
    # the 1.0 file: 112 fp8 rows (H100, H200) and 216 fp4 rows (B200, GB200, RTX PRO 6000)
    status, out, err = run(
        capsys,
        "calibrate",
        V1,
        "--start",
        "trtllm-1.0",
        "--precisions",
        "FP8",
        "--fit",
        "sequence_overhead_us",
        "--format",
        "json",
    )
    assert status == 0, err
    fitted = json.loads(out)
    assert fitted["rows"] == 112
    assert fitted["ground"]["precisions"] == ["fp8"]
    assert set(fitted["ground"]["hardware"]) == {"H100", "H200"}
    assert " --precisions fp8 " in fitted["command"]  # reproducible: the flag is recorded
    # the rows left out are predicted by the new profile and their error recorded by format
    assert fitted["residuals"]["held_out_nvfp4_rows"] == 216
    assert 20 < fitted["residuals"]["held_out_nvfp4_mape_pct"] < 60
    # the shipped profile's recorded command keeps the same rows
    assert " --precisions fp8 " in get_profile("trtllm-1.0").command


def test_calibrate_precisions_naming_no_row_is_refused_with_the_files_precisions(capsys):
    status, _, err = run(capsys, "calibrate", V1, "--precisions", "fp6")
    assert status == 2
    assert "--precisions: no row is in 'fp6' (the files' precisions: fp4, fp8)" in err


def test_validate_table_gives_the_fitted_and_the_other_rows_errors_apart(capsys):
    # trtllm-1.0 on its own file: fitted on the 112 fp8 rows, the 216 fp4 rows out of sample
    status, out, _ = run(capsys, "validate", V1, "--profile", "trtllm-1.0")
    assert status == 0
    assert "profile trtllm-1.0: 328 of 328 rows predicted" in out
    assert "mape_pct in sample (fp8, 112 rows): 15.1" in out
    assert "mape_pct out of sample (fp4, 216 rows): 21.5" in out
    # a file the profile was fitted on whole has no such lines
    _, whole, _ = run(capsys, "validate", SHIPPED, "--profile", "trtllm-0.6.1")
    assert "in sample (" not in whole and "out of sample (" not in whole
