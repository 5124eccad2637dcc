"""Measured serving results as data: the CSV schema, read and checked row by row.

A measurements file is what a team measured on its own stack (or what a vendor published):
one row per scenario and metric, with the source of every row. The schema and the metrics are
described in docs/model.md ("Accuracy"). Every problem is reported with its row (the first data
row is row 1; the header is line 1 of the file) and its column, so a user can fix the file. A column
given twice is refused by name (never read as its last cell), and a value outside its metric's
physical range (METRIC_RANGES) is refused when read: a 1e-306 ms latency would make every error
derived from it overflow.

A row measured under load has no static batch: its `batch_size` is empty and the optional
`concurrency` column says how the benchmark drove the server, a whole number of closed-loop
clients or `max` (every request queued at once: a max-throughput run; an empty concurrency with
an empty batch means the same). engine/accuracy/rows.py predicts such rows with the load
model's fast path (engine/load/analytic.py).
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from engine.catalog.formats import ALIASES, FORMATS, check_format, check_kv_format, number_format
from engine.catalog.reader import Catalog
from engine.catalog.specs import check_precision
from engine.files import MAX_UPLOAD_BYTES, FileLimitError, echo, read_bounded, repeated

if TYPE_CHECKING:
    import pandas as pd

REQUIRED = (
    "source",
    "engine",
    "hardware",
    "tp",
    "model",
    "precision",
    "kv_precision",
    "batch_size",
    "input_tokens",
    "output_tokens",
    "metric",
    "value",
)
OPTIONAL = ("pp", "concurrency", "ep", "attention_dp")
MAX_CONCURRENCY = 100_000  # closed-loop clients (engine/load/workload.py's request limit)
COLUMNS = REQUIRED + OPTIONAL
# metric -> unit of its value (the name carries it too).
METRICS = {
    "output_tokens_per_s_per_gpu": "tokens/s per GPU",
    "ttft_ms": "ms",
    "tpot_ms": "ms",
    "e2e_latency_ms": "ms",
}
# metric -> (lowest, highest) physical value in its unit. A latency under 1 µs is below one GPU
# kernel launch (a few µs) and one over 1e9 ms (11.6 days) is no benchmark; under 0.001 tokens/s
# per GPU (one token in 17 minutes) nothing is served, and 1e8 tokens/s per GPU is over ten
# times a GPT-2-sized model's compute bound on any catalogued GPU (2 FLOP per parameter per
# token). Inside these ranges predicted / measured stays finite for any prediction.
METRIC_RANGES = {
    "output_tokens_per_s_per_gpu": (1e-3, 1e8),
    "ttft_ms": (1e-3, 1e9),
    "tpot_ms": (1e-3, 1e9),
    "e2e_latency_ms": (1e-3, 1e9),
}
# What each column holds, in words and units (data/measurements/README.md, "Schema").
COLUMN_MEANINGS = {
    "source": "where the number comes from: a URL, on every row",
    "engine": "the serving software and its release, e.g. TensorRT-LLM 0.6.1",
    "hardware": "an accelerator id of the catalogue, e.g. H100 (python -m engine list hardware)",
    "tp": "tensor-parallel degree: a whole number from 1 to 64",
    "model": "a model id of the catalogue with shapes, e.g. Llama-2-7B",
    "precision": "weights and compute: fp32, tf32, fp16, bf16, fp8, int8 or int4",
    "kv_precision": "the KV cache's precision; empty: the same as precision",
    "batch_size": "sequences in the static batch; empty for a run under load",
    "input_tokens": "prompt tokens per sequence",
    "output_tokens": "generated tokens per sequence",
    "metric": "what was measured: one of the metrics below",
    "value": "the measured number in the metric's unit (positive, within its physical range)",
    "pp": "optional: pipeline-parallel degree (default 1)",
    "concurrency": "optional, for a run under load (empty batch_size): closed-loop clients "
    "(1 to 100,000) or max (a max-throughput run); empty on static-batch rows",
    "ep": "optional: expert-parallel ranks among the tp devices of an MoE model (default 1)",
    "attention_dp": "optional: on when attention ran data-parallel over the tp devices "
    "(MoE models; default off)",
}
DATA_DIR = Path(__file__).resolve().parents[2] / "data" / "measurements"
MAX_MEASUREMENTS_BYTES = MAX_UPLOAD_BYTES  # refused unread above this (engine/files.py)
MAX_ROWS = 5_000
MAX_PROBLEMS = 20  # the first problems are listed; the count says how many more
# Number formats that published rows name but the serving model lacks (engine/catalog/
# formats.py): such a row is read, reported and skipped like a row naming an accelerator the
# catalogue lacks. The model's own formats (nvfp4, mxfp4, w4a16; fp4 and int4 read as nvfp4 and
# w4a16) are predicted.
UNMODELLED_PRECISIONS = ("fp6", "mxfp6", "w4a8")
_WHOLE = {"tp": 64, "pp": 64, "ep": 64, "batch_size": 1_000_000, "input_tokens": 10_000_000}
_WHOLE["output_tokens"] = 10_000_000


class MeasurementsError(ValueError):
    """A measurements file that cannot be used; `problems` lists each one (row and column)."""

    def __init__(self, label: str, problems: list[str]):
        self.problems = problems
        more = f" (and {len(problems) - 3} more)" if len(problems) > 3 else ""
        super().__init__(f"{label}: " + "; ".join(problems[:3]) + more)


@dataclass(frozen=True, slots=True)
class Measurement:
    """One measured number: a serving scenario, a metric and its value in the metric's unit."""

    row: int  # 1-based data row in its file
    file: str
    source: str
    engine: str
    hardware: str
    tp: int
    pp: int
    model: str
    precision: str
    kv_precision: str
    batch_size: int | None  # None: measured under load (see `concurrency`)
    input_tokens: int
    output_tokens: int
    metric: str
    value: float
    concurrency: int | str | None = None  # closed-loop clients, "max", or None (a static batch)
    ep: int = 1  # expert-parallel ranks among the tp devices (MoE models)
    attention_dp: bool = False  # attention data-parallel over the tp devices (MoE models)

    def as_dict(self) -> dict[str, object]:
        return asdict(self)

    @property
    def under_load(self) -> bool:
        """Measured under load (no static batch): predicted by the load model."""
        return self.batch_size is None


