"""`train_search`: every parallel configuration of a model on a number of GPUs, ranked.

The candidates are the cartesian product of tp, pp, cp, vp, ep, micro-batch, ZeRO stage and
recomputation (defaults below), for one or several GPU counts, a global batch and a sequence
length. They are evaluated together by the training kernel on numpy arrays (no Python loop
over configurations), so each row equals `train` of its configuration exactly. The ranked rows
are those that are valid and fit in memory, best first by tokens/s, MFU or cost to the token
budget; with `include_rejected` the others follow, each with the rule it breaks (`reason`): a
layout that breaks a rule (dp not whole, ...) has no step, throughput or MFU (NaN), one that
only does not fit keeps them. Layouts that are the same configuration (every ZeRO stage when
one rank holds each weight) appear once.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from engine.report.messages import Message
from engine.scenarios.bind import bind
from engine.scenarios.deployment import HardwareRef, ModelRef
from engine.scenarios.training import (
    CP_COMM_TYPES,
    LAYOUT_COUNTS,
    PP_SCHEDULES,
    RECOMPUTE,
    ZERO_STAGES,
    LayoutSpace,
    TrainRun,
    modules_mask,
)
from engine.training.config import DOES_NOT_FIT, REASONS, Config, make_config
from engine.training.ground import ceiling_for
from engine.training.report import budget
from engine.training.setup import Setup, setup, step
from engine.training.train import (
    BUDGET_KEYS,
    ID_KEYS,
    KEYS,
    METRIC_KEYS,
    MODEL_FLOPS_DEFINITION,
)

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
    divisors = sorted(
        {d for g in gpus for d in range(1, min(g, st.arch.layers, 128) + 1) if g % d == 0}
    )
    experts = st.arch.experts
    return {
        "tp": _powers(min(most, st.hw.devices_per_node)),
        "pp": divisors,
        "cp": [1, 2, 4, 8],
        "vp": [1, 2, 3, 4],
        "ep": [e for e in _powers(experts) if experts % e == 0] if experts else [1],
        "micro_batch_size": _powers(min(16, global_batch)),
    }


def train_search(
    run: TrainRun | ModelRef | None = None,
    hardware: LayoutSpace | HardwareRef | None = None,
    /,
    space: LayoutSpace | None = None,
    rank_by: str = "tokens_per_s",
    include_rejected: bool = False,
    **fields: object,
) -> pd.DataFrame:
    """Every layout of a run on `gpus` GPUs (one count or several), ranked.

    Args:
        run: a TrainRun, or the keyword form's model with `hardware` and the run's other
            fields as keywords, as `train` takes them; `gpus` a GPU count or several.
        space: a LayoutSpace, or its fields as keywords: tp, pp, cp, vp, ep,
            micro_batch_size, zero, recompute, each the values to try (a value or a list);
            None: `default_candidates`, every ZeRO stage, every recomputation mode; and
            recompute_modules, what the selective layouts run again (default core_attn); etp,
            the experts' tensor parallelism to try (None: each layout's tp); pp_schedule, the
            pipeline schedules to try (default 1f1b only; dualpipe, dualpipev when named);
            cp_comm_type, the context-parallel exchanges to try (default p2p only).
        rank_by: tokens_per_s (highest first), mfu, or cost (cost_to_train_usd, lowest first;
            needs a price).
        include_rejected: also return the rejected configurations after the ranked ones.

    Returns:
        One row per configuration: `train`'s keys (assumptions and warnings aside) and
        `reason`, the rule a rejected one breaks (a Message; missing for the ranked rows).
    """
    import pandas as pd

    run, space = bind((run, hardware), {"space": space, **fields}, TrainRun, LayoutSpace)
    if run is None:
        raise ValueError("TrainRun: give model, hardware, gpus, global_batch_size, seq_len")
    run.needs("gpus", "global_batch_size")
    if rank_by not in RANKS:
        raise ValueError(f"rank_by must be one of {', '.join(RANKS)}, got {rank_by!r}"[:200])
    st = setup(run)
    cfg = _candidates(st=st, run=run, space=space or LayoutSpace())
    t = step(st=st, cfg=cfg)
    space = space or LayoutSpace()
    modules = ",".join(space.recompute_modules)
    df = pd.DataFrame(_columns(st=st, run=run, cfg=cfg, t=t, modules=modules))
    return _ranked(df, rank_by, include_rejected)


def _candidates(st: Setup, run: TrainRun, space: LayoutSpace) -> Config:
    """Every combination of the run's GPU counts and the space's values (its defaults where
    None), refused above MAX_CONFIGS."""
    defaults = default_candidates(st, list(run.gpu_counts), run.global_batch_size)
    axes = {"gpus": run.gpu_counts}
    for name in LAYOUT_COUNTS:
        given = getattr(space, name)
        axes[name] = defaults[name] if given is None else given
    axes["etp"] = (0,) if space.etp is None else space.etp  # 0: each layout's tp
    axes["schedule"] = [PP_SCHEDULES.index(p) for p in space.pp_schedule]
    axes["cp_comm"] = [CP_COMM_TYPES.index(k) for k in space.cp_comm_type]
    axes["zero"] = ZERO_STAGES if space.zero is None else space.zero
    modes = RECOMPUTE if space.recompute is None else space.recompute
    axes["recompute"] = [RECOMPUTE.index(m) for m in modes]
    size = math.prod(len(v) for v in axes.values())
    if size > MAX_CONFIGS:
        raise ValueError(
            f"{size:,} configurations: at most {MAX_CONFIGS:,} per search "
            "(give fewer values per dimension)"
        )
    mesh = np.meshgrid(*(np.asarray(v, dtype=float) for v in axes.values()), indexing="ij")
    col = {name: m.ravel() for name, m in zip(axes, mesh, strict=True)}
    return make_config(
        gpus=col["gpus"],
        tp=col["tp"],
        pp=col["pp"],
        cp=col["cp"],
        vp=col["vp"],
        ep=col["ep"],
        etp=col["etp"],
        schedule=col["schedule"],
        cp_comm=col["cp_comm"],
        micro_batch=col["micro_batch_size"],
        global_batch=run.global_batch_size,
        seq_len=run.seq_len,
        zero=col["zero"],
        recompute=col["recompute"],
        recompute_modules=modules_mask(space.recompute_modules),
    )


def _columns(st: Setup, run: TrainRun, cfg: Config, t: dict, modules: str) -> dict:
    """The frame's columns, in `train`'s key order, from the kernel's arrays."""
    import pandas as pd

    n = len(cfg.tp)
    ids = {
        "model": st.name,
        "hardware": st.hw.id,
        "gpus": cfg.gpus,
        "tp": cfg.tp,
        "pp": cfg.pp,
        "cp": cfg.cp,
        "cp_comm_type": pd.Categorical.from_codes(cfg.cp_comm.astype(int), CP_COMM_TYPES),
        "vp": cfg.vp,
        "pp_schedule": pd.Categorical.from_codes(cfg.schedule.astype(int), PP_SCHEDULES),
        "ep": cfg.ep,
        "etp": cfg.expert_tp,
        "dp": t["dp"],
        "micro_batch_size": cfg.micro_batch,
        "global_batch_size": cfg.global_batch,
        "micro_batches": t["micro_batches"],
        "seq_len": cfg.seq_len,
        "precision": st.precision,
        "fp8_recipe": st.fp8_recipe,
        "fp8_param_gather": st.fp8_param_gather,
        "peak_precision": st.peak_precision,
        "recompute": pd.Categorical.from_codes(cfg.recompute.astype(int), RECOMPUTE),
        "recompute_modules": pd.Categorical.from_codes(
            np.where(cfg.recompute == 1, 0, -1).astype(np.int8), [modules]
        ),
        "zero": cfg.zero.astype(int),
        "attention": run.attention,
        "profile": st.profile,
    }
    out = {k: ids[k] for k in ID_KEYS}
    valid = t["reason_code"] == 0
    for key in (
        "gpus",
        "tp",
        "pp",
        "cp",
        "vp",
        "ep",
        "etp",
        "micro_batch_size",
        "global_batch_size",
        "seq_len",
    ):
        out[key] = out[key].astype(np.int64)
    for key in ("dp", "micro_batches"):  # whole for the valid rows
        out[key] = np.where(valid, np.round(out[key]), out[key])
    out |= {k: t[k] for k in METRIC_KEYS}
    for key in ("stage_layers", "first_stage_layers", "last_stage_layers"):
        out[key] = t[key].astype(np.int64)
    terms = np.stack([t[f"{k}_bytes_per_gpu"] for k in MEMORY_TERMS])
    out["largest_memory_term"] = pd.Categorical.from_codes(np.argmax(terms, axis=0), MEMORY_TERMS)
    out |= budget(values=out, hw=st.hw, token_budget=run.token_budget, price=run.price_per_gpu_hour)
    out["model_flops_definition"] = MODEL_FLOPS_DEFINITION()
    rules = [kind() for kind in REASONS[1:]]  # reason code 0 (valid): no reason, code -1
    out["reason"] = pd.Categorical.from_codes(t["reason_code"].astype(int) - 1, rules)
    broken = (t["reason_code"] != 0) & (t["reason_code"] != DOES_NOT_FIT)
    for key in (*METRIC_KEYS, *BUDGET_KEYS):  # an impossible layout has no step, no MFU
        if key in out and np.ndim(out[key]) and out[key].dtype.kind == "f":
            out[key] = np.where(broken, np.nan, out[key])
    out["fits_in_memory"] = np.where(broken, False, out["fits_in_memory"])
    ceiling = ceiling_for(st.hw.id, st.precision)[0]
    out["published_mfu_ceiling"] = np.nan if ceiling is None else ceiling.mfu
    out["above_published_mfu"] = (
        np.zeros(n, dtype=bool) if ceiling is None else np.nan_to_num(out["mfu"]) > ceiling.mfu
    )
    order = [*KEYS, *(k for k in out if k not in KEYS)]  # train's key order, reason last
    return {k: _column(out[k], n) for k in order}


