"""What the engine says beside its numbers, as data: a stable code, an English template and
its fields (the GNU gettext convention of a message keyed by its English text; named fields as
Python's `str.format`).

The engine's JSON, CSV and CLI output are contracts in English: `str(message)` is that text,
`template.format(**fields)`. The app shows a message in the reader's language from its template
(the catalogue's msgids are the templates: ui.words.i18n.message_text) and tells messages apart by
`code`; nothing reads the English back. Each kind of message is declared once, where the
engine says it, as a module-level `MessageKind(code, template)`; calling the kind builds a
Message with its field names checked. `engine.message_kinds()` lists every kind
(engine/__init__.py), and the app's extraction collects the templates (babel.cfg: the keyword
`MessageKind:2`).

A DataFrame keeps its messages as data too: a `warnings` cell holds a tuple of Messages (empty:
none), a `reason` cell one Message (missing: none); `english` turns such a column into the
English text the CSV and JSON writers print (engine/report/export.py).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from string import Formatter
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # pandas loads with the first frame, keeping `import engine` fast
    import pandas as pd

SEPARATOR = "; "  # between the messages of one cell or line, as the CSV has always joined them
CODE = re.compile(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)*")  # snake_case


@dataclass(frozen=True, slots=True)
class Message:
    """One thing the engine says: `code` (stable, snake_case: what the app tells apart), the
    English `template` with {named} fields, and the fields' values as text (numbers already
    formatted, names as written). `str()` is the English."""

    code: str
    template: str
    fields: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # its own copy, never changed; a plain dict, so a message pickles (Streamlit's caches),
        # deep-copies and goes through dataclasses.asdict like any other value
        object.__setattr__(self, "fields", dict(self.fields))

    def __str__(self) -> str:
        return self.template.format_map(self.fields)

    def __hash__(self) -> int:  # messages key dicts and a frame's categories
        return hash((self.code, self.template, tuple(self.fields.items())))


@dataclass(frozen=True, slots=True)
class MessageKind:
    """A kind of message, declared once: its code and English template. `kind(**fields)` is
    the Message with those values (text; exactly the template's field names)."""

    code: str
    template: str

    def __post_init__(self) -> None:
        if not CODE.fullmatch(self.code):
            raise ValueError(f"message code {self.code!r} is not snake_case")
        self.fields  # noqa: B018 (the template parses, or ValueError here, at import)

    @property
    def fields(self) -> tuple[str, ...]:
        """The template's field names, in order of first use."""
        names = (name for _, name, _, _ in Formatter().parse(self.template) if name is not None)
        return tuple(dict.fromkeys(names))

    def __call__(self, **fields: str) -> Message:
        if set(fields) != set(self.fields):
            raise ValueError(
                f"{self.code} takes the fields {sorted(self.fields)}, got {sorted(fields)}"
            )
        if not all(isinstance(value, str) for value in fields.values()):
            raise TypeError(f"{self.code}: field values are formatted text")
        return Message(self.code, self.template, fields)


def text(said: Message | tuple[Message, ...] | None) -> str:
    """The English of a message, of messages ('; '-joined) or of none ('')."""
    if said is None or isinstance(said, float):  # a missing cell of a frame: NaN
        return ""
    if isinstance(said, Message):
        return str(said)
    return SEPARATOR.join(map(str, said))


def _said(value: object) -> bool:
    """Whether a cell holds what the engine said: a Message or a tuple of them."""
    if isinstance(value, tuple):
        return all(isinstance(m, Message) for m in value)
    return isinstance(value, Message)


def english(column: pd.Series) -> pd.Series:
    """A column of messages (a Message, a tuple of them or nothing per cell) as the English
    text of each cell; any other column as it is. A categorical column stays categorical (each
    category's text is made once)."""
    import pandas as pd

    if isinstance(column.dtype, pd.CategoricalDtype):
        categories = column.cat.categories
        if not len(categories) or not all(map(_said, categories)):
            return column
        labels = [text(c) for c in categories] + [""]  # the last: a missing cell (code -1)
        unique = list(dict.fromkeys(labels))
        remap = np.array([unique.index(label) for label in labels])
        cells = pd.Categorical.from_codes(remap[column.cat.codes.to_numpy()], categories=unique)
        return pd.Series(cells, index=column.index, name=column.name)
    if column.dtype != object or not column.map(_said).any():
        return column
    return column.map(lambda v: text(v) if v is None or _said(v) else v)
