"""`train_search`: every parallel configuration of a model on a number of GPUs, ranked.

The candidates are the cartesian product of tp, pp, cp, vp, ep, micro-batch, ZeRO stage and
recomputation (defaults below), for one or several GPU counts, a global batch and a sequence
length. They are evaluated together by the training kernel on numpy arrays (no Python loop
over configurations), so each row equals `train` of its configuration exactly. The ranked rows
are those that are valid and fit in memory, best first by tokens/s, MFU or cost to the token
budget; with `include_rejected` the others follow, each with the rule it breaks (`reason`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from engine.checks import as_list
from engine.training.config import REASONS, RECOMPUTE, ZERO_STAGES, make_config
from engine.training.kernel import evaluate
from engine.training.report import budget
from engine.training.setup import (
    check_attention,
    check_count,
    check_recompute,
    check_zero,
    setup,
)
from engine.training.train import ID_KEYS, METRIC_KEYS, MODEL_FLOPS_DEFINITION

if TYPE_CHECKING:
    import pandas as pd

MAX_CONFIGS = 2_000_000  # candidates per search (about 1 GB of columns at most)
RANKS = {"tokens_per_s": False, "mfu": False, "cost": True}  # key -> ascending
MEMORY_TERMS = ("weight", "gradient", "optimizer", "activation")


def _powers(limit: int) -> list[int]:
    return [2**i for i in range(int(np.log2(max(limit, 1))) + 1)]


def default_candidates(st, gpus: list[int], global_batch: int) -> dict[str, list[int]]:
    """The values tried when a dimension is not given: tp powers of two within a node, pp the
    divisors of the GPU counts up to the layers (at most 128), cp 1-8, vp 1-4, ep the powers of
    two dividing the experts (MoE; else 1), micro-batches 1-16 (up to the global batch)."""
    most = max(gpus)
    divisors = sorted({d for g in gpus for d in range(1, min(g, st.arch.layers, 128) + 1)
                       if g % d == 0})  # fmt: skip
    experts = st.arch.experts
    return {
        "tp": _powers(min(most, st.hw.devices_per_node)),
        "pp": divisors,
        "cp": [1, 2, 4, 8],
        "vp": [1, 2, 3, 4],
        "ep": [e for e in _powers(experts) if experts % e == 0] if experts else [1],
        "micro_batch_size": _powers(min(16, global_batch)),
    }


def _values(given, name: str, default: list[int]) -> list[int]:
    if given is None:
        return default
    return sorted({check_count(v, name) for v in as_list(given, name)})


def train_search(
    model,
    hardware,
    *,
    gpus,
    global_batch_size: int,
    seq_len: int,
    precision: str = "bf16",
    tp=None,
    pp=None,
    cp=None,
    vp=None,
    ep=None,
    micro_batch_size=None,
    zero=None,
    recompute=None,
    attention: str = "flash",
    rank_by: str = "tokens_per_s",
    include_rejected: bool = False,
    token_budget: float = 1e12,
    price_per_gpu_hour: float | None = None,
    profile: str = "megatron",
    assumptions=None,
    catalog=None,
    **overrides: object,
) -> pd.DataFrame:
    """Every configuration of `model` on `gpus` GPUs (one count or several), ranked.

    Args:
        gpus: a GPU count or a list of them.
        tp, pp, cp, vp, ep, micro_batch_size, zero, recompute: the values to try (a value or
            a list); None: `default_candidates`, every ZeRO stage, every recomputation mode.
        rank_by: tokens_per_s (highest first), mfu, or cost (cost_to_train_usd, lowest first;
            needs a price).
        include_rejected: also return the rejected configurations after the ranked ones.
        Others: as for `train`.

    Returns:
        One row per configuration: `train`'s keys (assumptions and warnings aside) and
        `reason` ("" for the ranked rows).
    """
    import pandas as pd

    st = setup(model, hardware, precision=precision, profile=profile, assumptions=assumptions,
               catalog=catalog, overrides=overrides)  # fmt: skip
    if rank_by not in RANKS:
        raise ValueError(f"rank_by must be one of {', '.join(RANKS)}, got {rank_by!r}"[:200])
    counts = [check_count(g, "gpus") for g in as_list(gpus, "gpus")]
    gb, seq = check_count(global_batch_size, "global_batch_size"), check_count(seq_len, "seq_len")
    kernel = check_attention(attention)
    axes = _axes(st, counts, gb, locals())
    size = int(np.prod([len(v) for v in axes.values()]))
    if size > MAX_CONFIGS:
        raise ValueError(f"{size:,} configurations: at most {MAX_CONFIGS:,} per search "
                         "(give fewer values per dimension)")  # fmt: skip
    mesh = np.meshgrid(*(np.asarray(v, dtype=float) for v in axes.values()), indexing="ij")
    col = {name: m.ravel() for name, m in zip(axes, mesh, strict=True)}
    cfg = make_config(gpus=col["gpus"], tp=col["tp"], pp=col["pp"], cp=col["cp"], vp=col["vp"],
                      ep=col["ep"], micro_batch=col["micro_batch_size"], global_batch=gb,
                      seq_len=seq, zero=col["zero"], recompute=col["recompute"])  # fmt: skip
    t = evaluate(st.s, cfg, st.dev, st.links, st.eta, st.assumptions, st.weight_bytes,
                 kernel == "unfused")  # fmt: skip
    df = pd.DataFrame(_columns(st, cfg, t, kernel, token_budget, price_per_gpu_hour))
    return _ranked(df, rank_by, include_rejected)


def _axes(st, counts: list[int], gb: int, args: dict) -> dict[str, list]:
    defaults = default_candidates(st, counts, gb)
    axes = {"gpus": counts}
    for name in ("tp", "pp", "cp", "vp", "ep", "micro_batch_size"):
        axes[name] = _values(args[name], name, defaults[name])
    zeros = ZERO_STAGES if args["zero"] is None else as_list(args["zero"], "zero")
    modes = RECOMPUTE if args["recompute"] is None else as_list(args["recompute"], "recompute")
    axes["zero"] = sorted({check_zero(z) for z in zeros})
    axes["recompute"] = sorted({check_recompute(r) for r in modes})
    return axes


def _columns(st, cfg, t: dict, kernel: str, token_budget, price) -> dict:
    """The frame's columns, in `train`'s key order, from the kernel's arrays."""
    import pandas as pd

    n = len(cfg.tp)
    ids = {
        "model": st.name, "hardware": st.hw.id, "gpus": cfg.gpus, "tp": cfg.tp, "pp": cfg.pp,
        "cp": cfg.cp, "vp": cfg.vp, "ep": cfg.ep, "dp": t["dp"],
        "micro_batch_size": cfg.micro_batch, "global_batch_size": cfg.global_batch,
        "micro_batches": t["micro_batches"], "seq_len": cfg.seq_len, "precision": st.precision,
        "peak_precision": st.peak_precision,
        "recompute": pd.Categorical.from_codes(cfg.recompute.astype(int), RECOMPUTE),
        "zero": cfg.zero.astype(int), "attention": kernel, "profile": st.profile,
    }  # fmt: skip
    out = {k: ids[k] for k in ID_KEYS}
    valid = t["reason_code"] == 0
    for key in ("gpus", "tp", "pp", "cp", "vp", "ep", "micro_batch_size", "global_batch_size",
                "seq_len"):  # fmt: skip
        out[key] = out[key].astype(np.int64)
    for key in ("dp", "micro_batches"):  # whole for the valid rows
        out[key] = np.where(valid, np.round(out[key]), out[key])
    out |= {k: t[k] for k in METRIC_KEYS}
    out["stage_layers"] = t["stage_layers"].astype(np.int64)
    terms = np.stack([t[f"{k}_bytes_per_gpu"] for k in MEMORY_TERMS])
    out["largest_memory_term"] = pd.Categorical.from_codes(np.argmax(terms, axis=0),
                                                           MEMORY_TERMS)  # fmt: skip
    out |= budget(out, st.hw, token_budget, price)
    out["model_flops_definition"] = MODEL_FLOPS_DEFINITION
    out["reason"] = pd.Categorical.from_codes(t["reason_code"].astype(int), REASONS)
    return {k: _column(v, n) for k, v in out.items()}


def _column(value, n: int):
    """A constant as a column: text as a one-category categorical (no string per row)."""
    import pandas as pd

    if isinstance(value, str):
        return pd.Categorical.from_codes(np.zeros(n, dtype=np.int8), [value])
    return np.full(n, np.nan if value is None else value) if np.ndim(value) == 0 else value


def _ranked(df: pd.DataFrame, rank_by: str, include_rejected: bool) -> pd.DataFrame:
    import pandas as pd

    key = "cost_to_train_usd" if rank_by == "cost" else rank_by
    ok = df["reason"] == ""
    if rank_by == "cost" and ok.any() and df.loc[ok, key].isna().all():
        raise ValueError("rank_by cost needs a price: the catalogue lists none for this "
                         "accelerator; give price_per_gpu_hour")  # fmt: skip
    ranked = df[ok].sort_values(key, ascending=RANKS[rank_by], kind="stable")
    if not include_rejected:  # every row valid: dp and m are whole
        ranked = ranked.astype({"dp": np.int64, "micro_batches": np.int64})
    if include_rejected:
        ranked = pd.concat([ranked, df[~ok].sort_values("reason", kind="stable")])
    return ranked.reset_index(drop=True)
