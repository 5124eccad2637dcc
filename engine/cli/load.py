"""`python -m engine load`: serving under load from the shell (docs/model.md, "Serving under load").

    python -m engine load --model M --hardware H [--tp N] [--pp N] [--ep N]
        [--attention-dp on|off] [--precision P]
        --input-tokens I --output-tokens O (--rate R | --concurrency N|max | --trace FILE)
        [--requests K] [--seed S] [--max-num-seqs N] [--max-batched-tokens N]
        [--chunked-prefill on|off] [--profile P] [assumption flags] --format json|table
        [--replicas N --router round-robin|least-outstanding|prefix-aware]
        [--prefill-workers P --prefill-tp A [--prefill-ep E] [--prefill-precision F]
         --decode-workers D --decode-tp B [--decode-ep E] [--decode-precision F]
         [--kv-overlap on|off]]
        [--spec-method draft|eagle|mtp|ngram --spec-tokens K --spec-acceptance A
         [--draft-model ID]] [--prefix-tokens N --prefix-share F] [--session-turns T]

prints one simulated run (JSON keys: `LoadResult.as_dict()`, a contract; `--timeseries` adds
the time series). With `--max-rate --slo-ttft-ms-p90 X --slo-tpot-ms-p99 Y` it searches the
highest rate meeting both (key `max_rate_per_s`, with a `reason` when no rate does;
`--target-rate R` adds the replicas and the cost per million output tokens; the answer is
confirmed on `--confirm-seeds` runs of `--confirm-requests` requests, key `confirmation_runs`).
`--replicas` simulates N replicas behind `--router`; `--prefill-workers`/`--decode-workers`
disaggregated prefill and decode workers (engine/load/disagg.py; key `kv_transfer_ms_mean`).

Its bound: a command whose simulations can take more than MAX_EVENTS events (2,000,000, about
30 s of CPU at the slowest rate measured: docs/model.md, "The work a run takes") is refused
before any work, with its figures; a search counts its 14 runs and its confirmation runs. Bad
input raises ValueError, which engine/cli/main.py turns into one line on stderr and exit status 2.
"""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path

from engine.assumptions import ASSUMPTION_NAMES
from engine.catalog.profiles import (
    DEFAULT_PROFILE,
    MAX_PROFILE_BYTES,
    get_profile,
    profile_from_toml,
)
from engine.catalog.reader import Catalog
from engine.catalog.scheduler import KV_POLICIES
from engine.cli.bands import with_band
from engine.cli.flags import add_format_flags, add_serving_flags, add_split_flags, split_args
from engine.cli.model_args import add_model_args, model_from_args
from engine.cli.output import json_text, table_text
from engine.cli.parallel import add_execution_flags, execution_from
from engine.files import read_bounded
from engine.load.api import EVENT_US, MAX_EVENTS
from engine.load.disagg import serve_load
from engine.load.search import CONFIRM_ROUNDS, MAX_RUNS, MaxRate, max_rate, max_rate_events
from engine.load.trace_export import ChromeTrace, chrome_trace
from engine.scenarios.deployment import Deployment
from engine.scenarios.fleet import ROUTERS, Disaggregated, Replicas
from engine.scenarios.requests import CONFIRM_FACTOR, CONFIRM_SEEDS, RateSearch
from engine.scenarios.service import DEFAULT_TPOT_MS, DEFAULT_TTFT_MS
from engine.scenarios.speculation import METHODS
from engine.scenarios.trace import MAX_TRACE_BYTES, parse_trace


