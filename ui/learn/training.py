"""The training lessons' experiments: 6 "Scaling to 1000 GPUs" (engine.scaling_overheads:
the training step's communication beside failures and checkpoints) and 11 "Training Memory"
(engine.train's memory per GPU by ZeRO stage), on the general charts of ui.charts.lines."""

from __future__ import annotations

import pandas as pd
import streamlit as st

import engine
from ui.charts.lines import Series, lines_figure, stacked_bars_figure
from ui.core.downloads import download_csv
from ui.core.format import fmt, pct
from ui.core.i18n import N_, _
from ui.core.params import Link
from ui.learn.content import Outcome
from ui.widgets.pickers import number_input

GPUS = [8, 32, 64, 128, 256, 512, 1024]  # the chapter's sweep
BIG = "Llama-3.1-70B"
SMALL = "Llama-3.1-8B"
SCALE = {"tp": 8, "seq_len": 2048, "zero": 1}  # the chapter's layout (ZeRO-1: it fits)
MEMORY = {"gpus": 8, "global_batch_size": 8, "micro_batch_size": 1, "seq_len": 2048}


def scaling(link: Link, cat) -> Outcome:
    """Lesson 6: hours lost to communication and to checkpoints over a 30-day run."""
    a, b = st.columns(2)
    with a:
        mttf = float(number_input(link, "mttf_hours", _("GPU MTTF (hours)"), step=5000.0))
    with b:
        ckpt = float(number_input(link, "checkpoint_s", _("Checkpoint write (s)"), step=30.0))
    kw = {"gpu_mttf_hours": mttf, "checkpoint_s": ckpt, "catalog": cat, **SCALE}
    rows = engine.scaling_overheads(BIG, "H100", GPUS, **kw)
    series = [
        Series(_("Communication"), rows["comm_loss_hours"], "h"),
        Series(_("Checkpoints and rollbacks"), rows["checkpoint_loss_hours"], "h", dash="dash"),
    ]
    figure = lines_figure(
        rows["gpus"],
        series,
        title=_("Hours lost in a 30-day run: {model}, H100").format(model=BIG),
        x_title=_("GPUs"),
        y_title=_("Hours lost"),
    )
    st.plotly_chart(figure, key="l6")
    shown = pd.DataFrame(
        {
            _("GPUs"): [f"{g:,}" for g in rows["gpus"]],
            _("Cluster MTBF"): [fmt(v, "h") for v in rows["mtbf_hours"]],
            _("Failures in 30 days"): [fmt(v) for v in rows["expected_failures"]],
            _("Checkpoint every"): [fmt(v, "h") for v in rows["checkpoint_interval_hours"]],
            _("Step lost to communication"): [pct(v) for v in rows["comm_fraction"]],
        }
    )
    st.dataframe(shown, hide_index=True, key="l6_table")
    download_csv(rows, "lesson_6_scaling.csv", "learn:l6_csv")
    if not rows["fits_in_memory"].all():
        st.caption(_("8 GPUs (data parallel 1): the optimizer state does not fit; shown anyway."))
    return _scaling_outcome(cat, rows)


def _scaling_outcome(cat, rows: pd.DataFrame) -> Outcome:
    base = engine.scaling_overheads(BIG, "H100", [512, 1024], catalog=cat, **SCALE)
    r512, r1024 = (base.iloc[i] for i in (0, 1))
    r2048 = engine.reliability(2048)
    ours = {
        "mtbf": fmt(r512["mtbf_hours"], "h"),
        "interval": fmt(r512["checkpoint_interval_hours"], "h"),
        "daily": _("{failures} failures in 30 days").format(
            failures=fmt(r512["expected_failures"])
        ),
        "verdict": _("communication: {comm} against {ckpt}").format(
            comm=fmt(r1024["comm_loss_hours"], "h"), ckpt=fmt(r1024["checkpoint_loss_hours"], "h")
        ),
    }
    values = {
        "interval_1024": fmt(r1024["checkpoint_interval_hours"], "h"),
        "failures": fmt(r512["expected_failures"]),
        "every": fmt(r512["mtbf_hours"], "h"),
        "ckpt_hours": fmt(r1024["checkpoint_loss_hours"], "h"),
        "comm_share": pct(r1024["comm_fraction"]),
        "comm_hours": fmt(r1024["comm_loss_hours"], "h"),
    }
    answers = {"mtbf2048": r2048.mtbf_hours, "fail2048": r2048.expected_failures}
    query = {"model": BIG, "hardware": "H100", "gpus": "1024", "tp": "8", "zero": "1"}
    query |= {"global_batch_size": "1024", "seq_len": "2048"}
    command = (
        f"python -m engine train --model {BIG} --hardware H100 --gpus 1024 --tp 8 "
        "--global-batch-size 1024 --seq-len 2048 --zero 1 --format table"
    )
    return Outcome(
        ours, values, answers, [(_("Training planner"), "pages/train.py", query)], command
    )


