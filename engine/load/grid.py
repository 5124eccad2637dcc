"""The analytic fast path over a grid: deployments × rates × lengths in one vectorised pass.

Every deployment (model × accelerator × precision × tp × pp × ep × attention DP) is folded once
on numpy arrays, as engine/serving/sweep.py folds a sweep (the kernel's `fold` with xp =
numpy), laid along the first axis; the requests (rate × input × output tokens) along the
second. engine/load/analytic.py then prices every cell with engine/serving/step.py. A
deployment the serving model refuses (a TP split that does not divide the heads, an ep that
does not divide tp, say) is left out and listed in `df.attrs["skipped"]`. docs/model.md,
"Serving under load".
"""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from engine.catalog.profiles import get_profile
from engine.catalog.resolve import resolve_model
from engine.catalog.scheduler import MAX_BATCHED_TOKENS, MAX_NUM_SEQS
from engine.catalog.shapes import Shapes, shapes_of
from engine.load import analytic as an
from engine.load.api import scheduler_base
from engine.load.prefix import cached_tokens
from engine.load.speculation import SpecCost, one_layer
from engine.scenarios.bind import bind
from engine.scenarios.deployment import Deployments, HardwareRef, ModelRef, check_split
from engine.scenarios.requests import Traffic
from engine.scenarios.service import SLO, Scheduler
from engine.serving import inputs as si
from engine.serving.kernel import Device, Efficiencies, Folded, fold
from engine.serving.operators import Layout, step_lists

if TYPE_CHECKING:
    import pandas as pd

MAX_GRID_ROWS = 1_000_000  # deployments × requests cells, refused above before any work


class Placed(NamedTuple):
    """One deployment of a grid the serving model accepts."""

    name: str
    arch: object  # Architecture
    hw: object  # HardwareSpec
    tp: int
    pp: int
    setup: si.Setup
    split: si.Split


def placed(grid: Deployments) -> tuple[list[Placed], list[str]]:
    """The valid deployments of the grid, and why the others are not."""
    kept, skipped = [], []
    setups = [si.setup_for(grid, p) for p in grid.precisions]
    axes = (grid.models, grid.hardware, setups, grid.tp, grid.pp, grid.ep, grid.attention_dp)
    for model, hw, st, tp, pp, ep, on in itertools.product(*axes):
        try:
            check_split(tp, ep, on)
            split = si.Split(ep=ep, attention_dp=on)
            name, arch, spec, t, p = si.placement(
                model=model, hardware=hw, tp=tp, pp=pp, catalog=grid.catalog, split=split
            )
            si.setup_values(spec, st)  # a KV-cache format the accelerator cannot hold
        except ValueError as exc:
            layout = f"tp {tp}, pp {pp}" + (f", ep {ep}" if ep > 1 else "")
            layout += ", attention DP" if on else ""
            skipped.append(f"{model} on {hw}, {layout}: {exc}")
            continue
        kept.append(Placed(name=name, arch=arch, hw=spec, tp=t, pp=p, setup=st, split=split))
    return kept, skipped


def scheduler_of(grid: Deployments, scheduler: Scheduler | None):
    """The grid's profile's scheduler with `scheduler`'s overrides."""
    base = scheduler_base(grid.profile)
    return base if scheduler is None else scheduler.applied_to(base)


def stack(kept: list[Placed], sched=None) -> Folded:
    """One Folded of arrays of shape (deployments, 1) (the kernel's fold on numpy; `sched`: the
    stack whose rule sizes the KV pool)."""
    s = Shapes.stack([shapes_of(k.arch) for k in kept]).map(lambda v: v[:, None])
    values = [si.setup_values(k.hw, k.setup, sched) for k in kept]
    dev = Device(
        *(np.array(column)[:, None] for column in zip(*(d for d, _ in values), strict=True))
    )
    lays = [
        si.layout(
            tp=k.tp,
            pp=k.pp,
            precision=k.setup.precision,
            kv_precision=k.setup.kv_precision,
            split=k.split,
            a=k.setup.assumptions,
        )
        for k in kept
    ]
    lay = Layout(*(np.array(column, dtype=float)[:, None] for column in zip(*lays, strict=True)))
    pairs = zip(kept, values, strict=True)
    etas = [si.efficiencies(k.setup.assumptions, used) for k, (_, used) in pairs]
    eta = Efficiencies(*(np.array(c)[:, None] for c in zip(*etas, strict=True)))
    with np.errstate(all="ignore"):
        return fold(s=s, dev=dev, lay=lay, eta=eta, xp=np, steps=step_lists(s, lay, np))


