"""Admission and KV-cache policies: when a waiting request may start, and what it holds.

The simulator asks its policy (one of two, behind the interface `KvPolicy`) how many blocks a
request needs to be admitted, how many are in use, whether the next step must preempt, and
how far a run of decode steps may go before the pool fills:

- `OnDemandPolicy`, vLLM's paged KV cache (Kwon et al., SOSP 2023): a request is admitted
  when its prompt's blocks are free, less a watermark (1 % of the pool, the V0 block
  manager's); a decoding sequence takes one more block every `block_size` tokens; when the
  next step's tokens do not fit, the newest running request is preempted and later recomputed
  (the scheduler:
  https://github.com/vllm-project/vllm/blob/main/vllm/v1/core/sched/scheduler.py).
- `ReservePolicy`, TensorRT-LLM's GUARANTEED_NO_EVICT capacity scheduler: a request is
  admitted only when the blocks of its whole prompt and output are free, so nothing is ever
  preempted (the capacity scheduler:
  https://github.com/NVIDIA/TensorRT-LLM/blob/main/cpp/tensorrt_llm/batch_manager/capacityScheduler.cpp).

Blocks are counted by engine/load/pool.py (`PoolSize.need`) and, for decoding sequences, by
engine/load/decoders.py; docs/model.md, "Serving under load", "The scheduler".
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from engine.catalog.scheduler import SchedulerDefaults
from engine.load.decoders import DecodeBatch
from engine.load.pool import PoolSize, last_fitting, watermark_blocks
from engine.load.requests import RequestTable


class KvPolicy(Protocol):
    """What the simulator asks of a KV-pool policy. Events it is told of: a request admitted
    with `blocks`, its prompt leaving prefill (computed, or preempted), and its completion."""

    watermark_blocks: int  # blocks kept free when admitting

    def blocks_to_admit(self, requests: RequestTable, i: int) -> float:
        """Free blocks request i needs to be admitted."""
        ...

    def used(self, step: int) -> float:
        """Blocks in use once the decoders' caches hold their tokens of decode step `step`."""
        ...

    def admitted(self, blocks: float) -> None: ...

    def prompt_left(self, blocks: float) -> None: ...

    def finished(self, blocks: float) -> None: ...

    def make_room(self, blocks_now: float, preempt: Callable[[], None]) -> None:
        """Call `preempt` until the decoders' next tokens fit (`blocks_now`: in use now)."""
        ...

    def steps_that_fit(self, blocks_now: float, steps: int) -> int:
        """The most decode steps (1 … `steps`) whose tokens fit from `blocks_now` in use."""
        ...


class ReservePolicy:
    """TensorRT-LLM's GUARANTEED_NO_EVICT: a request reserves the blocks of its whole prompt
    and output at admission and returns them when it completes; nothing is preempted."""

    __slots__ = ("cached", "pool", "reserved", "watermark_blocks")

    def __init__(self, pool: PoolSize):
        self.pool = pool
        self.reserved = 0.0  # blocks reserved by the admitted requests
        self.cached = 0.0  # blocks of cached prefixes (engine/load/prefix.py)
        self.watermark_blocks = 0

    def blocks_to_admit(self, requests: RequestTable, i: int) -> float:
        return self.pool.need(requests.input_tokens[i] + requests.output_tokens[i])

    def used(self, step: int) -> float:
        return self.reserved + self.cached

    def admitted(self, blocks: float) -> None:
        self.reserved += blocks

    def handed_over(self, blocks: float) -> None:
        """A request's prefix blocks now belong to the prefix cache."""
        self.reserved -= blocks

    def prompt_left(self, blocks: float) -> None:
        pass  # the reservation covers the output too

    def finished(self, blocks: float) -> None:
        self.reserved -= blocks

    def make_room(self, blocks_now: float, preempt: Callable[[], None]) -> None:
        pass  # every admitted request's blocks are reserved

    def steps_that_fit(self, blocks_now: float, steps: int) -> int:
        return steps


class OnDemandPolicy:
    """vLLM's paged KV cache: a prompt's blocks at admission (less the watermark), one more
    block every `block_size` tokens while decoding, preemption of the newest running request
    (by the simulator, when asked) when the next step's tokens do not fit."""

    __slots__ = ("block_size", "cached", "decoders", "pool", "prefill_held", "watermark_blocks")

    def __init__(self, pool: PoolSize, watermark: float, decoders: DecodeBatch):
        self.pool, self.decoders = pool, decoders
        decoders.count_blocks()  # a decoding sequence's blocks grow with it
        self.block_size = pool.block_size
        self.prefill_held = 0.0  # blocks held by the prompts in prefill
        self.cached = 0.0  # blocks of cached prefixes (engine/load/prefix.py)
        self.watermark_blocks = watermark_blocks(pool, watermark)

    def blocks_to_admit(self, requests: RequestTable, i: int) -> float:
        return self.pool.need(requests.prompt_tokens[i])

    def used(self, step: int) -> float:
        return self.decoders.blocks(step) + self.prefill_held + self.cached

    def admitted(self, blocks: float) -> None:
        self.prefill_held += blocks

    def handed_over(self, blocks: float) -> None:
        pass  # its prompt's blocks left prefill_held; the decoders count the rest

    def prompt_left(self, blocks: float) -> None:
        self.prefill_held -= blocks  # counted by the decoders from now on, or freed

    def finished(self, blocks: float) -> None:
        pass  # its blocks left with its last decode step

    def make_room(self, blocks_now: float, preempt: Callable[[], None]) -> None:
        # each decoder takes at most one more block per step: the exact count only near full
        limit = self.pool.blocks
        if blocks_now + self.decoders.count <= limit:
            return
        while self.used(self.decoders.step + 1) > limit:
            preempt()

    def steps_that_fit(self, blocks_now: float, steps: int) -> int:
        decoders, limit = self.decoders, self.pool.blocks
        if blocks_now + decoders.count * (steps // self.block_size + 1) <= limit:
            return steps
        fitting = last_fitting(
            used=self.used, start=decoders.step + 1, steps=steps - 1, limit=limit
        )
        return fitting + 1


def kv_policy(scheduler: SchedulerDefaults, pool: PoolSize, decoders: DecodeBatch) -> KvPolicy:
    """The policy the scheduler names (engine/catalog/scheduler.py KV_POLICIES)."""
    if scheduler.kv_policy == "reserve":
        return ReservePolicy(pool)
    return OnDemandPolicy(pool=pool, watermark=scheduler.watermark, decoders=decoders)
