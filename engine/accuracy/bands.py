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

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from engine.catalog.arch import Architecture
from engine.catalog.formats import format_name
from engine.catalog.profiles import CARRIED_BAND as CARRIED
from engine.catalog.profiles import Profile
from engine.report.messages import Message, MessageKind


@dataclass(frozen=True, slots=True)
class Band:
    """The typical relative error of a profile's predictions (a MAPE, %), and its basis: how it
    was measured, a Message (its fields: row counts and file names). The app shows it in the
    reader's language; every export carries its English, `str(band.basis)`."""

    pct: float | None  # None: not measured
    basis: Message

    def __post_init__(self) -> None:
        if not isinstance(self.basis, Message):
            raise TypeError(f"a band's basis is a Message, got {type(self.basis).__name__}")

    def as_dict(self) -> dict[str, object]:
        return {"error_band_pct": self.pct, "error_band_basis": str(self.basis)}

    def limits(self, predicted):
        """(low, high): the prediction less and plus the band, predicted × (1 ∓ pct/100), for
        a number or an array; None when the band was not measured."""
        if self.pct is None:
            return None
        value = np.asarray(predicted, dtype=float)
        low, high = value * (1.0 - self.pct / 100.0), value * (1.0 + self.pct / 100.0)
        return (float(low), float(high)) if value.ndim == 0 else (low, high)


_LOMO, _LOAO = "lomo_mape_pct", "loao_mape_pct"
BASIS_BOTH = MessageKind(
    "band_larger_of_both",
    "the larger of the leave-one-model-out and leave-one-accelerator-out MAPE on {rows} rows "
    "of {files}",
)
BASIS_LOMO_ONLY = MessageKind(
    "band_leave_one_model_out",
    "the leave-one-model-out MAPE on {rows} rows of {files} (one accelerator only: leaving it "
    "out is not possible)",
)
BASIS_LOAO_ONLY = MessageKind(
    "band_leave_one_accelerator_out",
    "the leave-one-accelerator-out MAPE on {rows} rows of {files} (one model only: leaving it "
    "out is not possible)",
)
BASIS_CARRIED = MessageKind(
    "band_carried",
    "measured out of sample where the profile was fitted (the number its share link carries)",
)
BASIS_SHIPPED = MessageKind("band_shipped", "MAPE on the shipped measurements (nothing fitted)")
BASIS_ONE_PAIR = MessageKind(
    "band_one_pair",
    "not measured out of sample ({rows} rows of {files} cover one model on one accelerator)",
)
BASIS_HAND_SET = MessageKind("band_hand_set", "not measured (a hand-set profile)")
BASIS_HELD_OUT = MessageKind(
    "band_held_out_format",
    "the MAPE of the {rows} {format} rows of {files} that the fit left out, predicted out of "
    "sample (above the fitted rows' leave-one-out error, {base} %)",
)


def error_band(profile: Profile) -> Band:
    """The profile's measured out-of-sample error."""
    r = profile.residuals
    where = {"rows": f"{profile.rows}", "files": ", ".join(profile.fitted_on) or "no file"}
    if _LOMO in r and _LOAO in r:
        return Band(max(r[_LOMO], r[_LOAO]), BASIS_BOTH(**where))
    if _LOMO in r:
        return Band(r[_LOMO], BASIS_LOMO_ONLY(**where))
    if _LOAO in r:
        return Band(r[_LOAO], BASIS_LOAO_ONLY(**where))
    if CARRIED in r:
        return Band(r[CARRIED], BASIS_CARRIED())
    if "shipped_mape_pct" in r:
        return Band(r["shipped_mape_pct"], BASIS_SHIPPED())
    if profile.fitted:
        return Band(None, BASIS_ONE_PAIR(**where))
    return Band(None, BASIS_HAND_SET())


# The families a calibrated ground names (ids, shown as written in every language)
FAMILY_IDS = ("dense", "moe", "mla", "sliding-window", "parallel-attention", "sparse-attention")


def families(arch: Architecture) -> tuple[str, ...]:
    """The architecture families a model belongs to, as the calibrated ground names them."""
    found = ["moe" if arch.experts else "dense"]
    if arch.attention == "mla":
        found.append("mla")
    if arch.sliding_window:
        found.append("sliding-window")
    if arch.parallel_attention:
        found.append("parallel-attention")
    if arch.index_topk is not None:  # DeepSeek Sparse Attention's indexer and top-k keys
        found.append("sparse-attention")
    return tuple(found)


