"""The continuous-batching simulator: a scheduler like vLLM's and TensorRT-LLM's, event to event.

Each iteration the scheduler (first come, first served) keeps every running sequence, gives
each decoding one its next token, gives the prompts in prefill their next chunks, then admits
waiting requests while a sequence slot (`max_num_seqs`), the step's token budget
(`max_batched_tokens`, whole prompts only when chunked prefill is off) and the KV pool allow
(engine/load/pool.py; vLLM: the prompt's blocks, less a watermark; TensorRT-LLM's
GUARANTEED_NO_EVICT: the whole request's). Under vLLM's policy a decoding sequence takes a new
block every `block_size` tokens; when none is free the newest running request is preempted,
its blocks freed, and it is put back at the head of the queue to recompute its prompt and
the tokens it had produced (Kwon et al., SOSP 2023, §4.5).

A step with prompt chunks is priced on its own (engine/serving/step.py `mixed_step_s`). A step
with none is one of a run of pure decode steps with the same m sequences, whose keys grow by
one per sequence per step, so the run is priced in closed form (`decode_run_s`) and the
simulator jumps to the next event: a finish, a window crossing, the pool running out, an
arrival that could be admitted, or an edge of the measured window. Arrivals wait for the end
of the step in flight. Request state lives in flat per-request arrays (Python lists in the
loop, for scalar speed; numpy for the statistics), never in per-request objects.
"""

from __future__ import annotations

import heapq
import math
from collections import deque

import numpy as np

from engine.arrays import INF, SCALAR
from engine.catalog.scheduler import SchedulerDefaults
from engine.load.pool import BlockCounter, PoolSize, last_fitting, watermark_blocks
from engine.load.runs import Lines, quadratic_steps
from engine.serving.kernel import Folded
from engine.serving.step import chunk_keys, decode_lines, decode_run_s, mixed_step_s, windows

WAITING, PREFILL, DECODE, DONE = 0, 1, 2, 3
MAX_SERIES = 2000  # time-series points kept (evenly thinned)