def add_load_command(sub, assumption_flags) -> None:
    """Register `load` on `sub`; `assumption_flags` adds engine/cli/main.py's flags."""
    p = sub.add_parser("load", help="an LLM serving a stream of requests (continuous batching)")
    add_model_args(p)
    p.add_argument("--hardware", required=True)
    p.add_argument("--tp", type=int, default=1, help="tensor-parallel devices (default 1)")
    p.add_argument("--pp", type=int, default=1, help="pipeline stages (default 1)")
    add_split_flags(p)
    add_format_flags(p)
    p.add_argument("--input-tokens", type=int, help="prompt tokens per request (mean)")
    p.add_argument("--output-tokens", type=int, help="tokens generated per request (mean)")
    how = p.add_mutually_exclusive_group()
    how.add_argument("--rate", type=float, help="requests per second (open loop)")
    how.add_argument("--concurrency", help="closed-loop clients, or 'max' (max throughput)")
    how.add_argument("--trace", metavar="CSV", help="arrival_s,input_tokens,output_tokens rows")
    p.add_argument(
        "--requests",
        type=int,
        default=2000,
        help=f"requests simulated (default 2000; a run, or a search's {MAX_RUNS} runs, bounded "
        f"above {MAX_EVENTS:,} events, about {MAX_EVENTS * EVENT_US / 1e6:.0f} s, is refused)",
    )
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--burstiness", type=float, default=1.0, help="gamma shape (1: Poisson)")
    p.add_argument(
        "--length-spread",
        type=float,
        default=0.0,
        help="lengths uniform within ± this fraction of the mean",
    )
    p.add_argument("--max-num-seqs", type=int, help="sequences per step (default: profile's)")
    p.add_argument("--max-batched-tokens", type=int, help="new tokens per step (profile's)")
    p.add_argument("--chunked-prefill", choices=["on", "off"], help="default: the profile's")
    p.add_argument("--block-size", type=int, help="KV block, tokens (default: the profile's)")
    p.add_argument("--kv-policy", choices=KV_POLICIES, help="default: the profile's")
    p.add_argument(
        "--profile",
        help=f"named assumptions and scheduler, or a .toml file (default {DEFAULT_PROFILE})",
    )
    add_technique_flags(p)
    p.add_argument(
        "--slo-ttft-ms",
        type=float,
        help=f"one run's per-request TTFT SLO for goodput, ms (default {DEFAULT_TTFT_MS:g})",
    )
    p.add_argument(
        "--slo-tpot-ms",
        type=float,
        help=f"one run's per-request TPOT SLO for goodput, ms (default {DEFAULT_TPOT_MS:g})",
    )
    p.add_argument("--max-rate", action="store_true", help="search the highest rate within SLOs")
    p.add_argument(
        "--slo-ttft-ms-p90",
        type=float,
        help=f"--max-rate: p90 TTFT limit, ms (default {DEFAULT_TTFT_MS:g})",
    )
    p.add_argument(
        "--slo-tpot-ms-p99",
        type=float,
        help=f"--max-rate: p99 TPOT limit, ms (default {DEFAULT_TPOT_MS:g})",
    )
    p.add_argument("--target-rate", type=float, help="--max-rate: requests/s to plan replicas for")
    p.add_argument(
        "--confirm-seeds",
        type=int,
        help=f"--max-rate: seeds the answer is confirmed on, 0 for none (default {CONFIRM_SEEDS})",
    )
    p.add_argument(
        "--confirm-requests",
        type=int,
        help=f"--max-rate: requests per confirmation run (default {CONFIRM_FACTOR} × --requests)",
    )
    p.add_argument("--timeseries", action="store_true", help="JSON: add the run's time series")
    add_fleet_flags(p)
    add_execution_flags(p)
    p.add_argument(
        "--chrome-trace",
        metavar="FILE.json",
        help="write the simulated run's timeline as a Chrome trace (Trace Event Format JSON: "
        "chrome://tracing, ui.perfetto.dev); a fleet: a process per replica or worker, the KV "
        "transfers on the prefill workers'",
    )
    assumption_flags(p)
    add_serving_flags(p)
    p.add_argument("--format", choices=["json", "table"], default="table")


def add_fleet_flags(p: argparse.ArgumentParser) -> None:
    """Replicas behind a router, and disaggregated prefill/decode workers (engine.Replicas,
    engine.Disaggregated): simulated, open-loop (--rate) or --trace arrivals."""
    p.add_argument(
        "--replicas", type=int, help="replicas behind the router, each simulated (default: one)"
    )
    p.add_argument(
        "--router",
        choices=ROUTERS,
        help="default round-robin for --replicas, least-outstanding for workers",
    )
    for side in ("prefill", "decode"):
        p.add_argument(
            f"--{side}-workers",
            type=int,
            help=f"disaggregated: {side} workers (giving either side's workers disaggregates)",
        )
        p.add_argument(f"--{side}-tp", type=int, help=f"{side} worker's tp (default --tp)")
        p.add_argument(f"--{side}-ep", type=int, help=f"{side} worker's ep (default --ep)")
        p.add_argument(
            f"--{side}-precision", help=f"{side} worker's number format (default --precision)"
        )
    p.add_argument(
        "--kv-overlap",
        choices=["on", "off"],
        help="disaggregated: send each layer's KV as it is computed (default off)",
    )


