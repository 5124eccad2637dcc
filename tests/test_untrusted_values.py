"""Hostile values in user files: refused when read with the row and column, never a traceback.

Each case was reproduced on the CLI and the pages: a measured value of 1e-306 made calibrate's
error ratio overflow (profile TOML refused `inf`, five stderr lines naming no row); 1e-308 made
validate print `+inf` and `nan` with numpy warnings; a column or a JSON key given twice was
read as its last value; a 4,000-digit vocab_size was echoed whole; a config.json with a UTF-8
byte order mark was refused while the CSV readers accepted one.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import engine
from engine.accuracy.calibrate import calibrate, finite_or_refused
from engine.accuracy.measurements import METRIC_RANGES, METRICS, Measurement
from engine.catalog.profiles import ALIASES, profile_from_toml, profile_to_toml
from engine.files import echo, repeated, toml_problem
from engine.training.measurements import MEGATRON_FILE, read_runs

ROOT = Path(__file__).resolve().parent.parent
SHIPPED = ROOT / "data" / "measurements" / "trtllm-v0.6.1.csv"
LLAMA = (ROOT / "tests" / "fixtures" / "configs" / "Llama-3.1-8B.json").read_text()
HEADER = "source,engine,hardware,tp,model,precision,kv_precision,batch_size,input_tokens,"
HEADER += "output_tokens,metric,value"


SERVE = ("serve", "--hardware", "H100", "--input-tokens", "64", "--output-tokens", "8")
SERVE += ("--model-config",)


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "engine", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        check=False,
    )


def one_line_error(run: subprocess.CompletedProcess) -> str:
    """The run's only stderr line (exit status 2): no traceback, no numpy warning."""
    assert run.returncode == 2, (run.returncode, run.stdout[-300:], run.stderr[-600:])
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), run.stderr
    return lines[0]


def shipped_with_value(value: str, tmp_path: Path, row: int = 3) -> Path:
    """The shipped file with data row `row`'s value replaced (its last cell)."""
    lines = SHIPPED.read_text().splitlines()
    cells = lines[row].split(",")
    lines[row] = ",".join([*cells[:-1], value])
    path = tmp_path / f"value-{value}.csv"
    path.write_text("\n".join(lines) + "\n")
    return path


# --- extreme measured values -------------------------------------------------------------------


def test_calibrate_with_a_1e_306_value_exits_2_with_one_line_naming_the_row(tmp_path):
    path = shipped_with_value("1e-306", tmp_path)
    out = tmp_path / "team.toml"
    line = one_line_error(cli("calibrate", str(path), "--out", str(out)))
    assert "row 3, column 'value': '1e-306' is outside the physical range" in line
    assert "output_tokens_per_s_per_gpu (0.001 to 100,000,000 tokens/s per GPU)" in line
    assert not out.exists()  # nothing written


def test_validate_with_a_1e_308_value_prints_no_inf_nor_nan_nor_warnings(tmp_path):
    path = shipped_with_value("1e-308", tmp_path, row=46)  # a ttft_ms row
    line = one_line_error(cli("validate", str(path)))
    assert "row 46, column 'value': '1e-308' is outside the physical range of ttft_ms" in line
    assert "inf" not in line and "nan" not in line


@pytest.mark.parametrize("metric", list(METRICS))
def test_each_metric_takes_its_physical_range_and_nothing_beyond(metric):
    low, high = METRIC_RANGES[metric]
    row = "https://x.org,vLLM,H100,1,Llama-2-7B,fp16,,8,128,128,{metric},{value}"

    def parse(value: float):
        text = f"{HEADER}\n{row.format(metric=metric, value=repr(value))}\n"
        return engine.parse_measurements(text.encode(), "r.csv")

    assert parse(low)[0].value == low and parse(high)[0].value == high  # the bounds are in
    for outside in (low / 1.001, high * 1.001, 5e-324, 1.7e308):
        with pytest.raises(engine.MeasurementsError, match="outside the physical range"):
            parse(outside)


def test_every_shipped_row_is_inside_its_metrics_range():
    for m in engine.read_measurements(engine.shipped_measurements()):
        low, high = METRIC_RANGES[m.metric]
        assert low <= m.value <= high, (m.file, m.row)


