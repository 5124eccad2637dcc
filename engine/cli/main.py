"""The command line: `python -m engine solve|sweep|decode|serve|load|deploy|train|footprint|
tco|sensitivity|list ...`
(flags and keys:
a contract).

Bad input of any kind exits with status 2 and one line on stderr, never a traceback. Output
goes to stdout as JSON (the API's keys), CSV (unit-bearing headers) or a readable table.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable

from engine.catalog.arch import param_count
from engine.catalog.formats import FORMATS, KV_FORMATS, runs_natively
from engine.catalog.kernels import kernel_transfers
from engine.catalog.parse import CatalogError
from engine.catalog.profiles import DEFAULT_PROFILE
from engine.catalog.reader import Catalog, display_origin, load_catalog
from engine.catalog.specs import PRECISIONS
from engine.cli.accuracy import add_accuracy_commands, cmd_calibrate, cmd_validate, profile_arg
from engine.cli.decode import cmd_decode
from engine.cli.deploy import add_deploy_command, cmd_deploy
from engine.cli.dse import add_dse_commands, cmd_reliability, cmd_train_pareto
from engine.cli.flags import add_assumption_flags, assumptions_from
from engine.cli.footprint import add_footprint_commands, cmd_footprint, cmd_tco
from engine.cli.load import add_load_command, cmd_load
from engine.cli.model_args import add_model_args, model_from_args, models_from_args
from engine.cli.output import json_text, table_text
from engine.cli.sensitivity import add_sensitivity_command, cmd_sensitivity
from engine.cli.serve import add_serve_commands, cmd_ops, cmd_serve
from engine.cli.train import (
    add_train_commands,
    cmd_calibrate_train,
    cmd_train,
    cmd_train_search,
)
from engine.report.export import records, to_csv
from engine.roofline.solve import solve
from engine.roofline.sweep import sweep


class UsageError(Exception):
    """Bad input: printed as one line, exit status 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line instead of usage + error
        raise UsageError(message)


def cmd_solve(args: argparse.Namespace, catalog: Catalog) -> str:
    result = solve(
        model=model_from_args(args),
        hardware=args.hardware,
        batch_size=args.batch_size,
        precision=args.precision,
        catalog=catalog,
        assumptions=assumptions_from(args),
    ).as_dict()
    if args.format == "json":
        return json_text(result)
    return table_text(result)


def _batch_list(text: str) -> list[int]:
    items = [t.strip() for t in text.split(",") if t.strip()]
    if not items or len(items) > 10_000:
        raise UsageError("--batch-sizes takes 1 to 10,000 comma-separated whole numbers")
    try:
        return [int(t) for t in items]
    except ValueError:
        raise UsageError(f"--batch-sizes: {text[:40]!r} is not a list of whole numbers") from None


def cmd_sweep(args: argparse.Namespace, catalog: Catalog) -> str:
    df = sweep(
        models=models_from_args(args),
        hardware=args.hardware,
        batch_sizes=_batch_list(args.batch_sizes),
        precisions=args.precision or ["fp16"],
        catalog=catalog,
        assumptions=assumptions_from(args),
    )
    if args.format == "json":
        return json_text(records(df))
    if args.format == "csv":
        return to_csv(df).rstrip("\n")
    cols = [
        "model",
        "hardware",
        "precision",
        "batch_size",
        "bottleneck",
        "latency_ms",
        "throughput_per_s",
        "arithmetic_intensity_flop_per_byte",
        "mfu",
    ]
    return df[cols].to_string(index=False)


def cmd_list(args: argparse.Namespace, catalog: Catalog) -> str:
    if args.what == "transfers":
        return _transfers_text(args)
    if args.what == "formats":
        rows = _format_rows()
    elif args.what == "models":
        rows = _model_rows(catalog)
    else:
        rows = _hardware_rows(catalog)
    if args.format == "json":
        return json_text(rows)
    if args.what == "formats":  # weights and KV caches share names: say which
        return "\n".join(f"{r['kind']:<9} {r['id']:<10} {r['name']}" for r in rows)
    return "\n".join(f"{r['id']:<18} {r['name']}" for r in rows)


