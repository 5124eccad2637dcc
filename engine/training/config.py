"""Training configurations as arrays, and the rules that make one valid (docs/model.md,
"Training step").

A configuration splits `gpus` GPUs into tp (tensor, with sequence parallelism) × cp (context) ×
pp (pipeline stages, each holding vp virtual stages when interleaved) × dp (data parallel) =
gpus. An MoE layer folds the same tp·cp·dp GPUs of a stage its own way (Megatron-Core's MoE
parallel folding): etp (the experts' tensor parallelism, tp unless given) × ep (expert
parallel) × edp (the experts' data parallelism). A step is a global
batch of B sequences of s tokens: every data-parallel replica runs m = B/(dp·b) micro-batches of
b sequences. The rules are Megatron-LM's (Narayanan et al. 2021; Korthikanti et al. 2022),
DeepSpeed's (ZeRO-2/3 and pipelines do not combine) and DualPipe's; the layers per stage are
balanced with remainders or given for the end stages (engine/training/stages.py). Every rule
is evaluated on numpy arrays over configurations at once: `reason_codes` gives each its first
broken rule (0: valid).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from engine.catalog.shapes import Shapes
from engine.report.messages import MessageKind
from engine.scenarios.training import CP_COMM_TYPES, PP_SCHEDULES, RECOMPUTE_MODULES
from engine.training.stages import layout_ok

# Reason codes (0: valid): REASONS[code] is the rule the configuration breaks.
REASONS = (
    None,
    MessageKind(
        "no_inter_node_network",
        "more GPUs than one node holds, and the catalogue lists no inter-node network for this "
        "accelerator (add a [hardware.ID.network] table)",
    ),
    MessageKind(
        "tp_must_divide_heads",
        "tp must divide the attention heads, and tp and the KV heads must divide one another",
    ),
    MessageKind("pp_exceeds_layers", "pp exceeds the layers"),
    MessageKind("dp_not_whole", "gpus is not a multiple of tp·pp·cp (dp must be whole)"),
    MessageKind(
        "micro_batches_not_whole",
        "global batch is not a multiple of dp × micro-batch (whole micro-batches per step)",
    ),
    MessageKind(
        "vp_needs_pp",
        "vp > 1 needs pp > 1, a layer per virtual stage (an end stage's embedding or head may "
        "fill one) and micro-batches divisible by pp",
    ),
    MessageKind(
        "dualpipe_layout",
        "DualPipe needs an even pp, vp 1 and an even number of micro-batches, at least 2·pp "
        "(deepseek-ai/DualPipe's checks)",
    ),
    MessageKind(
        "dualpipev_layout",
        "DualPipeV needs pp > 1, vp 1, at least 2·pp micro-batches and a layer on each of its "
        "2·pp stages (torch.distributed.pipelining's checks)",
    ),
    MessageKind(
        "seq_len_not_divisible",
        "seq_len must be divisible by tp (sequence parallelism) and, with cp > 1, by 2·cp",
    ),
    MessageKind(
        "a2a_needs_heads",
        "cp_comm_type a2a (DeepSpeed-Ulysses) needs the attention heads and the KV heads "
        "divisible by tp·cp",
    ),
    MessageKind(
        "etp_must_divide_tp",
        "etp (the experts' tensor parallelism) needs a mixture of experts and must divide tp",
    ),
    MessageKind(
        "ep_needs_experts",
        "ep > 1 needs a mixture of experts, ep dividing the experts and etp·ep dividing tp·cp·dp",
    ),
    MessageKind(
        "zero_with_pp", "ZeRO-2/3 shard gradients every micro-batch: not combined with pp > 1"
    ),
    MessageKind(
        "stage_layers_do_not_add_up",
        "first_stage_layers and last_stage_layers need pp > 1 and must leave every other stage "
        "a layer (with pp 2 they add up to the layers)",
    ),
    MessageKind(
        "recompute_module_not_in_model",
        "a recompute module names a part this model lacks (mla_up_proj: multi-head latent "
        "attention; moe and moe_act: routed experts; shared_experts: shared experts; mlp: a "
        "dense MLP layer)",
    ),
    MessageKind("does_not_fit_in_memory", "does not fit in memory"),
)
DOES_NOT_FIT = len(REASONS) - 1


class Config(NamedTuple):
    """Configurations as float64 arrays of one length (counts; zero the ZeRO stage; recompute
    the index in engine/scenarios/training.py RECOMPUTE, and what selective recomputation runs
    again a bit mask of its RECOMPUTE_MODULES)."""

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
    first_layers: np.ndarray  # layers given for the first stage (0: balanced)
    last_layers: np.ndarray  # and for the last
    recompute_modules: np.ndarray  # bit i: RECOMPUTE_MODULES[i] (selective only; 1: core_attn)
    etp: np.ndarray  # the experts' tensor parallelism (0: tp)
    schedule: np.ndarray  # the pipeline schedule: its index in PP_SCHEDULES (0: 1F1B)
    cp_comm: np.ndarray  # how cp exchanges keys and values: its index in CP_COMM_TYPES (0: p2p)

    @property
    def dp(self) -> np.ndarray:
        """Data-parallel replicas: gpus / (tp·pp·cp)."""
        return self.gpus / (self.tp * self.pp * self.cp)

    @property
    def micro_batches(self) -> np.ndarray:
        """m, micro-batches per replica per step: B / (dp·b)."""
        return self.global_batch / (self.dp * self.micro_batch)

    @property
    def expert_tp(self) -> np.ndarray:
        """etp: the experts' tensor parallelism (tp unless given)."""
        return np.where(self.etp > 0, self.etp, self.tp)

    @property
    def expert_dp(self) -> np.ndarray:
        """edp: the ranks holding the same routed experts, tp·cp·dp / (etp·ep)."""
        return self.tp * self.cp * self.dp / (self.expert_tp * self.ep)

    def runs_again(self, module: str) -> np.ndarray:
        """Whether selective recomputation runs `module` again (bool per configuration)."""
        bit = float(1 << RECOMPUTE_MODULES.index(module))
        return (self.recompute == 1) & (np.mod(np.floor(self.recompute_modules / bit), 2) == 1)

    @property
    def dualpipe(self) -> np.ndarray:
        """Whether the pipeline runs DualPipe (bool per configuration)."""
        return self.schedule == PP_SCHEDULES.index("dualpipe")

    @property
    def dualpipev(self) -> np.ndarray:
        """Whether the pipeline runs DualPipeV (bool per configuration)."""
        return self.schedule == PP_SCHEDULES.index("dualpipev")

    @property
    def mirrored(self) -> np.ndarray:
        """Whether each device holds two stages, a first half's and its mirror in the second
        half (DualPipe, DualPipeV)."""
        return self.dualpipe | self.dualpipev

    def cp_exchange(self, kind: str) -> np.ndarray:
        """Whether context parallelism (cp > 1) exchanges keys and values as `kind` (bool)."""
        return (self.cp > 1) & (self.cp_comm == CP_COMM_TYPES.index(kind))

    @property
    def stages(self) -> np.ndarray:
        """Pipeline stages the layers split into: 2·pp under DualPipeV, else pp."""
        return np.where(self.dualpipev, 2.0 * self.pp, self.pp)

    @property
    def virtual(self) -> np.ndarray:
        """Virtual stages per pipeline stage that count: vp with pp > 1, else 1."""
        return np.where(self.pp > 1, self.vp, 1.0)


