"""The planner's fast path for disaggregated serving: every prefill layout against every decode
layout of a grid, each side sized on its own for a target traffic within the SLOs.

With prefill and decode apart, the SLOs split: TTFT is the prefill worker's plus the exposed
KV transfer, TPOT the decode worker's (engine/load/disagg_analytic.py). So each deployment of
the grid (grid.py `stack`) gets, per request shape,

    prefill max rate r_p = the highest rate one prefill worker sustains with
                           p90 TTFT + the exposed transfer ≤ the TTFT SLO
    decode max rate  r_d = the highest rate one decode worker sustains with p99 TPOT ≤ the SLO

by bisection below each side's saturation rate, and a pair (prefill layout i, decode layout j of
the same model, accelerator and number format) serves a target T with

    prefill workers P = ⌈T / r_p⌉, decode workers D = ⌈T / r_d⌉ (at least one each)
    gpus = P · devices_i + D · devices_j
    cost = gpus · price / (3600 s/h · T · output tokens) · 10⁶

Workers behind one least-outstanding router pool their queues (analytic.py `pooled`): a side's
max rate is taken again with its P (or D) workers, and the smaller count kept when it still
meets the SLOs. The KV link is NVLink when the fleet's devices fit one NVLink domain, else the
scale-out network (disagg.py `kv_link`'s rule; a pair the catalogue gives no network is
refused); the prefill rate is bisected against the slower of the links a pair may use.
Without a target, P = D = 1; `cost_per_million_output_tokens_at_max_rate_usd` is the floor of
workers in the best ratio, price · (devices_i / r_p + devices_j / r_d) / (3600 · O) · 10⁶.
docs/model.md, "Disaggregated serving on the fast path".
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np

from engine.catalog.profiles import get_profile
from engine.load import analytic as an
from engine.load import disagg_analytic as da
from engine.load.grid import (
    MAX_GRID_ROWS,
    MAX_RATE_HALVINGS,
    placed,
    placed_limits,
    scheduler_of,
    stack,
)
from engine.load.plan import plan_inputs, price_reader, request_shapes, request_tokens
from engine.report.messages import MessageKind
from engine.scenarios.deployment import Deployments, HardwareRef, ModelRef
from engine.scenarios.requests import Traffic
from engine.scenarios.service import SLO, Scheduler

if TYPE_CHECKING:
    import pandas as pd


MAX_PAIRS = 20_000  # prefill × decode layouts per call, refused above before any work
NO_ROOM = MessageKind(
    "disagg_plan_no_room", "does not fit: a worker's pool holds less than one request"
)
PREFILL_SLOW = MessageKind(
    "disagg_plan_prefill_misses_ttft",
    "the prefill worker misses the TTFT SLO even at a trickle of requests",
)
DECODE_SLOW = MessageKind(
    "disagg_plan_decode_misses_tpot",
    "the decode worker misses the TPOT SLO even at a trickle of requests",
)
NO_LINK = MessageKind(
    "disagg_plan_no_network",
    "the fleet spans more than one NVLink domain and the accelerator has no scale-out network "
    "in the catalogue to move the KV cache over",
)
KINDS = (NO_ROOM, PREFILL_SLOW, DECODE_SLOW, NO_LINK)  # a row's reason: its index (-1: none)


def load_plan_disaggregated(
    deployments: Deployments | ModelRef | list | None = None,
    hardware: HardwareRef | list | None = None,
    /,
    traffic: Traffic | None = None,
    scheduler: Scheduler | None = None,
    slo: SLO | None = None,
    prices: Mapping[str, float | None] | None = None,
    kv_overlap: bool = False,
    **fields: object,
) -> pd.DataFrame:
    """Prefill and decode workers for a target traffic, per pair of layouts of the grid.

    Args:
        deployments, hardware, traffic, scheduler, slo, prices: as `load_plan` takes them
            (every deployment of the grid is tried as a prefill worker and as a decode worker).
        kv_overlap: each layer's KV sent as soon as it is computed (`Disaggregated.kv_overlap`).

    Returns:
        One row per pair and request shape: model, hardware, precision, prefill_tp,
        prefill_pp, prefill_ep, prefill_attention_dp and the decode_ ones, prefill_devices,
        decode_devices, input_tokens, output_tokens, prefill_max_rate_per_s and
        decode_max_rate_per_s (one worker each), prefill_workers, decode_workers, gpus,
        max_rate_per_s (the fleet's: min(P·r_p, D·r_d)), ttft_ms_p90 (a prefill worker at its
        max rate, with the transfer) and tpot_ms_p99 (a decode worker at its max rate),
        kv_link ("nvlink", "network", "none" when the fleet needs a network the catalogue
        lacks; missing when no fleet is sized), kv_transfer_ms (exposed), slo_ttft_ms_p90,
        slo_tpot_ms_p99, target_rate_per_s, output_tokens_per_s_per_gpu, price_per_hour_usd,
        cost_per_million_output_tokens_usd, cost_per_million_output_tokens_at_max_rate_usd
        and reason (a Message; missing when the pair serves).
    """
    import pandas as pd

    given = {"traffic": traffic, "scheduler": scheduler, "slo": slo, **fields}
    leading = (deployments, hardware)
    grid, traffic, scheduler, slo = plan_inputs(leading, given, who="load_plan_disaggregated")
    n_in, n_out = request_shapes(traffic)
    kept, skipped = placed(grid)
    if not kept:
        raise ValueError("no deployment of the grid can be served: " + "; ".join(skipped[:3]))
    pi, pj = _pairs(kept)
    if len(pi) > MAX_PAIRS or len(pi) * n_in.size > MAX_GRID_ROWS:
        raise ValueError(
            f"the grid makes {len(pi):,} prefill × decode pairs; at most {MAX_PAIRS:,} are "
            "computed at once (narrow an axis)"
        )
    sched = scheduler_of(grid, scheduler)
    f = stack(kept, sched)
    lim = placed_limits(f, sched, kept)
    side = _Sides(f=f, lim=lim, n_in=n_in, n_out=n_out, b=traffic.burstiness)
    with np.errstate(all="ignore"):  # NaN and inf where a side does not fit, then masked
        cols = _columns(
            kept=kept,
            side=side,
            pairs=(pi, pj),
            slo=slo,
            target=traffic.target_rate,
            price_of=price_reader(prices),
            overlap=bool(kv_overlap),
        )
    cols["reason"] = pd.Categorical.from_codes(cols["reason"], [k() for k in KINDS])
    df = pd.DataFrame(cols, copy=False)
    df.attrs["skipped"] = skipped
    df.attrs["scheduler"] = sched.as_dict()
    df.attrs["profile"] = get_profile(grid.profile).name
    df.attrs["kv_overlap"] = bool(kv_overlap)
    return df


def _pairs(kept) -> tuple[np.ndarray, np.ndarray]:
    """Every (prefill, decode) pair of deployments of one model, accelerator and format."""
    groups: dict[tuple, list[int]] = {}
    for i, k in enumerate(kept):
        groups.setdefault((k.name, k.hw.id, k.setup.precision, k.setup.kv_precision), []).append(i)
    pi, pj = [], []
    for rows in groups.values():
        pi += [i for i in rows for _ in rows]
        pj += rows * len(rows)
    return np.array(pi, dtype=int), np.array(pj, dtype=int)


class _Sides:
    """One grid's deployments as prefill and as decode workers (arrays of shape (D, R))."""

    def __init__(self, f, lim, n_in, n_out, b):
        self.f, self.lim, self.n_in, self.n_out, self.b = f, lim, n_in, n_out, b
        shape = np.broadcast_shapes(np.shape(lim.pool_tokens), np.shape(n_in))
        self.shape = shape
        with np.errstate(all="ignore"):
            self.alone = np.broadcast_to(da.prefill_alone_s(f=f, lim=lim, n_in=n_in), shape)
            self.kv_bytes = np.broadcast_to(da.kv_bytes(f, n_in), shape)
        room = f.usable > f.weights
        whole = lim.pool_tokens >= request_tokens(lim, n_in, n_out)
        self.fits = np.broadcast_to(room & whole, shape)

    def prefill_rate(self, budget_s, servers) -> np.ndarray:
        """The highest rate one of `servers` prefill workers sustains with p90 TTFT within
        `budget_s` (0 where even a trickle misses it)."""
        lim = self.lim._replace(servers=servers)
        cap = da.prefill_open_loop(f=self.f, lim=lim, rate=self._tiny(), n_in=self.n_in)

        def ok(rate):
            out = da.prefill_open_loop(
                f=self.f, lim=lim, rate=rate, n_in=self.n_in, burstiness=self.b
            )
            return out["stable"] & (out["ttft_s_p90"] <= budget_s)

        return self._bisect(cap["saturation_rate_per_s"], ok)

    def decode_rate(self, tpot_s, servers) -> np.ndarray:
        """The highest rate one of `servers` decode workers sustains with p99 TPOT within
        `tpot_s` (None: no SLO)."""
        lim = self.lim._replace(servers=servers)
        cap = da.decode_capacity(f=self.f, lim=lim, n_in=self.n_in, n_out=self.n_out)

        def ok(rate):
            out = da.decode_open_loop(
                f=self.f, lim=lim, rate=rate, n_in=self.n_in, n_out=self.n_out, burstiness=self.b
            )
            good = out["stable"]
            if tpot_s is not None:
                good = good & ~(out["tpot_s_p99"] > tpot_s)
            return good

        return self._bisect(cap["rate_per_s"], ok)

    def _tiny(self):
        return np.full(self.shape, da.TRICKLE)

    def _bisect(self, saturation, ok) -> np.ndarray:
        hi = np.broadcast_to(saturation, self.shape) * (1.0 - 1e-6)
        with np.errstate(all="ignore"):
            best = np.where(ok(hi), hi, an.highest_ok(ok, hi, MAX_RATE_HALVINGS))
        return np.where(self.fits & np.isfinite(best), best, 0.0)

    def at(self, prefill: tuple, decode: tuple) -> tuple:
        """(p90 TTFT without the transfer, p99 TPOT) in s, each side at (its rate per worker,
        its workers)."""
        (p_rate, p_servers), (d_rate, d_servers) = prefill, decode
        with np.errstate(all="ignore"):
            pre = da.prefill_open_loop(
                f=self.f,
                lim=self.lim._replace(servers=p_servers),
                rate=p_rate,
                n_in=self.n_in,
                burstiness=self.b,
            )
            dec = da.decode_open_loop(
                f=self.f,
                lim=self.lim._replace(servers=d_servers),
                rate=d_rate,
                n_in=self.n_in,
                n_out=self.n_out,
                burstiness=self.b,
            )
        return pre["ttft_s_p90"], dec["tpot_s_p99"]


