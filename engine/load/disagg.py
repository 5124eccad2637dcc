"""Disaggregated prefill/decode serving and replicas behind a router, simulated.

Replicas (`Replicas`): one engine/load/router.py Pool of the deployment's instances.

Disaggregated (`Disaggregated`, DistServe, Zhong et al., OSDI 2024; Splitwise, Patel et al.,
ISCA 2024): the requests are routed, as they arrive, to a pool of prefill workers, each a
Simulator whose requests produce one token (the prompt's prefill and its first token); each
prompt's KV cache then crosses the link to the decode pool, whose Simulators admit it straight
to decoding (`Simulator.prefilled_arrivals`: its blocks taken, no prompt chunk computed), so
the decode steps carry no prefill. Per request:

    bytes     = KV bytes per token per layer, whole model (the engine's kv_full, in the prefill
                side's KV format) · Σ over the layers of the prompt's cached tokens
    transfer  = bytes / (lanes · link bandwidth per device) + link latency
                lanes = min(prefill devices, decode devices) of one worker each: each device
                sends its shard at once
    exposed   = transfer (sent once the prompt is done: vLLM's NixlConnector, TensorRT-LLM's
                cache transceiver), or with layer-wise sending (Mooncake, Qin et al., FAST 2025)
                max(transfer / L, transfer − prefill · (L − 1)/L): layer l's KV leaves as layer
                l + 1 computes, so only what the prompt's compute cannot hide remains
    TTFT      = queueing + prefill (the prefill worker's first token) + exposed
    arrival at the decode pool = that instant; TPOT from it to the last token.

The link: NVLink (the accelerator's interconnect) when every device of the deployment fits one
NVLink domain (devices_per_node) and both sides use the same accelerator; the scale-out network
otherwise (refused when the catalogue has none). Not modelled: transfers sharing a link at once
(each request gets the whole link), and the first token returned by the prefill worker before
the transfer (the decode worker returns every token, as NVIDIA Dynamo's and vLLM's proxies do).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from engine.catalog.resolve import resolve_hardware
from engine.catalog.shapes import cached_tokens
from engine.load import api, results
from engine.load.api import (
    MAX_EVENTS,
    Instance,
    Work,
    _check_fit,
    _result,
    _run_warnings,
    check_arrivals,
    instance,
    run_work,
    too_many_events,
)
from engine.load.router import (
    FIELDS,
    FleetRun,
    Pool,
    Table,
    fleet_window,
    settle_window,
    summed_series,
)
from engine.load.workload import draw
from engine.report.messages import MessageKind
from engine.scenarios.bind import bind
from engine.scenarios.deployment import Deployment, HardwareRef, ModelRef
from engine.scenarios.fleet import Disaggregated, Replicas
from engine.scenarios.service import SLO, Scheduler
from engine.scenarios.workload import Workload, margin


@dataclass(frozen=True)
class Link:
    """What the KV cache crosses from a prefill worker to a decode worker."""

    name: str  # "nvlink" or "network"
    bandwidth_bytes_per_s: float  # per device, per direction
    latency_s: float
    lanes: int  # devices sending at once


OPEN_LOOP_ONLY = (
    "replicas and disaggregated serving are simulated for open-loop arrivals (a rate) or a "
    "trace: give rate or trace, not concurrency"
)
NO_NETWORK = (
    "{hw}: the prefill and decode workers span more than one NVLink domain ({domain} devices) "
    "and the catalogue gives this accelerator no scale-out network to move the KV cache over"
)
PREFIX_FALLBACK = MessageKind(
    "prefix_router_fallback",
    "prefix-aware routing: the requests share no prefix, so they are routed by least "
    "outstanding requests",
)


def kv_link(dis: Disaggregated) -> Link:
    """NVLink when the whole deployment fits one NVLink domain of one accelerator, else the
    scale-out network."""
    pre = resolve_hardware(dis.prefill.hardware, dis.prefill.catalog)
    dec = resolve_hardware(dis.decode.hardware, dis.decode.catalog)
    lanes = min(dis.prefill.devices, dis.decode.devices)
    if pre.id == dec.id and dis.devices <= pre.devices_per_node:
        return Link(
            name="nvlink",
            bandwidth_bytes_per_s=pre.interconnect_bandwidth_bytes_per_s,
            latency_s=pre.interconnect_latency_s,
            lanes=lanes,
        )
    bw = [hw.network_bandwidth_bytes_per_s for hw in (pre, dec)]
    if None in bw:
        raise ValueError(NO_NETWORK.format(hw=pre.id, domain=pre.devices_per_node))
    latency = max(pre.network_latency_s or 0.0, dec.network_latency_s or 0.0)
    return Link(name="network", bandwidth_bytes_per_s=min(bw), latency_s=latency, lanes=lanes)


def kv_bytes(inst: Instance, prompt_tokens: np.ndarray) -> np.ndarray:
    """Bytes of each prompt's KV cache, whole model (kv_full × the tokens every layer caches)."""
    f = inst.scenario.folded
    tokens = cached_tokens(f.s, np.asarray(prompt_tokens, dtype=float), xp=np)
    return float(f.kv_full) * tokens