def make_config(**columns) -> Config:
    """A Config from numbers or arrays (broadcast to one length); the end stages' layers
    default to 0 (balanced), the recompute modules to core_attn, etp to 0 (tp) and the schedule to
    1F1B, Megatron-Core's defaults."""
    columns = {"first_layers": 0.0, "last_layers": 0.0, "recompute_modules": 1.0} | columns
    columns = {"etp": 0.0, "schedule": 0.0, "cp_comm": 0.0} | columns  # 1F1B, p2p
    arrays = np.broadcast_arrays(
        *(np.atleast_1d(np.asarray(columns[f], dtype=float)) for f in Config._fields)
    )
    return Config(*(np.ascontiguousarray(a) for a in arrays))


def _whole_ratio(a, b) -> np.ndarray:
    """a / b is a whole number (exactly, for the integer-valued floats used here)."""
    return np.mod(a, b) == 0


# What each recompute module needs the model to have (the others apply to every model)
MODULE_NEEDS = {
    "mla_up_proj": "multi-head latent attention",
    "moe": "routed experts",
    "moe_act": "routed experts",
    "shared_experts": "shared experts",
    "mlp": "a dense MLP layer",
}


def _lacks(s: Shapes) -> dict:
    """Per module of MODULE_NEEDS: whether the model (each row of `s`) lacks its part."""
    no_moe = np.asarray(s.moe_layers) == 0
    return {
        "mla_up_proj": ~np.asarray(s.mla, dtype=bool),
        "moe": no_moe,
        "moe_act": no_moe,
        "shared_experts": no_moe | (np.asarray(s.shared_experts) == 0),
        "mlp": np.asarray(s.dense_layers) == 0,
    }


