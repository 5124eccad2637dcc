"""Links from one page to another that open it on the first page's scenario.

`load_link`: the LLM serving page (/decode) and the planner (/plan) open the serving-under-load
page (/load) on their deployment: model (or its config.json), accelerator (or the custom one),
tp, pp, precision, KV precision, profile and the request's tokens (the planner adds its
percentile SLOs, price and target rate), under /load's link names
(ui/load/link.py declares them; tests/test_page_load.py checks that every name here is one).
Whatever /load does not offer (a profile or precision it has no entry for) is left out and
takes its default there.
"""

from __future__ import annotations

from collections.abc import Mapping

import streamlit as st

import engine
from ui.core.i18n import N_, _

LOAD_PAGE = "pages/load.py"
LOAD_NAMES = ("model", "model_config", "hardware", "tp", "pp", "precision", "kv_precision",
              "profile", "input_tokens", "output_tokens", "custom_hw", "custom_model",
              "slo_ttft_ms_p90", "slo_tpot_ms_p99", "price", "target_rate")  # fmt: skip
CHOICES = {"precision": engine.PRECISIONS, "profile": engine.profile_names()}


def load_query(scenario: Mapping[str, object]) -> dict[str, str]:
    """/load's query for `scenario` (link names -> values; None and unknown names left out)."""
    out = {}
    for name in LOAD_NAMES:
        value = scenario.get(name)
        if value is None or value == "":
            continue
        if name in CHOICES and value not in CHOICES[name]:
            continue
        out[name] = _text(value)
    return out


def _text(value: object) -> str:
    """A link value: whole numbers without a decimal point, other numbers to 6 figures."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(int(value)) if float(value).is_integer() else f"{float(value):.6g}"
    return str(value)


def load_link(scenario: Mapping[str, object], label: str = N_("Serve this under load")) -> dict:
    """A link to /load opening it on `scenario` (`label`: English, translated here); returns
    the query it carries."""
    query = load_query(scenario)
    st.page_link(
        LOAD_PAGE,
        label=_(label),
        icon=":material/speed:",
        query_params=query,
        help=_(
            "Continuous batching at a request rate: tail latency, max rate under SLOs, "
            "replicas and cost (docs/model.md, 'Serving under load')."
        ),
    )
    return query
