"""The start every scenario page shares: bind the link, draw the custom editors, build the
catalogue with the custom entries, and later show what was dropped or refused (main area)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import streamlit as st

from engine import Catalog
from ui.core import custom, frame, state
from ui.core.params import Param
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

    @property
    def custom(self) -> dict[str, str | None]:
        """The custom specs as share-link values."""
        return {"custom_hw": self.custom_hw, "custom_model": self.custom_model}


def start(
    page: str, base: Catalog, params: Sequence[Param], defaults: Mapping[str, object]
) -> Start:
    """Seed widgets from the link, draw the custom editors below the (empty) pickers."""
    warnings = state.bind(page, params, defaults)
    pickers, editors = st.sidebar.container(), st.sidebar.container()
    with editors:
        hw, model = custom_editors(page)
    return Start(page, custom.with_custom(base, hw, model), warnings, pickers, hw, model)


def show_notes(s: Start) -> None:
    """Ignored link values, custom-spec problems and catalogue notes, in the main area."""
    frame.show_param_warnings(s.warnings)
    show_custom_errors(s.page, s.cat)
    frame.show_catalog_notes(s.cat)
