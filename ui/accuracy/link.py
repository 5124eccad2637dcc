"""The accuracy page's share link: each parameter declared once (ui.links.params.Link).

`profile` (a built-in profile by name, or a custom one: its name with its values), every serving
assumption of the registry by its CLI name (a custom profile's values; a built-in's are its
own), a custom profile's measured band and calibrated ground (`error_band_pct`,
`fitted_hardware`, `fitted_precisions`, `fitted_families`: ui.core.profiles), `measurements`
(which shipped file the page checks the profile against; an upload is not in the link) and
`section` (serving, training or kernels), `training_profile` (the training section's built-in
profile), and the kernel curves' accelerator, stack and
operator class (`kernel_hw`, `kernel_stack`, `kernel_op`). A link names a profile the way every
page does (ui.core.profiles.profile_from_query), so a team profile fitted here opens on the
other pages with its values and its band. docs/model.md, "Accuracy".
"""

from __future__ import annotations

import engine
from ui.core import profiles
from ui.links import assumptions
from ui.links.params import Link, Param, ParamError, choice

PAGE = "accuracy"
SHIPPED = tuple(p.name for p in engine.shipped_measurements())
DEFAULT_FILE = "trtllm-v0.6.1.csv"  # the file the trtllm-0.6.1 profile is fitted on
SECTIONS = ("serving", "training", "kernels")
KERNELS = engine.kernel_curves().curves
KERNEL_DEFAULTS = {"kernel_hw": "H100", "kernel_stack": "trtllm", "kernel_op": "gemm"}


def _profile_name(text: str) -> str:
    try:
        return engine.check_profile_name(text)
    except ValueError as exc:
        raise ParamError(str(exc)) from None


def declare() -> Link:
    """Every link parameter of the page."""
    return Link(
        PAGE,
        [
            Param("profile", _profile_name, default=profiles.DEFAULT, widget="link"),
            *(assumptions.param(k, widget="link") for k in engine.PROFILE_KEYS),
            *profiles.band_params(),
            Param("measurements", choice(SHIPPED), default=DEFAULT_FILE),
            Param("section", choice(SECTIONS), default="serving"),
            Param(
                "training_profile",
                choice(engine.training_profile_names()),
                default=engine.training_profile_names()[0],
            ),
            *kernel_params(),
        ],
    )


def kernel_params() -> list[Param]:
    """The kernel section's pickers: an accelerator, a stack and an operator class that have
    curves (each picker offers only those; a link's value not among them falls to the first)."""
    options = {
        "kernel_hw": dict.fromkeys(c.accelerator for c in KERNELS),
        "kernel_stack": dict.fromkeys(c.stack for c in KERNELS),
        "kernel_op": dict.fromkeys(c.op for c in KERNELS),
    }
    return [Param(n, choice(list(o)), default=KERNEL_DEFAULTS[n]) for n, o in options.items()]


def profile_values(profile: engine.Profile) -> dict[str, object]:
    """The link's profile values: a built-in's name; a custom profile's name, every value it
    sets, its band and its ground."""
    out: dict[str, object] = {"profile": profile.name}
    if profile.origin != "built-in":
        out |= profile.values() | profiles.band_values(profile)
    return out
