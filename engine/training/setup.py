"""A training run resolved: the model's shapes, the accelerator and its links, the profile's
assumptions with the run's overrides (docs/model.md, "Training step").

Shared by `train`, `train_search`, `training_operators` and the calibration's predictions. The
run (engine/scenarios/training.py TrainRun) has checked its own fields; what needs the
catalogue is checked here, before any arithmetic: the model (a catalogue id, a ModelSpec with
shapes, e.g. from `engine.model_from_config`, or an Architecture, e.g. `gpt_architecture(...)`)
and the accelerator (an id or a HardwareSpec).
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.arrays import INF
from engine.assumptions import TRAINING_NAMES, Assumptions, make_assumptions
from engine.catalog.arch import Architecture
from engine.catalog.profiles import get_training_profile
from engine.catalog.resolve import resolve_hardware
from engine.catalog.shapes import Shapes, shapes_of
from engine.catalog.specs import HardwareSpec
from engine.scenarios.training import TrainRun
from engine.serving.inputs import device_values, efficiencies, llm_architecture
from engine.serving.kernel import Device, Efficiencies
from engine.training.collectives import Links
from engine.training.config import Config
from engine.training.kernel import evaluate
from engine.training.numerics import Numerics, numerics


@dataclass(frozen=True, slots=True)
class Setup:
    """Everything but the configuration: checked, with the assumptions applied."""

    name: str
    arch: Architecture
    s: Shapes
    hw: HardwareSpec
    precision: str
    fp8_recipe: str | None  # None: a 16-bit run
    fp8_param_gather: bool
    peak_precision: str
    dev: Device
    links: Links
    eta: Efficiencies
    assumptions: Assumptions
    profile: str
    numerics: Numerics  # bytes per weight, fp8 casts, the attention kernel
    echo: dict  # the assumptions the training model reads, user names and units


def links_of(hw: HardwareSpec, dev: Device, a: Assumptions) -> Links:
    """The in-node link and the network per GPU with their efficiencies (no network: INF
    bandwidth, never used because configurations spanning nodes are refused)."""
    net = hw.network_bandwidth_bytes_per_s
    latency = a.network_latency_s if a.network_latency_s is not None else hw.network_latency_s
    return Links(
        node_bw=dev.link_bw,
        node_lat=dev.link_lat,
        net_bw=INF if net is None else net * a.network_efficiency,
        net_lat=0.0 if latency is None else latency,
        per_node=float(hw.devices_per_node),
    )


def setup(run: TrainRun) -> Setup:
    """Resolve everything `run` fixes besides its layouts: the model's shapes, the accelerator
    and its links, the profile's assumptions with the run's overrides."""
    profile = get_training_profile(run.profile)
    base = profile.assumptions if run.assumptions is None else run.assumptions
    return fold(
        model=run.model,
        hardware=run.hardware,
        precision=run.precision,
        fp8_recipe=run.fp8_recipe,
        attention=run.attention,
        param_gather=run.fp8_param_gather,
        assumptions=make_assumptions(base, **run.overrides_dict),
        profile=profile.name,
        catalog=run.catalog,
    )


def fold(
    model,
    hardware,
    precision: str,
    assumptions: Assumptions,
    profile: str,
    catalog,
    fp8_recipe: str | None = None,
    attention: str = "flash",
    param_gather: bool = False,
) -> Setup:
    """The Setup of a model on an accelerator under checked `assumptions` (`setup`, and the
    calibration's predictions, which bring their own assumptions); `fp8_recipe` checked for
    `precision` (engine/scenarios/training.py check_fp8_recipe)."""
    name, arch = (
        ("custom", model) if isinstance(model, Architecture) else llm_architecture(model, catalog)
    )
    hw = resolve_hardware(hardware, catalog)
    dev, used = device_values(hw, precision, assumptions)
    echo = assumptions.as_dict()
    return Setup(
        name=name,
        arch=arch,
        s=shapes_of(arch),
        hw=hw,
        precision=precision,
        fp8_recipe=fp8_recipe,
        fp8_param_gather=param_gather,
        peak_precision=used,
        dev=dev,
        links=links_of(hw, dev, assumptions),
        eta=efficiencies(assumptions),
        assumptions=assumptions,
        profile=profile,
        numerics=numerics(
            precision=precision,
            recipe=fp8_recipe,
            attention=attention,
            hw=hw,
            param_gather=param_gather,
            saved_bytes=assumptions.fp8_saved_bytes,
        )._replace(
            grad_bytes=assumptions.gradient_bytes,
            moment_bytes=assumptions.optimizer_moment_bytes,
            masks=assumptions.dropout > 0,
            moe_act_bytes=assumptions.moe_act_input_bytes,
            attn_out_bytes=assumptions.attention_output_bytes,
            flex_dispatch=assumptions.moe_dispatcher == "flex",
        ),
        echo={k: echo[k] for k in TRAINING_NAMES},
    )


def step(st: Setup, cfg: Config) -> dict:
    """The training kernel's step of every configuration of `cfg` under `st` (arrays by key)."""
    return evaluate(
        s=st.s, c=cfg, dev=st.dev, links=st.links, eta=st.eta, a=st.assumptions, num=st.numerics
    )
