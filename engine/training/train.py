"""`train`: one training step of a decoder LLM on a configuration of GPUs (docs/model.md,
"Training step").

The step is the kernel's (engine/training/kernel.py) for a single configuration, so it equals
the matching `train_search` row exactly. `as_dict()` is the CLI's JSON object (a contract):
the configuration, the step and its breakdown, throughput, FLOPs and utilisation, memory per
GPU, time and cost to a token budget, the assumptions and the warnings.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.report.messages import MessageKind
from engine.report.result import Result
from engine.scenarios.bind import bind
from engine.scenarios.deployment import HardwareRef, ModelRef
from engine.scenarios.training import (
    CP_COMM_TYPES,
    PP_SCHEDULES,
    RECOMPUTE,
    TrainLayout,
    TrainRun,
    modules_mask,
)
from engine.training.config import DOES_NOT_FIT, REASONS, Config, make_config, missing_modules
from engine.training.ground import ceiling_for, ceiling_messages
from engine.training.report import budget, warnings_for
from engine.training.setup import Setup, setup, step

MODEL_FLOPS_DEFINITION = MessageKind(
    "model_flops_palm",
    "PaLM (Chowdhery et al. 2022, appendix B): 6·N + 6·L·H·(d_qk + d_v)·s FLOPs per token, N "
    "the weights of the matrix products (LM head included, embeddings excluded), attention "
    "over the whole sequence; recomputation not counted (hfu and hardware_tflops_per_gpu "
    "count it, as the Megatron-LM paper's TFLOP/s do)",
)
ID_KEYS = (
    "model",
    "hardware",
    "gpus",
    "tp",
    "pp",
    "cp",
    "cp_comm_type",
    "vp",
    "pp_schedule",
    "ep",
    "etp",
    "dp",
    "micro_batch_size",
    "global_batch_size",
    "micro_batches",
    "seq_len",
    "precision",
    "fp8_recipe",
    "fp8_param_gather",
    "peak_precision",
    "recompute",
    "recompute_modules",
    "zero",
    "attention",
    "profile",
)
# Metric keys in order (SI units as named; `train_search` has the same columns).
METRIC_KEYS = (
    "step_time_s",
    "tokens_per_s",
    "tokens_per_s_per_gpu",
    "model_flops_per_token",
    "hardware_flops_per_token",
    "model_tflops_per_gpu",
    "hardware_tflops_per_gpu",
    "mfu",
    "hfu",
    "peak_flop_per_s",
    "matmul_params",
    "compute_s",
    "comm_exposed_s",
    "comm_tp_s",
    "comm_cp_s",
    "comm_ep_s",
    "comm_pp_s",
    "comm_dp_s",
    "comm_dp_total_s",
    "bubble_s",
    "bubble_fraction",
    "overhead_s",
    "optimizer_s",
    "stage_layers",
    "first_stage_layers",
    "last_stage_layers",
    "memory_per_gpu_bytes",
    "weight_bytes_per_gpu",
    "gradient_bytes_per_gpu",
    "optimizer_bytes_per_gpu",
    "activation_bytes_per_gpu",
    "usable_memory_bytes",
    "memory_headroom_bytes",
    "fits_in_memory",
)
BUDGET_KEYS = (
    "token_budget",
    "time_to_train_days",
    "gpu_hours",
    "price_per_gpu_hour_usd",
    "cost_to_train_usd",
)
# The best published 16-bit MFU of the GPU generation (NaN: none) and whether the row is above
CEILING_KEYS = ("published_mfu_ceiling", "above_published_mfu")
KEYS = (
    *ID_KEYS,
    *METRIC_KEYS,
    *CEILING_KEYS,
    "largest_memory_term",
    *BUDGET_KEYS,
    "model_flops_definition",
)


@dataclass(frozen=True, slots=True)
class TrainResult(Result):
    """One configuration's training step; `as_dict()` is the CLI's JSON object (a contract)."""


def train(
    run: TrainRun | ModelRef | None = None,
    hardware: TrainLayout | HardwareRef | None = None,
    /,
    layout: TrainLayout | None = None,
    **fields: object,
) -> TrainResult:
    """One training step of a decoder LLM on `gpus` GPUs (docs/model.md, "Training step").

    Args:
        run: a TrainRun (engine/scenarios/training.py), or the keyword form's model (a
            catalogue id, a ModelSpec with shapes, e.g. engine.model_from_config, or an
            Architecture, e.g. engine.gpt_architecture(layers=..., hidden=..., heads=...)) with
            `hardware` (an accelerator id or HardwareSpec) and the run's other fields as
            keywords: gpus (in all; dp = gpus / (tp·pp·cp) must be whole), global_batch_size and
            seq_len (B sequences of s tokens), precision (bf16, fp16 or fp8: fp8 GEMMs but the
            LM head's, everything else 16-bit) and fp8_recipe (delayed, current, blockwise or
            mxfp8: how fp8 tensors are scaled; engine/training/numerics.py), fp8_param_gather
            (the weights held and all-gathered in fp8; default False), attention (flash,
            or unfused: the score matrices in memory, as in Megatron-LM before 2022), profile
            and assumptions (a training profile, its assumptions unless given), catalog,
            token_budget and price_per_gpu_hour (USD; the catalogue's list price when None) for
            the time and cost to train, and the assumptions the training model reads by their
            user names.
        layout: a TrainLayout, or its fields as keywords: tp, pp, cp, vp, ep (tensor with
            sequence parallelism, pipeline, context, virtual stages per pipeline stage for
            interleaved 1F1B, expert parallelism for MoE), etp (the routed experts' tensor
            parallelism, folded with ep into tp·cp·dp; None: tp), micro_batch_size (b sequences),
            zero (0: gradients all-reduced, Megatron-LM's default; 1, 2 or 3: the ZeRO stage),
            recompute (none, Megatron-LM's default; selective: the attention core; full),
            recompute_modules (what selective runs again, Megatron-Core's --recompute-modules:
            core_attn, its default, moe_act, layernorm, mla_up_proj, mlp, moe,
            shared_experts), first_stage_layers, last_stage_layers (the end stages'
            layers; None: balanced, the end stages one short first when pp does not divide
            the layers) and pp_schedule (1f1b, Megatron-LM's; dualpipe, DeepSeek's: an even
            pp, vp 1, an even number of micro-batches at least 2·pp; dualpipev, its V of 2·pp
            stages: vp 1, at least 2·pp micro-batches) and cp_comm_type (how cp > 1 exchanges
            keys and values, Megatron-Core's --cp-comm-type: p2p, the ring, its default;
            allgather; a2a, DeepSpeed-Ulysses: heads and KV heads divisible by tp·cp).
            None: every degree 1, ZeRO 0, no recomputation.

    Raises:
        ValueError: a bad argument, or a configuration that breaks a rule (the message says
            which); a configuration that does not fit is returned with fits_in_memory False.
    """
    run, layout = bind((run, hardware), {"layout": layout, **fields}, TrainRun, TrainLayout)
    if run is None:
        raise ValueError("TrainRun: give model, hardware, gpus, global_batch_size, seq_len")
    run.needs("gpus", "global_batch_size")
    gpus = run.one_cluster()
    layout = layout or TrainLayout()
    st = setup(run)
    selective = layout.recompute == "selective"
    missing = missing_modules(layout.recompute_modules, st.s) if selective else []
    if missing:
        raise ValueError(f"recompute_modules: {'; '.join(missing)}, which {st.name} lacks")
    cfg = config(run=run, layout=layout, gpus=gpus)
    t = {k: v[0] for k, v in step(st=st, cfg=cfg).items()}
    code = int(t["reason_code"])
    if code and code != DOES_NOT_FIT:
        echo = _echo(run=run, layout=layout, gpus=gpus)
        raise ValueError(f"{st.name} on {gpus:,} {st.hw.id}: {REASONS[code]()} ({echo})")
    return _result(st=st, run=run, layout=layout, t=t, gpus=gpus)


def config(run: TrainRun, layout: TrainLayout, gpus: int) -> Config:
    """The kernel's configuration of one layout of `run` on `gpus` GPUs."""
    return make_config(
        gpus=gpus,
        tp=layout.tp,
        pp=layout.pp,
        cp=layout.cp,
        vp=layout.vp,
        ep=layout.ep,
        etp=layout.etp or 0,
        micro_batch=layout.micro_batch_size,
        global_batch=run.global_batch_size,
        seq_len=run.seq_len,
        zero=layout.zero,
        recompute=RECOMPUTE.index(layout.recompute),
        recompute_modules=modules_mask(layout.recompute_modules),
        first_layers=layout.first_stage_layers or 0,
        last_layers=layout.last_stage_layers or 0,
        schedule=PP_SCHEDULES.index(layout.pp_schedule),
        cp_comm=CP_COMM_TYPES.index(layout.cp_comm_type),
    )


def modules_text(layout: TrainLayout) -> str | None:
    """The selective recomputation's modules as one comma-separated string (None: not
    selective), as the CLI's JSON and CSV and the search's column give them."""
    return ",".join(layout.recompute_modules) if layout.recompute == "selective" else None


def _echo(run: TrainRun, layout: TrainLayout, gpus: int) -> str:
    counts = {
        "gpus": gpus,
        "tp": layout.tp,
        "pp": layout.pp,
        "cp": layout.cp,
        "vp": layout.vp,
        "ep": layout.ep,
        "etp": layout.etp,
        "micro_batch_size": layout.micro_batch_size,
        "first_stage_layers": layout.first_stage_layers,
        "last_stage_layers": layout.last_stage_layers,
        "global_batch_size": run.global_batch_size,
        "seq_len": run.seq_len,
    }
    text = ", ".join(f"{k} {v:,}" for k, v in counts.items() if v is not None)
    words = {"pp_schedule": (layout.pp_schedule, "1f1b")}
    words["cp_comm_type"] = (layout.cp_comm_type, "p2p")
    return text + "".join(f", {k} {v}" for k, (v, default) in words.items() if v != default)


def _result(st: Setup, run: TrainRun, layout: TrainLayout, t: dict, gpus: int) -> TrainResult:
    """The kernel's terms as a TrainResult: ids, metrics, budget, definition."""
    ids = (
        st.name,
        st.hw.id,
        gpus,
        layout.tp,
        layout.pp,
        layout.cp,
        layout.cp_comm_type,
        layout.vp,
        layout.pp_schedule,
        layout.ep,
        layout.etp or layout.tp,
        round(t["dp"]),
        layout.micro_batch_size,
        run.global_batch_size,
        round(t["micro_batches"]),
        run.seq_len,
        st.precision,
        st.fp8_recipe,
        st.fp8_param_gather,
        st.peak_precision,
        layout.recompute,
        modules_text(layout),
        layout.zero,
        run.attention,
        st.profile,
    )
    values = dict(zip(ID_KEYS, ids, strict=True))
    for key in METRIC_KEYS:
        values[key] = float(t[key]) if key != "fits_in_memory" else bool(t[key])
    for key in ("stage_layers", "first_stage_layers", "last_stage_layers"):
        values[key] = int(values[key])
    terms = {
        k: values[f"{k}_bytes_per_gpu"] for k in ("weight", "gradient", "optimizer", "activation")
    }
    ceiling = ceiling_for(st.hw.id, st.precision)[0]
    values["published_mfu_ceiling"] = None if ceiling is None else ceiling.mfu
    values["above_published_mfu"] = ceiling is not None and values["mfu"] > ceiling.mfu
    values["largest_memory_term"] = max(terms, key=terms.get)
    values |= budget(
        values=values, hw=st.hw, token_budget=run.token_budget, price=run.price_per_gpu_hour
    )
    values["model_flops_definition"] = MODEL_FLOPS_DEFINITION()
    warnings = ceiling_messages(st.hw.id, st.precision, values["mfu"]) + warnings_for(st, values)
    return TrainResult(values, dict(st.echo), tuple(warnings))
