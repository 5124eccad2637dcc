"""Links from one page to the next step, each opening it on the first page's scenario.

`load_link`: the LLM serving page (/decode), the planner (/plan) and the training planner
(/train) open the serving-under-load page (/load) on their deployment: model (or its
config.json), accelerator (or the custom one), tp, pp, ep, attention DP, precision, KV
precision, profile, the page's overrides of the profile's assumptions (as /load and the planner
name them: ui.links.assumptions.SERVING_OVERRIDES) and the request's tokens (the planner adds
its percentile SLOs, price and target rate). `plan_link`: /load opens the planner on its model,
accelerator, tokens, SLOs (its p90 TTFT and p99 TPOT as the planner's limits), profile and its
overrides, price and target rate; the planner then searches TP, PP, precision and batch.
`profile_links`: a profile fitted on /accuracy opens /load and /plan with
it. `accuracy_link`: /train opens /accuracy's training section.

A custom profile travels as /accuracy's link carries it (ui.core.profiles): its name, every
serving assumption it sets and its band and ground (PROFILE_NAMES); a built-in one by its name
only. Each target's names are its own link's (ui/load/link.py, ui/plan/link.py,
ui/accuracy/link.py declare them; tests/test_page_links.py checks that every name here is one and
that each target reads a link with no warning). Whatever a target does not offer (a profile or
precision it has no entry for) is left out and takes its default there.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import streamlit as st

import engine
from ui.core import profiles
from ui.links.assumptions import SERVING_OVERRIDES
from ui.words.i18n import N_, _

LOAD_PAGE, PLAN_PAGE, ACCURACY_PAGE = "pages/load.py", "pages/plan.py", "pages/accuracy.py"
LOAD_NAMES = (
    "model",
    "model_config",
    "hardware",
    "tp",
    "pp",
    "ep",
    "attention_dp",
    "precision",
    "kv_precision",
    "profile",
    "input_tokens",
    "output_tokens",
    "custom_hw",
    "custom_model",
    "slo_ttft_ms_p90",
    "slo_tpot_ms_p99",
    "price",
    "target_rate",
    *SERVING_OVERRIDES,
)
PLAN_NAMES = ("model", "hardware", "input_tokens", "output_tokens", "ttft_ms", "tpot_ms")
PLAN_NAMES += ("profile", "prices", "target_rate", "custom_hw", "custom_model", *SERVING_OVERRIDES)
# A custom profile's values, band and ground (ui.core.profiles): on every page that takes one.
PROFILE_NAMES = (*engine.PROFILE_KEYS, *(p.name for p in profiles.band_params()))
CHOICES = {"precision": engine.PRECISIONS}


def _query(scenario: Mapping[str, object], names: Sequence[str]) -> dict[str, str]:
    """The `names` of `scenario` as link text (None, "" and choices a page lacks left out),
    with a custom profile's values when it names one."""
    if not profiles.is_builtin(scenario.get("profile", profiles.DEFAULT)):
        names = (*names, *PROFILE_NAMES)
    out = {}
    for name in names:
        value = scenario.get(name)
        if value is None or value == "":
            continue
        if name in CHOICES and value not in CHOICES[name]:
            continue
        out[name] = _text(value)
    return out


def _text(value: object) -> str:
    """A link value: on or off for a switch, whole numbers without a decimal point, other
    numbers to 6 figures, lists comma-separated."""
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, list | tuple):
        return ",".join(_text(v) for v in value)
    if isinstance(value, int | float):
        return str(int(value)) if float(value).is_integer() else f"{float(value):.6g}"
    return str(value)


def load_query(scenario: Mapping[str, object]) -> dict[str, str]:
    """/load's query for `scenario` (link names -> values; None and unknown names left out)."""
    return _query(scenario, LOAD_NAMES)


def plan_query(scenario: Mapping[str, object]) -> dict[str, str]:
    """The planner's query for `scenario`, in /load's names: its percentile SLOs become the
    planner's limits, its price the accelerator's price."""
    mapped = dict(scenario)
    mapped["ttft_ms"] = scenario.get("slo_ttft_ms_p90")
    mapped["tpot_ms"] = scenario.get("slo_tpot_ms_p99")
    price, hardware = scenario.get("price"), scenario.get("hardware")
    mapped["prices"] = f"{hardware}:{_text(price)}" if price and hardware else None
    return _query(mapped, PLAN_NAMES)


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


def plan_link(scenario: Mapping[str, object]) -> dict:
    """A link to the planner opening it on `scenario` (/load's names); returns its query."""
    query = plan_query(scenario)
    st.page_link(
        PLAN_PAGE,
        label=_("Plan the cheapest deployment for these SLOs"),
        icon=":material/table_chart:",
        query_params=query,
        help=_(
            "The planner searches TP, PP, precision and batch for this model, accelerator, "
            "request and SLOs, and ranks what meets them by cost."
        ),
    )
    return query


def profile_links(profile_values: Mapping[str, object]) -> list[dict]:
    """Links to /load and the planner with a fitted profile (its name, values, band and
    ground: `profile_values`, as /accuracy's own link carries them); returns their queries."""
    load = load_query(profile_values)
    st.page_link(
        LOAD_PAGE,
        label=_("Serve under load with this profile"),
        icon=":material/speed:",
        query_params=load,
        help=_("The serving-under-load page with this profile's assumptions and its band."),
    )
    plan = _query(profile_values, ("profile",))
    st.page_link(
        PLAN_PAGE,
        label=_("Plan deployments with this profile"),
        icon=":material/table_chart:",
        query_params=plan,
        help=_("The planner with this profile's assumptions and its band."),
    )
    return [load, plan]


def accuracy_link(section: str) -> dict:
    """A link to /accuracy's `section` ("training": the training model's measured error)."""
    query = {"section": section}
    st.page_link(
        ACCURACY_PAGE,
        label=_("How close the training model comes to measured runs"),
        icon=":material/straighten:",
        query_params=query,
        help=_("The megatron profile: its fitted values and its error in and out of sample."),
    )
    return query