def _transfers_text(args: argparse.Namespace) -> str:
    """The profile's kernel transfer (docs/model.md, "Kernel transfer"): per accelerator and
    weight format, the two GEMM curves compared and the ratios its efficiencies take."""
    profile = profile_arg(args.profile)
    a = profile.assumptions
    rows = [
        {"profile": profile.name} | r for r in kernel_transfers(a.kernel_curves, a.kernel_reference)
    ]
    if args.format == "json":
        return json_text(rows)
    if not rows:
        return (
            f"profile {profile.name}: no kernel transfer (kernel_curves = {a.kernel_curves}): "
            "one GEMM efficiency on every accelerator"
        )
    head = (
        f"profile {profile.name}: GEMM efficiencies fitted on {a.kernel_reference}, moved by "
        f"{a.kernel_curves}'s kernel tables (docs/model.md, 'Kernel transfer')"
    )
    columns = f"{'accelerator':<14} {'format':<10} {'curve':<10} {'compared with':<16}"
    lines = [head, f"{columns} {'compute':>8} {'weights':>8}"]
    lines += [
        f"{r['accelerator']:<14} {r['format']:<10} {r['curve']:<10} {r['reference_curve']:<16} "
        f"{r['compute_ratio']:>7.3f}x {r['weight_bandwidth_ratio']:>7.3f}x"
        for r in rows
    ]
    return "\n".join(lines)


def _model_rows(catalog: Catalog) -> list[dict]:
    return [
        {
            "id": m.id,
            "name": m.name,
            "task": m.task,
            "params": m.params,
            "published_params": m.published_params,
            "params_from_shapes": param_count(m.arch) if m.arch else None,
            "flops_per_sample": m.flops_per_sample,
            "flop_convention": m.flop_convention,
            "layers": m.layers,
            "source": m.source,
            "origin": display_origin(m.origin),
        }
        for m in catalog.models.values()
    ]


def _hardware_rows(catalog: Catalog) -> list[dict]:
    return [
        {
            "id": h.id,
            "name": h.name,
            "peak_tflops": {k: v / 1e12 for k, v in h.peak_flop_per_s.items()},
            "fp4_peak_tflops": {k: v / 1e12 for k, v in h.fp4_peak_flop_per_s.items()},
            "native_formats": [f for f in FORMATS if runs_natively(h, f)],
            "memory_bandwidth_gb_per_s": h.memory_bandwidth_bytes_per_s / 1e9,
            "memory_capacity_gib": h.memory_capacity_bytes / 2**30,
            "memory_capacity_bytes": h.memory_capacity_bytes,
            "capacity_label": h.capacity_label,
            "dispatch_overhead_ms": h.dispatch_overhead_s * 1e3,
            "tdp_w": h.tdp_w,
            "interconnect_name": h.interconnect_name,
            "interconnect_bandwidth_bytes_per_s": h.interconnect_bandwidth_bytes_per_s,
            "interconnect_latency_s": h.interconnect_latency_s,
            "devices_per_node": h.devices_per_node,
            "interconnect_source": h.interconnect_source,
            "network_name": h.network_name,
            "network_bandwidth_bytes_per_s": h.network_bandwidth_bytes_per_s,
            "network_latency_s": h.network_latency_s,
            "network_source": h.network_source,
            "price_per_hour_usd": h.price_per_hour_usd,
            "price_source": h.price_source,
            "price_date": h.price_date,
            "source": h.source,
            "origin": display_origin(h.origin),
        }
        for h in catalog.hardware.values()
    ]


