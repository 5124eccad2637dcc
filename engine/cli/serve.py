"""`python -m engine serve|ops`: the serving model from the shell (docs/model.md, "Serving model").

`serve` prints one static batch of requests on TP×PP accelerators (JSON keys: `ServeResult.
as_dict()`, a contract); `ops` prints one forward step's operators (JSON, CSV with unit-bearing
headers, or a table). Bad input raises ValueError/KeyError, which engine/cli/main.py's `main` turns
into one line on stderr and exit status 2.
"""

from __future__ import annotations

import argparse

from engine.catalog.profiles import DEFAULT_PROFILE, get_profile
from engine.catalog.reader import Catalog
from engine.cli.bands import with_band
from engine.cli.flags import add_format_flags, add_serving_flags, add_split_flags, split_args
from engine.cli.model_args import add_model_args, model_from_args
from engine.cli.output import json_text, table_text
from engine.report.export import write_csv
from engine.serving.op_table import PHASES, operators
from engine.serving.serve import serve

OPS_COLUMNS = (
    "name",
    "layer",
    "count",
    "op_class",
    "flops",
    "bytes",
    "time_ms",
    "total_time_ms",
    "bottleneck",
    "arithmetic_intensity_flop_per_byte",
)
CSV_RENAMES = {"flops": "work_flop", "count": "count_per_step"}


def _common(p: argparse.ArgumentParser, assumption_flags) -> None:
    add_model_args(p)
    p.add_argument("--hardware", required=True)
    p.add_argument("--tp", type=int, default=1, help="tensor-parallel devices (default 1)")
    p.add_argument("--pp", type=int, default=1, help="pipeline stages (default 1)")
    add_split_flags(p)
    p.add_argument("--batch-size", type=int, default=1, help="sequences (default 1)")
    add_format_flags(p)
    p.add_argument("--profile", help=f"named assumptions to start from (default {DEFAULT_PROFILE})")
    assumption_flags(p)
    add_serving_flags(p)


def add_serve_commands(sub, assumption_flags) -> None:
    """Register `serve` and `ops` on `sub`; `assumption_flags` adds engine/cli/flags.py's flags."""
    p = sub.add_parser("serve", help="an LLM serving a static batch of requests on TP×PP devices")
    _common(p, assumption_flags)
    p.add_argument("--input-tokens", type=int, required=True, help="prompt tokens per sequence")
    p.add_argument("--output-tokens", type=int, required=True, help="tokens generated each")
    p.add_argument("--format", choices=["json", "table"], default="table")
    p = sub.add_parser("ops", help="one forward step's operators, each on its own roofline")
    _common(p, assumption_flags)
    p.add_argument("--phase", choices=PHASES, default="decode")
    p.add_argument("--context", type=int, required=True, help="tokens per sequence")
    p.add_argument("--format", choices=["json", "csv", "table"], default="table")


def _assumption_args(args: argparse.Namespace) -> dict:
    """profile name, starting assumptions and every override the flags give."""
    from engine.assumptions import ASSUMPTION_NAMES

    out: dict = {name: getattr(args, name, None) for name in ASSUMPTION_NAMES}
    if args.profile:
        from engine.catalog.profiles import get_profile

        profile = get_profile(args.profile)
        out |= {"profile": profile.name, "assumptions": profile.assumptions}
    return out


def cmd_serve(args: argparse.Namespace, catalog: Catalog) -> str:
    model = model_from_args(args)
    result = serve(
        model,
        args.hardware,
        tp=args.tp,
        pp=args.pp,
        **split_args(args),
        batch_size=args.batch_size,
        input_tokens=args.input_tokens,
        output_tokens=args.output_tokens,
        precision=args.precision,
        kv_precision=args.kv_precision,
        catalog=catalog,
        **_assumption_args(args),
    ).as_dict()
    profile = get_profile(args.profile)
    result = with_band(result, profile=profile, model=model, args=args, catalog=catalog)
    if args.format == "json":
        return json_text(result)
    return table_text(result)


def cmd_ops(args: argparse.Namespace, catalog: Catalog) -> str:
    kwargs = _assumption_args(args)
    kwargs.pop("profile", None)
    df = operators(
        model_from_args(args),
        args.hardware,
        phase=args.phase,
        batch_size=args.batch_size,
        context=args.context,
        tp=args.tp,
        pp=args.pp,
        **split_args(args),
        precision=args.precision,
        kv_precision=args.kv_precision,
        catalog=catalog,
        **kwargs,
    )
    if args.format == "json":
        return json_text(df.to_dict(orient="records"))
    if args.format == "csv":
        return write_csv(df.rename(columns=CSV_RENAMES)).rstrip("\n")
    return df[list(OPS_COLUMNS)].to_string(index=False)
