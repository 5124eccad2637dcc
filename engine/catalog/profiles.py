"""Profiles: named sets of assumptions, kept as TOML files with what they were fitted on.

A profile sets the serving model's global assumptions (compute efficiency per operator class,
bandwidth efficiency, per-layer and dispatch overheads, interconnect efficiency and latency),
never anything per model or per accelerator, so it carries over to models and chips it was not
fitted on. `tutorial` is the tutorial's defaults; fitted profiles (e.g. `trtllm`) record their
measurements, date, command and residuals. See docs/model.md ("Accuracy").

Training profiles (`kind = "training"`, in data/profiles/training/, e.g. `megatron`) set the
training model's assumptions the same way (docs/model.md, "Training step"); they are kept apart
so the serving pages list serving profiles only.
An optional `[scheduler]` table names the serving stack whose scheduler defaults the load
simulator uses with this profile (engine/catalog/scheduler.py; docs/model.md, "Serving under
load"); without it, `scheduler` is None and vLLM's defaults apply.

A profile TOML is untrusted input (an upload, `--profile FILE`): a key given twice is refused
with its line quoted, each residual must be a finite number from 0 (TOML spells inf and nan),
`rows` a whole number, and a value is echoed cut at 40 characters (engine/files.py).
"""

from __future__ import annotations

import datetime as dt
import functools
import math
import sys
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import MappingProxyType

from engine.assumptions import (
    ASSUMPTION_UNITS,
    DEFAULTS,
    REGISTRY,
    TRAINING_NAMES,
    Assumptions,
    make_assumptions,
)
from engine.catalog.scheduler import (
    SchedulerDefaults,
    scheduler_from_table,
    scheduler_toml_lines,
)
from engine.files import echo, toml_problem

PROFILE_DIR = Path(__file__).resolve().parents[2] / "data" / "profiles"
TRAINING_PROFILE_DIR = PROFILE_DIR / "training"
# The serving default everywhere (pages, commands, the Python API): the current TensorRT-LLM
# profile, fitted on measurements (docs/model.md, "Accuracy"). The tutorial's profile is named
# where a view shows the tutorial's figures (the whole-model solve, the tutorial's decode view,
# the lessons).
TUTORIAL_PROFILE = "tutorial"
DEFAULT_PROFILE = "trtllm-1.0"
DEFAULT_TRAINING_PROFILE = "megatron"
MAX_PROFILE_BYTES = 100_000
# The assumptions a profile may set (user names and units, as on the CLI and in links).
PROFILE_KEYS = tuple(
    a.name for a in REGISTRY if a.name != "flop_convention" and a.models != "training"
)
TRAINING_PROFILE_KEYS = TRAINING_NAMES
KINDS = {"serving": PROFILE_KEYS, "training": TRAINING_PROFILE_KEYS}
GROUND = ("hardware", "precisions", "families", "models")  # kinds of calibrated ground
CARRIED_BAND = "band_pct"  # residuals key: the band a link carries (engine/accuracy/bands.py)
MAX_FITTED_ROWS = 1_000_000_000  # [fitted_on] rows: far beyond any file set's rows
MAX_BAND_PCT = 1000.0  # a band beyond 1,000 % says nothing
_NAME_CHARS = set("abcdefghijklmnopqrstuvwxyz0123456789-_.")  # trtllm-1.0


def check_profile_name(name: object) -> str:
    """A profile name: 1–40 lower-case letters, digits, '-' or '_'."""
    text = str(name).strip().lower()
    if not text or len(text) > 40 or not set(text) <= _NAME_CHARS:
        raise ValueError(
            f"profile name {echo(str(name))}: use 1-40 letters, digits, '-', '_' or '.' "
            "(e.g. my-team)"
        )
    return text


