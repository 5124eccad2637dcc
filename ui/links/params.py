"""Share-link parameters, declared once per page: read an untrusted query string into checked
values, seed the widgets from them, and write the canonical link back.

Pure, no streamlit. A page declares each parameter once, as a `Param` in its `Link`: the name,
the reader (its type and, for numbers, the range: a `Number` reader's `lo`..`hi` is also the
range the page's widget allows, ui.widgets.pickers.number_input), the writer, the default, and
how the widget holds it. `parse_params` keeps what is valid and drops what is not with a
warning that names the parameter and the reason; `to_query` writes the canonical form back, so
a link always reproduces the page (ui.links.state is the Streamlit glue). The names (`model`,
`hardware`, `batch`, `batches`, `precision`, `efficiency`, ...) are a public contract
documented in the README and recorded in tests/fixtures/contracts.json.
"""

from __future__ import annotations

import contextvars
import math
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass

from engine import check_whole
from ui.words.i18n import _

MAX_VALUE_CHARS = 2000  # a longer value is dropped unread
MAX_PARAMS = 80  # more distinct keys than this: the rest are ignored (/train declares 49)
MAX_LIST_ITEMS = 4096
WIDGETS = ("value", "text", "link")  # how a page holds a parameter: see `Param.widget`


class ParamError(ValueError):
    """One parameter's value is not acceptable; the message says why (no user text echoed raw)."""


_NOTES: contextvars.ContextVar[list[str] | None] = contextvars.ContextVar("notes", default=None)


def note(text: str) -> None:
    """Say that a reader accepted a value but changed it (a duplicate dropped, an id read
    loosely, the last of two prices kept): `read_noted` collects it, so the page can say so
    beside the parameter's field (ui.links.state.show_link_notes); elsewhere it is ignored."""
    notes = _NOTES.get()
    if notes is not None:
        notes.append(text)


def read_noted(read: Callable[[str], object], text: str) -> tuple[object, list[str]]:
    """`read(text)` and the notes its reader made (ParamError and ValueError propagate)."""
    token = _NOTES.set([])
    try:
        value = read(text)
        return value, list(_NOTES.get() or ())
    finally:
        _NOTES.reset(token)


def loose(text: str, spec, kind: str = "") -> None:
    """A note when `text` found catalogue entry `spec` only case- and punctuation-blind (e.g.
    `**H100**` for H100), not as its id, an alias or its name."""
    exact = {str(k).strip().lower() for k in (spec.id, *getattr(spec, "aliases", ()), spec.name)}
    if text.strip().lower() not in exact:
        note(
            _("{text} read as {kind}{id}").format(
                text=_shown(text), kind=kind + " " if kind else "", id=spec.id
            )
        )


def _shown(text: str) -> str:
    return repr(text if len(text) <= 40 else text[:40] + "...")


@dataclass(frozen=True)
class Param:
    """One share-link parameter, declared once: everything else is derived from it.

    Attributes:
        name: the URL name, also the widget's key `<page>:<name>`.
        read: text -> value, raising ParamError (a `Number` for numbers: its range is the
            widget's range too).
        write: value -> the canonical text.
        default: the value when neither the link nor another page sets it (None: none).
        widget: how the page holds it: "value" (a widget whose state is the value itself:
            number, select, toggle, multiselect; the link is written from it), "text" (a text
            field holding the written text, e.g. a batch list; the page passes the value it
            read), "link" (no widget: the page passes the value, or it is not written).
    """

    name: str
    read: Callable[[str], object]
    write: Callable[[object], str] = str
    default: object = None
    widget: str = "value"

    def __post_init__(self) -> None:
        if self.widget not in WIDGETS:
            raise ValueError(
                _("{name}: widget must be one of {widgets}, got {widget}").format(
                    name=self.name, widgets=WIDGETS, widget=repr(self.widget)
                )
            )

    @property
    def text_widget(self) -> bool:
        return self.widget == "text"

    @property
    def bounds(self) -> tuple[float, float] | None:
        """(lowest, highest) a number parameter accepts, in the link and in its widget."""
        return (self.read.lo, self.read.hi) if isinstance(self.read, Number) else None


