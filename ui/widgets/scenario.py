"""The start every scenario page shares: bind the link, draw the custom editors, build the
catalogue with the custom entries, and later show what was dropped or refused (main area)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import streamlit as st

from engine import Catalog
from ui.core import frame
from ui.links import custom, state
from ui.links.params import Link
from ui.widgets.editors import custom_editors, show_custom_errors


@dataclass(frozen=True)
class Start:
    """What a page needs after binding: the catalogue in use and where its pickers go."""

    page: str
    cat: Catalog
    warnings: list[str]
    pickers: object  # the sidebar container above the editors
    custom_hw: str | None
    custom_model: str | None


def start(link: Link, base: Catalog, seeds: Mapping[str, object] | None = None) -> Start:
    """Seed widgets from the link (`seeds` replace declared defaults), draw the custom editors
    below the (empty) pickers."""
    warnings = state.bind(link, seeds)
    pickers, editors = st.sidebar.container(), st.sidebar.container()
    with editors:
        hw, model = custom_editors(link.page)
    return Start(
        page=link.page,
        cat=custom.with_custom(base, hw, model),
        warnings=warnings,
        pickers=pickers,
        custom_hw=hw,
        custom_model=model,
    )


def show_notes(s: Start) -> None:
    """Ignored link values, custom-spec problems and catalogue notes, in the main area."""
    frame.show_param_warnings(s.warnings)
    show_custom_errors(s.page, s.cat)
    frame.show_catalog_notes(s.cat)