@dataclass(frozen=True, slots=True)
class Profile:
    """A named Assumptions plus where it came from (empty for hand-set profiles)."""

    name: str
    assumptions: Assumptions
    description: str = ""
    fitted_on: tuple[str, ...] = ()  # measurement file names
    rows: int = 0  # measurement rows the fit used
    fitted_at: str = ""  # ISO date
    command: str = ""  # the command that reproduces it
    residuals: Mapping[str, float] = field(default_factory=dict)  # mape, median_ape, max_ape
    worst: tuple[str, ...] = ()  # the worst-predicted rows, described
    origin: str = "built-in"
    fitted: tuple[str, ...] = ()  # the parameters the fit set
    not_identified: tuple[str, ...] = ()  # fittable, but no row was sensitive to them
    # The calibrated ground: what the fitted rows covered, by kind ("hardware", "precisions",
    # "families", "models"); a prediction off it is flagged (engine/accuracy/bands.py).
    ground: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    kind: str = "serving"  # or "training": which model's assumptions it sets (KINDS)
    scheduler: SchedulerDefaults | None = None  # the stack's scheduler ([scheduler] table)

    def __hash__(self) -> int:  # its read-only mappings are not hashable; what it sets is
        return hash((self.name, self.assumptions, self.scheduler, self.kind, self.origin))

    def __post_init__(self) -> None:
        object.__setattr__(self, "name", check_profile_name(self.name))
        object.__setattr__(self, "residuals", MappingProxyType(dict(self.residuals)))
        ground = {k: tuple(v) for k, v in self.ground.items()}
        object.__setattr__(self, "ground", MappingProxyType(ground))
        if self.kind not in KINDS:
            raise ValueError(f"kind must be one of {', '.join(KINDS)}, got {self.kind!r}")

    def values(self) -> dict[str, float]:
        """The assumptions it sets, in user names and units (None: the catalogue's figure)."""
        a, keys = self.assumptions, KINDS[self.kind]
        out = {}
        for user, (field_name, factor) in ASSUMPTION_UNITS.items():
            if user in keys and getattr(a, field_name) is not None:
                out[user] = _from_si(getattr(a, field_name), factor)
        return out

    def link_params(self) -> dict[str, str]:
        """Share-link parameters: the name, and for a non-built-in profile its values too."""
        params = {"profile": self.name}
        if self.origin != "built-in":
            params |= {k: v if isinstance(v, str) else f"{v:.6g}" for k, v in self.values().items()}
        return params

    def as_dict(self) -> dict[str, object]:
        return {
            "name": self.name,
            "description": self.description,
            "assumptions": self.values(),
            "fitted_on": list(self.fitted_on),
            "rows": self.rows,
            "fitted_at": self.fitted_at,
            "command": self.command,
            "residuals": dict(self.residuals),
            "worst": list(self.worst),
            "origin": self.origin,
            "fitted": list(self.fitted),
            "not_identified": list(self.not_identified),
            "ground": {k: list(v) for k, v in self.ground.items()},
            "kind": self.kind,
            "scheduler": None if self.scheduler is None else self.scheduler.as_dict(),
        }


def assumptions_from(
    table: object, label: str, base: Assumptions = DEFAULTS, keys: tuple = PROFILE_KEYS
) -> Assumptions:
    """`base` with the assumptions of a profile table (user names and units) applied.

    Raises:
        ValueError: not a table, an unknown name (not in `keys`), or a value out of range.
    """
    if not isinstance(table, dict):
        raise ValueError(f"{label}: [assumptions] must be a table")
    unknown = sorted(set(table) - set(keys))
    if unknown:
        raise ValueError(
            f"{label}: unknown assumption {echo(unknown[0])} (known: {', '.join(keys)})"
        )
    try:
        checked = make_assumptions(base, **table)
    except ValueError as exc:
        raise ValueError(f"{label}: {exc}") from None
    exact = {ASSUMPTION_UNITS[k][0]: _to_si(v, ASSUMPTION_UNITS[k][1]) for k, v in table.items()}
    return replace(checked, **exact)


# Unit scales are powers of ten: dividing by 10**n (not multiplying by 10**-n) keeps 10 us
# exactly 10e-6 s, so the tutorial file gives the very defaults the published figures use.
def _to_si(value: float | str, factor: float) -> float | str:
    if isinstance(value, str):  # a word (a choice), unitless
        return value
    return value / round(1 / factor) if factor < 1 else value * factor


def _from_si(value: float | str, factor: float) -> float | str:
    if isinstance(value, str):
        return value
    return value * round(1 / factor) if factor < 1 else value / factor


