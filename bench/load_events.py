"""Calibration of the simulator's work bound: CPU seconds per event, and the bound's margin.

A run's work is bounded before it starts (engine/load/api.py `run_work`: the event loop's
iterations and one event per admission, with the preemptions it allows); the pages and the CLI
refuse what is over their budget in events, and say it in seconds at EVENT_US microseconds per
event. This measures, on each kind of run (open and closed loop, max throughput, many prompts
per step, preemptions, a sliding window, long prompts), the events a run took, its bound, and
the CPU seconds of the simulation (`time.process_time`, the minimum of `--repeat` runs after a
warm-up), so EVENT_US is the slowest kind's figure:

    .venv/bin/python bench/load_events.py [--repeat 3] [--json]

Results: bench/load_events_results.json (docs/model.md, "The work a run takes").
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine.load.api import EVENT_US, _work, instance, margin
from engine.load.simulate import Simulator
from engine.load.workload import draw
from engine.scenarios.bind import bind
from engine.scenarios.deployment import Deployment
from engine.scenarios.service import Scheduler
from engine.scenarios.workload import Workload

M8 = {"model": "Llama-3.1-8B", "hardware": "H100"}
RUNS = {  # label: serve_load keywords
    "open loop, 10,000 requests at 10/s (1000/200 tokens)": M8
    | {"input_tokens": 1000, "output_tokens": 200, "rate": 10.0, "requests": 10_000},
    "open loop at 80 %, lengths ±50 %": M8
    | {"input_tokens": 1000, "output_tokens": 200, "rate": 18.0, "length_spread": 0.5}
    | {"requests": 10_000},
    "closed loop, 64 clients, 70B on 4x H100 (trtllm)": {
        "model": "Llama-3.1-70B",
        "hardware": "H100",
        "tp": 4,
        "profile": "trtllm",
        "input_tokens": 1500,
        "output_tokens": 300,
        "concurrency": 64,
        "requests": 10_000,
    },
    "max throughput, 100,000 requests of 16/2 (trtllm: 2,048 prompts a step)": M8
    | {"profile": "trtllm", "input_tokens": 16, "output_tokens": 2, "concurrency": "max"}
    | {"requests": 100_000},
    "max throughput, KV-bound (L40S, 2000/1000 ±20 %, preemptions)": {
        "model": "Llama-3.1-8B",
        "hardware": "L40S",
        "input_tokens": 2000,
        "output_tokens": 1000,
        "length_spread": 0.2,
        "concurrency": "max",
        "requests": 10_000,
    },
    "thrashing: 1,000 requests of 1/20,000 tokens at once": M8
    | {"input_tokens": 1, "output_tokens": 20_000, "concurrency": "max", "requests": 1000},
    "thrashing: 300 requests of 1/99,999 tokens at once": M8
    | {"input_tokens": 1, "output_tokens": 99_999, "concurrency": "max", "requests": 300},
    "sliding window: Gemma-2-9B, 1,000 requests of 100/6,000 at once": {
        "model": "Gemma-2-9B",
        "hardware": "H100",
        "input_tokens": 100,
        "output_tokens": 6000,
        "concurrency": "max",
        "requests": 1000,
    },
    "long prompts: 2,000 requests of 30,000/100 at 1/s": M8
    | {"input_tokens": 30_000, "output_tokens": 100, "rate": 1.0, "requests": 2000},
}


def measure(kw: dict, repeat: int) -> dict:
    """The run's events (iterations + admissions), its bound, and its CPU seconds."""
    dep, w, sched = bind((kw.pop("model"), kw.pop("hardware")), kw, Deployment, Workload, Scheduler)
    inst = instance(dep, sched)
    arrival, n_in, n_out = draw(w)
    work = _work(inst=inst, w=w, arrival=arrival, n_in=n_in, n_out=n_out)
    warm = margin(w.requests, w.concurrency)
    cpus = []
    for _ in range(repeat + 1):  # the first run warms the step tables
        start = time.process_time()
        sim = Simulator(
            inst.scenario.folded,
            inst.scheduler,
            inst.pool,
            arrival_s=arrival,
            input_tokens=n_in,
            output_tokens=n_out,
            clients=w.concurrency,
            warmup=warm,
            drain=warm,
            max_events=work.events,
            max_preemptions=work.preemptions,
        ).run()
        cpus.append(time.process_time() - start)
    events = sim.events + len(n_in) + sim.preemptions  # as the bound counts them
    cpu = min(cpus[1:])
    return {
        "events": events,
        "loop_iterations": sim.events,
        "preemptions": sim.preemptions,
        "bound_events": work.events,
        "bound_preemptions": work.preemptions,
        "events_over_bound": events / work.events,
        "cpu_s": cpu,
        "us_per_event": cpu / events * 1e6,
        "bound_cpu_s_at_event_us": work.events * EVENT_US / 1e6,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    results = {label: measure(dict(kw), args.repeat) for label, kw in RUNS.items()}
    if args.json:
        print(json.dumps(results, indent=1))
        return
    for label, r in results.items():
        print(
            f"{label}\n    {r['events']:>9,} events (bound {r['bound_events']:,}, "
            f"{r['events_over_bound']:.0%}), {r['preemptions']:,} preemptions (allowed "
            f"{r['bound_preemptions']:,}), {r['cpu_s']:.3f} s: {r['us_per_event']:.1f} µs/event"
        )
    worst = max(r["us_per_event"] for r in results.values())
    print(f"slowest kind: {worst:.1f} µs per event (EVENT_US = {EVENT_US:g})")


if __name__ == "__main__":
    main()
