"""The comparison page's rows (the serving model's for a decoder LLM's serving views, else the
tutorial's sweep), its per-accelerator summary (with the exact crossover beside the first in the
user's list) and its captions. Pure pandas over engine results."""

from __future__ import annotations

import pandas as pd

import engine
from ui.charts import serve_rows, tables
from ui.charts import sweep as fs
from ui.core import budget
from ui.words.format import sig
from ui.words.i18n import N_, _, message_text

LISTED = N_("Crossover batch (first in your list)")  # column headers: shown through _()
EXACT = N_("Crossover batch (exact)")
TUTORIAL_COLUMNS = ["hardware", "batch_size", "regime", "bottleneck", "latency_ms"]
TUTORIAL_COLUMNS += ["throughput_per_s"]
TUTORIAL_COLUMNS += ["speedup_vs_baseline_ratio", "arithmetic_intensity_flop_per_byte"]
TUTORIAL_COLUMNS += ["achieved_tflops", "attainable_tflops", "mfu", "t_overhead_ms", "energy_j"]
SERVING_COLUMNS = ["hardware", *serve_rows.COLUMNS]  # the serving views (ui/charts/serve_rows)
SERVING_COLUMNS.insert(SERVING_COLUMNS.index("throughput_per_s") + 1, "speedup_vs_baseline_ratio")


def summary(
    df: pd.DataFrame, cross: pd.DataFrame, names: dict[str, str], exact: dict | None
) -> pd.DataFrame:
    """One row per accelerator; `exact` (hardware id -> the engine's smallest compute-bound
    batch, None: never) adds the exact crossover beside the first one in the list."""
    listed = _(LISTED)
    out = tables.hardware_summary(df, cross, names)
    out = out.rename(columns={_(tables.CROSSOVER): listed})
    if exact is not None:
        ids = pd.unique(df["hardware"].astype(str))
        column = [_("never") if exact[h] is None else f"{exact[h]:,}" for h in ids]
        out.insert(out.columns.get_loc(listed), _(EXACT), column)
    return out


def scope(accelerators: int, batches: list[int], precision: str, baseline: str, note: str) -> str:
    """The comparison in one line: how many accelerators and batches, the precision, the
    baseline (already inert) and the FLOP convention's note."""
    return _(
        "{accelerators} accelerators × {count} batch sizes ({first} to {last}) · {precision} · "
        "baseline {baseline} · {note}"
    ).format(
        accelerators=accelerators,
        count=f"{len(batches):,}",
        first=f"{batches[0]:,}",
        last=f"{batches[-1]:,}",
        precision=precision,
        baseline=baseline,
        note=note,
    )


def rows_refusal(lines: int, batches: int) -> str | None:
    """Why the rows are refused (None: within the page's budget, ui/core/budget.py): one row per
    accelerator or deployment per batch size, counted before any of them is computed."""
    counts = {_("accelerators and deployments"): lines, _("batch sizes"): batches}
    narrow = _("Give fewer batch sizes (e.g. 1..1024, or 1..4096:8), accelerators or deployments.")
    return budget.rows_refusal("compare", counts, narrow)


def ridge_caption(efficiency: float, precision: str, note: str, serving: bool) -> str:
    text = _(
        "Ridge = peak ÷ bandwidth (theoretical) and peak × η ÷ bandwidth (effective, η = "
        "{efficiency}). {listed}: the first {what} in your list that is compute-bound"
    ).format(
        efficiency=sig(efficiency),
        listed=_(LISTED),
        what=_("decode step") if serving else _("batch"),
    )
    if not serving:
        text += _("; {exact}: the smallest compute-bound batch (engine)").format(exact=_(EXACT))
    return text + _(". Peaks for {precision}. {note}.").format(precision=precision, note=note)


def rows(
    model,
    chosen: dict,
    baseline: str,
    batches: list[int],
    precision: str,
    *,
    view: str | None,
    tokens: dict,
    overrides: dict,
    opts: dict,
):
    """(the CSV's rows, the rows under sweep names with the speedup, the exact crossover per
    accelerator (None in the serving views), the first compute-bound batch per accelerator).

    Args:
        chosen: hardware id -> spec; view: the LLM view (None: not an LLM);
        overrides: the tutorial view's assumptions; opts: serve_rows.options for the serving views.
    """
    hws = list(chosen.values())
    if view in serve_rows.VIEW_COLUMNS:
        raw, df = serve_rows.serve_frame(
            model=model,
            hardware=hws,
            batches=batches,
            tokens=tokens,
            precision=precision,
            opts=opts,
            view=view,
        )
        exact = None
    else:
        raw = df = engine.sweep(
            models=model, hardware=hws, batch_sizes=batches, precisions=[precision], **overrides
        )
        exact = {
            h: engine.compute_bound_batch(model, hw, precision=precision, **overrides)
            for h, hw in chosen.items()
        }
    df = fs.with_speedup(df, baseline)
    ratio = df["speedup_vs_baseline_ratio"].to_numpy()
    raw = raw.assign(baseline_hardware=baseline, speedup_vs_baseline_ratio=ratio)
    return raw, df, exact, engine.crossover_batch(df)


def warnings(df: pd.DataFrame, names: dict[str, str]) -> list[str]:
    """The engine's warnings, each headed by the accelerator it is about (in the reader's
    language; one line per accelerator and row's warnings)."""
    pairs = dict.fromkeys(zip(df["hardware"].astype(str), df["warnings"], strict=True))
    return [f"{names.get(h, h)}: {'; '.join(map(message_text, said))}" for h, said in pairs if said]


def crossover_note(cross: pd.DataFrame, exact: dict | None, names: dict[str, str]) -> str | None:
    """Where the first compute-bound batch of the list is not the exact crossover, say both: a
    sweep of powers of two reports the first (the tutorial's "H100 crosses over at batch 4"),
    the engine the exact one (3)."""
    if exact is None:
        return None
    parts = []
    for h, value in zip(cross["hardware"].astype(str), cross["crossover_batch"], strict=True):
        first = tables.crossover_value(value)
        if first is not None and exact.get(h) is not None and first != exact[h]:
            parts.append(
                _("{hardware} {first} in your list, exactly {exact}").format(
                    hardware=names.get(h, h), first=f"{first:,}", exact=f"{exact[h]:,}"
                )
            )
    if not parts:
        return None
    return _(
        "Crossover: {parts}. A sweep reports its first compute-bound batch, as the tutorial "
        "does: its 'H100 crosses over at batch 4' is the first power of two in its sweep, where "
        "the exact crossover is 3."
    ).format(parts="; ".join(parts))
