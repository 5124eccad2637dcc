"""How far off a serving prediction is known to be, and where it leaves calibrated ground.

A prediction carries its profile's measured out-of-sample error: the larger of the
leave-one-model-out and leave-one-accelerator-out MAPE of a fitted profile (engine/accuracy/
calibrate.py), or, for a profile that fitted nothing, its MAPE on the shipped measurements
(every row out of sample). A profile whose out-of-sample error could not be measured (one
model on one accelerator) says so instead of quoting its in-sample error. Where a prediction
is off the ground the profile was fitted on (another accelerator, precision or architecture
family), that is said beside the number: the band is then a floor, not an estimate.

A profile fitted on a page and carried to another by a share link keeps its band and ground
(`engine.profile_from_values(..., band_pct=, ground=)`): the band is then the number the link
carries (`CARRIED`), said so in its basis.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.catalog.arch import Architecture
from engine.catalog.profiles import CARRIED_BAND as CARRIED
from engine.catalog.profiles import Profile
from engine.report.messages import N_


@dataclass(frozen=True, slots=True)
class Band:
    """The typical relative error of a profile's predictions (a MAPE, %), and its basis: how it
    was measured, in words (`template`, English, its {names} filled from `fields`: row counts
    and file names). The app shows the template in the reader's language
    (ui.core.i18n.band_basis); `basis` is the English text every export carries."""

    pct: float | None  # None: not measured
    template: str
    fields: tuple[tuple[str, str], ...] = ()

    @property
    def basis(self) -> str:
        """How the band was measured, in English words."""
        return self.template.format(**dict(self.fields)) if self.fields else self.template

    def as_dict(self) -> dict[str, object]:
        return {"error_band_pct": self.pct, "error_band_basis": self.basis}

    def limits(self, predicted):
        """(low, high): the prediction less and plus the band, predicted × (1 ∓ pct/100), for
        a number or an array; None when the band was not measured."""
        if self.pct is None:
            return None
        value = np.asarray(predicted, dtype=float)
        low, high = value * (1.0 - self.pct / 100.0), value * (1.0 + self.pct / 100.0)
        return (float(low), float(high)) if value.ndim == 0 else (low, high)


_LOMO, _LOAO = "lomo_mape_pct", "loao_mape_pct"
BASIS_BOTH = N_(
    "the larger of the leave-one-model-out and leave-one-accelerator-out MAPE on {rows} rows "
    "of {files}"
)
BASIS_LOMO_ONLY = N_(
    "the leave-one-model-out MAPE on {rows} rows of {files} (one accelerator only: leaving it "
    "out is not possible)"
)
BASIS_LOAO_ONLY = N_(
    "the leave-one-accelerator-out MAPE on {rows} rows of {files} (one model only: leaving it "
    "out is not possible)"
)
BASIS_CARRIED = N_(
    "measured out of sample where the profile was fitted (the number its share link carries)"
)
BASIS_SHIPPED = N_("MAPE on the shipped measurements (nothing fitted)")
BASIS_ONE_PAIR = N_(
    "not measured out of sample ({rows} rows of {files} cover one model on one accelerator)"
)
BASIS_HAND_SET = N_("not measured (a hand-set profile)")


def error_band(profile: Profile) -> Band:
    """The profile's measured out-of-sample error."""
    r = profile.residuals
    where = (("rows", f"{profile.rows}"), ("files", ", ".join(profile.fitted_on) or "no file"))
    if _LOMO in r and _LOAO in r:
        return Band(max(r[_LOMO], r[_LOAO]), BASIS_BOTH, where)
    if _LOMO in r:
        return Band(r[_LOMO], BASIS_LOMO_ONLY, where)
    if _LOAO in r:
        return Band(r[_LOAO], BASIS_LOAO_ONLY, where)
    if CARRIED in r:
        return Band(r[CARRIED], BASIS_CARRIED)
    if "shipped_mape_pct" in r:
        return Band(r["shipped_mape_pct"], BASIS_SHIPPED)
    if profile.fitted:
        return Band(None, BASIS_ONE_PAIR, where)
    return Band(None, BASIS_HAND_SET)


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


NOT_FITTED_HW = N_("{hardware} was not among the fitted accelerators ({fitted})")
NOT_FITTED_PRECISION = N_("{precision} was not among the fitted precisions ({fitted})")
NOT_FITTED_FAMILY = N_("{families} models were not in the fitted data ({fitted} only)")


def off_ground(profile: Profile, arch: Architecture, hardware: str, precision: str) -> list[str]:
    """Why a prediction leaves the profile's calibrated ground (empty when it does not)."""
    ground = profile.ground
    out = []
    if ground.get("hardware") and hardware not in ground["hardware"]:
        out.append(NOT_FITTED_HW.format(hardware=hardware, fitted=", ".join(ground["hardware"])))
    if ground.get("precisions") and precision not in ground["precisions"]:
        fitted = ", ".join(ground["precisions"])
        out.append(NOT_FITTED_PRECISION.format(precision=precision, fitted=fitted))
    new = [f for f in families(arch) if ground.get("families") and f not in ground["families"]]
    if new:
        fitted = ", ".join(ground["families"])
        out.append(NOT_FITTED_FAMILY.format(families=", ".join(new), fitted=fitted))
    return out
