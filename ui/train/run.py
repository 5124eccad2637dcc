"""The training planner's engine calls, cached, and the budget that bounds them.

- `search`: `engine.train_search` over the page's values of every dimension, rejected
  configurations included (each with the rule it breaks).
- `chosen`: `engine.train` of the configuration shown in detail: the ranked one the page picks,
  or, when none fits, the one that comes closest (the least memory per GPU among those refused
  only for memory), whose warning says why it does not fit.
- `operators`: `engine.training_operators` of that configuration (the roofline in training).
- `scaling`: `engine.train_search` over the scaling curve's GPU counts, the best configuration
  of each count (by the page's ranking).

Each takes the run and the layouts the page built once (`engine.TrainRun`, `engine.LayoutSpace`,
`engine.TrainLayout`) and passes them to the engine as they are. Their results are shared by
every session and dropped a minute after their last use (SEARCHES, ui/runtime/memo.py), and one
is computed at a time: a search holds about four times its frame while it runs.

Before anything runs the page counts the configurations the searches would evaluate (the
product of the values per dimension, once for the search and once per GPU count of the curve)
and refuses more than BUDGET_CONFIGS (about a second of work), saying how to narrow it.
docs/model.md, "Training step".
"""

from __future__ import annotations

import dataclasses
import math

import pandas as pd

import engine
from ui.core.budget import TRAIN_CONFIGURATIONS
from ui.runtime import memo
from ui.words.i18n import _, message_text

BUDGET_CONFIGS = TRAIN_CONFIGURATIONS  # per rerun (ui/core/budget.py)
DIMENSIONS = ("tp", "pp", "cp", "vp", "ep", "etp", "micro_batch_size", "zero", "recompute")
DIMENSIONS += ("pp_schedule", "cp_comm_type")
CONFIG_KEYS = ("tp", "pp", "cp", "vp", "ep", "etp", "micro_batch_size", "zero", "recompute")
NO_FIT = "does_not_fit_in_memory"  # the code of the engine's rule for memory
# the codes of its warning saying why a configuration does not fit (by its largest term)
SHORTFALL = (
    "weights_do_not_fit",
    "gradients_do_not_fit",
    "optimizer_state_does_not_fit",
    "activations_do_not_fit",
)

# Shared by every session, keyed on the scenario's exact text (memo.fingerprint); at most 64 MiB
# of frames (a search within the budget: up to 100,000 rows, about 37 MiB), each dropped 60 s
# after its last use; one heavy computation at a time, /load's simulations included; with /plan's
# grids and /load's simulations, at most memo.HEAVY_BYTES in all.
SEARCHES = memo.Shared(
    entries=16,
    max_bytes=64 * 2**20,
    idle_s=60.0,
    size=memo.result_bytes,
    slots=memo.HEAVY,
    pool=memo.HEAVY_BYTES,
)


def configurations(dims: dict, curve: list[int]) -> tuple[int, int]:
    """(configurations in the search, in the scaling curves): the products of the values."""
    each = math.prod(len(v) for k, v in dims.items() if k in DIMENSIONS and v is not None)
    return each, each * len(curve)


def refusal(dims: dict, curve: list[int]) -> str | None:
    """Why the searches are refused (None: within the budget), with how to narrow them."""
    search, scaling = configurations(dims, curve)
    if search + scaling <= BUDGET_CONFIGS:
        return None
    counts = " × ".join(
        f"{len(v)} {k}" for k, v in dims.items() if k in DIMENSIONS and v is not None
    )
    return _(
        "These searches would evaluate {total} configurations ({counts} = {search}, once for "
        "the search and once for each of the {curve} GPU counts of the scaling curves), more "
        "than this page's budget of {budget} (about a second). Give fewer values of tp, pp, cp, "
        "vp, ep, micro-batch, ZeRO, recompute, pipeline schedule or context-parallel exchange, or "
        "fewer GPU counts on the curves."
    ).format(
        total=f"{search + scaling:,}",
        counts=counts,
        search=f"{search:,}",
        curve=len(curve),
        budget=f"{BUDGET_CONFIGS:,}",
    )


@memo.cached(SEARCHES)
def search(run: engine.TrainRun, space: engine.LayoutSpace, rank_by: str) -> pd.DataFrame:
    """Every configuration, ranked ones first (no `reason`), then the rejected ones."""
    return engine.train_search(run, space, rank_by=rank_by, include_rejected=True)


@memo.cached(SEARCHES)
def scaling(
    run: engine.TrainRun, space: engine.LayoutSpace, rank_by: str, curve: tuple[int, ...]
) -> pd.DataFrame:
    """The best configuration of each GPU count of the curve (counts with none: no row).

    One search per count, keeping its best row: the same rows as one search over every count
    (its ranking is a stable sort), in a seventh of the memory for seven counts (a search holds
    about four times its frame while it runs: 181 MiB against 26 MiB for 7 x 23,040)."""
    if not curve:  # the engine's refusal ("gpus: give at least one")
        return engine.train_search(dataclasses.replace(run, gpus=curve), space, rank_by=rank_by)
    best = [
        engine.train_search(dataclasses.replace(run, gpus=gpus), space, rank_by=rank_by).head(1)
        for gpus in sorted(set(curve))
    ]
    return pd.concat(best).reset_index(drop=True)


def pick(df: pd.DataFrame, rank: int) -> tuple[pd.Series | None, bool]:
    """(the configuration to detail, whether it fits): the `rank`-th ranked one (the last if
    fewer fit), else the closest to fitting of those refused only for memory, else None."""
    ranked = df[df["reason"].isna()]
    if len(ranked):
        return ranked.iloc[min(rank, len(ranked)) - 1], True
    memory = df[[isinstance(r, engine.Message) and r.code == NO_FIT for r in df["reason"]]]
    if len(memory):
        return memory.loc[memory["memory_per_gpu_bytes"].idxmin()], False
    return None, False


def config_of(row: pd.Series) -> dict:
    """A search row's configuration as `engine.train`'s keywords."""
    out = {k: int(row[k]) for k in CONFIG_KEYS if k != "recompute"}
    modules = row.get("recompute_modules")  # a selective row's, as the search wrote them
    given = {} if not isinstance(modules, str) else {"recompute_modules": modules.split(",")}
    words = {"recompute": str(row["recompute"]), "pp_schedule": str(row["pp_schedule"])}
    words["cp_comm_type"] = str(row["cp_comm_type"])
    return out | words | given


def layout_of(row: pd.Series) -> engine.TrainLayout:
    """A search row's configuration as the engine's layout."""
    return engine.TrainLayout(**config_of(row))


@memo.cached(SEARCHES)
def chosen(run: engine.TrainRun, layout: engine.TrainLayout):
    """engine.train of one configuration (its breakdown, memory and warnings)."""
    return engine.train(run, layout)


@memo.cached(SEARCHES)
def operators(run: engine.TrainRun, layout: engine.TrainLayout) -> pd.DataFrame:
    """The configuration's micro-batch, operator by operator (engine.training_operators)."""
    return engine.training_operators(run, layout)


def reasons(df: pd.DataFrame) -> pd.DataFrame:
    """How many configurations each rule rejected, most first."""
    counts = df["reason"].dropna().astype(object).value_counts()
    why = [message_text(reason) for reason in counts.index]
    return pd.DataFrame({_("Why rejected"): why, _("Configurations"): counts.to_numpy()})
