"""The CLI's flags of where a search's simulations run: `--workers N` (processes on this
machine, default one per core) and `--ray-address ADDRESS` (a Ray cluster; default the
RAY_ADDRESS environment variable), read into one engine.Execution (engine/scenarios/execution.py).
"""

from __future__ import annotations

import argparse

from engine.scenarios.execution import Execution, default_workers


def add_execution_flags(p: argparse.ArgumentParser) -> None:
    """`--workers` and `--ray-address`."""
    p.add_argument(
        "--workers",
        type=int,
        help=f"--max-rate: processes running its simulations (default one per core, here "
        f"{default_workers()}); the answer is the same for any number",
    )
    p.add_argument(
        "--ray-address",
        help="--max-rate: run its simulations on this Ray cluster ('auto', 'ray://host:10001'; "
        "default the RAY_ADDRESS environment variable; needs `pip install ray`)",
    )


def execution_from(args: argparse.Namespace) -> Execution:
    """The Execution of `--workers` and `--ray-address` (checked: ValueError, exit status 2)."""
    return Execution(workers=args.workers, ray_address=args.ray_address)
