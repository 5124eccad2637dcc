"""Measurements files: the shipped file reads; every bad cell is named by row and column."""

from pathlib import Path

import pytest

from engine.accuracy.measurements import (
    COLUMNS,
    MAX_MEASUREMENTS_BYTES,
    METRICS,
    REQUIRED,
    MeasurementsError,
    catalogue_problems,
    parse_measurements,
    read_measurements,
    to_frame,
)
from engine.catalog.reader import load_catalog

ROOT = Path(__file__).resolve().parent.parent
SHIPPED = ROOT / "data" / "measurements" / "trtllm-v0.6.1.csv"
HEADER = ",".join(REQUIRED)
GOOD = "https://example.org/run,vLLM 0.6,H100,1,Llama-3.1-8B,fp16,,8,128,128,tpot_ms,9.5"


def test_shipped_file_reads_with_its_source_on_every_row():
    rows = read_measurements([SHIPPED])
    # throughput: 16 H100 + 13 A100 + 8 L40S rows; first-token latency: 20 rows; 37 + 20 = 57
    assert len(rows) == 57
    assert all(m.source.startswith("https://github.com/NVIDIA/TensorRT-LLM") for m in rows)
    assert {m.metric for m in rows} == {"output_tokens_per_s_per_gpu", "ttft_ms"}
    assert {m.hardware for m in rows} == {"A100", "H100", "L40S"}
    first = rows[0]
    assert (first.row, first.model, first.tp, first.batch_size, first.value) == (
        1,
        "GPT-J-6B",
        1,
        1024,
        26150.0,
    )
    assert first.pp == 1  # the optional column defaults to 1


@pytest.mark.parametrize("path", sorted(SHIPPED.parent.glob("*.csv")), ids=lambda p: p.name)
def test_every_shipped_file_reads_with_an_https_source_per_row(path):
    rows = read_measurements([path])
    assert rows and all(m.source.startswith("https://") for m in rows)
    header = path.read_text().splitlines()[0].split(",")
    # every required column, and optional ones (pp, concurrency) only where the file needs them
    assert set(REQUIRED) <= set(header) <= set(COLUMNS) and len(header) == len(set(header))


def test_shipped_file_keeps_the_published_header():
    assert SHIPPED.read_text().splitlines()[0] == HEADER


def test_empty_kv_precision_means_the_weights_precision():
    (m,) = parse_measurements(f"{HEADER}\n{GOOD}\n".encode(), "mine.csv")
    assert m.kv_precision == "fp16" and m.file == "mine.csv" and m.metric in METRICS


@pytest.mark.parametrize(
    ("cell", "bad", "message"),
    [
        ("9.5", "-3", "row 1, column 'value': must be a positive number, got '-3'"),
        ("9.5", "nan", "row 1, column 'value': must be a positive number"),
        ("tpot_ms", "tpot_s", "row 1, column 'metric': unknown metric 'tpot_s'"),
        ("8,128", "8.5,128", "row 1, column 'batch_size': must be a whole number"),
        ("fp16,", "fp13,", "row 1, column 'precision': unknown precision 'fp13'"),
        ("H100,1", "H100,0", "row 1, column 'tp': must be a whole number from 1 to 64"),
    ],
)
def test_a_bad_cell_is_named_by_row_and_column(cell, bad, message):
    text = f"{HEADER}\n{GOOD}\n{GOOD.replace(cell, bad)}\n"
    with pytest.raises(MeasurementsError) as info:
        parse_measurements(text.encode(), "mine.csv")
    assert info.value.problems[0].startswith(message.replace("row 1", "row 2"))
    assert str(info.value).startswith("mine.csv: row 2")


def test_a_missing_or_foreign_column_is_named():
    text = HEADER.replace("metric", "metrics") + "\n" + GOOD + "\n"
    with pytest.raises(MeasurementsError) as info:
        parse_measurements(text.encode(), "mine.csv")
    assert info.value.problems[:2] == [
        "column 'metric' is missing",
        "column 'metrics' is not part of the schema",
    ]


def test_every_bad_row_is_reported_not_only_the_first():
    text = f"{HEADER}\n" + "\n".join(GOOD.replace("9.5", "-1") for _ in range(5)) + "\n"
    with pytest.raises(MeasurementsError) as info:
        parse_measurements(text.encode(), "mine.csv")
    assert [p.split(",")[0] for p in info.value.problems] == [f"row {i}" for i in range(1, 6)]


