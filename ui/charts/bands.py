"""Error bands on serving predictions: the one implementation every page calls.

Every serving prediction carries its profile's measured out-of-sample error (engine.error_band:
a Band, its MAPE in % and the basis in words) and, where the scenario leaves the ground the
profile was fitted on (another accelerator, precision or architecture family), the reasons
(engine.off_ground). This module turns them into what a page shows: a sentence beside the
headline number, shading around a chart's solid lines and error bars on its points (the
limits are the engine's, Band.limits; Plotly draws percent error bars itself), and the CSV
columns `error_band_pct`, `error_band_basis` and `off_calibrated_ground`. docs/model.md,
"Error bands and calibrated ground".
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, fields, replace

import numpy as np
import pandas as pd
import plotly.graph_objects as go

import engine
from ui.words.format import fmt
from ui.words.i18n import _, message_text

GROUP = "error_band"  # the legend group of every band drawn (one click hides them all)
FILL_ALPHA = 0.13


@dataclass(frozen=True, slots=True)
class Note(engine.PredictionBand):
    """A prediction's band as a page shows it: engine.PredictionBand's fields (the profile's
    name, its Band, why the scenario is off the ground it was fitted on, whether the page's
    assumptions edit the profile), with the figure and its table cell."""

    @property
    def pct(self) -> float | None:
        return self.band.pct

    def short(self) -> str:
        """'±13.6%' or 'not measured' (a table cell)."""
        return short(self.band)


def note(
    profile: engine.Profile,
    arch: engine.Architecture | None,
    hardware: str | Iterable[str],
    precision: str | Iterable[str],
    *,
    edited: bool = False,
) -> Note:
    """The band of `profile` for a scenario (every pair of the hardware ids and precisions
    given: the reasons of all of them, each once): engine.prediction_band, for the page."""
    found = engine.prediction_band(
        profile, arch, hardware=hardware, precision=precision, edited=edited
    )
    return Note(**{f.name: getattr(found, f.name) for f in fields(found)})


def sentence(note: Note, value: str = "") -> str:
    """The band in words, after `value` if given: '3,900 tokens/s per GPU, typically within
    ±13.6% for profile trtllm (basis); wider off the fitted hardware' (plain text)."""
    names = {"profile": note.profile, "basis": message_text(note.band.basis), "band": note.short()}
    if note.pct is None:
        text = _("the error of profile {profile} is not measured ({basis})").format(**names)
    else:
        text = _("typically within {band} for profile {profile} ({basis})").format(**names)
        if not note.off:
            text += _("; wider off the fitted hardware")
    if value:
        text = _("{value}, {band_words}").format(value=value, band_words=text)
    else:
        text = text[:1].upper() + text[1:]
    if note.off:
        text += _(
            ". Off the profile's calibrated ground: {reasons} (the band is a floor there, "
            "not an estimate)"
        ).format(reasons="; ".join(map(message_text, note.off)))
    if note.edited:
        text += _(
            ". The band is the profile's as fitted; your edits of its assumptions are not measured"
        )
    return text + _(".")


def _rgba(color: str, alpha: float) -> str:
    """'#1f77b4' -> 'rgba(31,119,180,0.13)'; other colour strings are kept (grey otherwise)."""
    if isinstance(color, str) and len(color) == 7 and color.startswith("#"):
        r, g, b = (int(color[i : i + 2], 16) for i in (1, 3, 5))
        return f"rgba({r},{g},{b},{alpha})"
    return f"rgba(127,127,127,{alpha})"


def _solid_line(trace) -> bool:
    mode = getattr(trace, "mode", None) or ""
    line = getattr(trace, "line", None)
    dash = getattr(line, "dash", None) if line is not None else None
    return "lines" in mode and dash in (None, "solid") and getattr(trace, "fill", None) is None


def _fits(trace, n: int) -> np.ndarray:
    """The points of a line drawn as fitting: all but those marked ✕ ('x', 'x-open', ...: the
    pages' mark for a configuration that does not fit in memory)."""
    symbols = getattr(getattr(trace, "marker", None), "symbol", None)
    if symbols is None or isinstance(symbols, str) or len(symbols) != n:
        return np.ones(n, dtype=bool)  # one symbol for every point
    return np.array([not str(s).startswith("x") for s in symbols], dtype=bool)


def _polygon(trace, band: engine.Band) -> tuple[list, list] | None:
    """The band around one line as a closed outline (upper edge out, lower edge back), over
    the points that fit only."""
    x, y = np.asarray(trace.x, dtype=float), np.asarray(trace.y, dtype=float)
    keep = np.isfinite(x) & np.isfinite(y) & (y > 0) & _fits(trace, len(x))
    if keep.sum() < 2:
        return None
    low, high = band.limits(y[keep])
    xs = x[keep]
    return [*xs, *xs[::-1]], [*high, *low[::-1]]


