"""Accuracy report: every shipped profile on every shipped file, and the fit out of sample.

    .venv/bin/python bench/accuracy_report.py

Prints, as Markdown, the tables of docs/model.md ("Accuracy"): (1) the MAPE of `tutorial`,
`trtllm` and `vllm` on each shipped measurements file (a profile on another stack's file is out
of sample); (2) for `trtllm`, leave one model out and leave one accelerator out: refit on the
remaining rows exactly as its recorded command does (the same start and fixed memory reserve),
predict the held-out rows, per group and pooled. Rerun it after any change to the model, the
catalogue, the measurements or the profiles (tests/test_cli_accuracy.py checks the tables).
"""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from engine.accuracy.calibrate import fit  # noqa: E402
from engine.accuracy.measurements import read_measurements  # noqa: E402
from engine.accuracy.validate import ServingPredictor, summarise, validate  # noqa: E402
from engine.assumptions import make_assumptions  # noqa: E402
from engine.catalog.profiles import get_profile  # noqa: E402

DATA = ROOT / "data" / "measurements"
PROFILES = ("tutorial", "trtllm", "vllm")


def by_file() -> list[str]:
    lines = [
        "| file | rows | " + " | ".join(f"{p} MAPE %" for p in PROFILES) + " |",
        "|---|---|" + "---|" * len(PROFILES),
    ]
    for path in sorted(DATA.glob("*.csv")):
        rows = read_measurements([path])
        cells = []
        for name in PROFILES:
            s = summarise(validate(rows, name))
            fitted = path.name in get_profile(name).fitted_on
            mark = " (fitted on)" if fitted else ""
            cells.append(f"{s['mape_pct']:.1f}{mark} ({s['predicted_rows']} of {s['rows']})")
        lines.append(f"| {path.name} | {len(rows)} | " + " | ".join(cells) + " |")
    return lines


def trtllm_start():
    """The start the shipped trtllm profile was fitted from: tutorial, reserve fixed."""
    tutorial, shipped = get_profile("tutorial"), get_profile("trtllm")
    reserve = shipped.values()["memory_reserve"]
    return replace(tutorial, assumptions=make_assumptions(tutorial.assumptions,
                                                          memory_reserve=reserve))  # fmt: skip


def leave_one_out(rows, key: str) -> list[str]:
    lines = [
        f"| held-out {key} | rows | tutorial MAPE % | trtllm refit on the rest: MAPE % |",
        "|---|---|---|---|",
    ]
    predictor, start = ServingPredictor(), trtllm_start()
    pooled = {"tutorial": [], "refit": []}
    for group in sorted({getattr(m, key) for m in rows}):
        held = [m for m in rows if getattr(m, key) == group]
        rest = [m for m in rows if getattr(m, key) != group]
        assumptions, _, _ = fit(rest, predictor, start)
        refit = replace(start, name="refit", assumptions=assumptions)
        tut, got = validate(held, "tutorial"), validate(held, refit)
        t = list(tut.loc[tut["reason"] == "", "ape_pct"])
        f = list(got.loc[got["reason"] == "", "ape_pct"])
        pooled["tutorial"] += t
        pooled["refit"] += f
        lines.append(f"| {group} | {len(held)} | {np.mean(t):.1f} | {np.mean(f):.1f} |")
    t, f = (float(np.mean(pooled[p])) for p in ("tutorial", "refit"))
    lines.append(f"| all held-out rows | {len(rows)} | {t:.1f} | {f:.1f} |")
    return lines


def parameters() -> list[str]:
    names = sorted({k for p in PROFILES for k in get_profile(p).values()})
    lines = ["| assumption | " + " | ".join(PROFILES) + " |", "|---|" + "---|" * len(PROFILES)]
    for name in names:
        cells = []
        for p in PROFILES:
            profile = get_profile(p)
            value = profile.values().get(name)
            shown = "—" if value is None else f"{value:.4g}"
            cells.append(shown + (" (fitted)" if name in profile.fitted else ""))
        lines.append(f"| `{name}` | " + " | ".join(cells) + " |")
    return lines


def main() -> int:
    rows = list(read_measurements([DATA / "trtllm-v0.6.1.csv"]))
    out = ["Profiles:", "", *parameters(), "", "Every profile on every shipped file:", ""]
    out += [*by_file(), ""]
    for key in ("model", "hardware"):
        out += [f"trtllm, leave one {key} out:", "", *leave_one_out(rows, key), ""]
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
