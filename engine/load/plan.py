"""The planner's fast path under load: the highest rate each deployment of a grid sustains
within its SLOs, the replicas a target traffic needs and what they cost, in one vectorised pass.

Every deployment (model × accelerator × precision × tp × pp × ep × attention DP) is folded once
on numpy arrays (grid.py `stack`), its scheduler and KV pool as arrays (grid.py `limits`);
then, per request shape, grid.py `analytic_max_rate` bisects every deployment's rate at once
below its saturation rate (analytic.py `capacity`) for the highest one whose analytic p90 TTFT
and p99 TPOT meet the SLOs. From it, as engine.max_rate plans one deployment (search.py `plan`):

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
from engine.load import analytic as an
from engine.load.grid import (
    MAX_GRID_ROWS,
    analytic_max_rate,
    id_columns,
    placed,
    placed_limits,
    scheduler_of,
    stack,
)
from engine.report.messages import MessageKind
from engine.scenarios.bind import bind
from engine.scenarios.deployment import Deployments, HardwareRef, ModelRef
from engine.scenarios.requests import Traffic
from engine.scenarios.service import SLO, Scheduler

if TYPE_CHECKING:
    import pandas as pd

CHUNK_CELLS = 8192  # deployments × request shapes per vectorised pass (bounds the memory)
NO_ROOM = MessageKind("plan_no_kv_room", "does not fit: the weights leave no room for a KV cache")
NO_REQUEST = MessageKind(
    "plan_kv_pool_below_one_request", "does not fit: the KV pool holds less than one request"
)
TOO_SLOW = MessageKind("plan_misses_slos", "misses the SLOs even at a trickle of requests")
KINDS = (NO_ROOM, NO_REQUEST, TOO_SLOW)  # a row's reason: its index here (-1: none)


def request_shapes(traffic: Traffic) -> tuple[np.ndarray, np.ndarray]:
    """The request shapes (input × output tokens) along the second axis, shape (1, R)."""
    ii, oo = np.meshgrid(traffic.input_tokens, traffic.output_tokens, indexing="ij")
    return ii.ravel()[None, :].astype(float), oo.ravel()[None, :].astype(float)


def load_plan(
    deployments: Deployments | ModelRef | list | None = None,
    hardware: HardwareRef | list | None = None,
    /,
    traffic: Traffic | None = None,
    scheduler: Scheduler | None = None,
    slo: SLO | None = None,
    prices: Mapping[str, float | None] | None = None,
    **fields: object,
) -> pd.DataFrame:
    """Max rate per replica under the SLOs, replicas and cost for a target, per deployment.

    Args:
        deployments, scheduler: the grid and its server, as `load_grid` takes them (a
            deployment the serving model refuses is left out, listed in `df.attrs["skipped"]`).
        traffic: a Traffic, or `input_tokens`, `output_tokens` (one each, or lists: one row per
            deployment and pair), `target_rate` (requests/s to plan replicas for; None: no
            replicas, gpus or cost) and `burstiness`.
        slo: an SLO, or `slo_ttft_ms_p90`, `slo_tpot_ms_p99` (None: not applied).
        prices: accelerator id -> USD per accelerator-hour (None: no price) replacing the
            catalogue's list price (`price_per_hour_usd`) for the ids it names.

    Returns:
        One row per deployment (and request shape): model, hardware, precision, tp, pp, ep,
        attention_dp, devices, input_tokens, output_tokens, saturation_rate_per_s,
        max_rate_per_s (0 when even a trickle misses the SLOs or nothing fits), ttft_ms_p90
        and tpot_ms_p99 at that rate, slo_ttft_ms_p90, slo_tpot_ms_p99, target_rate_per_s,
        replicas, gpus, output_tokens_per_s_per_replica, output_tokens_per_s_per_gpu,
        price_per_hour_usd, cost_per_million_output_tokens_usd (the target served by
        `replicas`),
        cost_per_million_output_tokens_at_max_rate_usd (one replica at its max rate),
        kv_pool_tokens, fits_in_memory and reason (why max_rate_per_s is 0: a Message; missing
        when it is not).
    """
    import pandas as pd

    given = {"traffic": traffic, "scheduler": scheduler, "slo": slo, **fields}
    grid, traffic, scheduler, slo = plan_inputs((deployments, hardware), given, who="load_plan")
    n_in, n_out = request_shapes(traffic)
    cells = grid.size * n_in.size
    if cells > MAX_GRID_ROWS:
        raise ValueError(
            f"the grid has {cells:,} cells; at most {MAX_GRID_ROWS:,} are computed "
            "at once (narrow an axis)"
        )
    price_of = price_reader(prices)
    kept, skipped = placed(grid)
    if not kept:
        raise ValueError("no deployment of the grid can be served: " + "; ".join(skipped[:3]))
    sched = scheduler_of(grid, scheduler)
    step = max(CHUNK_CELLS // n_in.size, 1)
    parts = [
        _chunk(
            kept=kept[i : i + step],
            sched=sched,
            n_in=n_in,
            n_out=n_out,
            slo=slo,
            b=traffic.burstiness,
            target=traffic.target_rate,
            price_of=price_of,
        )
        for i in range(0, len(kept), step)
    ]
    cols = {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}
    cols["reason"] = pd.Categorical.from_codes(cols["reason"], [k() for k in KINDS])
    df = pd.DataFrame(cols, copy=False)
    df.attrs["skipped"] = skipped
    df.attrs["scheduler"] = sched.as_dict()
    # the name, also for a Profile object: attrs are deep-copied by pandas, and a Profile's
    # read-only mappings cannot be
    df.attrs["profile"] = get_profile(grid.profile).name
    return df


def plan_inputs(leading: tuple, given: dict, who: str) -> tuple:
    """A planner's grid, traffic, scheduler and SLO from its leading arguments and keywords,
    checked: (Deployments, Traffic, Scheduler or None, SLO). `who` names the function in the
    messages. Speculative decoding and prefix caching are refused (the planners do not model
    them)."""
    grid, traffic, scheduler, slo = bind(leading, given, Deployments, Traffic, Scheduler, SLO)
    if grid is None or traffic is None:
        raise ValueError(f"{who}: give models, hardware, input_tokens, output_tokens")
    if grid.speculation is not None or traffic.prefix is not None:
        raise ValueError(
            f"{who} does not model speculative decoding or prefix caching yet: compare "
            "with load_grid, or simulate one deployment with serve_load or max_rate"
        )
    return grid, traffic, scheduler, slo or SLO()


def price_reader(prices: Mapping[str, float | None] | None):
    given = dict(prices or {})
    for hw_id, value in given.items():
        ok = value is None or (
            isinstance(value, int | float)
            and not isinstance(value, bool)
            and np.isfinite(value)
            and value >= 0
        )
        if not ok:
            raise ValueError(
                f"prices[{hw_id!r}]: expected USD per accelerator-hour of at least "
                f"0, or None, got {value!r}"[:200]
            )

    def price(hw) -> float:
        value = given.get(hw.id, hw.price_per_hour_usd)
        return np.nan if value is None else float(value)

    return price


def request_tokens(lim: an.Limits, n_in, n_out):
    """Pool tokens one whole request holds (blocks of its prompt and output; windowed layers
    hold at most their window): the simulator's "does not fit" rule, engine/load/pool.py."""
    whole = np.ceil((n_in + n_out) / lim.block) * lim.block
    window = np.ceil(np.minimum(lim.window, 1e300) / lim.block) * lim.block
    return (1 - lim.local_share) * whole + lim.local_share * np.minimum(whole, window)


