"""`python -m engine deploy`: the deployment as its stack's launch command and a Kubernetes
manifest (engine/deploy/; docs/model.md, "Taking the answer away").

    python -m engine deploy --model M --hardware H [--tp N] [--pp N] [--ep N]
        [--attention-dp on|off] [--precision P] [--kv-precision K] [--profile P]
        [--max-num-seqs N] [--max-batched-tokens N] [--chunked-prefill on|off] [--block-size N]
        --stack vllm|sglang|trtllm [--hf-id ORG/NAME] [--image IMAGE] --format table|json

`table` prints the command line, its notes (as YAML comments) and the manifest as a YAML
stream (`kubectl apply -f -` reads it); `json` one object: stack, command, argv, port,
stack_config (TensorRT-LLM's options file), notes, manifests.
"""

from __future__ import annotations

import argparse

from engine.assumptions import ASSUMPTION_NAMES
from engine.catalog.profiles import DEFAULT_PROFILE
from engine.catalog.reader import Catalog
from engine.cli.flags import add_format_flags, add_serving_flags, add_split_flags, split_args
from engine.cli.load import _profile
from engine.cli.model_args import add_model_args, model_from_args
from engine.cli.output import json_text
from engine.deploy.manifest import to_yaml, to_yaml_documents
from engine.deploy.plan import launch_plan
from engine.deploy.stacks import STACKS


def add_deploy_command(sub, assumption_flags) -> None:
    """Register `deploy` on `sub`."""
    p = sub.add_parser("deploy", help="a stack's launch command and a Kubernetes manifest")
    add_model_args(p)
    p.add_argument("--hardware", required=True)
    p.add_argument("--tp", type=int, default=1, help="tensor-parallel devices (default 1)")
    p.add_argument("--pp", type=int, default=1, help="pipeline stages (default 1)")
    add_split_flags(p)
    add_format_flags(p)
    p.add_argument("--stack", choices=STACKS, default="vllm", help="serving stack (default vllm)")
    p.add_argument("--hf-id", help="Hugging Face model id to serve (default: the catalogue's)")
    p.add_argument("--image", help="container image (default: the stack's published image)")
    p.add_argument("--max-num-seqs", type=int, help="sequences per step (default: profile's)")
    p.add_argument("--max-batched-tokens", type=int, help="new tokens per step (profile's)")
    p.add_argument("--chunked-prefill", choices=["on", "off"], help="default: the profile's")
    p.add_argument("--block-size", type=int, help="KV block, tokens (default: the profile's)")
    p.add_argument(
        "--profile",
        help=f"named assumptions and scheduler, or a .toml file (default {DEFAULT_PROFILE})",
    )
    assumption_flags(p)
    add_serving_flags(p)
    p.add_argument("--format", choices=["json", "table"], default="table")


def cmd_deploy(args: argparse.Namespace, catalog: Catalog) -> str:
    chunked = None if args.chunked_prefill is None else args.chunked_prefill == "on"
    overrides = {name: getattr(args, name, None) for name in ASSUMPTION_NAMES}
    plan = launch_plan(
        model_from_args(args),
        args.hardware,
        stack=args.stack,
        hf_id=args.hf_id,
        image=args.image,
        tp=args.tp,
        pp=args.pp,
        **split_args(args),
        precision=args.precision,
        kv_precision=args.kv_precision,
        profile=_profile(args.profile),
        catalog=catalog,
        max_num_seqs=args.max_num_seqs,
        max_batched_tokens=args.max_batched_tokens,
        chunked_prefill=chunked,
        block_size=args.block_size,
        **overrides,
    )
    if args.format == "json":
        return json_text(plan.as_dict())
    lines = [f"# {args.stack} launch command:", plan.command]
    lines += [f"# note: {n}" for n in plan.launch.notes]
    if plan.launch.config:
        lines += ["# its --extra_llm_api_options file (in the ConfigMap below):"]
        lines += ["# " + line for line in to_yaml(plan.launch.config).splitlines()]
    lines += ["# Kubernetes manifest (kubectl apply -f -):"]
    return "\n".join(lines) + "\n" + to_yaml_documents(list(plan.manifests)).rstrip("\n")