class Link:
    """A page's share-link parameters, each declared once, in the order the link writes them."""

    def __init__(self, page: str, params: Iterable[Param], ignore: Sequence[str] = ()):
        self.page = page
        self.params = tuple(params)
        self.ignore = tuple(ignore)
        self._by_name = {p.name: p for p in self.params}
        if len(self._by_name) != len(self.params):
            raise ValueError(_("{page}: a parameter is declared twice").format(page=page))

    def __getitem__(self, name: str) -> Param:
        return self._by_name[name]

    def __contains__(self, name: object) -> bool:
        return name in self._by_name

    def __iter__(self) -> Iterator[Param]:
        return iter(self.params)

    def key(self, name: str) -> str:
        """The session key of the parameter's widget: `<page>:<name>`."""
        return f"{self.page}:{name}"

    def defaults(self) -> dict[str, object]:
        return {p.name: p.default for p in self.params if p.default is not None}


@dataclass(frozen=True)
class Choice:
    """A reader accepting one of `options` (case-insensitive); `canon` maps text -> option
    instead (e.g. a catalogue id from an alias), raising ValueError or KeyError."""

    options: Sequence[str] = ()
    canon: Callable[[str], str] | None = None

    def __call__(self, text: str) -> str:
        if self.canon is not None:
            return self.canon(text)
        for option in self.options:
            if option.lower() == text.strip().lower():
                return option
        raise ParamError(
            _("{text} is not one of {options}").format(
                text=_shown(text), options=", ".join(self.options)
            )
        )


def choice(options: Sequence[str] = (), *, canon: Callable[[str], str] | None = None) -> Choice:
    """A reader accepting one of `options` (case-insensitive); `canon` maps text -> option."""
    return Choice(tuple(options), canon)


@dataclass(frozen=True)
class Number:
    """A reader accepting a finite number in [lo, hi]; with `whole`, the engine's one
    whole-number check (`engine.check_whole`) decides; `none` is a word read as itself (e.g.
    "none": no limit). `lo` and `hi` are also the range of the parameter's widget."""

    lo: float
    hi: float
    whole: bool = False
    none: str | None = None

    def __call__(self, text: str) -> float | int | str:
        if self.none is not None and text.strip().lower() == self.none:
            return self.none
        try:
            value = float(text.strip())
        except ValueError:
            raise ParamError(_("{text} is not a number").format(text=_shown(text))) from None
        if not math.isfinite(value):
            raise ParamError(_("{text} is not a finite number").format(text=_shown(text)))
        if self.whole:
            try:
                small = value.is_integer() and abs(value) < 1e15
                shown = int(value) if small else value  # "got -1", not -1.0
                return check_whole(shown, "value", high=int(self.hi), low=int(self.lo))
            except ValueError as exc:
                raise ParamError(str(exc).removeprefix("value: ")) from None
        if value < self.lo or value > self.hi:
            limits = _("at least {lo}, at most {hi}").format(lo=f"{self.lo:g}", hi=f"{self.hi:g}")
            raise ParamError(
                _("{value} is out of range ({limits})").format(value=f"{value:g}", limits=limits)
            )
        return value


def number(lo: float, hi: float, *, whole: bool = False, none: str | None = None) -> Number:
    """A reader accepting a finite number in [lo, hi] (see `Number`)."""
    if whole:
        return Number(lo=int(lo), hi=int(hi), whole=True, none=none)
    return Number(lo=float(lo), hi=float(hi), whole=False, none=none)


def listing(
    item: Callable[[str], object],
    *,
    max_items: int = MAX_LIST_ITEMS,
    min_items: int = 1,
    unique: bool = True,
):
    """A reader of a comma-separated list whose items are read by `item`."""

    def read(text: str) -> list:
        parts = [p for p in (s.strip() for s in text.split(",")) if p]
        if len(parts) > max_items:
            raise ParamError(_("more than {n} items").format(n=max_items))
        values = [item(p) for p in parts]
        if unique:
            counts = Counter(values)
            kept, twice = list(counts), [v for v, n in counts.items() if n > 1]
            if twice:
                twice_text = ", ".join(map(str, twice))[:200]
                note(_("given more than once, kept once: {values}").format(values=twice_text))
            values = kept
        if len(values) < min_items:
            raise ParamError(_("needs at least {n} item(s)").format(n=min_items))
        return values

    return read


def write_list(values: object) -> str:
    return ",".join(_write_scalar(v) for v in values)


