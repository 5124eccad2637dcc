"""Serving under load: continuous batching, request rates, tail latency and GPUs for a traffic.

The serving model (engine/serving) prices one static batch on an idle server; this package
serves a stream of requests with the scheduler of a real stack (vLLM, TensorRT-LLM), stepping
with the same per-operator costs (engine/serving/step.py):

- `workload.py`: the requests (open loop: Poisson or gamma arrivals; closed loop: N clients;
  max throughput; an uploaded trace, `trace.py`), lengths fixed or drawn.
- `pool.py`: the paged KV pool sized from memory, and its block counts.
- `simulate.py`: the event-driven simulator's loop (jumps from event to event) over its parts:
  `requests.py` (the per-request table), `decoders.py` (the decoding sequences' keys, blocks
  and next events), `policy.py` (the admission and KV policies: vLLM's on-demand blocks with
  preemption, TensorRT-LLM's reservation), `pricing.py` (a step's seconds; decode runs in
  closed form, `runs.py`) and `window.py` (the measured window and its integrals);
  `results.py`: the measured window's statistics.
- `analytic.py`: the vectorised steady-state fast path, `grid.py` over deployments × rates ×
  lengths, `plan.py` each deployment's max rate, replicas and cost for a target; `search.py`:
  the highest rate meeting SLOs (simulated), replicas and cost; `api.py`: `serve_load`, the
  public entry point; `router.py` and `disagg.py`: replicas behind a router and disaggregated
  prefill/decode workers, one simulator each (`serve_load` of a fleet).

docs/model.md, "Serving under load", describes the model and what it approximates.
"""
