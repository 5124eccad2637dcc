"""The training planner's link parameters of its "Pareto front" and "Reliability at scale"
sections (ui/train/pareto.py, ui/train/reliability.py), declared here so that ui/train/link.py
adds them without importing the sections.

- pareto: the objectives, a list of OBJECTIVES' names (the chart's axes are the first two);
  max_step_s: the longest step allowed (s); min_headroom_gb: the least memory headroom (GB).
- checkpoint_s, restart_s, job_hours and <part>_mttf_hours for each part of engine.FLEET_PARTS
  (gpu, hbm, nic, software, switch, host, psu), named as the `reliability` CLI's flags.
"""

from __future__ import annotations

import engine
from ui.links.params import Param, choice, listing, number, write_list, write_number
from ui.words.i18n import N_

# column: (words, "min" or "max", unit, plotted = value × factor, hover = plotted × scale, log)
OBJECTIVES = {
    "step_time_s": (N_("Step time (s)"), "min", "s", 1.0, 1.0, False),
    "memory_per_gpu_bytes": (N_("Memory per GPU (GB)"), "min", "B", 1e-9, 1e9, False),
    "memory_headroom_bytes": (N_("Memory headroom (GB)"), "max", "B", 1e-9, 1e9, False),
    "tokens_per_s": (N_("Tokens/s"), "max", "", 1.0, 1.0, False),
    "mfu": (N_("MFU (%)"), "max", "%", 100.0, 1.0, False),
    "cost_to_train_usd": (N_("Cost to the token budget (USD)"), "min", "", 1.0, 1.0, True),
}
DEFAULT_OBJECTIVES = ["step_time_s", "memory_per_gpu_bytes"]


def pareto_params() -> list[Param]:
    return [
        Param(
            name="pareto",
            read=listing(choice(tuple(OBJECTIVES)), max_items=len(OBJECTIVES), min_items=2),
            write=write_list,
            default=DEFAULT_OBJECTIVES,
        ),
        Param("max_step_s", number(0.001, 1e6), write_number),
        Param("min_headroom_gb", number(-1e6, 1e6), write_number),
    ]


def _write_hours(value: object) -> str:
    """An MTTF as the link writes it: shortest form, or every digit where the short one would
    not read back as the same number (a team's MTTF may carry decimals: 108,335.02… h)."""
    short = write_number(value)
    return short if float(short) == float(value) else repr(float(value))


def reliability_params() -> list[Param]:
    """Defaults: engine.FleetParts'."""
    base = engine.FleetParts()
    out = [
        Param("checkpoint_s", number(1.0, 86_400.0), write_number, default=base.checkpoint_s),
        Param("restart_s", number(0.0, 86_400.0), write_number, default=base.restart_s),
        Param("job_hours", number(1.0, 100_000.0), write_number, default=base.job_hours),
    ]
    for part in engine.FLEET_PARTS:
        out.append(
            Param(
                name=f"{part.name}_mttf_hours",
                read=number(1.0, 1e12),
                write=_write_hours,
                default=part.mttf_hours,
            )
        )
    return out
