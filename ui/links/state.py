"""Keep widgets, the session and the share link in step (Streamlit glue around ui.links.params).

On a page's first run (and whenever a widget's state is missing) each widget is seeded from
the URL if the URL holds a valid value, else from the value the user last set on another page
(so model and hardware follow the user between pages; another page's default never does),
else from the parameter's declared default. After the widgets run, `publish` writes the
canonical link back into the URL, reading each widget's value from its session key
`<page>:<name>` (the page passes only what it computed), so the address bar is always a link
that reproduces the page, in the language it was shown in (`lang`, ui.words.i18n).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import streamlit as st

from ui.links.params import Link, Param, parse_params, to_query
from ui.words import i18n
from ui.words.i18n import _
from ui.words.text import plain

SHARED = "shared:"  # session-state prefix of values shared across pages
NOTES = "notes:"  # session-state prefix: what a link's reader changed, per widget key
CHOSEN = "chosen:"  # session-state prefix: a shared value the user set on this page (widget key)


def raw_query() -> dict[str, list[str]]:
    """The current query string, every value of repeated keys kept."""
    return {key: st.query_params.get_all(key) for key in st.query_params}


def widget_key(page: str, name: str) -> str:
    return f"{page}:{name}"


def bind(link: Link, seeds: Mapping[str, object] | None = None) -> list[str]:
    """Seed missing widget state for the page; returns warnings about dropped URL values.

    Args:
        seeds: values that replace the declared defaults (e.g. an older link's, mapped).
    """
    notes: dict[str, list[str]] = {}
    ignore = (*link.ignore, i18n.PARAM)  # every page accepts the language (ui.words.i18n)
    from_url, warnings = parse_params(
        raw=raw_query(), params=link.params, ignore=ignore, notes=notes
    )
    seeds = seeds or {}
    for p in link:
        key = link.key(p.name)
        if key in st.session_state:
            continue
        value = from_url.get(p.name, _shared(p))
        if value is None:
            value = seeds.get(p.name, p.default)
        if value is not None:
            st.session_state[key] = p.write(value) if p.text_widget else value
        if p.name in notes and p.name in from_url:  # kept until the field changes
            st.session_state[NOTES + key] = (st.session_state[key], notes[p.name])
    return warnings


def drawn_with(key: str, fallback: object = None) -> object:
    """The value a widget bound to `key` is created with (its `value=`, `index=`, `default=`):
    the one its state holds, which `bind` seeded from the link.

    A widget created with only its key takes Streamlit's own default (a number field's minimum,
    a select's first option) as the element's default. The browser paints the widget with that
    default and applies the state's value in a later render, so on a busy machine a share link's
    results stood beside a field still at its default. Created with the state's
    value, the widget's first paint is the value the script used.
    """
    return st.session_state.get(key, fallback)


def drawn_index(key: str, options: Sequence[object]) -> int:
    """`drawn_with` for a select: the index of the state's value among `options` (else 0)."""
    value = st.session_state.get(key)
    return options.index(value) if value in options else 0


def link_notes(key: str) -> list[str]:
    """What the link's reader changed in the value the field `key` was seeded with (duplicates
    dropped, an id read loosely, the last of two prices kept), while the field still holds it."""
    seeded, notes = st.session_state.get(NOTES + key, (None, []))
    return notes if notes and st.session_state.get(key) == seeded else []


def show_link_notes(link: Link, name: str, where=None) -> None:
    """The link's changes to parameter `name`, beside its field (plain text, inert)."""
    where = st if where is None else where
    for text in link_notes(link.key(name)):
        where.warning(_("Link value changed: {change}.").format(change=plain(text)), icon="🔗")


def _shared(p: Param) -> object:
    """The value chosen on another page, if this page accepts it too."""
    value = st.session_state.get(SHARED + p.name)
    if value is None:
        return None
    try:
        return p.read(p.write(value))
    except ValueError:
        return None


def publish(
    link: Link, values: Mapping[str, object] | None = None, shared: Sequence[str] = ()
) -> dict[str, str]:
    """Write the page's canonical query string; remember `shared` values for other pages.

    Args:
        values: what the page computed (None: not in the link); every other parameter held
            by a "value" widget is read from its session key, text and link-only ones are
            left out.
        shared: names whose value the other pages start from (ui.links.link_params.SHARED_NAMES).

    Returns:
        The query dict (for the share link shown on the page).
    """
    values = dict(values or {})
    for p in link:
        if p.name not in values and p.widget == "value":
            values[p.name] = st.session_state.get(link.key(p.name))
    query = to_query(values, link.params) | i18n.link_value()  # `lang` unless English
    if dict(st.query_params) != query:
        st.query_params.from_dict(query)
    for name in shared:
        if name in values and _chosen(link, name, values[name]):
            st.session_state[SHARED + name] = values[name]
    return query


def _chosen(link: Link, name: str, value: object) -> bool:
    """Whether the page's `value` of `name` is the user's to share with the other pages: it
    differs from this page's own default, or it did once this session (then a value set back,
    None for a custom spec switched off, is shared too). A page's default is never shared: the
    tutorial's profile and assumptions, the defaults of Solve, do not become /decode's, /load's
    or /plan's (whose defaults are the calibrated profile's) because Solve was opened first."""
    if name not in link:
        return True
    key = CHOSEN + link.key(name)
    if key not in st.session_state and not _same(link[name], value, link[name].default):
        st.session_state[key] = True
    return key in st.session_state


def _same(p: Param, a: object, b: object) -> bool:
    """`a` and `b` are the same value of `p` (compared as the link writes them)."""
    if a is None or b is None:
        return a is b
    try:
        return p.write(a) == p.write(b)
    except (TypeError, ValueError):
        return a == b
