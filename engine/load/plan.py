"""The planner's fast path under load: the highest rate each deployment of a grid sustains
within its SLOs, the replicas a target traffic needs and what they cost, in one vectorised pass.

Every deployment (model × accelerator × precision × tp × pp) is folded once on numpy arrays
(grid.py `stack`), its scheduler and KV pool as arrays (grid.py `limits`); then, per request
shape, grid.py `analytic_max_rate` bisects every deployment's rate at once below its saturation
rate (analytic.py `capacity`) for the highest one whose analytic p90 TTFT and p99 TPOT meet the
SLOs. From it, as engine.max_rate plans one deployment (search.py `plan`):

    replicas = ⌈target rate / max rate⌉                  (none when the max rate is 0)
    gpus     = replicas · tp · pp
    cost     = gpus · price per accelerator-hour / (3600 s/h · target rate · output tokens) · 10⁶

and, for one replica loaded to its max rate, output tokens/s = max rate · output tokens and
cost = tp · pp · price / (3600 · max rate · output tokens) · 10⁶ (the floor the rounding up of
replicas adds to). docs/model.md, "Serving under load".
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np

from engine.catalog.profiles import get_profile
from engine.catalog.scheduler import with_overrides
from engine.checks import MAX_DEGREE, MAX_TOKENS, as_list, check_whole_numbers
from engine.load import analytic as an
from engine.load.api import DEFAULT_SLO, check_slo, scheduler_base
from engine.load.grid import (
    MAX_GRID_ROWS,
    analytic_max_rate,
    deployments,
    id_columns,
    limits,
    stack,
)
from engine.load.workload import MAX_RATE, check_burstiness
from engine.report.messages import N_

if TYPE_CHECKING:
    import pandas as pd

# bisection steps of the max rate: the bracket [0, saturation] narrowed 2^12 = 4,096 times
# (within 0.025 % of saturation; the load model itself is good to about 10 %)
ITERATIONS = 12
CHUNK_CELLS = 8192  # deployments × request shapes per vectorised pass (bounds the memory)
NO_ROOM = N_("does not fit: the weights leave no room for a KV cache")
NO_REQUEST = N_("does not fit: the KV pool holds less than one request")
TOO_SLOW = N_("misses the SLOs even at a trickle of requests")


def _target(target_rate) -> float:
    ok = isinstance(target_rate, int | float) and not isinstance(target_rate, bool)
    if not (ok and np.isfinite(target_rate) and 0 < target_rate <= MAX_RATE):
        raise ValueError(f"target_rate: expected requests/s above 0 (at most {MAX_RATE:g}), "
                         f"got {target_rate!r}"[:200])  # fmt: skip
    return float(target_rate)


def _shapes(input_tokens, output_tokens) -> tuple[np.ndarray, np.ndarray]:
    """The request shapes (input × output tokens) along the second axis, shape (1, R)."""
    i = check_whole_numbers(as_list(input_tokens, "input_tokens"), "input_tokens", high=MAX_TOKENS)
    o = check_whole_numbers(as_list(output_tokens, "output_tokens"), "output_tokens",
                            high=MAX_TOKENS)  # fmt: skip
    ii, oo = np.meshgrid(i, o, indexing="ij")
    return ii.ravel()[None, :], oo.ravel()[None, :]


def load_plan(models, hardware, *, input_tokens, output_tokens, target_rate=None, tp=1, pp=1,
              precisions="fp16", kv_precision=None, profile="tutorial", assumptions=None,
              catalog=None, burstiness=1.0, slo_ttft_ms_p90=DEFAULT_SLO["ttft_ms"],
              slo_tpot_ms_p99=DEFAULT_SLO["tpot_ms"], scheduler=None, prices=None,
              **overrides) -> pd.DataFrame:  # fmt: skip
    """Max rate per replica under the SLOs, replicas and cost for a target, per deployment.

    Args:
        models, hardware, tp, pp, precisions, kv_precision, profile, assumptions, catalog,
            scheduler, burstiness, **overrides: the grid and its server, as `load_grid` takes
            them (a deployment the serving model refuses is left out, listed in
            `df.attrs["skipped"]`).
        input_tokens, output_tokens: the request (one each, or lists: one row per deployment
            and pair).
        slo_ttft_ms_p90, slo_tpot_ms_p99: the SLOs (None: not applied).
        target_rate: requests/s to plan replicas for (None: no replicas, gpus or cost).
        prices: accelerator id -> USD per accelerator-hour (None: no price) replacing the
            catalogue's list price (`price_per_hour_usd`) for the ids it names.

    Returns:
        One row per deployment (and request shape): model, hardware, precision, tp, pp,
        devices, input_tokens, output_tokens, saturation_rate_per_s, max_rate_per_s (0 when
        even a trickle misses the SLOs or nothing fits), ttft_ms_p90 and tpot_ms_p99 at that
        rate, slo_ttft_ms_p90, slo_tpot_ms_p99, target_rate_per_s, replicas, gpus,
        output_tokens_per_s_per_replica, output_tokens_per_s_per_gpu, price_per_hour_usd,
        cost_per_million_output_tokens_usd (the target served by `replicas`),
        cost_per_million_output_tokens_at_max_rate_usd (one replica at its max rate),
        kv_pool_tokens, fits_in_memory and reason (why max_rate_per_s is 0; "" when it is not).
    """
    import pandas as pd

    b = check_burstiness(burstiness)
    slo = check_slo({"ttft_ms": slo_ttft_ms_p90, "tpot_ms": slo_tpot_ms_p99})
    target = None if target_rate is None else _target(target_rate)
    lists = [as_list(v, n) for v, n in ((models, "models"), (hardware, "hardware"),
                                        (precisions, "precisions"))]  # fmt: skip
    tps = check_whole_numbers(as_list(tp, "tp"), "tp", high=MAX_DEGREE)
    pps = check_whole_numbers(as_list(pp, "pp"), "pp", high=MAX_DEGREE)
    n_in, n_out = _shapes(input_tokens, output_tokens)
    cells = len(lists[0]) * len(lists[1]) * len(lists[2]) * len(tps) * len(pps) * n_in.size
    if cells > MAX_GRID_ROWS:
        raise ValueError(f"the grid has {cells:,} cells; at most {MAX_GRID_ROWS:,} are computed "
                         "at once (narrow an axis)")  # fmt: skip
    price_of = _price_reader(prices)
    kept, skipped = deployments(*lists, tps, pps, kv_precision, profile, assumptions, catalog,
                                 overrides)  # fmt: skip
    if not kept:
        raise ValueError("no deployment of the grid can be served: " + "; ".join(skipped[:3]))
    sched = with_overrides(scheduler_base(profile), **(scheduler or {}))
    step = max(CHUNK_CELLS // n_in.size, 1)
    parts = [_chunk(kept[i : i + step], sched, n_in, n_out, slo, b, target, price_of)
             for i in range(0, len(kept), step)]  # fmt: skip
    cols = {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}
    df = pd.DataFrame(cols, copy=False)
    df.attrs["skipped"] = skipped
    df.attrs["scheduler"] = sched.as_dict()
    df.attrs["profile"] = get_profile(profile).name if isinstance(profile, str) else profile
    return df


def _price_reader(prices: Mapping[str, float | None] | None):
    given = dict(prices or {})
    for hw_id, value in given.items():
        ok = value is None or (isinstance(value, int | float) and not isinstance(value, bool)
                               and np.isfinite(value) and value >= 0)  # fmt: skip
        if not ok:
            raise ValueError(f"prices[{hw_id!r}]: expected USD per accelerator-hour of at least "
                             f"0, or None, got {value!r}"[:200])  # fmt: skip

    def price(hw) -> float:
        value = given.get(hw.id, hw.price_per_hour_usd)
        return np.nan if value is None else float(value)

    return price


def _needs(lim: an.Limits, n_in, n_out):
    """Pool tokens one whole request holds (blocks of its prompt and output; windowed layers
    hold at most their window): the simulator's "does not fit" rule, engine/load/pool.py."""
    whole = np.ceil((n_in + n_out) / lim.block) * lim.block
    window = np.ceil(np.minimum(lim.window, 1e300) / lim.block) * lim.block
    return (1 - lim.local_share) * whole + lim.local_share * np.minimum(whole, window)