def profile_from_toml(data: bytes | str, label: str, origin: str = "uploaded") -> Profile:
    """Parse a profile TOML document; errors name the file and the key."""
    raw = data.encode() if isinstance(data, str) else data
    if len(raw) > MAX_PROFILE_BYTES:
        raise ValueError(f"{label}: larger than {MAX_PROFILE_BYTES:,} bytes")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{label}: not a TOML file ({exc})") from None
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:  # a key given twice among them, its line quoted
        raise ValueError(f"{label}: not a TOML file ({toml_problem(exc, text)})") from None
    fit = doc.get("fitted_on", {})
    res = doc.get("residuals", {})
    if not isinstance(fit, dict) or not isinstance(res, dict):
        raise ValueError(f"{label}: [fitted_on] and [residuals] must be tables")
    kind = doc.get("kind", "serving")
    if not isinstance(kind, str) or kind not in KINDS:
        raise ValueError(f"{label}: kind must be one of {', '.join(KINDS)}, got {echo(kind)}")
    try:
        return Profile(
            name=doc.get("name", Path(label).stem),
            assumptions=assumptions_from(doc.get("assumptions", {}), label, keys=KINDS[kind]),
            description=str(doc.get("description", "")),
            fitted_on=tuple(str(f) for f in fit.get("files", [])),
            rows=_fitted_rows(fit.get("rows", 0)),
            fitted_at=str(doc.get("fitted_at", "")),
            command=str(doc.get("command", "")),
            residuals={k: _residual(k, v) for k, v in res.items() if k != "worst"},
            worst=tuple(str(w) for w in res.get("worst", [])),
            origin=origin,
            fitted=tuple(str(p) for p in fit.get("parameters", [])),
            not_identified=tuple(str(p) for p in fit.get("not_identified", [])),
            ground={k: tuple(str(x) for x in fit.get(k, [])) for k in GROUND if k in fit},
            kind=kind,
            scheduler=_scheduler(doc, label),
        )
    except (TypeError, ValueError) as exc:
        message = str(exc)
        raise ValueError(message if message.startswith(label) else f"{label}: {message}") from None


