"""The decoding sequences of a run: their attention keys, KV blocks, and next events.

Every decoding sequence puts one token in every step, so the batch shares one clock, `step`
(decode steps taken since the run began): a sequence that joins at step D with c cached tokens
has the cache base c − D, and holds base + step tokens at any later step. The batch keeps only
sums over its sequences, so a step's attention keys and the blocks in use cost O(1) and
O(block size) however many decode (engine/load/pool.py `BlockCounter`):

- keys at step D: Σ (base + D + 1) = Σ base + m·(D + 1); an attention operator with a sliding
  window w counts min(context, w), so the sequences whose cache has reached w ("capped") count
  w each and stop growing (Beltagy et al. 2020; Mistral 7B, Jiang et al. 2023);
- blocks (paged, Kwon et al., SOSP 2023): ⌈cache/b⌉ each, and with a share s of windowed
  layers (1−s)·⌈cache/b⌉ + s·⌈min(cache, w)/b⌉ (vLLM's hybrid KV-cache manager);
- the next events are known steps: a sequence finishes at join + tokens to go, and reaches the
  window at w − base; two heaps give the nearest (entries made stale by a preemption are
  skipped: `finish_step` and `window_step` are −1 once a sequence leaves).
"""

from __future__ import annotations

import heapq

from engine.arrays import INF
from engine.load.pool import BlockCounter, PoolSize

LEFT = -1  # finish_step of a sequence not decoding; window_step of one past (or not in) it


class DecodeBatch:
    """The decoding sequences and the sums the simulator prices and counts blocks with."""

    __slots__ = (
        "attention_windows",
        "below",
        "below_cache_base_sum",
        "cache_base",
        "cache_base_sum",
        "capped",
        "count",
        "counts_blocks",
        "finish_step",
        "finishing",
        "global_blocks",
        "local_blocks",
        "local_share",
        "reaching_window",
        "shared",
        "single_window",
        "step",
        "window",
        "window_blocks",
        "window_step",
    )

    def __init__(self, pool: PoolSize, attention_windows: tuple, requests: int):
        self.step = 0  # decode steps taken since the run began
        self.count = 0  # m, the decoding sequences
        self.cache_base_sum = 0
        self.below = self.below_cache_base_sum = 0  # sequences not yet at the window
        self.capped = 0  # sequences at the window: keys and windowed blocks no longer grow
        self.attention_windows = attention_windows  # per attention operator (INF: global)
        self.single_window = attention_windows == (INF,)  # one global attention (most models)
        self.window = pool.window  # the windowed layers' w, tokens (INF: none)
        self.local_share = pool.local_share
        b = pool.block_size
        self.window_blocks = -(-self.window // b) if self.window < INF else 0
        self.global_blocks, self.local_blocks = BlockCounter(b), BlockCounter(b)
        self.counts_blocks = False  # set by a policy that asks for `blocks` (count_blocks)
        self.cache_base = [0] * requests
        self.finish_step = [LEFT] * requests
        self.window_step = [LEFT] * requests
        self.shared = [0] * requests  # cached prefix tokens a sequence shares (not its blocks)
        self.finishing: list[tuple[int, int]] = []  # heap of (finish step, request)
        self.reaching_window: list[tuple[int, int]] = []  # heap of (window step, request)

    def count_blocks(self) -> None:
        """Keep the block counts `blocks` reads from now on (before any sequence joins)."""
        self.counts_blocks = True

    def join(self, i: int, cache_tokens: int, tokens_to_go: int, shared: int = 0) -> None:
        """Request i starts decoding with `cache_tokens` cached and `tokens_to_go` to produce;
        the first `shared` of them (whole blocks) are a cached prefix's, not its own blocks."""
        base = cache_tokens - self.step
        self.shared[i] = shared
        self.cache_base[i] = base
        finish = self.finish_step[i] = self.step + tokens_to_go
        heapq.heappush(self.finishing, (finish, i))
        self.count += 1
        self.cache_base_sum += base
        if self.counts_blocks:
            self.global_blocks.add(base - shared)
        if self.window < INF:
            if cache_tokens >= self.window:
                self.capped += 1
                self.window_step[i] = LEFT
            else:
                self.below += 1
                self.below_cache_base_sum += base
                reach = self.window_step[i] = int(self.window) - base
                heapq.heappush(self.reaching_window, (reach, i))
                if self.counts_blocks:
                    self.local_blocks.add(base)

    def tokens_to_go(self, i: int) -> int:
        """Output tokens decoding request i has still to produce."""
        return self.finish_step[i] - self.step

    def leave(self, i: int) -> None:
        """Request i stops decoding (finished or preempted)."""
        base = self.cache_base[i]
        self.count -= 1
        self.cache_base_sum -= base
        if self.counts_blocks:
            self.global_blocks.remove(base - self.shared[i])
        if self.window < INF:
            if self.window_step[i] == LEFT:
                self.capped -= 1
            else:
                self.below -= 1
                self.below_cache_base_sum -= base
                if self.counts_blocks:
                    self.local_blocks.remove(base)
        self.finish_step[i] = self.window_step[i] = LEFT

    def pop_finished(self) -> list[int]:
        """The sequences whose last token was this step's, in finishing order (each has left)."""
        heap, step = self.finishing, self.step
        if not heap or heap[0][0] > step:
            return []
        done = []
        while heap and heap[0][0] <= step:
            finish, i = heapq.heappop(heap)
            if self.finish_step[i] == finish:
                self.leave(i)
                done.append(i)
        return done

    def cap_at_window(self) -> None:
        """The sequences whose cache reached the window this step stop growing there."""
        heap, step = self.reaching_window, self.step
        while heap and heap[0][0] <= step:
            reach, i = heapq.heappop(heap)
            if self.window_step[i] != reach:
                continue  # stale: finished or preempted since
            base = self.cache_base[i]
            self.below -= 1
            self.below_cache_base_sum -= base
            self.capped += 1
            self.window_step[i] = LEFT
            if self.counts_blocks:
                self.local_blocks.remove(base)

    def next_event_steps(self) -> int:
        """Steps to the nearest known event: a sequence finishing or reaching the window."""
        steps = self.finishing[0][0] - self.step
        if self.reaching_window:
            steps = min(steps, self.reaching_window[0][0] - self.step)
        return steps

    def keys(self) -> tuple:
        """Per attention operator, Σ min(context, window) over the sequences at this step."""
        context = self.step + 1
        if self.single_window:
            return (self.cache_base_sum + self.count * context,)
        return tuple(
            self.cache_base_sum + self.count * context
            if w == INF
            else self.below_cache_base_sum + self.below * context + self.capped * w
            for w in self.attention_windows
        )

    def key_slopes(self) -> tuple:
        """Per attention operator, the keys added by each further step."""
        if self.single_window:
            return (self.count,)
        return tuple(self.count if w == INF else self.below for w in self.attention_windows)

    def blocks(self, step: int) -> float:
        """KV blocks the sequences' caches hold at decode step `step` (once `count_blocks`)."""
        blocks = self.global_blocks.blocks(step)
        share = self.local_share
        if not share:
            return blocks
        local = self.local_blocks.blocks(step) + self.capped * self.window_blocks
        return (1.0 - share) * blocks + share * local
