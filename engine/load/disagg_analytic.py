"""The fast path of disaggregated serving: each side of engine/load/disagg.py in steady state.

The simulator runs prefill workers, the KV transfer and decode workers request by request; a
planner needs every layout at once. Here, on the arrays of engine/load/analytic.py:

- **A prefill worker** at x requests/s is a server whose requests produce one token: the
  aggregated open loop with O = 1 (`analytic.open_loop`), so its TTFT is queueing + prefill.
- **The KV transfer** adds `disagg.exposed_s` of `disagg.kv_transfer_s`, both on arrays
  (`exposed_from`), with the prompt's compute as the prefill at no load (what layer-wise
  sending can hide).
- **A decode worker** at y requests/s admits each request prefilled and decodes its O − 1
  remaining tokens with no prompt in its steps. Little's law gives m = y·(O−1)·τ decoders and
  τ = τ_decode(m) (the decode step of analytic.py `step_s` with no prompt tokens); the fixed
  point is found by bisection. Capacity: r requests complete per step with r·(O−1) within
  max_num_seqs, max_batched_tokens (a decoder takes one token of the budget) and the KV pool
  (decoders holding I + O/2 tokens on average, or whole requests under the reserve policy);
  the saturation rate is r/τ at r_max.
- TPOT = τ + W/(O−1), W the wait for a decode slot (analytic.py `_queue`: the sequence-slot
  queue of the aggregated path). Its p-quantile prices the step at the batch a request sees on
  average over its life: the decoder count is Poisson (mean m, variance m/b for burstiness b),
  and its mean over a window of one lifetime has variance (2/3)·m/b (an M/D/∞ count's
  autocorrelation 1 − |t|/S integrated over the window), so m_p = m + z_p·√(2m/3b).

TTFT = the prefill worker's TTFT + the exposed transfer; the decode side's wait shows in TPOT,
as the simulator measures it (the first token is the prefill worker's). Checked against the
simulator in tests/test_disagg_analytic.py.
"""

from __future__ import annotations

import numpy as np

from engine.catalog.shapes import cached_tokens
from engine.load import analytic as an
from engine.load.disagg import exposed_s
from engine.serving.kernel import Folded

TRICKLE = 1e-300  # requests/s: a rate at which no request waits for another


def prefill_open_loop(f: Folded, lim: an.Limits, rate, n_in, burstiness=1.0) -> dict:
    """A prefill worker at `rate` requests/s: the aggregated open loop with one output token
    (its TTFT is the first token the prefill side returns)."""
    ones = np.ones_like(np.asarray(n_in, dtype=float))
    return an.open_loop(f=f, lim=lim, rate=rate, n_in=n_in, n_out=ones, burstiness=burstiness)


def prefill_alone_s(f: Folded, lim: an.Limits, n_in) -> np.ndarray:
    """Seconds of one prompt's prefill on an idle prefill worker (the compute a layer-wise
    KV transfer can hide)."""
    return prefill_open_loop(f=f, lim=lim, rate=TRICKLE, n_in=n_in)["ttft_s_mean"]


def kv_bytes(f: Folded, n_in) -> np.ndarray:
    """Bytes of a prompt's KV cache, whole model: kv_full bytes per token per layer × the
    tokens every layer caches (disagg.py `kv_bytes` on arrays)."""
    return f.kv_full * cached_tokens(f.s, np.asarray(n_in, dtype=float), xp=np)


def exposed_from(nbytes, prefill, layers, link: tuple, overlap: bool) -> np.ndarray:
    """The transfer time a first token waits for: `nbytes` over `link` (bytes/s per device,
    latency s, lanes: disagg.py `kv_transfer_s` on arrays), less what a layer-wise send hides
    behind the prompt's `prefill` seconds over `layers` (disagg.py `exposed_s`)."""
    bandwidth, latency, lanes = link
    whole = nbytes / (lanes * bandwidth) + latency
    return exposed_s(transfer=whole, prefill=prefill, layers=layers, overlap=overlap)


