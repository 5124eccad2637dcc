"""The simulator's request table: every request's state in flat per-request lists.

Request i is entry i of each list: no per-request objects, and Python lists rather than numpy
arrays because the event loop reads and writes one entry at a time (engine/load/results.py
reads them as arrays once the run is over). A request goes WAITING → PREFILL (admitted: its
prompt's chunks are being computed) → DECODE (one token per step) → DONE; a preempted request
goes back to WAITING and, as vLLM recomputes it (Kwon et al., SOSP 2023, §4.5), its prompt
becomes its input plus the tokens it had produced.
"""

from __future__ import annotations

import math

WAITING, PREFILL, DECODE, DONE = 0, 1, 2, 3


class RequestTable:
    """Every request of one run: lengths, state, progress and the times of its milestones
    (seconds; NaN until reached). Closed loop and max throughput: arrivals are set as the
    requests are sent."""

    __slots__ = (
        "admission_slot",
        "admitted_s",
        "arrival_s",
        "count",
        "done_s",
        "first_token_s",
        "generated",
        "held_blocks",
        "input_tokens",
        "open_loop",
        "output_tokens",
        "preemptions",
        "prefilled",
        "prompt_tokens",
        "state",
    )

    def __init__(self, arrival_s, input_tokens, output_tokens):
        count = len(input_tokens)
        self.count = count
        self.input_tokens = [int(v) for v in input_tokens]
        self.output_tokens = [int(v) for v in output_tokens]
        self.open_loop = arrival_s is not None  # arrival times known before the run
        self.arrival_s = list(map(float, arrival_s)) if self.open_loop else [math.nan] * count
        self.admitted_s = [math.nan] * count  # first admission
        self.first_token_s = [math.nan] * count
        self.done_s = [math.nan] * count
        self.state = [WAITING] * count
        self.generated = [0] * count  # output tokens produced (kept across a preemption)
        self.prompt_tokens = self.input_tokens[:]  # to prefill: input (+ generated, recomputed)
        self.prefilled = [0] * count  # prompt tokens computed so far
        self.held_blocks = [0.0] * count  # KV blocks taken at admission
        self.admission_slot = [0] * count  # place in the admission order (newest: preempted)
        self.preemptions = [0] * count
