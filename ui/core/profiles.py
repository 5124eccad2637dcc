"""Profiles in share links and captions: which profile a link names, what it seeds, what counts
as an edit of it, and how the page says so (pure; the picker is ui/widgets/profile.py).

A profile is a named set of assumptions (docs/model.md, "Accuracy"). The serving pages (/decode,
/plan, /load, /accuracy) start at `DEFAULT`, engine.DEFAULT_PROFILE (the current TensorRT-LLM
fit); the tutorial's whole-model pages (Solve, Sweep, Compare) at `TUTORIAL`, so the tutorial's
published figures hold. Links: `profile=<name>`; a built-in profile's name is
enough, and the page's assumption parameters (efficiency, layer_overhead_us, ...) are then the
values on screen, the edits included. A custom profile (fitted on the Accuracy page) travels as
its parameters, read by `profile_from_query` as on every page, with its measured band and
calibrated ground (`error_band_pct`, `fitted_hardware`, `fitted_precisions`, `fitted_families`:
BAND), so its predictions elsewhere carry the band it was fitted with (docs/model.md, "Error
bands and calibrated ground").
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence

import engine
from ui.links import assumptions
from ui.links.params import Param, ParamError, listing, number, write_list, write_number
from ui.words.data_text import said
from ui.words.format import sig
from ui.words.i18n import _

DEFAULT = engine.DEFAULT_PROFILE  # the serving pages' profile
TUTORIAL = engine.TUTORIAL_PROFILE  # the whole-model pages' profile
# The whole-model solve's assumptions on the pages' widgets (user names; flop_convention is a
# counting rule, not a profile's).
WIDGETS = ("efficiency", "layer_overhead_us", "dispatch_overhead_ms", "activation_fraction")
LLM_VIEW = ("memory_reserve",)  # the profile key the LLM view of Sweep and Compare has a widget for
# The other profile keys (in a custom profile's link): every serving assumption of the registry.
OTHERS = tuple(k for k in engine.PROFILE_KEYS if k not in WIDGETS)
# ui.links.assumptions' ranges of the numbers among them (the words: assumptions.WORDS)
RANGES = {name: assumptions.RANGES[name] for name in OTHERS if name in assumptions.RANGES}
# A custom profile's band and calibrated ground in its link: parameter -> kind of ground.
GROUND = {"fitted_hardware": "hardware", "fitted_precisions": "precisions"}
GROUND |= {"fitted_families": "families"}
BAND_PCT = number(0.0, 1000.0)  # engine.profile_from_values takes 0-1,000 %
_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,39}")


def _ground_id(text: str) -> str:
    if not _ID.fullmatch(text):
        raise ParamError(
            _("{text} is not an id (letters, digits, '.', '_', '-')").format(text=repr(text[:40]))
        )
    return text


GROUND_LIST = listing(_ground_id, max_items=32)


def band_params() -> list[Param]:
    """The link-only parameters of a custom profile's band and calibrated ground."""
    out = [Param("error_band_pct", BAND_PCT, write_number, widget="link")]
    return out + [Param(name, GROUND_LIST, write_list, widget="link") for name in GROUND]


def _band(query: Mapping[str, list[str]]) -> dict:
    """profile_from_values' band_pct and ground from a link (ParamError: a bad value)."""
    out: dict = {}
    if query.get("error_band_pct"):
        out["band_pct"] = BAND_PCT(query["error_band_pct"][-1])
    ground = {kind: tuple(GROUND_LIST(query[k][-1])) for k, kind in GROUND.items() if query.get(k)}
    return out | ({"ground": ground} if ground else {})