def _rows(values: list[float], model: str = "Toy") -> list[Measurement]:
    return [
        Measurement(
            row=i,
            file="toy.csv",
            source="https://example.org",
            engine="toy",
            hardware="H100",
            tp=1,
            pp=1,
            model=model,
            precision="fp16",
            kv_precision="fp16",
            batch_size=1,
            input_tokens=128,
            output_tokens=128,
            metric="ttft_ms",
            value=v,
        )
        for i, v in enumerate(values, start=1)
    ]


def test_a_fit_whose_error_overflows_is_refused_not_written_and_warns_nothing():
    # a predictor answering 1e308 ms for a 0.5 ms row: 1e308 / 0.5 overflows to inf
    def huge(rows, _assumptions):
        return np.full(len(rows), 1e308)

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a numpy RuntimeWarning would fail here
        with pytest.raises(ValueError) as info:
            calibrate(_rows([0.5, 0.6]), "tutorial", predictor=huge, cross_validate=False)
    message = str(info.value)
    assert message.startswith("the fit gave mape_pct = inf, not a finite number")
    assert "(worst row: toy.csv row 1: Toy on 1x H100 fp16, batch 1" in message
    assert "no profile was made" in message


def test_a_finite_profile_passes_and_a_nan_parameter_is_named():
    profile = engine.get_profile("trtllm")
    assert finite_or_refused(profile) is profile
    broken = type(profile)(
        name="x", assumptions=profile.assumptions, residuals={"lomo_mape_pct": float("nan")}
    )
    with pytest.raises(ValueError, match="the fit gave lomo_mape_pct = nan"):
        finite_or_refused(broken)


def test_no_held_out_row_predictable_means_no_out_of_sample_error_not_nan():
    # model B's rows can never be predicted: leaving A out leaves nothing to fit, leaving B out
    # predicts nothing; the old code wrote lomo_mape_pct = nan and then failed on TOML
    def only_a(rows, a):
        return np.array([2.0 * a.efficiency if m.model == "A" else np.nan for m in rows])

    rows = _rows([1.0, 1.1], model="A") + _rows([1.0, 1.2], model="B")
    profile = calibrate(rows, "tutorial", predictor=only_a, params=["efficiency"])
    assert "lomo_mape_pct" not in profile.residuals
    assert profile_from_toml(profile_to_toml(profile), "p.toml").residuals == profile.residuals


# The current TensorRT-LLM profile's file: `trtllm` is an alias, its Profile named `trtllm`.
TRTLLM = ALIASES["trtllm"]


def _profile_toml(replace: str, by: str) -> str:
    """A shipped serving profile with the line that sets `replace`'s key (its value as shipped,
    whatever a refit made it) changed to `by`."""
    text = (ROOT / "data" / "profiles" / f"{TRTLLM}.toml").read_text()
    key = replace.split(" = ")[0]
    line = re.search(rf"(?m)^{re.escape(key)} = .*$", text)
    assert line is not None, key
    return text[: line.start()] + by + text[line.end() :]


@pytest.mark.parametrize(
    ("line", "said"),
    [
        ("mape_pct = inf", "residuals.mape_pct must be a finite number from 0, got inf"),
        ("mape_pct = nan", "residuals.mape_pct must be a finite number from 0, got nan"),
        ("mape_pct = -3", "residuals.mape_pct must be a finite number from 0, got -3"),
        ("mape_pct = true", "residuals.mape_pct must be a finite number from 0, got True"),
        # float() of this integer raised OverflowError, which no caller caught: a traceback
        (
            "mape_pct = " + "9" * 4000,
            "residuals.mape_pct must be a finite number from 0, got " + "9" * 40 + "…",
        ),
    ],
)
def test_a_profile_tomls_residuals_are_finite_numbers_or_refused(line, said, tmp_path):
    text = _profile_toml("mape_pct = 19.406986602858723", line)
    with pytest.raises(ValueError) as info:
        profile_from_toml(text, "team.toml")
    assert str(info.value) == f"team.toml: {said}"
    path = tmp_path / "team.toml"
    path.write_text(text)
    run = cli("validate", str(SHIPPED), "--profile", str(path))
    assert one_line_error(run) == f"error: team.toml: {said}"