def _whole(text: str, column: str) -> tuple[int | None, str | None]:
    try:
        value = float(text)
    except ValueError:
        return None, f"must be a whole number, got {echo(text)}"
    if not math.isfinite(value) or value != int(value) or not 1 <= value <= _WHOLE[column]:
        return None, f"must be a whole number from 1 to {_WHOLE[column]:,}, got {echo(text)}"
    return int(value), None


_SWITCH = {"on": True, "true": True, "1": True, "off": False, "false": False, "0": False}


def _switch(text: str) -> tuple[bool, str | None]:
    """on/off (true/false, 1/0); empty: off."""
    value = _SWITCH.get(text.lower() or "off")
    return (False, f"must be on or off, got {echo(text)}") if value is None else (value, None)


def _concurrency(text: str, batch: int | None) -> tuple[int | str | None, str | None]:
    """A load row's clients ("max" when empty); nothing for a static-batch row."""
    if batch is not None:
        return None, (
            "give batch_size (a static batch) or concurrency (a run under load), not both"
        ) if text else None
    if not text or text.lower() == "max":
        return "max", None
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value != int(value) or not 1 <= value <= MAX_CONCURRENCY:
        return None, (
            f"must be a whole number of clients from 1 to {MAX_CONCURRENCY:,} or "
            f"'max', got {echo(text)}"
        )
    return int(value), None


def _measured(text: str, metric: str) -> tuple[float | None, str | None]:
    """A positive number, within the metric's physical range when the metric is known."""
    try:
        value = float(text)
    except ValueError:
        return None, f"must be a number, got {echo(text)}"
    if not (math.isfinite(value) and value > 0):
        return None, f"must be a positive number, got {echo(text)}"
    if metric in METRIC_RANGES:
        low, high = METRIC_RANGES[metric]
        if not low <= value <= high:
            return None, (
                f"{echo(text)} is outside the physical range of {metric} "
                f"({low:,.15g} to {high:,.15g} {METRICS[metric]})"
            )
    return value, None


def _precision(text: str) -> str:
    """A precision's canonical name, a number format's (or the name read as one, such as fp4),
    or an unmodelled format's (skipped when predicted); ValueError for anything else."""
    name = text.strip().lower()
    if name in UNMODELLED_PRECISIONS:
        return name
    try:
        return check_precision(text)
    except ValueError:
        if name in FORMATS or name in ALIASES:
            return check_format(name)
        raise