def _links(kept) -> tuple:
    """Per deployment (D, 1): NVLink and network (bytes/s per device, latency s), NaN where the
    catalogue has no network, and the NVLink domain's devices."""
    hw = [k.hw for k in kept]
    col = lambda values: np.array(values, dtype=float)[:, None]  # noqa: E731
    nvlink = (
        col([h.interconnect_bandwidth_bytes_per_s or np.nan for h in hw]),
        col([h.interconnect_latency_s for h in hw]),
    )
    network = (
        col([h.network_bandwidth_bytes_per_s or np.nan for h in hw]),
        col([h.network_latency_s or 0.0 for h in hw]),
    )
    return nvlink, network, col([h.devices_per_node for h in hw])


def _exposed(side: _Sides, link, lanes, overlap, rows) -> np.ndarray:
    """The exposed transfer (s) of prompts prefilled by deployments `rows` over `link`."""
    bandwidth, latency = link
    return da.exposed_from(
        nbytes=side.kv_bytes[rows],
        prefill=side.alone[rows],
        layers=np.broadcast_to(side.f.s.layers, (len(side.alone), 1))[rows],
        link=(bandwidth[rows], latency[rows], lanes),
        overlap=overlap,
    )


def _sized(rate_of, target, first) -> tuple:
    """Workers for `target` at one worker's max rate `first`, then again with the pooled rate
    of that many workers (`rate_of(servers)`), the smaller count kept where it still serves.
    Returns (workers, their per-worker max rate)."""
    if target is None:
        return np.where(first > 0, 1.0, np.nan), first
    with np.errstate(all="ignore"):
        n = np.maximum(np.ceil(target / first), 1.0)
        pooled = rate_of(np.where(first > 0, n, 1.0))
        fewer = np.maximum(np.ceil(target / pooled), 1.0)
        again = rate_of(np.where(first > 0, fewer, 1.0))
    keep = (fewer < n) & (again * fewer >= target)
    workers = np.where(keep, fewer, n)
    rate = np.where(keep, again, np.where(first > 0, pooled, 0.0))
    return np.where(first > 0, workers, np.nan), rate


