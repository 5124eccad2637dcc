"""Accuracy report: in-sample and leave-one-group-out MAPE of the tutorial and fitted profiles.

    .venv/bin/python bench/accuracy_report.py [FILE.csv ...]

For the shipped measurements (default) it prints, as Markdown, (1) the in-sample MAPE of
`tutorial` and `trtllm`, and (2) leave-one-group-out: hold out one model (then one
accelerator), refit the profile from `tutorial` on the remaining rows exactly as `calibrate`
does, and predict the held-out rows. `tutorial` is never fitted, so its column is simply its
error on the held-out rows. The tables in docs/model.md ("Accuracy") are this output.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from engine.accuracy.calibrate import calibrate  # noqa: E402
from engine.accuracy.measurements import read_measurements  # noqa: E402
from engine.accuracy.validate import summarise, validate  # noqa: E402

DATA = ROOT / "data" / "measurements"
DEFAULT = [DATA / "trtllm-v0.6.1.csv"]  # what the shipped trtllm profile is fitted on


def _mape(df) -> tuple[float, int, int]:
    ok = df[df["reason"] == ""]
    return float(ok["ape_pct"].mean()), len(ok), len(df)


def in_sample(rows) -> list[str]:
    lines = [
        "| profile | rows predicted | MAPE % | median APE % | max APE % |",
        "|---|---|---|---|---|",
    ]
    for name in ("tutorial", "trtllm"):
        s = summarise(validate(rows, name))
        lines.append(
            f"| {name} | {s['predicted_rows']} of {s['rows']} | {s['mape_pct']:.1f} | "
            f"{s['median_ape_pct']:.1f} | {s['max_ape_pct']:.1f} |"
        )
    return lines


def leave_one_out(rows, key: str) -> list[str]:
    lines = [
        f"| held-out {key} | rows | tutorial MAPE % | refit on the rest: MAPE % (predicted) |",
        "|---|---|---|---|",
    ]
    pooled = {"tutorial": [], "fitted": []}
    for group in sorted({getattr(m, key) for m in rows}):
        held = [m for m in rows if getattr(m, key) == group]
        rest = [m for m in rows if getattr(m, key) != group]
        profile = calibrate(rest, "tutorial", name=f"without-{group.lower()}")
        tut, fit = validate(held, "tutorial"), validate(held, profile)
        pooled["tutorial"] += list(tut.loc[tut["reason"] == "", "ape_pct"])
        pooled["fitted"] += list(fit.loc[fit["reason"] == "", "ape_pct"])
        (t, _, n), (f, k, _) = _mape(tut), _mape(fit)
        lines.append(f"| {group} | {n} | {t:.1f} | {f:.1f} ({k} of {n}) |")
    t, f = (float(np.mean(pooled[p])) for p in ("tutorial", "fitted"))
    lines.append(
        f"| all held-out rows | {len(rows)} | {t:.1f} | {f:.1f} ({len(pooled['fitted'])}) |"
    )
    return lines


def other_files(fitted: list[Path]) -> list[str]:
    """MAPE of both profiles on every other shipped file (neither profile saw them)."""
    lines = ["| file | rows | tutorial MAPE % | trtllm MAPE % |", "|---|---|---|---|"]
    for path in sorted(set(DATA.glob("*.csv")) - {p.resolve() for p in fitted}):
        rows = read_measurements([path])
        mape = [_mape(validate(rows, name)) for name in ("tutorial", "trtllm")]
        lines.append(f"| {path.name} | {len(rows)} | {mape[0][0]:.1f} | {mape[1][0]:.1f} |")
    return lines


def main(argv: list[str]) -> int:
    files = [Path(a).resolve() for a in argv] or DEFAULT
    rows = list(read_measurements(files))
    out = ["In-sample:", "", *in_sample(rows), ""]
    for key in ("model", "hardware"):
        out += [f"Leave one {key} out:", "", *leave_one_out(rows, key), ""]
    out += ["Other shipped measurements (not fitted on):", "", *other_files(files), ""]
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