SIDE_FIELDS = ("tp", "ep", "precision")  # each side's --prefill-X / --decode-X flags


def _side(base: Deployment, args: argparse.Namespace, side: str) -> Deployment:
    tp = getattr(args, f"{side}_tp") or base.tp
    ep = getattr(args, f"{side}_ep")
    if ep is None:
        ep = base.ep if tp % base.ep == 0 else 1
    precision = getattr(args, f"{side}_precision") or base.precision
    return dataclasses.replace(base, tp=tp, ep=ep, precision=precision)


def fleet_of(args: argparse.Namespace, model, kw: dict) -> tuple[object | None, dict]:
    """(the Replicas or Disaggregated the flags name, or None; the keywords left for the
    workload and scheduler)."""
    disaggregated = args.prefill_workers is not None or args.decode_workers is not None
    worker_flags = [
        f"--{name.replace('_', '-')}"
        for name in (
            *(f"{side}_{what}" for side in ("prefill", "decode") for what in SIDE_FIELDS),
            "kv_overlap",
        )
        if getattr(args, name) is not None
    ]
    if worker_flags and not disaggregated:
        raise ValueError(
            f"{', '.join(worker_flags)}: describe disaggregated workers; add --prefill-workers "
            "or --decode-workers"
        )
    if not disaggregated and args.replicas is None:
        if args.router is not None:
            raise ValueError("--router routes among --replicas or prefill/decode workers")
        return None, kw
    keys = Deployment.keywords()
    rest = {k: v for k, v in kw.items() if k not in keys}
    base = Deployment.from_fields(
        None,
        {"model": model, "hardware": args.hardware} | {k: v for k, v in kw.items() if k in keys},
    )
    if not disaggregated:
        return Replicas(base, args.replicas, args.router or "round-robin"), rest
    if args.replicas is not None:
        raise ValueError("--replicas: give workers per side (--prefill-workers, --decode-workers)")
    fleet = Disaggregated(
        prefill=_side(base, args, "prefill"),
        decode=_side(base, args, "decode"),
        prefill_workers=args.prefill_workers or 1,
        decode_workers=args.decode_workers or 1,
        router=args.router or "least-outstanding",
        kv_overlap=args.kv_overlap or "off",
    )
    return fleet, rest


def add_technique_flags(p) -> None:
    """Speculative decoding and a shared prompt prefix (docs/model.md)."""
    p.add_argument(
        "--spec-method",
        choices=list(METHODS),
        help="speculative decoding: a draft model, an EAGLE head, multi-token prediction or "
        "n-gram prompt lookup (default: off)",
    )
    defaults = ", ".join(f"{m} {k}" for m, (k, _) in METHODS.items())
    p.add_argument(
        "--spec-tokens", type=int, help=f"tokens drafted per pass, K (default: {defaults})"
    )
    rates = ", ".join(f"{m} {a:g}" for m, (_, a) in METHODS.items())
    p.add_argument(
        "--spec-acceptance",
        type=float,
        help="per-position acceptance rate (below 1) or mean accepted tokens per pass (1 to "
        f"K+1; default: {rates})",
    )
    p.add_argument("--draft-model", help="--spec-method draft: the draft model's id")
    p.add_argument(
        "--prefix-tokens", type=int, help="shared prompt prefix, tokens (cached; default none)"
    )
    p.add_argument(
        "--prefix-share",
        type=float,
        help="fraction of the requests that carry the prefix (default 1)",
    )
    p.add_argument(
        "--session-turns",
        type=int,
        default=1,
        help="multi-turn sessions: turns per session, each later turn's prompt holding the "
        "conversation so far, cached (default 1: none)",
    )


def _trace(path: str):
    data = read_bounded(path, MAX_TRACE_BYTES, "--trace")  # FileLimitError is a ValueError
    return parse_trace(data, Path(path).name)


def _profile(text: str | None):
    if not text:
        return DEFAULT_PROFILE
    if text.endswith(".toml"):
        try:
            data = read_bounded(text, MAX_PROFILE_BYTES, f"--profile {text[:60]!r}")
            return profile_from_toml(data, Path(text).name, origin="file")
        except OSError as exc:
            raise ValueError(f"--profile {text[:60]!r}: cannot read it ({exc.strerror})") from None
    return get_profile(text)


