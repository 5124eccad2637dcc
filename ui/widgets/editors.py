"""The custom accelerator and model editors (sidebar) and what they report in the main area.

A typo never changes the scenario: the page keeps the last valid custom spec and says, in the
main area, what is wrong and how to write it. The spec and its "Use it" switch are one state
for the whole session (`custom:<name>`), so switching it off on one page switches it off on
every page.

An editor's fields exist only while it is open (a lazy expander: opening it reruns the page):
closed, the page uses the session's last valid spec and draws none of its 12 fields. Both
editors sit on every scenario page, and their fields were most of what the browser drew before
a page's first chart.
"""

from __future__ import annotations

import streamlit as st

from engine import CatalogError
from ui.links import custom
from ui.links.params import ParamError
from ui.links.state import drawn_with, widget_key
from ui.words.i18n import N_, _
from ui.words.text import plain

STORE = "custom:"  # session keys shared by every page: the last valid spec and its switch
UNITS_HINT = N_(
    "Units as datasheets write them: TFLOP/s, TFLOPS or TOPS; TB/s, TBps or GB/s; GB or GiB; "
    "ms or us; W."
)
TITLES = {"custom_hw": N_("Custom accelerator"), "custom_model": N_("Custom model")}


def _seed(page: str, name: str, fields: tuple) -> str:
    """The session's last valid spec (the link's on a first visit); seeds missing widgets."""
    store = STORE + name
    if store not in st.session_state:  # first page of the session: the link's value
        st.session_state[store] = st.session_state.get(widget_key(page, name)) or ""
        st.session_state[store + ".on"] = bool(st.session_state[store])
        st.session_state[store + ".linked"] = bool(st.session_state[store])
    last = st.session_state[store]
    try:
        seeded = custom.decode(last, fields)
    except ParamError:
        seeded = {}
    on_key = widget_key(page, f"{name}.on")
    if on_key not in st.session_state:
        st.session_state[on_key] = st.session_state[store + ".on"]
    for field, _label, example in fields:
        key = widget_key(page, f"{name}.{field}")
        example = _(example) if field == "name" else example  # a name: in the session's language
        if key not in st.session_state:
            st.session_state[key] = seeded.get(field, example) if last else example
    return last


def _editor(page: str, name: str, fields: tuple, build) -> tuple[str | None, str | None]:
    """One editor; returns (the spec string in use or None, an error message or None)."""
    last = _seed(page, name, fields)
    box = st.expander(  # open at first if the session's link brought a spec; the same all along:
        _(TITLES[name]),  # a changed `expanded` would make a new widget, reopened or closed
        expanded=st.session_state[STORE + name + ".linked"],
        key=widget_key(page, f"{name}.open"),
        on_change="rerun",
    )
    on = widget_key(page, f"{name}.on")
    keys = {field: widget_key(page, f"{name}.{field}") for field, _label, _example in fields}
    if box.open:
        with box:  # the fields keep their text while the editor is closed (persist_state)
            enabled = st.toggle(
                _("Use it"), bool(drawn_with(on, False)), key=on, persist_state="page"
            )
            values = {
                field: st.text_input(
                    _(label),
                    drawn_with(keys[field], ""),
                    key=keys[field],
                    max_chars=80,
                    disabled=not enabled,
                    persist_state="page",
                )
                for field, label, _example in fields
            }
            st.caption(_(UNITS_HINT))
    else:  # closed: no field drawn; the text they hold is read and checked alike
        enabled = bool(st.session_state.get(on))
        values = {field: st.session_state.get(key, "") for field, key in keys.items()}
    text, error = custom.encode(values, fields), None
    try:
        build(values)
        last = text
    except (CatalogError, ValueError) as exc:
        error = str(getattr(exc, "message", exc))
    st.session_state[STORE + name], st.session_state[STORE + name + ".on"] = last, enabled
    used = last if enabled and last else None
    st.session_state[widget_key(page, name)] = used  # the link's value (None: not in it)
    return used, error if enabled else None


def custom_editors(page: str) -> tuple[str | None, str | None]:
    """Both editors (call inside the sidebar); returns the valid spec strings in use.

    Problems are kept for `show_custom_errors`, which draws them in the main area.
    """
    errors = {}
    hw, errors["custom_hw"] = _editor(
        page=page, name="custom_hw", fields=custom.HW_FIELDS, build=custom.hardware_from
    )
    model, errors["custom_model"] = _editor(
        page=page, name="custom_model", fields=custom.MODEL_FIELDS, build=custom.model_from
    )
    st.session_state[widget_key(page, "custom.errors")] = errors
    return hw, model


def custom_error_lines(errors: dict, used: dict) -> list[str]:
    """Main-area messages (plain text, user input made inert) for the editors' problems."""
    lines = []
    for name, error in errors.items():
        if not error:
            continue
        kept = used.get(name)
        still = (
            _("Still using the last valid one ({name}).").format(name=plain(kept))
            if kept
            else _("No valid one yet, so it is not in the lists.")
        )
        line = _("**{title}: not updated.** {error}. {still}")
        lines.append(line.format(title=_(TITLES[name]), error=plain(error), still=still))
    return lines


def show_custom_errors(page: str, cat) -> None:
    """The editors' problems, in the main area (visible with the editor collapsed)."""
    errors = st.session_state.get(widget_key(page, "custom.errors"), {})
    used = {
        "custom_hw": cat.hardware[custom.CUSTOM_HW_ID].name
        if custom.CUSTOM_HW_ID in cat.hardware
        else None,
        "custom_model": cat.models[custom.CUSTOM_MODEL_ID].name
        if custom.CUSTOM_MODEL_ID in cat.models
        else None,
    }
    for line in custom_error_lines(errors, used):
        st.error(line, icon="🚫")