@pytest.mark.parametrize(
    ("replace", "by", "said"),
    [
        (
            "rows = 112",
            "rows = inf",
            "fitted_on.rows must be a whole number from 0 to 1,000,000,000",
        ),
        (
            "rows = 112",
            "rows = 1.5",
            "fitted_on.rows must be a whole number from 0 to 1,000,000,000",
        ),
        (
            'name = "trtllm-1.0"',
            'name = "trtllm-1.0"\nkind = [1]',
            "kind must be one of serving, training, got [1]",
        ),
        (
            'name = "trtllm-1.0"',
            f'name = "trtllm-1.0"\nkind = "{"k" * 3000}"',
            f"got '{'k' * 40}…'",
        ),
        ("efficiency = 0.866548", f'efficiency = "{"e" * 3000}"', f"got '{'e' * 40}…'"),
        (
            "efficiency = 0.866548",
            f"{'x' * 3000} = 1",
            f"unknown assumption '{'x' * 40}…' (known: ",
        ),
    ],
)
def test_a_profile_tomls_other_fields_are_refused_in_one_short_line(replace, by, said):
    with pytest.raises(ValueError) as info:  # a list as kind was a TypeError: a traceback
        profile_from_toml(_profile_toml(replace, by), "team.toml")
    message = str(info.value)
    assert said in message and len(message.split(" (known: ")[0]) < 120  # the list aside


# --- names given twice -------------------------------------------------------------------------


def test_a_measurement_column_given_twice_is_refused_by_name(tmp_path):
    lines = SHIPPED.read_text().splitlines()
    twice = [lines[0] + ",value", *(row + ",1" for row in lines[1:])]  # value, then value again
    with pytest.raises(engine.MeasurementsError) as info:
        engine.parse_measurements(("\n".join(twice) + "\n").encode(), "twice.csv")
    assert "column 'value' is given 2 times (give each column once)" in info.value.problems
    path = tmp_path / "twice.csv"
    path.write_text("\n".join(twice) + "\n")
    for command in ("validate", "calibrate"):
        assert "column 'value' is given 2 times" in one_line_error(cli(command, str(path)))


def test_a_trace_column_given_twice_is_refused_by_name(tmp_path):
    data = b"arrival_s,input_tokens,output_tokens,output_tokens\n0,100,10,20\n"
    with pytest.raises(engine.TraceError) as info:
        engine.parse_trace(data, "trace.csv")
    assert "column 'output_tokens' is given 2 times (give each column once)" in info.value.problems
    path = tmp_path / "trace.csv"
    path.write_bytes(data)
    run = cli("load", "--model", "Llama-3.1-8B", "--hardware", "H100", f"--trace={path}")
    assert "column 'output_tokens' is given 2 times" in one_line_error(run)


def test_a_training_measurements_column_given_twice_is_refused_by_name(tmp_path):
    lines = MEGATRON_FILE.read_text().splitlines()
    first = lines[0].split(",")[0]
    path = tmp_path / "runs.csv"
    path.write_text("\n".join([lines[0] + "," + first, *(r + ",x" for r in lines[1:])]) + "\n")
    with pytest.raises(ValueError, match=f"column '{first}' is given 2 times"):
        read_runs(path)


def _config(**replace: str) -> str:
    """Llama 3.1 8B's config.json with the first occurrence of each key given twice before
    itself (`hidden_size` first at 1, then at 4096: json keeps 4096, silently)."""
    text = LLAMA
    for key, value in replace.items():
        text = text.replace(f'"{key}"', f'"{key}": {value}, "{key}"', 1)
    return text


@pytest.mark.parametrize("key", ["hidden_size", "original_max_position_embeddings"])
def test_a_config_key_given_twice_is_refused_by_name(key, tmp_path):
    text = _config(**{key: "1"})
    with pytest.raises(ValueError) as info:
        engine.model_from_config(text)
    assert f"config.json: the key '{key}' is given twice in one object" in str(info.value)
    path = tmp_path / "config.json"
    path.write_text(text)
    run = cli(*SERVE, str(path))
    assert f"the key '{key}' is given twice" in one_line_error(run)


def test_the_page_reads_a_config_json_as_the_engine_does():
    from ui.widgets import model_config as mc

    with pytest.raises(ValueError, match="the key 'hidden_size' is given twice"):
        mc.compact(_config(hidden_size="1"))
    bom = mc.read_upload(("\ufeff" + LLAMA).encode())
    assert mc.compact(bom) == mc.compact(LLAMA)  # a byte order mark is dropped, as in a CSV
    assert mc.compact("\ufeff" + LLAMA) == mc.compact(LLAMA)  # pasted with one too


