"""The continuous-batching simulator's event loop: a scheduler like vLLM's and TensorRT-LLM's.

Each iteration the scheduler (first come, first served; vLLM's V1 scheduler,
https://github.com/vllm-project/vllm/blob/main/vllm/v1/core/sched/scheduler.py, and
TensorRT-LLM's executor) keeps every running sequence, gives each decoding one its next token,
gives the prompts in prefill their next chunks, then admits waiting requests while a sequence
slot (`max_num_seqs`), the step's token budget (`max_batched_tokens`, whole prompts only when
chunked prefill is off) and the KV pool allow. What the pool allows is the policy's
(engine/load/policy.py: vLLM's on-demand blocks with preemption of the newest running request,
recomputed later, Kwon et al., SOSP 2023, §4.5; or TensorRT-LLM's GUARANTEED_NO_EVICT
reservation of the whole request).

A step with prompt chunks is priced on its own; a step with none is one of a run of pure decode
steps of the same sequences, priced in closed form (engine/load/pricing.py), so the loop jumps
to the next event: a finish, a window crossing (engine/load/decoders.py), the pool running out,
an arrival that could be admitted, or an edge of the measured window (engine/load/window.py).
Arrivals wait for the end of the step in flight. Request state lives in flat per-request lists
(engine/load/requests.py), never in per-request objects.
"""

from __future__ import annotations

import math
from collections import deque
from math import isnan

import numpy as np

from engine.arrays import INF
from engine.catalog.scheduler import SchedulerDefaults
from engine.load.decoders import DecodeBatch
from engine.load.policy import kv_policy
from engine.load.pool import PoolSize
from engine.load.prefix import PrefixCache
from engine.load.pricing import Chunk, StepPricer
from engine.load.requests import DECODE, DONE, PREFILL, WAITING, RequestTable
from engine.load.window import MeasuredWindow
from engine.serving.kernel import Folded

MAX_SERIES = 2000  # time-series points kept (evenly thinned)
# A max-throughput run measures between its first and last margins of completions; with fewer
# than this many waves of the most requests it runs at once, those fall in the first wave's ramp
# and drain, and the run is measured from its start instead (MeasuredWindow.settle).
STEADY_WAVES = 3


def few_waves(max_running: int, requests: int) -> bool:
    """Whether a max-throughput run of `requests` whose most requests at once were
    `max_running` is shorter than STEADY_WAVES waves (no steady state to measure)."""
    return STEADY_WAVES * max_running >= requests


