"""`serve_sweep`: the serving model over a cartesian grid of scenarios, vectorised.

Every row equals `engine.serve` of the same scenario: the same kernel (engine/serving/kernel.py)
folds every deployment at once on numpy arrays, then evaluates the grid in chunks, with no
Python loop over rows or decode steps (docs/model.md, "Serving model"). Columns are
`ServeResult.as_dict()`'s keys with the assumptions flattened (user names and units) and the
warnings joined by "; ".
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import TYPE_CHECKING

import numpy as np

from engine.assumptions import ASSUMPTION_NAMES
from engine.catalog.resolve import resolve_hardware
from engine.catalog.shapes import Shapes, shapes_of
from engine.checks import MAX_BATCH, MAX_DEGREE, MAX_TOKENS, as_list, check_whole_numbers
from engine.report.columns import ASSUMPTION_CSV, SERVE_CSV_HEADERS
from engine.report.frames import categorical, code_dtype, constant, full
from engine.serving import inputs as si
from engine.serving.kernel import Device, Efficiencies, evaluate, fold
from engine.serving.operators import Layout
from engine.serving.serve import BOUNDS, METRICS, WARNINGS, warning_list

if TYPE_CHECKING:  # pandas loads on the first sweep, keeping `import engine` fast
    import pandas as pd

MAX_SERVE_SWEEP_ROWS = 2_000_000  # refused before any work; 1 M rows: about 0.23 GiB (bench)
CHUNK_ROWS = 131_072  # rows the kernel evaluates at once (its temporaries: about 1 MB each)
AXES = ("model", "hardware", "precision", "tp", "pp", "batch_size", "input_tokens",
        "output_tokens")  # fmt: skip


TOPS = (MAX_DEGREE, MAX_DEGREE, MAX_BATCH, MAX_TOKENS, MAX_TOKENS)  # tp, pp, batch, I, O


def _axes(models, hardware, precisions, tp, pp, batch_sizes, input_tokens, output_tokens):
    lists = [as_list(v, n) for v, n in zip(
        (models, hardware, precisions, tp, pp, batch_sizes, input_tokens, output_tokens), AXES,
        strict=True)]  # fmt: skip
    rows = int(np.prod([len(v) for v in lists], dtype=float))
    if rows > MAX_SERVE_SWEEP_ROWS:
        raise ValueError(
            f"the grid has {rows:,} scenarios; at most {MAX_SERVE_SWEEP_ROWS:,} are computed "
            "at once (narrow an axis)"
        )
    return lists


def _inputs(lists, kv_precision, assumptions, profile, overrides, catalog) -> dict:
    """Resolve and check every axis; per-model and per-(hardware, precision) figures."""
    ms, hs, precs = lists[0], lists[1], lists[2]
    setups = [si.setup(p, kv_precision, assumptions, profile, overrides) for p in precs]
    models = [si.llm_architecture(m, catalog) for m in ms]
    hws = [resolve_hardware(h, catalog) for h in hs]
    counts = [check_whole_numbers(as_list(v, n), n, high=top)
              for v, n, top in zip(lists[3:], AXES[3:], TOPS, strict=True)]  # fmt: skip
    tps, pps = counts[0], counts[1]
    for (name, arch), t, p in ((m, t, p) for m in models for t in tps for p in pps):
        si.check_parallel(name, arch, int(t), int(p))
    for hw, t, p in ((h, t, p) for h in hws for t in tps for p in pps):
        si.check_devices(hw, int(t), int(p))
    devices = [si.device_values(h, st.precision, st.assumptions) for h in hws for st in setups]
    columns = zip(*(device for device, _ in devices), strict=True)
    etas = [si.efficiencies(st.assumptions, used) for st, (_, used) in
            zip(setups * len(hws), devices, strict=True)]  # fmt: skip
    layouts = [si.layout(1, 1, st.precision, st.kv_precision) for st in setups]
    return {
        "setups": setups,
        "names": [name for name, _ in models],
        "hw_ids": [h.id for h in hws],
        "shape": Shapes.stack([shapes_of(arch) for _, arch in models]),
        "device": Device(*(np.array(column) for column in columns)),
        "efficiencies": Efficiencies(*(np.array(c) for c in zip(*etas, strict=True))),
        "peak_precision": [used for _, used in devices],
        "sizes": [np.array([lay[i] for lay in layouts]) for i in (2, 3, 4)],
        "axes": counts,
    }


def _axis(values: np.ndarray, axis: int) -> np.ndarray:
    """`values` laid along `axis` of the 8-axis grid (size 1 elsewhere), for broadcasting."""
    shape = [1] * len(AXES)
    shape[axis] = -1
    return np.asarray(values).reshape(shape)


def chunks(shape: tuple) -> Iterator[tuple[int, tuple[slice, ...]]]:
    """Sub-grids of at most about CHUNK_ROWS rows in row order: (first row, a slice per axis).

    The innermost axes whose rows fit stay whole, the axis before them is cut into pieces, and
    every index of the axes before that starts new chunks (one long axis is cut too).
    """
    cut = len(shape) - 1
    while cut > 0 and math.prod(shape[cut:]) <= CHUNK_ROWS:
        cut -= 1  # the grid fits: cut = 0 and one piece holds the whole first axis
    inner = math.prod(shape[cut + 1 :])
    step, whole = max(1, CHUNK_ROWS // inner), (slice(None),) * (len(shape) - cut - 1)
    for outer in np.ndindex(*shape[:cut]):
        base = int(np.ravel_multi_index(outer, shape[:cut])) if cut else 0
        for start in range(0, shape[cut], step):
            pieces = (*(slice(i, i + 1) for i in outer), slice(start, start + step), *whole)
            yield (base * shape[cut] + start) * inner, pieces


def _laid(inp: dict, shape: tuple) -> tuple:
    """The kernel's inputs, each laid along the axes it depends on only (a decode step's
    weights never see the token axes): shapes, device, efficiencies, layout and (B, I, O)."""
    s = inp["shape"].map(lambda v: _axis(v, 0))
    per_pair = (1, shape[1], shape[2], 1, 1, 1, 1, 1)  # one value per (hardware, precision)
    dev = Device(*(v.reshape(per_pair) for v in inp["device"]))
    eta = Efficiencies(*(v.reshape(per_pair) for v in inp["efficiencies"]))
    tps, pps, bs, ins, outs = inp["axes"]
    lay = Layout(_axis(tps, 3), _axis(pps, 4), *(_axis(v, 2) for v in inp["sizes"]))
    return s, dev, eta, lay, (_axis(bs, 5), _axis(ins, 6), _axis(outs, 7))


def _cut(x, pieces: tuple):
    """Every array in `x` (an array, or Shapes, dicts and tuples of them: a Folded) on one chunk; an
    axis an array does not depend on stays size 1."""
    if isinstance(x, np.ndarray):
        return x[tuple(p if n > 1 else slice(None) for p, n in zip(pieces, x.shape, strict=True))]
    if isinstance(x, dict):
        return {k: _cut(v, pieces) for k, v in x.items()}
    if isinstance(x, tuple):
        items = (_cut(v, pieces) for v in x)
        return type(x)(*items) if hasattr(x, "_fields") else tuple(items)
    if isinstance(x, Shapes):
        return x.map(lambda v: _cut(v, pieces))
    return x


def _compute(inp: dict, shape: tuple) -> dict[str, np.ndarray]:
    """Every metric for every row: the kernel runs chunk by chunk (small temporaries, reused)
    and writes into one preallocated flat column per metric."""
    rows = math.prod(shape)
    terms = [(term, scale) for _, term, scale in METRICS] + [("warning_bits", None)]
    out = {term: np.empty(rows, _dtype(term, scale)) for term, scale in terms}
    s, dev, eta, lay, request = _laid(inp, shape)
    with np.errstate(all="ignore"):  # O = 1 rows divide by zero on purpose (NaN means none)
        folded = fold(s, dev, lay, eta, np)  # once: over the deployment axes only
        for first, pieces in chunks(shape):
            sub = tuple(len(range(n)[p]) for n, p in zip(shape, pieces, strict=True))
            B, n_in, n_out = (_cut(v, pieces) for v in request)
            t = evaluate(_cut(folded, pieces), B, n_in, n_out, np)
            last = first + math.prod(sub)
            for term, scale in terms:
                view = out[term][first:last].reshape(sub)  # a view: no copy
                if scale in (None, 1.0):
                    view[...] = t[term]
                else:
                    np.multiply(t[term], scale, out=view)
    return out


def _dtype(term: str, scale) -> type:
    """Numbers float64; bound codes int8; fits_in_memory bool; warning_bits: the codes."""
    kinds = {"fits_in_memory": np.bool_, "max_batch_size": np.int64,
             "warning_bits": code_dtype(1 << len(WARNINGS))}  # fmt: skip
    return np.float64 if scale is not None else kinds.get(term, np.int8)


def serve_sweep(
    models,
    hardware,
    *,
    tp=1,
    pp=1,
    batch_sizes=1,
    input_tokens,
    output_tokens,
    precisions="fp16",
    kv_precision: str | None = None,
    profile: str = "tutorial",
    assumptions=None,
    catalog=None,
    **overrides: object,
) -> pd.DataFrame:
    """`serve` for every model × hardware × precision × tp × pp × batch × input × output.

    Args:
        models, hardware: ids or specs, one or a list (models need shapes, as for `serve`).
        tp, pp, batch_sizes, input_tokens, output_tokens: whole numbers, one or a list.
        precisions: one or a list; kv_precision: one for every row (None: each precision).
        profile, assumptions, catalog, **overrides: as for `serve`.

    Returns:
        At most MAX_SERVE_SWEEP_ROWS rows in the AXES order (the last varies fastest).
    """
    import pandas as pd

    lists = _axes(models, hardware, precisions, tp, pp, batch_sizes, input_tokens, output_tokens)
    inp = _inputs(lists, kv_precision, assumptions, profile, overrides, catalog)
    shape = tuple(len(v) for v in lists)
    a = inp["setups"][0].assumptions
    t = _compute(inp, shape)
    cols = _id_columns(inp, shape) | _metric_columns(t)
    cols |= _assumption_columns(a, len(t["ttft_s"]))
    notes = inp["setups"][0].notes
    texts = ["; ".join(warning_list(b, notes)) for b in range(1 << len(WARNINGS))]
    cols["warnings"] = pd.Categorical.from_codes(t["warning_bits"], texts)  # texts are unique
    return pd.DataFrame(cols, copy=False)


def _assumption_columns(a, rows: int) -> dict:
    """Every assumption as a constant column (None, the catalogue's figure: NaN); the numbers
    cost no memory per row (grid_columns.constant)."""
    return {
        name: categorical(np.zeros(1, dtype=np.intp), [value], (rows,))
        if isinstance(value, str)
        else constant(np.nan if value is None else float(value), rows)
        for name, value in a.as_dict().items()
    }


def _id_columns(inp: dict, shape: tuple) -> dict:
    setups = inp["setups"]
    tps, pps, bs, ins, outs = (v.astype(np.int64) for v in inp["axes"])
    hp = np.arange(shape[1] * shape[2]).reshape((1, shape[1], shape[2]) + (1,) * 5)
    precision_codes = _axis(np.arange(shape[2]), 2)  # hp, codes: one small array per axis
    return {  # each column written once from its axis, no full-grid temporary
        "model": categorical(_axis(np.arange(shape[0]), 0), inp["names"], shape),
        "hardware": categorical(_axis(np.arange(shape[1]), 1), inp["hw_ids"], shape),
        "devices": full(_axis(tps, 3) * _axis(pps, 4), shape, np.int64),
        "tp": full(_axis(tps, 3), shape, np.int64),
        "pp": full(_axis(pps, 4), shape, np.int64),
        "batch_size": full(_axis(bs, 5), shape, np.int64),
        "input_tokens": full(_axis(ins, 6), shape, np.int64),
        "output_tokens": full(_axis(outs, 7), shape, np.int64),
        "precision": categorical(precision_codes, [st.precision for st in setups], shape),
        "kv_precision": categorical(precision_codes, [st.kv_precision for st in setups], shape),
        "peak_precision": categorical(hp, inp["peak_precision"], shape),
        "profile": categorical(np.zeros(1, dtype=np.intp), [setups[0].profile], shape),
    }


def _metric_columns(t: dict) -> dict:
    import pandas as pd

    return {
        key: pd.Categorical.from_codes(t[term], BOUNDS) if key.endswith("bottleneck") else t[term]
        for key, term, _ in METRICS
    }


def serve_csv(df: pd.DataFrame) -> str:
    """A serve_sweep frame as CSV text with unit-bearing headers, every row self-contained."""
    from engine.report.export import write_csv

    return write_csv(df.rename(columns=ASSUMPTION_CSV | SERVE_CSV_HEADERS))


def serve_records(df: pd.DataFrame) -> list[dict[str, object]]:
    """A serve_sweep frame as `ServeResult.as_dict()` objects: assumptions nested, warnings a
    list, NaN as None (JSON-ready)."""
    names = list(ASSUMPTION_NAMES)
    out = []
    for row in df.to_dict(orient="records"):
        record = {k: _plain(row[k]) for k in df.columns if k not in names and k != "warnings"}
        record["assumptions"] = {k: _plain(row[k]) for k in names}
        record["warnings"] = row["warnings"].split("; ") if row["warnings"] else []
        out.append(record)
    return out


def _plain(value):
    """numpy scalars to Python values; NaN (undefined) to None."""
    value = value.item() if hasattr(value, "item") else value
    return None if isinstance(value, float) and not math.isfinite(value) else value
