"""The analytic fast path over a grid: deployments × rates × lengths in one vectorised pass.

Every deployment (model × accelerator × precision × tp × pp) is folded once on numpy arrays,
as engine/serving/sweep.py folds a sweep (the kernel's `fold` with xp = numpy), laid along the
first axis; the requests (rate × input × output tokens) along the second. engine/load/analytic.py
then prices every cell with engine/serving/step.py. A deployment the serving model refuses (a
TP split that does not divide the heads, say) is left out and listed in `df.attrs["skipped"]`.
docs/model.md, "Serving under load".
"""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING

import numpy as np

from engine.catalog.profiles import get_profile
from engine.catalog.scheduler import with_overrides
from engine.catalog.shapes import Shapes, shapes_of
from engine.checks import MAX_DEGREE, MAX_TOKENS, as_list, check_whole_numbers
from engine.load import analytic as an
from engine.load.api import DEFAULT_SLO, scheduler_base
from engine.load.workload import MAX_RATE, check_burstiness
from engine.serving import inputs as si
from engine.serving.kernel import Device, Folded, fold
from engine.serving.operators import Layout, step_lists

if TYPE_CHECKING:
    import pandas as pd

MAX_GRID_ROWS = 1_000_000  # deployments × requests cells, refused above before any work


def deployments(models, hardware, precisions, tps, pps, kv_precision, profile, assumptions,
                 catalog, overrides) -> tuple[list, list[str]]:  # fmt: skip
    """The valid (name, arch, hw, tp, pp, setup) combinations, and why the others are not."""
    kept, skipped = [], []
    setups = [si.setup(p, kv_precision, assumptions, profile, overrides) for p in precisions]
    for model, hw, st, tp, pp in itertools.product(models, hardware, setups, tps, pps):
        try:
            name, arch, spec, t, p = si.placement(model, hw, int(tp), int(pp), catalog)
        except ValueError as exc:
            skipped.append(f"{model} on {hw}, tp {int(tp)}, pp {int(pp)}: {exc}")
            continue
        kept.append((name, arch, spec, t, p, st))
    return kept, skipped


def stack(kept: list) -> Folded:
    """One Folded of arrays of shape (deployments, 1) (the kernel's fold on numpy)."""
    s = Shapes.stack([shapes_of(arch) for _, arch, *_ in kept]).map(lambda v: v[:, None])
    devices = [si.device_values(hw, st.precision, st.assumptions)[0] for _, _, hw, _, _, st in kept]
    dev = Device(*(np.array(column)[:, None] for column in zip(*devices, strict=True)))
    lays = [si.layout(t, p, st.precision, st.kv_precision) for *_, t, p, st in kept]
    lay = Layout(*(np.array(column, dtype=float)[:, None] for column in zip(*lays, strict=True)))
    eta = si.efficiencies(kept[0][5].assumptions)
    with np.errstate(all="ignore"):
        return fold(s, dev, lay, eta, np, step_lists(s, lay, np))


def limits(f: Folded, sched) -> an.Limits:
    """The scheduler and each deployment's KV pool (engine/load/pool.py's rule, on arrays)."""
    block = float(sched.block_size)
    per_block = block * f.kv_dev * f.stage
    blocks = np.floor(np.maximum(f.usable - f.weights, 0.0) / per_block)
    share = f.s.local_layers / f.s.layers
    return an.Limits(float(sched.max_num_seqs), float(sched.max_batched_tokens),
                     sched.chunked_prefill, blocks * block, block, sched.kv_policy == "reserve",
                     sched.watermark, share, np.where(share > 0, f.s.window, np.inf))  # fmt: skip


def _requests(rates, input_tokens, output_tokens) -> tuple:
    r = np.asarray(as_list(rates, "rates"), dtype=float)
    if not np.all(np.isfinite(r) & (r > 0) & (r <= MAX_RATE)):
        raise ValueError(f"rates: expected numbers of requests/s above 0 (at most {MAX_RATE:g})")
    i = check_whole_numbers(as_list(input_tokens, "input_tokens"), "input_tokens", high=MAX_TOKENS)
    o = check_whole_numbers(as_list(output_tokens, "output_tokens"), "output_tokens",
                            high=MAX_TOKENS)  # fmt: skip
    grid = np.array(list(itertools.product(r, i, o)), dtype=float).T
    return grid[0][None, :], grid[1][None, :], grid[2][None, :]


