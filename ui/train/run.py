"""The training planner's engine calls, cached, and the budget that bounds them.

- `search`: `engine.train_search` over the page's values of every dimension, rejected
  configurations included (each with the rule it breaks).
- `chosen`: `engine.train` of the configuration shown in detail: the ranked one the page picks,
  or, when none fits, the one that comes closest (the least memory per GPU among those refused
  only for memory), whose warning says why it does not fit.
- `operators`: `engine.training_operators` of that configuration (the roofline in training).
- `scaling`: `engine.train_search` over the scaling curve's GPU counts, the best configuration
  of each count (by the page's ranking).

Before anything runs the page counts the configurations the searches would evaluate (the
product of the values per dimension, once for the search and once per GPU count of the curve)
and refuses more than BUDGET_CONFIGS (about a second of work), saying how to narrow it.
docs/model.md, "Training step".
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd
import streamlit as st

import engine
from ui.core.budget import TRAIN_CONFIGURATIONS
from ui.core.i18n import _, engine_text

BUDGET_CONFIGS = TRAIN_CONFIGURATIONS  # per rerun (ui/core/budget.py)
DIMENSIONS = ("tp", "pp", "cp", "vp", "ep", "micro_batch_size", "zero", "recompute")
CONFIG_KEYS = ("tp", "pp", "cp", "vp", "ep", "micro_batch_size", "zero", "recompute")
NO_FIT = "does not fit"  # the engine's reason for memory begins so (matched, not shown)


@dataclass(frozen=True)
class Search:
    """One search's inputs (hashable; the caches key on its text)."""

    model: object  # ModelSpec or Architecture
    hw: object  # HardwareSpec
    gpus: int
    global_batch_size: int
    seq_len: int
    precision: str
    attention: str
    profile: str
    dims: tuple  # ((name, (values...)), ...)
    rank_by: str
    token_budget: float
    price: float | None

    def common(self) -> dict:
        return {
            "global_batch_size": self.global_batch_size,
            "seq_len": self.seq_len,
            "precision": self.precision,
            "attention": self.attention,
            "profile": self.profile,
            "token_budget": self.token_budget,
            "price_per_gpu_hour": self.price,
        }


HASH = {Search: repr}


def configurations(dims: dict, curve: list[int]) -> tuple[int, int]:
    """(configurations in the search, in the scaling curves): the products of the values."""
    each = math.prod(len(v) for v in dims.values())
    return each, each * len(curve)


def refusal(dims: dict, curve: list[int]) -> str | None:
    """Why the searches are refused (None: within the budget), with how to narrow them."""
    search, scaling = configurations(dims, curve)
    if search + scaling <= BUDGET_CONFIGS:
        return None
    counts = " × ".join(f"{len(v)} {k}" for k, v in dims.items())
    return _(
        "These searches would evaluate {total} configurations ({counts} = {search}, once for "
        "the search and once for each of the {curve} GPU counts of the scaling curves), more "
        "than this page's budget of {budget} (about a second). Give fewer values of tp, pp, cp, "
        "vp, ep, micro-batch, ZeRO or recompute, or fewer GPU counts on the curves."
    ).format(
        total=f"{search + scaling:,}",
        counts=counts,
        search=f"{search:,}",
        curve=len(curve),
        budget=f"{BUDGET_CONFIGS:,}",
    )


@st.cache_resource(max_entries=16, show_spinner=False, hash_funcs=HASH)
def search(s: Search) -> pd.DataFrame:
    """Every configuration, ranked ones first (`reason` empty), then the rejected ones."""
    return engine.train_search(
        s.model,
        s.hw,
        gpus=s.gpus,
        rank_by=s.rank_by,
        include_rejected=True,
        **dict(s.dims),
        **s.common(),
    )


@st.cache_resource(max_entries=16, show_spinner=False, hash_funcs=HASH)
def scaling(s: Search, curve: tuple[int, ...]) -> pd.DataFrame:
    """The best configuration of each GPU count of the curve (counts with none: no row)."""
    df = engine.train_search(
        s.model, s.hw, gpus=list(curve), rank_by=s.rank_by, **dict(s.dims), **s.common()
    )
    return df.groupby("gpus", sort=True).head(1).sort_values("gpus").reset_index(drop=True)


def pick(df: pd.DataFrame, rank: int) -> tuple[pd.Series | None, bool]:
    """(the configuration to detail, whether it fits): the `rank`-th ranked one (the last if
    fewer fit), else the closest to fitting of those refused only for memory, else None."""
    ranked = df[df["reason"] == ""]
    if len(ranked):
        return ranked.iloc[min(rank, len(ranked)) - 1], True
    memory = df[df["reason"].astype(str).str.startswith(NO_FIT)]
    if len(memory):
        return memory.loc[memory["memory_per_gpu_bytes"].idxmin()], False
    return None, False


def config_of(row: pd.Series) -> dict:
    """A search row's configuration as `engine.train`'s keywords."""
    out = {k: int(row[k]) for k in CONFIG_KEYS if k != "recompute"}
    return out | {"recompute": str(row["recompute"])}


@st.cache_resource(max_entries=32, show_spinner=False, hash_funcs=HASH)
def chosen(s: Search, config: tuple):
    """engine.train of one configuration (its breakdown, memory and warnings)."""
    return engine.train(s.model, s.hw, gpus=s.gpus, **dict(config), **s.common())


@st.cache_resource(max_entries=32, show_spinner=False, hash_funcs=HASH)
def operators(s: Search, config: tuple) -> pd.DataFrame:
    """The configuration's micro-batch, operator by operator (engine.training_operators)."""
    c = dict(config)
    return engine.training_operators(
        s.model,
        s.hw,
        tp=c["tp"],
        cp=c["cp"],
        ep=c["ep"],
        micro_batch_size=c["micro_batch_size"],
        seq_len=s.seq_len,
        precision=s.precision,
        attention=s.attention,
        profile=s.profile,
    )


def reasons(df: pd.DataFrame) -> pd.DataFrame:
    """How many configurations each rule rejected, most first."""
    rejected = df[df["reason"] != ""]
    counts = rejected["reason"].astype(str).value_counts()
    why = [engine_text(reason) for reason in counts.index]
    return pd.DataFrame({_("Why rejected"): why, _("Configurations"): counts.to_numpy()})