def profile_from_query(
    query: Mapping[str, list[str]], fallback: str = DEFAULT
) -> tuple[engine.Profile, list[str]]:
    """The profile a share link names: a built-in by name, or a custom one by its values.

    Returns:
        The profile (`fallback`, the page's default, when the link's is unusable) and warnings
        about what was ignored.
    """
    name = (query.get("profile") or [fallback])[-1]
    given = {k: query[k][-1] for k in engine.PROFILE_KEYS if query.get(k)}
    if not given:
        try:
            return engine.get_profile(name), []
        except ValueError as exc:
            return engine.get_profile(fallback), [
                _("profile: {reason}; {name} used").format(reason=exc, name=fallback)
            ]
    try:
        words = {k: v for k, v in given.items() if k in assumptions.WORDS}
        values = {k: float(v) for k, v in given.items() if k not in words}
        if not all(math.isfinite(v) for v in values.values()):
            raise ValueError(_("profile values must be finite numbers"))
        band = _band(query)
        values |= words  # checked by the engine against their options
        return engine.profile_from_values(engine.check_profile_name(name), values, **band), []
    except ValueError as exc:
        return engine.get_profile(fallback), [
            _("custom profile: {reason}; {name} used").format(reason=exc, name=fallback)
        ]


def picker_text(profile: engine.Profile) -> str:
    """A profile as a picker lists it: 'trtllm: fitted from …' (at most 90 characters), what
    a shipped profile says of itself in the reader's language."""
    return f"{profile.name}: {said(profile.description)}"[:90]


def is_builtin(name: object) -> bool:
    return str(name).strip().lower() in engine.profile_names()


def link_profile(
    query: Mapping[str, Sequence[str]], fallback: str = DEFAULT
) -> tuple[engine.Profile, list[str]]:
    """The profile a link names, and warnings about what was not used.

    A built-in name gives that profile (the link's assumption values are the page's edits);
    any other name is a custom profile read from the link's values by profile_from_query
    (`fallback`: the page's default profile, used when the link's is unusable).
    """
    name = (query.get("profile") or [fallback])[-1]
    if is_builtin(name):
        return engine.get_profile(name.strip().lower()), []
    return profile_from_query({k: list(v) for k, v in query.items()}, fallback)


def named(name: object, custom: engine.Profile | None, fallback: str = DEFAULT) -> engine.Profile:
    """The profile called `name`: the custom one, a built-in, else `fallback`."""
    if custom is not None and name == custom.name:
        return custom
    return engine.get_profile(name if is_builtin(name) else fallback)


def seeds(profile: engine.Profile, extra: Sequence[str] = ()) -> dict[str, float | None]:
    """The widget values a profile starts the page at (unset: the tutorial's default, or None
    for the dispatch overhead: the accelerator's catalogued figure); `extra`: more profile
    keys the page has widgets for (e.g. memory_reserve on the LLM view)."""
    values, base = profile.values(), engine.get_profile(TUTORIAL).values()
    return {name: values.get(name, base.get(name)) for name in (*WIDGETS, *extra)}


def edits(profile: engine.Profile, chosen: Mapping[str, object]) -> dict[str, tuple]:
    """The widget values that differ from the profile's: name -> (profile's, on screen); only
    the profile keys in `chosen` are compared (None there: blank, the catalogue's figure)."""
    out = {}
    for name, start in seeds(profile, [k for k in chosen if k in RANGES]).items():
        if name not in chosen:
            continue
        now = chosen[name]
        same = (start is None and now is None) or (
            start is not None and now is not None and math.isclose(start, now, rel_tol=1e-9)
        )
        if not same:
            out[name] = (start, now)
    return out


def overridden(overrides: Mapping[str, float | None], profile: engine.Profile) -> dict[str, float]:
    """The overrides that change the profile: set (None: blank, the profile's), and not the
    profile's own value (a custom profile's link gives its values to these fields too)."""
    values = profile.values()
    return {
        name: v
        for name, v in overrides.items()
        if v is not None and not (name in values and math.isclose(v, values[name], rel_tol=1e-9))
    }


def label(profile: engine.Profile, changed: Mapping[str, tuple]) -> str:
    """'trtllm' or 'trtllm, edited' (the CSV's and the captions' profile name)."""
    return profile.name + (", edited" if changed else "")