def _fitted_rows(value: object) -> int:
    """[fitted_on] rows: a whole number from 0 to MAX_FITTED_ROWS (never cut, never infinite)."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_FITTED_ROWS:
        raise ValueError(f"fitted_on.rows must be a whole number from 0 to {MAX_FITTED_ROWS:,}")
    return value


def _residual(key: str, value: object) -> float:
    """A [residuals] figure: a finite number from 0 (a percentage or a row count). TOML spells
    inf and nan, which would make an infinite error band, and an integer of 4,000 digits, which
    float() cannot take (OverflowError, not a ValueError)."""
    ok = isinstance(value, float) or (isinstance(value, int) and not isinstance(value, bool))
    if not (ok and 0 <= value <= sys.float_info.max):  # False for inf, nan, too many digits
        raise ValueError(f"residuals.{key[:40]} must be a finite number from 0, got {echo(value)}")
    return float(value)


def _scheduler(doc: dict, label: str) -> SchedulerDefaults | None:
    return scheduler_from_table(doc["scheduler"], label) if "scheduler" in doc else None


def _toml_value(value: object) -> str:
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ") + '"'
    if isinstance(value, bool | int):
        return str(value).lower()
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"cannot write {value!r} to TOML")
        return repr(value)
    if not value:
        return "[]"
    return "[\n" + "".join(f"  {_toml_value(v)},\n" for v in value) + "]"


def _number_or_word(value: float | str) -> float | str:
    """An assumption as TOML writes it: a word as is, a number as a float."""
    return value if isinstance(value, str) else float(value)


def profile_to_toml(profile: Profile) -> str:
    """The profile as a TOML document that `profile_from_toml` reads back unchanged."""
    training = profile.kind == "training"
    lines = [
        "# A Roofline Explorer profile: global training assumptions (docs/model.md, Training step)."
        if training
        else "# A Roofline Explorer profile: global serving assumptions (docs/model.md, Accuracy).",
        *([f"kind = {_toml_value(profile.kind)}"] if training else []),
        f"name = {_toml_value(profile.name)}",
        f"description = {_toml_value(profile.description)}",
        f"fitted_at = {_toml_value(profile.fitted_at)}",
        f"command = {_toml_value(profile.command)}",
        "",
        "[assumptions]",
    ]
    lines += [f"{k} = {_toml_value(_number_or_word(v))}" for k, v in profile.values().items()]
    lines += ["", "[fitted_on]", f"files = {_toml_value(list(profile.fitted_on))}"]
    lines += [f"rows = {profile.rows}"]
    lines += [f"parameters = {_toml_value(list(profile.fitted))}"]
    lines += [f"not_identified = {_toml_value(list(profile.not_identified))}"]
    lines += [f"{k} = {_toml_value(list(v))}" for k, v in profile.ground.items()]
    lines += ["", "[residuals]"]
    lines += [f"{k} = {_toml_value(float(v))}" for k, v in profile.residuals.items()]
    lines += [f"worst = {_toml_value(list(profile.worst))}"]
    if profile.scheduler is not None:
        lines += ["", *scheduler_toml_lines(profile.scheduler, _toml_value)]
    return "\n".join(lines) + "\n"


def builtin_profiles(directory: Path = PROFILE_DIR) -> dict[str, Profile]:
    """Every data/profiles/*.toml by name; `tutorial` first."""
    found = {}
    for path in sorted(directory.glob("*.toml")):
        profile = profile_from_toml(path.read_bytes(), path.name, origin="built-in")
        found[profile.name] = profile
    for needed in (TUTORIAL_PROFILE, DEFAULT_PROFILE):
        if needed not in found:
            raise ValueError(f"{directory}: the {needed!r} profile is missing")
    return {TUTORIAL_PROFILE: found.pop(TUTORIAL_PROFILE)} | found


# Profiles are named by stack and release; each stack's short name stands for its current
# profile. Resolved here and nowhere else: `--profile trtllm`, links and scripts keep working.
ALIASES: Mapping[str, str] = MappingProxyType({"trtllm": "trtllm-1.0", "vllm": "vllm-mi300x"})


@functools.cache
def _builtin() -> Mapping[str, Profile]:
    """The built-in serving profiles, read once (read-only: shared by every caller); an alias
    is its profile under the alias's name (the label says which: `profile_label`)."""
    found = builtin_profiles()
    aliases = {a: replace(found[t], name=a) for a, t in ALIASES.items() if t in found}
    return MappingProxyType(found | aliases)


def get_profile(profile: str | Profile | None = None) -> Profile:
    """A Profile by name (built-in), or the Profile itself; None means DEFAULT_PROFILE."""
    if isinstance(profile, Profile):
        return profile
    known = _builtin()
    name = DEFAULT_PROFILE if profile is None else str(profile).strip().lower()
    if name not in known:
        raise ValueError(f"unknown profile {echo(str(profile))} (known: {', '.join(known)})")
    return known[name]


def profile_names() -> tuple[str, ...]:
    """The built-in profiles' names (`tutorial` first, the stacks' short aliases last)."""
    return tuple(_builtin())


def profile_label(name: str) -> str:
    """A profile's name as lists show it: an alias says what it stands for,
    "trtllm (= trtllm-1.0)"."""
    target = ALIASES.get(name)
    return f"{name} (= {target})" if target and target in _builtin() else name


def training_profiles(directory: Path = TRAINING_PROFILE_DIR) -> dict[str, Profile]:
    """Every data/profiles/training/*.toml by name (each must say kind = "training")."""
    found = {}
    for path in sorted(directory.glob("*.toml")):
        profile = profile_from_toml(path.read_bytes(), path.name, origin="built-in")
        if profile.kind != "training":
            raise ValueError(f'{path.name}: a training profile must say kind = "training"')
        found[profile.name] = profile
    return found


@functools.cache
def _builtin_training() -> Mapping[str, Profile]:
    """The built-in training profiles, read once (read-only: shared by every caller)."""
    return MappingProxyType(training_profiles())


def get_training_profile(profile: str | Profile | None = None) -> Profile:
    """A training Profile by name (built-in), or the Profile itself; None: `megatron`."""
    if isinstance(profile, Profile):
        if profile.kind != "training":
            raise ValueError(f"profile {profile.name!r} is a serving profile, not a training one")
        return profile
    known = _builtin_training()
    name = DEFAULT_TRAINING_PROFILE if profile is None else str(profile).strip().lower()
    if name not in known:
        listed = ", ".join(known) or "none"
        raise ValueError(f"unknown training profile {echo(str(profile))} (known: {listed})")
    return known[name]


def training_profile_names() -> tuple[str, ...]:
    """The built-in training profiles' names (`megatron` first)."""
    return tuple(sorted(_builtin_training(), key=lambda n: (n != DEFAULT_TRAINING_PROFILE, n)))


def profile_from_values(
    name: str,
    values: Mapping[str, object],
    *,
    band_pct: float | None = None,
    ground: Mapping[str, Sequence[str]] | None = None,
) -> Profile:
    """A custom profile from share-link values (user names and units), checked like a file.

    Args:
        band_pct: the out-of-sample error (MAPE, %) the profile was measured with where it was
            fitted, carried by the link (engine.error_band reports it, saying so).
        ground: its calibrated ground by kind (GROUND: "hardware", "precisions", ...), also
            carried by the link, so a prediction off it is still flagged.
    """
    assumptions = assumptions_from(dict(values), f"profile {echo(name)}")
    residuals = {}
    if band_pct is not None:
        band = float(band_pct)
        if not (math.isfinite(band) and 0 <= band <= MAX_BAND_PCT):
            raise ValueError(f"band_pct must be a number from 0 to {MAX_BAND_PCT:g} (%)")
        residuals[CARRIED_BAND] = band
    unknown = sorted(set(ground or {}) - set(GROUND))
    if unknown:
        raise ValueError(f"unknown kind of ground {unknown[0]!r} (known: {', '.join(GROUND)})")
    return Profile(
        name,
        assumptions,
        "custom (from a link)",
        origin="link",
        residuals=residuals,
        ground=dict(ground or {}),
    )


def today() -> str:
    """Today's date, ISO (the fitted_at of a new profile)."""
    return dt.date.today().isoformat()
