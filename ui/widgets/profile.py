"""The profile picker of the scenario pages (Solve, Sweep, Compare): which profile, and edited?

Picking a profile seeds the page's assumption widgets with its values; the widgets stay
editable, and then the page says "profile X, edited" and names the edits (ui.core.profiles:
the link's profile, seeds, edits and the words).
"""

from __future__ import annotations

from collections.abc import Sequence

import streamlit as st

import engine
from ui.core.i18n import _
from ui.core.profiles import DEFAULT, link_profile, named, seeds
from ui.core.state import SHARED, drawn_index, widget_key

CUSTOM = "profile.custom"  # session key: the custom profile a link carried (shared by pages)


def start(page: str, extra: Sequence[str] = ()) -> tuple[engine.Profile | None, list[str]]:
    """Before binding the page: read the link's profile once; when the link names a profile,
    its values seed the assumption widgets the link leaves out (not another page's values).

    Returns:
        (the custom profile in use this session, if any; warnings about the link's profile).
    """
    key = widget_key(page, "profile")
    query = {k: st.query_params.get_all(k) for k in st.query_params}
    warnings: list[str] = []
    if key not in st.session_state and "profile" in query:
        profile, warnings = link_profile(query)
        if profile.origin != "built-in":
            st.session_state[CUSTOM] = profile
        st.session_state[key] = profile.name
        for name, value in seeds(profile, extra).items():
            if name not in query:
                st.session_state[widget_key(page, name)] = value
    elif key not in st.session_state and SHARED + "profile" in st.session_state:
        # the profile chosen on another page: its values for the widgets no page has set yet
        profile = named(st.session_state[SHARED + "profile"], st.session_state.get(CUSTOM))
        for name, value in seeds(profile, extra).items():
            if name not in query and SHARED + name not in st.session_state:
                st.session_state[widget_key(page, name)] = value
    # A custom profile's warning (the link gives values); a bad name is parse_params' to say.
    custom = warnings if any(query.get(k) for k in engine.PROFILE_KEYS) else []
    return st.session_state.get(CUSTOM), custom


def current(page: str, custom: engine.Profile | None) -> engine.Profile:
    """The profile the page's picker holds."""
    return named(st.session_state.get(widget_key(page, "profile"), DEFAULT), custom)


def _apply(page: str, custom: engine.Profile | None, extra: Sequence[str]) -> None:
    """The picker's callback: the chosen profile's values into the assumption widgets."""
    for name, value in seeds(current(page, custom), extra).items():
        st.session_state[widget_key(page, name)] = value


def picker(page: str, custom: engine.Profile | None, extra: Sequence[str] = ()) -> engine.Profile:
    """The profile selectbox (built-ins, then the link's custom profile); returns the profile."""
    options = [*engine.profile_names(), *([custom.name] if custom is not None else [])]
    key = widget_key(page, "profile")
    if st.session_state.get(key) not in options:
        st.session_state[key] = DEFAULT
    st.selectbox(
        _("Profile (assumptions)"),
        options,
        drawn_index(key, options),  # first paint: the linked profile (ui.core.state)
        key=key,
        on_change=_apply,
        args=(page, custom, tuple(extra)),
        help=_(
            "tutorial: the tutorial's defaults (its published figures); trtllm: fitted on "
            "TensorRT-LLM measurements (docs/model.md, Accuracy). Choosing one sets the "
            "assumptions below; edit them freely (the page then says 'edited')."
        ),
    )
    return current(page, custom)