def load_grid(models, hardware, *, rates, input_tokens, output_tokens, tp=1, pp=1,
              precisions="fp16", kv_precision=None, profile="tutorial", assumptions=None,
              catalog=None, burstiness=1.0, slo_ttft_ms_p90=DEFAULT_SLO["ttft_ms"],
              slo_tpot_ms_p99=DEFAULT_SLO["tpot_ms"], scheduler=None,
              **overrides) -> pd.DataFrame:  # fmt: skip
    """The analytic steady state of every deployment × rate × input × output tokens.

    Returns:
        One row per cell: the deployment, the request, saturation_rate_per_s, stable,
        ttft_ms_mean|p50|p90|p99, tpot_ms_mean|p50|p90|p99, e2e_latency_ms_mean,
        mean_running_requests, kv_cache_utilisation, output_tokens_per_s(_per_gpu),
        meets_slo, price_per_hour_usd, cost_per_million_output_tokens_usd (one replica at
        that rate; NaN without a price).
    """
    import pandas as pd

    b = check_burstiness(burstiness)
    lists = [as_list(v, n) for v, n in ((models, "models"), (hardware, "hardware"),
                                        (precisions, "precisions"))]  # fmt: skip
    tps = check_whole_numbers(as_list(tp, "tp"), "tp", high=MAX_DEGREE)
    pps = check_whole_numbers(as_list(pp, "pp"), "pp", high=MAX_DEGREE)
    rate, n_in, n_out = _requests(rates, input_tokens, output_tokens)
    cells = len(lists[0]) * len(lists[1]) * len(lists[2]) * len(tps) * len(pps) * rate.size
    if cells > MAX_GRID_ROWS:
        raise ValueError(f"the grid has {cells:,} cells; at most {MAX_GRID_ROWS:,} are computed "
                         "at once (narrow an axis)")  # fmt: skip
    kept, skipped = deployments(*lists, tps, pps, kv_precision, profile, assumptions, catalog,
                                 overrides)  # fmt: skip
    if not kept:
        raise ValueError("no deployment of the grid can be served: " + "; ".join(skipped[:3]))
    sched = with_overrides(scheduler_base(profile), **(scheduler or {}))
    f = stack(kept)
    lim = limits(f, sched)
    with np.errstate(all="ignore"):
        out = an.open_loop(f, lim, rate, n_in, n_out, b)
    df = pd.DataFrame(_columns(kept, f, out, rate, n_in, n_out, slo_ttft_ms_p90,
                               slo_tpot_ms_p99), copy=False)  # fmt: skip
    df.attrs["skipped"] = skipped
    df.attrs["scheduler"] = sched.as_dict()
    df.attrs["profile"] = get_profile(profile).name if isinstance(profile, str) else profile
    return df


def id_columns(kept: list, repeat: int) -> dict:
    """Each deployment's model, hardware, precision, tp and pp, each repeated `repeat` times
    (one row per deployment × rate)."""
    ids = {
        "model": [k[0] for k in kept], "hardware": [k[2].id for k in kept],
        "precision": [k[5].precision for k in kept], "tp": [k[3] for k in kept],
        "pp": [k[4] for k in kept],
    }  # fmt: skip
    text = ("model", "hardware", "precision")
    return {k: np.repeat(np.array(v, dtype=object if k in text else int), repeat)
            for k, v in ids.items()}  # fmt: skip


def _columns(kept, f, out, rate, n_in, n_out, slo_ttft, slo_tpot) -> dict:
    shape = np.broadcast_shapes(rate.shape, (len(kept), 1))
    devices = np.array([t * p for *_, t, p, _ in kept], dtype=float)[:, None]
    price = np.array([hw.price_per_hour_usd or np.nan for _, _, hw, *_ in kept])[:, None]
    cols = id_columns(kept, shape[1])
    wide = {"devices": devices, "rate_per_s": rate, "input_tokens": n_in, "output_tokens": n_out}
    for key, value in wide.items():
        cols[key] = np.broadcast_to(value, shape).ravel()
    for key, value in out.items():
        scale = 1e3 if key.endswith(("_mean", "_p50", "_p90", "_p99")) and "_s_" in key else 1.0
        name = key.replace("_s_", "_ms_") if scale == 1e3 else key
        cols[name] = (np.broadcast_to(value, shape) * scale).ravel()
    tokens = np.broadcast_to(out["output_tokens_per_s"], shape)
    cols["output_tokens_per_s_per_gpu"] = (tokens / devices).ravel()
    cols["meets_slo"] = ((cols["ttft_ms_p90"] <= slo_ttft) & (cols["tpot_ms_p99"] <= slo_tpot)
                         & cols["stable"].astype(bool))  # fmt: skip
    cols["fits_in_memory"] = np.broadcast_to(f.usable > f.weights, shape).ravel()
    cols["price_per_hour_usd"] = np.broadcast_to(price, shape).ravel()
    per_hour = np.broadcast_to(price * devices, shape) / (tokens * 3600.0)
    cols["cost_per_million_output_tokens_usd"] = (per_hour * 1e6).ravel()
    return cols


def analytic_max_rate(
    f: Folded,
    lim: an.Limits,
    n_in,
    n_out,
    slo_ttft_ms_p90,
    slo_tpot_ms_p99,
    burstiness=1.0,
    iterations: int = 30,
) -> np.ndarray:
    """The highest rate whose analytic p90 TTFT and p99 TPOT meet the SLOs (None: not
    applied), by bisection below the saturation rate; 0 where even a trickle misses them."""
    cap = an.capacity(f, lim, n_in, n_out)["rate_per_s"]
    lo, hi = np.zeros_like(cap), cap * (1.0 - 1e-6)

    def ok(rate):
        with np.errstate(all="ignore"):
            out = an.open_loop(f, lim, rate, n_in, n_out, burstiness)
        good = out["stable"]
        if slo_ttft_ms_p90 is not None:
            good = good & (out["ttft_s_p90"] * 1e3 <= slo_ttft_ms_p90)
        if slo_tpot_ms_p99 is not None:
            good = good & ~(out["tpot_s_p99"] * 1e3 > slo_tpot_ms_p99)
        return good

    top_ok = ok(hi)
    for _ in range(iterations):
        mid = (lo + hi) / 2.0
        good = ok(mid)
        lo, hi = np.where(good, mid, lo), np.where(good, hi, mid)
    return np.where(top_ok, cap * (1.0 - 1e-6), lo)