def _chunk(kept, sched, n_in, n_out, slo, b, target, price_of) -> dict:
    """The columns of some deployments × every request shape (arrays of shape (D, R))."""
    f = stack(kept, sched)
    lim = placed_limits(f, sched, kept)
    shape = (len(kept), n_in.shape[1])
    room = np.broadcast_to(f.usable > f.weights, shape)
    whole = np.broadcast_to(lim.pool_tokens >= request_tokens(lim, n_in, n_out), shape) & room
    with np.errstate(all="ignore"):
        cap = np.broadcast_to(
            an.capacity(f=f, lim=lim, n_in=n_in, n_out=n_out)["rate_per_s"], shape
        )
        best = analytic_max_rate(
            f=f,
            lim=lim,
            n_in=n_in,
            n_out=n_out,
            slo_ttft_ms_p90=slo.ttft_ms,
            slo_tpot_ms_p99=slo.tpot_ms,
            burstiness=b,
        )
        best = np.where(whole & np.isfinite(best) & (best > 0), best, 0.0)
        at = an.open_loop(
            f=f,
            lim=lim,
            rate=np.where(best > 0, best, 1e-300),
            n_in=n_in,
            n_out=n_out,
            burstiness=b,
        )
    devices = np.array([k.tp * k.pp for k in kept], dtype=float)[:, None]
    price = np.array([price_of(k.hw) for k in kept])[:, None]
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
            "devices": devices,
            "input_tokens": n_in,
            "output_tokens": n_out,
            "saturation_rate_per_s": np.where(room, cap, 0.0),
            "max_rate_per_s": best,
            "ttft_ms_p90": np.where(served, at["ttft_s_p90"] * 1e3, np.nan),
            "tpot_ms_p99": np.where(served, at["tpot_s_p99"] * 1e3, np.nan),
            "slo_ttft_ms_p90": np.nan if slo.ttft_ms is None else slo.ttft_ms,
            "slo_tpot_ms_p99": np.nan if slo.tpot_ms is None else slo.tpot_ms,
            "target_rate_per_s": np.nan if target is None else target,
            "replicas": replicas,
            "gpus": gpus,
            "output_tokens_per_s_per_replica": tokens,
            "output_tokens_per_s_per_gpu": tokens / devices,
            "price_per_hour_usd": price,
            "cost_per_million_output_tokens_usd": cost,
            "cost_per_million_output_tokens_at_max_rate_usd": floor,
            "kv_pool_tokens": lim.pool_tokens,
            "fits_in_memory": whole,
        }
    for key, value in wide.items():
        out[key] = np.broadcast_to(value, shape).ravel()
    reason = np.select([~room, ~whole, ~served], [0, 1, 2], -1)  # KINDS' order
    out["reason"] = reason.astype(np.int8).ravel()
    return out
