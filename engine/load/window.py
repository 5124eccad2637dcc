"""The measured window of a simulated run, and the time integrals kept over it.

The first and last `warmup` requests are left out (engine/load/workload.py `margin`), so the
statistics describe the steady state. The window [start_s, end_s]:

- open loop and traces: from the arrival of the first measured request to the arrival of the
  first one after them (both known before the run); with no drain, or when those two arrive
  at one instant (a trace whose requests all arrive at once), to the last measured completion;
- closed loop and max throughput: from the completion of rank `warmup` to that of rank
  requests − drain (set as they come); when those fall in one step (every measured request
  completes at once, as a max-throughput run's single wave does), or when a max-throughput
  run has fewer than three waves of what it runs at once (engine/load/simulate.py
  STEADY_WAVES: its margins fall inside the first wave's ramp and drain), from the run's start
  instead, when the first requests arrive (for that case the integrals are also kept from
  the start).

Every step takes time, so the window never has zero length. Over it the simulator integrates
the running requests (request-seconds) and the KV blocks in use (block-seconds: between two
events, the blocks held through the step, the event's preemptions and admissions included, to
the end of the run), and counts the output tokens of the steps ending in it and the
completions in it (closed loop: by rank; from the run's start: every one up to its end);
engine/load/results.py divides them by its length.
"""

from __future__ import annotations

from engine.arrays import INF


class MeasuredWindow:
    """The window's edges (seconds; INF until known) and the integrals over it."""

    __slots__ = (
        "completions",
        "end_rank",
        "end_s",
        "keeps_start",
        "kv_block_s",
        "open_loop",
        "running_s",
        "start_completions",
        "start_kv_block_s",
        "start_rank",
        "start_running_s",
        "start_s",
        "start_tokens",
        "tokens",
    )

    def __init__(self, *, open_loop: bool, start_rank: int, end_rank: int):
        self.open_loop = open_loop
        self.start_rank, self.end_rank = start_rank, end_rank  # measured: ranks start+1 … end
        self.start_s = self.end_s = INF
        self.running_s = 0.0  # ∫ running requests dt
        self.kv_block_s = 0.0  # ∫ KV blocks in use dt
        self.tokens = 0  # output tokens of the steps ending in the window
        self.completions = 0.0  # requests completing in (start_s, end_s]
        # closed loop and max throughput: the same integrals from the run's start to end_s
        self.keeps_start = not open_loop
        self.start_running_s = self.start_kv_block_s = 0.0
        self.start_tokens = 0
        self.start_completions = 0

    @classmethod
    def of_arrivals(cls, arrival_s: list[float], warmup: int, drain: int) -> MeasuredWindow:
        """Open loop and traces: the edges are arrivals, known before the run."""
        count = len(arrival_s)
        window = cls(open_loop=True, start_rank=warmup, end_rank=count - drain)
        window.start_s = arrival_s[warmup] if warmup < count else INF
        last = count - drain
        window.end_s = arrival_s[last] if drain and last < count else INF
        if window.end_s <= window.start_s:
            window.end_s = INF  # every measured request at one instant: closed when they are done
        return window

    @classmethod
    def of_completions(cls, requests: int, warmup: int, drain: int) -> MeasuredWindow:
        """Closed loop and max throughput: the edges are completions, set as they come."""
        window = cls(open_loop=False, start_rank=warmup, end_rank=requests - drain)
        if warmup == 0:
            window.start_s = 0.0
        return window

    def add_step(self, start_s: float, end_s: float, tokens: int, running: int) -> None:
        """A step (or run of steps) from `start_s` to `end_s` with `running` requests in it,
        producing `tokens` output tokens at its end."""
        t0, t1 = self.start_s, self.end_s
        if end_s > t0 and start_s < t1:
            self.running_s += running * (min(end_s, t1) - max(start_s, t0))
            if end_s <= t1:
                self.tokens += tokens
        if self.keeps_start and start_s < t1:
            self.start_running_s += running * (min(end_s, t1) - start_s)
            if end_s <= t1:
                self.start_tokens += tokens

    def add_blocks(self, blocks: float, since_s: float, until_s: float) -> None:
        """`blocks` in use from `since_s` to `until_s`."""
        start, end = max(since_s, self.start_s), min(until_s, self.end_s)
        if end > start:
            self.kv_block_s += blocks * (end - start)
        if self.keeps_start and end > since_s:
            self.start_kv_block_s += blocks * (end - since_s)

    def completed(self, rank: int, now_s: float) -> None:
        """The request of completion rank `rank` (1, 2, …) completed at `now_s`."""
        if self.start_s < now_s <= self.end_s:
            self.completions += 1
        if self.keeps_start and now_s <= self.end_s:
            self.start_completions += 1
        if not self.open_loop:
            if rank == self.start_rank:
                self.start_s = now_s
            if rank == self.end_rank:
                self.end_s = now_s

    def close(self, now_s: float) -> None:
        """Every measured request is done: an end not yet known is now."""
        if self.end_s == INF:
            self.end_s = now_s

    def settle(self, from_start: bool = False) -> None:
        """After the run. Closed loop and max throughput: the completions are counted by rank,
        and a window whose edges fell in one step, or any window when `from_start` (a
        max-throughput run of fewer than three waves: no steady state), opens at the run's
        start instead."""
        if self.open_loop:
            return
        if self.end_s > self.start_s and not from_start:
            self.completions = self.end_rank - self.start_rank
            return
        self.start_s = 0.0
        self.running_s, self.kv_block_s = self.start_running_s, self.start_kv_block_s
        self.tokens, self.completions = self.start_tokens, self.start_completions