def _format_rows() -> list[dict]:
    """The serving model's number formats (engine/catalog/formats.py): weights, then KV."""
    weights = [
        {
            "id": f.name,
            "name": f.summary,
            "kind": "weights",
            "weight_bits": f.weight_bits,
            "activation_bits": f.activation_bits,
            "block": f.block,
            "scale_bits": f.scale_bits,
            "bytes_per_element": f.weight_bytes,
            "peak": f.peak,
            "without_that_peak": f.missing,
            "kv_default": f.kv_default,
        }
        for f in FORMATS.values()
    ]
    caches = [
        {
            "id": k.name,
            "name": k.summary,
            "kind": "kv_cache",
            "bytes_per_element": k.element_bytes,
            "needs_peak": k.needs_peak or None,
        }
        for k in KV_FORMATS.values()
    ]
    return weights + caches


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="python -m engine", description="Roofline Explorer from the shell.")
    parser.add_argument(
        "--catalog",
        action="append",
        default=[],
        metavar="FILE",
        help="extra catalogue TOML file (repeatable); overrides built-ins",
    )
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    p = sub.add_parser("solve", help="one model on one accelerator (docs/model.md)")
    add_model_args(p)
    p.add_argument("--hardware", required=True)
    p.add_argument("--batch-size", type=int, default=1)
    p.add_argument("--precision", default="fp16", choices=PRECISIONS)
    add_assumption_flags(p)
    p.add_argument("--format", choices=["json", "table"], default="table")
    p = sub.add_parser("sweep", help="every model × hardware × precision × batch")
    add_model_args(p, many=True)
    p.add_argument("--hardware", action="append", required=True)
    p.add_argument("--batch-sizes", required=True, help="comma-separated, e.g. 1,2,4,8")
    p.add_argument("--precision", action="append", choices=PRECISIONS)
    add_assumption_flags(p)
    p.add_argument("--format", choices=["json", "csv", "table"], default="table")
    p = sub.add_parser(
        "decode", help="the tutorial's LLM decode view: one decode step and prefill (docs/model.md)"
    )
    add_model_args(p)
    p.add_argument("--hardware", required=True)
    p.add_argument("--batch-size", type=int, default=1, help="concurrent sequences (default 1)")
    p.add_argument("--context", type=int, required=True, help="KV-cache tokens per sequence")
    p.add_argument("--prompt", type=int, help="prompt tokens for the TTFT (default: --context)")
    p.add_argument("--precision", default="fp16", choices=PRECISIONS)
    p.add_argument("--kv-precision", choices=PRECISIONS, help="KV cache (default: --precision)")
    add_assumption_flags(p)
    p.add_argument("--format", choices=["json", "table"], default="table")
    p = sub.add_parser("list", help="catalogue entries")
    p.add_argument("what", choices=["models", "hardware", "formats", "transfers"])
    p.add_argument("--format", choices=["json", "table"], default="table")
    p.add_argument(
        "--profile",
        default=DEFAULT_PROFILE,
        help="transfers: the profile whose kernel transfer to list, a name or a .toml file "
        f"(default {DEFAULT_PROFILE})",
    )
    add_accuracy_commands(sub)
    add_serve_commands(sub, add_assumption_flags)
    add_train_commands(sub)
    add_dse_commands(sub)
    add_load_command(sub, add_assumption_flags)
    add_deploy_command(sub, add_assumption_flags)
    add_footprint_commands(sub)
    add_sensitivity_command(sub, add_assumption_flags)
    return parser


COMMANDS: dict[str, Callable[[argparse.Namespace, Catalog], str]] = {
    "solve": cmd_solve,
    "sweep": cmd_sweep,
    "decode": cmd_decode,
    "list": cmd_list,
    "calibrate": cmd_calibrate,
    "validate": cmd_validate,
    "serve": cmd_serve,
    "ops": cmd_ops,
    "train": cmd_train,
    "train-search": cmd_train_search,
    "calibrate-train": cmd_calibrate_train,
    "reliability": cmd_reliability,
    "train-pareto": cmd_train_pareto,
    "load": cmd_load,
    "deploy": cmd_deploy,
    "footprint": cmd_footprint,
    "tco": cmd_tco,
    "sensitivity": cmd_sensitivity,
}


def main(argv: list[str] | None = None) -> int:
    """Run one command; returns the exit status (0, or 2 for any bad input)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        paths = _pop_catalog_flags(argv)  # accepted before or after the sub-command
        if any(not p.strip() for p in paths):
            raise UsageError("--catalog needs a file name (got an empty one)")
        args = build_parser().parse_args(argv)
        catalog = load_catalog(paths)
        explicit = set(paths)
        for problem in catalog.problems:
            if problem.file in explicit:
                raise UsageError(f"catalogue problem: {problem}")
            print(f"warning: {problem}", file=sys.stderr)
        print(COMMANDS[args.command](args, catalog))
    except BrokenPipeError:  # `... | head`: the reader left; not an error of ours
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (UsageError, ValueError, KeyError, CatalogError) as exc:
        message = str(exc).replace("\n", " ")
        print(f"error: {message}", file=sys.stderr)
        return 2
    return 0


def _pop_catalog_flags(argv: list[str]) -> list[str]:
    """Remove every `--catalog FILE` / `--catalog=FILE` from argv and return the files."""
    found, i = [], 0
    while i < len(argv):
        if argv[i] == "--catalog" and i + 1 < len(argv):
            found.append(argv[i + 1])
            del argv[i : i + 2]
        elif argv[i].startswith("--catalog="):
            found.append(argv.pop(i).split("=", 1)[1])
        else:
            i += 1
    return found
