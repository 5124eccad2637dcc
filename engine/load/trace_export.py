"""A simulated run's timeline as a Chrome trace: Trace Event Format JSON, which Chrome's
chrome://tracing and Perfetto (ui.perfetto.dev) open.

The format (Google, "Trace Event Format",
https://docs.google.com/document/d/1CvAClvFfyA5R-PhYUmn5OOQtYMH4h6I0nSsKchNAySU, and Perfetto's
"JSON trace format" https://perfetto.dev/docs/getting-started/other-formats): a JSON object whose
`traceEvents` list holds events with a phase `ph`, a timestamp `ts` and duration `dur` in
microseconds, a process `pid` and thread `tid` (a track). Here:

- one process per replica or worker, named by its deployment: pid 1 for one deployment; a
  fleet's replicas 1 … N, or its prefill workers 1 … P then its decode workers P + 1 … P + D;
- on its "steps" thread (tid 1), one complete event (`ph` "X") per step with prompt chunks
  ("prefill", or "prefill + decode" when sequences decode in the same step) and one per run of
  pure decode steps ("decode ×N", priced in closed form as the simulator prices them), each
  with its tokens and batch in `args`;
- on its "preemptions" thread (tid 2), an instant event (`ph` "i") per preemption;
- on a prefill worker's "KV transfers" thread (tid 3), a complete event per prompt whose KV
  cache it sends, ending when the decode worker has it (`StepRecorder.transfer`, called by
  engine/load/disagg.py; none in an aggregated run), with its bytes and destination;
- per request, async events (`ph` "b"/"e", category "request", the request's index as `id`):
  "queued" (arrival to first admission), "prefill" (admission to first token) and "decode"
  (first token to last), drawn by the viewers as one row of spans per request; on a decode
  worker, "queued" (its KV arrived, waiting for a decode slot) and "decode".

Timestamps are the simulated clock in µs from the first arrival. The recorder is passed to the
simulator only when a trace is asked for (no cost otherwise); it keeps at most MAX_TRACE_EVENTS
events (later ones are counted in `otherData.dropped_events`).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass

from engine.load import results
from engine.load.api import Instance, check_arrivals, instance, simulate
from engine.load.disagg import fleet_inputs, simulate_disaggregated, simulate_replicas
from engine.scenarios.bind import bind
from engine.scenarios.deployment import Deployment, HardwareRef, ModelRef
from engine.scenarios.fleet import Disaggregated, Replicas
from engine.scenarios.service import SLO, Scheduler
from engine.scenarios.workload import Workload

MAX_TRACE_EVENTS = 500_000  # events kept in one trace (about 60 MB of JSON)
STEPS_TID, PREEMPT_TID, TRANSFER_TID = 1, 2, 3
US = 1e6  # µs per second


class StepRecorder:
    """Collects a run's steps, preemptions and requests as trace events (the simulator calls
    `mixed`, `decode`, `preempted` and `finished`)."""

    def __init__(self, pid: int = 1, limit: int = MAX_TRACE_EVENTS, prefilled: bool = False):
        self.pid, self.limit = pid, limit
        self.events: list[dict] = []
        self.dropped = 0
        # a fleet's worker: the requests' own indices by slot of this worker's request table
        # (the router appends them in arrival order; None: the slot is the index)
        self.ids: list[int] | None = None
        # a decode worker of a disaggregated fleet: its requests arrive prefilled (their spans
        # are "queued" for a decode slot, then "decode")
        self.prefilled = prefilled

    def _id(self, slot: int) -> int:
        return slot if self.ids is None else self.ids[slot]

    def _add(self, event: dict) -> None:
        if len(self.events) < self.limit:
            self.events.append(event)
        else:
            self.dropped += 1

    def _span(self, name: str, start_s: float, seconds: float, args: dict) -> None:
        self._add(
            {
                "name": name,
                "cat": "step",
                "ph": "X",
                "ts": start_s * US,
                "dur": seconds * US,
                "pid": self.pid,
                "tid": STEPS_TID,
                "args": args,
            }
        )

    def mixed(self, start_s: float, seconds: float, chunks: list, decoding: int) -> None:
        """A step with prompt chunks (and `decoding` sequences decoding alongside)."""
        name = "prefill + decode" if decoding else "prefill"
        tokens = sum(t for _, t, _ in chunks)
        args = {"prompt_tokens": tokens, "prompts": len(chunks), "decoding": decoding}
        self._span(name=name, start_s=start_s, seconds=seconds, args=args)

    def decode(self, start_s: float, seconds: float, steps: int, batch: int) -> None:
        """`steps` pure decode steps of `batch` sequences."""
        args = {"steps": steps, "batch": batch, "output_tokens": steps * batch}
        self._span(name=f"decode ×{steps}", start_s=start_s, seconds=seconds, args=args)

    def transfer(
        self, start_s: float, seconds: float, request: int, nbytes: float, to: str = ""
    ) -> None:
        """A request's KV cache leaving this worker for `to` (engine/load/disagg.py calls it
        for a disaggregated fleet; an aggregated run has no transfers), on the "KV transfers"
        thread."""
        self._add(
            {
                "name": "KV transfer",
                "cat": "transfer",
                "ph": "X",
                "ts": start_s * US,
                "dur": seconds * US,
                "pid": self.pid,
                "tid": TRANSFER_TID,
                "args": {"request": request, "bytes": nbytes, "to": to},
            }
        )

    def preempted(self, now_s: float, request: int) -> None:
        self._add(
            {
                "name": "preemption",
                "cat": "preemption",
                "ph": "i",
                "s": "t",
                "ts": now_s * US,
                "pid": self.pid,
                "tid": PREEMPT_TID,
                "args": {"request": self._id(request)},
            }
        )

    def finished(self, requests) -> None:
        """Every request's queued, prefill and decode spans (from the request table), each
        keyed by the request's own index."""
        used = requests.count if self.ids is None else len(self.ids)  # a replica's slots filled
        for slot in range(used):
            i = self._id(slot)
            arrival, admitted = requests.arrival_s[slot], requests.admitted_s[slot]
            first, done = requests.first_token_s[slot], requests.done_s[slot]
            if self.prefilled:  # its first token came from the prefill worker
                marks = (("queued", arrival, admitted), ("decode", admitted, done))
            else:
                marks = (
                    ("queued", arrival, admitted),
                    ("prefill", admitted, first),
                    ("decode", first, done),
                )
            for name, start, end in marks:
                if math.isnan(start) or math.isnan(end):
                    continue  # not reached within the run
                for ph, t in (("b", start), ("e", end)):
                    self._add(
                        {
                            "name": name,
                            "cat": "request",
                            "ph": ph,
                            "ts": t * US,
                            "pid": self.pid,
                            "tid": STEPS_TID,
                            "id": i,
                            "args": {"request": i} if ph == "b" else {},
                        }
                    )


