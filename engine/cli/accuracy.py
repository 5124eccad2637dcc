"""`python -m engine calibrate|validate`: fit a profile, and check one against measurements.

`calibrate FILE... [--out data/profiles/<name>.toml]` prints the fitted parameters and the
in-sample errors (and writes the profile); `validate FILE [--profile NAME|FILE.toml]` prints
every row with its prediction and error, the MAPE and the worst rows. Rows the model cannot
express are listed with their reason; exit status 2 only when no row can be predicted (or on
bad input). See docs/model.md ("Accuracy").
"""

from __future__ import annotations

import argparse
import math
from dataclasses import replace
from pathlib import Path

from engine.accuracy.calibrate import FIT_PARAMS, calibrate, fit_warnings, with_held_out
from engine.accuracy.measurements import read_measurements
from engine.accuracy.validate import fit_parts, summarise, validate
from engine.assumptions import REGISTRY, make_assumptions
from engine.catalog.profiles import (
    DEFAULT_PROFILE,
    MAX_PROFILE_BYTES,
    Profile,
    check_profile_name,
    get_profile,
    profile_from_toml,
    profile_to_toml,
)
from engine.catalog.reader import Catalog
from engine.cli.flags import add_serving_flags
from engine.cli.output import json_text
from engine.files import echo, read_bounded
from engine.report.export import key_value_table


def add_accuracy_commands(sub) -> None:
    """Register the `calibrate` and `validate` sub-commands on `sub` (argparse subparsers)."""
    p = sub.add_parser("calibrate", help="fit a profile to measurements (least squares)")
    p.add_argument("files", nargs="+", metavar="FILE", help="measurements CSV file(s)")
    p.add_argument("--start", default="tutorial", help="profile to start from (default tutorial)")
    p.add_argument("--name", help="the new profile's name (default: --out's stem, or fitted)")
    p.add_argument("--out", metavar="TOML", help="write the profile there")
    p.add_argument("--format", choices=["json", "table"], default="table")
    p.add_argument(
        "--precisions",
        metavar="NAMES",
        help="fit only the rows in these comma-separated precisions, as the files name them "
        "(default: every row); `validate` predicts the others out of sample",
    )
    p.add_argument(
        "--fit",
        metavar="NAMES",
        help="comma-separated parameters that may be fitted "
        f"(default: all of {', '.join(FIT_PARAMS)}; only identifiable ones are)",
    )
    add_serving_flags(p)  # an assumption given here is fixed: set on the start, never fitted
    p = sub.add_parser("validate", help="predicted vs measured for every row of a file")
    p.add_argument("file", metavar="FILE", help="measurements CSV file")
    p.add_argument(
        "--profile",
        default=DEFAULT_PROFILE,
        help=f"a profile name or a .toml file (default {DEFAULT_PROFILE})",
    )
    p.add_argument("--format", choices=["json", "table"], default="table")


def profile_arg(text: str) -> Profile:
    """A --profile flag: a built-in name, or a .toml file read with the upload limit."""
    if text.endswith(".toml"):
        path = Path(text)
        data = read_bounded(path, MAX_PROFILE_BYTES, f"--profile {echo(text, 60)}")
        return profile_from_toml(data, path.name, origin="file")
    return get_profile(text)


def _fit_list(text: str | None) -> list[str]:
    """The parameters `--fit` names (all fittable ones when not given)."""
    if text is None:
        return list(FIT_PARAMS)
    names = [n.strip() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if n not in FIT_PARAMS]
    if unknown or not names:
        raise ValueError(
            f"--fit: cannot fit {unknown[0] if unknown else 'nothing'!r} "
            f"(fittable: {', '.join(FIT_PARAMS)})"
        )
    return names


def _rows_in(rows: list, text: str | None) -> tuple[list, list, list[str]]:
    """The rows `--precisions` keeps (all when not given), those it leaves out, and the
    precisions it names."""
    if text is None:
        return rows, [], []
    names = list(dict.fromkeys(n.strip().lower() for n in text.split(",") if n.strip()))
    kept = [m for m in rows if m.precision in names]
    if not kept:
        found = ", ".join(dict.fromkeys(m.precision for m in rows))
        raise ValueError(
            f"--precisions: no row is in {echo(text, 40)} (the files' precisions: {found})"
        )
    return kept, [m for m in rows if m.precision not in names], names