def test_a_short_row_is_reported():
    with pytest.raises(MeasurementsError, match="row 1: expected 12 cells"):
        parse_measurements(f"{HEADER}\nH100,1\n".encode(), "mine.csv")


def test_an_oversized_file_is_refused_before_parsing():
    with pytest.raises(MeasurementsError, match=r"larger than the limit of 1,000,000 bytes"):
        parse_measurements(b"x" * (MAX_MEASUREMENTS_BYTES + 1), "big.csv")


def test_binary_and_empty_files_are_refused():
    with pytest.raises(MeasurementsError, match="not UTF-8"):
        parse_measurements(b"\xff\xfe\x00bad", "bin.csv")
    with pytest.raises(MeasurementsError, match="no rows"):
        parse_measurements(f"{HEADER}\n".encode(), "empty.csv")


def test_unknown_model_is_named_with_its_row_and_column():
    text = f"{HEADER}\n{GOOD}\n{GOOD.replace('Llama-3.1-8B', 'Llama-9-1T')}\n"
    rows = parse_measurements(text.encode(), "mine.csv")
    found = catalogue_problems(rows, load_catalog())
    assert list(found) == [1]
    assert found[1].startswith("mine.csv row 2, column 'model': unknown model 'Llama-9-1T'")


def test_frame_has_the_schema_columns():
    df = to_frame(read_measurements([SHIPPED]))
    assert list(df.columns) == ["file", "row", *REQUIRED, "pp", "concurrency", "ep", "attention_dp"]
    assert len(df) == 57


V1 = ROOT / "data" / "measurements" / "trtllm-v1.0-perf-overview.csv"


def test_the_v1_file_reads_and_every_row_is_known():
    rows = read_measurements([V1])
    assert len(rows) == 328  # the page's results, copied unchanged
    assert {m.concurrency for m in rows} == {"max"} and {m.batch_size for m in rows} == {None}
    # 112 H100/H200 fp8 rows and 216 fp4 rows on B200, GB200 and RTX-PRO-6000, all catalogued;
    # fp4 is read as the serving model's nvfp4
    assert catalogue_problems(rows, load_catalog()) == {}
    fp4 = [m for m in rows if m.precision == "fp4"]
    assert len(fp4) == 216 and {m.hardware for m in fp4} == {"B200", "GB200", "RTX-PRO-6000"}


def test_an_unmodelled_format_reads_but_a_typo_does_not():
    # fp6 is published (Blackwell's FP6) but not a format the serving model computes: read,
    # reported and skipped; fp4 is read as nvfp4 and predicted
    text = f"{HEADER}\n{GOOD.replace('fp16,', 'fp6,fp8')}\n{GOOD.replace('fp16,', 'fp4,fp8')}\n"
    fp6, fp4 = parse_measurements(text.encode(), "mine.csv")
    assert (fp6.precision, fp6.kv_precision) == ("fp6", "fp8")
    assert (fp4.precision, fp4.kv_precision) == ("fp4", "fp8")
    found = catalogue_problems([fp6, fp4], load_catalog())
    assert list(found) == [0] and "unknown precision 'fp6'" in found[0]
    with pytest.raises(MeasurementsError, match="unknown precision 'fp13'"):
        parse_measurements(f"{HEADER}\n{GOOD.replace('fp16,', 'fp13,')}\n".encode(), "x.csv")


