"""A fleet: replicas of one deployment behind a router, or disaggregated prefill and decode.

`Replicas(deployment, replicas, router)`: `replicas` copies of a Deployment, each simulated with
its own scheduler and KV pool; the router sends each request, as it arrives, to one of them
(vidur's replica routers; vLLM's production stack and NVIDIA Dynamo route the same ways):

- `round-robin`: the replicas in turn;
- `least-outstanding`: the replica with the fewest requests sent and not yet finished
  (ties: the lowest index);
- `prefix-aware`: the replica already holding the request's prefix, and least-outstanding
  when the workload has no shared prefix (this version's workloads have none).

`Disaggregated(prefill, decode, prefill_workers, decode_workers, router, kv_overlap)`: the
prompts are computed on `prefill_workers` copies of the `prefill` Deployment, their KV cache
sent to one of `decode_workers` copies of the `decode` Deployment, which produce the other
tokens (DistServe, Zhong et al., OSDI 2024; Splitwise, Patel et al., ISCA 2024). Each side
has its own layout and number formats. `kv_overlap` sends each layer's KV as soon as it is
computed (Mooncake's layer-wise prefill, Qin et al., FAST 2025) instead of after the whole
prompt (vLLM's and TensorRT-LLM's disaggregated serving send the finished request's blocks):
engine/load/disagg.py prices it. docs/model.md, "Replicas, routers and disaggregated serving".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from engine.checks import check_whole
from engine.scenarios.deployment import SWITCH_WORDS, Deployment

ROUTERS = ("round-robin", "least-outstanding", "prefix-aware")
MAX_REPLICAS = 64  # replicas (or workers of one side) simulated at once


def check_router(value: object) -> str:
    """One of ROUTERS (case and surrounding spaces ignored)."""
    if isinstance(value, str) and value.strip().lower() in ROUTERS:
        return value.strip().lower()
    raise ValueError(f"router: expected one of {', '.join(ROUTERS)}, got {value!r}"[:200])


def check_switch(value: object, name: str) -> bool:
    """True or False (or the words "on" and "off", as the CLI and links write it)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in SWITCH_WORDS:
        return SWITCH_WORDS[value.strip().lower()]
    raise ValueError(f"{name}: expected on or off (true or false), got {value!r}"[:200])


def check_deployment(value: object, name: str) -> Deployment:
    if not isinstance(value, Deployment):
        raise ValueError(f"{name}: expected a Deployment, got {type(value).__name__}")
    return value


@dataclass(frozen=True, slots=True)
class Replicas:
    """`replicas` copies of `deployment` behind a `router`."""

    deployment: Deployment
    replicas: int = 1
    router: str = "round-robin"

    ARG: ClassVar[str] = "replicas"

    def __post_init__(self) -> None:
        check_deployment(self.deployment, "deployment")
        n = check_whole(self.replicas, "replicas", high=MAX_REPLICAS)
        object.__setattr__(self, "replicas", n)
        object.__setattr__(self, "router", check_router(self.router))

    @property
    def devices(self) -> int:
        return self.replicas * self.deployment.devices


@dataclass(frozen=True, slots=True)
class Disaggregated:
    """Prefill workers and decode workers, each side its own Deployment, and a router."""

    prefill: Deployment
    decode: Deployment
    prefill_workers: int = 1
    decode_workers: int = 1
    router: str = "least-outstanding"
    kv_overlap: bool = False  # each layer's KV sent as it is computed (Mooncake)

    ARG: ClassVar[str] = "disaggregated"

    def __post_init__(self) -> None:
        check_deployment(self.prefill, "prefill")
        check_deployment(self.decode, "decode")
        for name in ("prefill_workers", "decode_workers"):
            value = check_whole(getattr(self, name), name, high=MAX_REPLICAS)
            object.__setattr__(self, name, value)
        object.__setattr__(self, "router", check_router(self.router))
        object.__setattr__(self, "kv_overlap", check_switch(self.kv_overlap, "kv_overlap"))
        if self.prefill.model != self.decode.model:
            raise ValueError("prefill and decode must serve the same model")

    @property
    def devices(self) -> int:
        """Every accelerator of both sides."""
        return self.prefill_workers * self.prefill.devices + self.decode_workers * (
            self.decode.devices
        )
