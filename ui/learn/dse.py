"""Lesson 12's experiment, "Design-space exploration": Llama-3-70B on 8,192 H100, every global
batch × tp × pp of the chapter's grid (engine.train_search, one search per batch), constraints,
the ranking and the Pareto front of tokens/s against step time (engine.pareto_table), drawn by
ui.charts.pareto."""

from __future__ import annotations

import functools

import numpy as np
import pandas as pd
import streamlit as st

import engine
from ui.charts.pareto import Axis, pareto_figure
from ui.core.downloads import download_csv
from ui.learn.content import Outcome
from ui.learn.link import BATCHES  # offered: the chapter's × 16 ... × 1,024
from ui.links.params import Link
from ui.widgets.pickers import number_input
from ui.words.format import fmt, pct
from ui.words.i18n import _, message_text

MODEL = "Llama-3.1-70B"  # the chapter's Llama3_70B (the same shapes)
GPUS = 8192  # the chapter's Frontier_8K: 1,024 DGX H100 of 8 GPUs
SEQ_LEN = 2048
CHAPTER_BATCHES = (16, 32, 64, 128)  # the chapter's grid
TP = (1, 2, 4, 8)
PP = (1, 2, 4)
SPACE = engine.LayoutSpace(
    tp=list(TP),
    pp=list(PP),
    cp=[1],
    vp=[1],
    ep=[1],
    micro_batch_size=[1],
    zero=[1],
    recompute=["selective"],
)
OBJECTIVES = {"step_time_s": "min", "tokens_per_s": "max"}
LAYOUTS = ((8, 4), (4, 4), (8, 1), (4, 2))  # the exercise's choices (tp, pp)


@functools.lru_cache(maxsize=16)
def grid(batches: tuple[int, ...]) -> pd.DataFrame:
    """Every batch × tp × pp on 8,192 H100, rejected ones included (with their rule)."""
    frames = [
        engine.train_search(
            engine.TrainRun(
                MODEL, "H100", gpus=GPUS, global_batch_size=b, seq_len=SEQ_LEN, precision="fp16"
            ),
            SPACE,
            include_rejected=True,
        )
        for b in batches
    ]
    return pd.concat(frames, ignore_index=True)


def explored(batches: tuple[int, ...], max_step_s: float | None) -> pd.DataFrame:
    """The valid rows with `feasible` (the step limit) and `pareto`, most tokens/s first."""
    df = grid(batches)
    valid = df[df["reason"].isna()].sort_values("tokens_per_s", ascending=False, kind="stable")
    limits = {} if max_step_s is None else {"step_time_s": (None, max_step_s)}
    return engine.pareto_table(valid.reset_index(drop=True), OBJECTIVES, limits)


def layout_text(tp: int, pp: int) -> str:
    return _("tp {tp} × pp {pp}").format(tp=tp, pp=pp)


def design_space(link: Link, cat) -> Outcome:
    """Lesson 12: the grid, its constraint, the ranking and the Pareto front."""
    a, b = st.columns(2)
    batches = a.multiselect(
        _("Global batches (sequences of 2,048 tokens)"),
        BATCHES,
        key=link.key("batches"),
        format_func=lambda v: f"{v:,}",
    )
    step = number_input(link, "max_step_s", _("Longest step allowed (s)"), where=b, step=0.5)
    chosen = tuple(sorted(batches)) or (8192,)
    table = explored(chosen, float(step) if step is not None else None)
    _chart(table)
    _tables(table, chosen)
    return _outcome(table, chosen, step)


def _chart(table: pd.DataFrame) -> None:
    labels = np.array(
        [
            f"{layout_text(r.tp, r.pp)} · {_('batch')} {r.global_batch_size:,}"
            for r in table.itertuples()
        ],
        dtype=object,
    )
    figure = pareto_figure(
        Axis(title=_("Step time (s)"), values=table["step_time_s"].to_numpy(), unit="s"),
        Axis(
            title=_("Tokens/s (millions)"),
            values=table["tokens_per_s"].to_numpy() / 1e6,
            scale=1e6,
        ),
        front=table["pareto"].to_numpy(),
        feasible=table["feasible"].to_numpy(),
        labels=labels,
        names=(_("Pareto front"), _("dominated"), _("outside the limits")),
        title=_("Tokens/s against step time: {model}, {gpus} × H100").format(
            model=MODEL, gpus=f"{GPUS:,}"
        ),
    )
    st.plotly_chart(figure, key="l12")