class Simulator:
    """One run: build it, then `run()`. Its request table, measured window and time series
    are what engine/load/results.py summarises."""

    def __init__(
        self,
        folded: Folded,
        scheduler: SchedulerDefaults,
        pool: PoolSize,
        *,
        arrival_s,
        input_tokens,
        output_tokens,
        clients: int | None,
        warmup: int,
        drain: int,
        max_events: int,
        max_preemptions: int | None = None,
        pricer: StepPricer | None = None,
        prefix: PrefixCache | None = None,
        recorder=None,
    ):
        self.scheduler, self.pool, self.max_events = scheduler, pool, max_events
        self.recorder = recorder  # engine/load/trace_export.py StepRecorder, or None (no cost)
        self.max_preemptions = math.inf if max_preemptions is None else max_preemptions
        self.preemptions = 0
        self.events = 0  # the loop's iterations so far
        self.requests = requests = RequestTable(arrival_s, input_tokens, output_tokens)
        self.clients, self.warmup, self.drain = clients, warmup, drain
        self.pricer = pricer or StepPricer(folded, scheduler.max_running)
        self.decoders = DecodeBatch(pool, self.pricer.attention_windows, requests.count)
        self.policy = kv_policy(scheduler=scheduler, pool=pool, decoders=self.decoders)
        self.prefix = prefix  # cached prompt prefixes (engine/load/prefix.py), or None
        if prefix is not None:
            prefix.attach(self.policy)
        self.now_s = 0.0
        self.blocks_in_use = self.blocks_since_s = 0.0  # at the last event, and its time
        self.blocks_held = 0.0  # through the step in flight: those, less preempted, plus admitted
        self.produced = 0  # output tokens, every request (conservation: Σ output tokens)
        self.waiting: deque[int] = deque()
        self.prefilling: list[int] = []
        self.admission_order: list[int] = []  # lazy: entries of requests no longer running stay
        self.completed: list[int] = []  # requests in completion order
        self.next_arrival = 0
        self.pause_s = INF  # a fleet's next arrival: decode runs stop there (advance_to)
        # disaggregated decode workers: requests arrive with their prompt's KV computed
        # (engine/load/disagg.py), admitted straight to decoding
        self.prefilled_arrivals = False
        self.oldest_measured = warmup  # the oldest measured request maybe not done
        self.series: list[tuple] = []  # (time, running, queued, blocks in use) at each event
        if requests.open_loop:
            self.window = MeasuredWindow.of_arrivals(requests.arrival_s, warmup, drain)
        else:
            self.window = MeasuredWindow.of_completions(requests.count, warmup, drain)
            first = requests.count if clients is None else clients
            for i in range(first):
                self._arrive(i)
            self.next_arrival = first

    # --- the loop ------------------------------------------------------------------------
    def run(self) -> Simulator:
        # the loop runs once per event: its methods are looked up once
        finished, arrivals, record = self._finished, self._arrivals, self._record
        make_room, schedule = self.policy.make_room, self._schedule
        preempt = self._preempt if self.prefix is None else self._evict_or_preempt
        decoders, events = self.decoders, self.events
        while not finished():
            events += 1
            if events > self.max_events:  # not reached: the bound counts every iteration
                raise ValueError(
                    f"the simulation took more than the {self.max_events:,} events it was "
                    "bounded by without finishing"
                )
            arrivals()
            record()
            make_room(self.blocks_in_use, preempt)
            chunks = schedule()
            if chunks:
                self._mixed_step(chunks)
            elif decoders.count:
                self._decode_run()
            else:
                self._idle()
        self.events = events
        self.close()
        return self

    def close(self) -> None:
        """The run is over: the KV integral to now, and the window settled (`few_waves`)."""
        self.window.add_blocks(self.blocks_held, self.blocks_since_s, self.now_s)
        self.window.settle(from_start=self.few_waves())
        if self.recorder is not None:
            self.recorder.finished(self.requests)

    def few_waves(self) -> bool:
        """A max-throughput run (every request queued at the start) of fewer than STEADY_WAVES
        waves of the most requests it ran at once: its margins fall in the first wave's ramp
        and drain, so it has no steady state to measure."""
        if self.requests.open_loop or self.clients is not None:
            return False
        running = max((row[1] for row in self.series), default=0)
        return few_waves(running, self.requests.count)

    def advance_to(self, until_s: float) -> None:
        """Events up to `until_s` (a fleet's next arrival, engine/load/router.py): the loop's
        iterations while this replica has work and its clock is before `until_s`; a run of
        decode steps stops at the step reaching it. Arrivals are added to the request table
        by the router as they are routed."""
        self.pause_s = until_s
        requests = self.requests
        while self.now_s < until_s:
            nothing_queued = not self.waiting and (
                self.next_arrival >= requests.count
                or requests.arrival_s[self.next_arrival] > self.now_s
            )
            if nothing_queued and not self.decoders.count and not self.prefilling:
                if (
                    self.next_arrival < requests.count
                    and requests.arrival_s[self.next_arrival] < until_s
                ):
                    self._idle()  # jump to the routed arrival
                    continue
                break
            self.events += 1
            if self.events > self.max_events:
                raise ValueError(
                    f"the simulation took more than the {self.max_events:,} events it was "
                    "bounded by without finishing"
                )
            self._arrivals()
            self._record()
            self.policy.make_room(self.blocks_in_use, self._preempt)
            chunks = self._schedule()
            if chunks:
                self._mixed_step(chunks)
            elif self.decoders.count:
                self._decode_run()
            elif self.waiting:
                self._idle()  # refuses: a request that fits no pool (checked before)
            # else: nothing left (a one-token request done at admission): the check above
        self.pause_s = INF

    def _finished(self) -> bool:
        if self.requests.open_loop:
            return self._measured_done() and self.now_s >= self.window.end_s
        return len(self.completed) >= self.requests.count - self.drain

    def _measured_done(self) -> bool:
        """Every measured request done (the oldest not done is looked for from where the last
        look stopped); with no drain the window closes then."""
        lo, hi, state = self.oldest_measured, self.requests.count - self.drain, self.requests.state
        while lo < hi and state[lo] == DONE:
            lo += 1
        self.oldest_measured = lo
        if lo >= hi:
            self.window.close(self.now_s)
        return lo >= hi

    # --- arrivals and completions ----------------------------------------------------------
    def _arrive(self, i: int) -> None:
        """Closed loop and max throughput: request i is sent now."""
        self.requests.arrival_s[i] = self.now_s
        self.waiting.append(i)

    def _arrivals(self) -> None:
        """Open loop: the requests arrived by now join the queue."""
        requests = self.requests
        if not requests.open_loop:
            return
        arrival, count, now = requests.arrival_s, requests.count, self.now_s
        while self.next_arrival < count and arrival[self.next_arrival] <= now:
            self.waiting.append(self.next_arrival)
            self.next_arrival += 1

    def _done(self, i: int) -> None:
        requests = self.requests
        if self.prefix is not None:
            self.prefix.done(i)
        requests.state[i], requests.done_s[i] = DONE, self.now_s
        self.policy.finished(requests.held_blocks[i])
        self.completed.append(i)
        self.window.completed(len(self.completed), self.now_s)
        if self.clients is not None and self.next_arrival < requests.count:
            self._arrive(self.next_arrival)  # its client sends the next request
            self.next_arrival += 1

    # --- admission -----------------------------------------------------------------------
    def _schedule(self) -> list[Chunk]:
        """This step's prompt chunks: the prefills in progress first, then admissions, FCFS,
        within the slots, the token budget and the pool."""
        requests, scheduler = self.requests, self.scheduler
        decoding = self.decoders.count
        budget = scheduler.max_batched_tokens - decoding
        chunks = []
        for i in self.prefilling:
            if budget <= 0:
                break
            tokens = min(requests.prompt_tokens[i] - requests.prefilled[i], budget)
            chunks.append((i, tokens, requests.prefilled[i]))
            budget -= tokens
        running = decoding + len(self.prefilling)
        waiting = self.waiting
        if not waiting or budget <= 0 or running >= scheduler.max_running:
            return chunks
        policy, total, prefix = self.policy, self.pool.blocks, self.prefix
        # the blocks free after the decoders' next tokens: at least those free now less one per
        # decoder (the exact count only when that bound is not enough)
        free, exact = total - policy.watermark_blocks - self.blocks_in_use - decoding, False
        while waiting and budget > 0 and running < scheduler.max_running:
            i = waiting[0]
            blocks = policy.blocks_to_admit(requests, i)
            hit = prefix.hit(i) if prefix is not None else 0  # cached tokens: not computed
            blocks -= hit / self.pool.block_size
            if blocks > free and not exact:
                exact = True
                step = self.decoders.step + 1 if decoding else self.decoders.step
                free = total - policy.watermark_blocks - policy.used(step)  # admissions included
            if blocks > free and prefix is not None:  # evict unused cached prefixes first
                free += prefix.evict(blocks - free, keep=prefix.prefix_id[i] if hit else -2)
            prompt = requests.prompt_tokens[i] - hit
            if blocks > free or (not scheduler.chunked_prefill and prompt > budget):
                break
            waiting.popleft()
            free -= blocks
            if self.prefilled_arrivals and not requests.preemptions[i]:
                self._admit_prefilled(i, blocks)
                running += 1
                continue
            self._admit(i, blocks, hit)
            tokens = min(prompt, budget)
            chunks.append((i, tokens, hit))
            budget -= tokens
            running += 1
        return chunks

    def _admit(self, i: int, blocks: float, hit: int = 0) -> None:
        requests = self.requests
        requests.state[i], requests.held_blocks[i], requests.prefilled[i] = PREFILL, blocks, hit
        if self.prefix is not None:
            self.prefix.admitted(i, hit)
        if isnan(requests.admitted_s[i]):  # first admission
            requests.admitted_s[i] = self.now_s
        self.policy.admitted(blocks)
        self.blocks_held += blocks
        self.prefilling.append(i)
        requests.admission_slot[i] = len(self.admission_order)
        self.admission_order.append(i)

    def _admit_prefilled(self, i: int, blocks: float) -> None:
        """A request whose prompt's KV arrived from a prefill worker (with its first token):
        its blocks are taken and it decodes from this step, no prompt chunk computed. Once
        preempted it is recomputed here, as any request."""
        self._admit(i, blocks)
        self.prefilling.pop()
        requests = self.requests
        requests.prefilled[i] = requests.prompt_tokens[i]
        requests.generated[i] = 1
        self.policy.prompt_left(blocks)
        to_go = requests.output_tokens[i] - 1
        if to_go <= 0:
            self._done(i)
        else:
            requests.state[i] = DECODE
            self.decoders.join(i, requests.prompt_tokens[i], to_go)

    def _preempt(self) -> None:
        """vLLM's recompute preemption of the newest running request: its blocks are freed
        and it goes back to the head of the queue, to prefill its input and the tokens it had
        produced (one step of them yields its next token)."""
        self.preemptions += 1
        if self.preemptions > self.max_preemptions:
            raise ValueError(
                f"the KV pool thrashes: more than {self.max_preemptions:,} preemptions (the "
                "run's allowance, docs/model.md 'The work a run takes'), requests recomputed "
                "over and over: lower max_num_seqs, the rate or the output tokens, or give the "
                "KV cache more memory"
            )
        requests, order = self.requests, self.admission_order
        state, slot = requests.state, requests.admission_slot
        while order:
            i = order.pop()
            if state[i] in (PREFILL, DECODE) and slot[i] == len(order):
                break
        else:
            raise ValueError("the KV pool cannot hold a single request")  # checked before
        if self.prefix is not None:
            self.prefix.released(i)
        if state[i] == DECODE:
            requests.generated[i] = requests.output_tokens[i] - self.decoders.tokens_to_go(i)
            self.decoders.leave(i)
        else:
            self.prefilling.remove(i)
            self.policy.prompt_left(requests.held_blocks[i])
        state[i], requests.prefilled[i] = WAITING, 0
        requests.prompt_tokens[i] = requests.input_tokens[i] + requests.generated[i]
        requests.preemptions[i] += 1
        self.waiting.appendleft(i)
        self.blocks_held = self.policy.used(self.decoders.step)
        if self.recorder is not None:
            self.recorder.preempted(self.now_s, i)

    def _evict_or_preempt(self) -> None:
        """Room for the next tokens: an unused cached prefix goes first, then a request."""
        if not self.prefix.evict(1e-9):
            self._preempt()

    def _prompt_cached(self, i: int) -> int:
        """Request i computed its prompt: the prefix tokens it shares with the cache (its
        prefix blocks become the cache's when it put the prefix there)."""
        before = self.prefix.blocks
        shared = self.prefix.prompt_done(i)
        self.requests.held_blocks[i] -= self.prefix.blocks - before
        return shared

    # --- steps ---------------------------------------------------------------------------
    def _mixed_step(self, chunks: list[Chunk]) -> None:
        """One step with prompt chunks (and every decoding sequence)."""
        requests, decoders = self.requests, self.decoders
        prompt, prefilled = requests.prompt_tokens, requests.prefilled
        # the prompts whose last chunk is in this step: each yields its first (next) token
        finishing = [i for i, tokens, prior in chunks if prior + tokens >= prompt[i]]
        seconds = self.pricer.mixed_s(chunks, decoders, len(finishing))
        running = decoders.count + len(self.prefilling)
        for i, tokens, _ in chunks:
            prefilled[i] += tokens
        if self.recorder is not None:
            self.recorder.mixed(
                start_s=self.now_s, seconds=seconds, chunks=chunks, decoding=decoders.count
            )
        if decoders.count:
            decoders.step += 1
        self._advance(seconds, decoders.count + len(finishing), running)
        for i in finishing:
            self.prefilling.remove(i)
            requests.generated[i] += 1
            if isnan(requests.first_token_s[i]):
                requests.first_token_s[i] = self.now_s
            self.policy.prompt_left(requests.held_blocks[i])
            shared = self._prompt_cached(i) if self.prefix is not None else 0
            to_go = requests.output_tokens[i] - requests.generated[i]
            if to_go <= 0:
                self._done(i)
            else:
                requests.state[i] = DECODE
                decoders.join(i, prompt[i], to_go, shared=shared)
        self._end_of_step()

    def _decode_run(self) -> None:
        """Pure decode steps of the same sequences up to the next event, in closed form."""
        decoders = self.decoders
        count = decoders.count
        steps = self.policy.steps_that_fit(self.blocks_in_use, decoders.next_event_steps())
        horizon, edge = self._horizon()
        # the step across a window edge runs alone: its tokens fall after the edge
        steps, seconds = self.pricer.decode_run(
            decoders, steps=steps, now_s=self.now_s, until_s=horizon, stop_before=edge
        )
        decoders.step += steps
        if self.recorder is not None:
            self.recorder.decode(start_s=self.now_s, seconds=seconds, steps=steps, batch=count)
        self._advance(seconds, count * steps, count)
        self._end_of_step()

    def _end_of_step(self) -> None:
        """The decoders that produced their last token complete; those whose cache reached
        a sliding window stop growing there."""
        for i in self.decoders.pop_finished():
            self._done(i)
        self.decoders.cap_at_window()

    def _horizon(self) -> tuple[float, bool]:
        """The next time that could change the batch: an arrival that could be admitted now,
        or an edge of the measured window (then True)."""
        until, edge = self.pause_s, False
        room = self.decoders.count + len(self.prefilling) < self.scheduler.max_running
        requests = self.requests
        if room and requests.open_loop and not self.waiting and self.next_arrival < requests.count:
            until = min(until, requests.arrival_s[self.next_arrival])
        for edge_s in (self.window.start_s, self.window.end_s):
            if self.now_s < edge_s < until:
                until, edge = edge_s, True
        return until, edge

    def _idle(self) -> None:
        """Nothing running: jump to the next arrival."""
        requests = self.requests
        if requests.open_loop and self.next_arrival < requests.count:
            self._advance(requests.arrival_s[self.next_arrival] - self.now_s, 0, 0)
        elif self.waiting:
            raise ValueError("a request does not fit in the KV pool")  # checked before
        else:
            raise ValueError("the simulation ran out of work")  # not reached

    # --- accounting ------------------------------------------------------------------------
    def _advance(self, seconds: float, tokens: int, running: int) -> None:
        start = self.now_s
        self.now_s = end = start + seconds
        self.produced += tokens
        self.window.add_step(start_s=start, end_s=end, tokens=tokens, running=running)

    def _record(self) -> None:
        """The state at this event: a time-series row, and the KV integral since the last
        event (the blocks held through its step: admissions and preemptions included)."""
        now, blocks = self.now_s, self.policy.used(self.decoders.step)
        self.window.add_blocks(self.blocks_held, self.blocks_since_s, now)
        self.blocks_since_s, self.blocks_in_use = now, blocks
        self.blocks_held = blocks
        series = self.series
        series.append((now, self.decoders.count + len(self.prefilling), len(self.waiting), blocks))
        if len(series) >= 4 * MAX_SERIES:
            del series[1::2]  # keep every other row: evenly thinned, bounded memory


def thin(series: list[tuple], points: int = MAX_SERIES) -> np.ndarray:
    """At most `points` rows of the recorded time series, evenly spaced in record order."""
    rows = np.array(series, dtype=float).reshape(-1, 4)
    if len(rows) <= points:
        return rows
    return rows[np.linspace(0, len(rows) - 1, points).round().astype(int)]
