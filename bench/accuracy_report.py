"""Accuracy report: every shipped profile on every shipped file, and the fit out of sample.

    .venv/bin/python bench/accuracy_report.py

Prints, as Markdown, the tables of docs/model.md ("Accuracy"): (1) the MAPE and the median
predicted ÷ measured of every built-in profile on each shipped measurements file (a profile on
another stack's or release's file is out of sample); (2) for each TensorRT-LLM profile, leave
one model out and leave one accelerator out: refit on the remaining rows exactly as its
recorded command does (the same start and fixed memory reserve), predict the held-out rows,
per group and pooled. Rerun it after any change to the model, the catalogue, the measurements
or the profiles (tests/test_cli_accuracy.py checks the tables).
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
from engine.accuracy.validate import ServingPredictor, fit_parts, overall, validate  # noqa: E402
from engine.assumptions import make_assumptions  # noqa: E402
from engine.catalog.profiles import get_profile  # noqa: E402

DATA = ROOT / "data" / "measurements"
PROFILES = ("tutorial", "trtllm-0.6.1", "trtllm-1.0", "vllm-mi300x")
# Each TensorRT-LLM profile: the file it is fitted on, the profile its command starts from, the
# assumptions it sets (its memory reserve, its kernel transfer) and the precisions it keeps
# (None: all) (data/profiles/<name>.toml, `command`).
FITS = {
    "trtllm-0.6.1": ("trtllm-v0.6.1.csv", "tutorial", {"memory_reserve": 0.04}, None),
    "trtllm-1.0": (
        "trtllm-v1.0-perf-overview.csv",
        "trtllm-0.6.1",
        {"memory_reserve": 0.05, "kernel_curves": "trtllm", "kernel_reference": "H100"},
        ("fp8",),
    ),
}


def _cell(df) -> str:
    ok = df[df["reason"] == ""]
    s = overall(df)
    ratio = float(np.median(ok["predicted"] / ok["value"])) if len(ok) else float("nan")
    mark = " (fitted on)" if len(ok) and ok["in_sample"].all() else ""
    return f"{s['mape_pct']:.1f}{mark} ({s['predicted_rows']} of {s['rows']}; ×{ratio:.2f})"


def by_file() -> list[str]:
    """A line per file, or per part of a file where a profile was fitted on some of its rows
    (engine.accuracy.validate.fit_parts: its fitted precisions, then the others)."""
    lines = [
        "| file | rows | " + " | ".join(f"{p} MAPE % (×median)" for p in PROFILES) + " |",
        "|---|---|" + "---|" * len(PROFILES),
    ]
    for path in sorted(DATA.glob("*.csv")):
        rows = read_measurements([path])
        frames = {name: validate(rows, name) for name in PROFILES}
        for label, mask in fit_parts(frames):
            cells = [_cell(df[mask]) for df in frames.values()]
            name = f"{path.name} ({label})" if label else path.name
            lines.append(f"| {name} | {int(mask.sum())} | " + " | ".join(cells) + " |")
    return lines


def start_of(name: str):
    """The start a shipped TensorRT-LLM profile was fitted from, what its command sets fixed."""
    _, start, fixed, _ = FITS[name]
    base = get_profile(start)
    return replace(base, assumptions=make_assumptions(base.assumptions, **fixed))


def leave_one_out(name: str, key: str) -> list[str]:
    """Refit `name` without each `key` group and predict that group: MAPE and the median
    predicted ÷ measured, per group and pooled."""
    file, _, _, precisions = FITS[name]
    rows = [
        m for m in read_measurements([DATA / file]) if not precisions or m.precision in precisions
    ]
    lines = [
        f"| {name}: held-out {key} | rows | tutorial MAPE % | refit on the rest: MAPE % "
        "| refit: median predicted ÷ measured |",
        "|---|---|---|---|---|",
    ]
    start = start_of(name)
    predictor = ServingPredictor(scheduler=start.scheduler)
    pooled = {"tutorial": [], "refit": [], "ratio": []}
    for group in sorted({getattr(m, key) for m in rows}):
        held = [m for m in rows if getattr(m, key) == group]
        rest = [m for m in rows if getattr(m, key) != group]
        assumptions, _, _ = fit(rest, predictor, start)
        refit = replace(start, name="refit", assumptions=assumptions)
        tut, got = validate(held, "tutorial"), validate(held, refit)
        t = list(tut.loc[tut["reason"] == "", "ape_pct"])
        ok = got[got["reason"] == ""]
        if ok.empty:  # nothing of this group can be predicted (unknown model or format)
            continue
        ratio = list(ok["predicted"] / ok["value"])
        pooled["tutorial"] += t
        pooled["refit"] += list(ok["ape_pct"])
        pooled["ratio"] += ratio
        lines.append(
            f"| {group} | {len(ok)} | {np.mean(t):.1f} | {ok['ape_pct'].mean():.1f} "
            f"| {np.median(ratio):.2f} |"
        )
    t, f = (float(np.mean(pooled[p])) for p in ("tutorial", "refit"))
    n, r = len(pooled["refit"]), float(np.median(pooled["ratio"]))
    lines.append(f"| all held-out rows | {n} | {t:.1f} | {f:.1f} | {r:.2f} |")
    return lines


def parameters() -> list[str]:
    names = sorted({k for p in PROFILES for k in get_profile(p).values()})
    lines = ["| assumption | " + " | ".join(PROFILES) + " |", "|---|" + "---|" * len(PROFILES)]
    for name in names:
        cells = []
        for p in PROFILES:
            profile = get_profile(p)
            value = profile.values().get(name)
            shown = "—" if value is None else value if isinstance(value, str) else f"{value:.4g}"
            cells.append(shown + (" (fitted)" if name in profile.fitted else ""))
        lines.append(f"| `{name}` | " + " | ".join(cells) + " |")
    return lines


def main() -> int:
    out = ["Profiles:", "", *parameters(), "", "Every profile on every shipped file:", ""]
    out += [*by_file(), ""]
    for name in FITS:
        for key in ("model", "hardware"):
            out += [f"{name}, leave one {key} out:", "", *leave_one_out(name, key), ""]
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