def kv_transfer_s(inst: Instance, prompt_tokens: np.ndarray, link: Link) -> np.ndarray:
    """Seconds to send each prompt's KV cache (whole, not overlapped) over `link`."""
    nbytes = kv_bytes(inst, prompt_tokens)
    return nbytes / (link.lanes * link.bandwidth_bytes_per_s) + link.latency_s


def exposed_s(transfer: np.ndarray, prefill: np.ndarray, layers: int, overlap: bool):
    """The transfer time left after the prompt's compute (all of it unless layer-wise)."""
    if not overlap:
        return transfer
    return np.maximum(transfer / layers, transfer - prefill * (layers - 1) / layers)


def _requests(w: Workload):
    check_arrivals(w)
    if w.mode not in ("open", "trace"):
        raise ValueError(OPEN_LOOP_ONLY)
    return draw(w)


def _check_work(works: list[Work], replicas: list[int], n: int, look_all: bool) -> None:
    """Refused above MAX_EVENTS: `_fleet_work`."""
    work = _fleet_work(works=works, replicas=replicas, n=n, look_all=look_all)
    if work.events > MAX_EVENTS:
        raise ValueError(too_many_events(work))


def _fleet_work(works: list[Work], replicas: list[int], n: int, look_all: bool) -> Work:
    """The fleet's bound: each pool's run on every request (a replica may get all of them),
    plus the runs of decode steps the router's look at every replica can cut (one per
    request and replica)."""
    events = sum(wk.events for wk in works)
    if look_all:
        events += n * sum(replicas)
    return Work(events, sum(wk.preemptions for wk in works))


def fleet_events(
    fleet: Replicas | Disaggregated, workload: Workload, scheduler: Scheduler | None = None
) -> int:
    """An upper bound of the events `serve_load(fleet, workload, scheduler=scheduler)`
    simulates (the figure it refuses a run by, MAX_EVENTS), before running anything."""
    _, n_in, n_out = _requests(workload)
    if isinstance(fleet, Replicas):
        sides = [(instance(fleet.deployment, scheduler), n_out, fleet.replicas)]
    else:
        sides = [
            (instance(fleet.prefill, scheduler), np.ones_like(n_out), fleet.prefill_workers),
            (instance(fleet.decode, scheduler), n_out, fleet.decode_workers),
        ]
    works = [run_work(inst, n_in, outs, open_loop=True, clients=None) for inst, outs, _ in sides]
    look_all = fleet.router != "round-robin"
    replicas = [count for _, _, count in sides]
    return _fleet_work(works=works, replicas=replicas, n=len(n_in), look_all=look_all).events


def _fleet_result(inst, w, slo, run: FleetRun, extra: dict, pool_blocks: int, devices: int):
    settle_window(run)
    pool = dataclasses.replace(inst.pool, blocks=pool_blocks)
    values, req = results.metrics(sim=run, pool=pool, devices=devices, slo=slo)
    notes = _run_warnings(
        inst=inst,
        w=w,
        sim=run,
        values=values,
        n_in=run.requests.input_tokens,
        n_out=run.requests.output_tokens,
    )
    out = _result(
        inst=inst,
        w=w,
        slo=slo,
        values=values,
        req=req,
        series=results.timeseries(run, pool),
        notes=notes,
        fits=True,
    )
    head = dict(out.values) | {"devices": devices} | extra
    return dataclasses.replace(out, values=head)


def _unfit(inst, w, slo, problem, extra, devices):
    out = _result(
        inst=inst,
        w=w,
        slo=slo,
        values=results.empty_metrics(),
        req={},
        series={},
        notes=[problem],
        fits=False,
    )
    return dataclasses.replace(out, values=dict(out.values) | {"devices": devices} | extra)