def _names(pid: int, label: str, transfers: bool = False) -> list[dict]:
    """The metadata events naming the replica's process and its threads (the transfers' only
    when there are some)."""
    meta = [("process_name", 0, {"name": label})]
    meta += [("thread_name", STEPS_TID, {"name": "steps"})]
    meta += [("thread_name", PREEMPT_TID, {"name": "preemptions"})]
    meta += [("thread_name", TRANSFER_TID, {"name": "KV transfers"})] if transfers else []
    return [
        {"name": n, "ph": "M", "ts": 0, "pid": pid, "tid": tid, "args": args}
        for n, tid, args in meta
    ]


@dataclass(frozen=True)
class ChromeTrace:
    """A run's result and its timeline (`as_dict()`: the Trace Event Format object)."""

    result: results.LoadResult
    events: tuple[dict, ...]
    dropped: int = 0

    def as_dict(self) -> dict:
        r = self.result
        other = {k: r.values.get(k) for k in ("model", "hardware", "tp", "pp", "precision")}
        other |= {"requests": r.values.get("requests"), "dropped_events": self.dropped}
        return {"traceEvents": list(self.events), "displayTimeUnit": "ms", "otherData": other}

    def to_json(self) -> str:
        return json.dumps(self.as_dict(), separators=(",", ":"), allow_nan=False)