def whole_ranges(lo: int, hi: int, *, max_items: int = MAX_LIST_ITEMS):
    """A reader of whole numbers and ranges, e.g. `1,2,4` or `1..2000` or `8..512:8`.

    `a..b` is every whole number from a to b, `a..b:s` every s-th; the result is sorted and
    unique, so a long sweep fits in a short link (see `write_ranges`).
    """
    item = number(lo, hi, whole=True)

    def read(text: str) -> list[int]:
        values: set[int] = set()
        given = 0  # items written, ranges expanded: more than kept means repeats
        for part in (p.strip() for p in text.split(",")):
            start, sep, rest = part.partition("..")
            if not sep:
                values.update([item(part)] if part else [])
                given += bool(part)
                continue
            stop, _sep, step = rest.partition(":")
            a, b, s = item(start), item(stop), item(step) if step.strip() else 1
            if b < a:
                raise ParamError(_("range {range} runs backwards").format(range=_shown(part)))
            if (b - a) // s + 1 > max_items:
                raise ParamError(
                    _("range {range} has more than {n} items").format(
                        range=_shown(part), n=max_items
                    )
                )
            values.update(range(a, b + 1, s))
            given += (b - a) // s + 1
        if len(values) > max_items:
            raise ParamError(_("more than {n} items").format(n=max_items))
        if not values:
            raise ParamError(_("needs at least 1 item"))
        if given > len(values):
            repeats = given - len(values)
            note(_("{n} repeated value(s) kept once").format(n=f"{repeats:,}"))
        return sorted(values)

    return read


def write_ranges(values: object) -> str:
    """[1, 2, 3, 4, 8] -> '1..4,8': a run of 3+ evenly spaced whole numbers becomes `a..b[:s]`
    where that is shorter than listing it, so the text is never longer than the plain list."""
    v = sorted(int(x) for x in values)
    parts, i = [], 0
    while i < len(v):
        j = i + 1  # extend the run v[i..j] while it stays evenly spaced
        while j + 1 < len(v) and v[j + 1] - v[j] == v[i + 1] - v[i]:
            j += 1
        if j - i >= 2:
            step = v[i + 1] - v[i]
            compact = f"{v[i]}..{v[j]}" + (f":{step}" if step != 1 else "")
            if len(compact) < len(",".join(map(str, v[i : j + 1]))):
                parts.append(compact)
                i = j + 1
                continue
        parts.append(str(v[i]))
        i += 1
    return ",".join(parts)


def _write_scalar(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


def write_number(value: object) -> str:
    return _write_scalar(value)


def parse_params(
    raw: Mapping[str, Sequence[str]],
    params: Iterable[Param],
    ignore: Sequence[str] = (),
    notes: dict[str, list[str]] | None = None,
) -> tuple[dict[str, object], list[str]]:
    """Read the known parameters of a query string; explain everything that was dropped.

    Args:
        raw: parameter name -> every value given for it (repeated keys keep all values).
        params: the parameters this page understands.
        ignore: names accepted silently (e.g. another page's parameters).
        notes: if given, filled with what the readers changed in a value they kept, by
            parameter name (`note`: duplicates dropped, ids read loosely).

    Returns:
        (values by parameter name for the valid ones, warnings in plain text).
    """
    known = {p.name: p for p in params}
    values: dict[str, object] = {}
    warnings: list[str] = []
    for index, (name, given) in enumerate(raw.items()):
        if index >= MAX_PARAMS:
            warnings.append(
                _("ignored {n} more parameters (limit {limit})").format(
                    n=len(raw) - MAX_PARAMS, limit=MAX_PARAMS
                )
            )
            break
        if name not in known:
            if name not in ignore:
                warnings.append(_("ignored unknown parameter {name}").format(name=_shown(name)))
            continue
        texts = [given] if isinstance(given, str) else list(given)
        if len(texts) > 1:
            warnings.append(
                _("parameter {name} was given {n} times; used the last").format(
                    name=repr(name), n=len(texts)
                )
            )
        text = texts[-1] if texts else ""
        if len(text) > MAX_VALUE_CHARS:
            warnings.append(
                _("ignored {name}: value longer than {n} characters").format(
                    name=repr(name), n=MAX_VALUE_CHARS
                )
            )
            continue
        try:
            values[name], changed = read_noted(known[name].read, text)
            if changed and notes is not None:
                notes[name] = changed
        except ParamError as exc:
            warnings.append(_("ignored {name}: {reason}").format(name=repr(name), reason=exc))
        except (ValueError, KeyError) as exc:  # e.g. an unknown catalogue id
            reason = str(exc).strip(chr(39))
            warnings.append(_("ignored {name}: {reason}").format(name=repr(name), reason=reason))
    return values, warnings


def to_query(values: Mapping[str, object], params: Iterable[Param]) -> dict[str, str]:
    """The canonical query string for `values`: only the page's parameters, in its order, and
    only those with a value (None, or a value written as "" such as an empty list, is left out:
    the page's default then applies)."""
    texts = {p.name: p.write(values[p.name]) for p in params if values.get(p.name) is not None}
    return {name: text for name, text in texts.items() if text != ""}
