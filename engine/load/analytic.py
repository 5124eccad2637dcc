"""The analytic fast path: continuous batching in steady state, vectorised over configurations.

The simulator (engine/load/simulate.py) answers one configuration with tails; a planner needs
thousands. Here every quantity is a numpy array over configurations (deployments folded on
arrays, rates, lengths, scheduler limits), and each step is priced by the same
engine/serving/step.py `mixed_step_s`, at mean-field counts:

- A request decodes for O−1 steps and prefills for q = ⌈I / c⌉ steps, c = min(I, budget − m)
  its chunk (q = 1 without chunked prefill). In steady state at λ requests/s and mean step τ,
  Little's law gives m = λ·(O−1)·τ decoding sequences, and π = λ·τ·q prompt chunks per step.
- With π ≤ 1 a step carries at most one chunk: τ = (1−π)·τ_decode(m) + π·τ_chunk(m, c).
  Above, every step carries λ·I·τ prompt tokens. The fixed point τ is found by bisection.
- Capacity: per step r requests complete; the limits are the sequences (r·(O−1+q) ≤
  max_num_seqs), the step's tokens (r·(O−1+I) ≤ max_batched_tokens) and the KV pool (r·(O−1)
  decoders holding I + O/2 tokens on average and r·q prompts holding I, or whole requests under
  TensorRT-LLM's reserve policy). The saturation rate is r_max / τ at r_max.
- TTFT = queueing + the rest of the step in flight (E[τ²]/2E[τ], unless the server is idle,
  probability e^(−λ·e2e)) + q chunk steps. The queue for a sequence slot is an M/G/c wait
  (Sakasegawa's approximation of M/M/c, times Allen–Cunneen's (c_a² + c_s²)/2, c_a² = 1/b for
  gamma arrivals of burstiness b) with c the running limit, tail e^(−(1−u)·c·t/T), u = λ/λ_sat.
- TPOT = τ on average; a request's own TPOT varies with the prompts arriving during its O−1
  steps (Poisson, variance ×1/b), each adding (τ − τ_decode)/(λτ): its p-quantile uses the
  normal approximation.

Speculative decoding (engine/load/speculation.py): a step without prompt chunks is a token
step of speculative passes, as in the simulator. Prefix caching: the callers pass the prompt
tokens computed (I less the mean cached, `Limits.cached`), and every context and prompt token
attends the cached ones as well (the prefix taken to stay cached: no eviction).

Closed loops (N clients) are explicit: with N in service, m = N(O−1)/(O−1+q) and π =
N·q/(O−1+q) do not depend on τ, and arrivals come at step ends (no residual). Max throughput
is the capacity. The simulator checks all of this on a grid (tests/test_load_analytic.py):
means within 10 % below saturation, the saturation rate within 5 %.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from engine.arrays import INF
from engine.load.speculation import token_step_s
from engine.serving.kernel import Folded
from engine.serving.operators import mean_keys
from engine.serving.step import mixed_step_s, windows

Z = {50: 0.0, 90: 1.2815515655446004, 99: 2.3263478740408408}  # standard normal quantiles
BISECTIONS = 30  # halvings of [F(0), τ at the cap]: far below the model's own error
KMAX = 5  # chunks per step summed exactly (the Poisson tail beyond is put at KMAX)


CANDIDATES = 2_048  # elements a call of `highest_ok`'s test evaluates at most per round


def highest_ok(ok, hi, halvings: int) -> np.ndarray:
    """The highest x in [0, hi] that `ok` accepts, on the grid of hi / 2^halvings: what
    `halvings` bisection steps from [0, hi] give for an `ok` that holds below a threshold and
    fails above it (0 where it fails at the first grid point).

    Each round tries 2^p − 1 evenly spaced points of the bracket at once, along a new leading
    axis (p bits of the answer per call of `ok`; p = 1 is bisection), with p as large as keeps a
    call within CANDIDATES elements (at most 4 bits): a search over a few deployments costs 3
    calls of `ok` instead of 12, one over thousands the same calls as bisection.

    Args:
        ok: array of x (a leading axis, then `hi`'s shape) -> bool array of the same shape.
        hi: the top of each bracket (any shape).
        halvings: bits of the answer."""
    hi = np.asarray(hi, dtype=float)
    bits = int(np.clip(np.log2(CANDIDATES / max(hi.size, 1) + 1.0), 1, 4))
    lo, width, left = np.zeros_like(hi), hi, halvings
    while left > 0:
        p = min(bits, left)
        width = width / 2.0**p
        j = np.arange(1.0, 2.0**p).reshape((-1,) + (1,) * hi.ndim)
        good = np.asarray(ok(lo + j * width), dtype=bool)
        lo = lo + np.cumprod(good, axis=0).sum(axis=0) * width  # points before the first fail
        left -= p
    return lo


class Limits(NamedTuple):
    """A scheduler and KV pool as arrays (or floats) over configurations."""

    seqs: object  # max_num_seqs
    tokens: object  # max_batched_tokens
    chunked: object  # bool
    pool_tokens: object  # blocks · block_size
    block: object  # block_size
    reserve: object  # bool: TensorRT-LLM's policy (whole requests reserved)
    watermark: object  # fraction kept free (vLLM's policy)
    local_share: object  # share of windowed layers (0: none)
    window: object  # tokens (INF: none)
    spec: object = None  # speculative decoding (engine/load/speculation.py SpecCost) or None
    cached: object = 0.0  # mean prompt tokens found in the prefix cache (not in n_in)
    servers: object = 1.0  # workers behind a least-outstanding router, each at rate / servers


def pooled(servers, u):
    """A prompt's queueing behind `servers` workers that each take the next prompt when the
    router finds them the least loaded, relative to one worker's at the same utilisation u:
    Sakasegawa's M/M/c wait over M/M/1's, u^(√(2(c+1)) − 2) / c (1 at c = 1)."""
    exponent = np.sqrt(2.0 * (servers + 1.0)) - 2.0
    return np.clip(u, 1e-12, 1.0) ** exponent / servers


def mean_window(a, b, w):
    """Mean of min(c, w) over the whole numbers c in [a, b] (b ≥ a)."""
    n = b - a + 1.0
    inside = np.clip(np.minimum(b, w) - a + 1.0, 0.0, None)  # c ≤ w
    hi = a + inside - 1.0
    return (inside * (a + hi) / 2.0 + (n - inside) * np.minimum(w, b)) / n


class Keys(NamedTuple):
    """Per attention operator, keys per decoding sequence, per prompt token, and cached prompt
    keys read per prompt token, at mean counts (a step's keys are these times m or n)."""

    decode: tuple
    prompt: tuple
    prior: tuple


def keys(f: Folded, n_in, n_out, chunk, cached=0.0) -> Keys:
    """A decoder attends its mean context over its O−1 steps (window-capped); a prompt token
    mean_keys(I, w) keys; a prompt cut in q chunks starting at 0, c, 2c, … reads Σ min(j·c, w)
    cached keys, spread over its I tokens. With `cached` prefix tokens before the I computed
    ones (prefix caching), every context is that much longer, every prompt token attends them
    and each chunk reads them from the cache."""
    a, b = n_in + cached + 1.0, np.maximum(n_in + n_out - 1.0, n_in + 1.0) + cached
    q = np.ceil(n_in / chunk)
    decode, prompt, prior = [], [], []
    for w in windows(f):
        decode.append(mean_window(a, b, w))
        before = np.minimum(cached, w)
        prompt.append(mean_keys(n_in, w, np) + before)
        per_prompt = np.minimum(chunk * q * (q - 1.0) / 2.0, np.minimum(w, 1e300) * (q - 1.0))
        prior.append((per_prompt + q * before) / n_in)  # each chunk reads the cached ones
    return Keys(tuple(decode), tuple(prompt), tuple(prior))


def step_s(f: Folded, m, n, chunks, n_in, k: Keys):
    """Seconds of a step of m decoders (mean context) and n prompt tokens in `chunks` chunks."""
    return mixed_step_s(
        f,
        np,
        decode_seqs=m,
        decode_keys=tuple(m * x for x in k.decode),
        prefill_tokens=n,
        prefill_seqs=chunks,
        done_seqs=n / n_in,
        prefill_keys=tuple(n * x for x in k.prompt),
        prior_keys=tuple(n * x for x in k.prior),
    )


def spec_step_s(f: Folded, lim: Limits, m, k: Keys):
    """Seconds per token of m decoders' speculative passes at their mean keys."""
    return token_step_s(lim.spec, f, m=m, keys=tuple(m * x for x in k.decode), xp=np)


def _chunk(lim: Limits, m, n_in):
    """A prompt's mean chunk per step, I/q, and its number of steps q = ⌈I / (budget − m)⌉
    (q = 1 without chunked prefill)."""
    room = np.maximum(lim.tokens - m, 1.0)
    q = np.where(lim.chunked, np.ceil(n_in / room), 1.0)
    return n_in / q, q


class Mix(NamedTuple):
    """A step's time when the chunks it carries are a Poisson number K of mean π."""

    mean: object  # E[step]
    second: object  # E[step²]
    decode: object  # a step with no chunk
    own: object  # E[step] of a step carrying a given request's chunk (and K others)
    times: tuple  # a step carrying k = 0 … KMAX + 1 chunks


class Steps(NamedTuple):
    """What a step takes with k = 0 … KMAX + 1 chunks of c tokens beside m decoders."""

    times: tuple  # seconds, per k
    tokens: tuple  # prompt tokens carried, per k (at most the budget the decoders leave)


def step_times(f: Folded, lim: Limits, m, c, n_in, n_out) -> Steps:
    """The steps of m decoders carrying k = 0 … KMAX + 1 chunks of c tokens (at most the budget
    the m decoders leave)."""
    room = np.maximum(lim.tokens - m, 1.0)
    kk = keys(f=f, n_in=n_in, n_out=n_out, chunk=c, cached=lim.cached)
    k = np.arange(KMAX + 2.0)  # chunks per step, along a new leading axis
    rows = np.broadcast_shapes(np.shape(c), np.shape(room))
    tokens = np.minimum(k.reshape((-1,) + (1,) * len(rows)) * c, room)
    chunks = np.minimum(k.reshape((-1,) + (1,) * len(rows)), np.ceil(room / c))
    first = step_s(f=f, m=m, n=tokens[0], chunks=chunks[0], n_in=n_in, k=kk)
    # k = 1 … KMAX + 1 in one call: the same elementwise arithmetic as a call per k
    lead = (KMAX + 1,) + (1,) * (np.ndim(first) - len(rows))
    rest = step_s(
        f=f,
        m=m,
        n=tokens[1:].reshape(lead + rows),
        chunks=chunks[1:].reshape(lead + rows),
        n_in=n_in,
        k=kk,
    )
    times = [first, *np.broadcast_to(rest, (KMAX + 1, *np.shape(first)))]
    if lim.spec is not None:  # a step without prompt chunks: a token step of speculative passes
        times[0] = spec_step_s(f=f, lim=lim, m=m, k=kk)
    return Steps(times=tuple(times), tokens=tuple(tokens))


def mixed(steps: Steps, pi, c) -> Mix:
    """Steps carrying K ~ Poisson(π') chunks (the mass beyond KMAX put at KMAX). What a full
    step cannot carry waits for the next, so π' ≥ π is raised until the steps carry π·c prompt
    tokens on average."""
    times, tokens = steps
    target = pi * c
    lam = pi
    for _ in range(6):  # spill: raise π' until E[carried tokens] = π·c
        carried = sum(p * n for p, n in zip(_poisson(lam), tokens, strict=False))
        lam = np.where(
            carried > 0, lam * np.minimum(target / np.maximum(carried, 1e-300), 4.0), lam
        )
    probs = _poisson(lam)
    mean = sum(p * t for p, t in zip(probs, times, strict=False))
    second = sum(p * t**2 for p, t in zip(probs, times, strict=False))
    own = sum(p * t for p, t in zip(probs, times[1:], strict=False))
    return Mix(mean=mean, second=second, decode=times[0], own=own, times=times)


def mix(f: Folded, lim: Limits, m, pi, c, n_in, n_out) -> Mix:
    """Steps carry K ~ Poisson(π') chunks of c tokens beside m decoders (`step_times`,
    `mixed`)."""
    return mixed(step_times(f=f, lim=lim, m=m, c=c, n_in=n_in, n_out=n_out), pi=pi, c=c)


def own_step(steps: Mix, others) -> object:
    """E[step] of the step that carries a request's chunk beside K ~ Poisson(others) more."""
    return sum(p * t for p, t in zip(_poisson(others), steps.times[1:], strict=False))


def _poisson(lam) -> list:
    """P(K = 0), …, P(K = KMAX − 1), then P(K ≥ KMAX)."""
    out, weight = [], np.exp(-lam)
    for k in range(KMAX):
        out.append(weight)
        weight = weight * lam / (k + 1.0)
    return [*out, np.clip(1.0 - sum(out), 0.0, 1.0)]


def footprint(lim: Limits, n_in, n_out) -> tuple:
    """(tokens a decoder holds on average, tokens a prompt in prefill holds) in the pool."""
    half = lim.block / 2.0
    a, b = n_in + 1.0, np.maximum(n_in + n_out - 1.0, n_in + 1.0)
    share = lim.local_share
    decoding = (1 - share) * (n_in + n_out / 2.0) + share * mean_window(a, b, lim.window) + half
    prompt = (1 - share) * n_in + share * np.minimum(n_in, lim.window) + half
    whole = np.ceil((n_in + n_out) / lim.block) * lim.block
    whole = (1 - share) * whole + share * np.minimum(
        whole, np.ceil(lim.window / lim.block) * lim.block
    )
    return np.where(lim.reserve, whole, decoding), np.where(lim.reserve, whole, prompt)


def capacity(f: Folded, lim: Limits, n_in, n_out) -> dict:
    """The most requests per step the limits allow, and the saturation rate they give."""
    dec_tokens, pre_tokens = footprint(lim, n_in, n_out)
    kv = lim.pool_tokens * (1.0 - np.where(lim.reserve, 0.0, lim.watermark))
    d = np.maximum(n_out - 1.0, 0.0)
    q = np.ones_like(np.asarray(n_in * 1.0))
    for _ in range(3):  # q depends on the chunk, which depends on m
        r = np.minimum(
            np.minimum(lim.seqs / (d + q), lim.tokens / (d + n_in)),
            kv / (d * dec_tokens + q * pre_tokens),
        )
        c, q = _chunk(lim, r * d, n_in)
    steps = mix(f=f, lim=lim, m=r * d, pi=r * q, c=c, n_in=n_in, n_out=n_out)
    bound = np.select(
        [r * (d + q) >= lim.seqs * (1 - 1e-9), r * (d + n_in) >= lim.tokens * (1 - 1e-9)], [0, 1], 2
    )
    return {
        "per_step": r,
        "tau_s": steps.mean,
        "rate_per_s": r / steps.mean,
        "decoders": r * d,
        "running": r * (d + q),
        "chunk": c,
        "steps_prefill": q,
        "bound": bound,
    }


def _open_tau(f, lim, rate, n_in, n_out, hi):
    """The smallest fixed point τ of the open loop's mean step, by bisection on [0, hi]."""
    d = np.maximum(n_out - 1.0, 0.0)
    last: dict = {}  # the steps of the last m tried: a prefill worker's (O = 1) m is always 0

    def mean_step(tau):
        m = rate * d * tau
        if "m" not in last or not np.array_equal(last["m"], m):
            c, q = _chunk(lim, m, n_in)
            steps = step_times(f=f, lim=lim, m=m, c=c, n_in=n_in, n_out=n_out)
            last.update(m=m, c=c, q=q, steps=steps)
        c, q = last["c"], last["q"]
        return mixed(last["steps"], pi=rate * tau * q, c=c).mean

    lo = mean_step(np.zeros_like(hi))  # F(0) ≤ the smallest fixed point
    top = np.maximum(hi, lo)
    for _ in range(BISECTIONS):
        mid = (lo + top) / 2.0
        above = mean_step(mid) > mid
        lo, top = np.where(above, mid, lo), np.where(above, top, mid)
    return top, mean_step(top) <= top * (1 + 1e-6)


def _prompt_wait(lim: Limits, m, rate, tau, n_in, q, t_chunk, steps: Mix, residual, busy):
    """Seconds from a prompt's arrival to its first chunk's step, b = max_batched_tokens − m.

    Prompts of at most b/2 tokens share steps (`own_step`): the rest of the step in flight
    (`residual`), then a backlog of earlier prompts, Kingman's a·I²/(2(b − a·I)) tokens (a =
    λ·τ prompts per step) cleared at b per step. A longer prompt holds its steps alone, for s
    seconds (one step of I tokens, or I/b steps of b tokens lasting t_b each): an M/D/1 queue
    of prompts, waiting u·s/(2(1−u)) with u = λ·s, or, when no prompt is in service, the rest
    of a decode step. Behind a router of c = `lim.servers` workers (each at λ), the backlog and
    the M/D/1 wait are scaled by `pooled`(c, u)."""
    room = np.maximum(lim.tokens - m, 1.0)
    per_step = rate * tau
    load = per_step * n_in
    backlog = per_step * n_in * n_in / (2.0 * np.maximum(room - load, 1e-9 * room))
    full = steps.times[-1]  # a step carrying its whole budget of prompt tokens
    service = np.where(q > 1, n_in / room * full, steps.times[1])
    u = np.minimum(rate * service, 1.0 - 1e-9)
    share = pooled(lim.servers, np.minimum(rate * q * t_chunk, 1.0 - 1e-9))
    short = residual + np.minimum(backlog / room, 1e6) * t_chunk * share
    long = u * service / (2.0 * (1.0 - u)) * pooled(lim.servers, u)
    long = long + (1.0 - u) * busy * steps.decode / 2.0
    return np.where(n_in > room / 2.0, long, short)


def _quantile_wait(p, pw, spread):
    """p-quantile of a wait that is 0 with probability 1 − pw, else exponential (mean
    `spread`)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(pw > 1.0 - p / 100.0, spread * np.log(pw / (1.0 - p / 100.0)), 0.0)


def open_loop(f: Folded, lim: Limits, rate, n_in, n_out, burstiness=1.0) -> dict:
    """Steady-state means and tails at `rate` requests/s (arrays; inf beyond saturation)."""
    cap = capacity(f=f, lim=lim, n_in=n_in, n_out=n_out)
    d = np.maximum(n_out - 1.0, 0.0)
    hi = np.where(d > 0, cap["decoders"] / np.maximum(rate * d, 1e-300), cap["tau_s"])
    tau, found = _open_tau(
        f=f, lim=lim, rate=rate, n_in=n_in, n_out=n_out, hi=np.maximum(hi, cap["tau_s"])
    )
    stable = found & (rate < cap["rate_per_s"])
    m = rate * d * tau
    c, q = _chunk(lim, m, n_in)
    steps = mix(f=f, lim=lim, m=m, pi=rate * tau * q, c=c, n_in=n_in, n_out=n_out)
    # the prompts sharing a request's step arrived during the step in which it arrived: a
    # length-biased step, E[τ²]/E[τ] long (so more than the π per step on average)
    t_dec = steps.decode
    others = rate * q * steps.second / steps.mean
    t_chunk = own_step(steps, others)
    busy = 1.0 - np.exp(-rate * (q * t_chunk + d * tau))  # P(the server is not idle)
    # behind a router of c workers a prompt finds every one busy with probability about
    # busy^(√(2(c+1)) − 1) (Sakasegawa's; busy itself at c = 1), and shares a step only then
    if np.any(np.asarray(lim.servers) > 1):  # (one worker: nothing changes, nothing computed)
        alone = np.clip(busy, 1e-12, 1.0) ** (np.sqrt(2.0 * (lim.servers + 1.0)) - 2.0)
        t_chunk = np.where(lim.servers > 1, own_step(steps, others * alone), t_chunk)
        busy = busy * alone
    residual = busy * steps.second / (2.0 * steps.mean)
    before = _prompt_wait(
        lim=lim,
        m=m,
        rate=rate,
        tau=tau,
        n_in=n_in,
        q=q,
        t_chunk=t_chunk,
        steps=steps,
        residual=residual,
        busy=busy,
    )
    prefill = before + q * t_chunk
    wait, wait_p = _queue(rate=rate, cap=cap, burstiness=burstiness, servers=lim.servers)
    ttft = prefill + wait
    # the prompts that arrive while a request waits for its first token are prefilled during
    # its decode: each adds `extra` (the mean step's excess over a decode step, per prompt)
    extra = np.where(rate * tau > 0, (tau - t_dec) / np.maximum(rate * tau, 1e-300), 0.0)
    tpot = tau + rate * ttft * extra / np.maximum(d, 1.0)
    out = {
        "saturation_rate_per_s": cap["rate_per_s"],
        "stable": stable,
        "tau_s": tau,
        "mean_running_requests": m + rate * prefill,
        "ttft_s_mean": ttft,
        "tpot_s_mean": np.where(d > 0, tpot, np.nan),
        "e2e_latency_s_mean": ttft + d * tpot,
        "queueing_s_mean": wait,
    }
    for p in (50, 90, 99):
        spread_r = np.clip((p / 100.0 - (1.0 - busy)) / np.maximum(busy, 1e-12), 0.0, 1.0)
        out[f"ttft_s_p{p}"] = prefill - residual + spread_r * np.maximum(t_chunk, t_dec) + wait_p(p)
        mu = rate * d * tau
        k = np.clip(mu + Z[p] * np.sqrt(mu / burstiness), 0.0, None)
        k = k + rate * ttft  # and those arriving while it waited for its first token
        out[f"tpot_s_p{p}"] = np.where(d > 0, t_dec + k * extra / np.maximum(d, 1.0), np.nan)
    return _mask(out, stable) | _rates(
        rate=rate, n_out=n_out, m=m, tau=tau, lim=lim, n_in=n_in, d=d, q=q
    )


def _queue(rate, cap, burstiness, servers=1.0):
    """Mean wait for a sequence slot and its p-quantile function: M/M/c's probability of
    waiting (Sakasegawa: L_q ≈ u^√(2(c+1)) / (1−u), P_wait = L_q·(1−u)/u, u = λ/λ_sat),
    its exponential wait scaled by Allen–Cunneen's (c_a² + c_s²)/2 with c_a² = 1/b and
    c_s² = 0 (a slot is held for a nearly fixed time when lengths are fixed). Behind a router
    of `servers` workers, each at `rate`, the slots of all of them serve one queue."""
    c = np.maximum(cap["running"], 1.0)
    service = c / cap["rate_per_s"]  # seconds a request holds its slot at saturation
    c = c * servers  # a router's workers pool their slots
    rho = np.clip(rate / cap["rate_per_s"], 1e-12, 1.0 - 1e-9)
    lq = rho ** np.sqrt(2.0 * (c + 1.0)) / (1.0 - rho)
    pw = np.clip(lq * (1.0 - rho) / rho, 0.0, 1.0)
    spread = service / (c * (1.0 - rho)) * (1.0 / burstiness) / 2.0
    return pw * spread, lambda p: _quantile_wait(p, pw, spread)


def _rates(rate, n_out, m, tau, lim, n_in, d, q) -> dict:
    dec_tokens, pre_tokens = footprint(lim, n_in, n_out)
    held = m * dec_tokens + rate * tau * q * pre_tokens
    return {
        "requests_per_s": rate,
        "output_tokens_per_s": rate * n_out,
        "kv_cache_utilisation": np.clip(held / lim.pool_tokens, 0.0, 1.0),
    }


def _mask(out: dict, stable) -> dict:
    """Beyond saturation the queue grows without bound: latencies are inf."""
    for key, value in out.items():
        if key.startswith(("ttft", "e2e", "queueing")):
            out[key] = np.where(stable, value, INF)
    return out


def closed_loop(f: Folded, lim: Limits, clients, n_in, n_out, lockstep=True) -> dict:
    """N clients, each sending its next request when its last one finishes.

    With fixed lengths (`lockstep`) the clients move in groups: the first prompts fill
    G = ⌈N·I / budget⌉ steps (G = ⌈N / ⌊budget/I⌋⌉ without chunking), and as every request then
    takes the same O steps (one prefill step, O−1 decode steps), the groups keep their phase:
    a cycle of O steps holds G steps each prefilling a group of g = N/G prompts beside the
    N − g others decoding, and O − G pure decode steps. TTFT is one such prefill step (arrivals
    come at step ends), e2e the cycle. Otherwise (lengths drawn) the requests spread out: m =
    N(O−1)/(O−1+q) decoders and π = N·q/(O−1+q) chunks per step, priced by `mix`."""
    cap = capacity(f=f, lim=lim, n_in=n_in, n_out=n_out)
    d = np.maximum(n_out - 1.0, 0.0)
    served = np.minimum(clients, cap["running"])
    per_step = np.where(
        lim.chunked, lim.tokens / n_in, np.maximum(np.floor(lim.tokens / n_in), 1.0)
    )
    groups = np.clip(np.ceil(served / per_step), 1.0, np.maximum(n_out, 1.0))
    g = served / groups
    whole = keys(f=f, n_in=n_in, n_out=n_out, chunk=n_in, cached=lim.cached)
    t_prefill = step_s(f=f, m=served - g, n=g * n_in, chunks=g, n_in=n_in, k=whole)
    t_decode = step_s(f=f, m=served, n=0.0 * g, chunks=0.0 * g, n_in=n_in, k=whole)
    if lim.spec is not None:
        t_decode = spec_step_s(f=f, lim=lim, m=served, k=whole)
    cycle = groups * t_prefill + np.maximum(n_out - groups, 0.0) * t_decode
    q = np.ones_like(served)
    for _ in range(3):
        m = served * d / (d + q)
        c, q = _chunk(lim, m, n_in)
    steps = mix(f=f, lim=lim, m=m, pi=served * q / (d + q), c=c, n_in=n_in, n_out=n_out)
    spread_prefill = q * steps.own
    ttft = np.where(lockstep, t_prefill, spread_prefill)
    e2e = np.where(lockstep, cycle, spread_prefill + d * steps.mean)
    throughput = served / e2e
    wait = np.maximum(clients - served, 0.0) / throughput
    return {
        "requests_per_s": throughput,
        "output_tokens_per_s": throughput * n_out,
        "ttft_s_mean": wait + ttft,
        "tpot_s_mean": np.where(d > 0, (e2e - ttft) / d, np.nan),
        "e2e_latency_s_mean": wait + e2e,
        "mean_running_requests": served,
        "saturation_rate_per_s": cap["rate_per_s"],
    }


def max_throughput(f: Folded, lim: Limits, n_in, n_out) -> dict:
    """Every request queued: the limits decide the batch (TTFT and e2e depend on the queue's
    length, so they are not given)."""
    cap = capacity(f=f, lim=lim, n_in=n_in, n_out=n_out)
    d = np.maximum(n_out - 1.0, 0.0)
    return {
        "requests_per_s": cap["rate_per_s"],
        "output_tokens_per_s": cap["rate_per_s"] * n_out,
        "tpot_s_mean": np.where(d > 0, cap["tau_s"], np.nan),
        "mean_running_requests": cap["running"],
        "saturation_rate_per_s": cap["rate_per_s"],
        "bound": cap["bound"],
    }