def trace_run(inst: Instance, w: Workload, slo: SLO, label: str) -> ChromeTrace:
    """Simulate `w` on `inst` with a recorder; the events sorted by track and time."""
    rec = StepRecorder()
    result = simulate(inst, w, slo, recorder=rec)
    # a stable sort: events of one instant keep the order they were recorded in (a request's
    # span ends before its next one begins, a span of no length begins before it ends)
    events = sorted(rec.events, key=lambda e: (e["pid"], e["tid"], e["ts"]))
    moved = any(e["tid"] == TRANSFER_TID for e in events)
    head = _names(pid=1, label=label, transfers=moved)
    return ChromeTrace(result=result, events=tuple(head + events), dropped=rec.dropped)


def _where(inst: Instance) -> str:
    p = inst.scenario
    return f"{p.name} on {inst.devices}× {p.hw_id} (tp {p.tp}, pp {p.pp})"


def fleet_trace(fleet: Replicas | Disaggregated, w: Workload, slo: SLO, sched) -> ChromeTrace:
    """A fleet simulated with one recorder per replica or worker (a process each, numbered in
    order: the prefill workers, then the decode workers), the events of all of them sharing
    MAX_TRACE_EVENTS."""
    if isinstance(fleet, Replicas):
        inst = instance(fleet.deployment, sched)
        parts = [(f"replica {k + 1}: {_where(inst)}", False) for k in range(fleet.replicas)]
    else:
        pre, dec = instance(fleet.prefill, sched), instance(fleet.decode, sched)
        parts = [
            (f"prefill worker {k + 1}: {_where(pre)}", False) for k in range(fleet.prefill_workers)
        ]
        parts += [
            (f"decode worker {k + 1}: {_where(dec)}", True) for k in range(fleet.decode_workers)
        ]
    share = max(MAX_TRACE_EVENTS // len(parts), 1)
    recs = [
        StepRecorder(pid=k + 1, limit=share, prefilled=prefilled)
        for k, (_, prefilled) in enumerate(parts)
    ]
    run = simulate_replicas if isinstance(fleet, Replicas) else simulate_disaggregated
    result = run(fleet, w=w, slo=slo, sched=sched, recorders=recs)
    head, events = [], []
    for (label, _), rec in zip(parts, recs, strict=True):
        moved = any(e["tid"] == TRANSFER_TID for e in rec.events)
        head += _names(pid=rec.pid, label=label, transfers=moved)
        events += rec.events
    events.sort(key=lambda e: (e["pid"], e["tid"], e["ts"]))  # stable, as trace_run's
    dropped = sum(rec.dropped for rec in recs)
    return ChromeTrace(result=result, events=tuple(head + events), dropped=dropped)


def chrome_trace(
    deployment: Deployment | Replicas | Disaggregated | ModelRef | None = None,
    workload: Workload | HardwareRef | None = None,
    /,
    scheduler: Scheduler | None = None,
    slo: SLO | None = None,
    **fields: object,
) -> ChromeTrace:
    """`serve_load` with the same arguments, and its timeline as a Chrome trace (see the module
    docstring): `.result` is serve_load's answer, `.to_json()` the file's text. A fleet
    (`Replicas`, `Disaggregated`) is traced with a process per replica or worker."""
    given = {"scheduler": scheduler, "slo": slo, **fields}
    if isinstance(deployment, Replicas | Disaggregated):
        w, sched, slo = fleet_inputs(deployment, workload, given)
        return fleet_trace(deployment, w=w, slo=slo, sched=sched)
    dep, w, sched, slo = bind((deployment, workload), given, Deployment, Workload, Scheduler, SLO)
    if w is None:
        raise ValueError("Workload: give input_tokens, output_tokens")
    check_arrivals(w)
    inst = instance(dep, sched)
    p = inst.scenario
    label = f"replica 1: {p.name} on {inst.devices}× {p.hw_id} (tp {p.tp}, pp {p.pp})"
    return trace_run(inst=inst, w=w, slo=slo or SLO(), label=label)