class Simulator:
    """One run: build it, then `run()`; the per-request records and window statistics are its
    attributes (engine/load/results.py turns them into a result)."""

    def __init__(self, f: Folded, sched: SchedulerDefaults, pool: PoolSize, *, arrival, n_in,
                 n_out, clients: int | None, warm: int, drain: int,
                 max_events: int):  # fmt: skip
        self.f, self.sched, self.pool = f, sched, pool
        k = len(n_in)
        self.k, self.warm, self.drain, self.clients = k, warm, drain, clients
        self.n_in, self.n_out = [int(v) for v in n_in], [int(v) for v in n_out]
        self.open = arrival is not None
        self.arrival = list(map(float, arrival)) if self.open else [math.nan] * k
        nan = [math.nan] * k
        self.t_admit, self.t_first, self.t_done = nan[:], nan[:], nan[:]
        self.state, self.gen, self.prompt = [WAITING] * k, [0] * k, self.n_in[:]
        self.done_tokens, self.cb, self.fin, self.cross = [0] * k, [0] * k, [0] * k, [0] * k
        self.held, self.slot, self.preempted = [0.0] * k, [0] * k, [0] * k
        self.now, self.D, self.max_events, self.scan = 0.0, 0, max_events, warm
        self.kv = self.t_kv = 0.0  # blocks in use at the last event, and its time
        self.produced = 0  # output tokens, every request (conservation: Σ output tokens)
        self.waiting: deque[int] = deque()
        self.prefilling: list[int] = []
        self.order: list[int] = []  # admission order (lazy: stale entries skipped)
        self.fin_heap: list = []
        self.cross_heap: list = []
        self._decoders(sched.block_size)
        self._tables(sched.max_num_seqs)
        self._window_edges(arrival)
        self.series: list[tuple] = []
        self.completed: list[int] = []  # request indices in completion order
        self.acc = {"running": 0.0, "kv": 0.0, "tokens": 0.0, "done_in_window": 0.0}

    # --- set-up --------------------------------------------------------------------------
    def _decoders(self, b: int) -> None:
        self.m = self.sum_cb = 0  # decoding sequences, Σ cb over them
        self.below = self.sum_cb_below = self.capped = 0  # windowed: inside / past the window
        self.counter, self.counter_local = BlockCounter(b), BlockCounter(b)
        self.window = self.pool.window
        self.local_blocks = -(-self.window // b) if self.window < INF else 0
        self.prefill_held = 0.0  # blocks held by prompts in prefill (vLLM policy)
        self.reserved = 0.0  # blocks held by admitted requests (TensorRT-LLM policy)
        self.on_demand = self.sched.kv_policy == "on_demand"
        self.watermark = watermark_blocks(self.pool, self.sched.watermark) if self.on_demand else 0
        self.wins = windows(self.f)
        self.single = self.wins == (INF,)  # one global attention operator (most models)

    def _tables(self, seqs: int) -> None:
        """Decode lines for every batch size up to max_num_seqs, as Python lists."""
        lines = decode_lines(self.f, np.arange(seqs + 1, dtype=float), np)
        self.fixed = np.broadcast_to(lines.fixed, (seqs + 1,)).tolist()
        self.lines: dict[int, Lines] = {}
        self.att = [(a.count, np.broadcast_to(a.compute0, (seqs + 1,)).tolist(),
                     np.broadcast_to(a.memory0, (seqs + 1,)).tolist(), a.compute_per_key,
                     a.memory_per_key) for a in lines.attention]  # fmt: skip

    def _window_edges(self, arrival) -> None:
        """The measured window [t0, t1]: open loop, the arrivals of the first and last
        measured requests (known now); closed loop and max, completions (set as they come)."""
        self.t0 = self.t1 = INF
        self.next_arrival = 0
        if self.open:
            self.t0 = self.arrival[self.warm] if self.warm < self.k else INF
            last = self.k - self.drain
            self.t1 = self.arrival[last] if self.drain and last < self.k else INF
        else:
            first = self.k if self.clients is None else self.clients
            for i in range(first):
                self._arrive(i, 0.0)
            self.next_arrival = first
            if self.warm == 0:
                self.t0 = 0.0

    # --- blocks --------------------------------------------------------------------------
    def used(self, step: int) -> float:
        """Blocks in use once the decoders' caches hold their tokens of decode step `step`."""
        if not self.on_demand:
            return self.reserved
        share = self.pool.local_share
        glob = self.counter.blocks(step)
        if not share:
            return glob + self.prefill_held
        local = self.counter_local.blocks(step) + self.capped * self.local_blocks
        return (1.0 - share) * glob + share * local + self.prefill_held

    def _fits_next_step(self) -> None:
        """vLLM: preempt the newest running requests until the decoders' next tokens fit (each
        decoder takes at most one more block per step: the exact count only near full)."""
        if not self.on_demand or self.kv + self.m <= self.pool.blocks:
            return
        while self.used(self.D + 1) > self.pool.blocks:
            self._preempt()

    def _preempt(self) -> None:
        order, state, slot = self.order, self.state, self.slot
        while order:
            i = order.pop()
            if state[i] in (PREFILL, DECODE) and slot[i] == len(order):
                break
        else:
            raise ValueError("the KV pool cannot hold a single request")  # checked before
        if state[i] == DECODE:
            self.gen[i] = self.n_out[i] - (self.fin[i] - self.D)
            self._leave_decode(i)
        else:
            self.prefilling.remove(i)
            self.prefill_held -= self.held[i]
        self.state[i], self.done_tokens[i] = WAITING, 0
        self.prompt[i] = self.n_in[i] + self.gen[i]  # recompute what it had, then go on
        self.preempted[i] += 1
        self.waiting.appendleft(i)

    # --- decoders ------------------------------------------------------------------------
    def _join_decode(self, i: int) -> None:
        cache = self.prompt[i]
        cb = cache - self.D
        self.state[i], self.cb[i] = DECODE, cb
        self.fin[i] = self.D + self.n_out[i] - self.gen[i]
        heapq.heappush(self.fin_heap, (self.fin[i], i))
        self.m += 1
        self.sum_cb += cb
        if self.on_demand:
            self.prefill_held -= self.held[i]
            self.counter.add(cb)
        if self.window < INF:
            if cache >= self.window:
                self.capped += 1
                self.cross[i] = -1
            else:
                self.below += 1
                self.sum_cb_below += cb
                self.cross[i] = int(self.window) - cb
                heapq.heappush(self.cross_heap, (self.cross[i], i))
                if self.on_demand:
                    self.counter_local.add(cb)

    def _leave_decode(self, i: int) -> None:
        cb = self.cb[i]
        self.m -= 1
        self.sum_cb -= cb
        if self.on_demand:
            self.counter.remove(cb)
        if self.window < INF:
            if self.cross[i] < 0:
                self.capped -= 1
            else:
                self.below -= 1
                self.sum_cb_below -= cb
                if self.on_demand:
                    self.counter_local.remove(cb)

    def _cross_windows(self) -> None:
        heap, D = self.cross_heap, self.D
        while heap and heap[0][0] <= D:
            step, i = heapq.heappop(heap)
            if self.state[i] != DECODE or self.cross[i] != step:
                continue  # stale: finished or preempted since
            cb = self.cb[i]
            self.below -= 1
            self.sum_cb_below -= cb
            self.capped += 1
            self.cross[i] = -1
            if self.on_demand:
                self.counter_local.remove(cb)

    def _finish_decoders(self) -> None:
        heap, D = self.fin_heap, self.D
        while heap and heap[0][0] <= D:
            step, i = heapq.heappop(heap)
            if self.state[i] == DECODE and self.fin[i] == step:
                self._leave_decode(i)
                self._done(i)

    def keys(self, D: int) -> tuple:
        """Per attention operator, Σ min(context, window) of the decoders at decode step D."""
        ctx = D + 1
        if self.single:
            return (self.sum_cb + self.m * ctx,)
        return tuple(
            self.sum_cb + self.m * ctx if w == INF
            else self.sum_cb_below + self.below * ctx + self.capped * w
            for w in self.wins
        )  # fmt: skip

    # --- arrivals and completions ----------------------------------------------------------
    def _arrive(self, i: int, t: float) -> None:
        self.arrival[i] = t
        self.waiting.append(i)

    def _arrivals(self) -> None:
        if not self.open:
            return
        arrival, k, now = self.arrival, self.k, self.now
        while self.next_arrival < k and arrival[self.next_arrival] <= now:
            self.waiting.append(self.next_arrival)
            self.next_arrival += 1

    def _done(self, i: int) -> None:
        self.state[i], self.t_done[i] = DONE, self.now
        if not self.on_demand:
            self.reserved -= self.held[i]
        self.completed.append(i)
        n = len(self.completed)
        if self.t0 < self.now <= self.t1:
            self.acc["done_in_window"] += 1
        if not self.open:
            if n == self.warm:
                self.t0 = self.now
            if n == self.k - self.drain:
                self.t1 = self.now
            if self.clients is not None and self.next_arrival < self.k:
                self._arrive(self.next_arrival, self.now)
                self.next_arrival += 1

    # --- the loop ------------------------------------------------------------------------
    def run(self) -> Simulator:
        events = 0
        while not self._finished():
            events += 1
            if events > self.max_events:
                raise ValueError(
                    f"the simulation took more than {self.max_events:,} events without "
                    "finishing (heavy preemption?): lower max_num_seqs, the rate or the requests"
                )
            self._arrivals()
            self._record()
            self._fits_next_step()
            chunks = self._schedule()
            if chunks:
                self._mixed_step(chunks)
            elif self.m:
                self._decode_run()
            else:
                self._idle()
        return self

    def _finished(self) -> bool:
        if self.open:
            return self._measured_done() and self.now >= self.t1
        return len(self.completed) >= self.k - self.drain

    def _measured_done(self) -> bool:
        """Every measured request done (the oldest not done is looked for from where the last
        look stopped); with no drain the window closes then."""
        lo, hi, state = self.scan, self.k - self.drain, self.state
        while lo < hi and state[lo] == DONE:
            lo += 1
        self.scan = lo
        if lo >= hi and self.t1 == INF:
            self.t1 = self.now
        return lo >= hi

    def _schedule(self) -> list:
        """This step's prompt chunks [(request, tokens, prior tokens)]: the prefills in
        progress first, then admissions, FCFS, within the slots, budget and pool."""
        s = self.sched
        budget = s.max_batched_tokens - self.m
        chunks = []
        for i in self.prefilling:
            if budget <= 0:
                break
            n = min(self.prompt[i] - self.done_tokens[i], budget)
            chunks.append((i, n, self.done_tokens[i]))
            budget -= n
        running = self.m + len(self.prefilling)
        waiting = self.waiting
        if not waiting or budget <= 0 or running >= s.max_num_seqs:
            return chunks
        # the blocks free after the decoders' next tokens: at least those free now less one per
        # decoder (the exact count only when that bound is not enough)
        free, exact = self.pool.blocks - self.watermark - self.kv - self.m, False
        while waiting and budget > 0 and running < s.max_num_seqs:
            i = waiting[0]
            need = self.prompt[i] if self.on_demand else self.n_in[i] + self.n_out[i]
            blocks = self.pool.need(need)
            if blocks > free and not exact:
                exact = True
                step = self.D + 1 if self.m else self.D
                free = self.pool.blocks - self.watermark - self.used(step)  # admissions included
            if blocks > free or (not s.chunked_prefill and self.prompt[i] > budget):
                break
            waiting.popleft()
            free -= blocks
            self._admit(i, blocks)
            n = min(self.prompt[i], budget)
            chunks.append((i, n, 0))
            budget -= n
            running += 1
        return chunks

    def _admit(self, i: int, blocks: float) -> None:
        self.state[i], self.held[i], self.done_tokens[i] = PREFILL, blocks, 0
        if self.t_admit[i] != self.t_admit[i]:  # NaN: first admission
            self.t_admit[i] = self.now
        if self.on_demand:
            self.prefill_held += blocks
        else:
            self.reserved += blocks
        self.prefilling.append(i)
        self.slot[i] = len(self.order)
        self.order.append(i)

    def _mixed_step(self, chunks: list) -> None:
        """One step with prompt chunks (and every decoding sequence)."""
        wins, prompt = self.wins, self.prompt
        if len(chunks) == 1:  # the common case, without the sums
            i, n, p = chunks[0]
            done = [i] if p + n >= prompt[i] else []
            if self.single:  # positions p+1 … p+n attend n·p + n(n+1)/2 keys
                keys, prior = (n * p + n * (n + 1) / 2.0,), (p,)
            else:
                keys = tuple(chunk_keys(p, n, w, SCALAR) for w in wins)
                prior = tuple(min(p, w) for w in wins)
        else:
            n = sum(c[1] for c in chunks)
            done = [i for i, c, p in chunks if p + c >= prompt[i]]
            keys = tuple(sum(chunk_keys(p, c, w, SCALAR) for _, c, p in chunks) for w in wins)
            prior = tuple(sum(min(p, w) for _, _, p in chunks) for w in wins)
        t = mixed_step_s(self.f, SCALAR, decode_seqs=self.m, decode_keys=self.keys(self.D),
                         prefill_tokens=n, prefill_seqs=len(chunks), done_seqs=len(done),
                         prefill_keys=keys, prior_keys=prior)  # fmt: skip
        running = self.m + len(self.prefilling)
        for i, c, _ in chunks:
            self.done_tokens[i] += c
        if self.m:
            self.D += 1
        self._advance(t, self.m + len(done), running)
        for i in done:
            self.prefilling.remove(i)
            self.gen[i] += 1
            if self.t_first[i] != self.t_first[i]:
                self.t_first[i] = self.now
            if self.gen[i] >= self.n_out[i]:
                if self.on_demand:
                    self.prefill_held -= self.held[i]
                self._done(i)
            else:
                self._join_decode(i)
        self._finish_decoders()
        self._cross_windows()

    def _decode_run(self) -> None:
        """Pure decode steps of the same m sequences up to the next event, in closed form."""
        D, m = self.D, self.m
        k = self.fin_heap[0][0] - D
        if self.cross_heap:
            k = min(k, self.cross_heap[0][0] - D)
        if self.on_demand and self.kv + m * (k // self.sched.block_size + 1) > self.pool.blocks:
            k = last_fitting(self.used, D + 1, k - 1, self.pool.blocks) + 1
        keys = self.keys(D)
        slopes = tuple(m if w == INF else self.below for w in self.wins)
        lines = self.lines.get(m)
        if lines is None:
            lines = self.lines[m] = Lines(self.fixed[m], self.att, m)
        t = decode_run_s(lines, keys, slopes, k, SCALAR)
        horizon, edge = self._horizon()
        if self.now + t > horizon and k > 1:
            k = self._steps_until(lines, keys, slopes, horizon - self.now, k)
            if edge and k > 1:
                k -= 1  # the step across a window edge runs alone: its tokens fall after it
            t = decode_run_s(lines, keys, slopes, k, SCALAR)
        self.D += k
        self._advance(t, m * k, m)
        self._finish_decoders()
        self._cross_windows()

    def _horizon(self) -> tuple[float, bool]:
        """The next time that could change the batch: an arrival that could be admitted now,
        or an edge of the measured window (then True)."""
        t, edge = INF, False
        room = self.m + len(self.prefilling) < self.sched.max_num_seqs
        if room and self.open and not self.waiting and self.next_arrival < self.k:
            t = self.arrival[self.next_arrival]
        for e in (self.t0, self.t1):
            if self.now < e < t:
                t, edge = e, True
        return t, edge

    @staticmethod
    def _steps_until(lines, keys, slopes, span: float, most: int) -> int:
        """The fewest steps (1 … most) whose run lasts at least `span`: a quadratic for each of
        the slopes at the run's start and end (the step time is convex in the step), then a
        bisection between them on the closed form."""
        tau0, low, high = lines.first(keys, slopes)
        lo = min(quadratic_steps(tau0, high, span), most)
        hi = min(quadratic_steps(tau0, low, span), most)
        while lo < hi:
            mid = (lo + hi) // 2
            if decode_run_s(lines, keys, slopes, mid, SCALAR) >= span:
                hi = mid
            else:
                lo = mid + 1
        return max(lo, 1)

    def _idle(self) -> None:
        """Nothing running: jump to the next arrival."""
        if self.open and self.next_arrival < self.k:
            t = self.arrival[self.next_arrival]
            self._advance(t - self.now, 0, 0)
        elif self.waiting:
            raise ValueError("a request does not fit in the KV pool")  # checked before
        else:
            raise ValueError("the simulation ran out of work")  # not reached

    # --- accounting ------------------------------------------------------------------------
    def _advance(self, dt: float, tokens: int, running: int) -> None:
        start, end = self.now, self.now + dt
        self.now = end
        self.produced += tokens
        t0, t1 = self.t0, self.t1
        if end > t0 and start < t1:
            acc = self.acc
            acc["running"] += running * (min(end, t1) - max(start, t0))
            if end <= t1:
                acc["tokens"] += tokens

    def _record(self) -> None:
        """The state at this event: a time-series row, and the KV integral (blocks in use are
        taken as constant between two events)."""
        now, kv = self.now, self.used(self.D)
        start, end = max(self.t_kv, self.t0), min(now, self.t1)
        if end > start:
            self.acc["kv"] += self.kv * (end - start)
        self.t_kv, self.kv = now, kv
        series = self.series
        series.append((now, self.m + len(self.prefilling), len(self.waiting), kv))
        if len(series) >= 4 * MAX_SERIES:
            del series[1::2]  # keep every other row: evenly thinned, bounded memory


def thin(series: list[tuple], points: int = MAX_SERIES) -> np.ndarray:
    """At most `points` rows of the recorded time series, evenly spaced in record order."""
    rows = np.array(series, dtype=float).reshape(-1, 4)
    if len(rows) <= points:
        return rows
    return rows[np.linspace(0, len(rows) - 1, points).round().astype(int)]
