"""The training planner's "Design space: the Pareto front" section: among the configurations
that fit and meet the limits, those no other beats on every chosen objective
(engine.pareto_table), drawn (ui.charts.pareto: the front a line, the others faded) and listed
with their CSV.

Link parameters: pareto, max_step_s, min_headroom_gb (ui/train/dse_link.py).
docs/model.md, "Design-space exploration".
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

import engine
from ui.charts.pareto import Axis, pareto_figure
from ui.core.downloads import download_csv
from ui.links.params import Link
from ui.train import view as tv
from ui.train.dse_link import OBJECTIVES
from ui.train.link import RECOMPUTE_WORDS
from ui.widgets.pickers import number_input
from ui.words.i18n import _

SHOWN_POINTS = 20_000  # points drawn at most (the front always; the others sampled evenly)


def _limits(link: Link) -> dict:
    a, b = st.columns(2)
    step = number_input(
        link, "max_step_s", _("Longest step allowed (s; blank: no limit)"), where=a, value=None
    )
    room = number_input(
        link,
        "min_headroom_gb",
        _("Least memory headroom allowed (GB; blank: no limit)"),
        where=b,
        value=None,
    )
    limits = {}
    if step is not None:
        limits["step_time_s"] = (None, float(step))
    if room is not None:
        limits["memory_headroom_bytes"] = (float(room) * 1e9, None)
    return limits


def front_of(df: pd.DataFrame, objectives: list[str], limits: dict) -> pd.DataFrame:
    """The ranked rows (those that fit) with `feasible` and `pareto` (engine.pareto_table)."""
    ranked = df[df["reason"].isna()].reset_index(drop=True)
    wanted = {k: OBJECTIVES[k][1] for k in objectives if ranked[k].notna().any()}
    return engine.pareto_table(ranked, wanted, limits)


def figure(table: pd.DataFrame, objectives: list[str], title: str):
    """The chart of the first two objectives (a sample of the points off the front)."""
    keep = table["pareto"].to_numpy() | _sample(len(table))
    part = table[keep]
    axes = []
    for key in objectives[:2]:
        words, _way, unit, factor, scale, log = OBJECTIVES[key]
        values = part[key].to_numpy(dtype=float) * factor
        axes.append(Axis(title=_(words), values=values, unit=unit, scale=scale, log=log))
    labels = np.array([tv_config(r) for r in part.itertuples()], dtype=object)
    return pareto_figure(
        axes[0],
        axes[1],
        front=part["pareto"].to_numpy(),
        feasible=part["feasible"].to_numpy(),
        labels=labels,
        names=(_("Pareto front"), _("dominated"), _("outside the limits")),
        title=title,
        line=len(objectives) == 2,
    )


def _sample(n: int) -> np.ndarray:
    step = max(1, -(-n // SHOWN_POINTS))
    mask = np.zeros(n, dtype=bool)
    mask[::step] = True
    return mask


def tv_config(r) -> str:
    """A configuration in one line (tp, pp, cp, vp, micro-batch, ZeRO, recomputation)."""
    return _(
        "tp {tp} · pp {pp} · cp {cp} · vp {vp} · dp {dp} · micro-batch {mb} · ZeRO {zero} · "
        "{recompute}"
    ).format(
        tp=r.tp,
        pp=r.pp,
        cp=r.cp,
        vp=r.vp,
        dp=int(r.dp),
        mb=r.micro_batch_size,
        zero=r.zero,
        recompute=_(RECOMPUTE_WORDS[str(r.recompute)]),
    )


def section(link: Link, df: pd.DataFrame, title: str, file_name: str) -> None:
    """The section: objectives, limits, the chart, the front's table and the CSV."""
    st.subheader(_("Design space: the Pareto front"))
    st.markdown(
        _(
            "Ranking picks one winner by one number. The Pareto front keeps every configuration "
            "that no other beats on all the chosen objectives at once: each is the best for some "
            "trade-off. Limits (a longest step, a least headroom) remove configurations first."
        )
    )
    objectives = st.multiselect(
        _("Objectives (the chart's axes are the first two)"),
        list(OBJECTIVES),
        key=link.key("pareto"),
        format_func=lambda k: _(OBJECTIVES[k][0]),
        max_selections=len(OBJECTIVES),
    )
    if len(objectives) < 2:
        st.error(_("Choose at least two objectives."), icon="🎯")
        return
    table = front_of(df, objectives, _limits(link))
    if not len(table):
        st.info(_("No configuration fits: no front to draw."))
        return
    on = int(table["pareto"].sum())
    st.markdown(
        _(
            "**{front}** of the {fits} configurations that fit are on the front; {out} are "
            "outside the limits."
        ).format(
            front=f"{on:,}", fits=f"{len(table):,}", out=f"{int((~table['feasible']).sum()):,}"
        )
    )
    if on:
        st.plotly_chart(figure(table, objectives, title), key="train_pareto_chart")
        front = table[table["pareto"]].sort_values(objectives[0], kind="stable")
        st.dataframe(tv.table(front, tv.RANKED), key="train_pareto_table", hide_index=True)
    label = _("Download the Pareto CSV")
    download_csv(table, file_name, "train_pareto_csv", label=label)
