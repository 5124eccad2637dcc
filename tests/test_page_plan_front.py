"""AppTest of the planner's "Cost against latency" section (ui/plan/cost_front.py): the front
of USD per 1M output tokens against TPOT is engine.pareto_table's over the page's own table,
the SLOs applied as limits, drawn with the dominated points faded."""

from __future__ import annotations

import base64

import numpy as np

from tests.conftest import chart_spec
from tests.test_page_plan import MUST_SHOW, open_page


def values(data) -> np.ndarray:
    """A plotly array from a figure's JSON (a list, or numpy's typed-array encoding)."""
    if isinstance(data, dict):
        return np.frombuffer(base64.b64decode(data["bdata"]), dtype=data["dtype"])
    return np.asarray(data, dtype=float)


def test_the_cost_latency_front_is_not_dominated_and_respects_the_slos():
    at = open_page(MUST_SHOW)
    chart = next(c for c in at.get("plotly_chart") if "Cost against TPOT" in c.proto.spec)
    spec = chart_spec(chart)
    dominated, outside, front = spec["data"]
    assert front["name"] == "Pareto front" and outside["name"] == "outside the SLOs"
    assert dominated["marker"]["opacity"] < 1
    fx, fy = values(front["x"]), values(front["y"])
    assert len(fx) >= 1
    assert (fx <= 50).all()  # TPOT (ms) within the 50 ms SLO
    # no point drawn beats a front point on both cost and TPOT
    xs = np.concatenate([values(dominated["x"]), fx])
    ys = np.concatenate([values(dominated["y"]), fy])
    for x, y in zip(fx, fy, strict=True):
        assert not ((xs <= x) & (ys <= y) & ((xs < x) | (ys < y))).any()
    # every dominated point is beaten by a front point
    for x, y in zip(values(dominated["x"]), values(dominated["y"]), strict=True):
        assert ((fx <= x) & (fy <= y) & ((fx < x) | (fy < y))).any()
    # the front's table lists the same configurations
    table = next(d.value for d in at.dataframe if "USD per 1M output tokens" in d.value.columns)
    assert len(table) == len(fx)
