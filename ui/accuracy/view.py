"""The Accuracy page's pure parts: the tables and the words about profiles and their errors.

Everything here is a function of data (no Streamlit), so it is tested without a browser. User
text (profile names, file names, sources from an uploaded file) is returned as data; the page
shows it in tables (inert) or through ui.words.text.plain. Numbers through ui.words.format.
Words through ui.words.i18n, during the run; the error cells keep their English keys (N_) and
the page translates them where it shows them; results_table's columns (the CSV) stay English.
The accuracy of the serving model and the profiles: docs/model.md ("Accuracy").
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

import pandas as pd

import engine
from engine import ASSUMPTIONS, PROFILE_KEYS, Profile
from ui.words.data_text import said
from ui.words.format import MISSING, fmt, fmt_all
from ui.words.i18n import N_, _, message_text

SCENARIO_COLUMNS = ("model", "hardware", "tp", "pp", "precision", "kv_precision", "batch_size")
SCENARIO_COLUMNS += ("input_tokens", "output_tokens", "metric")
# What an unset assumption stands for, from the engine's registry.
UNSET = {a.name: a.none_means for a in ASSUMPTIONS}  # what an unset one stands for
LABELS = {a.name: a.label for a in ASSUMPTIONS}
UNITS = {a.name: a.unit for a in ASSUMPTIONS}
NOT_FITTED = N_("nothing fitted")
# The error cells' keys (English, read by the page; shown through _()).
IN_SAMPLE = N_("In sample (MAPE)")
LOMO = N_("Leave one model out (MAPE)")
LOAO = N_("Leave one accelerator out (MAPE)")
BAND = N_("Error band")
BASIS = N_("Band basis")


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
        description = said(profile.description) or _("hand-set")
        return _("none: {description}").format(description=description)
    counts = _labels(profile, engines)
    if not counts:
        return _("as measured in {files}").format(files=", ".join(profile.fitted_on))
    row = _("{label} ({n} rows)")
    return ", ".join(row.format(label=label, n=f"{n:,}") for label, n in counts.most_common())


def _labels(profile: Profile, engines: Mapping[str, Counter]) -> Counter:
    """The `engine` labels of the rows a profile was fitted on, with their counts."""
    counts: Counter = Counter()
    for file in profile.fitted_on:
        counts.update(engines.get(file, Counter()))
    return counts


def scheduler(profile: Profile) -> str:
    """The scheduler the load model uses with the profile, in words."""
    s = profile.scheduler
    if s is None:
        return _("no [scheduler] table: the load model uses vLLM's defaults")
    chunked = _("chunked prefill") if s.chunked_prefill else _("no chunked prefill")
    return _(
        "{stack} ({release}): up to {seqs} sequences and {tokens} tokens per step, {chunked}, "
        "KV cache {kv}"
    ).format(
        stack=s.stack,
        release=said(s.release),
        seqs=f"{s.max_num_seqs:,}",
        tokens=f"{s.max_batched_tokens:,}",
        chunked=chunked,
        kv=said(s.kv_policy),
    )


def picker_label(profile: Profile, engines: Mapping[str, Counter]) -> str:
    """The profile picker's line: name, the stack and release it describes, its scheduler."""
    counts = _labels(profile, engines) if profile.fitted_on else Counter()
    if counts:  # the label of most rows, without its parenthesis
        main = counts.most_common(1)[0][0].split(" (")[0]
    else:
        main = stack(profile, engines).split(" (")[0] if profile.fitted_on else _("no stack")
    s = profile.scheduler
    sched = _("vLLM defaults (no table)") if s is None else f"{s.stack} ({said(s.release)})"
    label = _("{profile} · {stack} · scheduler: {scheduler}")
    name = engine.profile_label(profile.name)  # an alias says what it stands for
    return label.format(profile=name, stack=main, scheduler=sched)[:120]


def _residual(profile: Profile, key: str) -> str:
    value = profile.residuals.get(key)
    return MISSING if value is None else pct(value)


