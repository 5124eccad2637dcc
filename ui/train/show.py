"""The training planner's main-area sections (Streamlit glue over ui/train/view.py and
ui/train/figures.py and ui.charts' operator roofline): the verdict, the cards, the charts and
the tables with their CSV downloads."""

from __future__ import annotations

import streamlit as st

from ui.charts import operators as fo
from ui.core.downloads import download_csv
from ui.train import figures as tf
from ui.train import view as tv
from ui.train.link import RECOMPUTE_WORDS
from ui.train.run import SHORTFALL
from ui.widgets.cards import chart_row
from ui.words.format import fmt
from ui.words.i18n import N_, _
from ui.words.text import plain

PNG = {"toImageButtonOptions": {"format": "png"}}

# Why the closest configuration does not fit, one whole sentence per largest memory term (the
# engine's warning code), filled with the warning's values and the configuration.
SHORTFALL_SENTENCES = {
    "weights_do_not_fit": N_(
        "No configuration fits on {gpus} GPUs. The closest, {config}, needs {needed} GB per "
        "GPU against {usable} GB usable ({capacity} less the {reserve} memory reserve); its "
        "largest term is the 16-bit weights, {size} GB = {bytes_per_param} B × {params} B "
        "parameters on this GPU (ZeRO stage {zero}, tp {tp}, pp {pp}). Add GPUs, model "
        "parallelism (tp, pp), ZeRO stages or recomputation."
    ),
    "gradients_do_not_fit": N_(
        "No configuration fits on {gpus} GPUs. The closest, {config}, needs {needed} GB per "
        "GPU against {usable} GB usable ({capacity} less the {reserve} memory reserve); its "
        "largest term is the gradients, {size} GB = {bytes_per_param} B × {params} B "
        "parameters on this GPU (ZeRO stage {zero}, tp {tp}, pp {pp}). Add GPUs, model "
        "parallelism (tp, pp), ZeRO stages or recomputation."
    ),
    "optimizer_state_does_not_fit": N_(
        "No configuration fits on {gpus} GPUs. The closest, {config}, needs {needed} GB per "
        "GPU against {usable} GB usable ({capacity} less the {reserve} memory reserve); its "
        "largest term is the optimizer state (fp32 master weights, Adam momentum and "
        "variance), {size} GB = {bytes_per_param} B × {params} B parameters on this GPU (ZeRO "
        "stage {zero}, tp {tp}, pp {pp}). Add GPUs, model parallelism (tp, pp), ZeRO stages or "
        "recomputation."
    ),
    "activations_do_not_fit": N_(
        "No configuration fits on {gpus} GPUs. The closest, {config}, needs {needed} GB per "
        "GPU against {usable} GB usable ({capacity} less the {reserve} memory reserve); its "
        "largest term is the activations of the micro-batches in flight, {size} GB with "
        "{recompute} and micro-batch {micro_batch} (ZeRO stage {zero}, tp {tp}, pp {pp}). Add "
        "GPUs, model parallelism (tp, pp), ZeRO stages or recomputation."
    ),
}
NO_REASON = N_(
    "No configuration fits on {gpus} GPUs. The closest, {config}, does not fit. Add GPUs, model "
    "parallelism (tp, pp), ZeRO stages or recomputation."
)


def verdict(r: dict, warnings, fits: bool, rank: tuple[int, int], gpus: int) -> None:
    """Which configuration is shown, and, when none fits, why the closest does not (its
    `warnings`: engine.train's)."""
    config = tf.config_text(r)
    if fits:
        st.success(
            _("Shown in detail, ranked {rank} of the {ranked} that fit: {config}.").format(
                rank=f"{rank[0]:,}", ranked=f"{rank[1]:,}", config=plain(config)
            ),
            icon="✅",
        )
        return
    short = next((w for w in warnings if w.code in SHORTFALL), None)
    st.error(shortfall_text(short, gpus=gpus, config=config), icon="🚫")


def shortfall_text(short, gpus: int, config: str) -> str:
    """Why nothing fits, as one sentence in the reader's language (markdown-inert): `short` is
    engine.train's memory warning of the closest configuration (None: no warning said why)."""
    values = {"gpus": f"{gpus:,}", "config": config}
    if short is None or short.code not in SHORTFALL_SENTENCES:
        return plain(_(NO_REASON).format_map(values))
    fields = dict(short.fields)
    if "recompute" in fields:  # the engine's choice, as shown
        fields["recompute"] = _(RECOMPUTE_WORDS.get(fields["recompute"], fields["recompute"]))
    return plain(_(SHORTFALL_SENTENCES[short.code]).format_map(fields | values))


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
    ranked = df[df["reason"].isna()]
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
        df=tv.with_errors(ranked, profile),
        filename=tv.file_name(kind="ranked", s=s, model_id=model_id, hw_id=hw_id),
        key="train_csv",
        label=_("Download the ranked configurations CSV"),
    )
    rejected = df[df["reason"].notna()]
    if show_rejected and len(rejected):
        st.subheader(_("Rejected configurations, with the rule each breaks"))
        shown = tv.table(rejected, tv.REJECTED, tv.SHOWN_ROWS)
        st.dataframe(shown, key="train_rejected_table", hide_index=True)
        download_csv(
            df=tv.with_errors(rejected, profile),
            filename=tv.file_name(kind="rejected", s=s, model_id=model_id, hw_id=hw_id),
            key="train_rejected_csv",
            label=_("Download the rejected configurations CSV"),
        )
    if len(best):
        st.subheader(_("Scaling: the best configuration per GPU count"))
        st.dataframe(tv.table(best, tv.SCALING), key="train_scaling_table", hide_index=True)
        download_csv(
            df=tv.with_errors(best, profile),
            filename=tv.file_name(kind="scaling", s=s, model_id=model_id, hw_id=hw_id),
            key="train_scaling_csv",
            label=_("Download the scaling CSV"),
        )
    if ops is not None:
        st.subheader(_("Operators of a micro-batch"))
        st.dataframe(tv.table(ops, tv.OPERATORS), key="train_ops_table", hide_index=True)
        download_csv(
            df=tv.with_errors(ops, profile),
            filename=tv.file_name(kind="operators", s=s, model_id=model_id, hw_id=hw_id),
            key="train_ops_csv",
            label=_("Download the operators CSV"),
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