def test_profile_and_catalogue_toml_refuse_a_key_given_twice_naming_its_line():
    text = (ROOT / "data" / "profiles" / "tutorial.toml").read_text()
    twice = text.replace("[assumptions]\n", "[assumptions]\nlink_efficiency = 0.3\n", 1)
    twice = twice.replace("[assumptions]\n", "[assumptions]\nlink_efficiency = 0.4\n", 1)
    with pytest.raises(ValueError, match=r"Cannot overwrite a value .*: 'link_efficiency = 0.3'"):
        profile_from_toml(twice, "twice.toml")
    team = (ROOT / "tests" / "fixtures" / "team_catalog.toml").read_text()
    team = team.replace('vendor = "NVIDIA"', 'vendor = "NVIDIA"\nvendor = "AMD"', 1)
    _, problems = engine.read_catalog_bytes(team.encode(), "upload: team.toml")
    assert len(problems) == 1 and "Cannot overwrite a value" in str(problems[0])
    assert "'vendor = \"AMD\"'" in str(problems[0])


# --- echoes, byte order marks ------------------------------------------------------------------


def test_a_4000_digit_vocab_size_is_echoed_cut_at_40_characters(tmp_path):
    config = json.loads(LLAMA) | {"vocab_size": int("9" * 4000)}
    with pytest.raises(ValueError) as info:
        engine.model_from_config(config)
    message = str(info.value)
    assert message.endswith("got " + "9" * 40 + "…") and len(message) < 150
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    line = one_line_error(cli(*SERVE, str(path)))
    assert "9" * 41 not in line and len(line) < 160


def test_a_long_cell_is_echoed_cut_in_measurements_and_traces():
    cell = "7" * 5000 + "x"
    text = f"{HEADER}\nhttps://x.org,vLLM,H100,1,Llama-2-7B,fp16,,8,128,128,ttft_ms,{cell}\n"
    with pytest.raises(engine.MeasurementsError) as info:
        engine.parse_measurements(text.encode(), "m.csv")
    assert info.value.problems == [f"row 1, column 'value': must be a number, got '{'7' * 40}…'"]
    with pytest.raises(engine.TraceError) as info:
        engine.parse_trace(f"arrival_s,input_tokens,output_tokens\n{cell},1,1\n".encode())
    assert info.value.problems[0].endswith(f"got '{'7' * 40}…'")


def test_a_config_json_with_a_byte_order_mark_is_read_like_the_csvs(tmp_path):
    plain_spec = engine.model_from_config(LLAMA, id="x")
    path = tmp_path / "config.json"
    path.write_bytes(b"\xef\xbb\xbf" + LLAMA.encode())
    assert engine.model_from_config(path, id="x") == plain_spec
    assert engine.model_from_config("\ufeff" + LLAMA, id="x") == plain_spec
    (tmp_path / "plain.json").write_text(LLAMA)
    runs = [
        cli(*SERVE, str(tmp_path / f), "--format", "json") for f in ("config.json", "plain.json")
    ]
    assert [r.returncode for r in runs] == [0, 0], runs[0].stderr
    with_bom, without = (json.loads(r.stdout) for r in runs)
    assert with_bom["ttft_ms"] == without["ttft_ms"] and with_bom["tpot_ms"] == without["tpot_ms"]
    # the profile and catalogue TOML readers drop one too
    toml = b"\xef\xbb\xbf" + (ROOT / "data" / "profiles" / f"{TRTLLM}.toml").read_bytes()
    assert (
        profile_from_toml(toml, f"{TRTLLM}.toml").values() == engine.get_profile("trtllm").values()
    )
    team = b"\xef\xbb\xbf" + (ROOT / "tests" / "fixtures" / "team_catalog.toml").read_bytes()
    assert engine.read_catalog_bytes(team, "upload: team.toml")[1] == []


def test_echo_repeated_and_toml_problem_by_hand():
    assert echo("-4") == "'-4'" and echo(12) == "12"
    assert echo("a" * 41) == "'" + "a" * 40 + "…'" and echo(10**45) == "1" + "0" * 39 + "…"
    assert repeated(["a", "b", "a", "c", "b", "a"]) == ["a", "b"] and repeated("abc") == []
    problem = toml_problem(ValueError("Cannot overwrite a value (at line 2, column 3)"), "a=1\na=2")
    assert problem.endswith("(at line 2, column 3): 'a=2'")
    assert toml_problem(ValueError("Invalid value (at end of document)"), "a=") == (
        "Invalid value (at end of document)"
    )