def _common(args: argparse.Namespace, catalog: Catalog) -> dict:
    """The deployment and scheduler keywords both modes share."""
    chunked = None if args.chunked_prefill is None else args.chunked_prefill == "on"
    overrides = {name: getattr(args, name, None) for name in ASSUMPTION_NAMES}
    return {
        "tp": args.tp,
        "pp": args.pp,
        **split_args(args),
        "precision": args.precision,
        "kv_precision": args.kv_precision,
        "profile": _profile(args.profile),
        "catalog": catalog,
        "max_num_seqs": args.max_num_seqs,
        "max_batched_tokens": args.max_batched_tokens,
        "chunked_prefill": chunked,
        "block_size": args.block_size,
        "kv_policy": args.kv_policy,
        "seed": args.seed,
        "burstiness": args.burstiness,
        "length_spread": args.length_spread,
        "requests": args.requests,
        "spec_method": args.spec_method,
        "spec_tokens": args.spec_tokens,
        "spec_acceptance": args.spec_acceptance,
        "draft_model": args.draft_model,
        "prefix_tokens": args.prefix_tokens,
        "prefix_share": args.prefix_share,
        "session_turns": args.session_turns,
        **overrides,
    }


def _traced_load(*args, **kw) -> ChromeTrace:
    return chrome_trace(*args, **kw)


def _write_trace(traced: ChromeTrace, path: str):
    """Write the trace to `path`; the run's result."""
    try:
        Path(path).write_text(traced.to_json(), encoding="utf-8")
    except OSError as exc:
        raise ValueError(
            f"--chrome-trace {path[:60]!r}: cannot write it ({exc.strerror})"
        ) from None
    return traced.result


def no_rate_reason(m: MaxRate) -> str:
    """Why no rate meets the SLOs: even the lowest rate tried misses them, by these figures;
    or the bisection's answer and the rates below it missed them on the confirmation runs."""
    if m.confirmations:
        rate, seed, requests, ttft, tpot, _ = min(row for row in m.confirmations if not row[-1])
        return (
            f"no rate is confirmed: the bisection's {m.bisection_rate_per_s:.4g} requests/s met "
            f"the SLOs on {m.search_requests:,} requests, but down to {rate:.4g} requests/s a "
            f"run of {requests:,} requests misses them (seed {seed}: {_misses(m, ttft, tpot)}); "
            "relax the SLOs, or serve faster (more devices, a faster accelerator or a lower "
            "precision)"
        )
    rate, ttft, tpot, _ = min(m.tried)
    return (
        f"no rate meets the SLOs: even the lowest rate tried, {rate:.4g} requests/s, misses "
        f"them ({_misses(m, ttft, tpot)}); relax the SLOs, or serve faster (more devices, a "
        "faster accelerator or a lower precision)"
    )


def _misses(m: MaxRate, ttft: float, tpot: float) -> str:
    """Which SLOs a run with these percentiles misses, by its figures."""
    misses = []
    if m.slo.ttft_ms is not None and not ttft <= m.slo.ttft_ms:
        misses.append(f"p90 TTFT {ttft:,.4g} ms against {m.slo.ttft_ms:,g} ms")
    if m.slo.tpot_ms is not None and not tpot <= m.slo.tpot_ms:
        misses.append(f"p99 TPOT {tpot:,.4g} ms against {m.slo.tpot_ms:,g} ms")
    return "; ".join(misses) or "no request ran within the KV pool, or the queue grew"


