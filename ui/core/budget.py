"""The work each page may do in one rerun, declared once here, and the refusal that says how to
narrow it.

Every page counts its work from its inputs before it runs anything (rows × work), compares the
count with its figure below and, when the count is over, runs none of that work: it says, beside
the field that asked for it and where the result would be, how much was asked, the budget and
which inputs to narrow. The figures are a second or so of one core each:

- /sweep: result rows = batch sizes (one accelerator; the batch list's 4,096 items are under
  the budget, the check stays should that limit grow).
- /compare: result rows = (accelerators + deployments) × batch sizes: 8 × 4,096 = 32,768 rows
  took 2.3 s of CPU before the browser drew them.
- /decode: curve rows = batch sizes × input lengths of the curves: 4,096 × 8 = 32,768 rows took
  2.4 s of CPU a rerun (8 s with two clients); 8,192 rows, 0.6 s.
- /plan: configurations in the grid (ui/plan/grid.py, one vectorised sweep: 50,000 in < 0.5 s).
- /load: simulated events, the engine's upper bound of them counted before anything runs
  (engine.load_events, engine.max_rate_events; ui/load/run.py): at most engine.LOAD_EVENT_US =
  15 µs of CPU each (3-14 µs measured), so 1,000,000 is at most 15 s (a search's bound counts
  five rounds of confirmation runs; one or two are the rule); the default scenario's run,
  checks and search (its bisection and the runs confirming its answer, 3 seeds of 6,000
  requests) are bounded by 560,288 events; the page's first render took 8.4 s of CPU, the
  search 4.3 s of it (its bisection 1.3 s, then four rounds of confirmation).
- /train: configurations evaluated by the searches (ui/train/run.py: 184,320 in 0.7 s).
- /solve: one scenario, bounded by its inputs (a CNN's layers, an LLM's operators): no list.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import streamlit as st

from ui.words.i18n import _

ROWS = {"sweep": 8_192, "compare": 8_192, "decode": 8_192}  # result rows per rerun
PLAN_CONFIGURATIONS = 60_000  # the planner's grid (configurations per rerun)
LOAD_EVENTS = 1_000_000  # simulated events per rerun (an upper bound): at most 15 s at 15 µs each
TRAIN_CONFIGURATIONS = 200_000  # configurations evaluated per rerun (~1 s)


def rows_refusal(page: str, counts: Mapping[str, int], narrow: str) -> str | None:
    """Why the rows are refused (None: within the page's budget), with how to narrow them.

    Args:
        counts: what multiplies into the rows, by name (translated), e.g. {"batch sizes": 4096}.
        narrow: the sentence saying which inputs to narrow (translated).
    """
    rows = math.prod(counts.values())
    if rows <= ROWS[page]:
        return None
    parts = " × ".join(f"{n:,} {what}" for what, n in counts.items())
    return _(
        "This would compute {rows} rows ({parts}), more than this page's budget of {budget} "
        "rows per rerun (about a second of work), so none of them was computed. {narrow}"
    ).format(rows=f"{rows:,}", parts=parts, budget=f"{ROWS[page]:,}", narrow=narrow)


def refuse(text: str, where=st) -> None:
    """The refusal, where it is shown (beside the field, or where the result would be)."""
    where.error(text, icon="🚫")