def cmd_calibrate(args: argparse.Namespace, catalog: Catalog) -> str:
    """Fit, optionally write the TOML, and print the parameters and in-sample errors."""
    name = check_profile_name(args.name or (Path(args.out).stem if args.out else "fitted"))
    fixed = {
        a.name: getattr(args, a.name) for a in REGISTRY if getattr(args, a.name, None) is not None
    }
    flags = [
        f"--{k.replace('_', '-')} {v if isinstance(v, str) else format(v, 'g')}"
        for k, v in fixed.items()
    ]
    chosen = _fit_list(args.fit)
    flags += ["--fit", ",".join(chosen)] if args.fit else []
    rows, held_out, precisions = _rows_in(read_measurements(args.files), args.precisions)
    flags += ["--precisions", ",".join(precisions)] if precisions else []
    command = " ".join(
        ["python -m engine calibrate", *args.files, "--start", args.start, *flags]
        + ["--name", name]
        + (["--out", args.out] if args.out else [])
    )
    start = profile_arg(args.start)
    if fixed:  # what the user knows of the stack: set, and left out of the fit
        start = replace(start, assumptions=make_assumptions(start.assumptions, **fixed))
    profile = calibrate(
        rows,
        start,
        name=name,
        params=[p for p in chosen if p not in fixed],
        command=command,
        catalog=catalog,
    )
    profile = with_held_out(profile, held_out, catalog)
    if args.out:
        profile = replace(profile, scheduler=_kept_scheduler(args.out, profile.scheduler))
        try:
            Path(args.out).write_text(profile_to_toml(profile))
        except OSError as exc:
            raise ValueError(
                f"--out {echo(args.out, 60)}: cannot write it ({exc.strerror})"
            ) from None
    if args.format == "json":
        return json_text(profile.as_dict())
    fitted = {k: v for k, v in profile.values().items() if k in profile.fitted}
    head = {"profile": profile.name, "rows": profile.rows, "fitted_on": list(profile.fitted_on)}
    lines = [key_value_table(head), "", "fitted parameters:", key_value_table(fitted)]
    lines += ["", "errors (in sample; lomo/loao: leave one model/accelerator out):"]
    lines += [key_value_table(dict(profile.residuals)), "", "worst:"]
    lines += [f"  {w}" for w in profile.worst]
    return "\n".join(lines + [f"note: {w}" for w in fit_warnings(profile)])


def _kept_scheduler(path: str, fitted):
    """A profile file being refitted keeps its own [scheduler] table (its serving stack)."""
    try:
        data = read_bounded(path, MAX_PROFILE_BYTES, "--out")
        old = profile_from_toml(data, Path(path).name, origin="file")
    except (OSError, ValueError):
        return fitted
    return fitted if old.scheduler is None else old.scheduler


def cmd_validate(args: argparse.Namespace, catalog: Catalog) -> str:
    """Every row with its prediction; exit 2 (ValueError) only if none can be predicted."""
    df = validate(read_measurements([args.file]), profile_arg(args.profile), catalog=catalog)
    summary = summarise(df)
    if summary["predicted_rows"] == 0:
        reasons = "; ".join(f"row {u['row']}: {u['reason']}" for u in summary["unpredicted"][:5])
        raise ValueError(f"no row of {Path(args.file).name} can be predicted ({reasons})")
    if args.format == "json":
        return json_text(df.to_dict("records"))
    return validation_table(df, summary)


def _num(value: float) -> str:
    """4 significant digits without exponents (26150 -> '26,150'; 7.325 -> '7.325')."""
    if math.isnan(value):
        return "-"
    return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.4g}"


def validation_table(df, summary: dict) -> str:
    """The rows, then MAPE overall / per accelerator / per metric, worst and unpredicted rows."""
    shown = df[["row", "model", "hardware", "tp", "batch_size", "input_tokens", "output_tokens"]]
    shown = shown.assign(
        metric=df["metric"],
        measured=df["value"].map(_num),
        predicted=df["predicted"].map(_num),
        error_pct=df["error"].map(lambda v: "-" if math.isnan(v) else f"{v * 100:+.1f}"),
    )
    pct = {k: round(float(summary[k]), 1) for k in ("mape_pct", "median_ape_pct", "max_ape_pct")}
    lines = [shown.to_string(index=False), ""]
    lines.append(
        f"profile {summary['profile']}: {summary['predicted_rows']} of "
        f"{summary['rows']} rows predicted"
    )
    lines.append(key_value_table(pct))
    for label, part in fit_parts({summary["profile"]: df}):
        if label:  # the profile was fitted on some of these rows: each part's error apart
            ok = part & (df["reason"] == "").to_numpy()
            kind = "in sample" if df.loc[ok, "in_sample"].all() else "out of sample"
            mape = df.loc[ok, "ape_pct"].mean()
            lines.append(f"mape_pct {kind} ({label}, {int(ok.sum())} rows): {mape:.1f}")
    for key in ("hardware", "metric", "model"):
        by = {k: round(v, 1) for k, v in summary[f"mape_pct_by_{key}"].items()}
        lines.append(f"mape_pct by {key}: " + ", ".join(f"{k} {v}" for k, v in by.items()))
    lines.append("worst rows:")
    lines += [
        f"  row {w['row']}: {w['model']} on {w['hardware']}, {w['metric']}: {w['error']:+.1%}"
        for w in summary["worst"]
    ]
    if summary["unpredicted"]:
        lines.append(f"rows not predicted ({len(summary['unpredicted'])}):")
        lines += [f"  row {u['row']}: {u['reason']}" for u in summary["unpredicted"]]
    return "\n".join(lines)
