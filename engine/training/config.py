"""Training configurations as arrays, and the rules that make one valid (docs/model.md,
"Training step").

A configuration splits `gpus` GPUs into tp (tensor, with sequence parallelism) × cp (context) ×
pp (pipeline stages, each holding vp virtual stages when interleaved) × dp (data parallel) =
gpus, with ep (expert parallel, MoE only) carved out of the dp·cp ranks. A step is a global
batch of B sequences of s tokens: every data-parallel replica runs m = B/(dp·b) micro-batches of
b sequences. The rules are Megatron-LM's (Narayanan et al. 2021; Korthikanti et al. 2022) and
DeepSpeed's (ZeRO-2/3 and pipelines do not combine). Every rule is evaluated on numpy arrays
over configurations at once: `reason_codes` gives each its first broken rule (0: valid).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from engine.catalog.shapes import Shapes
from engine.report.messages import N_

RECOMPUTE = ("none", "selective", "full")  # Korthikanti et al. 2022
ZERO_STAGES = (0, 1, 2, 3)  # Rajbhandari et al. 2020; 0: plain data parallelism
TRAIN_PRECISIONS = ("bf16", "fp16", "fp8")  # fp8: GEMMs in fp8, everything else 16-bit

# Reason codes (0: valid); each text says which rule the configuration breaks.
REASONS = (
    "",
    N_(
        "more GPUs than one node holds, and the catalogue lists no inter-node network for this "
        "accelerator (add a [hardware.ID.network] table)"
    ),
    N_("tp must divide the attention heads, and tp and the KV heads must divide one another"),
    N_("pp exceeds the layers"),
    N_("gpus is not a multiple of tp·pp·cp (dp must be whole)"),
    N_("global batch is not a multiple of dp × micro-batch (whole micro-batches per step)"),
    N_("vp > 1 needs pp > 1, layers divisible by pp·vp and micro-batches divisible by pp"),
    N_("seq_len must be divisible by tp (sequence parallelism) and, with cp > 1, by 2·cp"),
    N_("ep > 1 needs a mixture of experts, ep dividing the experts and dp·cp"),
    N_("ZeRO-2/3 shard gradients every micro-batch: not combined with pp > 1"),
    N_("does not fit in memory"),
)
DOES_NOT_FIT = len(REASONS) - 1


class Config(NamedTuple):
    """Configurations as float64 arrays of one length (counts; zero the ZeRO stage; recompute
    the index in RECOMPUTE)."""

    gpus: np.ndarray
    tp: np.ndarray
    pp: np.ndarray
    cp: np.ndarray
    vp: np.ndarray
    ep: np.ndarray
    micro_batch: np.ndarray
    global_batch: np.ndarray
    seq_len: np.ndarray
    zero: np.ndarray
    recompute: np.ndarray

    @property
    def dp(self) -> np.ndarray:
        """Data-parallel replicas: gpus / (tp·pp·cp)."""
        return self.gpus / (self.tp * self.pp * self.cp)

    @property
    def micro_batches(self) -> np.ndarray:
        """m, micro-batches per replica per step: B / (dp·b)."""
        return self.global_batch / (self.dp * self.micro_batch)

    @property
    def virtual(self) -> np.ndarray:
        """Virtual stages per pipeline stage that count: vp with pp > 1, else 1."""
        return np.where(self.pp > 1, self.vp, 1.0)


def make_config(**columns) -> Config:
    """A Config from numbers or arrays (broadcast to one length)."""
    arrays = np.broadcast_arrays(*(np.atleast_1d(np.asarray(columns[f], dtype=float))
                                   for f in Config._fields))  # fmt: skip
    return Config(*(np.ascontiguousarray(a) for a in arrays))


def _whole_ratio(a, b) -> np.ndarray:
    """a / b is a whole number (exactly, for the integer-valued floats used here)."""
    return np.mod(a, b) == 0


def reason_codes(c: Config, s: Shapes, per_node=np.inf, has_network=True) -> np.ndarray:
    """Each configuration's first broken rule as an index into REASONS (0: valid); memory is
    checked later (DOES_NOT_FIT). `per_node`: devices per node; `has_network`: whether the
    accelerator has a catalogued inter-node network."""
    heads, kv, mla = np.asarray(s.heads), np.asarray(s.kv_heads), np.asarray(s.mla)
    kv_ok = mla | _whole_ratio(kv, c.tp) | _whole_ratio(c.tp, kv)
    dp, m = c.dp, c.micro_batches
    interleave_ok = (c.pp > 1) & _whole_ratio(s.layers, c.pp * c.vp) & _whole_ratio(m, c.pp)
    seq_ok = _whole_ratio(c.seq_len, c.tp) & ((c.cp == 1) | _whole_ratio(c.seq_len, 2 * c.cp))
    experts = np.asarray(s.experts)
    ep_ok = (experts > 0) & _whole_ratio(experts, c.ep) & _whole_ratio(dp * c.cp, c.ep)
    broken = [
        (c.gpus > per_node) & (not has_network),
        ~(_whole_ratio(heads, c.tp) & kv_ok),
        c.pp > s.layers,
        ~_whole_ratio(c.gpus, c.tp * c.pp * c.cp),
        ~_whole_ratio(c.global_batch, dp * c.micro_batch),
        (c.vp > 1) & ~interleave_ok,
        ~seq_ok,
        (c.ep > 1) & ~ep_ok,
        (c.zero >= 2) & (c.pp > 1),
    ]
    return np.select(broken, np.arange(1, len(broken) + 1), 0)
