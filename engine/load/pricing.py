"""What a simulated step costs: a step with prompt chunks, and a run of pure decode steps.

A step with prompt chunks is priced on its own (engine/serving/step.py `mixed_step_s`): the
decoders' keys, and per attention operator the chunks' own keys (a token at position j attends
min(j, w)) and their prompts' earlier, cached keys. A step with none is one of a run of pure
decode steps of the same m sequences, whose keys grow by one per sequence per step, priced in
closed form (`decode_run_s`) from the decode lines of m sequences, tabulated once per batch
size up to max_num_seqs (engine/load/runs.py `Lines`). To stop a run at a time (an arrival, an
edge of the measured window), `steps_lasting` finds the fewest steps lasting at least so long.
"""

from __future__ import annotations

import numpy as np

from engine.arrays import INF, SCALAR
from engine.load.decoders import DecodeBatch
from engine.load.runs import Lines, quadratic_steps
from engine.serving.kernel import Folded
from engine.serving.step import chunk_keys, decode_lines, decode_run_s, mixed_step_s, windows

Chunk = tuple[int, int, int]  # (request, prompt tokens in this step, its tokens computed before)


class StepPricer:
    """Seconds of one deployment's steps (a folded deployment of floats)."""

    __slots__ = ("attention", "attention_windows", "fixed_s", "folded", "lines_by_batch", "single")

    def __init__(self, folded: Folded, max_num_seqs: int):
        self.folded = folded
        self.attention_windows = windows(folded)  # per attention operator (INF: global)
        self.single = self.attention_windows == (INF,)  # one global attention (most models)
        lines = decode_lines(folded, np.arange(max_num_seqs + 1, dtype=float), np)
        batches = (max_num_seqs + 1,)
        self.fixed_s = np.broadcast_to(lines.fixed, batches).tolist()
        self.attention = [
            (
                np.broadcast_to(a.count, batches).tolist(),  # per batch size: the pipeline's pace
                np.broadcast_to(a.compute0, batches).tolist(),
                np.broadcast_to(a.memory0, batches).tolist(),
                np.broadcast_to(a.compute_per_key, batches).tolist(),  # per batch in flight
                np.broadcast_to(a.memory_per_key, batches).tolist(),
            )
            for a in lines.attention
        ]
        self.lines_by_batch: dict[int, Lines] = {}

    def mixed_s(self, chunks: list[Chunk], decoders: DecodeBatch, finishing: int) -> float:
        """One step with the prompt `chunks` and every decoding sequence; `finishing`: the
        prompts whose last chunk is in it (they produce a token)."""
        windows = self.attention_windows
        if len(chunks) == 1:  # the common case, without the sums
            _, tokens, prior = chunks[0]
            if self.single:  # positions p+1 … p+n attend n·p + n(n+1)/2 keys
                keys, prior_keys = (tokens * prior + tokens * (tokens + 1) / 2.0,), (prior,)
            else:
                keys = tuple(chunk_keys(prior=prior, n=tokens, w=w, xp=SCALAR) for w in windows)
                prior_keys = tuple(min(prior, w) for w in windows)
        else:
            tokens = sum(n for _, n, _ in chunks)
            keys = tuple(
                sum(chunk_keys(prior=prior, n=n, w=w, xp=SCALAR) for _, n, prior in chunks)
                for w in windows
            )
            prior_keys = tuple(sum(min(prior, w) for _, _, prior in chunks) for w in windows)
        return mixed_step_s(
            self.folded,
            SCALAR,
            decode_seqs=decoders.count,
            decode_keys=decoders.keys(),
            prefill_tokens=tokens,
            prefill_seqs=len(chunks),
            done_seqs=finishing,
            prefill_keys=keys,
            prior_keys=prior_keys,
        )

    def decode_run(
        self, decoders: DecodeBatch, *, steps: int, now_s: float, until_s: float, stop_before: bool
    ) -> tuple[int, float]:
        """(steps, seconds) of a run of `steps` pure decode steps from `now_s`, or of fewer:
        the fewest reaching `until_s` when the run would pass it (one fewer when
        `stop_before`, so that the run ends before it)."""
        count = decoders.count
        lines = self.lines_by_batch.get(count)
        if lines is None:
            lines = self.lines_by_batch[count] = Lines(self.fixed_s[count], self.attention, count)
        keys, slopes = self.run_keys(decoders)
        seconds = decode_run_s(lines=lines, keys=keys, slopes=slopes, k=steps, xp=SCALAR)
        if now_s + seconds > until_s and steps > 1:
            steps = self.steps_lasting(
                lines=lines, keys=keys, slopes=slopes, span_s=until_s - now_s, most=steps
            )
            if stop_before and steps > 1:
                steps -= 1
            seconds = decode_run_s(lines=lines, keys=keys, slopes=slopes, k=steps, xp=SCALAR)
        return steps, seconds

    def run_keys(self, decoders: DecodeBatch) -> tuple[tuple, tuple]:
        """The keys of the decode lines and their growth per step (one per attention
        operator; engine/load/speculation.py adds its drafter's)."""
        return decoders.keys(), decoders.key_slopes()

    @staticmethod
    def steps_lasting(lines: Lines, keys: tuple, slopes: tuple, span_s: float, most: int) -> int:
        """The fewest steps (1 … most) whose run lasts at least `span_s`: a quadratic for each
        of the slopes at the run's start and end (the step time is convex in the step), then a
        bisection between them on the closed form."""
        tau0, low, high = lines.first(keys, slopes)
        lo = min(quadratic_steps(tau0, high, span_s), most)
        hi = min(quadratic_steps(tau0, low, span_s), most)
        while lo < hi:
            mid = (lo + hi) // 2
            if decode_run_s(lines=lines, keys=keys, slopes=slopes, k=mid, xp=SCALAR) >= span_s:
                hi = mid
            else:
                lo = mid + 1
        return max(lo, 1)
