"""Prefix caching in the load simulator: computed prefix blocks kept in the KV pool, LRU.

vLLM's automatic prefix caching (docs.vllm.ai, "Automatic Prefix Caching": full blocks are
hashed by their tokens and kept after their request ends, free but cached, until evicted least
recently used first), SGLang's RadixAttention (Zheng et al. 2024, arXiv:2312.07104) and
TensorRT-LLM's KV-cache reuse keep the KV blocks of computed prompt prefixes. Here:

- a request carrying a prefix (engine/scenarios/prefix.py) can reuse its whole blocks only,
  ⌊P/b⌋·b of its P prefix tokens (b the block size), and never its last input token (the
  step that produces its first token computes at least that one);
- a prefix enters the cache when the first request carrying it has computed its prompt; its
  blocks then belong to the cache, shared by every running request that uses it (counted once
  in the pool);
- a request admitted while it is cached (a hit) holds only its other blocks, and its prefill
  starts after the cached tokens: they are not computed, but its chunks still read their KV
  (engine/serving/step.py prices the cached keys a chunk attends);
- cached blocks that no running request uses are evicted, least recently used first, when an
  admission or the running sequences' next tokens need the room (before any preemption).

`prefix_hit_rate` is vLLM's prefix-cache hit rate (its `prefix_cache_hits` over
`prefix_cache_queries`, both in tokens): the input tokens found cached at the measured
requests' first admission over their input tokens. Windowed (sliding-window) layers are
counted as if they kept the prefix too. docs/model.md, "Prefix caching".
"""

from __future__ import annotations

from collections import OrderedDict

import numpy as np

from engine.load.pool import PoolSize
from engine.load.workload import previous_turns, trace_previous
from engine.scenarios.workload import Workload

CARRIER_STREAM = 0x50524546  # the seed stream of who carries the prefix (apart from lengths)


