"""One translation mechanism for the whole app: gettext catalogues (Babel), the language in use,
and its picker.

Pages and ui/ call `_("text")` for every user-visible string and `ngettext(singular, plural,
n)` for counted ones; text that lives in data (lesson bodies, navigation labels) is marked with
`N_("text")` where it is written and translated with `_()` where it is shown. Placeholders are
named (`_("Batch {batch}").format(batch=...)`) so a translation may move them; numbers are
formatted by ui.core.format before they are put in, the same in every language (GB, ms,
TFLOP/s stay as written).

Catalogues: `locales/<lang>/LC_MESSAGES/messages.po` (edited by translators) and the compiled
`messages.mo` beside it (read here), both committed; `python -m tools.i18n update` extracts the
messages (babel.cfg) into the .po files and `python -m tools.i18n compile` writes the .mo files
(tests/test_i18n.py checks that the committed .mo is the .po compiled, byte for byte).

The language: the link's `lang` on a session's first run, else the browser's language
(`st.context.locale`, then the Accept-Language header), else English; after that the sidebar
picker's choice, kept for the whole session. Every share link carries `lang` when it is not
English (ui.core.state.publish), and no page warns about it (ui.core.state.bind).
"""

from __future__ import annotations

import gettext
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from string import Formatter

import streamlit as st

import engine

LOCALES = Path(__file__).resolve().parents[2] / "locales"
DOMAIN = "messages"
DEFAULT = "en"
LANGUAGES = {"en": "English", "zh": "简体中文"}  # each named in its own language
PARAM = "lang"  # the share-link parameter every page accepts
CHOSEN = "shared:lang"  # session key: the language of this session
PICKER = "i18n:lang"  # the picker widget's key


def N_(message: str) -> str:
    """Mark `message` for extraction where it is written (data); `_()` translates it when shown.
    The engine marks its fixed messages the same way (engine/report/messages.py)."""
    return message


@cache
def catalogue(lang: str) -> gettext.NullTranslations:
    """The compiled catalogue of `lang` (English: the messages themselves)."""
    if lang == DEFAULT:
        return gettext.NullTranslations()
    with open(LOCALES / lang / "LC_MESSAGES" / f"{DOMAIN}.mo", "rb") as f:
        return gettext.GNUTranslations(f)


def language() -> str:
    """The language of this session ('en' before setup_page has chosen one)."""
    try:
        lang = st.session_state.get(CHOSEN, DEFAULT)
    except Exception:  # outside a Streamlit run (figure builders in plain tests)
        return DEFAULT
    return lang if lang in LANGUAGES else DEFAULT


def _(message: str) -> str:
    """`message` in the session's language."""
    return catalogue(language()).gettext(message)


def engine_text(text: str) -> str:
    """The engine's warning or reason in the session's language: each of its '; '-joined parts
    (or run of parts: a few messages hold '; ') that is one of the engine's marked messages
    (engine/report/messages.py) translated, a template's values kept as the engine wrote them;
    the rest as written. Linear in the text: no pattern backtracks."""
    span, templates = _marked()
    parts, shown, i = text.split("; "), [], 0
    while i < len(parts):  # the longest run of parts, at most `span`, that is one message
        for j in range(min(len(parts), i + span), i, -1):
            piece = "; ".join(parts[i:j])
            said = _one_message(piece, templates)
            if said != piece or j == i + 1:
                break
        shown.append(said)
        i = j
    return "; ".join(shown)


def _one_message(text: str, templates) -> str:
    if not text:
        return text  # not gettext's catalogue header
    found = _(text)
    if found != text:
        return found
    for template, pieces in templates:
        values = _values(pieces, text)
        if values is not None:
            return _(template).format(**values)
    return text


@cache
def _marked_of(messages: tuple[str, ...]):
    """The most '; '-joined parts one marked message spans, and each template's pieces: its
    (literal, field) pairs as Formatter.parse gives them."""
    span = 1 + max((m.count("; ") for m in messages), default=0)
    templates = []
    for m in messages:
        pieces = tuple((literal, field) for literal, field, _s, _c in Formatter().parse(m))
        if any(field for _, field in pieces):
            templates.append((m, pieces))
    return span, tuple(templates)


