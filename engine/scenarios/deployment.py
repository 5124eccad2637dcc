"""A deployment: a model served on accelerators, and a grid of them.

`Deployment` is what `serve`, `operators`, `serve_load` and `max_rate` take: the model (a catalogue
id, a ModelSpec with shapes, or an Architecture), the accelerator (an id or a HardwareSpec), the
parallel layout (tp × pp devices), the number formats (`precision`: the weights and the GEMMs'
activations, engine/catalog/formats.py; `kv_precision`: the KV cache, the weight format's
default when None), the profile (its assumptions and its stack's scheduler), assumptions (the
profile's when None) with `overrides` by their user names (engine/assumptions.py), and the
catalogue ids are looked up in (the default one when None). What can be checked without the
catalogue is checked here, with the messages every entry point gives; the model's shapes and the
accelerator's link are checked where the deployment is folded (engine/serving/inputs.py).
`Deployments` is the grid `serve_sweep`, `load_grid` and `load_plan` take: every model ×
accelerator × precision × tp × pp, sharing the rest. docs/model.md, "Serving model".
An MoE deployment's `ep` (expert-parallel ranks, dividing tp) and `attention_dp` (attention
data-parallel over the tp devices) live inside the tp × pp devices: docs/model.md, "MoE layouts".
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from engine.assumptions import ASSUMPTION_NAMES, Assumptions, make_assumptions
from engine.catalog.arch import Architecture
from engine.catalog.formats import check_format, check_kv_format
from engine.catalog.profiles import DEFAULT_PROFILE, Profile
from engine.catalog.reader import Catalog
from engine.catalog.specs import HardwareSpec, ModelSpec
from engine.checks import MAX_DEGREE, as_list, check_whole, check_whole_numbers
from engine.scenarios.bind import Fields
from engine.scenarios.speculation import KEYWORDS as SPEC_KEYWORDS
from engine.scenarios.speculation import Speculation, speculation_of

ModelRef = str | ModelSpec | Architecture
HardwareRef = str | HardwareSpec
_MODEL_TYPES = (str, ModelSpec, Architecture)  # isinstance on a tuple: faster than on a union
_HARDWARE_TYPES = (str, HardwareSpec)


def check_profile(profile: object) -> str | Profile:
    """A profile's name (1 to 100 characters) or a Profile."""
    if isinstance(profile, Profile):
        return profile
    if not isinstance(profile, str) or not profile.strip() or len(profile) > 100:
        raise ValueError("profile must be a name (1 to 100 characters)")
    return profile


def profile_name(profile: str | Profile) -> str:
    return profile.name if isinstance(profile, Profile) else profile


def check_assumptions(assumptions: object) -> Assumptions | None:
    if assumptions is not None and not isinstance(assumptions, Assumptions):
        raise ValueError(f"assumptions must be an Assumptions, got {type(assumptions).__name__}")
    return assumptions


def check_overrides(overrides: object, assumptions: Assumptions | None) -> tuple:
    """Assumption overrides by user name as sorted (name, value) pairs, None values dropped;
    names and values checked (make_assumptions' messages)."""
    pairs = dict(overrides.items() if isinstance(overrides, Mapping) else overrides or ())
    pairs = {k: v for k, v in pairs.items() if v is not None}
    if pairs:
        make_assumptions(assumptions, **pairs)
    return tuple(sorted(pairs.items()))


SWITCH_WORDS = {"on": True, "off": False}