COMPONENTS = {  # engine.train's memory terms per GPU, in stacking order
    "weight_bytes_per_gpu": N_("Weights"),
    "gradient_bytes_per_gpu": N_("Gradients"),
    "optimizer_bytes_per_gpu": N_("Optimizer state"),
    "activation_bytes_per_gpu": N_("Activations"),
}
RECOMPUTE = (N_("none"), N_("selective"), N_("full"))  # engine.train's choices, shown translated


def memory(link: Link, cat) -> Outcome:
    """Lesson 11: memory per GPU by ZeRO stage against the usable memory."""
    a, b = st.columns(2)
    zero = a.selectbox(_("ZeRO stage"), ("0", "1", "2", "3"), key=link.key("zero"))
    recompute = b.selectbox(
        _("Activation recomputation"),
        RECOMPUTE,
        key=link.key("recompute"),
        format_func={r: _(r) for r in RECOMPUTE}.__getitem__,
    )
    runs = [
        engine.train(SMALL, "H100", zero=z, recompute=recompute, catalog=cat, **MEMORY).as_dict()
        for z in range(4)
    ]
    parts = [
        Series(_(label), [r[key] / 1e9 for r in runs], "B", 1e9)
        for key, label in COMPONENTS.items()
    ]
    usable = runs[0]["usable_memory_bytes"]
    figure = stacked_bars_figure(
        [f"ZeRO-{z}" for z in range(4)],
        parts,
        title=_("Memory per GPU: {model}, 8 × H100, data parallel").format(model=SMALL),
        y_title=_("Memory per GPU (GB)"),
        limit=(_("usable"), usable / 1e9),
        limit_scale=1e9,
    )
    st.plotly_chart(figure, key="l11")
    r = runs[int(zero)]
    verdict = _("fits") if r["fits_in_memory"] else _("does not fit")
    st.markdown(
        _("**ZeRO-{zero}:** {total} per GPU of {usable} usable: {verdict}.").format(
            zero=zero,
            total=fmt(r["memory_per_gpu_bytes"], "B"),
            usable=fmt(usable, "B"),
            verdict=verdict,
        )
    )
    return _memory_outcome(runs, zero, recompute)


def _memory_outcome(runs: list[dict], zero: str, recompute: str) -> Outcome:
    z2 = runs[2]
    ours = {
        "weights": fmt(z2["weight_bytes_per_gpu"], "B"),
        "gradients": fmt(z2["gradient_bytes_per_gpu"], "B"),
        "optimizer": fmt(z2["optimizer_bytes_per_gpu"], "B"),
        "activations": fmt(z2["activation_bytes_per_gpu"], "B"),
    }
    values = {"activations": ours["activations"]}
    keys = list(COMPONENTS)
    unchanged = [k for k in keys if runs[0][k] == runs[3][k]]
    answers = {"zero3": runs[3]["memory_per_gpu_bytes"] / 1e9, "unsplit": keys.index(unchanged[0])}
    query = {"model": SMALL, "hardware": "H100", "gpus": "8", "zero": zero}
    query |= {"recompute": recompute, "global_batch_size": "8", "seq_len": "2048"}
    command = (
        f"python -m engine train --model {SMALL} --hardware H100 --gpus 8 --zero {zero} "
        f"--recompute {recompute} --global-batch-size 8 --seq-len 2048 --format table"
    )
    return Outcome(
        ours, values, answers, [(_("Training planner"), "pages/train.py", query)], command
    )