def exposed_transfer_s(f: Folded, lim: an.Limits, n_in, link: tuple, overlap: bool):
    """The transfer time a prompt's first token waits for; `link`: (bytes/s per device,
    latency s, lanes), arrays broadcasting with the deployments and the request shapes."""
    return exposed_from(
        nbytes=kv_bytes(f, n_in),
        prefill=prefill_alone_s(f=f, lim=lim, n_in=n_in),
        layers=f.s.layers,
        link=link,
        overlap=overlap,
    )


def _decode_keys(f: Folded, lim: an.Limits, n_in, n_out) -> an.Keys:
    return an.keys(f=f, n_in=n_in, n_out=n_out, chunk=n_in, cached=lim.cached)


def decode_step_s(f: Folded, m, n_in, k: an.Keys) -> np.ndarray:
    """Seconds of a decode step of m decoders at their mean context (no prompt tokens)."""
    zero = 0.0 * m
    return an.step_s(f=f, m=m, n=zero, chunks=zero, n_in=n_in, k=k)


def decode_capacity(f: Folded, lim: an.Limits, n_in, n_out) -> dict:
    """A decode worker's most requests per step and its saturation rate (requests/s)."""
    dec_tokens, _ = an.footprint(lim, n_in, n_out)
    kv = lim.pool_tokens * (1.0 - np.where(lim.reserve, 0.0, lim.watermark))
    d = np.maximum(n_out - 1.0, 1e-9)
    r = np.minimum(np.minimum(lim.seqs, lim.tokens), kv / dec_tokens) / d
    m = r * d
    tau = decode_step_s(f=f, m=m, n_in=n_in, k=_decode_keys(f=f, lim=lim, n_in=n_in, n_out=n_out))
    return {"per_step": r, "tau_s": tau, "rate_per_s": r / tau, "running": m, "decoders": m}


def decode_open_loop(f: Folded, lim: an.Limits, rate, n_in, n_out, burstiness=1.0) -> dict:
    """A decode worker at `rate` requests/s, each arriving prefilled: mean and p50/p90/p99
    TPOT (inf beyond saturation), the mean step and decoders, and the saturation rate."""
    cap = decode_capacity(f=f, lim=lim, n_in=n_in, n_out=n_out)
    k = _decode_keys(f=f, lim=lim, n_in=n_in, n_out=n_out)
    d = np.maximum(n_out - 1.0, 0.0)
    lo = decode_step_s(f=f, m=0.0 * rate * d, n_in=n_in, k=k)
    top = np.maximum(cap["tau_s"], lo)
    for _ in range(an.BISECTIONS):  # the smallest τ with τ_decode(rate·d·τ) ≤ τ
        mid = (lo + top) / 2.0
        above = decode_step_s(f=f, m=rate * d * mid, n_in=n_in, k=k) > mid
        lo, top = np.where(above, mid, lo), np.where(above, top, mid)
    tau = top
    m = rate * d * tau
    stable = (rate < cap["rate_per_s"]) & (
        decode_step_s(f=f, m=m, n_in=n_in, k=k) <= tau * (1 + 1e-6)
    )
    wait, wait_p = an._queue(rate=rate, cap=cap, burstiness=burstiness, servers=lim.servers)
    steps = np.maximum(d, 1.0)
    out = {
        "saturation_rate_per_s": cap["rate_per_s"],
        "stable": stable,
        "tau_s": tau,
        "mean_running_requests": m,
        "tpot_s_mean": np.where(stable, tau + wait / steps, np.inf),
    }
    for p in (50, 90, 99):
        seen = m + an.Z[p] * np.sqrt(2.0 * m / (3.0 * burstiness))
        t = decode_step_s(f=f, m=np.maximum(seen, m), n_in=n_in, k=k) + wait_p(p) / steps
        out[f"tpot_s_p{p}"] = np.where(stable, t, np.inf)
    for key in [key for key in out if key.startswith("tpot")]:
        out[key] = np.where(d > 0, out[key], np.nan)
    return out