def test_validate_predicts_every_v1_row_and_marks_the_fitted_ones_in_sample():
    import engine

    df = engine.validate(read_measurements([V1]), "trtllm-1.0")
    assert (df["reason"] == "").all() and df["predicted"].notna().all()
    assert "Llama-4-Maverick" in set(df["model"])
    # trtllm-1.0 is fitted on the fp8 rows only (its command's --precisions fp8)
    assert "--precisions fp8" in engine.get_profile("trtllm-1.0").command
    fitted = df[df["in_sample"]]
    assert len(fitted) == engine.get_profile("trtllm-1.0").rows == 112
    assert set(fitted["precision"]) == {"fp8"}
    assert set(df.loc[~df["in_sample"], "precision"]) == {"fp4"}
    # docs/model.md ("What limits it", "Kernel transfer"): out of sample on the fp4 rows,
    # 21.5 % MAPE (28.5 % before the kernel transfer and NVLink Switch on GB200); B200 18.2 %
    # (27.0 % before), GB200 27.1 % (39.6 %)
    fp4 = df[~df["in_sample"]]
    assert fp4["ape_pct"].mean() == pytest.approx(21.5, abs=0.05)
    assert fp4.loc[fp4["hardware"] == "B200", "ape_pct"].mean() == pytest.approx(18.2, abs=0.05)
    assert fp4.loc[fp4["hardware"] == "GB200", "ape_pct"].mean() == pytest.approx(27.1, abs=0.05)
    # the profile records what validate measures there (the band of its nvfp4 predictions)
    held = engine.get_profile("trtllm-1.0").residuals["held_out_nvfp4_mape_pct"]
    assert fp4["ape_pct"].mean() == pytest.approx(held, rel=1e-9)
    # RTX PRO 6000 at pp 2 and 4 (TP 1): a batch in flight per stage (docs/model.md, "Pipeline
    # stages under load") puts the median predicted ÷ measured at 0.95 and 1.14, where one
    # batch through the stages gave 0.60 and 0.36
    rtx = fp4[(fp4["hardware"] == "RTX-PRO-6000") & (fp4["tp"] == 1)]
    ratio = rtx["predicted"] / rtx["value"]
    for pp in (2, 4):
        assert 0.85 < ratio[rtx["pp"] == pp].median() < 1.2, pp
    # another release's profile was fitted on none of them
    assert not engine.validate(read_measurements([V1]), "trtllm-0.6.1")["in_sample"].any()


def test_fit_parts_split_a_file_a_profile_was_fitted_on_in_part():
    import engine

    rows = read_measurements([V1])
    frames = {p: engine.validate(rows, p) for p in ("tutorial", "trtllm-1.0")}
    (fp8, fitted), (fp4, rest) = engine.fit_parts(frames)
    assert (fp8, fp4) == ("fp8", "fp4")
    assert (fitted.sum(), rest.sum()) == (112, 216) and not (fitted & rest).any()
    whole = engine.fit_parts({"tutorial": frames["tutorial"]})
    assert len(whole) == 1 and whole[0][0] == "" and whole[0][1].all()


MOE_HEADER = HEADER + ",concurrency,ep,attention_dp"
MOE_ROW = "https://example.org/run,TensorRT-LLM 1.0,H100,8,Qwen3-235B-A22B,fp8,fp8,,1000,1000,"
MOE_ROW += "output_tokens_per_s_per_gpu,1862.25,max"


def test_an_moe_rows_layout_is_read_from_its_ep_and_attention_dp_columns():
    text = f"{MOE_HEADER}\n{MOE_ROW},8,on\n{MOE_ROW},,\n"
    split, dense = parse_measurements(text.encode(), "moe.csv")
    assert (split.ep, split.attention_dp) == (8, True)
    assert (dense.ep, dense.attention_dp) == (1, False)  # empty: no expert parallelism, off


@pytest.mark.parametrize(
    ("cells", "message"),
    [
        ("8,maybe", "row 1, column 'attention_dp': must be on or off, got 'maybe'"),
        ("0,on", "row 1, column 'ep': must be a whole number from 1 to 64, got '0'"),
    ],
)
def test_a_bad_layout_cell_is_named(cells, message):
    with pytest.raises(MeasurementsError) as info:
        parse_measurements(f"{MOE_HEADER}\n{MOE_ROW},{cells}\n".encode(), "moe.csv")
    assert info.value.problems[0] == message


def test_the_layout_columns_change_the_prediction_as_the_serving_model_does():
    import engine

    text = f"{MOE_HEADER}\n{MOE_ROW},8,on\n{MOE_ROW},1,off\n".encode()
    df = engine.validate(parse_measurements(text, "moe.csv"), "trtllm")
    # each row is its own deployment's max-throughput run: the simulator agrees within the
    # fast path's 5 % (docs/model.md, "Serving under load")
    for predicted, (ep, dp) in zip(df["predicted"], ((8, True), (1, False)), strict=True):
        deployment = engine.Deployment(
            "Qwen3-235B-A22B",
            "H100",
            tp=8,
            ep=ep,
            attention_dp=dp,
            precision="fp8",
            kv_precision="fp8",
            profile="trtllm",
        )
        work = engine.Workload(1000, 1000, arrivals=engine.MaxThroughput(), requests=3000)
        run = engine.serve_load(deployment, work).as_dict()
        assert predicted == pytest.approx(run["output_tokens_per_s_per_gpu"], rel=0.05)
    assert df["predicted"].iloc[0] > 1.5 * df["predicted"].iloc[1]  # the MoE layout serves more
