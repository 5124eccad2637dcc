"""The training planner's main-area sections (Streamlit glue over ui/train/view.py and
ui/train/figures.py and ui.charts' operator roofline): the verdict, the cards, the charts and
the tables with their CSV downloads."""

from __future__ import annotations

import streamlit as st

from ui.charts import operators as fo
from ui.core.downloads import download_csv
from ui.core.format import fmt
from ui.core.text import plain
from ui.train import figures as tf
from ui.train import view as tv

ROW = 4
PNG = {"toImageButtonOptions": {"format": "png"}}


def verdict(r: dict, fits: bool, rank: tuple[int, int], gpus: int) -> None:
    """Which configuration is shown, and, when none fits, why the closest does not."""
    config = plain(tf.config_text(r))
    if fits:
        st.success(
            f"Shown in detail, ranked {rank[0]:,} of the {rank[1]:,} that fit: {config}.", icon="✅"
        )
        return
    why = next((w for w in r["warnings"] if w.startswith("does not fit")), "does not fit")
    st.error(
        f"No configuration fits on {gpus:,} GPUs. The closest, {config}, {plain(why)}. Add GPUs, "
        "model parallelism (tp, pp), ZeRO stages or recomputation.",
        icon="🚫",
    )


def cards(items: list[tuple[str, str, str]]) -> None:
    for start in range(0, len(items), ROW):
        for col, (label, value, tip) in zip(
            st.columns(ROW), items[start : start + ROW], strict=False
        ):
            col.metric(label, value, help=tip)


def breakdowns(r: dict, fits: bool, capacity: float) -> None:
    """The step time (only for a configuration that fits) and the memory per GPU."""
    if fits:
        st.plotly_chart(tf.step_figure(r), key="train_step", config=PNG)
    else:
        st.caption("No step time is drawn for a configuration that does not fit.")
    st.plotly_chart(tf.memory_figure(r, capacity), key="train_memory", config=PNG)


def roofline(ops, r: dict, hw_name: str) -> None:
    title = (
        f"Roofline of a training micro-batch's operators: {hw_name}, {r['precision']}, tp "
        f"{r['tp']}, micro-batch {r['micro_batch_size']} × {r['seq_len']:,} tokens"
    )
    fig = fo.operator_roofline(ops, fo.roof_values(ops, hw_name), title)
    st.plotly_chart(fig, key="train_roofline", config=PNG)
    st.caption(
        "Each operator of one micro-batch on one GPU, forward (▶) and backward (◀) passes, at "
        "its own intensity and achieved FLOP/s (engine.training_operators): the backward pass "
        "is two GEMMs of the forward's size, attention the profile's backward factor."
    )


def scaling(best, curve: list[int], band) -> None:
    missing = sorted(set(curve) - set(best["gpus"].astype(int)))
    if len(best):
        for col, column in zip(st.columns(2), ("tokens_per_s", "mfu"), strict=True):
            fig = tf.scaling_figure(best, column, band)
            col.plotly_chart(fig, key=f"train_scaling_{column}", config=PNG)
    if missing:
        counts = ", ".join(f"{g:,}" for g in missing)
        st.caption(
            f"No configuration fits (or divides the global batch) at {counts} GPUs: "
            "left off the curves."
        )


def tables(df, best, ops, profile, show_rejected: bool, names: tuple) -> None:
    """The ranked configurations, the rejected ones on request, the curves' and the operators'
    rows, each with its CSV (the engine's columns, the profile's errors on every row)."""
    s, model_id, hw_id = names
    ranked = df[df["reason"] == ""]
    if not len(ranked):
        show_rejected = True  # the reasons are the answer
    st.subheader("Configurations that fit, best first")
    st.dataframe(tv.table(ranked, tv.RANKED, tv.SHOWN_ROWS), key="train_table", hide_index=True)
    st.caption(
        f"The first {min(len(ranked), tv.SHOWN_ROWS):,} of {len(ranked):,}; the CSV has every one."
    )
    download_csv(
        tv.with_errors(ranked, profile),
        tv.file_name("ranked", s, model_id, hw_id),
        "train_csv",
        "Download the ranked configurations CSV",
        lazy=True,
    )
    rejected = df[df["reason"] != ""]
    if show_rejected and len(rejected):
        st.subheader("Rejected configurations, with the rule each breaks")
        shown = tv.table(rejected, tv.REJECTED, tv.SHOWN_ROWS)
        st.dataframe(shown, key="train_rejected_table", hide_index=True)
        download_csv(
            tv.with_errors(rejected, profile),
            tv.file_name("rejected", s, model_id, hw_id),
            "train_rejected_csv",
            "Download the rejected configurations CSV",
            lazy=True,
        )
    if len(best):
        st.subheader("Scaling: the best configuration per GPU count")
        st.dataframe(tv.table(best, tv.SCALING), key="train_scaling_table", hide_index=True)
        download_csv(
            tv.with_errors(best, profile),
            tv.file_name("scaling", s, model_id, hw_id),
            "train_scaling_csv",
            "Download the scaling CSV",
            lazy=True,
        )
    if ops is not None:
        st.subheader("Operators of a micro-batch")
        st.dataframe(tv.table(ops, tv.OPERATORS), key="train_ops_table", hide_index=True)
        download_csv(
            tv.with_errors(ops, profile),
            tv.file_name("operators", s, model_id, hw_id),
            "train_ops_csv",
            "Download the operators CSV",
            lazy=True,
        )


def budget_words(r: dict) -> str:
    """Time and cost to the token budget in one sentence."""
    cost = r["cost_to_train_usd"]
    priced = f" and cost {fmt(cost)} USD at {fmt(r['price_per_gpu_hour_usd'])} USD per GPU-hour"
    return (
        f"{fmt(r['token_budget'])} tokens take {fmt(r['time_to_train_days'] * 86_400, 's')} "
        f"({fmt(r['gpu_hours'])} GPU-hours)"
        + (priced if cost is not None else " (no price: set one for the cost)")
        + "."
    )