def _search(args: argparse.Namespace, model, kw: dict) -> dict:
    """`--max-rate`: the highest rate meeting the SLOs, bounded before it runs."""
    if args.chrome_trace:
        raise ValueError(
            "--chrome-trace writes one run's timeline: give --rate, --concurrency or "
            "--trace instead of --max-rate"
        )
    if args.concurrency is not None or args.trace is not None or args.rate is not None:
        raise ValueError("--max-rate searches the rate: give no --rate, --concurrency or --trace")
    if args.slo_ttft_ms is not None or args.slo_tpot_ms is not None:
        raise ValueError(
            "--slo-ttft-ms and --slo-tpot-ms are one run's goodput SLOs; --max-rate's limits "
            "are --slo-ttft-ms-p90 and --slo-tpot-ms-p99 (its answer's run is judged by those)"
        )
    tokens = {"input_tokens": args.input_tokens, "output_tokens": args.output_tokens}
    confirm = {
        k: v
        for k, v in (
            ("confirm_seeds", args.confirm_seeds),
            ("confirm_requests", args.confirm_requests),
        )
        if v is not None
    }
    events = max_rate_events(model, args.hardware, **tokens, **confirm, **kw)
    if events > MAX_EVENTS:
        how = RateSearch(**confirm)
        raise ValueError(
            f"--max-rate: this search would take up to {events:,} events ({MAX_RUNS} runs "
            f"of {args.requests:,} requests and {CONFIRM_ROUNDS} rounds of "
            f"{how.confirm_seeds} runs of {how.confirm_count(args.requests):,} at most), about "
            f"{events * EVENT_US / 1e6:,.0f} s of CPU, more than {MAX_EVENTS:,} (about "
            f"{MAX_EVENTS * EVENT_US / 1e6:,.0f} s): lower --requests, --confirm-requests, "
            "--confirm-seeds, --input-tokens or --output-tokens"
        )
    found = max_rate(
        model,
        args.hardware,
        slo_ttft_ms_p90=_given(args.slo_ttft_ms_p90, DEFAULT_TTFT_MS),
        slo_tpot_ms_p99=_given(args.slo_tpot_ms_p99, DEFAULT_TPOT_MS),
        target_rate=args.target_rate,
        execution=execution_from(args),
        **confirm,
        **tokens,
        **kw,
    )
    result = found.as_dict()
    if found.max_rate_per_s <= 0:  # the reason beside the 0, before the rest
        result = {"max_rate_per_s": 0.0, "reason": no_rate_reason(found)} | result
    return result


def _given(value: float | None, default: float) -> float:
    """A flag's value, or its default when it was not given (flags whose default is None so
    that a flag given to the wrong mode is refused, not ignored)."""
    return default if value is None else value


def cmd_load(args: argparse.Namespace, catalog: Catalog) -> str:
    model = model_from_args(args)
    kw = _common(args, catalog)
    fleet, rest = fleet_of(args, model, kw)
    if fleet is not None and args.max_rate:
        raise ValueError(
            "--max-rate searches one replica's rate: give no --replicas or workers with it"
        )
    if args.max_rate:
        result = _search(args, model, kw)
    else:
        result = _run(args, model=model, kw=kw, fleet=fleet, rest=rest)
    profile = get_profile(kw["profile"])
    result = with_band(result, profile=profile, model=model, args=args, catalog=catalog)
    if args.format == "json":
        return json_text(result)
    shown = {k: v for k, v in result.items() if k not in ("timeseries", "rates_tried")}
    return table_text(shown)


def _run(args: argparse.Namespace, model, kw: dict, fleet, rest: dict) -> dict:
    """One simulated run (a deployment, or a fleet of replicas or workers)."""
    if args.workers is not None or args.ray_address is not None:
        raise ValueError("--workers and --ray-address run --max-rate's simulations: add --max-rate")
    if args.target_rate is not None:
        raise ValueError("--target-rate plans replicas from --max-rate's answer: add --max-rate")
    if args.confirm_seeds is not None or args.confirm_requests is not None:
        raise ValueError(
            "--confirm-seeds and --confirm-requests confirm --max-rate's answer: add --max-rate"
        )
    if args.slo_ttft_ms_p90 is not None or args.slo_tpot_ms_p99 is not None:
        raise ValueError(
            "--slo-ttft-ms-p90 and --slo-tpot-ms-p99 are --max-rate's limits: add --max-rate, "
            "or give one run's goodput SLOs with --slo-ttft-ms and --slo-tpot-ms"
        )
    concurrency = args.concurrency
    if concurrency is not None and concurrency.strip().lower() != "max":
        try:
            concurrency = int(concurrency)
        except ValueError:
            raise ValueError(
                f"--concurrency: expected a whole number of clients or 'max', "
                f"got {concurrency[:40]!r}"
            ) from None
    trace = _trace(args.trace) if args.trace else None
    head = (model, args.hardware) if fleet is None else (fleet,)
    kw = kw if fleet is None else rest
    run = (_traced_load if args.chrome_trace else serve_load)(
        *head,
        input_tokens=args.input_tokens,
        output_tokens=args.output_tokens,
        rate=args.rate,
        concurrency=concurrency,
        trace=trace,
        slo_ttft_ms=_given(args.slo_ttft_ms, DEFAULT_TTFT_MS),
        slo_tpot_ms=_given(args.slo_tpot_ms, DEFAULT_TPOT_MS),
        **kw,
    )
    if args.chrome_trace:
        run = _write_trace(run, args.chrome_trace)
    return run.as_dict(series=args.timeseries)