def error_cells(profile: Profile) -> dict[str, str]:
    """The profile's errors in sample and out of sample, and its band, as table cells."""
    band = engine.error_band(profile)
    return {
        IN_SAMPLE: _residual(profile, "mape_pct") if profile.fitted else _(NOT_FITTED),
        LOMO: _residual(profile, "lomo_mape_pct"),
        LOAO: _residual(profile, "loao_mape_pct"),
        BAND: MISSING if band.pct is None else f"±{pct(band.pct)}",
        BASIS: message_text(band.basis),
    }


def in_sample_note(profile: Profile) -> str:
    """Beside a MAPE measured on the rows the profile was fitted on: what it is out of sample."""
    band = engine.error_band(profile)
    out = error_cells(profile)[BAND]
    return _(
        "In sample: {profile} was fitted on these rows, so this MAPE flatters it. Out of "
        "sample: {band} ({basis})."
    ).format(profile=profile.name, band=out, basis=message_text(band.basis))


def part_sample_note(profile: Profile, df: pd.DataFrame) -> str:
    """Beside a MAPE over rows the profile was fitted on in part (engine.validate's
    `in_sample`): how many it was fitted on, in which precisions, and what the others are."""
    fitted = df["in_sample"].to_numpy(dtype=bool)
    out = ~fitted & (df["reason"] == "").to_numpy()
    band = engine.error_band(profile)
    return _(
        "{profile} was fitted on {n} of these rows ({fitted}); the other {m} ({others}) are "
        "predicted out of sample. Out of sample, its band: {band} ({basis})."
    ).format(
        profile=profile.name,
        n=f"{int(fitted.sum()):,}",
        fitted=", ".join(dict.fromkeys(map(str, df.loc[fitted, "precision"]))),
        m=f"{int(out.sum()):,}",
        others=", ".join(dict.fromkeys(map(str, df.loc[out, "precision"]))),
        band=error_cells(profile)[BAND],
        basis=message_text(band.basis),
    )


def profiles_table(profiles: Mapping[str, Profile], engines: Mapping[str, Counter]):
    """Every serving profile on offer: stack and release, scheduler, what it was fitted on,
    its errors in and out of sample and its band."""
    rows = []
    for name, p in profiles.items():
        fitted = MISSING
        if p.fitted_on:
            fitted = _("{n} rows of {files}").format(n=f"{p.rows:,}", files=", ".join(p.fitted_on))
        rows.append(
            {
                _("Profile"): name,
                _("Stack and release"): stack(p, engines),
                _("Scheduler"): scheduler(p),
                _("Fitted on"): fitted,
                **{_(k): v for k, v in error_cells(p).items()},
            }
        )
    return pd.DataFrame(rows)


def ground_lines(profile: Profile) -> list[str]:
    """The calibrated ground, one line per kind ('Accelerators: H100, A100, L40S')."""
    kinds = {"hardware": N_("Accelerators"), "precisions": N_("Precisions")}
    kinds |= {"families": N_("Architecture families"), "models": N_("Models")}
    line = _("{kind}: {items}")
    return [
        line.format(kind=_(word), items=", ".join(profile.ground[k]))
        for k, word in kinds.items()
        if profile.ground.get(k)
    ]


def fitted_table(profile: Profile) -> pd.DataFrame:
    """The parameters the fit set, with their values, units and meaning."""
    values = profile.values()
    return pd.DataFrame(
        {
            _("parameter"): list(profile.fitted),
            _("fitted value"): [fmt(values.get(k)) for k in profile.fitted],
            _("meaning"): [said(LABELS.get(k, "")) for k in profile.fitted],
        }
    )


def _shown(value: float | str) -> str:
    """A profile value as the table shows it: a word as is, a number to six digits."""
    return value if isinstance(value, str) else f"{value:.6g}"


