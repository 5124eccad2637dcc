"""An uploaded request trace: one row per request (arrival time, input and output tokens).

The CSV has the header `arrival_s,input_tokens,output_tokens` (any order), and optionally
`session_id` (a conversation's name, at most 100 characters; blank: none): the rows of one
session are its turns in arrival order, each later turn's input tokens holding the
conversation so far, which the simulator's prefix cache keeps (engine/load/prefix.py). One
row per request; arrival times are seconds from any origin (the trace is shifted to start at
0 and sorted by arrival, keeping the order of equal times). It is read with the same limits and
row-error style as a measurements file (engine/accuracy/measurements.py): at most 1 MB and
MAX_TRACE_ROWS rows, every problem named by its row (the first data row is row 1) and column,
the first MAX_PROBLEMS listed, a column given twice refused by name (never read as its last
cell).
"""

from __future__ import annotations

import csv
import io
import math
from dataclasses import dataclass

import numpy as np

from engine.checks import MAX_TOKENS
from engine.files import MAX_UPLOAD_BYTES, echo, repeated

TRACE_COLUMNS = ("arrival_s", "input_tokens", "output_tokens")
SESSION_COLUMN = "session_id"  # optional
MAX_SESSION_CHARS = 100
MAX_TRACE_BYTES = MAX_UPLOAD_BYTES  # the one limit of a file a user gives (engine/files.py)
MAX_TRACE_ROWS = 100_000
MAX_ARRIVAL_S = 1e9  # about 32 years
MAX_PROBLEMS = 20


class TraceError(ValueError):
    """A trace that cannot be used; `problems` lists each one (row and column)."""

    def __init__(self, label: str, problems: list[str]):
        self.problems = problems
        more = f" (and {len(problems) - 3} more)" if len(problems) > 3 else ""
        super().__init__(f"{label}: " + "; ".join(problems[:3]) + more)


@dataclass(frozen=True, eq=False)
class Trace:
    """The requests of a trace, sorted by arrival and starting at 0 s."""

    label: str
    arrival_s: np.ndarray
    input_tokens: np.ndarray  # int64
    output_tokens: np.ndarray  # int64
    session: np.ndarray | None = None  # int64 per row: its session's number (-1: none)

    def __len__(self) -> int:
        return len(self.arrival_s)


def _cell(text: str, column: str) -> tuple[float | None, str | None]:
    try:
        value = float(text)
    except ValueError:
        return None, f"must be a number, got {echo(text)}"
    if column == "arrival_s":
        if not (math.isfinite(value) and 0 <= value <= MAX_ARRIVAL_S):
            return None, f"must be seconds from 0 to {MAX_ARRIVAL_S:g}, got {echo(text)}"
        return value, None
    if not math.isfinite(value) or value != int(value) or not 1 <= value <= MAX_TOKENS:
        return None, f"must be a whole number from 1 to {MAX_TOKENS:,}, got {echo(text)}"
    return value, None


def _header(reader: csv.DictReader, label: str) -> None:
    header = [h.strip() for h in (reader.fieldnames or [])]
    missing = [c for c in TRACE_COLUMNS if c not in header]
    unknown = [c for c in header if c not in (*TRACE_COLUMNS, SESSION_COLUMN)]
    twice = repeated(header)
    if missing or unknown or twice:
        problems = [f"column {c!r} is missing" for c in missing]
        problems += [f"column {echo(c)} is not part of the schema" for c in unknown]
        problems += [
            f"column {echo(c)} is given {header.count(c)} times (give each column once)"
            for c in twice
        ]
        raise TraceError(label, [*problems, f"expected columns: {', '.join(TRACE_COLUMNS)}"])
    reader.fieldnames = header


def parse_trace(data: bytes, label: str = "trace") -> Trace:
    """Read a trace CSV given as bytes; every row checked before any is used.

    Raises:
        TraceError: too big, not UTF-8 CSV, a missing or foreign column, or bad rows (each
            named by its row and column).
    """
    if len(data) > MAX_TRACE_BYTES:
        raise TraceError(
            label,
            [f"the file is {len(data) / 1e6:.1f} MB; the limit is {MAX_TRACE_BYTES / 1e6} MB"],
        )
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise TraceError(label, ["the file is not UTF-8 text"]) from None
    try:
        return _rows(csv.DictReader(io.StringIO(text, newline="")), label)
    except csv.Error as exc:  # e.g. a cell over the csv module's field limit
        raise TraceError(label, [f"not a readable CSV file ({exc})"]) from None


def _rows(reader: csv.DictReader, label: str) -> Trace:
    _header(reader, label)
    values, problems, sessions = [], [], []
    width = len(reader.fieldnames)
    for row, raw in enumerate(reader, start=1):
        if row > MAX_TRACE_ROWS:
            raise TraceError(label, [f"more than {MAX_TRACE_ROWS:,} rows"])
        if None in raw or any(v is None for v in raw.values()):
            problems.append(f"row {row}: expected {width} cells")
            continue
        if SESSION_COLUMN in raw:
            name = raw[SESSION_COLUMN].strip()
            if len(name) > MAX_SESSION_CHARS:
                problems.append(
                    f"row {row}, column {SESSION_COLUMN!r}: at most {MAX_SESSION_CHARS} "
                    f"characters, got {len(name):,}"
                )
            sessions.append(name)
        parsed = []
        for column in TRACE_COLUMNS:
            value, message = _cell(raw[column].strip(), column)
            if message:
                problems.append(f"row {row}, column {column!r}: {message}")
            parsed.append(value)
        values.append(parsed)
    if problems:
        extra = len(problems) - MAX_PROBLEMS
        tail = [f"... and {extra} more problems"] if extra > 0 else []
        raise TraceError(label, problems[:MAX_PROBLEMS] + tail)
    if not values:
        raise TraceError(label, ["no rows"])
    session = session_numbers(sessions) if sessions else None
    return trace_from_arrays(*np.array(values, dtype=float).T, label=label, session=session)


def session_numbers(names: list[str]) -> np.ndarray:
    """Each row's session as a number (-1: a blank name, no session)."""
    codes: dict[str, int] = {}
    return np.array([codes.setdefault(n, len(codes)) if n else -1 for n in names], dtype=np.int64)


def trace_from_arrays(
    arrival_s, input_tokens, output_tokens, label: str = "trace", session=None
) -> Trace:
    """A Trace from three equal-length sequences (checked as a file's rows are), and each
    row's session number (-1: none; None: no sessions)."""
    columns = [np.asarray(c, dtype=float).ravel() for c in (arrival_s, input_tokens, output_tokens)]
    n = len(columns[0])
    if not 1 <= n <= MAX_TRACE_ROWS or any(len(c) != n for c in columns):
        raise TraceError(
            label,
            [
                f"give 1 to {MAX_TRACE_ROWS:,} requests, each with an arrival "
                "time, input and output tokens"
            ],
        )
    for name, column in zip(TRACE_COLUMNS, columns, strict=True):
        for row, value in enumerate(column, start=1):
            _, message = _cell(repr(float(value)), name)
            if message:
                raise TraceError(label, [f"row {row}, column {name!r}: {message}"])
    order = np.argsort(columns[0], kind="stable")
    arrival = columns[0][order] - columns[0][order][0]
    if session is not None:
        session = np.asarray(session, dtype=np.int64).ravel()
        if len(session) != n:
            raise TraceError(label, ["give one session number per request"])
        session = session[order]
    n_in, n_out = (c[order].astype(np.int64) for c in columns[1:])
    return Trace(
        label=label, arrival_s=arrival, input_tokens=n_in, output_tokens=n_out, session=session
    )