def _parse_row(cells: dict[str, str], row: int, file: str) -> tuple[Measurement | None, list]:
    out: dict[str, object] = {"row": row, "file": file}
    problems = []

    def bad(column: str, message: str) -> None:
        problems.append(f"row {row}, column {column!r}: {message}")

    for column in ("source", "engine", "hardware", "model"):
        out[column] = cells[column]
        if not cells[column]:
            bad(column, "is empty")
    for column in ("tp", "pp", "ep", "batch_size", "input_tokens", "output_tokens"):
        text = cells.get(column) or "1" if column in ("pp", "ep") else cells[column]
        if column == "batch_size" and not text:
            out[column] = None  # measured under load: `concurrency` says how
            continue
        value, message = _whole(text, column)
        out[column] = value
        if message:
            bad(column, message)
    out["attention_dp"], message = _switch(cells.get("attention_dp") or "")
    if message:
        bad("attention_dp", message)
    out["concurrency"], message = _concurrency(cells.get("concurrency") or "", out["batch_size"])
    if message:
        bad("concurrency", message)
    for column in ("precision", "kv_precision"):
        text = cells[column] or (cells["precision"] if column == "kv_precision" else "")
        try:
            out[column] = _precision(text)
        except ValueError as exc:
            bad(column, str(exc))
    out["metric"] = cells["metric"]
    if cells["metric"] not in METRICS:
        bad("metric", f"unknown metric {echo(cells['metric'])} (known: {', '.join(METRICS)})")
    out["value"], message = _measured(cells["value"], cells["metric"])
    if message:
        bad("value", message)
    return (None if problems else Measurement(**out)), problems


def parse_measurements(data: bytes, label: str = "measurements") -> tuple[Measurement, ...]:
    """Read a measurements CSV given as bytes; every row checked before any is returned.

    Args:
        data: the file's bytes (UTF-8; at most MAX_MEASUREMENTS_BYTES).
        label: the file's name, used in messages and kept on every row.

    Raises:
        MeasurementsError: too big, not UTF-8 CSV, a missing or unknown column, or bad rows;
            the problems name the row and column.
    """
    if len(data) > MAX_MEASUREMENTS_BYTES:
        raise MeasurementsError(
            label, [f"the file is larger than the limit of {MAX_MEASUREMENTS_BYTES:,} bytes"]
        )
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise MeasurementsError(label, ["the file is not UTF-8 text"]) from None
    reader = csv.DictReader(io.StringIO(text, newline=""))
    header = _header(reader, label)
    rows, problems = [], []
    for row, raw in _numbered(reader, label):
        if row > MAX_ROWS:
            raise MeasurementsError(label, [f"more than {MAX_ROWS:,} rows"])
        if None in raw or any(v is None for v in raw.values()):
            problems.append(f"row {row}: expected {len(header)} cells")
            continue
        cells = {k: v.strip() for k, v in raw.items()}
        measurement, found = _parse_row(cells, row, label)
        problems += found
        if measurement is not None:
            rows.append(measurement)
    if problems:
        raise MeasurementsError(label, problems[:MAX_PROBLEMS] + _more(problems))
    if not rows:
        raise MeasurementsError(label, ["no rows"])
    return tuple(rows)


def _numbered(reader: csv.DictReader, label: str):
    """(row number, cells) of each data row; a row the csv module cannot read (a cell longer
    than its limit of 131,072 characters, a stray quote) is a row error, not a traceback."""
    row = 0
    while True:
        row += 1
        try:
            raw = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            raise MeasurementsError(label, [f"row {row}: not readable as CSV ({exc})"]) from None
        yield row, raw


def _header(reader: csv.DictReader, label: str) -> list[str]:
    """The checked header (every required column once, nothing foreign), set on the reader."""
    try:
        names = reader.fieldnames or []
    except csv.Error as exc:
        raise MeasurementsError(label, [f"the header is not readable as CSV ({exc})"]) from None
    header = [h.strip() for h in names]
    missing = [c for c in REQUIRED if c not in header]
    unknown = [c for c in header if c not in COLUMNS]
    twice = repeated(header)
    if missing or unknown or twice:
        problems = [f"column {c!r} is missing" for c in missing]
        problems += [f"column {echo(c)} is not part of the schema" for c in unknown]
        problems += [
            f"column {echo(c)} is given {header.count(c)} times (give each column once)"
            for c in twice
        ]
        raise MeasurementsError(label, [*problems, f"expected columns: {', '.join(REQUIRED)}"])
    reader.fieldnames = header
    return header


