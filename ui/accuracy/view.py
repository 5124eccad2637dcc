"""The Accuracy page's pure parts: the tables and the words about profiles and their errors.

Everything here is a function of data (no Streamlit), so it is tested without a browser. User
text (profile names, file names, sources from an uploaded file) is returned as data; the page
shows it in tables (inert) or through ui.core.text.plain. Numbers through ui.core.format.
The accuracy of the serving model and the profiles: docs/model.md ("Accuracy").
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

import pandas as pd

import engine
from engine import ASSUMPTIONS, PROFILE_KEYS, Profile
from ui.core.format import MISSING, fmt, fmt_all

SCENARIO_COLUMNS = ("model", "hardware", "tp", "pp", "precision", "kv_precision", "batch_size")
SCENARIO_COLUMNS += ("input_tokens", "output_tokens", "metric")
# What an unset assumption stands for, from the engine's registry.
UNSET = {a.name: a.none_means or "unset" for a in ASSUMPTIONS}
LABELS = {a.name: a.label for a in ASSUMPTIONS}
NOT_FITTED = "nothing fitted"


def pct(value: object) -> str:
    """A percentage already in % ('12.8%'; '—' when there is none): the one formatter's."""
    return fmt(value, "%")


def signed(value: float, unit: str = "%") -> str:
    """A signed number in its unit (a percentage already in % by default): '+4.5%', '-12.2%'."""
    text = fmt(value, unit)
    return text if text.startswith("-") or text == MISSING else "+" + text


def stack(profile: Profile, engines: Mapping[str, Counter]) -> str:
    """The stack and release a profile describes: the `engine` labels of the rows it was fitted
    on, most rows first ('TensorRT-LLM 0.6.1 (29 rows), ...'), from `engines` (file -> label
    counts); a profile fitted on nothing describes no stack."""
    if not profile.fitted_on:
        return "none: " + (profile.description or "hand-set")
    counts: Counter = Counter()
    for file in profile.fitted_on:
        counts.update(engines.get(file, Counter()))
    if not counts:
        return "as measured in " + ", ".join(profile.fitted_on)
    return ", ".join(f"{label} ({n:,} rows)" for label, n in counts.most_common())


def scheduler(profile: Profile) -> str:
    """The scheduler the load model uses with the profile, in words."""
    s = profile.scheduler
    if s is None:
        return "no [scheduler] table: the load model uses vLLM's defaults"
    chunked = "chunked prefill" if s.chunked_prefill else "no chunked prefill"
    return (
        f"{s.stack} ({s.release}): up to {s.max_num_seqs:,} sequences and "
        f"{s.max_batched_tokens:,} tokens per step, {chunked}, KV cache {s.kv_policy}"
    )


def picker_label(profile: Profile, engines: Mapping[str, Counter]) -> str:
    """The profile picker's line: name, the stack and release it describes, its scheduler."""
    main = stack(profile, engines).split(" (")[0] if profile.fitted_on else "no stack"
    s = profile.scheduler
    sched = "vLLM defaults (no table)" if s is None else f"{s.stack} ({s.release})"
    return f"{profile.name} · {main} · scheduler: {sched}"[:120]


def _residual(profile: Profile, key: str) -> str:
    value = profile.residuals.get(key)
    return MISSING if value is None else pct(value)


def error_cells(profile: Profile) -> dict[str, str]:
    """The profile's errors in sample and out of sample, and its band, as table cells."""
    band = engine.error_band(profile)
    return {
        "In sample (MAPE)": _residual(profile, "mape_pct") if profile.fitted else NOT_FITTED,
        "Leave one model out (MAPE)": _residual(profile, "lomo_mape_pct"),
        "Leave one accelerator out (MAPE)": _residual(profile, "loao_mape_pct"),
        "Error band": MISSING if band.pct is None else f"±{pct(band.pct)}",
        "Band basis": band.basis,
    }


def in_sample_note(profile: Profile) -> str:
    """Beside a MAPE measured on the rows the profile was fitted on: what it is out of sample."""
    band = engine.error_band(profile)
    out = error_cells(profile)["Error band"]
    return (
        f"In sample: {profile.name} was fitted on these rows, so this MAPE flatters it. Out of "
        f"sample: {out} ({band.basis})."
    )


def profiles_table(profiles: Mapping[str, Profile], engines: Mapping[str, Counter]):
    """Every serving profile on offer: stack and release, scheduler, what it was fitted on,
    its errors in and out of sample and its band."""
    rows = []
    for name, p in profiles.items():
        fitted = f"{p.rows:,} rows of {', '.join(p.fitted_on)}" if p.fitted_on else MISSING
        rows.append(
            {"Profile": name, "Stack and release": stack(p, engines),
             "Scheduler": scheduler(p), "Fitted on": fitted, **error_cells(p)}
        )  # fmt: skip
    return pd.DataFrame(rows)


def ground_lines(profile: Profile) -> list[str]:
    """The calibrated ground, one line per kind ('Accelerators: H100, A100, L40S')."""
    kinds = {"hardware": "Accelerators", "precisions": "Precisions"}
    kinds |= {"families": "Architecture families", "models": "Models"}
    return [f"{word}: {', '.join(profile.ground[k])}" for k, word in kinds.items()
            if profile.ground.get(k)]  # fmt: skip


