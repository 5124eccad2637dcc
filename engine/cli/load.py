"""`python -m engine load`: serving under load from the shell (docs/model.md, "Serving under load").

    python -m engine load --model M --hardware H [--tp N] [--pp N] [--precision P]
        --input-tokens I --output-tokens O (--rate R | --concurrency N|max | --trace FILE)
        [--requests K] [--seed S] [--max-num-seqs N] [--max-batched-tokens N]
        [--chunked-prefill on|off] [--profile P] [assumption flags] --format json|table

prints one simulated run (JSON keys: `LoadResult.as_dict()`, a contract; `--timeseries` adds
the time series). With `--max-rate --slo-ttft-ms-p90 X --slo-tpot-ms-p99 Y` it searches the
highest rate meeting both (key `max_rate_per_s`; `--target-rate R` adds the replicas and the
cost per million output tokens). Bad input raises ValueError, which engine/cli/main.py turns
into one line on stderr and exit status 2.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from engine.assumptions import ASSUMPTION_NAMES
from engine.catalog.load import Catalog
from engine.catalog.profiles import MAX_PROFILE_BYTES, get_profile, profile_from_toml
from engine.catalog.scheduler import KV_POLICIES
from engine.catalog.specs import PRECISIONS
from engine.cli.flags import add_serving_flags
from engine.cli.model_args import add_model_args, model_from_args
from engine.cli.output import json_text, table_text
from engine.files import read_bounded
from engine.load.api import DEFAULT_SLO, serve_load
from engine.load.search import max_rate
from engine.load.trace import MAX_TRACE_BYTES, parse_trace


def add_load_command(sub, assumption_flags) -> None:
    """Register `load` on `sub`; `assumption_flags` adds engine/cli/main.py's flags."""
    p = sub.add_parser("load", help="an LLM serving a stream of requests (continuous batching)")
    add_model_args(p)
    p.add_argument("--hardware", required=True)
    p.add_argument("--tp", type=int, default=1, help="tensor-parallel devices (default 1)")
    p.add_argument("--pp", type=int, default=1, help="pipeline stages (default 1)")
    p.add_argument("--precision", default="fp16", choices=PRECISIONS)
    p.add_argument("--kv-precision", choices=PRECISIONS, help="KV cache (default: --precision)")
    p.add_argument("--input-tokens", type=int, help="prompt tokens per request (mean)")
    p.add_argument("--output-tokens", type=int, help="tokens generated per request (mean)")
    how = p.add_mutually_exclusive_group()
    how.add_argument("--rate", type=float, help="requests per second (open loop)")
    how.add_argument("--concurrency", help="closed-loop clients, or 'max' (max throughput)")
    how.add_argument("--trace", metavar="CSV", help="arrival_s,input_tokens,output_tokens rows")
    p.add_argument("--requests", type=int, default=2000, help="requests simulated (default 2000)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--burstiness", type=float, default=1.0, help="gamma shape (1: Poisson)")
    p.add_argument("--length-spread", type=float, default=0.0,
                   help="lengths uniform within ± this fraction of the mean")  # fmt: skip
    p.add_argument("--max-num-seqs", type=int, help="sequences per step (default: profile's)")
    p.add_argument("--max-batched-tokens", type=int, help="new tokens per step (profile's)")
    p.add_argument("--chunked-prefill", choices=["on", "off"], help="default: the profile's")
    p.add_argument("--block-size", type=int, help="KV block, tokens (default: the profile's)")
    p.add_argument("--kv-policy", choices=KV_POLICIES, help="default: the profile's")
    p.add_argument("--profile", help="named assumptions and scheduler, or a profile .toml file")
    p.add_argument("--slo-ttft-ms", type=float, default=DEFAULT_SLO["ttft_ms"],
                   help="per-request TTFT SLO for goodput, ms (default 2000)")  # fmt: skip
    p.add_argument("--slo-tpot-ms", type=float, default=DEFAULT_SLO["tpot_ms"],
                   help="per-request TPOT SLO for goodput, ms (default 100)")  # fmt: skip
    p.add_argument("--max-rate", action="store_true", help="search the highest rate within SLOs")
    p.add_argument("--slo-ttft-ms-p90", type=float, default=DEFAULT_SLO["ttft_ms"],
                   help="--max-rate: p90 TTFT limit, ms (default 2000)")  # fmt: skip
    p.add_argument("--slo-tpot-ms-p99", type=float, default=DEFAULT_SLO["tpot_ms"],
                   help="--max-rate: p99 TPOT limit, ms (default 100)")  # fmt: skip
    p.add_argument("--target-rate", type=float, help="--max-rate: requests/s to plan replicas for")
    p.add_argument("--timeseries", action="store_true", help="JSON: add the run's time series")
    assumption_flags(p)
    add_serving_flags(p)
    p.add_argument("--format", choices=["json", "table"], default="table")


def _trace(path: str):
    data = read_bounded(path, MAX_TRACE_BYTES, "--trace")  # FileLimitError is a ValueError
    return parse_trace(data, Path(path).name)


def _profile(text: str | None):
    if not text:
        return "tutorial"
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
        "tp": args.tp, "pp": args.pp, "precision": args.precision,
        "kv_precision": args.kv_precision, "profile": _profile(args.profile), "catalog": catalog,
        "max_num_seqs": args.max_num_seqs, "max_batched_tokens": args.max_batched_tokens,
        "chunked_prefill": chunked, "block_size": args.block_size, "kv_policy": args.kv_policy,
        "seed": args.seed, "burstiness": args.burstiness, "length_spread": args.length_spread,
        "requests": args.requests, **overrides,
    }  # fmt: skip


def cmd_load(args: argparse.Namespace, catalog: Catalog) -> str:
    model = model_from_args(args)
    kw = _common(args, catalog)
    if args.max_rate:
        if args.concurrency is not None or args.trace is not None or args.rate is not None:
            raise ValueError("--max-rate searches the rate: give no --rate, --concurrency or "
                             "--trace")  # fmt: skip
        result = max_rate(model, args.hardware, input_tokens=args.input_tokens,
                          output_tokens=args.output_tokens, slo_ttft_ms_p90=args.slo_ttft_ms_p90,
                          slo_tpot_ms_p99=args.slo_tpot_ms_p99, target_rate=args.target_rate,
                          **kw).as_dict()  # fmt: skip
    else:
        if args.target_rate is not None:
            raise ValueError("--target-rate plans replicas from --max-rate's answer: add "
                             "--max-rate")  # fmt: skip
        concurrency = args.concurrency
        if concurrency is not None and concurrency.strip().lower() != "max":
            try:
                concurrency = int(concurrency)
            except ValueError:
                raise ValueError(f"--concurrency: expected a whole number of clients or 'max', "
                                 f"got {concurrency[:40]!r}") from None  # fmt: skip
        trace = _trace(args.trace) if args.trace else None
        run = serve_load(model, args.hardware, input_tokens=args.input_tokens,
                         output_tokens=args.output_tokens, rate=args.rate,
                         concurrency=concurrency, trace=trace, slo_ttft_ms=args.slo_ttft_ms,
                         slo_tpot_ms=args.slo_tpot_ms, **kw)  # fmt: skip
        result = run.as_dict(series=args.timeseries)
    if args.format == "json":
        return json_text(result)
    shown = {k: v for k, v in result.items() if k not in ("timeseries", "rates_tried")}
    return table_text(shown)
