"""`python -m engine sensitivity`: elasticities and the inverse roofline of one served request.

Flags: the `serve` command's (model, hardware, tp, pp, formats, profile, assumptions, batch,
tokens), plus `--step` (the relative perturbation, default 0.1), `--parameters` and `--metrics`
(comma-separated; default all), `--target` and `--target-metric` (default a TPOT of 50 ms),
`--part sensitivity|synthesis|both` and `--format json|csv|table`. JSON keys: README.md,
"python -m engine sensitivity". Model: docs/model.md, "Sensitivity and synthesis".
"""

from __future__ import annotations

import argparse

from engine.catalog.profiles import DEFAULT_PROFILE
from engine.catalog.reader import Catalog
from engine.cli.flags import add_format_flags, add_serving_flags, add_split_flags, split_args
from engine.cli.model_args import add_model_args, model_from_args
from engine.cli.output import json_text
from engine.report.export import write_csv
from engine.scenarios.deployment import Deployment
from engine.scenarios.requests import Batch
from engine.scenarios.sensitivity import (
    DEFAULT_STEP,
    DEFAULT_TARGET_MS,
    METRICS,
    PARAMETERS,
    SYNTHESIS_PARAMETERS,
    Perturbation,
    Target,
)
from engine.serving.sensitivity import sensitivity, synthesis

PARTS = ("both", "sensitivity", "synthesis")


def add_sensitivity_command(sub, assumption_flags) -> None:
    """Register `sensitivity` on `sub`; `assumption_flags` adds engine/cli/flags.py's flags."""
    p = sub.add_parser(
        "sensitivity",
        help="elasticities of a served request to each hardware figure, and the smallest "
        "figures that meet a target (docs/model.md)",
    )
    add_model_args(p)
    p.add_argument("--hardware", required=True)
    p.add_argument("--tp", type=int, default=1, help="tensor-parallel devices (default 1)")
    p.add_argument("--pp", type=int, default=1, help="pipeline stages (default 1)")
    add_split_flags(p)
    p.add_argument("--batch-size", type=int, default=1, help="sequences (default 1)")
    p.add_argument("--input-tokens", type=int, default=1024, help="prompt tokens (default 1024)")
    p.add_argument("--output-tokens", type=int, default=128, help="tokens generated (default 128)")
    add_format_flags(p)
    p.add_argument("--profile", help=f"named assumptions to start from (default {DEFAULT_PROFILE})")
    assumption_flags(p)
    add_serving_flags(p)
    p.add_argument("--step", type=float, default=DEFAULT_STEP, help="relative ± (default 0.1)")
    p.add_argument("--parameters", default=",".join(PARAMETERS), help="comma-separated")
    p.add_argument("--metrics", default=",".join(METRICS), help="comma-separated")
    p.add_argument("--target", type=float, default=DEFAULT_TARGET_MS, help="default 50 (ms)")
    p.add_argument("--target-metric", default="tpot_ms", choices=list(METRICS))
    p.add_argument("--synthesis-parameters", default=",".join(SYNTHESIS_PARAMETERS))
    p.add_argument("--part", choices=PARTS, default="both")
    p.add_argument("--format", choices=["json", "csv", "table"], default="table")


def _deployment(args: argparse.Namespace, catalog: Catalog) -> Deployment:
    from engine.assumptions import ASSUMPTION_NAMES
    from engine.catalog.profiles import get_profile

    overrides = {n: getattr(args, n, None) for n in ASSUMPTION_NAMES}
    profile = get_profile(args.profile) if args.profile else DEFAULT_PROFILE
    return Deployment(
        model=model_from_args(args),
        hardware=args.hardware,
        tp=args.tp,
        pp=args.pp,
        precision=args.precision,
        kv_precision=args.kv_precision,
        profile=profile,
        overrides=overrides,
        catalog=catalog,
        **split_args(args),
    )


def cmd_sensitivity(args: argparse.Namespace, catalog: Catalog) -> str:
    """Elasticities and/or the synthesis, as JSON, CSV (one table: `--part` chooses) or text."""
    dep = _deployment(args, catalog)
    batch = Batch(
        input_tokens=args.input_tokens,
        output_tokens=args.output_tokens,
        batch_size=args.batch_size,
    )
    out = {}
    if args.part in ("both", "sensitivity"):
        p = Perturbation(step=args.step, parameters=args.parameters, metrics=args.metrics)
        out["sensitivity"] = sensitivity(dep, batch, p)
    if args.part in ("both", "synthesis"):
        t = Target(
            metric=args.target_metric, value=args.target, parameters=args.synthesis_parameters
        )
        out["synthesis"] = synthesis(dep, batch, t)
    if args.format == "json":
        return json_text({k: v.as_dict() for k, v in out.items()})
    if args.format == "csv":
        first = out.get("sensitivity") or out["synthesis"]
        return write_csv(first.frame()).rstrip("\n")
    return "\n\n".join(v.frame().to_string(index=False) for v in out.values())