def _tables(table: pd.DataFrame, chosen: tuple[int, ...]) -> None:
    shown = pd.DataFrame(
        {
            _("Global batch"): [f"{v:,}" for v in table["global_batch_size"]],
            _("Layout"): [layout_text(t, p) for t, p in zip(table["tp"], table["pp"], strict=True)],
            "dp": table["dp"].astype(int),
            _("Step time"): [fmt(v, "s") for v in table["step_time_s"]],
            _("Tokens/s"): [fmt(v) for v in table["tokens_per_s"]],
            "MFU": [pct(v) for v in table["mfu"]],
            _("Memory per GPU"): [fmt(v, "B") for v in table["memory_per_gpu_bytes"]],
            _("Within the limit"): [_("yes") if v else _("no") for v in table["feasible"]],
            _("On the front"): [_("yes") if v else "" for v in table["pareto"]],
        }
    )
    st.dataframe(shown, hide_index=True, key="l12_table")
    rejected = int(grid(chosen)["reason"].notna().sum())
    st.caption(
        _(
            "Ranked by tokens/s, the configurations that fit; {rejected} more break a rule "
            "(in the CSV, with the rule)."
        ).format(rejected=f"{rejected:,}")
    )
    every = grid(chosen)
    full = pd.concat([table, every[every["reason"].notna()]], ignore_index=True)
    download_csv(full, "lesson_12_design_space.csv", "learn:l12_csv")


def chapter_grid() -> pd.DataFrame:
    """The chapter's own 48 configurations (batches 16 to 128), rejected ones included."""
    return grid(CHAPTER_BATCHES)


def _outcome(table: pd.DataFrame, chosen: tuple[int, ...], step) -> Outcome:
    chapter = chapter_grid()
    valid = int(chapter["reason"].isna().sum())
    ours_grid = explored(tuple(b * 64 for b in CHAPTER_BATCHES), None)
    best = ours_grid.iloc[0]
    at_8192 = ours_grid[ours_grid["global_batch_size"] == 8192].iloc[0]
    best_pick = LAYOUTS.index((int(at_8192["tp"]), int(at_8192["pp"])))
    rule = message_text(chapter["reason"].dropna().iloc[0]) if valid < len(chapter) else ""
    ours = {
        "grid": f"{len(chapter):,}",
        "feasible": _("{valid} of {total}").format(valid=valid, total=len(chapter)),
        "efficiency": _("MFU {low} to {high}").format(
            low=pct(ours_grid["mfu"].min()), high=pct(ours_grid["mfu"].max())
        ),
        "best": _("{layout}, batch {batch}: {rate} tokens/s").format(
            layout=layout_text(int(best["tp"]), int(best["pp"])),
            batch=f"{int(best['global_batch_size']):,}",
            rate=fmt(best["tokens_per_s"]),
        ),
    }
    values = {
        "rule": rule,
        "front": f"{int(ours_grid['pareto'].sum())}",
        "valid_ours": f"{len(ours_grid)}",
    }
    query = {"model": MODEL, "hardware": "H100", "gpus": str(GPUS), "seq_len": str(SEQ_LEN)}
    query |= {"global_batch_size": str(chosen[-1]), "precision": "fp16", "tp": "1,2,4,8"}
    query |= {"pp": "1,2,4", "cp": "1", "vp": "1", "ep": "1", "micro_batch_size": "1"}
    query |= {"zero": "1", "recompute": "selective", "pareto": "step_time_s,tokens_per_s"}
    if step is not None:
        query["max_step_s"] = f"{float(step):g}"
    command = (
        f"python -m engine train-pareto --model {MODEL} --hardware H100 --gpus {GPUS} "
        f"--global-batch-size {chosen[-1]} --seq-len {SEQ_LEN} --precision fp16 --tp 1,2,4,8 "
        "--pp 1,2,4 --cp 1 --vp 1 --ep 1 --micro-batch-size 1 --zero 1 --recompute selective "
        "--objectives step_time_s:min,tokens_per_s:max --format table"
    )
    return Outcome(
        ours=ours,
        values=values,
        answers={"chapter_valid": valid, "best8192": best_pick},
        pages=[(_("Training planner"), "pages/train.py", query)],
        command=command,
    )
