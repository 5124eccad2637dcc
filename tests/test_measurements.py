"""Measurements files: the shipped file reads; every bad cell is named by row and column."""

from pathlib import Path

import pytest

from engine.accuracy.measurements import (
    MAX_MEASUREMENTS_BYTES,
    METRICS,
    REQUIRED,
    MeasurementsError,
    catalogue_problems,
    parse_measurements,
    read_measurements,
    to_frame,
)
from engine.catalog.load import load_catalog

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
    assert path.read_text().splitlines()[0] == HEADER


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
    assert list(df.columns) == ["file", "row", *REQUIRED, "pp", "concurrency"]
    assert len(df) == 57