def carried_tokens(w: Workload, n_in: np.ndarray, block_size: int) -> np.ndarray:
    """Per request, the prefix tokens it can reuse once cached: ⌊min(P, I − 1)/b⌋·b for a
    carrier (each request one with probability `share`, from its own seeded stream, so the
    lengths and arrivals drawn do not change), 0 for the others."""
    if w.prefix is None:
        return np.zeros(len(n_in), dtype=np.int64)
    rng = np.random.default_rng((w.seed, CARRIER_STREAM))
    carries = rng.random(len(n_in)) < w.prefix.share
    usable = np.minimum(w.prefix.tokens, np.maximum(n_in - 1, 0))
    return np.where(carries, usable // block_size * block_size, 0).astype(np.int64)


def prefix_cache(w: Workload, n_in: np.ndarray, n_out: np.ndarray, pool: PoolSize):
    """The run's prefix cache (None without a shared prefix or sessions): a first turn may
    carry the shared prefix (id 0); a later turn of a multi-turn session carries its history,
    the previous turn's prompt and answer, ⌊min(history, I − 1)/b⌋·b tokens (id 1 + session),
    kept in the cache when the previous turn completes."""
    # a trace's inputs already hold the conversation; a drawn workload's were given it
    trace = w.trace
    previous = previous_turns(w) if trace is None else trace_previous(trace.session, len(n_in))
    later = previous >= 0
    if w.prefix is None and not later.any():
        return None
    b = pool.block_size
    carried = carried_tokens(w, n_in, b)
    ids = np.where(carried > 0, 0, -1)
    index = np.arange(len(n_in))
    before = np.maximum(previous, 0)
    history = np.minimum(n_in[before] + n_out[before], np.maximum(n_in - 1, 0)) // b * b
    carried = np.where(later, history, carried)
    first = index.copy()  # each request's session: its first turn's index
    for i in np.flatnonzero(later):
        first[i] = first[previous[i]]
    ids = np.where(later, 1 + first, ids)
    next_of = np.full(len(n_in), -1, dtype=np.int64)
    next_of[previous[later]] = index[later]
    return PrefixCache(carried, pool, ids=ids, next_of=next_of)


def fast_prompt(w: Workload, block_size: int) -> tuple[float, float]:
    """The fast path's mean prompt: (tokens computed, tokens found cached). A first turn
    computes its input less the shared prefix's reusable tokens; with T-turn sessions, a later
    turn k computes only its own message, its k·(I + O) tokens of history cached (the mean over
    k = 0 … T − 1: (T − 1)/2 · (I + O), less half a block for the whole-block rule)."""
    shared = mean_cached(w, block_size)
    n_in, turns = float(w.input_tokens), w.session_turns
    if turns <= 1 or w.trace is not None:
        return n_in - shared, shared
    history = (
        (turns - 1) / turns * ((turns / 2.0) * (n_in + float(w.output_tokens)) - block_size / 2.0)
    )
    return n_in - shared / turns, history + shared / turns


def mean_cached(w: Workload, block_size: int) -> float:
    """The fast path's mean cached prompt tokens: share × ⌊min(P, I − 1)/b⌋·b at the mean
    input I (every carrier after the first finds the prefix cached)."""
    return float(cached_tokens(w.prefix, float(w.input_tokens), block_size))


def cached_tokens(prefix, n_in, block_size):
    """`mean_cached` for a Prefix (or None) and input tokens (a number or an array)."""
    if prefix is None:
        return 0.0 * n_in
    usable = np.minimum(prefix.tokens, np.maximum(np.floor(n_in) - 1.0, 0.0))
    return prefix.share * (usable // block_size * block_size)


class PrefixCache:
    """The cached prefixes of one run (each request carries prefix 0 or none) and each
    request's use of them."""

    __slots__ = (
        "block_size",
        "blocks",
        "carried",
        "entries",
        "hit_tokens",
        "next_of",
        "policy",
        "prefix_id",
        "shared",
    )

    def __init__(self, carried, pool: PoolSize, ids=None, next_of=None):
        self.block_size = pool.block_size
        self.carried = [int(t) for t in carried]  # reusable prefix tokens per request
        if ids is None:
            self.prefix_id = [0 if t else -1 for t in self.carried]
        else:
            self.prefix_id = [int(k) for k in ids]
        # the next turn of each request's session (-1: none)
        self.next_of = [-1] * len(self.carried) if next_of is None else [int(k) for k in next_of]
        self.entries: OrderedDict[int, list] = OrderedDict()  # id: [tokens, users], LRU first
        self.blocks = 0.0  # blocks the cached prefixes hold
        self.shared = [0] * len(self.carried)  # tokens request i shares while it runs
        self.hit_tokens = [-1] * len(self.carried)  # found cached at first admission (-1: not yet)
        self.policy = None  # the KV policy whose `cached` blocks this keeps (`attach`)

    def attach(self, policy) -> None:
        self.policy = policy
        policy.cached = 0.0

    def _set_blocks(self, blocks: float) -> None:
        self.blocks = blocks
        self.policy.cached = blocks

    def hit(self, i: int) -> int:
        """Tokens of request i's prompt found cached now."""
        entry = self.entries.get(self.prefix_id[i])
        return min(entry[0], self.carried[i]) if entry is not None else 0

    def admitted(self, i: int, hit: int) -> None:
        """Request i admitted with `hit` tokens cached: it uses the entry (most recent now)."""
        if self.hit_tokens[i] < 0:
            self.hit_tokens[i] = hit
        if hit:
            key = self.prefix_id[i]
            self.entries[key][1] += 1
            self.entries.move_to_end(key)
            self.shared[i] = hit

    def prompt_done(self, i: int) -> int:
        """Request i computed its prompt: its prefix enters the cache if absent (its blocks
        become the cache's). The tokens it shares from now on."""
        if self.shared[i] or not self.carried[i] or self.prefix_id[i] in self.entries:
            return self.shared[i]
        tokens = self.carried[i]
        self.entries[self.prefix_id[i]] = [tokens, 1]
        self._set_blocks(self.blocks + tokens / self.block_size)
        self.policy.handed_over(tokens / self.block_size)
        self.shared[i] = tokens
        return tokens

    def released(self, i: int) -> None:
        """Request i completed or was preempted: it no longer uses its entry."""
        if self.shared[i]:
            entry = self.entries.get(self.prefix_id[i])
            if entry is not None:
                entry[1] = max(entry[1] - 1, 0)
            self.shared[i] = 0

    def done(self, i: int) -> None:
        """Request i completed: released, and the history its session's next turn will carry
        (its prompt and answer, whole blocks of its freed ones) stays cached, replacing the
        shorter history of its session unless a running request uses that."""
        self.released(i)
        following = self.next_of[i]
        if following < 0 or not self.carried[following]:
            return
        key, tokens = self.prefix_id[following], self.carried[following]
        old = self.entries.get(key)
        if old is not None and old[1]:
            return
        freed = old[0] / self.block_size if old is not None else 0.0
        self.entries.pop(key, None)
        self.entries[key] = [tokens, 0]
        self._set_blocks(self.blocks - freed + tokens / self.block_size)

    def evict(self, blocks: float, keep: int = -2) -> float:
        """Evict entries no running request uses, least recently used first (never `keep`),
        until `blocks` are freed or none is left; the blocks freed."""
        freed = 0.0
        for key in list(self.entries):
            if freed >= blocks:
                break
            tokens, users = self.entries[key]
            if users or key == keep:
                continue
            del self.entries[key]
            freed += tokens / self.block_size
        if freed:
            self._set_blocks(self.blocks - freed)
        return freed

    def hit_rate(self, idx: np.ndarray, n_in: np.ndarray) -> float:
        """Cached input tokens at first admission over input tokens, of requests `idx`."""
        hits = np.maximum(np.asarray(self.hit_tokens, dtype=float)[idx], 0.0)
        total = float(n_in.sum())
        return float(hits.sum()) / total if total > 0 else float("nan")
