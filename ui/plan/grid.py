"""The planner's grid: which (accelerator, TP, PP, EP, attention DP, precision) combinations to
sweep, the sweep, the on-screen table and the CSV.

The serving model refuses a TP that does not split the model's attention heads (or its KV
heads, unless TP is a multiple of them; MLA has no KV heads to split) unless attention runs
data-parallel, an EP that does not divide TP or the routed experts (or any EP > 1 on a dense
model), attention DP on one device, a PP deeper than its layers, and TP×PP > 1 on a chip with
one device per node (no link); a chip that lists no peak
for a precision would run at another precision's peak (`HardwareSpec.peak_for`). The planner
leaves those combinations out *before* the sweep, from the public spec fields, and says which
and why (tests check these rules against the engine's own refusals), then runs one vectorised
`engine.serve_sweep` per set of accelerators that share the same valid axes (usually one).
Serving model: docs/model.md ("Serving model").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

import engine
from ui.charts import bands
from ui.core.budget import PLAN_CONFIGURATIONS
from ui.plan import view as pv
from ui.words.format import fmt_all
from ui.words.i18n import N_, _

MAX_CONFIGURATIONS = PLAN_CONFIGURATIONS  # the grid limit (ui/core/budget.py)


@dataclass(frozen=True, slots=True)
class Group:
    """Accelerators swept together: they accept the same TP, PP and precision lists, at one EP
    and attention DP setting."""

    hardware: tuple[str, ...]
    tp: tuple[int, ...]
    pp: tuple[int, ...]
    precisions: tuple[str, ...]
    ep: int = 1
    attention_dp: bool = False

    @property
    def rows(self) -> int:
        """Configurations per batch size."""
        return len(self.hardware) * len(self.tp) * len(self.pp) * len(self.precisions)


def tp_refusal(model_id: str, arch: engine.Architecture, tp: int) -> str | None:
    """Why the serving model refuses this TP degree for the model (None: it accepts it)."""
    if arch.heads % tp:
        return _("does not divide {model}'s {heads} attention heads").format(
            model=model_id, heads=arch.heads
        )
    kv = arch.kv_heads
    if arch.attention != "mla" and kv % tp and tp % kv:
        return _("neither divides nor is a multiple of {model}'s {kv_heads} KV heads").format(
            model=model_id, kv_heads=kv
        )
    return None


def pp_refusal(model_id: str, arch: engine.Architecture, pp: int) -> str | None:
    """Why the serving model refuses this PP degree (None: it accepts it)."""
    if pp > arch.layers:
        return _("more stages than {model}'s {layers} layers").format(
            model=model_id, layers=arch.layers
        )
    return None


def ep_refusal(model_id: str, arch: engine.Architecture, ep: int) -> str | None:
    """Why the serving model refuses this EP degree for the model (None: it accepts it)."""
    if ep > 1 and not arch.experts:
        return _("{model} has no routed experts to spread").format(model=model_id)
    if ep > 1 and arch.experts % ep:
        return _("does not divide {model}'s {experts} routed experts").format(
            model=model_id, experts=arch.experts
        )
    return None


def layouts(
    model_id: str, arch, tps: Sequence[int], eps: Sequence[int], switches: Sequence[bool]
) -> tuple[list[tuple[int, bool, tuple[int, ...]]], list[str]]:
    """The (EP, attention DP, the TP degrees each takes) to sweep, and the values left out
    and why: TP must split the heads unless attention is data-parallel, EP must divide TP and
    the routed experts, attention DP needs TP > 1."""
    tps, notes, out = [int(t) for t in tps], [], []
    if False in switches:  # attention split TP ways: TP must split the heads
        for t in tps:
            why = tp_refusal(model_id, arch, t)
            notes += [f"TP {t}: {why}"] if why else []
    for e in (int(e) for e in eps):
        why = ep_refusal(model_id, arch, e)
        if why:
            notes.append(f"EP {e}: {why}")
            continue
        odd = [str(t) for t in tps if t % e]
        if odd:
            text = _("EP {ep} with TP {tps}: EP must divide TP")
            notes.append(text.format(ep=e, tps=", ".join(odd)))
        for on in switches:
            heads = [t for t in tps if on or tp_refusal(model_id, arch, t) is None]
            ok = tuple(t for t in heads if not t % e and (t > 1 or not on))
            out += [(e, on, ok)] if ok else []
    if True in switches and 1 in tps:
        notes.append(_("attention DP with TP 1: it needs a group of devices"))
    return out, notes


def plan(
    model_id: str,
    arch,
    hardware: Mapping[str, engine.HardwareSpec],
    tps: Sequence[int],
    pps: Sequence[int],
    precisions: Sequence[str],
    moe: tuple[Sequence[int], Sequence[bool]] = ((1,), (False,)),
) -> tuple[list[Group], list[str]]:
    """The sweep groups and, in words, every value left out and why.

    Args:
        model_id, arch: the model and its shapes (ModelSpec.arch).
        hardware: chosen accelerator id -> spec, in the user's order.
        tps, pps, precisions: the user's lists.
        moe: the EP degrees and attention DP settings to try (each EP with the TPs it divides).
    """
    tried, notes = layouts(model_id, arch, tps, *moe)
    ok_pp = []
    for p in pps:
        why = pp_refusal(model_id, arch, int(p))
        ok_pp += [int(p)] if why is None else []
        notes += [f"PP {p}: {why}"] if why else []
    by_axes: dict[tuple, list[str]] = {}
    single, missing = [], {p: [] for p in precisions}  # names, by the note they share
    for hw_id, hw in hardware.items():
        alone = hw.devices_per_node <= 1  # no device-to-device link in the catalogue
        native = tuple(p for p in precisions if native_precision(hw, p))
        for p in set(precisions) - set(native):
            missing[p].append(hw.name)
        pp = tuple(p for p in ok_pp if not alone or p == 1)
        for ep, on, ok_tp in tried:
            tp = tuple(t for t in ok_tp if not alone or t == 1)
            single += [hw.name] if len(tp) < len(ok_tp) or len(pp) < len(ok_pp) else []
            if tp and pp and native:
                by_axes.setdefault((tp, pp, native, ep, on), []).append(hw_id)
    single = list(dict.fromkeys(single))
    if single:
        notes.append(
            _(
                "TP or PP > 1 on {hardware}: one device only (no link between devices in the "
                "catalogue)"
            ).format(hardware=", ".join(single))
        )
    for p, names in missing.items():
        note = _("{precision} on {hardware}: no {precision} peak in the catalogue")  # emulated
        notes += [note.format(precision=p, hardware=", ".join(names))] if names else []
    groups = [Group(tuple(ids), *axes) for axes, ids in by_axes.items()]
    return groups, notes


def native_precision(hw: engine.HardwareSpec, precision: str) -> bool:
    """True when the chip runs the number format on its own peak (bf16 on the shared fp16
    figure counts; w4a16 always runs on the 16-bit peak): engine.runs_natively."""
    return engine.runs_natively(hw, precision)


def row_count(groups: Sequence[Group], batches: Sequence[int]) -> int:
    """Configurations in the grid (checked against MAX_CONFIGURATIONS before any sweep)."""
    return sum(g.rows for g in groups) * len(batches)


def sweep(groups: Sequence[Group], model, hardware: Mapping, batches, tokens, opts) -> pd.DataFrame:
    """One `engine.serve_sweep` per group, stacked (rows in the engine's order per group).

    Args:
        model: the ModelSpec; hardware: id -> spec (custom accelerators included).
        batches: batch sizes; tokens: (input tokens, output tokens) per request.
        opts: the grid's shared fields: profile and the assumption overrides.
    """
    requests = engine.BatchGrid(
        input_tokens=tokens[0], output_tokens=tokens[1], batch_sizes=tuple(batches)
    )
    grids = [
        engine.Deployments.of(
            models=(model,),
            hardware=tuple(hardware[h] for h in g.hardware),
            tp=g.tp,
            pp=g.pp,
            ep=(g.ep,),
            attention_dp=(g.attention_dp,),
            precisions=g.precisions,
            **opts,
        )
        for g in groups
    ]
    frames = [engine.serve_sweep(grid, batches=requests) for grid in grids]
    if len(frames) == 1:
        return frames[0]
    return pd.concat(frames, ignore_index=True)


# column: (on-screen header, ui.words.format unit or None (as is), factor to that unit)
TABLE = {
    "usd_per_1m_output_tokens": (N_("Cost (USD per 1M output tokens)"), "", 1.0),
    "hardware": (N_("Accelerator"), None, 1.0),
    "devices": (N_("Devices"), None, 1.0),
    "tp": ("TP", None, 1.0),
    "pp": ("PP", None, 1.0),
    "ep": ("EP", None, 1.0),
    "attention_dp": (N_("Attention DP"), None, 1.0),
    "batch_size": (N_("Batch (sequences)"), None, 1.0),
    "precision": (N_("Precision"), None, 1.0),
    "output_tokens_per_s_per_gpu": (N_("Throughput (output tokens/s per GPU)"), "", 1.0),
    "tokens_per_s_per_user": (N_("Interactivity (tokens/s per user)"), "", 1.0),
    "ttft_ms": (N_("TTFT"), "s", 1e-3),
    "tpot_ms": (N_("TPOT"), "s", 1e-3),
    "decode_bottleneck": (N_("Decode bound"), None, 1.0),
}
TABLE_ROWS = 100  # rows on screen; the CSV has every configuration


def display_table(table: pd.DataFrame, names: Mapping[str, str], rows: int = TABLE_ROWS):
    """The first `rows` configurations that meet the SLOs, ranked, under readable headers."""
    top = table[table["meets_slo"].to_numpy(dtype=bool)].head(rows)
    out = {_("Rank"): np.arange(1, len(top) + 1)}
    for column, (header, unit, factor) in TABLE.items():
        values = top[column].to_numpy()
        if column == "hardware":
            values = [names.get(str(h), str(h)) for h in values]
        elif column == "decode_bottleneck":  # the engine's word, in the reader's language
            values = [_(str(v)) for v in values]
        elif column == "attention_dp":
            values = [_("on") if v else _("off") for v in values]
        elif unit is not None:
            values = fmt_all(values * factor, unit)
        out[_(header)] = values
    return pd.DataFrame(out)


CONTRACT = (
    "usd_per_1m_output_tokens",
    "meets_slo",
    "output_tokens_per_s_per_gpu",
    "tokens_per_s_per_user",
    "ttft_ms",
    "tpot_ms",
    "devices",
    "tp",
    "pp",
    "batch_size",
    "precision",
)


def csv_frame(table: pd.DataFrame, slo: pv.Slo, prices: Mapping[str, float | None]):
    """Every configuration, ranked: the contract columns first, then the verdict (why a row
    misses, e.g. "does not fit in memory": such rows have no cost), the price and SLOs used,
    then every serve_sweep column (model, tokens, profile, assumptions, warnings)."""
    price = table["hardware"].map(lambda h: prices.get(str(h))).astype(float)
    extra = {"verdict": pv.verdicts(table, slo), "price_per_hour_usd": price}
    for column, limit in (("ttft_ms", slo.ttft_ms), ("tpot_ms", slo.tpot_ms)):
        extra[f"slo_{column}"] = np.nan if limit is None else float(limit)
    floor = slo.min_tokens_per_s_per_user
    extra["slo_min_tokens_per_s_per_user"] = np.nan if floor is None else float(floor)
    out = table.assign(**extra)
    rest = [c for c in out.columns if c not in CONTRACT]
    return out[list(CONTRACT) + rest]


SCREEN = [
    "hardware",
    "precision",
    "devices",
    "tp",
    "pp",
    "ep",
    "attention_dp",
    "batch_size",
    "ttft_ms",
    "tpot_ms",
    pv.X,
    pv.Y,
    "output_tokens_per_s",
    "fits_in_memory",
    "decode_bottleneck",
    "decode_comm_ms",
]


def warning_counts(df: pd.DataFrame) -> list[tuple[engine.Message, int]]:
    """Each engine warning and how many configurations carry it (most common first)."""
    counts: dict[engine.Message, int] = {}
    for said, n in df["warnings"].value_counts(sort=False).items():
        for warning in said if n else ():
            counts[warning] = counts.get(warning, 0) + int(n)
    return sorted(counts.items(), key=lambda item: -item[1])


def screen(df: pd.DataFrame) -> pd.DataFrame:
    """The columns the chart, the words and the table read (ranking 14 columns, not 50)."""
    return df[SCREEN]


# Every column name ends in its unit: the assumptions by the registry's CSV headers
# (`attention_efficiency` -> `attention_efficiency_fraction`), shares as fractions.
CSV_NAMES = {a.name: a.csv for a in engine.ASSUMPTIONS}
CSV_NAMES |= {"decode_comm_share": "decode_comm_share_fraction"}


def csv_text(df: pd.DataFrame, slo: pv.Slo, prices: Mapping[str, float | None], band=None) -> str:
    """The CSV download: every configuration and column, ranked (written when clicked), with
    the error band's columns when `band` (a Band) is given."""
    table = csv_frame(pv.ranked(df, slo, prices), slo, prices)
    table = band.columns(table) if band is not None else table
    return engine.to_csv(table.rename(columns=CSV_NAMES))


@dataclass(frozen=True)
class Band:
    """The planner's error band: the profile's measured out-of-sample error for every row, and
    each row's reasons for leaving its calibrated ground (its accelerator and precision)."""

    profile: engine.Profile
    arch: engine.Architecture | None
    hardware: tuple[str, ...]
    precisions: tuple[str, ...]
    edited: bool = False

    def note(self) -> bands.Note:
        """The band of the whole grid: every accelerator × precision's reasons, each once."""
        return bands.note(
            profile=self.profile,
            arch=self.arch,
            hardware=self.hardware,
            precision=self.precisions,
            edited=self.edited,
        )

    def columns(self, frame: pd.DataFrame) -> pd.DataFrame:
        """`frame` with error_band_pct, error_band_basis and off_calibrated_ground per row."""
        off = bands.ground_column(
            profile=self.profile,
            arch=self.arch,
            hardware=frame["hardware"],
            precision=frame["precision"],
        )
        per_row = bands.row_bands(self.profile, frame["precision"])
        return bands.with_columns(frame, self.note(), off, per_row=per_row)


def price_table(
    hardware: Mapping[str, engine.HardwareSpec], prices: Mapping[str, float | None]
) -> pd.DataFrame:
    """Per chosen accelerator: the price used, whether it is the catalogue's list price or one
    set on this page, and the list price's date, source and notes (plain text, shown inert)."""
    rows = []
    for hw_id, hw in hardware.items():
        used, listed = prices.get(hw_id), hw.price_per_hour_usd
        edited = used is not None and (listed is None or abs(used - listed) > 1e-9 * listed)
        kind = (
            _("no price") if used is None else _("set on this page") if edited else _("list price")
        )
        rows.append(
            {
                _("Accelerator"): hw.name,
                _("Price (USD per accelerator-hour)"): fmt_all([used])[0],
                _("Kind"): kind,
                _("Catalogue list price (USD per accelerator-hour)"): fmt_all([listed])[0],
                _("Date"): hw.price_date or "—",
                _("Source"): hw.price_source or "—",
                _("Notes"): hw.price_notes or "—",
            }
        )
    return pd.DataFrame(rows)
