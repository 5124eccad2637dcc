"""The training planner's "Reliability at scale" section: the cluster's failures from its parts
(engine.fleet_reliability), the Young-Daly checkpoint interval, the hours lost and the goodput,
beside tutorial 06's GPU-only view (engine.reliability: MTBF = MTTF ÷ GPUs).

Link parameters: checkpoint_s, restart_s, job_hours and <part>_mttf_hours
(ui/train/dse_link.py). The cluster's GPUs are the page's; its hosts hold the accelerator's GPUs
per node. docs/model.md, "Reliability of a fleet".
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

import engine
from ui.core.downloads import download_csv
from ui.core.frame import source_md
from ui.links.params import Link
from ui.widgets.cards import cards
from ui.widgets.pickers import number_input
from ui.words.format import fmt, missing, pct
from ui.words.i18n import N_, _

PART_WORDS = {  # engine.FLEET_PARTS' names, as shown
    "gpu": N_("GPU (die, SRAM, system processor, thermal, silent data corruption)"),
    "hbm": N_("HBM memory"),
    "nic": N_("Network card (NIC)"),
    "software": N_("Software (bugs, NCCL timeouts, dependencies)"),
    "switch": N_("Network switches and cables"),
    "host": N_("Host (CPU, memory, SSD, chassis, maintenance)"),
    "psu": N_("Power supply"),
}
PER_WORDS = {"gpu": N_("per GPU"), "host": N_("per host")}
TUTORIAL_MTTF_HOURS = 50_000.0  # tutorial 06's GPU MTTF (engine.reliability's default)


def fleet_of(link: Link, gpus: int, per_host: int) -> engine.FleetParts:
    """The inputs (each a field bound to its link parameter) as the engine's fleet."""
    a, b, c = st.columns(3)
    values = {
        "checkpoint_s": number_input(link, "checkpoint_s", _("Checkpoint write (s)"), where=a),
        "restart_s": number_input(link, "restart_s", _("Restart after a failure (s)"), where=b),
        "job_hours": number_input(link, "job_hours", _("Job length (hours)"), where=c),
    }
    st.caption(_("MTTF of one unit of each part (hours):"))
    columns = st.columns(4)
    for i, part in enumerate(engine.FLEET_PARTS):
        name = f"{part.name}_mttf_hours"
        label = f"{_(PART_WORDS[part.name])}, {_(PER_WORDS[part.per])}"
        blank = {} if part.mttf_hours is not None else {"value": None}  # blank: not counted
        values[name] = number_input(
            link,
            name,
            label,
            where=columns[i % 4],
            step=1000.0,
            placeholder=_("not counted"),
            **blank,
        )
    values = {k: float(v) if v is not None else link[k].default for k, v in values.items()}
    return engine.FleetParts(gpus=gpus, gpus_per_host=per_host, **values)


def parts_table(r: engine.FleetReliability) -> pd.DataFrame:
    """The parts as shown: name, units, MTTF, failures per day, share of the fleet's rate."""
    df = engine.fleet_parts_frame(r)
    return pd.DataFrame(
        {
            _("Part"): [_(PART_WORDS[p]) for p in df["part"]],
            _("Units"): [
                f"{int(u):,} {_(PER_WORDS[p])}" for u, p in zip(df["units"], df["per"], strict=True)
            ],
            _("MTTF of one unit"): [
                _("not counted") if missing(v) else fmt(v, "h") for v in df["mttf_hours"]
            ],
            _("Failures per day"): [fmt(v * 24) for v in df["failures_per_hour"]],
            _("Share of failures"): [pct(v) for v in df["share"]],
        }
    )


def csv_frame(r: engine.FleetReliability, tutorial: engine.Reliability) -> pd.DataFrame:
    """The CSV: one row per part (the engine's keys) with the fleet's figures and the
    tutorial's GPU-only figures on every row."""
    df = engine.fleet_parts_frame(r)
    fleet = {f"fleet_{k}": v for k, v in r.as_dict().items() if k != "parts"}
    gpu_only = {f"tutorial_gpu_only_{k}": v for k, v in tutorial.as_dict().items()}
    return df.assign(**fleet, **gpu_only)


def headline(r: engine.FleetReliability, tutorial: engine.Reliability) -> list:
    """(label, value, help) cards: the fleet's figures, the tutorial's MTBF beside them."""
    return [
        (_("Fleet MTBF"), fmt(r.mtbf_hours, "h"), _("1 ÷ Σ units ÷ MTTF, every part")),
        (
            _("GPU-only MTBF (tutorial 06)"),
            fmt(tutorial.mtbf_hours, "h"),
            _("{mttf} h ÷ {gpus} GPUs, the tutorial's first-order view").format(
                mttf=fmt(tutorial.gpu_mttf_hours), gpus=f"{tutorial.gpus:,}"
            ),
        ),
        (_("Failures in the job"), fmt(r.expected_failures), _("job length ÷ MTBF")),
        (
            _("Checkpoint every"),
            fmt(r.checkpoint_interval_hours, "h"),
            _("Young-Daly: √(2 × write time × MTBF)"),
        ),
        (
            _("Hours lost"),
            fmt(r.lost_hours, "h"),
            _("writes {write} + rollbacks {rollback} + restarts {restart}").format(
                write=fmt(r.checkpoint_write_hours, "h"),
                rollback=fmt(r.rollback_hours, "h"),
                restart=fmt(r.restart_hours, "h"),
            ),
        ),
        (_("Goodput"), pct(r.goodput), _("1 − hours lost ÷ job length")),
    ]


def section(link: Link, gpus: int, per_host: int, name: str, fits: bool = True) -> None:
    """The section: inputs, cards, the parts' table and its CSV (`fits`: a layout fits the
    cluster; if not, the cards wait for one, so none reads as a planned run's)."""
    st.subheader(_("Reliability at scale"))
    st.markdown(
        _(
            "A synchronous job stops when any part of the cluster fails. Independent parts add "
            "their failure rates: fleet rate = Σ units ÷ MTTF. By default only the GPU is "
            "counted, at the tutorial's MTTF; give each other part's MTTF (your own failure "
            "records) to count it. Checkpoints every √(2 × write time × MTBF) (Young, Daly) lose "
            "the least."
        )
    )
    fleet = fleet_of(link, gpus, per_host)
    r = engine.fleet_reliability(fleet)
    tutorial = engine.reliability(
        gpus,
        gpu_mttf_hours=TUTORIAL_MTTF_HOURS,
        checkpoint_s=fleet.checkpoint_s,
        job_hours=fleet.job_hours,
    )
    if fits:
        cards(headline(r, tutorial))
    st.dataframe(parts_table(r), key="train_reliability_table", hide_index=True)
    csv_name = f"train_reliability_{name}_{gpus}gpus.csv"
    download_csv(csv_frame(r, tutorial), csv_name, "train_rel_csv")
    st.caption(
        _(
            "{gpus} GPUs in {hosts} hosts of {per_host}. Sources: {source}; restart time: "
            "{restart}. Tutorial 06's view counts GPUs only (MTTF {mttf} h each). Not modelled: "
            "correlated failures, spare capacity, asynchronous checkpoints, the time to detect "
            "a failure."
        ).format(
            gpus=f"{gpus:,}",
            hosts=f"{r.hosts:,}",
            per_host=per_host,
            source=source_md("MLSys·im, tutorial 06 (GPU MTTF)", engine.RESTART_URL),
            restart=source_md("MLSys·im ReliabilityModel", engine.RESTART_URL),
            mttf=fmt(TUTORIAL_MTTF_HOURS),
        )
    )