def simulate_replicas(
    rep: Replicas, w: Workload, slo: SLO, sched: Scheduler | None, recorders: list | None = None
):
    """`rep.replicas` copies of its deployment behind its router, serving `w` (`recorders`:
    one StepRecorder per replica for a trace, or None)."""
    arrival, n_in, n_out = _requests(w)
    inst = instance(rep.deployment, sched)
    extra = {
        "replicas": rep.replicas,
        "router": rep.router,
        "disaggregated": False,
        "kv_transfer_ms_mean": 0.0,
    }
    problem = _check_fit(inst=inst, w=w, n_in=n_in, n_out=n_out)
    if problem:
        return _unfit(inst=inst, w=w, slo=slo, problem=problem, extra=extra, devices=rep.devices)
    work = run_work(inst, n_in, n_out, open_loop=True, clients=None)
    look_all = rep.router != "round-robin"
    _check_work(works=[work], replicas=[rep.replicas], n=len(n_in), look_all=look_all)
    warm = margin(w.requests)
    window = fleet_window(arrival, warm, warm)
    pool = Pool(
        inst=inst, replicas=rep.replicas, router=rep.router, window=window, recorders=recorders
    )
    run = FleetRun.of_pool(pool.route(arrival, n_in, n_out), warm)
    blocks = inst.pool.blocks * rep.replicas
    out = _fleet_result(
        inst=inst, w=w, slo=slo, run=run, extra=extra, pool_blocks=blocks, devices=rep.devices
    )
    if rep.router == "prefix-aware":
        out = dataclasses.replace(out, warnings=(*out.warnings, PREFIX_FALLBACK()))
    return out


def simulate_disaggregated(
    dis: Disaggregated,
    w: Workload,
    slo: SLO,
    sched: Scheduler | None,
    recorders: list | None = None,
):
    """Prefill workers, the KV transfer, decode workers: `w` served disaggregated
    (`recorders`: one StepRecorder per prefill worker, then one per decode worker, for a
    trace; each prefill worker's records its prompts' KV transfers too)."""
    arrival, n_in, n_out = _requests(w)
    pre, dec = instance(dis.prefill, sched), instance(dis.decode, sched)
    link = kv_link(dis)
    ones = np.ones_like(n_out)
    extra = {
        "replicas": 1,
        "router": dis.router,
        "disaggregated": True,
        "prefill_workers": dis.prefill_workers,
        "prefill_tp": dis.prefill.tp,
        "prefill_ep": dis.prefill.ep,
        "prefill_precision": dis.prefill.precision,
        "decode_workers": dis.decode_workers,
        "decode_tp": dis.decode.tp,
        "decode_ep": dis.decode.ep,
        "decode_precision": dis.decode.precision,
        "kv_link": link.name,
        "kv_overlap": dis.kv_overlap,
        "kv_transfer_ms_mean": math.nan,
    }
    for side, lengths in ((pre, ones), (dec, n_out)):
        problem = _check_fit(inst=side, w=w, n_in=n_in, n_out=lengths)
        if problem:
            return _unfit(inst=dec, w=w, slo=slo, problem=problem, extra=extra, devices=dis.devices)
    works = [
        run_work(pre, n_in, ones, open_loop=True, clients=None),
        run_work(dec, n_in, n_out, open_loop=True, clients=None),
    ]
    look_all = dis.router != "round-robin"
    sides = [dis.prefill_workers, dis.decode_workers]
    _check_work(works=works, replicas=sides, n=len(n_in), look_all=look_all)
    warm = margin(w.requests)
    window, prefill_window = (fleet_window(arrival, warm, warm) for _ in range(2))
    pre_rec, dec_rec = (None, None) if recorders is None else _split(recorders, dis)
    prefill = Pool(
        inst=pre,
        replicas=dis.prefill_workers,
        router=dis.router,
        window=prefill_window,
        recorders=pre_rec,
    )
    prefill.route(arrival, n_in, ones)
    first = prefill.gather("first_token_s")
    admitted = prefill.gather("admitted_s")
    whole = kv_transfer_s(pre, n_in, link)
    layers = int(pre.scenario.folded.s.layers)
    sent = exposed_s(
        transfer=whole, prefill=first - admitted, layers=layers, overlap=dis.kv_overlap
    )
    decode = Pool(
        inst=dec, replicas=dis.decode_workers, router=dis.router, window=window, recorders=dec_rec
    )
    decode.prefilled = True
    decode.route(first + sent, n_in, n_out)
    if pre_rec is not None:
        _record_transfers(
            recorders=pre_rec,
            pools=(prefill, decode),
            end_s=first + sent,
            seconds=whole,
            nbytes=kv_bytes(pre, n_in),
        )
    columns = {name: decode.gather(name) for name in FIELDS}
    columns |= {"arrival_s": np.asarray(arrival, dtype=float), "admitted_s": admitted}
    columns["first_token_s"] = first + sent
    # a one-token request's answer is its first token: done when its KV (and token) arrives
    columns["done_s"] = np.where(n_out <= 1, first + sent, columns["done_s"])
    columns["preemptions"] = columns["preemptions"] + prefill.gather("preemptions")
    # the prefill workers' steps: their first tokens, running requests and KV blocks (their
    # completions are the prompts handed over, not requests served)
    window.tokens += prefill_window.tokens
    window.running_s += prefill_window.running_s
    window.kv_block_s += prefill_window.kv_block_s
    series = summed_series([prefill, decode])
    run = FleetRun(table=Table(columns), window=window, series=series, margin=warm)
    extra["kv_transfer_ms_mean"] = float(sent[warm : len(sent) - warm].mean()) * 1e3
    blocks = pre.pool.blocks * dis.prefill_workers + dec.pool.blocks * dis.decode_workers
    return _fleet_result(
        inst=dec, w=w, slo=slo, run=run, extra=extra, pool_blocks=blocks, devices=dis.devices
    )


