"""The planner's "Cost against latency" section: among the priced configurations that fit,
those no other beats on both USD per 1M output tokens and TPOT (engine.pareto_table), the SLOs
as limits (a configuration that misses one is outside them), drawn by ui.charts.pareto with the
front's table and its CSV. Drawn only while its expander is open (pages/plan.py)."""

from __future__ import annotations

import numpy as np
import pandas as pd

import engine
from ui.charts.pareto import Axis, pareto_figure
from ui.core.downloads import download_csv
from ui.words.format import fmt_all
from ui.words.i18n import _

OBJECTIVES = {"usd_per_1m_output_tokens": "min", "tpot_ms": "min"}


def front(table: pd.DataFrame, slo) -> pd.DataFrame:
    """The priced rows that fit, with `feasible` (every set SLO met) and `pareto`."""
    ok = table["fits_in_memory"].to_numpy(dtype=bool) & table["usd_per_1m_output_tokens"].notna()
    rows = table[ok].reset_index(drop=True)
    limits = {k: (None, v) for k, v in (("ttft_ms", slo.ttft_ms), ("tpot_ms", slo.tpot_ms)) if v}
    if slo.min_tokens_per_s_per_user:
        limits["tokens_per_s_per_user"] = (slo.min_tokens_per_s_per_user, None)
    return engine.pareto_table(rows, OBJECTIVES, limits)


def _label(r, names) -> str:
    return _("{hardware} · tp {tp} · pp {pp} · batch {batch} · {precision}").format(
        hardware=names.get(str(r.hardware), str(r.hardware)),
        tp=r.tp,
        pp=r.pp,
        batch=f"{int(r.batch_size):,}",
        precision=r.precision,
    )


def section(box, table: pd.DataFrame, slo, names: dict[str, str], title: str) -> None:
    """Into `box` (an open expander): the chart, the front's rows and the CSV."""
    rows = front(table, slo)
    if not len(rows):
        box.info(_("No priced configuration fits: set a price under Prices."))
        return
    labels = np.array([_label(r, names) for r in rows.itertuples()], dtype=object)
    figure = pareto_figure(
        Axis(title=_("TPOT (ms)"), values=rows["tpot_ms"].to_numpy(), unit="s", scale=1e-3),
        Axis(
            title=_("USD per 1M output tokens"),
            values=rows["usd_per_1m_output_tokens"].to_numpy(),
            log=True,
        ),
        front=rows["pareto"].to_numpy(),
        feasible=rows["feasible"].to_numpy(),
        labels=labels,
        names=(_("Pareto front"), _("dominated"), _("outside the SLOs")),
        title=title,
    )
    box.plotly_chart(figure, key="plan_cost_front")
    on = rows[rows["pareto"]].sort_values("tpot_ms", kind="stable")
    box.dataframe(
        pd.DataFrame(
            {
                _("Configuration"): [_label(r, names) for r in on.itertuples()],
                _("TPOT"): fmt_all(on["tpot_ms"].to_numpy() * 1e-3, "s"),
                _("TTFT"): fmt_all(on["ttft_ms"].to_numpy() * 1e-3, "s"),
                _("USD per 1M output tokens"): fmt_all(on["usd_per_1m_output_tokens"].to_numpy()),
            }
        ),
        key="plan_cost_front_table",
        hide_index=True,
    )
    with box:
        download_csv(rows, "plan_cost_latency_front.csv", "plan_cost_front_csv")
