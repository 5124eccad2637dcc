"""One translation mechanism for the whole app: gettext catalogues (Babel), the language in use,
and its picker.

Pages and ui/ call `_("text")` for every user-visible string and `ngettext(singular, plural,
n)` for counted ones; text that lives in data (lesson bodies, navigation labels) is marked with
`N_("text")` where it is written and translated with `_()` where it is shown. What the engine
says beside its numbers is data too (engine.Message: a code, an English template, its values):
`message_text` shows it in the reader's language by its template; pages tell messages apart by
their code, never by their English. Placeholders are named (`_("Batch {batch}").format(
batch=...)`) so a translation may move them; numbers are formatted by ui.words.format before
they are put in, the same in every language (GB, ms, TFLOP/s stay as written).

Catalogues: `locales/<lang>/LC_MESSAGES/messages.po` (edited by translators) and the compiled
`messages.mo` beside it (read here), both committed; `python -m tools.i18n update` extracts the
messages (babel.cfg) into the .po files and `python -m tools.i18n compile` writes the .mo files
(tests/test_i18n.py checks that the committed .mo is the .po compiled, byte for byte).

The language: the link's `lang` on a session's first run, else the browser's language
(`st.context.locale`, then the Accept-Language header), else English; after that the sidebar
picker's choice, kept for the whole session. Every share link carries `lang` when it is not
English (ui.links.state.publish), and no page warns about it (ui.links.state.bind).
"""

from __future__ import annotations

import gettext
from collections.abc import Mapping
from functools import cache
from pathlib import Path

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
    The engine's messages are declared as engine.MessageKind (its template is the msgid) and
    shown with `message_text`."""
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


def message_text(message: engine.Message) -> str:
    """What the engine says (an engine.Message), in the session's language: its English
    template translated, then its values filled in as the engine formatted them (numbers,
    names); a template the catalogue lacks stays English."""
    return _(message.template).format_map(message.fields)


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


# Streamlit draws its file uploader's words itself, in English ("Upload", "2MB per file • CSV")
# and offers no way to translate them: in another language the size line is hidden (every
# uploader's label states its limit in the reader's language) and the button's word is
# replaced by a style rule. Not replaceable: the words shown while a file is dragged over the
# field, and Streamlit's own refusal of a file over the size limit ("File must be … or smaller").
UPLOADER_STYLE = """<style>
[data-testid="stFileUploaderDropzoneInstructions"] {{ display: none; }}
[data-testid="stFileUploaderDropzone"] button [data-testid="stMarkdownContainer"] p {{
  font-size: 0;
}}
[data-testid="stFileUploaderDropzone"] button [data-testid="stMarkdownContainer"] p::after {{
  content: "{upload}";
  font-size: 14px;
}}
</style>"""


def widget_words() -> None:
    """Streamlit's own widget words in the session's language where a style can put them
    (UPLOADER_STYLE); nothing in English. Call once per run, after `choose`."""
    if language() == DEFAULT:
        return
    upload = "".join(c for c in _("Upload") if c not in '"\\<>{}')  # inert inside the rule
    st.html(UPLOADER_STYLE.format(upload=upload))


def link_value() -> dict[str, str]:
    """What every share link carries for the language: `lang` unless it is English."""
    lang = language()
    return {} if lang == DEFAULT else {PARAM: lang}