def _split(recorders: list, dis: Disaggregated) -> tuple[list, list]:
    if len(recorders) != dis.prefill_workers + dis.decode_workers:
        raise ValueError("one recorder per prefill worker and per decode worker")
    return recorders[: dis.prefill_workers], recorders[dis.prefill_workers :]


def _record_transfers(recorders: list, pools: tuple, end_s, seconds, nbytes) -> None:
    """Each request's whole KV transfer on its prefill worker's track, ending when its decode
    worker has it (sent after the prompt, or overlapped with it: it then starts earlier)."""
    prefill, decode = pools
    for g in range(len(end_s)):
        recorders[int(prefill.replica_of[g])].transfer(
            start_s=float(end_s[g] - seconds[g]),
            seconds=float(seconds[g]),
            request=g,
            nbytes=float(nbytes[g]),
            to=f"decode worker {int(decode.replica_of[g]) + 1}",
        )


def serve_load(
    deployment: Deployment | Replicas | Disaggregated | ModelRef | None = None,
    workload: Workload | HardwareRef | None = None,
    /,
    scheduler: Scheduler | None = None,
    slo: SLO | None = None,
    **fields: object,
) -> results.LoadResult:
    """`engine.serve_load`: engine/load/api.py's `serve_load` of one deployment, or of a fleet:
    `Replicas` (N replicas behind a router) or `Disaggregated` (prefill and decode workers),
    with open-loop or trace arrivals, the workload, scheduler and SLO given as there."""
    if not isinstance(deployment, Replicas | Disaggregated):
        return api.serve_load(deployment, workload, scheduler=scheduler, slo=slo, **fields)
    given = {"scheduler": scheduler, "slo": slo, **fields}
    w, sched, slo = fleet_inputs(deployment, workload, given)
    if isinstance(deployment, Disaggregated):
        return simulate_disaggregated(dis=deployment, w=w, slo=slo, sched=sched)
    return simulate_replicas(rep=deployment, w=w, slo=slo, sched=sched)


def fleet_inputs(fleet: Replicas | Disaggregated, workload: object, given: dict) -> tuple:
    """A fleet's workload, scheduler and SLO from its second argument and the keywords
    (`given`: scheduler, slo and fields), checked: (Workload, Scheduler or None, SLO)."""
    if workload is not None and not isinstance(workload, Workload):
        raise ValueError(
            f"a fleet's second argument is its Workload, got {type(workload).__name__}: the "
            "accelerator is its deployments'"
        )
    w, sched, slo = bind((workload, None), given, Workload, Scheduler, SLO)
    if w is None:
        raise ValueError("Workload: give input_tokens, output_tokens")
    _check_techniques(fleet, w)
    return w, sched, slo or SLO()


def _check_techniques(fleet: Replicas | Disaggregated, w: Workload) -> None:
    """A fleet's workers are simulated without speculative decoding and prefix caching (each
    replica would need its own cache and the router its prefix map): refused, never dropped."""
    parts = [fleet.deployment] if isinstance(fleet, Replicas) else [fleet.prefill, fleet.decode]
    asked = [
        name
        for name, used in (
            ("speculative decoding", any(d.speculation is not None for d in parts)),
            ("a shared prefix", w.prefix is not None),
            ("multi-turn sessions", w.session_turns > 1),
        )
        if used
    ]
    if asked:
        raise ValueError(
            f"{' and '.join(asked)} with replicas or disaggregated workers is not simulated yet: "
            "run one deployment for it, or the fleet without it"
        )