NOT_FITTED_HW = MessageKind(
    "off_fitted_hardware", "{hardware} was not among the fitted accelerators ({fitted})"
)
NOT_FITTED_PRECISION = MessageKind(
    "off_fitted_precision", "{precision} was not among the fitted precisions ({fitted})"
)
NOT_FITTED_FAMILY = MessageKind(
    "off_fitted_families", "{families} models were not in the fitted data ({fitted} only)"
)
KINDS = (
    BASIS_BOTH,
    BASIS_LOMO_ONLY,
    BASIS_LOAO_ONLY,
    BASIS_CARRIED,
    BASIS_SHIPPED,
    BASIS_ONE_PAIR,
    BASIS_HAND_SET,
    BASIS_HELD_OUT,
    NOT_FITTED_HW,
    NOT_FITTED_PRECISION,
    NOT_FITTED_FAMILY,
)


def off_ground(
    profile: Profile, arch: Architecture, hardware: str, precision: str
) -> list[Message]:
    """Why a prediction leaves the profile's calibrated ground (empty when it does not)."""
    ground = profile.ground
    out = []
    if ground.get("hardware") and hardware not in ground["hardware"]:
        out.append(NOT_FITTED_HW(hardware=hardware, fitted=", ".join(ground["hardware"])))
    if ground.get("precisions") and precision not in ground["precisions"]:
        fitted = ", ".join(ground["precisions"])
        out.append(NOT_FITTED_PRECISION(precision=precision, fitted=fitted))
    new = [f for f in families(arch) if ground.get("families") and f not in ground["families"]]
    if new:
        fitted = ", ".join(ground["families"])
        out.append(NOT_FITTED_FAMILY(families=", ".join(new), fitted=fitted))
    return out


EDITED = " (the profile as fitted; edits of its assumptions are not measured)"


@dataclass(frozen=True, slots=True)
class PredictionBand:
    """What one prediction carries about its error: the profile's Band, why the scenario is off
    the ground the profile was fitted on (empty: on it) and whether its assumptions were edited
    from the profile's (the band is then the profile's as fitted)."""

    profile: str
    band: Band
    off: tuple[Message, ...] = ()
    edited: bool = False

    def as_dict(self) -> dict[str, object]:
        """The keys every export of a prediction carries, in English: `error_band_pct` (None
        when not measured), `error_band_basis` and `off_calibrated_ground` ('; '-joined, empty
        on the ground)."""
        return {
            "error_band_pct": self.band.pct,
            "error_band_basis": str(self.band.basis) + (EDITED if self.edited else ""),
            "off_calibrated_ground": "; ".join(map(str, self.off)),
        }


def prediction_band(
    profile: Profile,
    arch: Architecture | None,
    hardware: str | Iterable[str],
    precision: str | Iterable[str],
    *,
    edited: bool = False,
) -> PredictionBand:
    """The band of `profile` for a scenario: every pair of the accelerator ids and precisions
    given, the reasons of all of them, each once (none for a model without an architecture)."""
    hws = [hardware] if isinstance(hardware, str) else list(hardware)
    precisions = [precision] if isinstance(precision, str) else list(precision)
    off: dict[Message, None] = {}
    if arch is not None:
        for hw in hws:
            for p in precisions:
                off |= dict.fromkeys(off_ground(profile, arch, hardware=hw, precision=p))
    band = max(
        (held_out_band(profile, p) for p in precisions),
        key=lambda b: -1.0 if b.pct is None else b.pct,
        default=error_band(profile),
    )
    return PredictionBand(profile=profile.name, band=band, off=tuple(off), edited=edited)


def held_out_band(profile: Profile, precision: str) -> Band:
    """The band of a prediction in `precision`: the profile's, or, when the fit left out rows
    in that number format and predicted them (`calibrate --precisions`), their MAPE where it
    is larger (trtllm-1.0's fp4 rows: fitted on fp8, predicted on nvfp4)."""
    base = error_band(profile)
    name = format_name(precision)
    held = profile.residuals.get(f"held_out_{name}_mape_pct")
    if held is None or base.pct is None or held <= base.pct:
        return base
    rows = profile.residuals.get(f"held_out_{name}_rows", 0.0)
    basis = BASIS_HELD_OUT(
        rows=f"{rows:,.0f}",
        format=name,
        files=", ".join(profile.fitted_on) or "no file",
        base=f"{base.pct:.1f}",
    )
    return Band(held, basis)
