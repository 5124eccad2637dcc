"""How far off a serving prediction is known to be, and where it leaves calibrated ground.

A prediction carries its profile's measured out-of-sample error: the larger of the
leave-one-model-out and leave-one-accelerator-out MAPE of a fitted profile (engine/accuracy/
calibrate.py), or, for a profile that fitted nothing, its MAPE on the shipped measurements
(every row out of sample). A profile whose out-of-sample error could not be measured (one
model on one accelerator) says so instead of quoting its in-sample error. Where a prediction
is off the ground the profile was fitted on (another accelerator, precision or architecture
family), that is said beside the number: the band is then a floor, not an estimate.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.catalog.arch import Architecture
from engine.catalog.profiles import Profile


@dataclass(frozen=True, slots=True)
class Band:
    """The typical relative error of a profile's predictions (a MAPE, %), and its basis."""

    pct: float | None  # None: not measured
    basis: str  # how it was measured, in words

    def as_dict(self) -> dict[str, object]:
        return {"error_band_pct": self.pct, "error_band_basis": self.basis}


def error_band(profile: Profile) -> Band:
    """The profile's measured out-of-sample error."""
    r = profile.residuals
    cv = [r[k] for k in ("lomo_mape_pct", "loao_mape_pct") if k in r]
    files = ", ".join(profile.fitted_on) or "no file"
    if cv:
        return Band(max(cv), f"the larger of the leave-one-model-out and leave-one-accelerator-"
                             f"out MAPE on {profile.rows} rows of {files}")  # fmt: skip
    if "shipped_mape_pct" in r:
        return Band(r["shipped_mape_pct"], "MAPE on the shipped measurements (nothing fitted)")
    if profile.fitted:
        return Band(None, f"not measured out of sample ({profile.rows} rows of {files} cover "
                          "one model on one accelerator)")  # fmt: skip
    return Band(None, "not measured (a hand-set profile)")


def families(arch: Architecture) -> tuple[str, ...]:
    """The architecture families a model belongs to, as the calibrated ground names them."""
    found = ["moe" if arch.experts else "dense"]
    if arch.attention == "mla":
        found.append("mla")
    if arch.sliding_window:
        found.append("sliding-window")
    if arch.parallel_attention:
        found.append("parallel-attention")
    return tuple(found)


def off_ground(profile: Profile, arch: Architecture, hardware: str, precision: str) -> list[str]:
    """Why a prediction leaves the profile's calibrated ground (empty when it does not)."""
    ground = profile.ground
    out = []
    if ground.get("hardware") and hardware not in ground["hardware"]:
        out.append(f"{hardware} was not among the fitted accelerators "
                   f"({', '.join(ground['hardware'])})")  # fmt: skip
    if ground.get("precisions") and precision not in ground["precisions"]:
        out.append(f"{precision} was not among the fitted precisions "
                   f"({', '.join(ground['precisions'])})")  # fmt: skip
    new = [f for f in families(arch) if ground.get("families") and f not in ground["families"]]
    if new:
        out.append(f"{', '.join(new)} models were not in the fitted data "
                   f"({', '.join(ground['families'])} only)")  # fmt: skip
    return out
