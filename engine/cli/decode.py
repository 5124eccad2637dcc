"""`python -m engine decode`: the tutorial's LLM decode view (docs/model.md) from the shell.

The handler of the `decode` sub-command (its flags are built in engine/cli/main.py). JSON keys are
`DecodeResult.as_dict()`'s, a contract; bad input raises ValueError/KeyError, which `main`
turns into one line on stderr and exit status 2.
"""

from __future__ import annotations

import argparse

from engine.catalog.reader import Catalog
from engine.cli.model_args import model_from_args
from engine.cli.output import json_text, table_text
from engine.roofline.decode_sweep import decode


def cmd_decode(args: argparse.Namespace, catalog: Catalog) -> str:
    """Decode step and prefill of one LLM on one accelerator, as JSON or a table."""
    result = decode(
        model=model_from_args(args),
        hardware=args.hardware,
        batch_size=args.batch_size,
        context=args.context,
        prompt=args.prompt,
        precision=args.precision,
        kv_precision=args.kv_precision,
        catalog=catalog,
        efficiency=args.efficiency,
        layer_overhead_us=args.layer_overhead_us,
        dispatch_overhead_ms=args.dispatch_overhead_ms,
        activation_fraction=args.activation_fraction,
        flop_convention=args.flop_convention,
    ).as_dict()
    if args.format == "json":
        return json_text(result)
    return table_text(result)
