"""Catalogue search: every word of the query, in any order, in an entry's id, name, aliases or
group, ignoring case and punctuation ("llama 70" finds Llama-3.1-70B; "h100sxm" finds
"H100 SXM5")."""

from __future__ import annotations

from engine import normalise_id
from ui.links.params import ParamError
from ui.words.i18n import _


def matches(query: str, *fields: str) -> bool:
    """True when each whitespace-separated word of `query` occurs in the joined `fields`, as
    typed or with punctuation and spaces removed; an empty query matches everything."""
    hay = " ".join(fields)
    low, flat = hay.lower(), normalise_id(hay)
    return all(w in low or (normalise_id(w) or "\0") in flat for w in query.lower().split())


def search_text(text: str) -> str:
    """The `q=` reader: the search text, trimmed (at most 100 characters)."""
    if len(text) > 100:
        raise ParamError(_("search text longer than 100 characters"))
    return text.strip()


def keep(spec, group: str, query: str, picked: list) -> bool:
    """True when `spec` matches the search text and its group (vendor or task) is picked."""
    return matches(query, spec.id, spec.name, *spec.aliases, group) and (
        not picked or group in picked
    )
