"""Speculative decoding in the load simulator and the fast path: what a decode pass costs.

A speculative pass of m decoding sequences (engine/scenarios/speculation.py) drafts K tokens
per sequence, then verifies them in one forward pass of the served model over K + 1 positions
per sequence, and yields L tokens per sequence on average (the mean accepted length). Both
costs come from the engine's own step model, nothing else:

- verify: the step of engine/serving/step.py `mixed_step_s` that computes m chunks of K + 1
  tokens on top of each sequence's cached context c (every position reaches the LM head): the
  context-free operators see m·(K + 1) tokens with their weights read once, so at small m the
  pass costs what a decode step costs (the weights dominate) and at large m its compute grows
  (K + 1)-fold; attention computes (K + 1)·c + (K + 1)(K + 2)/2 keys per sequence and reads
  the c cached ones once. It launches as a decode step does (a CUDA graph: the decode step's
  per-layer overhead, not a prefill's).
- draft: K decode steps (engine/serving/decode_step.py) of the drafter on the same devices:
  `draft`, the draft model from the catalogue; `eagle` and `mtp`, a one-layer model of the
  served model's shapes (one decoder layer with its embedding and LM head: EAGLE's head,
  DeepSeek-V3's MTP module); `ngram`, nothing (a lookup in the prompt on the CPU). The K
  steps are priced at their middle context (the contexts differ by K tokens).

The simulator keeps its token clock (a decoding sequence's cache grows one token per decode
step, engine/load/decoders.py): a run of t token steps is t/L passes, so each pure decode step
costs (verify + draft)/L, in closed form over a run like a plain decode step. A step that
carries prompt chunks runs without speculation (its decoders produce one token each), and
every pass is taken to yield the mean L (no per-request draw): a mean-field model whose tails
are narrower than a real run's. docs/model.md, "Speculative decoding".
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from engine.arrays import SCALAR
from engine.catalog.arch import Architecture
from engine.catalog.resolve import resolve_model
from engine.load.decoders import DecodeBatch
from engine.load.pricing import StepPricer
from engine.scenarios.deployment import Deployment
from engine.scenarios.speculation import Speculation
from engine.serving import inputs as si
from engine.serving.decode_step import (
    AttentionLine,
    DecodeLines,
    decode_lines,
    in_flight,
    paced,
)
from engine.serving.kernel import Folded
from engine.serving.step import mixed_step_s


@dataclass(frozen=True)
class SpecCost:
    """A deployment's speculation and its drafter folded on the same devices (None: ngram)."""

    speculation: Speculation
    draft: Folded | None

    @property
    def tokens(self) -> int:
        return self.speculation.tokens

    @property
    def accepted(self) -> float:
        return self.speculation.mean_accepted


def one_layer(model: object, catalog) -> Architecture:
    """The served model's shapes with one decoder layer (an EAGLE head, an MTP module)."""
    arch = model if isinstance(model, Architecture) else resolve_model(model, catalog).arch
    if arch is None:
        raise ValueError(
            "spec_method: eagle and mtp draft with one layer of the served model's shapes; "
            "this model has none (give it its config.json shapes, or use draft or ngram)"
        )
    return dataclasses.replace(
        arch, layers=1, dense_layers=0, sliding_layers=0, sliding_pattern=0, sliding_window=None
    )


def spec_cost(dep: Deployment) -> SpecCost | None:
    """The speculation of `dep` with its drafter folded (None: no speculation)."""
    spec = dep.speculation
    if spec is None:
        return None
    if spec.method == "ngram":
        return SpecCost(spec, None)
    if spec.method == "draft":
        drafter = resolve_model(spec.draft_model, dep.catalog)
        if drafter.arch is None:
            raise ValueError(f"draft_model: {spec.draft_model[:60]!r} has no shapes to price")
    else:
        drafter = one_layer(dep.model, dep.catalog)
    draft_dep = dataclasses.replace(dep, model=drafter, speculation=None)
    return SpecCost(spec, si.scenario(draft_dep).folded)


