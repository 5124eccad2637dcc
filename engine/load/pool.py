"""The paged KV-cache pool: its size from memory, and its blocks in use in O(block size).

Size (vLLM's and TensorRT-LLM's paged KV cache, Kwon et al., SOSP 2023): what the fullest
device has left once it holds its weights, `usable − weights` (usable: capacity less the
memory reserve, as in the serving model's memory check), in blocks of `block_size` tokens of
every layer that device holds: a block costs block_size · (KV bytes per token per layer on one
device, engine/catalog/shapes.py's one rule) · (layers on the fullest stage). A model with
sliding-window layers frees what falls out of their window (vLLM's hybrid KV-cache manager), so
a sequence of c cached tokens holds (1−s)·⌈c/b⌉ + s·⌈min(c, w)/b⌉ blocks, s the share of
windowed layers.

Blocks in use: a decoding sequence whose cache is cb + D tokens at the D-th decode step of the
run holds ⌈(cb + D)/b⌉ blocks. `BlockCounter` keeps, over a set of such sequences, only a
histogram of cb mod b and the sum of ⌊cb/b⌋, so Σ⌈(cb + D)/b⌉ at any later D costs O(b), not
O(sequences): with cb = b·a + r and D = b·q + d, ⌈(cb + D)/b⌉ = a + q + [r + d ≥ 1] +
[r + d ≥ b + 1].
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from engine.arrays import INF
from engine.serving.kernel import Folded


@dataclass(frozen=True, slots=True)
class PoolSize:
    """The KV pool of one replica's fullest device."""

    blocks: int
    block_size: int
    block_bytes: float  # one block of every layer the fullest device holds
    usable_bytes: float
    weight_bytes: float
    local_share: float  # s: share of the layers attending within a window (0: none)
    window: float  # w, tokens (INF: no windowed layer)

    @property
    def kv_bytes(self) -> float:
        return self.blocks * self.block_bytes

    def need(self, tokens: int) -> float:
        """Blocks a sequence of `tokens` cached tokens holds."""
        b, share = self.block_size, self.local_share
        whole = -(-tokens // b)
        if not share:
            return float(whole)
        return (1.0 - share) * whole + share * -(-min(tokens, self.window) // b)


def pool_size(f: Folded, block_size: int) -> PoolSize:
    """The pool of a scalar deployment (`Folded` of floats)."""
    per_token = f.kv_dev * f.stage  # bytes per cached token, every layer of the fullest stage
    block = block_size * per_token
    free = f.usable - f.weights
    blocks = int(free // block) if free > 0 and block > 0 else 0
    share = float(f.s.local_layers / f.s.layers)
    window = float(f.s.window) if share else INF
    return PoolSize(
        blocks=blocks,
        block_size=block_size,
        block_bytes=float(block),
        usable_bytes=float(f.usable),
        weight_bytes=float(f.weights),
        local_share=share,
        window=window,
    )


class BlockCounter:
    """Σ ⌈(cb + D)/b⌉ over a set of sequences, each added with its cache base cb (the cache
    holds cb + D tokens at decode step D; cb may be negative)."""

    __slots__ = ("b", "count", "hist", "quotients")

    def __init__(self, block_size: int):
        self.b = block_size
        self.hist = [0] * block_size  # sequences by cb mod b
        self.quotients = 0  # Σ ⌊cb/b⌋
        self.count = 0

    def add(self, cb: int) -> None:
        q, r = divmod(cb, self.b)
        self.hist[r] += 1
        self.quotients += q
        self.count += 1

    def remove(self, cb: int) -> None:
        q, r = divmod(cb, self.b)
        self.hist[r] -= 1
        self.quotients -= q
        self.count -= 1

    def blocks(self, step: int) -> int:
        """Blocks the sequences hold at decode step `step`."""
        n = self.count
        if not n:
            return 0
        b = self.b
        q, d = divmod(step, b)
        total = self.quotients + n * q + n - (self.hist[0] if d == 0 else 0)
        if d >= 2:
            total += sum(self.hist[b + 1 - d :])
        return total


def last_fitting(used, start: int, steps: int, limit: float) -> int:
    """The most steps k ≤ `steps` with used(start + k) ≤ limit (used nondecreasing; 0 if even
    one step does not fit): a bisection over k, O(log steps) evaluations."""
    if used(start + steps) <= limit:
        return steps
    lo, hi = 0, steps  # used(start + lo) fits (or lo = 0), used(start + hi) does not
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if used(start + mid) <= limit:
            lo = mid
        else:
            hi = mid
    return lo


def watermark_blocks(pool: PoolSize, fraction: float) -> int:
    """Blocks kept free when admitting: ⌊fraction · blocks⌋ (vLLM's watermark)."""
    return math.floor(fraction * pool.blocks)
