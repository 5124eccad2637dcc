"""The error band every CLI prediction carries (engine.prediction_band): `error_band_pct`,
`error_band_basis` and `off_calibrated_ground`, added to a command's JSON and table after its
own keys, for the model, accelerator and profile its flags name and the precisions its result
ran in.

The band is the profile's as fitted; when a flag edits one of its assumptions, the basis says
so (the edit is not measured). docs/model.md, "Error bands and calibrated ground".
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping

from engine.accuracy.bands import prediction_band
from engine.assumptions import ASSUMPTION_NAMES
from engine.catalog.profiles import Profile
from engine.catalog.reader import Catalog
from engine.catalog.resolve import resolve_hardware, resolve_model
from engine.catalog.specs import ModelSpec

# The result keys that name a precision a prediction runs in (a disaggregated run: both sides').
PRECISION_KEYS = ("precision", "prefill_precision", "decode_precision")


def edited(args: argparse.Namespace) -> bool:
    """True when a flag sets one of the profile's assumptions."""
    return any(getattr(args, name, None) is not None for name in ASSUMPTION_NAMES)


def with_band(
    result: Mapping[str, object],
    profile: Profile,
    model: str | ModelSpec,
    args: argparse.Namespace,
    catalog: Catalog,
) -> dict[str, object]:
    """`result` with the band keys after its own (its precision as given by the flags when it
    names none)."""
    arch = resolve_model(model, catalog).arch
    hardware = resolve_hardware(args.hardware, catalog).id
    named = [str(result[k]) for k in PRECISION_KEYS if result.get(k)]
    precisions = list(dict.fromkeys(named or [str(args.precision or "fp16")]))
    found = prediction_band(
        profile, arch, hardware=hardware, precision=precisions, edited=edited(args)
    )
    return {**result, **found.as_dict()}