def profile_table(profile: Profile) -> pd.DataFrame:
    """Every assumption a profile can set, by user name (with its unit), unset ones said so."""
    values = profile.values()
    return pd.DataFrame(
        {
            _("assumption"): list(PROFILE_KEYS),
            _("value"): [
                _shown(values[k]) if k in values else said(UNSET[k]) or _("unset")
                for k in PROFILE_KEYS
            ],
        }
    )


def parameters_csv(profile: Profile) -> pd.DataFrame:
    """Every assumption a profile can set, one row each, for its CSV download (English ids, as
    every CSV): its value in its unit (empty when unset: `unset_means` says what stands in),
    and whether the fit set it."""
    values = profile.values()
    return pd.DataFrame(
        {
            "profile": profile.name,
            "parameter": list(PROFILE_KEYS),
            "value": [values.get(k) for k in PROFILE_KEYS],
            "unit": [UNITS[k] for k in PROFILE_KEYS],
            "fitted": [k in profile.fitted for k in PROFILE_KEYS],
            "unset_means": ["" if k in values else UNSET[k] for k in PROFILE_KEYS],
            "meaning": [LABELS[k] for k in PROFILE_KEYS],
        }
    )


def mape_by(frames: Mapping[str, pd.DataFrame], key: str | None) -> pd.DataFrame:
    """MAPE of each profile (columns) overall or per `key` (rows), predicted rows only, as
    ui.words.format text ('37.3%')."""
    columns = {}
    for name, df in frames.items():
        ok = df[df["reason"] == ""]
        if key is None:
            columns[name] = pd.Series({_("all rows"): ok["ape_pct"].mean()})
        else:
            columns[name] = ok.groupby(key)["ape_pct"].mean()
    table = pd.DataFrame(columns)
    table.index.name = key or _("rows")
    return table.map(pct).add_suffix(" MAPE").reset_index()


def per_file_table(frames: Mapping[str, Mapping[str, pd.DataFrame]]) -> pd.DataFrame:
    """Every profile on every file (docs/model.md's table): MAPE, '(fitted on)' where the
    profile was fitted on those rows, and the rows predicted of the rows given. A file that a
    profile was fitted on in part is split by precision (engine.fit_parts).

    Args:
        frames: file -> profile -> engine.validate's frame.
    """
    rows = []
    for file, by_profile in frames.items():
        for label, mask in engine.fit_parts(by_profile):
            name = _("{file} ({precisions})").format(file=file, precisions=label) if label else file
            row = {_("file"): name, _("rows"): int(mask.sum())}
            for profile, df in by_profile.items():
                part = df[mask]
                s = engine.overall(part)
                ok = part[part["reason"] == ""]
                mark = _(" (fitted on)") if len(ok) and ok["in_sample"].all() else ""
                row[f"{profile} MAPE"] = _("{mape}{mark} ({predicted} of {rows})").format(
                    mape=pct(s["mape_pct"]),
                    mark=mark,
                    predicted=s["predicted_rows"],
                    rows=s["rows"],
                )
            rows.append(row)
    return pd.DataFrame(rows)


def schema_table() -> pd.DataFrame:
    """The measurements file's columns, required or optional, and what each holds."""
    words = engine.MEASUREMENT_COLUMNS
    return pd.DataFrame(
        {
            _("column"): list(words),
            _("required"): [
                _("no") if w.startswith("optional") else _("yes") for w in words.values()
            ],
            _("what it holds"): [said(w) for w in words.values()],
        }
    )


def metrics_table() -> pd.DataFrame:
    """The metric names a file may use, and the unit of each one's value."""
    units = engine.MEASUREMENT_METRICS
    return pd.DataFrame(
        {_("metric"): list(units), _("unit of value"): [said(u) for u in units.values()]}
    )


def results_table(df: pd.DataFrame) -> pd.DataFrame:
    """The rows with unit-bearing column names, as shown and downloaded."""
    out = df[list(SCENARIO_COLUMNS)].copy()
    out["unit"] = df["metric"].map(engine.MEASUREMENT_METRICS)
    out["measured_in_unit"] = df["value"]
    out["predicted_in_unit"] = df["predicted"]
    out["error_pct"] = df["error"] * 100.0
    out["profile"] = df["profile"]
    out["in_sample"] = df["in_sample"]  # the profile was fitted on the row
    out["not_predicted_because"] = df["reason"]
    for column in ("engine", "source", "file", "row"):  # provenance last
        out[column] = df[column]
    return out