def check_attention_dp(value: object) -> bool:
    """True or False (or the words "on" and "off", as the CLI and links write it)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in SWITCH_WORDS:
        return SWITCH_WORDS[value.strip().lower()]
    raise ValueError(f"attention_dp: expected on or off (true or false), got {value!r}"[:200])


def check_split(tp: int, ep: object, attention_dp: object) -> tuple[int, bool]:
    """ep a whole number that divides tp (the experts sit on the stage's devices); attention DP
    needs a group of devices (tp > 1)."""
    ep = check_whole(ep, "ep", high=MAX_DEGREE)
    if tp % ep:
        raise ValueError(
            f"ep {ep} must divide tp {tp}: the expert-parallel ranks are the stage's tp devices"
        )
    on = check_attention_dp(attention_dp)
    if on and tp < 2:
        raise ValueError("attention_dp needs a group of devices to spread over: use tp > 1")
    return ep, on


def check_catalog(catalog: object) -> None:
    if catalog is not None and not isinstance(catalog, Catalog):
        raise ValueError(f"catalog must be a Catalog, got {type(catalog).__name__}")


class WithAssumptions(Fields):
    """The keyword form's assumption overrides: any assumption's user name is a keyword."""

    __slots__ = ()
    EXTRA: ClassVar[tuple[str, ...]] = ASSUMPTION_NAMES

    @classmethod
    def from_fields(cls, base, values: dict[str, Any]):
        if values.keys().isdisjoint(ASSUMPTION_NAMES):
            return super().from_fields(base, values)
        named = {k: v for k, v in values.items() if k not in ASSUMPTION_NAMES}
        extra = {k: v for k, v in values.items() if k in ASSUMPTION_NAMES}
        if extra:
            before = dict(base.overrides) if base is not None else {}
            named["overrides"] = before | dict(named.get("overrides", ())) | extra
        return super().from_fields(base, named)

    @property
    def profile_name(self) -> str:
        return profile_name(self.profile)

    @property
    def overrides_dict(self) -> dict[str, object]:
        return dict(self.overrides)


class WithSpeculation(WithAssumptions):
    """The keyword form's speculation: `spec_method`, `spec_tokens`, `spec_acceptance` and
    `draft_model` name the `speculation` field (engine/scenarios/speculation.py)."""

    __slots__ = ()
    EXTRA: ClassVar[tuple[str, ...]] = ASSUMPTION_NAMES + SPEC_KEYWORDS

    @classmethod
    def from_fields(cls, base, values: dict[str, Any]):
        if not values.keys().isdisjoint(SPEC_KEYWORDS):
            values = dict(values)
            values["speculation"] = speculation_of(values)
        return super().from_fields(base, values)


@dataclass(frozen=True, slots=True)
class Deployment(WithSpeculation):
    """A model on tp × pp accelerators, with its number formats, profile and assumptions."""

    model: ModelRef
    hardware: HardwareRef
    tp: int = 1
    pp: int = 1
    precision: str = "fp16"
    kv_precision: str | None = None
    profile: str | Profile = DEFAULT_PROFILE
    assumptions: Assumptions | None = None
    overrides: tuple[tuple[str, object], ...] = field(default=())
    catalog: Catalog | None = None
    ep: int = 1  # expert-parallel ranks among the tp devices of a stage
    attention_dp: bool = False  # attention (and every non-expert operator) data-parallel
    speculation: Speculation | None = None  # speculative decoding (None: off)

    ARG: ClassVar[str] = "deployment"
    LEADING: ClassVar[tuple[str, ...]] = ("model", "hardware")

    def __post_init__(self) -> None:
        if not isinstance(self.model, _MODEL_TYPES):
            raise ValueError(f"model: expected an id or a ModelSpec, got {self.model!r}"[:200])
        if not isinstance(self.hardware, _HARDWARE_TYPES):
            raise ValueError(
                f"hardware: expected an id or a HardwareSpec, got {self.hardware!r}"[:200]
            )
        object.__setattr__(self, "tp", check_whole(self.tp, "tp", high=MAX_DEGREE))
        object.__setattr__(self, "pp", check_whole(self.pp, "pp", high=MAX_DEGREE))
        precision = check_format(self.precision)  # int4, fp4 kept: read as w4a16, nvfp4
        object.__setattr__(self, "precision", precision)
        check_kv_format(self.kv_precision, precision)
        object.__setattr__(self, "profile", check_profile(self.profile))
        check_assumptions(self.assumptions)
        object.__setattr__(self, "overrides", check_overrides(self.overrides, self.assumptions))
        check_catalog(self.catalog)
        ep, on = check_split(self.tp, self.ep, self.attention_dp)
        object.__setattr__(self, "ep", ep)
        object.__setattr__(self, "attention_dp", on)
        if self.speculation is not None and not isinstance(self.speculation, Speculation):
            raise ValueError(
                f"speculation: expected a Speculation, got {type(self.speculation).__name__}"
            )

    @property
    def devices(self) -> int:
        """tp × pp: expert parallelism and attention DP live inside each stage's tp devices
        (TensorRT-LLM's convention)."""
        return self.tp * self.pp


def _axis(values: object, name: str) -> tuple:
    return tuple(as_list(values, name))


def _degrees(values: object, name: str) -> tuple[int, ...]:
    return tuple(int(x) for x in check_whole_numbers(_axis(values, name), name, high=MAX_DEGREE))


def _switches(values: object) -> tuple[bool, ...]:
    return tuple(dict.fromkeys(check_attention_dp(v) for v in _axis(values, "attention_dp")))


@dataclass(frozen=True, slots=True)
class Deployments(WithSpeculation):
    """Every model × accelerator × precision × tp × pp × ep × attention DP, sharing the rest:
    a grid of Deployments (each axis one value or several; a combination whose ep does not
    divide its tp, or attention DP on one device, is left out where the grid is placed)."""

    models: tuple
    hardware: tuple
    tp: tuple[int, ...] = (1,)
    pp: tuple[int, ...] = (1,)
    precisions: tuple[str, ...] = ("fp16",)
    kv_precision: str | None = None
    profile: str | Profile = DEFAULT_PROFILE
    assumptions: Assumptions | None = None
    overrides: tuple[tuple[str, object], ...] = field(default=())
    catalog: Catalog | None = None
    ep: tuple[int, ...] = (1,)
    attention_dp: tuple[bool, ...] = (False,)
    speculation: Speculation | None = None  # shared by every deployment of the grid

    ARG: ClassVar[str] = "deployments"
    LEADING: ClassVar[tuple[str, ...]] = ("models", "hardware")
    ALIASES: ClassVar[dict[str, str]] = {"precision": "precisions", "model": "models"}

    def __post_init__(self) -> None:
        object.__setattr__(self, "models", _axis(self.models, "models"))
        object.__setattr__(self, "hardware", _axis(self.hardware, "hardware"))
        object.__setattr__(self, "tp", _degrees(self.tp, "tp"))
        object.__setattr__(self, "pp", _degrees(self.pp, "pp"))
        object.__setattr__(self, "precisions", _axis(self.precisions, "precisions"))
        object.__setattr__(self, "profile", check_profile(self.profile))
        check_assumptions(self.assumptions)
        object.__setattr__(self, "overrides", check_overrides(self.overrides, self.assumptions))
        check_catalog(self.catalog)
        object.__setattr__(self, "ep", _degrees(self.ep, "ep"))
        object.__setattr__(self, "attention_dp", _switches(self.attention_dp))
        if self.speculation is not None and not isinstance(self.speculation, Speculation):
            raise ValueError(
                f"speculation: expected a Speculation, got {type(self.speculation).__name__}"
            )

    @classmethod
    def of_one(cls, dep: Deployment) -> Deployments:
        """The grid of one deployment."""
        return cls(
            models=(dep.model,),
            hardware=(dep.hardware,),
            tp=(dep.tp,),
            pp=(dep.pp,),
            precisions=(dep.precision,),
            kv_precision=dep.kv_precision,
            profile=dep.profile,
            assumptions=dep.assumptions,
            overrides=dep.overrides,
            catalog=dep.catalog,
            ep=(dep.ep,),
            attention_dp=(dep.attention_dp,),
            speculation=dep.speculation,
        )

    @property
    def size(self) -> int:
        """How many deployments the grid names (before any is found impossible)."""
        axes = (
            self.models,
            self.hardware,
            self.precisions,
            self.tp,
            self.pp,
            self.ep,
            self.attention_dp,
        )
        count = 1
        for axis in axes:
            count *= len(axis)
        return count
