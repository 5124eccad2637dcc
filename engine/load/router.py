"""Replicas behind a router, simulated: each replica its own Simulator, the router at arrival.

A fleet's tail latency is not one replica's at 1/N of the rate: a burst that lands on one
replica queues there while another idles, and what the router knows decides how often.
`Pool` keeps one engine/load/simulate.py Simulator per replica (its own scheduler, KV pool and
clock) and routes the requests in arrival order: before request g (arriving at t) is sent, the
replicas the router looks at are advanced to t (`Simulator.advance_to`: their events up to t, a
run of decode steps stopping at the step that reaches it), so the router sees each one's state
at t; the chosen replica gets g as its next arrival (slot k of its request table: the tables are
filled in arrival order, so each replica's arrivals stay sorted). Routers (engine/scenarios/
fleet.py ROUTERS): round robin (no state read: only the chosen replica is advanced), least
outstanding (every replica advanced; the fewest routed and not finished, ties to the next in
turn after the last chosen), prefix-aware (least outstanding when the requests share no
prefix, as here).

Every replica integrates its steps into one shared MeasuredWindow (engine/load/window.py), whose
edges are the fleet's (the arrivals of its first and first unmeasured requests), so the window's
sums are the fleet's; `FleetRun` presents the replicas' request tables gathered back to the
requests' own order, and their summed time series, to engine/load/results.py as one run.
"""

from __future__ import annotations

import numpy as np

from engine.arrays import INF
from engine.load.api import Instance, run_work
from engine.load.simulate import Simulator, thin
from engine.load.window import MeasuredWindow

FIELDS = (
    "arrival_s",
    "admitted_s",
    "first_token_s",
    "done_s",
    "input_tokens",
    "output_tokens",
    "preemptions",
)


def fleet_window(arrival_s: np.ndarray, warmup: int, drain: int) -> MeasuredWindow:
    """The measured window of requests arriving at `arrival_s` (any order): from the arrival
    of the first measured request to that of the first after them (MeasuredWindow.of_arrivals
    of the sorted arrivals)."""
    ordered = np.sort(np.asarray(arrival_s, dtype=float))
    return MeasuredWindow.of_arrivals(ordered.tolist(), warmup, drain)


class Pool:
    """`replicas` Simulators of one instance, the requests routed to them at arrival."""

    def __init__(
        self,
        inst: Instance,
        replicas: int,
        router: str,
        window: MeasuredWindow,
        recorders: list | None = None,
    ):
        """`recorders`: one engine/load/trace_export.py StepRecorder per replica (a trace of
        the fleet), or None."""
        self.inst, self.router, self.window = inst, router, window
        self.replicas = replicas
        self.recorders = recorders
        self.sims: list[Simulator] = []
        self.replica_of = self.slot_of = np.zeros(0, dtype=np.int64)
        self.prefilled = False

    def route(self, arrival_s: np.ndarray, n_in: np.ndarray, n_out: np.ndarray) -> Pool:
        """Route and simulate every request (arrival times in any order), then drain."""
        n = len(n_in)
        bound = run_work(self.inst, n_in, n_out, open_loop=True, clients=None)
        self.sims = [
            self._replica(n, bound.events + n, bound.preemptions, recorder=rec)
            for rec in (self.recorders or [None] * self.replicas)
        ]
        for rec in self.recorders or ():
            rec.ids = []  # its slots' request indices, in arrival order
        self.replica_of = np.zeros(n, dtype=np.int64)
        self.slot_of = np.zeros(n, dtype=np.int64)
        filled = [0] * self.replicas
        order = np.argsort(arrival_s, kind="stable")
        times = np.asarray(arrival_s, dtype=float)[order].tolist()
        ins, outs = n_in[order].tolist(), n_out[order].tolist()
        look_all = self.router != "round-robin"
        sims, r = self.sims, self.replicas - 1
        for k, g in enumerate(order.tolist()):
            t = times[k]
            if look_all:
                for sim in sims:
                    sim.advance_to(t)
                r = least_outstanding(filled, sims, after=r)
            else:
                r = k % self.replicas
                sims[r].advance_to(t)
            slot = filled[r]
            filled[r] += 1
            self.replica_of[g], self.slot_of[g] = r, slot
            if self.recorders:
                self.recorders[r].ids.append(g)
            table = sims[r].requests
            table.arrival_s[slot] = t
            table.input_tokens[slot] = table.prompt_tokens[slot] = ins[k]
            table.output_tokens[slot] = outs[k]
        for sim in sims:
            sim.advance_to(INF)
            sim.close()
        return self

    def _replica(self, n: int, events: int, preemptions: int, recorder=None) -> Simulator:
        inst = self.inst
        sim = Simulator(
            inst.scenario.folded,
            inst.scheduler,
            inst.pool,
            arrival_s=np.full(n, INF),
            input_tokens=np.ones(n, dtype=np.int64),
            output_tokens=np.ones(n, dtype=np.int64),
            clients=None,
            warmup=0,
            drain=0,
            max_events=events,
            max_preemptions=preemptions,
            recorder=recorder,
        )
        sim.window = self.window  # shared: the fleet's integrals
        sim.prefilled_arrivals = self.prefilled
        return sim

    def gather(self, name: str) -> np.ndarray:
        """Request table field `name` of every request, in the requests' own order."""
        out = np.empty(len(self.replica_of), dtype=float)
        for r, sim in enumerate(self.sims):
            mine = self.replica_of == r
            out[mine] = np.asarray(getattr(sim.requests, name), dtype=float)[self.slot_of[mine]]
        return out

    @property
    def events(self) -> int:
        return sum(sim.events for sim in self.sims)


