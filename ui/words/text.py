"""Text every page shows: user and file text made inert for markdown (`plain`), and the FLOP
counting note (`FLOP_NOTE`) beside every intensity and FLOP/s figure.

Catalogue names, custom specs, uploaded file names and engine messages may quote any of them;
everything a page writes into st.markdown, st.warning, st.caption or a title goes through
`plain` first. HTML is already escaped by Streamlit; figure labels are escaped by the builders.
"""

from __future__ import annotations

import re

from ui.words.i18n import N_, _

# What can make links, images, code, HTML, maths or emphasis: backslashed.
_MARKDOWN = re.compile(r"([\\`\[\]()<>!$*_~#|])")
# What GFM turns into a link by itself (after escapes are read): a bare URL, www., an e-mail.
_AUTOLINK = re.compile(r"(?i)(?<=[a-z])(?=://)|(?<=www)(?=\.)|(?=@)")
WORD_JOINER = "\u2060"  # invisible, not a space: breaks the autolink patterns
FLOP_NOTE = {  # marked for translation: shown through `_()` (ui.words.i18n)
    "catalog": N_("FLOPs as catalogued (CNN figures count 1 FLOP per MAC; transformers 2)"),
    "mac2": N_("FLOPs normalised to 2 per multiply-accumulate (datasheet convention)"),
}
BOUND = {  # engine bottlenecks, as shown
    "memory": N_("memory-bound"),
    "compute": N_("compute-bound"),
    "communication": N_("communication-bound"),  # a collective (all_reduce, all-to-all)
    "overhead": N_("fixed overhead"),  # the step's launch and per-layer overheads
}


def bound(bottleneck: object) -> str:
    """An engine bottleneck ("memory", "compute", "communication", "overhead") as shown:
    "memory-bound", in the session's language (anything else as given)."""
    text = str(bottleneck)
    return _(BOUND[text]) if text in BOUND else text


def plain(text: object) -> str:
    """User or file text made inert for st.markdown/st.warning: markdown syntax backslashed, so
    `[x](javascript:...)` shows as text, and an invisible word joiner after `http`, `www` and
    before `@`, so `http://x.example`, `www.x.example` and `a@x.example` never become links
    (HTML is already escaped by Streamlit)."""
    return _AUTOLINK.sub(WORD_JOINER, _MARKDOWN.sub(r"\\\1", str(text)))
