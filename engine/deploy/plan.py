"""`launch_plan`: a Deployment (and its Scheduler) as a stack's launch command and the
Kubernetes objects that run it.

The settings come from the objects the engine simulates: the model's Hugging Face id (its
catalogue `source` on huggingface.co, or `hf_id`), the layout (tp, pp, ep, attention DP), the
number formats, the profile's scheduler with the call's overrides (per attention-DP rank, as
the stacks take them: engine/load/api.py `per_replica` multiplies them for the simulator), and
the memory share 1 − memory_reserve. The command is a list of arguments (`argv`) and its
shell-quoted text; the manifest is a list of objects (engine/deploy/manifest.py).
"""

from __future__ import annotations

import dataclasses
import shlex
from dataclasses import dataclass

from engine.catalog.resolve import resolve_hardware, resolve_model
from engine.deploy import manifest as mf
from engine.deploy.stacks import BUILDERS, STACKS, Launch, Settings
from engine.load.api import scheduler_base
from engine.scenarios.bind import bind
from engine.scenarios.deployment import Deployment, HardwareRef, ModelRef
from engine.scenarios.service import Scheduler
from engine.serving import inputs as si

HF = "https://huggingface.co/"
MAX_HF_ID = 200


@dataclass(frozen=True)
class LaunchPlan:
    """One stack's command for one deployment, and the objects that run it."""

    launch: Launch
    manifests: tuple[dict, ...]
    settings: Settings

    @property
    def command(self) -> str:
        """The command as one shell line (each argument quoted when it needs to be)."""
        return shlex.join(self.launch.argv)

    def as_dict(self) -> dict:
        return {
            "stack": self.launch.stack,
            "command": self.command,
            "argv": list(self.launch.argv),
            "port": self.launch.port,
            "stack_config": dict(self.launch.config) or None,
            "notes": list(self.launch.notes),
            "manifests": list(self.manifests),
        }


def hf_id_of(model: object, given: str | None) -> str:
    """`given`, else the model's Hugging Face id from its catalogue source."""
    if given is not None:
        if not isinstance(given, str) or not 0 < len(given.strip()) <= MAX_HF_ID:
            raise ValueError(f"hf_id: expected a Hugging Face model id (at most {MAX_HF_ID} chars)")
        return given.strip()
    source = getattr(model, "source", "") or ""
    if source.startswith(HF):
        parts = source[len(HF) :].split("/")
        if len(parts) >= 2 and parts[0] and parts[1]:
            return f"{parts[0]}/{parts[1]}"
    name = getattr(model, "id", None) or getattr(model, "name", "this model")
    raise ValueError(
        f"{name}: its catalogue source is not a Hugging Face page; give hf_id (--hf-id ORG/NAME)"
    )


def settings_of(dep: Deployment, scheduler: Scheduler | None, hf_id: str | None) -> Settings:
    """The launch settings of a Deployment under its profile's scheduler and `scheduler`."""
    p = si.scenario(dep)  # checks the layout and formats as every run does
    base = scheduler_base(dep.profile)
    sched = base if scheduler is None else scheduler.applied_to(base)
    model = dep.model if not isinstance(dep.model, str) else resolve_model(dep.model, dep.catalog)
    return Settings(
        hf_id=hf_id_of(model, hf_id),
        tp=p.tp,
        pp=p.pp,
        ep=p.split.ep,
        attention_dp=p.split.attention_dp,
        precision=p.setup.precision,
        kv_precision=p.setup.kv_precision,
        max_num_seqs=sched.max_num_seqs,
        max_batched_tokens=sched.max_batched_tokens,
        chunked_prefill=sched.chunked_prefill,
        block_size=sched.block_size,
        memory_fraction=round(1.0 - p.setup.assumptions.memory_reserve, 4),
        kv_policy=sched.kv_policy,
    )


def launch_plan(
    deployment: Deployment | ModelRef | None = None,
    hardware: HardwareRef | None = None,
    /,
    scheduler: Scheduler | None = None,
    stack: str = "vllm",
    hf_id: str | None = None,
    image: str | None = None,
    **fields: object,
) -> LaunchPlan:
    """The launch command of `stack` ("vllm", "sglang" or "trtllm") for a deployment and the
    Kubernetes objects that run it (docs/model.md, "Taking the answer away").

    Args:
        deployment, scheduler: a Deployment and Scheduler, or their fields as keywords, as
            `serve_load` takes them.
        hf_id: the Hugging Face model id to serve (default: the catalogue source's).
        image: the container image (default: the stack's, engine/deploy/manifest.py IMAGES).
    """
    if stack not in STACKS:
        raise ValueError(f"stack: expected one of {', '.join(STACKS)}, got {str(stack)[:40]!r}")
    if image is not None and (not isinstance(image, str) or not 0 < len(image.strip()) <= 300):
        raise ValueError("image: expected a container image reference (at most 300 characters)")
    given = {"scheduler": scheduler, **fields}
    dep, sched = bind((deployment, hardware), given, Deployment, Scheduler)
    s = settings_of(dep, sched, hf_id)
    launch = BUILDERS[stack](s)
    hw = resolve_hardware(dep.hardware, dep.catalog)
    name = mf.dns_name(f"{s.hf_id.rsplit('/', 1)[-1]}-{stack}")
    labels = {"roofline-explorer/hardware": mf.dns_name(hw.id), "roofline-explorer/stack": stack}
    objects = mf.manifests(launch, name=name, gpus=s.tp * s.pp, labels=labels, image=image or "")
    notes = launch.notes
    if s.tp * s.pp > hw.devices_per_node:
        notes += (
            f"{s.tp * s.pp} GPUs is more than one {hw.id} node's {hw.devices_per_node}: one pod "
            "cannot hold them; run it with a multi-node launcher (LeaderWorkerSet, Ray)",
        )
    launch = dataclasses.replace(launch, notes=notes)
    return LaunchPlan(launch=launch, manifests=tuple(objects), settings=s)