def _chunk(kept, sched, n_in, n_out, slo, b, target, price_of) -> dict:
    """The columns of some deployments × every request shape (arrays of shape (D, R))."""
    f = stack(kept)
    lim = limits(f, sched)
    shape = (len(kept), n_in.shape[1])
    room = np.broadcast_to(f.usable > f.weights, shape)
    whole = np.broadcast_to(lim.pool_tokens >= _needs(lim, n_in, n_out), shape) & room
    with np.errstate(all="ignore"):
        cap = np.broadcast_to(an.capacity(f, lim, n_in, n_out)["rate_per_s"], shape)
        best = analytic_max_rate(f, lim, n_in, n_out, slo["ttft_ms"], slo["tpot_ms"], b,
                                 iterations=ITERATIONS)  # fmt: skip
        best = np.where(whole & np.isfinite(best) & (best > 0), best, 0.0)
        at = an.open_loop(f, lim, np.where(best > 0, best, 1e-300), n_in, n_out, b)
    devices = np.array([t * p for *_, t, p, _ in kept], dtype=float)[:, None]
    price = np.array([price_of(k[2]) for k in kept])[:, None]
    tokens = best * n_out  # one replica's output tokens/s at its max rate
    out = id_columns(kept, shape[1])
    served = best > 0
    nan = np.full(shape, np.nan)
    with np.errstate(all="ignore"):
        replicas = np.ceil(target / best) if target is not None else nan
        replicas = np.where(served, replicas, np.nan)
        gpus = replicas * devices
        cost = gpus * price / (3600.0 * (target or np.nan) * n_out) * 1e6
        floor = np.where(served, devices * price / (3600.0 * tokens) * 1e6, np.nan)
        wide = {
            "devices": devices, "input_tokens": n_in, "output_tokens": n_out,
            "saturation_rate_per_s": np.where(room, cap, 0.0), "max_rate_per_s": best,
            "ttft_ms_p90": np.where(served, at["ttft_s_p90"] * 1e3, np.nan),
            "tpot_ms_p99": np.where(served, at["tpot_s_p99"] * 1e3, np.nan),
            "slo_ttft_ms_p90": np.nan if slo["ttft_ms"] is None else slo["ttft_ms"],
            "slo_tpot_ms_p99": np.nan if slo["tpot_ms"] is None else slo["tpot_ms"],
            "target_rate_per_s": np.nan if target is None else target,
            "replicas": replicas, "gpus": gpus, "output_tokens_per_s_per_replica": tokens,
            "output_tokens_per_s_per_gpu": tokens / devices, "price_per_hour_usd": price,
            "cost_per_million_output_tokens_usd": cost,
            "cost_per_million_output_tokens_at_max_rate_usd": floor,
            "kv_pool_tokens": lim.pool_tokens, "fits_in_memory": whole,
        }  # fmt: skip
    for key, value in wide.items():
        out[key] = np.broadcast_to(value, shape).ravel()
    reason = np.select([~room, ~whole, ~served], [NO_ROOM, NO_REQUEST, TOO_SLOW], "")
    out["reason"] = reason.astype(object).ravel()
    return out