def limits(f: Folded, sched, ranks=1.0, stages=1.0) -> an.Limits:
    """The scheduler and each deployment's KV pool (engine/load/pool.py's rule, on arrays);
    `ranks` and `stages`: each deployment's attention data-parallel ranks and pipeline stages,
    whose batches each take the stack's limits (api.py `per_replica`)."""
    block = float(sched.block_size)
    per_block = block * f.kv_dev * f.stage
    blocks = np.floor(np.maximum(f.usable - f.weights, 0.0) / per_block)
    share = f.s.local_layers / f.s.layers
    return an.Limits(
        seqs=np.minimum(
            np.minimum(
                sched.max_num_seqs * ranks * (stages if sched.seqs_per_stage else 1.0),
                sched.max_batched_tokens * ranks * stages,
            ),
            MAX_NUM_SEQS,
        ),
        tokens=np.minimum(sched.max_batched_tokens * ranks * stages, MAX_BATCHED_TOKENS),
        chunked=sched.chunked_prefill,
        pool_tokens=blocks * block,
        block=block,
        reserve=sched.kv_policy == "reserve",
        watermark=sched.watermark,
        local_share=share,
        window=np.where(share > 0, f.s.window, np.inf),
    )


def _requests(traffic: Traffic) -> tuple:
    """Rates × input × output tokens along the second axis, shape (1, R) each."""
    axes = (traffic.rates, traffic.input_tokens, traffic.output_tokens)
    grid = np.array(list(itertools.product(*axes)), dtype=float).T
    return grid[0][None, :], grid[1][None, :], grid[2][None, :]


def load_grid(
    deployments: Deployments | ModelRef | list | None = None,
    hardware: HardwareRef | list | None = None,
    /,
    traffic: Traffic | None = None,
    scheduler: Scheduler | None = None,
    slo: SLO | None = None,
    **fields: object,
) -> pd.DataFrame:
    """The analytic steady state of every deployment × rate × input × output tokens.

    Args:
        deployments: a Deployments grid, or (the keyword form) the models, with the
            accelerators second and the grid's other axes and fields as keywords (tp, pp,
            precisions: one or several each; kv_precision, profile, assumptions, catalog and
            assumptions by their user names).
        traffic: a Traffic, or `rates`, `input_tokens`, `output_tokens` (one or several each)
            and `burstiness`.
        scheduler, slo: as for `max_rate` (`slo_ttft_ms_p90`, `slo_tpot_ms_p99`).

    Returns:
        One row per cell: the deployment, the request, saturation_rate_per_s, stable,
        ttft_ms_mean|p50|p90|p99, tpot_ms_mean|p50|p90|p99, e2e_latency_ms_mean,
        mean_running_requests, kv_cache_utilisation, output_tokens_per_s(_per_gpu),
        meets_slo, price_per_hour_usd, cost_per_million_output_tokens_usd (one replica at
        that rate; NaN without a price).
    """
    import pandas as pd

    given = {"traffic": traffic, "scheduler": scheduler, "slo": slo, **fields}
    grid, traffic, scheduler, slo = bind(
        (deployments, hardware), given, Deployments, Traffic, Scheduler, SLO
    )
    if grid is None or traffic is None or traffic.rates is None:
        raise ValueError("load_grid: give models, hardware, rates, input_tokens, output_tokens")
    slo = slo or SLO()
    rate, n_in, n_out = _requests(traffic)
    cells = grid.size * rate.size
    if cells > MAX_GRID_ROWS:
        raise ValueError(
            f"the grid has {cells:,} cells; at most {MAX_GRID_ROWS:,} are computed "
            "at once (narrow an axis)"
        )
    kept, skipped = placed(grid)
    if not kept:
        raise ValueError("no deployment of the grid can be served: " + "; ".join(skipped[:3]))
    sched = scheduler_of(grid, scheduler)
    f = stack(kept, sched)
    lim = placed_limits(f, sched, kept)
    spec = grid_spec(grid.speculation, kept=kept, sched=sched)
    cached = cached_tokens(traffic.prefix, n_in, lim.block)
    lim = lim._replace(spec=spec, cached=cached)
    with np.errstate(all="ignore"):
        out = an.open_loop(
            f=f,
            lim=lim,
            rate=rate,
            n_in=n_in - cached,
            n_out=n_out,
            burstiness=traffic.burstiness,
        )
    df = pd.DataFrame(
        _columns(
            kept=kept,
            f=f,
            out=out,
            rate=rate,
            n_in=n_in,
            n_out=n_out,
            slo_ttft=slo.ttft_ms,
            slo_tpot=slo.tpot_ms,
        ),
        copy=False,
    )
    if grid.speculation is not None:  # the settings on every row, as a run records them
        s = grid.speculation
        df = df.assign(**s.as_dict(), spec_accepted_tokens_mean=s.mean_accepted)
    if traffic.prefix is not None:
        df = df.assign(**traffic.prefix.as_dict())
    df.attrs["skipped"] = skipped
    df.attrs["scheduler"] = sched.as_dict()
    # the name, also for a Profile object: attrs are deep-copied by pandas, and a Profile's
    # read-only mappings cannot be
    df.attrs["profile"] = get_profile(grid.profile).name
    return df


