"""The training lessons' experiments: 6 "Scaling to 1000 GPUs" (engine.scaling_overheads:
the training step's communication beside failures and checkpoints) and 11 "Training Memory"
(engine.train's memory per GPU by ZeRO stage), on the general charts of ui.charts.lines, then
the chapter "Full-stack audit" (one row per domain: engine.train, engine.reliability,
engine.young_daly_hours, engine.tco and engine.footprint in Quebec and in Poland)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

import engine
from ui.charts.lines import Series, lines_figure, stacked_bars_figure
from ui.core.downloads import download_csv
from ui.learn.content import Outcome
from ui.links.params import Link
from ui.widgets.pickers import number_input
from ui.words.format import fmt, pct
from ui.words.i18n import N_, _

GPUS = [8, 32, 64, 128, 256, 512, 1024]  # the chapter's sweep
BIG = "Llama-3.1-70B"
SMALL = "Llama-3.1-8B"
SEQ_LEN = 2048  # tokens: the chapter's sequences
SCALE_LAYOUT = engine.TrainLayout(tp=8, zero=1)  # the chapter's layout (ZeRO-1: it fits)


def scale_run(cat, gpus: list[int]) -> engine.TrainRun:
    """The chapter's run at each of `gpus`, the global batch its max(64, gpus)."""
    return engine.TrainRun(BIG, "H100", gpus=gpus, seq_len=SEQ_LEN, catalog=cat)


def memory_run(cat) -> engine.TrainRun:
    """Lesson 11's run: 8 GPUs, a global batch of 8 sequences."""
    return engine.TrainRun(SMALL, "H100", gpus=8, global_batch_size=8, seq_len=SEQ_LEN, catalog=cat)


def scaling(link: Link, cat) -> Outcome:
    """Lesson 6: hours lost to communication and to checkpoints over a 30-day run."""
    a, b = st.columns(2)
    with a:
        mttf = float(number_input(link, "mttf_hours", _("GPU MTTF (hours)"), step=5000.0))
    with b:
        ckpt = float(number_input(link, "checkpoint_s", _("Checkpoint write (s)"), step=30.0))
    failures = engine.Failures(gpu_mttf_hours=mttf, checkpoint_s=ckpt)
    rows = engine.scaling_overheads(scale_run(cat, GPUS), SCALE_LAYOUT, failures=failures)
    splits = [comm_split(cat, g) for g in GPUS]
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
            _("of it tensor-parallel"): [pct(s["tp_share"]) for s in splits],
            _("of it data-parallel"): [pct(s["dp_share"]) for s in splits],
        }
    )
    st.dataframe(shown, hide_index=True, key="l6_table")
    download_csv(rows, "lesson_6_scaling.csv", "learn:l6_csv")
    if not rows["fits_in_memory"].all():
        st.caption(_("8 GPUs (data parallel 1): the optimizer state does not fit; shown anyway."))
    return _scaling_outcome(cat, rows)


def comm_split(cat, gpus: int, overrides: dict | None = None) -> dict:
    """engine.train of the chapter's run on `gpus` GPUs (the profile's assumptions, or with
    `overrides`): the exposed tensor- and data-parallel seconds and their shares of the step."""
    run = engine.TrainRun(
        BIG,
        "H100",
        gpus=gpus,
        global_batch_size=max(64, gpus),
        seq_len=SEQ_LEN,
        catalog=cat,
        overrides=overrides or {},
    )
    r = engine.train(run, SCALE_LAYOUT).as_dict()
    step = r["step_time_s"]
    return r | {"tp_share": r["comm_tp_s"] / step, "dp_share": r["comm_dp_s"] / step}


def _split_values(cat) -> dict:
    """The lesson's words on who the exposed communication belongs to: at 8 GPUs (tensor
    parallelism alone), with the links at the profile's efficiency and at the datasheet's
    bandwidth, and at 1,024 (tensor and data parallelism)."""
    eight = comm_split(cat, 8)
    datasheet = comm_split(cat, 8, {"link_efficiency": 1.0})
    big = comm_split(cat, 1024)
    eff = engine.get_training_profile("megatron").assumptions.link_efficiency
    return {
        "tp_8": pct(eight["tp_share"]),
        "tp_8_datasheet": pct(datasheet["tp_share"]),
        "link_eff": pct(eff),
        "exposed_1024": fmt(big["comm_exposed_s"], "s"),
        "tp_1024": fmt(big["comm_tp_s"], "s"),
        "dp_1024": fmt(big["comm_dp_s"], "s"),
        "tp_share_1024": pct(big["tp_share"]),
        "dp_share_1024": pct(big["dp_share"]),
    }