TRAINING = {  # column of engine.training_fit_rows: on-screen header (translated when shown)
    "table": N_("Table"),
    "scheme": N_("Scheme"),
    "layers": N_("Layers"),
    "hidden": N_("Hidden"),
    "gpus": N_("GPUs"),
    "tp": "TP",
    "pp": "PP",
    "vp": N_("Virtual stages"),
    "micro_batch_size": N_("Micro-batch"),
    "global_batch_size": N_("Global batch"),
}


def training_table(df: pd.DataFrame) -> pd.DataFrame:
    """The runs the training profile was fitted on, measured against predicted (in sample)."""
    out = pd.DataFrame({_(header): df[column] for column, header in TRAINING.items()})
    unit = said(df["unit"].iloc[0]) if len(df) else ""
    out[_("Measured ({unit})").format(unit=unit)] = fmt_all(df["measured"])
    out[_("Predicted ({unit})").format(unit=unit)] = fmt_all(df["predicted"])
    out[_("Error (in sample)")] = [signed(v) for v in df["error_pct"]]
    out[_("Filled in")] = df["filled"]
    return out


CHECKS = {  # column of engine.training_check_rows: on-screen header (translated when shown)
    "stack": N_("Stack"),
    "model": N_("Model"),
    "hardware": N_("Accelerator"),
    "gpus": N_("GPUs"),
    "tp": "TP",
    "pp": "PP",
    "cp": "CP",
    "vp": N_("Virtual stages"),
    "micro_batch_size": N_("Micro-batch"),
    "global_batch_size": N_("Global batch"),
    "seq_len": N_("Sequence (tokens)"),
    "precision": N_("Precision"),
    "tp_overlap": N_("TP overlap"),
}


def check_table(df: pd.DataFrame) -> pd.DataFrame:
    """The public runs a training profile was not fitted on, measured against predicted."""
    out = pd.DataFrame({_(header): df[column] for column, header in CHECKS.items()})
    out[_("Measured")] = fmt_all(df["measured"])
    out[_("Predicted")] = fmt_all(df["predicted"])
    out[_("Unit")] = [said(u) for u in df["unit"]]
    out[_("Error (out of sample)")] = [signed(v) for v in df["error_pct"]]
    out[_("File")] = df["file"]
    return out


def training_values(profile: Profile) -> pd.DataFrame:
    """Every assumption a training profile sets, with its meaning."""
    values = profile.values()
    return pd.DataFrame(
        {
            _("assumption"): list(values),
            _("value"): [v if isinstance(v, str) else f"{v:.6g}" for v in values.values()],
            _("meaning"): [said(LABELS.get(k, "")) for k in values],
        }
    )


def training_cells(profile: Profile) -> dict[str, tuple[str, str]]:
    """The training profile's errors: label (English, N_; shown through _()) -> (value, what
    it is)."""
    r = profile.residuals
    table_max = pct(r["loo_table_max_ape_pct"]) if "loo_table_max_ape_pct" in r else MISSING
    return {
        IN_SAMPLE: (
            _residual(profile, "mape_pct"),
            _("{n} runs, refit on all").format(n=profile.rows),
        ),
        N_("Leave one row out (MAPE)"): (
            _residual(profile, "loo_row_mape_pct"),
            _("refit on the other runs, predict the one left out; max {max}").format(
                max=_residual(profile, "loo_row_max_ape_pct")
            ),
        ),
        N_("Leave one table out (MAPE)"): (
            _residual(profile, "loo_table_mape_pct"),
            _("fit on every table but one and predict that one, for each table; max {max}").format(
                max=table_max
            ),
        ),
    }