def grid_spec(spec, kept: list[Placed], sched) -> SpecCost | None:
    """The grid's speculation with every deployment's drafter folded on arrays (the draft
    model, or one layer of the deployment's model), as engine/load/speculation.py prices it."""
    if spec is None:
        return None
    if spec.method == "ngram":
        return SpecCost(spec, None)
    if spec.method == "draft":
        arch = resolve_model(spec.draft_model).arch
        if arch is None:
            raise ValueError(f"draft_model: {spec.draft_model[:60]!r} has no shapes to price")
        drafters = [k._replace(arch=arch) for k in kept]
    else:
        drafters = [k._replace(arch=one_layer(k.arch, None)) for k in kept]
    return SpecCost(spec, stack(drafters, sched))


def placed_limits(f: Folded, sched, kept: list[Placed]) -> an.Limits:
    """`limits` of placed deployments: each with its attention-DP ranks and pipeline stages."""
    return limits(f, sched, ranks=ranks(kept), stages=stages(kept))


def ranks(kept: list[Placed]) -> np.ndarray:
    """Each deployment's attention data-parallel ranks (1 without attention DP), shape (D, 1)."""
    return np.array([k.tp if k.split.attention_dp else 1 for k in kept], dtype=float)[:, None]


def stages(kept: list[Placed]) -> np.ndarray:
    """Each deployment's pipeline stages, each with a batch in flight, shape (D, 1)."""
    return np.array([k.pp for k in kept], dtype=float)[:, None]


def id_columns(kept: list[Placed], repeat: int) -> dict:
    """Each deployment's model, hardware, precision, tp, pp, ep and attention DP, each repeated
    `repeat` times (one row per deployment × rate)."""
    ids = {
        "model": [k.name for k in kept],
        "hardware": [k.hw.id for k in kept],
        "precision": [k.setup.precision for k in kept],
        "tp": [k.tp for k in kept],
        "pp": [k.pp for k in kept],
        "ep": [k.split.ep for k in kept],
        "attention_dp": [k.split.attention_dp for k in kept],
    }
    kinds = {"model": object, "hardware": object, "precision": object, "attention_dp": bool}
    return {k: np.repeat(np.array(v, dtype=kinds.get(k, int)), repeat) for k, v in ids.items()}


def _columns(kept, f, out, rate, n_in, n_out, slo_ttft, slo_tpot) -> dict:
    shape = np.broadcast_shapes(rate.shape, (len(kept), 1))
    devices = np.array([k.tp * k.pp for k in kept], dtype=float)[:, None]
    price = np.array([k.hw.price_per_hour_usd or np.nan for k in kept])[:, None]
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
    cols["meets_slo"] = (
        (cols["ttft_ms_p90"] <= slo_ttft)
        & (cols["tpot_ms_p99"] <= slo_tpot)
        & cols["stable"].astype(bool)
    )
    cols["fits_in_memory"] = np.broadcast_to(f.usable > f.weights, shape).ravel()
    cols["price_per_hour_usd"] = np.broadcast_to(price, shape).ravel()
    per_hour = np.broadcast_to(price * devices, shape) / (tokens * 3600.0)
    cols["cost_per_million_output_tokens_usd"] = (per_hour * 1e6).ravel()
    return cols


# bisection steps of the fast path's max rate: the bracket [0, saturation] narrowed 2^12 = 4,096
# times (within 0.025 % of saturation; the load model itself is good to about 10 %)
MAX_RATE_HALVINGS = 12


def analytic_max_rate(
    f: Folded,
    lim: an.Limits,
    n_in,
    n_out,
    slo_ttft_ms_p90,
    slo_tpot_ms_p99,
    burstiness=1.0,
    iterations: int = MAX_RATE_HALVINGS,
) -> np.ndarray:
    """The highest rate whose analytic p90 TTFT and p99 TPOT meet the SLOs (None: not
    applied), by bisection below the saturation rate; 0 where even a trickle misses them.
    The planner and the max-rate search ask it at the same precision, so both show one
    number."""
    cap = an.capacity(f=f, lim=lim, n_in=n_in, n_out=n_out)["rate_per_s"]
    hi = cap * (1.0 - 1e-6)

    def ok(rate):
        with np.errstate(all="ignore"):
            out = an.open_loop(
                f=f, lim=lim, rate=rate, n_in=n_in, n_out=n_out, burstiness=burstiness
            )
        good = out["stable"]
        if slo_ttft_ms_p90 is not None:
            good = good & (out["ttft_s_p90"] * 1e3 <= slo_ttft_ms_p90)
        if slo_tpot_ms_p99 is not None:
            good = good & ~(out["tpot_s_p99"] * 1e3 > slo_tpot_ms_p99)
        return good

    return np.where(ok(hi), hi, an.highest_ok(ok, hi, iterations))