def least_outstanding(filled: list[int], sims: list[Simulator], after: int) -> int:
    """The replica with the fewest requests routed and not finished; ties go to the first
    after the last one chosen (round robin among equals)."""
    count = len(filled)
    best, fewest = after, None
    for step in range(1, count + 1):
        j = (after + step) % count
        outstanding = filled[j] - len(sims[j].completed)
        if fewest is None or outstanding < fewest:
            best, fewest = j, outstanding
    return best


def summed_series(pools: list[Pool]) -> np.ndarray:
    """The replicas' time series (time, running, queued, blocks) summed at every recorded
    time (each replica's value the last it recorded by then, 0 before its first)."""
    rows = [thin(sim.series) for pool in pools for sim in pool.sims]
    rows = [r for r in rows if len(r)]
    if not rows:
        return np.zeros((0, 4))
    times = np.unique(np.concatenate([r[:, 0] for r in rows]))
    total = np.zeros((len(times), 3))
    for r in rows:
        at = np.searchsorted(r[:, 0], times, side="right") - 1
        total += np.where(at[:, None] >= 0, r[np.maximum(at, 0), 1:], 0.0)
    return np.column_stack([times, total])


class Table:
    """A fleet's requests as one request table (numpy arrays, the requests' own order)."""

    def __init__(self, columns: dict[str, np.ndarray]):
        for name in FIELDS:
            setattr(self, name, columns[name])
        self.count = len(columns["arrival_s"])
        self.open_loop = True


class FleetRun:
    """What engine/load/results.py reads of a run, for a fleet: the requests gathered, the
    shared window, the summed series."""

    def __init__(self, table: Table, window: MeasuredWindow, series: np.ndarray, margin: int):
        self.requests, self.window, self.series = table, window, series
        self.warmup = self.drain = margin
        self.completed: list[int] = []  # read for closed loops only
        self.prefix = None  # no prefix cache across a fleet (refused in engine/load/disagg.py)

    @classmethod
    def of_pool(cls, pool: Pool, margin: int) -> FleetRun:
        table = Table({name: pool.gather(name) for name in FIELDS})
        series = summed_series([pool])
        return cls(table=table, window=pool.window, series=series, margin=margin)


def settle_window(run: FleetRun) -> None:
    """A window without a later arrival (no drain) ends at the last measured completion."""
    window = run.window
    if window.end_s == INF:
        last = run.requests.count - run.drain
        done = run.requests.done_s[run.warmup : last]
        window.end_s = float(np.nanmax(done)) if len(done) else window.start_s