def fitted_table(profile: Profile) -> pd.DataFrame:
    """The parameters the fit set, with their values, units and meaning."""
    values = profile.values()
    return pd.DataFrame(
        {
            "parameter": list(profile.fitted),
            "fitted value": [fmt(values.get(k)) for k in profile.fitted],
            "meaning": [LABELS.get(k, "") for k in profile.fitted],
        }
    )


def profile_table(profile: Profile) -> pd.DataFrame:
    """Every assumption a profile can set, by user name (with its unit), unset ones said so."""
    values = profile.values()
    return pd.DataFrame(
        {
            "assumption": list(PROFILE_KEYS),
            "value": [f"{values[k]:.6g}" if k in values else UNSET[k] for k in PROFILE_KEYS],
        }
    )


def mape_by(frames: Mapping[str, pd.DataFrame], key: str | None) -> pd.DataFrame:
    """MAPE of each profile (columns) overall or per `key` (rows), predicted rows only, as
    ui.core.format text ('37.3%')."""
    columns = {}
    for name, df in frames.items():
        ok = df[df["reason"] == ""]
        if key is None:
            columns[name] = pd.Series({"all rows": ok["ape_pct"].mean()})
        else:
            columns[name] = ok.groupby(key)["ape_pct"].mean()
    table = pd.DataFrame(columns)
    table.index.name = key or "rows"
    return table.map(pct).add_suffix(" MAPE").reset_index()


def per_file_table(frames: Mapping[str, Mapping[str, pd.DataFrame]], profiles) -> pd.DataFrame:
    """Every profile on every file (docs/model.md's table): MAPE, '(fitted on)' where the
    profile was fitted on that file, and the rows predicted of the rows given.

    Args:
        frames: file -> profile -> engine.validate's frame.
        profiles: name -> Profile.
    """
    rows = []
    for file, by_profile in frames.items():
        row = {"file": file, "rows": len(next(iter(by_profile.values())))}
        for name, df in by_profile.items():
            s = engine.summarise(df)
            mark = " (fitted on)" if file in profiles[name].fitted_on else ""
            row[f"{name} MAPE"] = (
                f"{pct(s['mape_pct'])}{mark} ({s['predicted_rows']} of {s['rows']})"
            )
        rows.append(row)
    return pd.DataFrame(rows)


def schema_table() -> pd.DataFrame:
    """The measurements file's columns, required or optional, and what each holds."""
    words = engine.MEASUREMENT_COLUMNS
    return pd.DataFrame(
        {
            "column": list(words),
            "required": ["no" if w.startswith("optional") else "yes" for w in words.values()],
            "what it holds": list(words.values()),
        }
    )


def metrics_table() -> pd.DataFrame:
    """The metric names a file may use, and the unit of each one's value."""
    units = engine.MEASUREMENT_METRICS
    return pd.DataFrame({"metric": list(units), "unit of value": list(units.values())})


def results_table(df: pd.DataFrame) -> pd.DataFrame:
    """The rows with unit-bearing column names, as shown and downloaded."""
    out = df[list(SCENARIO_COLUMNS)].copy()
    out["unit"] = df["metric"].map(engine.MEASUREMENT_METRICS)
    out["measured_in_unit"] = df["value"]
    out["predicted_in_unit"] = df["predicted"]
    out["error_pct"] = df["error"] * 100.0
    out["profile"] = df["profile"]
    out["not_predicted_because"] = df["reason"]
    for column in ("engine", "source", "file", "row"):  # provenance last
        out[column] = df[column]
    return out


TRAINING = {  # column of engine.training_fit_rows: on-screen header
    "table": "Table", "scheme": "Scheme", "layers": "Layers", "hidden": "Hidden",
    "gpus": "GPUs", "tp": "TP", "pp": "PP", "vp": "Virtual stages",
    "micro_batch_size": "Micro-batch", "global_batch_size": "Global batch",
}  # fmt: skip


def training_table(df: pd.DataFrame) -> pd.DataFrame:
    """The runs the training profile was fitted on, measured against predicted (in sample)."""
    out = pd.DataFrame({header: df[column] for column, header in TRAINING.items()})
    unit = str(df["unit"].iloc[0]) if len(df) else ""
    out[f"Measured ({unit})"] = fmt_all(df["measured"])
    out[f"Predicted ({unit})"] = fmt_all(df["predicted"])
    out["Error (in sample)"] = [signed(v) for v in df["error_pct"]]
    out["Filled in"] = df["filled"]
    return out


def training_values(profile: Profile) -> pd.DataFrame:
    """Every assumption a training profile sets, with its meaning."""
    values = profile.values()
    return pd.DataFrame(
        {
            "assumption": list(values),
            "value": [f"{v:.6g}" for v in values.values()],
            "meaning": [LABELS.get(k, "") for k in values],
        }
    )


def training_cells(profile: Profile) -> dict[str, tuple[str, str]]:
    """The training profile's errors: label -> (value, what it is)."""
    r = profile.residuals
    return {
        "In sample (MAPE)": (_residual(profile, "mape_pct"), f"{profile.rows} runs, refit on all"),
        "Leave one row out (MAPE)": (
            _residual(profile, "loo_row_mape_pct"),
            "refit on the other runs, predict the one left out; max "
            + _residual(profile, "loo_row_max_ape_pct"),
        ),
        "Leave one table out (MAPE)": (
            _residual(profile, "loo_table_mape_pct"),
            "fit Table 1 and predict Table 2, and back; max "
            + (pct(r["loo_table_max_ape_pct"]) if "loo_table_max_ape_pct" in r else MISSING),
        ),
    }
