"""Multi-device deployments for the comparison page: "8xH100/tp8", "2xH100/tp1/pp2".

A deployment is an accelerator from the catalogue, a tensor-parallel degree tp and a pipeline
degree pp, on n = tp·pp devices (docs/model.md, "Serving model"), with the page's MoE layout
(its `ep` and `attention_dp` link parameters, applied to every deployment). The text form,
used in share links as `deployments=8xH100/tp8,4xMI300X/tp4`, is
`[n x] accelerator [/tp T] [/pp P]`:
"8xH100" alone means tp 8; a count that is not tp·pp is refused with the fix spelled out.
Each deployment is checked with the engine's own rules (engine.check_devices: an accelerator
without a device-to-device link runs alone; engine.check_parallel: tp splits the model's heads,
pp its layers). Pure functions: no streamlit.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import engine
from ui.links.params import ParamError, note
from ui.words.i18n import _

MAX_DEPLOYMENTS = 8  # as many as accelerators on the single-device comparison
_HEAD = re.compile(r"^\s*(?:(\d{1,5})\s*[x×*]\s*)?(.+?)\s*$", re.IGNORECASE)
_DEGREE = re.compile(r"^\s*(tp|pp)\s*=?\s*(\d{1,5})\s*$", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Deployment:
    """One accelerator type on tp·pp devices."""

    hardware: str  # catalogue id
    tp: int = 1
    pp: int = 1
    ep: int = 1  # the page's, not in the text form
    attention_dp: bool = False  # the page's, not in the text form

    @property
    def devices(self) -> int:
        return self.tp * self.pp

    def text(self) -> str:
        """The canonical link form: '8xH100/tp8', '2xH100/tp1/pp2'."""
        tail = f"/pp{self.pp}" if self.pp > 1 else ""
        return f"{self.devices}x{self.hardware}/tp{self.tp}{tail}"

    def label(self, name: str | None = None) -> str:
        """For people: '8× H100 TP8', '2× H100 TP1 PP2', '8× H100 TP8 EP8 ADP' (`name` instead
        of the id if given)."""
        tail = f" PP{self.pp}" if self.pp > 1 else ""
        tail += (f" EP{self.ep}" if self.ep > 1 else "") + (" ADP" if self.attention_dp else "")
        return f"{self.devices}× {name or self.hardware} TP{self.tp}{tail}"


def _shown(text: str) -> str:
    return repr(text if len(text) <= 40 else text[:40] + "...")


def _degrees(parts: Sequence[str], whole: str) -> dict[str, int]:
    """{'tp': T, 'pp': P} from ['tp8', 'pp2'] (each at most once, 1 to engine.MAX_DEGREE)."""
    found: dict[str, int] = {}
    for part in parts:
        m = _DEGREE.match(part)
        if m is None:
            raise ParamError(
                _("{text}: {part} is not tp<N> or pp<N>").format(
                    text=_shown(whole), part=_shown(part)
                )
            )
        key, value = m.group(1).lower(), int(m.group(2))
        if key in found:
            raise ParamError(_("{text}: {key} given twice").format(text=_shown(whole), key=key))
        if not 1 <= value <= engine.MAX_DEGREE:
            raise ParamError(
                _("{text}: {key} must be 1 to {most}").format(
                    text=_shown(whole), key=key, most=f"{engine.MAX_DEGREE:,}"
                )
            )
        found[key] = value
    return found


def parse_deployment(text: str, cat: engine.Catalog) -> Deployment:
    """One deployment from its text form, the accelerator found in `cat` (id, alias or name).

    Raises:
        ParamError: the text, the accelerator, a degree or the device count is wrong (the
            message names the part and, for a count that is not tp·pp, the fix).
    """
    head, *rest = str(text).split("/")
    m = _HEAD.match(head)
    if m is None or not m.group(2):
        raise ParamError(
            _("{text}: write it as 8xH100/tp8 or 2xH100/tp1/pp2").format(text=_shown(text))
        )
    count = int(m.group(1)) if m.group(1) else None
    try:
        hw = cat.find_hardware(m.group(2))
    except (KeyError, ValueError) as exc:
        raise ParamError(f"{_shown(text)}: {str(exc).strip(chr(39))}") from None
    deg = _degrees(rest, text)
    if count is not None and not deg:  # "8xH100": all of them in one tensor-parallel group
        deg = {"tp": count}
    dep = Deployment(hw.id, deg.get("tp", 1), deg.get("pp", 1))
    if m.group(2).strip().lower() not in {k.lower() for k in (hw.id, *hw.aliases, hw.name)}:
        note(_("{text} read as {deployment}").format(text=_shown(text), deployment=dep.text()))
    if count is not None and count != dep.devices:
        fix = f"{dep.devices}x{hw.id}/tp{dep.tp}" + (f"/pp{dep.pp}" if dep.pp > 1 else "")
        raise ParamError(
            _(
                "{text}: {count} devices but tp {tp} × pp {pp} = {devices} (the count is tp·pp; "
                "e.g. {fix})"
            ).format(
                text=_shown(text), count=count, tp=dep.tp, pp=dep.pp, devices=dep.devices, fix=fix
            )
        )
    return dep


def check_deployment(dep: Deployment, cat: engine.Catalog, model=None) -> None:
    """The engine's checks: a device-to-device link for n > 1, ep dividing tp, and (for an LLM
    with shapes) tp dividing the heads (unless attention is data-parallel), pp at most the
    layers and ep the routed experts.

    Raises:
        ValueError: with the engine's message, prefixed by the deployment.
    """
    hw = cat.hardware[dep.hardware]
    try:
        engine.check_devices(hw, dep.tp, dep.pp)
        engine.check_split(dep.tp, dep.ep, dep.attention_dp)
        if model is not None:
            spec = engine.resolve_llm(model, cat)
            if spec.arch is None:
                raise ValueError(
                    _("{model} has no shapes: the serving model needs them").format(model=spec.id)
                )
            engine.check_parallel(
                name=spec.id,
                arch=spec.arch,
                tp=dep.tp,
                pp=dep.pp,
                ep=dep.ep,
                attention_dp=dep.attention_dp,
            )
    except ValueError as exc:
        raise ValueError(f"{dep.label()}: {exc}") from None


def notes(dep: Deployment, cat: engine.Catalog) -> list[str]:
    """What the serving model assumes about this deployment's interconnect, in words."""
    hw = cat.hardware[dep.hardware]
    per_node = hw.devices_per_node
    if dep.tp > per_node:
        text = _(
            "{deployment}: tp {tp} spans {nodes} nodes of {per_node} {hardware}; the model "
            "runs its collectives on the scale-out network per device"
        )
        nodes = -(-dep.tp // per_node)
        return [
            text.format(
                deployment=dep.label(), tp=dep.tp, nodes=nodes, per_node=per_node, hardware=hw.id
            )
        ]
    return []


def read_deployments(cat: engine.Catalog, model=None):
    """A share-link reader: 1 to MAX_DEPLOYMENTS comma-separated deployments, each parsed and
    checked (for `model` when given); duplicates are dropped."""

    def read(text: str) -> list[Deployment]:
        parts = [p for p in (s.strip() for s in str(text).split(",")) if p]
        if not parts:
            raise ParamError(_("needs at least 1 deployment, e.g. 8xH100/tp8"))
        if len(parts) > MAX_DEPLOYMENTS:
            raise ParamError(_("more than {most} deployments").format(most=MAX_DEPLOYMENTS))
        given = [parse_deployment(p, cat) for p in parts]
        deps = list(dict.fromkeys(given))
        if len(deps) < len(given):
            twice = [d.text() for d in deps if given.count(d) > 1]
            note(
                _("given more than once, kept once: {deployments}").format(
                    deployments=", ".join(twice)
                )
            )
        for dep in deps:
            try:
                check_deployment(dep, cat, model)
            except ValueError as exc:
                raise ParamError(str(exc)) from None
        return deps

    return read


def write_deployments(deps: Sequence[Deployment]) -> str:
    """The link form of a list: '8xH100/tp8,4xMI300X/tp4'."""
    return ",".join(d.text() for d in deps)
