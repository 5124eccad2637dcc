"""The CLI's model flags: `--model ID` from the catalogue or `--model-config FILE` (config.json).

Every sub-command that takes a model adds its flags with `add_model_args` and reads them back
with `model_from_args` (one model) or `models_from_args` (a list, for sweeps), so `solve`,
`sweep`, `decode`, `serve` and `ops` accept the same spellings. A config.json becomes a
ModelSpec through `engine.model_from_config`; its errors are ValueErrors that name the field,
which the CLI prints as one line with exit status 2.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from engine.catalog.hf_config import model_from_config
from engine.catalog.specs import ModelSpec


def add_model_args(parser: argparse.ArgumentParser, *, many: bool = False) -> None:
    """Add `--model` and `--model-config` (repeatable when `many`); one of them is needed."""
    action = "append" if many else "store"
    parser.add_argument(
        "--model",
        action=action,
        help="catalogue id, alias or name" + (" (repeatable)" if many else ""),
    )
    parser.add_argument(
        "--model-config",
        action=action,
        metavar="FILE",
        help="a Hugging Face config.json of a decoder LLM, instead of a catalogue id"
        + (" (repeatable)" if many else ""),
    )


def config_model(path: str) -> ModelSpec:
    """The ModelSpec of one config.json file, named after it (its folder for 'config.json')."""
    file = Path(path)
    label = file.parent.name if file.stem == "config" and file.parent.name else file.stem
    return model_from_config(file, id=label[:64] or "config.json")


def model_from_args(args: argparse.Namespace) -> str | ModelSpec:
    """The one model a command names: a catalogue id (resolved later) or a config's spec."""
    if args.model and args.model_config:
        raise ValueError("give --model ID or --model-config FILE, not both")
    if args.model_config:
        return config_model(args.model_config)
    if not args.model:
        raise ValueError("a model is required: --model ID or --model-config FILE")
    return args.model


def models_from_args(args: argparse.Namespace) -> list[str | ModelSpec]:
    """Every model a sweep names: the --model ids, then the --model-config files."""
    models = [*(args.model or []), *(config_model(f) for f in args.model_config or [])]
    if not models:
        raise ValueError("at least one model is required: --model ID or --model-config FILE")
    return models