def verify_lines(f: Folded, m, k: int, xp) -> DecodeLines:
    """One verify pass of m sequences with K + 1 positions each, as lines in the decode batch's
    keys Y = Σ (c + 1) (c: a sequence's cached tokens): attention computes (K+1)·Y + m·K(K+1)/2
    keys (Σ over the chunk positions of c + j, j = 1 … K+1) and reads Y − m cached ones."""
    n = m * (k + 1.0)
    zeros = tuple(0.0 * m for _ in f.decode_attention)
    whole = mixed_step_s(
        f,
        xp,
        decode_seqs=0.0 * m,
        decode_keys=zeros,
        prefill_tokens=n,
        prefill_seqs=m,
        done_seqs=n,
        prefill_keys=zeros,
        prior_keys=zeros,
    )
    fixed = whole + xp.where(n > 0, f.overhead_decode - f.overhead_prefill, 0.0)
    mu = in_flight(f, m, xp)  # the batches in flight mixed_step_s priced (pipeline stages)
    g = paced(f, mu, xp) if xp is not SCALAR or f.micro != 1.0 else f  # as mixed_step_s did
    lines = []
    for pa, da in zip(g.prefill_attention, g.decode_attention, strict=True):
        count, p_token, p_seq, _, _, _, p_mem_token, p_mem_seq = pa.op
        compute0 = (p_token * n + p_seq * m) / mu
        memory0 = (p_mem_token * n + p_mem_seq * m) / mu
        fixed = fixed - count * xp.maximum(compute0, memory0)  # the lines add it back
        line = AttentionLine(
            count=count,
            compute0=compute0 + pa.compute_per_key * m * k * (k + 1.0) / 2.0 / mu,
            memory0=memory0 - da.memory_per_key * m / mu,
            compute_per_key=pa.compute_per_key * (k + 1.0) / mu,
            memory_per_key=da.memory_per_key / mu,
            window=da.window,
        )
        lines.append(line)
    return DecodeLines(fixed, tuple(lines))


def draft_lines(f: Folded, m, k: int, xp) -> DecodeLines:
    """K decode steps of the drafter for m sequences, each priced at the middle context: keys
    Y + m·(K − 1)/2 per step."""
    one = decode_lines(f, m, xp)
    mid = m * (k - 1.0) / 2.0
    lines = tuple(
        line._replace(
            count=line.count * k,
            compute0=line.compute0 + line.compute_per_key * mid,
            memory0=line.memory0 + line.memory_per_key * mid,
        )
        for line in one.attention
    )
    return DecodeLines(one.fixed * k, lines)


def pass_lines(cost: SpecCost, f: Folded, m, xp) -> DecodeLines:
    """One speculative pass (verify and draft) of m sequences, in the keys of the served
    model's attention operators followed by the drafter's (the drafter's read the first of the
    served model's keys)."""
    verify = verify_lines(f, m, k=cost.tokens, xp=xp)
    if cost.draft is None:
        return verify
    draft = draft_lines(cost.draft, m, k=cost.tokens, xp=xp)
    return DecodeLines(verify.fixed + draft.fixed, verify.attention + draft.attention)


def token_step_lines(cost: SpecCost, f: Folded, m, xp) -> DecodeLines:
    """A pass divided by its mean accepted tokens L: the seconds of one token step."""
    whole = pass_lines(cost, f, m=m, xp=xp)
    share = 1.0 / cost.accepted
    lines = tuple(line._replace(count=line.count * share) for line in whole.attention)
    return DecodeLines(whole.fixed * share, lines)


def token_step_s(cost: SpecCost, f: Folded, m, keys: tuple, xp):
    """Seconds per token step of m decoders attending `keys` (per served-model operator)."""
    lines = token_step_lines(cost, f, m=m, xp=xp)
    t = lines.fixed
    extra = len(lines.attention) - len(keys)
    for line, x in zip(lines.attention, tuple(keys) + (keys[0],) * extra, strict=True):
        t = t + line.count * xp.maximum(
            line.compute0 + line.compute_per_key * x, line.memory0 + line.memory_per_key * x
        )
    return t


class SpecPricer(StepPricer):
    """The simulator's step prices with speculation: pure decode steps are token steps of
    speculative passes (`token_step_lines`), tabulated per batch size; mixed steps as before."""

    __slots__ = ("draft_ops",)

    def __init__(self, folded: Folded, max_num_seqs: int, cost: SpecCost):
        super().__init__(folded, max_num_seqs)
        batches = (max_num_seqs + 1,)
        m = np.arange(max_num_seqs + 1, dtype=float)
        lines = token_step_lines(cost, folded, m=m, xp=np)
        self.draft_ops = len(lines.attention) - len(self.attention_windows)
        self.fixed_s = np.broadcast_to(lines.fixed, batches).tolist()
        self.attention = [
            (
                np.broadcast_to(a.count, batches).tolist(),
                np.broadcast_to(a.compute0, batches).tolist(),
                np.broadcast_to(a.memory0, batches).tolist(),
                np.broadcast_to(a.compute_per_key, batches).tolist(),
                np.broadcast_to(a.memory_per_key, batches).tolist(),
            )
            for a in lines.attention
        ]

    def run_keys(self, decoders: DecodeBatch) -> tuple[tuple, tuple]:
        keys, slopes = decoders.keys(), decoders.key_slopes()
        extra = self.draft_ops
        return keys + (keys[0],) * extra, slopes + (slopes[0],) * extra


def step_pricer(folded: Folded, max_num_seqs: int, cost: SpecCost | None) -> StepPricer:
    """The simulator's pricer: with speculation when `cost` is given."""
    if cost is None:
        return StepPricer(folded, max_num_seqs)
    return SpecPricer(folded, max_num_seqs, cost)