def _marked():
    return _marked_of(engine.marked_messages())


def _values(pieces, text: str) -> dict[str, str] | None:
    """The fields' values if `text` is the template of `pieces` filled in, else None: each value
    is non-empty, never holds '; ', and runs to the first place the next literal fits (the
    last literal ends the text)."""
    first, pending = pieces[0]
    if not text.startswith(first):
        return None
    values, pos = {}, len(first)
    for literal, field in pieces[1:]:
        if field is None:  # the template's last literal: it ends the text
            end = len(text) - len(literal) if text.endswith(literal) else -1
        else:
            end = text.find(literal, pos + 1) if literal else -1
        if end <= pos or not _take(values, pending, text[pos:end]):
            return None
        pos, pending = end + len(literal), field
    if pending is not None:  # the template ends with a field
        return values if _take(values, pending, text[pos:]) else None
    return values if pos == len(text) else None


def _take(values: dict[str, str], field: str, value: str) -> bool:
    """Record `field`'s value; False if it is empty, holds '; ' or differs from an earlier one."""
    return bool(value) and "; " not in value and values.setdefault(field, value) == value


def band_basis(band) -> str:
    """How an error band (engine.Band) was measured, in the session's language: its English
    template translated, then its numbers and file names filled in."""
    return _(band.template).format(**dict(band.fields)) if band.fields else _(band.template)


def ngettext(singular: str, plural: str, n: int) -> str:
    """The form of `singular`/`plural` for the count `n`, in the session's language."""
    return catalogue(language()).ngettext(singular, plural, n)


def from_locale(tag: str | None) -> str | None:
    """A supported language from a browser locale ('zh-CN', 'zh-Hans-TW' -> 'zh') or an
    Accept-Language header ('fr;q=0.9, zh-CN;q=0.8' -> 'zh': the first supported one)."""
    for part in (tag or "").split(","):
        code = part.split(";")[0].strip().lower().replace("_", "-").split("-")[0]
        if code in LANGUAGES:
            return code
    return None


def resolve(query: Mapping[str, object], chosen: str | None, locale: str | None, accept: str):
    """The session's language: the one already chosen, else the link's `lang`, else the
    browser's (`locale`, then the Accept-Language header `accept`), else English. Pure."""
    if chosen in LANGUAGES:
        return chosen
    given = query.get(PARAM)
    given = given[-1] if isinstance(given, list) and given else given
    if isinstance(given, str) and given.strip().lower() in LANGUAGES:
        return given.strip().lower()
    return from_locale(locale) or from_locale(accept) or DEFAULT


def _browser() -> tuple[str | None, str]:
    try:
        locale = st.context.locale
    except Exception:  # older clients send no locale
        locale = None
    try:
        accept = st.context.headers.get("Accept-Language") or ""
    except Exception:  # no websocket headers (tests)
        accept = ""
    return locale, accept


def choose() -> str:
    """Settle the session's language (first thing on every page); returns it."""
    query = {key: st.query_params.get_all(key) for key in st.query_params}
    lang = resolve(query, st.session_state.get(CHOSEN), *_browser())
    st.session_state[CHOSEN] = lang
    return lang


def _picked() -> None:
    st.session_state[CHOSEN] = st.session_state[PICKER]


def picker() -> str:
    """The language picker (in the sidebar); returns the language in use."""
    st.session_state[PICKER] = language()
    st.selectbox(
        ":material/language: " + _("Language"),
        tuple(LANGUAGES),
        format_func=LANGUAGES.__getitem__,
        key=PICKER,
        on_change=_picked,
    )
    return language()


def link_value() -> dict[str, str]:
    """What every share link carries for the language: `lang` unless it is English."""
    lang = language()
    return {} if lang == DEFAULT else {PARAM: lang}
