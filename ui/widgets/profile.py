"""The profile picker of the scenario pages (Solve, Sweep, Compare): which profile, and edited?

Picking a profile seeds the page's assumption widgets with its values; the widgets stay
editable, and then the page says "profile X, edited" and names the edits (ui.core.profiles:
the link's profile, seeds, edits and the words). The pages whose assumptions are not seeded
from the profile (/load, /plan) read a link's custom profile with `from_link` and offer it
beside the built-ins (`options`).
"""

from __future__ import annotations

from collections.abc import Sequence

import streamlit as st

import engine
from ui.core import profiles
from ui.core.profiles import TUTORIAL, link_profile, named, seeds
from ui.links.params import Link
from ui.links.state import SHARED, drawn_index, raw_query, widget_key
from ui.words.i18n import _

CUSTOM = "profile.custom"  # session key: the custom profile a link carried (shared by pages)


def start(page: str, extra: Sequence[str] = ()) -> tuple[engine.Profile | None, list[str]]:
    """Before binding the page: read the link's profile once; when the link names a profile,
    its values seed the assumption widgets the link leaves out (not another page's values).

    Returns:
        (the custom profile in use this session, if any; warnings about the link's profile).
    """
    key = widget_key(page, "profile")
    query = raw_query()
    warnings: list[str] = []
    if key not in st.session_state and "profile" in query:
        profile, warnings = link_profile(query, TUTORIAL)
        if profile.origin != "built-in":
            st.session_state[CUSTOM] = profile
        st.session_state[key] = profile.name
        for name, value in seeds(profile, extra).items():
            if name not in query:
                st.session_state[widget_key(page, name)] = value
    elif key not in st.session_state and SHARED + "profile" in st.session_state:
        # the profile chosen on another page: its values for the widgets no page has set yet
        shared = st.session_state[SHARED + "profile"]
        profile = named(shared, st.session_state.get(CUSTOM), TUTORIAL)
        for name, value in seeds(profile, extra).items():
            if name not in query and SHARED + name not in st.session_state:
                st.session_state[widget_key(page, name)] = value
    # A custom profile's warning (the link gives values); a bad name is parse_params' to say.
    custom = warnings if any(query.get(k) for k in engine.PROFILE_KEYS) else []
    return st.session_state.get(CUSTOM), custom


def from_link(page: str) -> tuple[engine.Profile | None, list[str]]:
    """Before binding a page whose assumptions are not seeded from its profile (/load has none,
    /plan's are blank overrides): the custom profile the link names by its values, kept for the
    session as `start` keeps it; no widget is seeded.

    Returns:
        (the custom profile in use this session, if any; warnings about the link's profile).
    """
    query = raw_query()
    warnings: list[str] = []
    if widget_key(page, "profile") not in st.session_state and "profile" in query:
        profile, warnings = link_profile(query)
        if profile.origin != "built-in":
            st.session_state[CUSTOM] = profile
    custom = warnings if any(query.get(k) for k in engine.PROFILE_KEYS) else []
    return st.session_state.get(CUSTOM), custom


def unused_values(link: Link) -> list[str]:
    """A link's assumption values this page cannot use: with a built-in profile, the values of
    the profile keys the page has no field for (/load and /plan take the ten overrides and run
    the profile's other assumptions as fitted; a custom profile's link carries its values under
    its own name). Each is said, not
    dropped without a word (the page's link is then written without them)."""
    query = raw_query()
    name = (query.get("profile") or [link["profile"].default])[-1]
    unused = [
        k for k in engine.PROFILE_KEYS if query.get(k) and k in link and link[k].widget == "link"
    ]
    if not unused or not profiles.is_builtin(name):
        return []
    values = ", ".join(f"{k}={query[k][-1][:40]}" for k in unused)
    text = _(
        "{values}: not used: profile {profile} is built in and runs as fitted here (this page "
        "has no field for its assumptions)"
    )
    return [text.format(values=values, profile=name.strip().lower())]


def options(custom: engine.Profile | None) -> list[str]:
    """The profiles a picker offers: the built-ins, then this session's custom one."""
    return [*engine.profile_names(), *([custom.name] if custom is not None else [])]


def current(page: str, custom: engine.Profile | None) -> engine.Profile:
    """The profile the page's picker holds."""
    return named(st.session_state.get(widget_key(page, "profile"), TUTORIAL), custom, TUTORIAL)


def _apply(page: str, custom: engine.Profile | None, extra: Sequence[str]) -> None:
    """The picker's callback: the chosen profile's values into the assumption widgets."""
    for name, value in seeds(current(page, custom), extra).items():
        st.session_state[widget_key(page, name)] = value


def picker(page: str, custom: engine.Profile | None, extra: Sequence[str] = ()) -> engine.Profile:
    """The profile selectbox (built-ins, then the link's custom profile); returns the profile."""
    offered = options(custom)
    key = widget_key(page, "profile")
    if st.session_state.get(key) not in offered:
        st.session_state[key] = TUTORIAL
    st.selectbox(
        _("Profile (assumptions)"),
        offered,
        drawn_index(key, offered),  # first paint: the linked profile (ui.links.state)
        key=key,
        format_func=engine.profile_label,
        on_change=_apply,
        args=(page, custom, tuple(extra)),
        help=_(
            "tutorial: the tutorial's defaults (its published figures); trtllm: fitted on "
            "TensorRT-LLM measurements (docs/model.md, Accuracy). Choosing one sets the "
            "assumptions below; edit them freely (the page then says 'edited')."
        ),
    )
    return current(page, custom)