def describe(profile: engine.Profile, changed: Mapping[str, tuple]) -> str:
    """One plain sentence for beside the results: the profile, and each edit."""
    origin = "" if profile.origin == "built-in" else _(" (custom, from the link)")
    if not changed:
        return _("Profile {profile}{origin}: its assumptions, unedited.").format(
            profile=profile.name, origin=origin
        )

    def shown(v):
        return _("the accelerator's figure") if v is None else sig(v)

    edit = _("{name} {value} (profile: {was})")
    parts = [
        edit.format(name=n, value=shown(now), was=shown(was)) for n, (was, now) in changed.items()
    ]
    return _("Profile {profile}{origin}, edited: {edits}.").format(
        profile=profile.name, origin=origin, edits="; ".join(parts)
    )


def _profile_name(custom: engine.Profile | None):
    def read(text: str) -> str:
        name = str(text).strip().lower()
        if is_builtin(name) or (custom is not None and name == custom.name):
            return name
        known = ", ".join((*engine.profile_names(), *([custom.name] if custom else [])))
        raise ParamError(
            _("unknown profile {name} (known: {known})").format(name=repr(text[:40]), known=known)
        )

    return read


def params(
    custom: engine.Profile | None,
    skip: Sequence[str] = (),
    *,
    keys: Sequence[str] = OTHERS,
    default: str = DEFAULT,
) -> list[Param]:
    """`profile` and the custom profile's serving assumptions (written for a custom one), but
    not `skip`: parameters the page declares itself (e.g. the LLM view's memory_reserve).

    Args:
        keys: the profile keys carried as link-only parameters: those the page has no widget
            for (default: all but WIDGETS; a page with no assumption widget: PROFILE_KEYS).
        default: the page's profile when the link names none.
    """
    out = [Param("profile", _profile_name(custom), default=default)]
    out += [assumptions.param(k, widget="link") for k in keys if k not in skip]
    return out + band_params()


def link_values(
    profile: engine.Profile, skip: Sequence[str] = (), *, keys: Sequence[str] = OTHERS
) -> dict[str, object]:
    """The link's profile values: the name, and a custom profile's other assumptions (`keys`,
    as `params` declared them, not `skip`: parameters the page writes itself)."""
    out: dict[str, object] = {"profile": profile.name}
    if profile.origin != "built-in":
        out |= {k: v for k, v in profile.values().items() if k in keys and k not in skip}
        out |= band_values(profile)
    return out


def band_values(profile: engine.Profile) -> dict[str, object]:
    """A custom profile's measured band and calibrated ground as link values (none when it
    has neither), so the pages it travels to carry them."""
    out: dict[str, object] = {}
    pct = engine.error_band(profile).pct
    if pct is not None:
        out["error_band_pct"] = float(f"{pct:.3g}")
    for name, kind in GROUND.items():
        if profile.ground.get(kind):
            out[name] = list(profile.ground[kind])
    return out


def transfer_text(hw_id: str, precision: str, assumptions: Mapping[str, object]) -> str | None:
    """One sentence for beside a result: how the kernel transfer moved the profile's GEMM
    efficiencies to this accelerator and format (docs/model.md, "Kernel transfer"); None when
    it did not (no table, the reference itself, or kernel_curves = none)."""
    stack, reference = assumptions["kernel_curves"], assumptions["kernel_reference"]
    fmt_name = engine.FORMAT_ALIASES.get(precision, precision)  # fp4 is nvfp4, int4 w4a16
    t = engine.gemm_transfer(stack, reference=reference, accelerator=hw_id, fmt=fmt_name)
    if t.target is None or (t.compute == 1.0 and t.bandwidth == 1.0):
        return None
    return _(
        "Kernel transfer: the profile's GEMM efficiencies were fitted on {reference}. In "
        "{stack}'s kernel tables ({release}), {hardware} {curve} GEMMs reach {compute}× the "
        "compute fraction and {bandwidth}× the memory fraction of {reference_curve}'s, so the "
        "model scales its GEMM efficiency and weight bandwidth by these. docs/model.md, "
        "'Kernel transfer'."
    ).format(
        reference=reference,
        stack=stack,
        release=t.target.source.version,
        hardware=hw_id,
        curve=t.target.dtype,
        reference_curve=f"{t.reference.accelerator} {t.reference.dtype}",
        compute=sig(t.compute),
        bandwidth=sig(t.bandwidth),
    )
