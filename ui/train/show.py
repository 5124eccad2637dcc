"""The training planner's main-area sections (Streamlit glue over ui/train/view.py and
ui/train/figures.py and ui.charts' operator roofline): the verdict, the cards, the charts and
the tables with their CSV downloads."""

from __future__ import annotations

import streamlit as st

from ui.charts import operators as fo
from ui.core.downloads import download_csv
from ui.core.format import fmt
from ui.core.i18n import _
from ui.core.text import plain
from ui.train import figures as tf
from ui.train import view as tv
from ui.train.run import NO_FIT
from ui.widgets.cards import chart_row

PNG = {"toImageButtonOptions": {"format": "png"}}


def verdict(r: dict, fits: bool, rank: tuple[int, int], gpus: int) -> None:
    """Which configuration is shown, and, when none fits, why the closest does not."""
    config = plain(tf.config_text(r))
    if fits:
        st.success(
            _("Shown in detail, ranked {rank} of the {ranked} that fit: {config}.").format(
                rank=f"{rank[0]:,}", ranked=f"{rank[1]:,}", config=config
            ),
            icon="✅",
        )
        return
    why = next((w for w in r["warnings"] if w.startswith(NO_FIT)), None) or _("does not fit")
    st.error(
        _(
            "No configuration fits on {gpus} GPUs. The closest, {config}, {why}. Add GPUs, model "
            "parallelism (tp, pp), ZeRO stages or recomputation."
        ).format(gpus=f"{gpus:,}", config=config, why=plain(why)),
        icon="🚫",
    )


def breakdowns(r: dict, fits: bool, capacity: float) -> None:
    """The step time (only for a configuration that fits) and the memory per GPU."""
    if fits:
        st.plotly_chart(tf.step_figure(r), key="train_step", config=PNG)
    else:
        st.caption(_("No step time is drawn for a configuration that does not fit."))
    st.plotly_chart(tf.memory_figure(r, capacity), key="train_memory", config=PNG)


def roofline(ops, r: dict, hw_name: str) -> None:
    title = _(
        "Roofline of a training micro-batch's operators: {hardware}, {precision}, tp {tp}, "
        "micro-batch {micro_batch} × {seq_len} tokens"
    ).format(
        hardware=hw_name,
        precision=r["precision"],
        tp=r["tp"],
        micro_batch=r["micro_batch_size"],
        seq_len=f"{r['seq_len']:,}",
    )
    fig = fo.operator_roofline(ops, fo.roof_values(ops, hw_name), title)
    st.plotly_chart(fig, key="train_roofline", config=PNG)
    st.caption(
        _(
            "Each operator of one micro-batch on one GPU, forward (▶) and backward (◀) passes, "
            "at its own intensity and achieved FLOP/s (engine.training_operators): the backward "
            "pass is two GEMMs of the forward's size, attention the profile's backward factor."
        )
    )


def scaling(best, curve: list[int], band) -> None:
    missing = sorted(set(curve) - set(best["gpus"].astype(int)))
    if len(best):
        for col, column in zip(chart_row(2), ("tokens_per_s", "mfu"), strict=True):
            fig = tf.scaling_figure(best, column, band)
            col.plotly_chart(fig, key=f"train_scaling_{column}", config=PNG)
    if missing:
        counts = ", ".join(f"{g:,}" for g in missing)
        st.caption(
            _(
                "No configuration fits (or divides the global batch) at {counts} GPUs: left off "
                "the curves."
            ).format(counts=counts)
        )


def tables(df, best, ops, profile, show_rejected: bool, names: tuple) -> None:
    """The ranked configurations, the rejected ones on request, the curves' and the operators'
    rows, each with its CSV (the engine's columns, the profile's errors on every row)."""
    s, model_id, hw_id = names
    ranked = df[df["reason"] == ""]
    if not len(ranked):
        show_rejected = True  # the reasons are the answer
    st.subheader(_("Configurations that fit, best first"))
    st.dataframe(tv.table(ranked, tv.RANKED, tv.SHOWN_ROWS), key="train_table", hide_index=True)
    st.caption(
        _("The first {shown} of {total}; the CSV has every one.").format(
            shown=f"{min(len(ranked), tv.SHOWN_ROWS):,}", total=f"{len(ranked):,}"
        )
    )
    download_csv(
        tv.with_errors(ranked, profile),
        tv.file_name("ranked", s, model_id, hw_id),
        "train_csv",
        _("Download the ranked configurations CSV"),
        lazy=True,
    )
    rejected = df[df["reason"] != ""]
    if show_rejected and len(rejected):
        st.subheader(_("Rejected configurations, with the rule each breaks"))
        shown = tv.table(rejected, tv.REJECTED, tv.SHOWN_ROWS)
        st.dataframe(shown, key="train_rejected_table", hide_index=True)
        download_csv(
            tv.with_errors(rejected, profile),
            tv.file_name("rejected", s, model_id, hw_id),
            "train_rejected_csv",
            _("Download the rejected configurations CSV"),
            lazy=True,
        )
    if len(best):
        st.subheader(_("Scaling: the best configuration per GPU count"))
        st.dataframe(tv.table(best, tv.SCALING), key="train_scaling_table", hide_index=True)
        download_csv(
            tv.with_errors(best, profile),
            tv.file_name("scaling", s, model_id, hw_id),
            "train_scaling_csv",
            _("Download the scaling CSV"),
            lazy=True,
        )
    if ops is not None:
        st.subheader(_("Operators of a micro-batch"))
        st.dataframe(tv.table(ops, tv.OPERATORS), key="train_ops_table", hide_index=True)
        download_csv(
            tv.with_errors(ops, profile),
            tv.file_name("operators", s, model_id, hw_id),
            "train_ops_csv",
            _("Download the operators CSV"),
            lazy=True,
        )


def budget_words(r: dict) -> str:
    """Time and cost to the token budget in one sentence."""
    cost = r["cost_to_train_usd"]
    values = {
        "tokens": fmt(r["token_budget"]),
        "time": fmt(r["time_to_train_days"] * 86_400, "s"),
        "gpu_hours": fmt(r["gpu_hours"]),
    }
    if cost is None:
        return _(
            "{tokens} tokens take {time} ({gpu_hours} GPU-hours) (no price: set one for the cost)."
        ).format(**values)
    return _(
        "{tokens} tokens take {time} ({gpu_hours} GPU-hours) and cost {cost} USD at {price} USD "
        "per GPU-hour."
    ).format(**values, cost=fmt(cost), price=fmt(r["price_per_gpu_hour_usd"]))