def shade(fig: go.Figure, note: Note, label: str | None = None) -> go.Figure:
    """Shade ±band around every solid line of `fig` (a line drawn dashed or dotted, e.g. past
    memory, is left bare, and so are points marked ✕: they do not fit), in the line's colour,
    under the lines, one legend entry for all.

    Nothing is drawn when the band is not measured, or reaches 100 % (its lower edge would be
    zero, off a log axis): the sentence beside the chart says so.
    """
    if note.pct is None or note.pct >= 100:
        return fig
    name = label or _("±{band}: profile {profile}'s out-of-sample error").format(
        band=fmt(note.pct, "%"), profile=note.profile
    )
    bands = []
    for trace in fig.data:
        if not _solid_line(trace):
            continue
        outline = _polygon(trace, note.band)
        if outline is None:
            continue
        color = getattr(trace.line, "color", None) or getattr(trace.marker, "color", None)
        kind = go.Scattergl if trace.type == "scattergl" else go.Scatter  # as its line
        bands.append(
            kind(
                x=outline[0],
                y=outline[1],
                mode="lines",
                fill="toself",
                fillcolor=_rgba(color if isinstance(color, str) else "", FILL_ALPHA),
                line={"width": 0},
                hoverinfo="skip",
                legendgroup=GROUP,
                name=name,
                showlegend=not bands,
                xaxis=getattr(trace, "xaxis", None),
                yaxis=getattr(trace, "yaxis", None),
            )
        )
    if bands:
        fig.add_traces(bands)
        fig.data = fig.data[-len(bands) :] + fig.data[: -len(bands)]  # under the lines
    return fig


def bars(fig: go.Figure, note: Note, names: Sequence[str]) -> go.Figure:
    """Percent error bars (±band on y) on the traces whose name starts with one of `names`
    (e.g. the starred scenario)."""
    if note.pct is None:
        return fig
    bar = {"type": "percent", "value": note.pct, "visible": True, "thickness": 1.5, "width": 6}
    for trace in fig.data:
        if any(str(getattr(trace, "name", "") or "").startswith(p) for p in names):
            trace.error_y = bar
    return fig


def ground_column(
    profile: engine.Profile, arch: engine.Architecture | None, hardware, precision
) -> list[tuple[engine.Message, ...]]:
    """Per row, why it is off the profile's calibrated ground (none when on it): the engine's
    reasons for each distinct (accelerator id, precision) pair."""
    pairs = list(zip(map(str, hardware), map(str, precision), strict=True))
    if arch is None:
        return [()] * len(pairs)
    said = {p: tuple(engine.off_ground(profile, arch, *p)) for p in dict.fromkeys(pairs)}
    return [said[p] for p in pairs]


def reasons_text(reasons: Sequence[engine.Message]) -> str:
    """Off-ground reasons in the reader's language, '; '-joined ('—': none, on the ground)."""
    return "; ".join(map(message_text, reasons)) or "—"


def row_bands(profile: engine.Profile, precision: Iterable[str]) -> list[engine.Band]:
    """Per row, the band of a prediction in that row's precision (engine.held_out_band: wider
    where the profile's fit left that format's rows out and predicted them)."""
    names = [str(p) for p in precision]
    said = {p: engine.held_out_band(profile, p) for p in dict.fromkeys(names)}
    return [said[p] for p in names]


def short(band: engine.Band) -> str:
    """'±13.6%' or 'not measured' (a table cell)."""
    return _("not measured") if band.pct is None else f"±{fmt(band.pct, '%')}"


def with_columns(
    df: pd.DataFrame,
    note: Note,
    off: Sequence[tuple[engine.Message, ...]] | None = None,
    per_row: Sequence[engine.Band] | None = None,
) -> pd.DataFrame:
    """`df` with the band's CSV columns (error_band_pct empty when not measured; the words in
    English); `off`: per row reasons (ground_column), else the note's for every row;
    `per_row`: each row's band (row_bands), else the note's."""
    rows = list(off) if off is not None else [note.off] * len(df)
    reasons = ["; ".join(map(str, said)) for said in rows]
    found = list(per_row) if per_row is not None else [note.band] * len(df)
    basis = {b: replace(note, band=b).as_dict()["error_band_basis"] for b in set(found)}
    return df.assign(
        error_band_pct=[np.nan if b.pct is None else float(b.pct) for b in found],
        error_band_basis=[basis[b] for b in found],  # the engine's words: English, as the CLI's
        off_calibrated_ground=reasons,
    )
