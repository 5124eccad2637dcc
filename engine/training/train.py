"""`train`: one training step of a decoder LLM on a configuration of GPUs (docs/model.md,
"Training step").

The step is the kernel's (engine/training/kernel.py) for a single configuration, so it equals
the matching `train_search` row exactly. `as_dict()` is the CLI's JSON object (a contract):
the configuration, the step and its breakdown, throughput, FLOPs and utilisation, memory per
GPU, time and cost to a token budget, the assumptions and the warnings.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.assumptions import Assumptions
from engine.report.messages import N_
from engine.report.result import Result
from engine.training.config import DOES_NOT_FIT, REASONS, RECOMPUTE, make_config
from engine.training.kernel import evaluate
from engine.training.report import budget, warnings_for
from engine.training.setup import (
    Setup,
    check_attention,
    check_count,
    check_recompute,
    check_zero,
    setup,
)

MODEL_FLOPS_DEFINITION = N_(
    "PaLM (Chowdhery et al. 2022, appendix B): 6·N + 6·L·H·(d_qk + d_v)·s FLOPs per token, N "
    "the weights of the matrix products (LM head included, embeddings excluded), attention "
    "over the whole sequence; recomputation not counted (hfu and hardware_tflops_per_gpu "
    "count it, as the Megatron-LM paper's TFLOP/s do)"
)
ID_KEYS = ("model", "hardware", "gpus", "tp", "pp", "cp", "vp", "ep", "dp",
           "micro_batch_size", "global_batch_size", "micro_batches", "seq_len", "precision",
           "peak_precision", "recompute", "zero", "attention", "profile")  # fmt: skip
# Metric keys in order (SI units as named; `train_search` has the same columns).
METRIC_KEYS = (
    "step_time_s", "tokens_per_s", "tokens_per_s_per_gpu", "model_flops_per_token",
    "hardware_flops_per_token", "model_tflops_per_gpu", "hardware_tflops_per_gpu", "mfu",
    "hfu", "peak_flop_per_s", "matmul_params", "compute_s", "comm_exposed_s", "comm_tp_s",
    "comm_cp_s", "comm_ep_s", "comm_pp_s", "comm_dp_s", "comm_dp_total_s", "bubble_s",
    "bubble_fraction", "overhead_s", "optimizer_s", "stage_layers", "memory_per_gpu_bytes",
    "weight_bytes_per_gpu", "gradient_bytes_per_gpu", "optimizer_bytes_per_gpu",
    "activation_bytes_per_gpu", "usable_memory_bytes", "memory_headroom_bytes",
    "fits_in_memory",
)  # fmt: skip
BUDGET_KEYS = ("token_budget", "time_to_train_days", "gpu_hours", "price_per_gpu_hour_usd",
               "cost_to_train_usd")  # fmt: skip
KEYS = (*ID_KEYS, *METRIC_KEYS, "largest_memory_term", *BUDGET_KEYS, "model_flops_definition")


@dataclass(frozen=True, slots=True)
class TrainResult(Result):
    """One configuration's training step; `as_dict()` is the CLI's JSON object (a contract)."""


def train(
    model,
    hardware,
    *,
    gpus: int,
    tp: int = 1,
    pp: int = 1,
    cp: int = 1,
    vp: int = 1,
    ep: int = 1,
    micro_batch_size: int = 1,
    global_batch_size: int,
    seq_len: int,
    precision: str = "bf16",
    recompute: str = "none",
    zero: int = 0,
    attention: str = "flash",
    profile: str = "megatron",
    token_budget: float = 1e12,
    price_per_gpu_hour: float | None = None,
    assumptions: Assumptions | None = None,
    catalog=None,
    **overrides: object,
) -> TrainResult:
    """One training step of a decoder LLM on `gpus` GPUs (docs/model.md, "Training step").

    Args:
        model: a catalogue id, a ModelSpec with shapes (engine.model_from_config) or an
            Architecture (e.g. engine.gpt_architecture(layers=..., hidden=..., heads=...)).
        hardware: an accelerator id or HardwareSpec.
        gpus: GPUs in all; dp = gpus / (tp·pp·cp) must be whole.
        tp, pp, cp, vp, ep: tensor (with sequence parallelism), pipeline, context, virtual
            stages per pipeline stage (interleaved 1F1B), expert parallelism (MoE).
        micro_batch_size, global_batch_size, seq_len: b and B sequences of s tokens.
        precision: bf16, fp16 or fp8 (fp8 GEMMs, everything else 16-bit).
        recompute: none (Megatron-LM's default), selective (the attention core) or full.
        zero: 0 (gradients all-reduced; Megatron-LM's default), 1, 2 or 3 (ZeRO stage).
        attention: flash (FlashAttention) or unfused (the score matrices in memory, as in
            Megatron-LM before 2022).
        profile, assumptions: a training profile (its assumptions unless given).
        token_budget, price_per_gpu_hour: the tokens to train on and the price per GPU-hour
            (default: the catalogue's list price), for the time and cost to train.
        **overrides: assumptions the training model reads, by their user names.

    Raises:
        ValueError: a bad argument, or a configuration that breaks a rule (the message says
            which); a configuration that does not fit is returned with fits_in_memory False.
    """
    st = setup(model, hardware, precision=precision, profile=profile, assumptions=assumptions,
               catalog=catalog, overrides=overrides)  # fmt: skip
    counts = {"gpus": gpus, "tp": tp, "pp": pp, "cp": cp, "vp": vp, "ep": ep,
              "micro_batch_size": micro_batch_size, "global_batch_size": global_batch_size,
              "seq_len": seq_len}  # fmt: skip
    n = {k: check_count(v, k) for k, v in counts.items()}
    r, z, kernel = check_recompute(recompute), check_zero(zero), check_attention(attention)
    cfg = make_config(gpus=n["gpus"], tp=n["tp"], pp=n["pp"], cp=n["cp"], vp=n["vp"],
                      ep=n["ep"], micro_batch=n["micro_batch_size"],
                      global_batch=n["global_batch_size"], seq_len=n["seq_len"], zero=z,
                      recompute=r)  # fmt: skip
    t = {k: v[0] for k, v in evaluate(st.s, cfg, st.dev, st.links, st.eta, st.assumptions,
                                      st.weight_bytes, kernel == "unfused").items()}  # fmt: skip
    code = int(t["reason_code"])
    if code and code != DOES_NOT_FIT:
        raise ValueError(f"{st.name} on {n['gpus']:,} {st.hw.id}: {REASONS[code]} ({_echo(n)})")
    return _result(st, n, (RECOMPUTE[r], z, kernel), t, token_budget, price_per_gpu_hour)


def _echo(n: dict) -> str:
    return ", ".join(f"{k} {v:,}" for k, v in n.items())


def _result(st: Setup, n: dict, modes: tuple, t: dict, token_budget, price) -> TrainResult:
    """The kernel's terms as a TrainResult: ids, metrics, budget, definition."""
    ids = (st.name, st.hw.id, n["gpus"], n["tp"], n["pp"], n["cp"], n["vp"], n["ep"],
           round(t["dp"]), n["micro_batch_size"], n["global_batch_size"],
           round(t["micro_batches"]), n["seq_len"], st.precision, st.peak_precision,
           *modes, st.profile)  # fmt: skip
    values = dict(zip(ID_KEYS, ids, strict=True))
    for key in METRIC_KEYS:
        values[key] = float(t[key]) if key != "fits_in_memory" else bool(t[key])
    values["stage_layers"] = int(values["stage_layers"])
    terms = {k: values[f"{k}_bytes_per_gpu"] for k in ("weight", "gradient", "optimizer",
                                                      "activation")}  # fmt: skip
    values["largest_memory_term"] = max(terms, key=terms.get)
    values |= budget(values, st.hw, token_budget, price)
    values["model_flops_definition"] = MODEL_FLOPS_DEFINITION
    warnings = warnings_for(st, values)
    return TrainResult(values, dict(st.echo), tuple(warnings))