def _column(value, n: int):
    """A constant as a column: text or a Message as a one-category categorical (no object
    per row)."""
    import pandas as pd

    if isinstance(value, str | Message):
        return pd.Categorical.from_codes(np.zeros(n, dtype=np.int8), [value])
    return np.full(n, np.nan if value is None else value) if np.ndim(value) == 0 else value


def _distinct(df: pd.DataFrame) -> pd.DataFrame:
    """One row per distinct layout: where the ranks holding the same weights are one (dp·cp at
    most 1), every ZeRO stage shards over one rank and is plain data parallelism, so only the
    lowest stage tried is kept; without context parallelism (cp 1) no keys or values are
    exchanged, so only the first cp_comm_type tried is."""
    layout = ["gpus", "tp", "pp", "cp", "vp", "pp_schedule", "ep", "etp", "micro_batch_size"]
    layout.append("recompute")
    alone = (df["dp"] * df["cp"]) <= 1
    exchange = np.where(df["cp"] > 1, df["cp_comm_type"].astype(str), "")
    key = df[layout].assign(zero=np.where(alone, -1, df["zero"]), cp_comm_type=exchange)
    return df[~key.duplicated(keep="first")]  # the candidates run through zero in order


def _ranked(df: pd.DataFrame, rank_by: str, include_rejected: bool) -> pd.DataFrame:
    import pandas as pd

    key = "cost_to_train_usd" if rank_by == "cost" else rank_by
    ok = df["reason"].isna()
    if rank_by == "cost" and ok.any() and df.loc[ok, key].isna().all():
        raise ValueError(
            "rank_by cost needs a price: the catalogue lists none for this "
            "accelerator; give price_per_gpu_hour"
        )
    df = _distinct(df)
    ok = df["reason"].isna()
    ranked = df[ok].sort_values(key, ascending=RANKS[rank_by], kind="stable")
    if not include_rejected:  # every row valid: dp and m are whole
        ranked = ranked.astype({"dp": np.int64, "micro_batches": np.int64})
    if include_rejected:
        ranked = pd.concat([ranked, df[~ok].sort_values("reason", kind="stable")])
    return ranked.reset_index(drop=True)