def _scaling_outcome(cat, rows: pd.DataFrame) -> Outcome:
    base = engine.scaling_overheads(scale_run(cat, [512, 1024]), SCALE_LAYOUT)
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
    values |= _split_values(cat)
    ours["tp8"] = values["tp_8"]
    answers = {"mtbf2048": r2048.mtbf_hours, "fail2048": r2048.expected_failures}
    query = {"model": BIG, "hardware": "H100", "gpus": "1024", "tp": "8", "zero": "1"}
    query |= {"global_batch_size": "1024", "seq_len": "2048"}
    command = (
        f"python -m engine train --model {BIG} --hardware H100 --gpus 1024 --tp 8 "
        "--global-batch-size 1024 --seq-len 2048 --zero 1 --format table"
    )
    return Outcome(
        ours=ours,
        values=values,
        answers=answers,
        pages=[(_("Training planner"), "pages/train.py", query)],
        command=command,
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
    run = memory_run(cat)
    runs = [
        engine.train(run, engine.TrainLayout(zero=z, recompute=recompute)).as_dict()
        for z in range(4)
    ]
    parts = [
        Series(name=_(label), values=[r[key] / 1e9 for r in runs], unit="B", scale=1e9)
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
    outcome = _memory_outcome(runs, zero, recompute)
    part = audit(cat)  # the chapter "Full-stack audit", below the memory experiment
    outcome.ours |= part.ours
    outcome.values |= part.values
    outcome.answers |= part.answers
    return outcome


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
        ours=ours,
        values=values,
        answers=answers,
        pages=[(_("Training planner"), "pages/train.py", query)],
        command=command,
    )


# Lesson 11's second part, the chapter "Full-stack audit" (11_full_stack_audit.qmd): the
# chapter's cluster and run, each domain's figure from the engine's own model of it.
AUDIT_GPUS = 512  # 64 DGX H100 nodes × 8
AUDIT_DAYS = 30
AUDIT_LAYOUT = engine.TrainLayout(tp=8, pp=1, zero=1)  # the chapter's TP 8, PP 1, DP 64
AUDIT_BATCH = 2048  # sequences of SEQ_LEN tokens per step (the chapter's batch_size=2048)
TOKEN_BYTES = 2  # bytes a token id takes in the data pipeline (the chapter's figure)
CHECKPOINT_S = 120.0  # the chapter's checkpoint write time
CHINCHILLA = 20.0  # tokens per parameter (Hoffmann et al. 2022, as the chapter states it)
REGIONS = {"Quebec": N_("Quebec"), "Poland": N_("Poland")}
SELF_CHECK = (4.0, 120.0)  # the chapter's self-check: MTBF 4 h, a 2-minute checkpoint


def audit_figures(cat) -> dict:
    """Every domain's figure for the chapter's run (numbers: the page formats them)."""
    run = engine.TrainRun(
        BIG, "H100", gpus=AUDIT_GPUS, global_batch_size=AUDIT_BATCH, seq_len=SEQ_LEN, catalog=cat
    )
    step = engine.train(run, AUDIT_LAYOUT).as_dict()
    hours = AUDIT_DAYS * 24.0
    usage = engine.Usage("H100", AUDIT_GPUS, hours)
    regions = {
        g: (engine.footprint(usage, g, catalog=cat), engine.tco(usage, grid=g, catalog=cat))
        for g in REGIONS
    }
    rel = engine.reliability(AUDIT_GPUS, checkpoint_s=CHECKPOINT_S, job_hours=hours)
    mtbf, delta_s = SELF_CHECK
    interval_h = engine.young_daly_hours(delta_s / 3600.0, mtbf)
    tokens = step["tokens_per_s"] * hours * 3600.0
    return {
        "step": step,
        "demand_bytes_per_s": step["tokens_per_s"] * TOKEN_BYTES,
        "tokens": tokens,
        "tokens_per_param": tokens / step["matmul_params"],
        "reliability": rel,
        "regions": regions,
        "self_check_interval_h": interval_h,
        "self_check_share": delta_s / 3600.0 / interval_h,
    }


def audit(cat) -> Outcome:
    """The full-stack audit: one row per domain, Quebec against Poland, and the figures the
    chapter publishes beside ours."""
    st.subheader(
        _("The full-stack audit: {model} on {gpus} H100, {days} days").format(
            model=BIG, gpus=f"{AUDIT_GPUS:,}", days=AUDIT_DAYS
        )
    )
    a = audit_figures(cat)
    step, rel = a["step"], a["reliability"]
    (qf, qt), (pf, pt) = a["regions"]["Quebec"], a["regions"]["Poland"]
    compute_share = step["compute_s"] / step["step_time_s"]
    comm_share = step["comm_exposed_s"] / step["step_time_s"]
    lost = rel.checkpoint_loss_hours / rel.job_hours
    rows = [
        (
            N_("Node: the training step"),
            _("{step} a step; compute {compute}, MFU {mfu}").format(
                step=fmt(step["step_time_s"], "s"), compute=pct(compute_share), mfu=pct(step["mfu"])
            ),
            _("compute"),
        ),
        (
            N_("Data: token ids to the GPUs"),
            fmt(a["demand_bytes_per_s"], "B/s"),
            _("not binding"),
        ),
        (
            N_("Algorithm: tokens per parameter"),
            _("{ratio} ({tokens} tokens in {days} days; Chinchilla: {chinchilla})").format(
                ratio=fmt(a["tokens_per_param"]),
                tokens=fmt(a["tokens"]),
                days=AUDIT_DAYS,
                chinchilla=fmt(CHINCHILLA),
            ),
            _("under-trained") if a["tokens_per_param"] < CHINCHILLA else _("over-trained"),
        ),
        (
            N_("Fleet: communication"),
            _("{share} of the step exposed (TP {tp}, DP {dp})").format(
                share=pct(comm_share), tp=step["tp"], dp=step["dp"]
            ),
            _("communication"),
        ),
        (
            N_("Fleet: reliability"),
            _("MTBF {mtbf}; {failures} failures; checkpoint every {interval}; {lost} lost").format(
                mtbf=fmt(rel.mtbf_hours, "h"),
                failures=fmt(rel.expected_failures),
                interval=fmt(rel.checkpoint_interval_hours, "h"),
                lost=pct(lost),
            ),
            _("checkpoints"),
        ),
        (
            N_("Ops: cost of ownership"),
            _("{quebec} in Quebec, {poland} in Poland").format(
                quebec=fmt(qt["total_usd"], "USD"), poland=fmt(pt["total_usd"], "USD")
            ),
            _("cost"),
        ),
        (
            N_("Ops: carbon"),
            _("{quebec} in Quebec, {poland} in Poland").format(
                quebec=fmt(qf["carbon_tco2e"], "tCO2e"), poland=fmt(pf["carbon_tco2e"], "tCO2e")
            ),
            _("energy"),
        ),
    ]
    shown = pd.DataFrame(
        {
            _("Domain"): [_(r[0]) for r in rows],
            _("Our figure"): [r[1] for r in rows],
            _("What binds"): [r[2] for r in rows],
        }
    )
    st.dataframe(shown, hide_index=True, key="l11_audit")
    csv = pd.DataFrame(
        {
            "domain": [r[0] for r in rows],
            "step_s": step["step_time_s"],
            "mfu_fraction": step["mfu"],
            "compute_share_fraction": compute_share,
            "comm_exposed_share_fraction": comm_share,
            "data_demand_bytes_per_s": a["demand_bytes_per_s"],
            "tokens_per_parameter": a["tokens_per_param"],
            "mtbf_hours": rel.mtbf_hours,
            "checkpoint_interval_hours": rel.checkpoint_interval_hours,
            "checkpoint_loss_fraction": lost,
            "tco_quebec_usd": qt["total_usd"],
            "tco_poland_usd": pt["total_usd"],
            "carbon_quebec_tco2e": qf["carbon_tco2e"],
            "carbon_poland_tco2e": pf["carbon_tco2e"],
        }
    )
    download_csv(csv, "lesson_11_audit.csv", "learn:l11_audit_csv")
    return _audit_outcome(a)


def _audit_outcome(a: dict) -> Outcome:
    (qf, qt), (pf, pt) = a["regions"]["Quebec"], a["regions"]["Poland"]
    carbon = pf["carbon_tco2e"] / qf["carbon_tco2e"]
    cost = pt["total_usd"] / qt["total_usd"] - 1.0
    ours = {
        "chinchilla": fmt(a["tokens_per_param"]),
        "carbon_ratio": fmt(carbon, "×"),
        "tco_change": pct(cost),
        "self_check": _("every {interval}, {share} of the time writing").format(
            interval=fmt(a["self_check_interval_h"], "h"), share=pct(a["self_check_share"])
        ),
        "binding": pct(a["step"]["compute_s"] / a["step"]["step_time_s"]),
    }
    values = {
        "pue_quebec": fmt(qf["pue"]),
        "pue_poland": fmt(pf["pue"]),
        "g_quebec": fmt(qf["carbon_g_per_kwh"]),
        "g_poland": fmt(pf["carbon_g_per_kwh"]),
        "energy_share": pct(qt["power_usd"] / qt["total_usd"]),
    }
    answers = {"poland_carbon": carbon, "self_check": 100.0 * a["self_check_share"]}
    return Outcome(ours=ours, values=values, answers=answers)