def missing_modules(modules: tuple[str, ...], s: Shapes) -> list[str]:
    """ "module (needs ...)" for each of `modules` whose part the model `s` lacks."""
    lacks = _lacks(s)
    return [f"{m} needs {MODULE_NEEDS[m]}" for m in modules if m in lacks and np.any(lacks[m])]


def _module_missing(c: Config, s: Shapes) -> np.ndarray:
    """A selective recompute module whose part the model lacks."""
    lacks = _lacks(s)
    return np.logical_or.reduce([c.runs_again(m) & gone for m, gone in lacks.items()])


def reason_codes(c: Config, s: Shapes, per_node=np.inf, has_network=True) -> np.ndarray:
    """Each configuration's first broken rule as an index into REASONS (0: valid); memory is
    checked later (DOES_NOT_FIT). `per_node`: devices per node; `has_network`: whether the
    accelerator has a catalogued inter-node network."""
    heads, kv, mla = np.asarray(s.heads), np.asarray(s.kv_heads), np.asarray(s.mla)
    kv_ok = mla | _whole_ratio(kv, c.tp) | _whole_ratio(c.tp, kv)
    dp, m = c.dp, c.micro_batches
    stages_ok = layout_ok(
        layers=s.layers, pp=c.stages, vp=1.0, first=c.first_layers, last=c.last_layers
    )
    chunks_ok = (
        layout_ok(layers=s.layers, pp=c.pp, vp=c.vp, first=c.first_layers, last=c.last_layers)
        | ~stages_ok
    )
    interleave_ok = (c.pp > 1) & _whole_ratio(m, c.pp) & chunks_ok
    v_ok = (c.pp > 1) & (c.vp == 1) & (m >= 2 * c.pp) & (2 * c.pp <= s.layers)
    dual_ok = (
        (c.pp > 1) & _whole_ratio(c.pp, 2) & (c.vp == 1) & _whole_ratio(m, 2) & (m >= 2 * c.pp)
    )
    seq_ok = _whole_ratio(c.seq_len, c.tp) & ((c.cp == 1) | _whole_ratio(c.seq_len, 2 * c.cp))
    experts = np.asarray(s.experts)
    ep_ok = (
        (experts > 0)
        & _whole_ratio(experts, c.ep)
        & _whole_ratio(c.tp * c.cp * dp, c.expert_tp * c.ep)
    )
    etp_ok = (experts > 0) & _whole_ratio(c.tp, c.expert_tp)
    ulysses = c.tp * c.cp  # a2a: each rank attends with heads/(tp·cp) heads of the sequence
    a2a_ok = _whole_ratio(heads, ulysses) & (mla | _whole_ratio(kv, ulysses))
    broken = [
        (c.gpus > per_node) & (not has_network),
        ~(_whole_ratio(heads, c.tp) & kv_ok),
        c.pp > s.layers,
        ~_whole_ratio(c.gpus, c.tp * c.pp * c.cp),
        ~_whole_ratio(c.global_batch, dp * c.micro_batch),
        (c.vp > 1) & ~interleave_ok,
        c.dualpipe & ~dual_ok,
        c.dualpipev & ~v_ok,
        ~seq_ok,
        c.cp_exchange("a2a") & ~a2a_ok,
        (c.etp > 0) & (c.etp != c.tp) & ~etp_ok,
        (c.ep > 1) & ~ep_ok,
        (c.zero >= 2) & (c.pp > 1),
        ~stages_ok,
        _module_missing(c, s),
    ]
    return np.select(broken, np.arange(1, len(broken) + 1), 0)
