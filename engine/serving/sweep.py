"""`serve_sweep`: the serving model over a cartesian grid of scenarios, vectorised.

Every row equals `engine.serve` of the same scenario: the same kernel (engine/serving/kernel.py)
folds every deployment at once on numpy arrays, then evaluates the grid in chunks, with no
Python loop over rows or decode steps (docs/model.md, "Serving model"). Columns are
`ServeResult.as_dict()`'s keys with the assumptions flattened (user names and units) and each
row's warnings a tuple of Messages.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator
from typing import TYPE_CHECKING

import numpy as np

from engine.catalog.resolve import resolve_hardware
from engine.catalog.shapes import Shapes, shapes_of
from engine.report.frames import categorical, code_dtype, constant, full
from engine.scenarios.bind import bind
from engine.scenarios.deployment import Deployments, HardwareRef, ModelRef, check_split
from engine.scenarios.requests import BatchGrid
from engine.serving import inputs as si
from engine.serving.kernel import Device, Efficiencies, evaluate, fold
from engine.serving.operators import Layout
from engine.serving.serve import BOUNDS, METRICS, WARNINGS, warning_list

if TYPE_CHECKING:  # pandas loads on the first sweep, keeping `import engine` fast
    import pandas as pd

MAX_SERVE_SWEEP_ROWS = 2_000_000  # refused before any work; 1 M rows: about 0.23 GiB (bench)
CHUNK_ROWS = 131_072  # rows the kernel evaluates at once (its temporaries: about 1 MB each)
AXES = (
    "model",
    "hardware",
    "precision",
    "tp",
    "pp",
    "ep",
    "attention_dp",
    "batch_size",
    "input_tokens",
    "output_tokens",
)
BATCH_AXIS = AXES.index("batch_size")  # the request's axes follow the deployment's


def _axes(grid: Deployments, batches: BatchGrid) -> list[tuple]:
    lists = [
        grid.models,
        grid.hardware,
        grid.precisions,
        grid.tp,
        grid.pp,
        grid.ep,
        grid.attention_dp,
        batches.batch_sizes,
        batches.input_tokens,
        batches.output_tokens,
    ]
    rows = int(np.prod([len(v) for v in lists], dtype=float))
    if rows > MAX_SERVE_SWEEP_ROWS:
        raise ValueError(
            f"the grid has {rows:,} scenarios; at most {MAX_SERVE_SWEEP_ROWS:,} are computed "
            "at once (narrow an axis)"
        )
    return lists


def _inputs(lists: list[tuple], grid: Deployments) -> dict:
    """Resolve and check every axis; per-model and per-(hardware, precision) figures."""
    ms, hs, precs = lists[0], lists[1], lists[2]
    setups = [si.setup_for(grid, p) for p in precs]
    models = [si.llm_architecture(m, grid.catalog) for m in ms]
    hws = [resolve_hardware(h, grid.catalog) for h in hs]
    counts = [np.asarray(v, dtype=float) for v in lists[3:]]
    tps, pps, eps, on = lists[3:7]
    for (name, arch), t, p, e, d in itertools.product(models, tps, pps, eps, on):
        check_split(t, e, d)
        si.check_parallel(name=name, arch=arch, tp=t, pp=p, ep=e, attention_dp=d)
    for hw, t, p in itertools.product(hws, tps, pps):
        si.check_devices(hw, int(t), int(p))
    sched = si.stack_of(grid.profile)
    devices = [si.setup_values(h, st, sched) for h in hws for st in setups]
    columns = zip(*(device for device, _ in devices), strict=True)
    etas = [
        si.efficiencies(st.assumptions, used)
        for st, (_, used) in zip(setups * len(hws), devices, strict=True)
    ]
    layouts = [
        si.layout(tp=1, pp=1, precision=st.precision, kv_precision=st.kv_precision) for st in setups
    ]
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
        "moe": (setups[0].assumptions.expert_imbalance, setups[0].assumptions.grouped_gemm_tokens),
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
    per_pair = [1] * len(AXES)  # one value per (hardware, precision)
    per_pair[1:3] = shape[1:3]
    dev = Device(*(v.reshape(per_pair) for v in inp["device"]))
    eta = Efficiencies(*(v.reshape(per_pair) for v in inp["efficiencies"]))
    tps, pps, eps, on, bs, ins, outs = inp["axes"]
    tp, ep = _axis(tps, 3), _axis(eps, 5)
    imbalance, rows = inp["moe"]
    lay = Layout(
        tp,
        _axis(pps, 4),
        *(_axis(v, 2) for v in inp["sizes"]),
        ep=ep,
        dp=np.where(_axis(on, 6) > 0.5, tp, 1.0),
        imbalance=np.where(ep > 1.5, imbalance, 1.0),
        expert_rows=rows,
    )
    b = BATCH_AXIS
    return s, dev, eta, lay, (_axis(bs, b), _axis(ins, b + 1), _axis(outs, b + 2))


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
        folded = fold(s=s, dev=dev, lay=lay, eta=eta, xp=np)  # once: over the deployment axes only
        for first, pieces in chunks(shape):
            sub = tuple(len(range(n)[p]) for n, p in zip(shape, pieces, strict=True))
            B, n_in, n_out = (_cut(v, pieces) for v in request)
            t = evaluate(f=_cut(folded, pieces), B=B, n_in=n_in, n_out=n_out, xp=np)
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
    kinds = {
        "fits_in_memory": np.bool_,
        "max_batch_size": np.int64,
        "warning_bits": code_dtype(1 << len(WARNINGS)),
    }
    return np.float64 if scale is not None else kinds.get(term, np.int8)


def serve_sweep(
    deployments: Deployments | ModelRef | list | None = None,
    hardware: HardwareRef | list | None = None,
    /,
    batches: BatchGrid | None = None,
    **fields: object,
) -> pd.DataFrame:
    """`serve` for every model × hardware × precision × tp × pp × ep × attention DP × batch ×
    input × output.

    Args:
        deployments: a Deployments grid, or (the keyword form) the models (ids or specs with
            shapes, one or a list), with the accelerators second and the grid's other fields as
            keywords: tp, pp, precisions, ep, attention_dp (one or a list each; every ep must
            divide every tp), kv_precision (one for every row; None: each precision), profile,
            assumptions, catalog, assumptions by user name.
        batches: a BatchGrid, or batch_sizes, input_tokens, output_tokens (one or a list each).

    Returns:
        At most MAX_SERVE_SWEEP_ROWS rows in the AXES order (the last varies fastest).
    """
    import pandas as pd

    grid, batches = bind(
        (deployments, hardware), {"batches": batches, **fields}, Deployments, BatchGrid
    )
    if grid is None or batches is None:
        raise ValueError("serve_sweep: give models, hardware, input_tokens, output_tokens")
    lists = _axes(grid, batches)
    inp = _inputs(lists, grid)
    shape = tuple(len(v) for v in lists)
    a = inp["setups"][0].assumptions
    t = _compute(inp, shape)
    cols = _id_columns(inp, shape) | _metric_columns(t)
    cols |= _assumption_columns(a, len(t["ttft_s"]))
    notes = inp["setups"][0].notes
    said = [tuple(warning_list(b, notes)) for b in range(1 << len(WARNINGS))]  # unique
    cols["warnings"] = pd.Categorical.from_codes(t["warning_bits"], said)
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
    tps, pps, eps, on, bs, ins, outs = (v.astype(np.int64) for v in inp["axes"])
    hp = np.arange(shape[1] * shape[2]).reshape((1, shape[1], shape[2]) + (1,) * (len(AXES) - 3))
    precision_codes = _axis(np.arange(shape[2]), 2)  # hp, codes: one small array per axis
    b = BATCH_AXIS
    return {  # each column written once from its axis, no full-grid temporary
        "model": categorical(_axis(np.arange(shape[0]), 0), inp["names"], shape),
        "hardware": categorical(_axis(np.arange(shape[1]), 1), inp["hw_ids"], shape),
        "devices": full(_axis(tps, 3) * _axis(pps, 4), shape, np.int64),
        "tp": full(_axis(tps, 3), shape, np.int64),
        "pp": full(_axis(pps, 4), shape, np.int64),
        "ep": full(_axis(eps, 5), shape, np.int64),
        "attention_dp": full(_axis(on, 6).astype(bool), shape, np.bool_),
        "batch_size": full(_axis(bs, b), shape, np.int64),
        "input_tokens": full(_axis(ins, b + 1), shape, np.int64),
        "output_tokens": full(_axis(outs, b + 2), shape, np.int64),
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