def _more(problems: list[str]) -> list[str]:
    extra = len(problems) - MAX_PROBLEMS
    return [f"... and {extra} more problems"] if extra > 0 else []


def read_measurements(paths: Iterable[str | Path]) -> tuple[Measurement, ...]:
    """Read and check one or more measurements files (their rows, in order)."""
    rows: list[Measurement] = []
    for path in map(Path, paths):
        try:
            data = read_bounded(path, MAX_MEASUREMENTS_BYTES, path.name)
        except FileLimitError as exc:
            raise MeasurementsError(path.name, [str(exc).split(": ", 1)[1]]) from None
        rows += parse_measurements(data, path.name)
    if not rows:
        raise MeasurementsError("measurements", ["no file given"])
    return tuple(rows)


def shipped_measurements() -> tuple[Path, ...]:
    """The serving measurements files the project ships (data/measurements/*.csv), by name."""
    return tuple(sorted(DATA_DIR.glob("*.csv")))


def measurements_template() -> str:
    """A measurements file to start from: every column (the optional ones last) and, for each
    metric the shipped files hold, their first row of it (a real result, with its source)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(COLUMNS)
    rows = read_measurements(shipped_measurements())
    for metric in METRICS:
        m = next((m for m in rows if m.metric == metric), None)
        if m is not None:
            cells = m.as_dict()
            writer.writerow(["" if cells[c] is None else cells[c] for c in COLUMNS])
    return out.getvalue()


def catalogue_problems(rows: Iterable[Measurement], catalog: Catalog) -> dict[int, str]:
    """Rows whose model, accelerator or number format the catalogue does not know: index ->
    message (such rows are skipped when predicted)."""
    found = {}
    for i, m in enumerate(rows):
        for column, find in (
            ("model", catalog.find_model),
            ("hardware", catalog.find_hardware),
            ("precision", number_format),
            ("kv_precision", _kv_format),
        ):
            try:
                find(getattr(m, column))
            except (KeyError, ValueError) as exc:
                found[i] = f"{m.file} row {m.row}, column {column!r}: {str(exc).strip(chr(34))}"
                break
    return found


def _kv_format(name: str) -> str:
    """A KV-cache format the serving model computes, or ValueError."""
    return check_kv_format(name, None)


def to_frame(rows: Iterable[Measurement]) -> pd.DataFrame:
    """The rows as a DataFrame with the schema's columns (plus file and row)."""
    import pandas as pd  # loaded on first use, keeping `import engine` fast

    return pd.DataFrame([m.as_dict() for m in rows], columns=["file", "row", *COLUMNS])


def ape_summary(errors: Iterable[float]) -> dict[str, float]:
    """MAPE, median and largest absolute percentage error, in %, of `errors` (pred/meas - 1)."""
    with np.errstate(over="ignore"):  # an error near the float limit is inf, said not warned
        ape = np.abs(np.asarray(list(errors), dtype=float)) * 100.0
    if ape.size == 0:
        return {"mape_pct": float("nan"), "median_ape_pct": float("nan"), "max_ape_pct": 0.0}
    return {
        "mape_pct": float(ape.mean()),
        "median_ape_pct": float(np.median(ape)),
        "max_ape_pct": float(ape.max()),
    }


def describe(m: Measurement) -> str:
    """A one-line scenario description of a measurement row (for the worst-rows lists)."""
    devices = f"{m.tp}x {m.hardware}" + (f" pp{m.pp}" if m.pp > 1 else "")
    if m.batch_size is not None:
        how = f"batch {m.batch_size}"
    else:
        how = "max throughput" if m.concurrency == "max" else f"concurrency {m.concurrency}"
    return (
        f"{m.file} row {m.row}: {m.model} on {devices} {m.precision}, {how}, "
        f"{m.input_tokens}/{m.output_tokens} tokens, {m.metric}"
    )
