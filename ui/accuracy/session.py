"""The accuracy page's measurements and profiles in the session (Streamlit glue).

The measurements in use: a shipped file (the `measurements` link parameter) until a valid
upload replaces it (a file with problems changes nothing); the profiles on offer as TOML text
(built-in, then this session's custom ones: the link's, the fitted team profile); the link's
profile on the first run; the fit, run where its button is with a status saying what it does
on how many rows, then the team profile chosen on the next run (or the one-line reason no
profile was made, kept under the button); the cached validations. Session keys:
`accuracy:<link parameter>` for the widgets, `acc:<name>` for the rest.
"""

from __future__ import annotations

import time
from collections import Counter

import pandas as pd
import streamlit as st

import engine
from engine import MeasurementsError, catalogue_problems, profile_from_toml, profile_to_toml
from ui.accuracy import view
from ui.accuracy.link import DEFAULT_FILE, KERNEL_DEFAULTS, PAGE
from ui.core import frame, profiles
from ui.links import state
from ui.links.params import Link, parse_params
from ui.words.i18n import _, language
from ui.words.text import plain

ss = st.session_state
PROFILE = state.widget_key(PAGE, "profile")  # the picker
UPLOAD = "acc:upload_in_use"  # (bytes, file name) of the valid upload in use, if any
CUSTOM = "acc:custom"  # name -> TOML of this session's custom profiles
PICK = "acc:pick"  # the profile a fit made: chosen before the picker is drawn on the next run
FIT_NOTE = "acc:fit_note"  # what the last fit did, or why it made no profile (text, error?)


@st.cache_resource(max_entries=1, show_spinner=False)
def shipped() -> dict[str, bytes]:
    """The shipped measurements files by name (read once; a few kB each)."""
    return {p.name: p.read_bytes() for p in engine.shipped_measurements()}


@st.cache_data(max_entries=64, show_spinner=False)
def validated(data: bytes, label: str, profile_toml: str) -> pd.DataFrame:
    """The measurements with the profile's predictions (engine.validate), cached."""
    rows = engine.parse_measurements(data, label)
    return engine.validate(rows, profile_from_toml(profile_toml, "profile", origin="page"))


def per_file_table(texts: dict[str, str]) -> pd.DataFrame:
    """Every profile on offer (name -> TOML) on every file in use, as ui.accuracy.view tabulates
    it: the same for every run until the files, the profiles or the language change."""
    return _per_file_table(files(), texts, language())


@st.cache_data(max_entries=16, show_spinner=False)
def _per_file_table(files: dict[str, bytes], texts: dict[str, str], lang: str) -> pd.DataFrame:
    del lang  # a key only: the table's words are in the session's language
    frames = {f: {n: validated(d, f, t) for n, t in texts.items()} for f, d in files.items()}
    return view.per_file_table(frames)


@st.cache_data(max_entries=16, show_spinner=False)
def engine_labels(data: bytes, label: str) -> Counter:
    """How many rows of a file name each serving stack and release (its `engine` column)."""
    return Counter(m.engine for m in engine.parse_measurements(data, label))


@st.cache_resource(max_entries=4, show_spinner=False)
def training_rows(name: str) -> pd.DataFrame:
    """A built-in training profile's runs with their predictions (read-only; computed once)."""
    return engine.training_fit_rows(name)


@st.cache_resource(max_entries=4, show_spinner=False)
def training_checks(name: str) -> pd.DataFrame:
    """The public runs no built-in training profile is fitted on, predicted by one (read-only;
    computed once)."""
    return engine.training_check_rows(name)


def training_stack(name: str) -> str:
    """The stack a built-in training profile was fitted on (engine.training_profile_stack), or
    what its bands do without one."""
    return engine.training_profile_stack(name) or _("none known (its bands take both stacks' runs)")


def start(link: Link) -> list[str]:
    """First run: seed the widgets from the link and take its profile (a built-in by name, a
    custom one by its values, band and ground); returns the link's warnings (each run)."""
    if "acc:link_warnings" in ss:
        kept = (PROFILE, link.key("measurements"), link.key("training_profile"))
        kept += tuple(link.key(n) for n in KERNEL_DEFAULTS)
        for key in kept:  # kept while another section is shown (Streamlit drops the state
            if key in ss:  # of widgets not drawn)
                ss[key] = ss[key]
        return ss["acc:link_warnings"]
    raw = state.raw_query()
    warnings = state.bind(link)
    accepted, _dropped = parse_params(raw, link.params)
    dropped = [k for k in raw if k in link and k not in accepted and k != "profile"]
    own = ("measurements", "section", "training_profile", *KERNEL_DEFAULTS)
    dropped = [k for k in dropped if k not in own]
    name = str(accepted.get("profile", profiles.DEFAULT))
    if dropped and not profiles.is_builtin(name):
        linked = engine.get_profile(profiles.DEFAULT)
        text = _("custom profile {name} not used ({dropped}); {default} used")
        given = {"name": repr(name), "dropped": ", ".join(dropped), "default": linked.name}
        warnings.append(text.format(**given))
    else:
        linked, more = profiles.link_profile(raw)
        warnings += more
    if linked.origin != "built-in":
        ss[CUSTOM] = {linked.name: profile_to_toml(linked)}
    ss[PROFILE] = linked.name
    ss["acc:link_warnings"] = warnings
    return warnings


