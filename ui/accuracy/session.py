"""The accuracy page's measurements and profiles in the session (Streamlit glue).

The shipped measurements until a valid upload replaces them (a file with problems changes
nothing), the profiles on offer as TOML text (built-in, then this session's fitted ones), the
fit button's callback and the cached validation. Session keys: `acc:<name>`.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

import engine
from engine import MeasurementsError, catalogue_problems, profile_from_toml, profile_to_toml
from ui.core import frame

SHIPPED = frame.ROOT / "data" / "measurements" / "trtllm-v0.6.1.csv"
ss = st.session_state


@st.cache_data(max_entries=32, show_spinner=False)
def validated(data: bytes, label: str, profile_toml: str) -> pd.DataFrame:
    """The measurements with the profile's predictions (engine.validate), cached."""
    rows = engine.parse_measurements(data, label)
    return engine.validate(rows, profile_from_toml(profile_toml, "profile", origin="page"))


def profiles() -> dict[str, str]:
    """Every profile on offer (built-in, then this session's custom ones) as TOML text."""
    out = {name: profile_to_toml(engine.get_profile(name)) for name in engine.profile_names()}
    return out | ss.get("acc:custom", {})


def check(data: bytes, label: str) -> list[str]:
    """Why an uploaded file cannot be used (its rows' problems, then unknown catalogue ids)."""
    try:
        rows = engine.parse_measurements(data, label)
    except MeasurementsError as exc:
        return exc.problems
    return list(catalogue_problems(rows, frame.catalog()).values())


def fit() -> None:
    """The fit button's callback: a team profile fitted on the measurements, now chosen."""
    start = profile_from_toml(profiles()[ss["acc:profile"]], "start", origin="page")
    rows = engine.parse_measurements(ss["acc:data"], ss["acc:label"])
    try:
        team = engine.calibrate(rows, start, name="team")
    except ValueError as exc:
        ss["acc:errors"] = [f"cannot fit: {exc}"]
        return
    ss["acc:custom"] = ss.get("acc:custom", {}) | {"team": profile_to_toml(team)}
    ss["acc:before"] = start.name
    ss["acc:profile"] = "team"


def load_shipped() -> None:
    """The shipped measurements in use (and no upload problems)."""
    ss["acc:data"], ss["acc:label"], ss["acc:errors"] = SHIPPED.read_bytes(), SHIPPED.name, []