def _columns(kept, side: _Sides, pairs, slo: SLO, target, price_of, overlap) -> dict:
    pi, pj = pairs
    devices = np.array([k.tp * k.pp for k in kept], dtype=float)[:, None]
    nvlink, network, domain = _links(kept)
    with np.errstate(all="ignore"):
        lanes = np.minimum(devices[pi], devices[pj])
        over_nvlink = _exposed(side, link=nvlink, lanes=lanes, overlap=overlap, rows=pi)
        over_network = _exposed(side, link=network, lanes=lanes, overlap=overlap, rows=pi)
        # the prefill budget: the SLO less the slower link's exposed transfer a pair may use
        slow = np.fmax(over_network, over_nvlink)
        worst = np.zeros(side.shape)
        np.maximum.at(worst, pi, slow)
    budget = np.inf if slo.ttft_ms is None else slo.ttft_ms * 1e-3 - worst
    tpot = None if slo.tpot_ms is None else slo.tpot_ms * 1e-3
    r_p1 = side.prefill_rate(budget, 1.0)
    r_d1 = side.decode_rate(tpot, 1.0)
    n_p, r_p = _sized(lambda n: side.prefill_rate(budget, n), target, r_p1)
    n_d, r_d = _sized(lambda n: side.decode_rate(tpot, n), target, r_d1)
    P, D, rp, rd = n_p[pi], n_d[pj], r_p[pi], r_d[pj]
    gpus = P * devices[pi] + D * devices[pj]
    inside = gpus <= domain[pi]
    has_net = np.isfinite(network[0][pi])
    link = np.where(inside, 0, np.where(has_net, 1, -1))  # 0 NVLink, 1 network, -1 none
    with np.errstate(all="ignore"):
        exposed = np.where(inside, over_nvlink, over_network)
        ttft, tpot_at = side.at(
            (r_p, np.nan_to_num(n_p, nan=1.0)), (r_d, np.nan_to_num(n_d, nan=1.0))
        )
        fleet = np.minimum(P * rp, D * rd)
        served = (rp > 0) & (rd > 0) & (link >= 0)
        price = np.array([price_of(k.hw) for k in kept])[:, None][pi]
        n_out = side.n_out
        cost = gpus * price / (3600.0 * (target or np.nan) * n_out) * 1e6
        per_gpu = 1.0 / (devices[pi] / rp + devices[pj] / rd)  # requests/s per GPU, best ratio
        floor = price / (3600.0 * per_gpu * n_out) * 1e6
    fits = side.fits[pi] & side.fits[pj]
    reason = np.select([~fits, r_p1[pi] <= 0, r_d1[pj] <= 0, link < 0], [0, 1, 2, 3], -1).astype(
        np.int8
    )
    nan = np.nan
    wide = {
        "prefill_devices": devices[pi],
        "decode_devices": devices[pj],
        "input_tokens": side.n_in,
        "output_tokens": n_out,
        "prefill_max_rate_per_s": rp,
        "decode_max_rate_per_s": rd,
        "prefill_workers": P,  # NaN where that side serves no rate
        "decode_workers": D,
        "gpus": gpus,
        "max_rate_per_s": np.where(served, fleet, 0.0),
        "ttft_ms_p90": np.where(served, (ttft[pi] + exposed) * 1e3, nan),
        "tpot_ms_p99": np.where(served, tpot_at[pj] * 1e3, nan),
        "kv_transfer_ms": np.where(link >= 0, exposed * 1e3, nan),
        "slo_ttft_ms_p90": nan if slo.ttft_ms is None else slo.ttft_ms,
        "slo_tpot_ms_p99": nan if slo.tpot_ms is None else slo.tpot_ms,
        "target_rate_per_s": nan if target is None else target,
        "output_tokens_per_s_per_gpu": np.where(served, fleet * n_out / gpus, nan),
        "price_per_hour_usd": price,
        "cost_per_million_output_tokens_usd": np.where(served, cost, nan),
        "cost_per_million_output_tokens_at_max_rate_usd": np.where(served, floor, nan),
    }
    shape = np.broadcast_shapes(np.shape(pi[:, None]), side.n_in.shape)
    out = _ids(kept, pi=pi, pj=pj, repeat=shape[1])
    for key, value in wide.items():
        out[key] = np.broadcast_to(value, shape).ravel()
    names = np.array(["none", "nvlink", "network"], dtype=object)
    sized = np.isfinite(P * D)  # no link where a side serves no rate (no fleet was sized)
    out["kv_link"] = np.broadcast_to(np.where(sized, names[link + 1], None), shape).ravel()
    out["reason"] = np.where(served, -1, reason).ravel().astype(np.int8)
    return out


def _ids(kept, pi, pj, repeat) -> dict:
    """model, hardware, precision and each side's layout, each repeated `repeat` times."""
    out = {
        "model": [kept[i].name for i in pi],
        "hardware": [kept[i].hw.id for i in pi],
        "precision": [kept[i].setup.precision for i in pi],
    }
    for prefix, rows in (("prefill", pi), ("decode", pj)):
        out[f"{prefix}_tp"] = [kept[i].tp for i in rows]
        out[f"{prefix}_pp"] = [kept[i].pp for i in rows]
        out[f"{prefix}_ep"] = [kept[i].split.ep for i in rows]
        out[f"{prefix}_attention_dp"] = [kept[i].split.attention_dp for i in rows]
    kinds = {"model": object, "hardware": object, "precision": object}
    return {
        key: np.repeat(
            np.array(values, dtype=kinds.get(key, bool if key.endswith("_dp") else int)),
            repeat,
        )
        for key, values in out.items()
    }
