"""Keep widgets, the session and the share link in step (Streamlit glue around ui.core.params).

On a page's first run (and whenever a widget's state is missing) each widget is seeded from
the URL if the URL holds a valid value, else from the value the user last chose on another page
(so model and hardware follow the user between pages), else from the page's default. After the
widgets run, `publish` writes the canonical scenario back into the URL, so the address bar is
always a link that reproduces the page.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import streamlit as st

from ui.core.params import Param, parse_params, to_query

SHARED = "shared:"  # session-state prefix of values shared across pages


def raw_query() -> dict[str, list[str]]:
    """The current query string, every value of repeated keys kept."""
    return {key: st.query_params.get_all(key) for key in st.query_params}


def widget_key(page: str, name: str) -> str:
    return f"{page}:{name}"


def bind(
    page: str, params: Sequence[Param], defaults: Mapping[str, object], ignore: Sequence[str] = ()
) -> list[str]:
    """Seed missing widget state for `page`; returns warnings about dropped URL values."""
    from_url, warnings = parse_params(raw_query(), params, ignore)
    for p in params:
        key = widget_key(page, p.name)
        if key in st.session_state:
            continue
        value = from_url.get(p.name, _shared(p))
        if value is None:
            value = defaults.get(p.name)
        if value is not None:
            st.session_state[key] = p.write(value) if p.text_widget else value
    return warnings


def _shared(p: Param) -> object:
    """The value chosen on another page, if this page accepts it too."""
    value = st.session_state.get(SHARED + p.name)
    if value is None:
        return None
    try:
        return p.read(p.write(value))
    except ValueError:
        return None


def value(page: str, name: str) -> object:
    return st.session_state.get(widget_key(page, name))


def publish(
    page: str, params: Sequence[Param], values: Mapping[str, object], shared: Sequence[str] = ()
) -> dict[str, str]:
    """Write `values` as the page's canonical query string; remember `shared` ones for other
    pages. Returns the query dict (for the share link shown on the page)."""
    query = to_query(values, params)
    if dict(st.query_params) != query:
        st.query_params.from_dict(query)
    for name in shared:  # None too: a default (or a switched-off custom spec) is shared
        if name in values:
            st.session_state[SHARED + name] = values[name]
    return query