def texts() -> dict[str, str]:
    """Every serving profile on offer (built-in, then this session's custom ones) as TOML."""
    out = {name: profile_to_toml(engine.get_profile(name)) for name in engine.profile_names()}
    return out | ss.get(CUSTOM, {})


def profile(name: str) -> engine.Profile:
    """The profile called `name` (built-in, or this session's)."""
    origin = "built-in" if name in engine.profile_names() else "page"
    return profile_from_toml(texts()[name], name, origin=origin)


def in_use() -> tuple[bytes, str, bool]:
    """(the measurements' bytes, their file name, uploaded?)."""
    if ss.get(UPLOAD):
        data, label = ss[UPLOAD]
        return data, label, True
    name = ss.get(state.widget_key(PAGE, "measurements")) or DEFAULT_FILE
    return shipped()[name], name, False


def files() -> dict[str, bytes]:
    """The measurements to tabulate every profile on: the shipped files and any upload."""
    data, label, uploaded = in_use()
    return shipped() | ({label: data} if uploaded else {})


def engines() -> dict[str, Counter]:
    """File -> its rows' stack and release labels (the shipped files and any upload)."""
    return {label: engine_labels(data, label) for label, data in files().items()}


def check(data: bytes, label: str) -> list[str]:
    """Why an uploaded file cannot be used (its rows' problems, then unknown catalogue ids)."""
    try:
        rows = engine.parse_measurements(data, label)
    except MeasurementsError as exc:
        return exc.problems
    return list(catalogue_problems(rows, frame.catalog()).values())


def take_upload(data: bytes, label: str) -> None:
    """A new upload: used if it has no problems; otherwise its problems are shown and
    nothing else changes."""
    ss["acc:errors"] = check(data, label)
    ss[FIT_NOTE] = None
    if not ss["acc:errors"]:
        ss[UPLOAD] = (data, label)


def choose_fitted() -> None:
    """Before the picker is drawn: the profile the last run's fit made becomes the choice."""
    if PICK in ss:
        ss[PROFILE] = ss.pop(PICK)


def fit() -> None:
    """The fit button's work, drawn where the button is: a status naming what is fitted on how
    many rows while the engine fits (a few seconds), then a rerun that shows the team profile;
    or the reason no profile was made (FIT_NOTE, an error under the button)."""
    start_profile = profile(ss[PROFILE])
    data, label, _uploaded = in_use()
    began = time.perf_counter()
    try:
        rows = engine.parse_measurements(data, label)  # checked when taken: never refused here
    except MeasurementsError as exc:
        ss[FIT_NOTE] = (_("No profile was made: {reason}").format(reason=exc), True)
        return
    title = _("Fitting a team profile to the {rows} rows of {file}…")
    with st.status(title.format(rows=f"{len(rows):,}", file=plain(label)), expanded=True) as status:
        st.write(
            _(
                "Least squares over the parameters these rows can tell apart, starting from "
                "profile {start}; then the same fit again without each model and without each "
                "accelerator in turn, to measure the error on rows a fit has not seen."
            ).format(start=plain(start_profile.name))
        )
        try:
            team = engine.calibrate(rows, start_profile, name="team", catalog=frame.catalog())
            toml = profile_to_toml(team)
        except ValueError as exc:  # e.g. no row predictable; a fit that is not finite
            status.update(label=_("No profile was made"), state="error", expanded=False)
            ss[FIT_NOTE] = (_("No profile was made: {reason}").format(reason=exc), True)
            return
    ss[CUSTOM] = ss.get(CUSTOM, {}) | {"team": toml}
    ss["acc:before"] = start_profile.name
    ss[PICK] = "team"
    note = _("Profile team fitted on {rows} rows of {file} in {seconds} s.")
    seconds = f"{time.perf_counter() - began:.1f}"
    ss[FIT_NOTE] = (note.format(rows=f"{team.rows:,}", file=label, seconds=seconds), False)
    st.rerun()


def use_shipped() -> None:
    """Back to the shipped measurements (and no upload problems)."""
    ss[UPLOAD], ss["acc:errors"], ss[FIT_NOTE] = None, [], None
