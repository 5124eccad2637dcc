"""The tutorial's LLM decode view's entry points: `decode` (a scenario), `decode_sweep` (a grid).

The tutorial's view, not the serving model: the whole model as one roofline point on one device
(tp and pp do not exist here), one decode step at a given context and one prefill. The serving
model (engine/serving/: operators on TP×PP devices, whole requests, its one decode step in
engine/serving/decode_step.py) answers `engine.serve`; pages that show this view label it so.
Both take catalogue ids or specs, check every argument before any arithmetic, and call the one
kernel `llm_terms` (engine/roofline/decode.py; docs/model.md, "LLM decode"; Pope et al.,
"Efficiently Scaling Transformer Inference", MLSys 2023). `decode_sweep` evaluates model ×
hardware × context × batch at once by numpy broadcasting (no per-row Python loop), so each row
equals the scalar `decode` of the same scenario; its columns are `DecodeResult.as_dict()`'s keys
with the assumptions flattened.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np

from engine.assumptions import Assumptions, make_assumptions
from engine.catalog.parse import CatalogError
from engine.catalog.profiles import get_profile
from engine.catalog.reader import Catalog
from engine.catalog.resolve import default_catalog, resolve_hardware, resolve_model
from engine.catalog.shapes import Shapes, kv_bytes_per_token_layer
from engine.catalog.specs import (
    BYTES_PER_PARAM,
    HardwareSpec,
    ModelSpec,
    check_kv_precision,
    check_precision,
)
from engine.checks import MAX_BATCH, MAX_TOKENS, as_list, check_whole, check_whole_numbers
from engine.report.columns import PHASES
from engine.report.frames import categorical
from engine.report.messages import Message, MessageKind
from engine.roofline import decode as llm
from engine.roofline.solve import dispatch_s, fallback_warning
from engine.scenarios.bind import bind
from engine.scenarios.deployment import Deployment, Deployments

if TYPE_CHECKING:  # pandas loads on first sweep, keeping `import engine` fast
    import pandas as pd

TUTORIAL = "tutorial"  # the tutorial's view: its profile unless one is named
MAX_DECODE_SWEEP_ROWS = 1_000_000  # refused before any work: ~0.4 GB of DataFrame, ~4 s
# §1-only assumptions: the warning when one is given ("<name> is not used …: <why>")
IGNORED_NOTES = {
    "activation_fraction": MessageKind(
        "decode_ignores_activation_fraction",
        "activation_fraction is not used by the LLM serving model: it moves weights and KV "
        "cache; activations are neglected",
    ),
    "flop_convention": MessageKind(
        "decode_ignores_flop_convention",
        "flop_convention is not used by the LLM serving model: its FLOPs come from the shapes "
        "at 2 per multiply-accumulate",
    ),
}
IGNORED_ASSUMPTIONS = {name: k.template.split(": ", 1)[1] for name, k in IGNORED_NOTES.items()}
BEYOND_CONTEXT = MessageKind(
    "context_beyond_maximum",
    "context of {context} tokens is beyond {model}'s catalogued maximum of {maximum}",
)
KINDS = (*IGNORED_NOTES.values(), BEYOND_CONTEXT)


@dataclass(frozen=True, slots=True)
class _Setup:
    """The checked arguments shared by every scenario of a call."""

    precision: str
    kv_precision: str
    assumptions: Assumptions
    notes: tuple[Message, ...]  # warnings that apply to every scenario


def _setup(d: Deployment | Deployments, precision: str) -> _Setup:
    """The call-wide arguments: the deployment's assumptions (its profile's when None) with its
    overrides, on one device (the tutorial's view splits nothing)."""
    if (d.tp != 1 and d.tp != (1,)) or (d.pp != 1 and d.pp != (1,)):
        raise ValueError(
            "tp and pp must be 1: the tutorial's LLM view runs on one accelerator (the serving "
            "model, engine.serve, splits a model over several)"
        )
    precision = check_precision(precision)
    overrides = d.overrides_dict
    base = d.assumptions if d.assumptions is not None else get_profile(d.profile).assumptions
    a = make_assumptions(base, **overrides)  # checks the ignored ones' values too
    notes = tuple(
        IGNORED_NOTES[name]() for name in IGNORED_ASSUMPTIONS if overrides.get(name) is not None
    )
    return _Setup(
        precision=precision,
        kv_precision=check_kv_precision(d.kv_precision, precision),
        assumptions=a,
        notes=notes,
    )


def _llm_ids(catalog: Catalog | None) -> str:
    try:
        models = (catalog or default_catalog()).models.values()
    except CatalogError:
        return "none (the catalogue did not load)"
    return ", ".join(m.id for m in models if m.is_decoder_llm) or "none in the catalogue"


def resolve_llm(model: str | ModelSpec, catalog: Catalog | None = None) -> ModelSpec:
    """The ModelSpec of a decoder LLM, or ValueError saying which catalogue models work."""
    spec = resolve_model(model, catalog)
    if not spec.is_decoder_llm:
        raise ValueError(
            f"{spec.id} is not a decoder LLM (needs task 'llm' with hidden, heads and "
            f"kv_heads); decoder LLMs in the catalogue: {_llm_ids(catalog)}"
        )
    return spec


def check_prompt(prompt: object, context: int) -> int:
    """The prompt length S (the context when None); at most the context it precedes."""
    if prompt is None:
        return context
    tokens = check_whole(prompt, "prompt", high=MAX_TOKENS)
    if tokens > context:
        raise ValueError(
            f"prompt of {tokens:,} tokens is longer than the context of {context:,}: the decode "
            "step at context L follows a prompt of at most L tokens"
        )
    return tokens


def _warnings(m: ModelSpec, hw: HardwareSpec, setup: _Setup, context: int) -> tuple[Message, ...]:
    used = hw.peak_for(setup.precision)[1]
    found = [fallback_warning(hw, setup.precision, used)]
    if m.context_length and context > m.context_length:
        found.append(
            BEYOND_CONTEXT(context=f"{context:,}", model=m.id, maximum=f"{m.context_length:,}")
        )
    return tuple(w for w in (*found, *setup.notes) if w)


def _kernel_inputs(ms, hs, setup: _Setup, per_model, per_hw) -> dict:
    """llm_terms' model and hardware arguments; per_model/per_hw shape a list of values."""
    a = setup.assumptions
    shapes = [llm.kv_shapes(m) for m in ms]
    kv_bytes = BYTES_PER_PARAM[setup.kv_precision]
    terms = {
        "params": [m.params for m in ms],
        "params_active": [m.params_active for m in ms],
        "heads": [float(m.heads) for m in ms],
        "head_dim": [llm.head_dim_of(m) for m in ms],
        "kv_layer": [kv_bytes_per_token_layer(s, kv_bytes)[0] for s in shapes],
        "bytes_per_param": [BYTES_PER_PARAM[setup.precision] for _ in ms],
        "context_limit": [float(llm.context_limit(m)) for m in ms],
    }
    stacked = Shapes.stack(shapes).map(lambda v: per_model(list(v)))
    layers = per_model([float(m.layers) for m in ms])
    return {
        "model": {k: per_model(v) for k, v in terms.items()} | {"shapes": stacked},
        "peak": per_hw([h.peak_for(setup.precision)[0] for h in hs]),
        "bandwidth": per_hw([h.memory_bandwidth_bytes_per_s for h in hs]),
        "capacity": per_hw([h.memory_capacity_bytes for h in hs]),
        "efficiency": a.efficiency,
        "bandwidth_efficiency": a.bandwidth_efficiency,
        "memory_reserve": a.memory_reserve,
        "overhead_s": per_hw([dispatch_s(h, a) for h in hs]) + layers * a.layer_overhead_s,
        "tdp_w": per_hw([h.tdp_w for h in hs]),
    }


def _scalars(terms: dict) -> dict:
    return {k: np.asarray(v).item() for k, v in terms.items()}


def decode(
    deployment: Deployment | str | ModelSpec | None = None,
    hardware: str | HardwareSpec | None = None,
    /,
    batch_size: int | None = None,
    context: int | None = None,
    *,
    prompt: int | None = None,
    **fields: object,
) -> llm.DecodeResult:
    """The tutorial's LLM decode view: one decode step (TPOT) and the prefill (TTFT) of a
    decoder LLM on one accelerator, the whole model as one roofline point (`engine.serve` is
    the serving model).

    Args:
        deployment: a Deployment on one device (its own profile: the serving default,
            DEFAULT_PROFILE, unless it names one), or (the keyword form) the model, a catalogue
            id ("Llama-3.1-8B") or spec, with the accelerator second ("A100") and the
            Deployment's other fields as keywords: precision (weights; picks the peak),
            kv_precision (the KV cache's; None: the same), profile (here the tutorial's by
            default) or assumptions,
            catalog, assumptions by user name (activation_fraction and flop_convention are not
            used: giving one adds a warning).
        batch_size: concurrent sequences B (1 to MAX_BATCH, engine/checks.py).
        context: tokens in each sequence's KV cache at the decode step (1 to MAX_CONTEXT).
        prompt: prompt tokens S for the TTFT (1 to context); the context when None.

    Returns:
        A DecodeResult; `.as_dict()` is the CLI's JSON object.
    """
    if not isinstance(deployment, Deployment):
        fields.setdefault("profile", TUTORIAL)
    (dep,) = bind((deployment, hardware), fields, Deployment)
    if dep is None or batch_size is None or context is None:
        raise ValueError("decode: give model, hardware, batch_size and context")
    m, hw = resolve_llm(dep.model, dep.catalog), resolve_hardware(dep.hardware, dep.catalog)
    batch = check_whole(batch_size, "batch_size", high=MAX_BATCH)
    ctx = check_whole(context, "context", high=MAX_TOKENS)
    tokens = check_prompt(prompt, ctx)
    setup = _setup(dep, dep.precision)
    return _decode_specs(m=m, hw=hw, batch=batch, ctx=ctx, tokens=tokens, setup=setup)


def _decode_specs(m, hw, batch: int, ctx: int, tokens: int, setup: _Setup) -> llm.DecodeResult:
    """`decode` for resolved, checked arguments."""
    inputs = _kernel_inputs(ms=[m], hs=[hw], setup=setup, per_model=_first, per_hw=_first)
    t = llm.llm_terms(**inputs, batch=batch, context=ctx, prompt=tokens)
    phases = {p: llm.PhaseCost(**_scalars(t.pop(p))) for p in PHASES}
    values = _scalars(t)
    for name in ("max_batch_at_context", "max_context_at_batch"):
        values[name] = int(values[name])
    a = setup.assumptions
    return llm.DecodeResult(
        model=m.id,
        hardware=hw.id,
        batch_size=batch,
        context=ctx,
        prompt=tokens,
        precision=setup.precision,
        kv_precision=setup.kv_precision,
        peak_precision=hw.peak_for(setup.precision)[1],
        **values,
        **phases,
        assumptions=replace(a, dispatch_overhead_s=dispatch_s(hw, a)),
        warnings=_warnings(m=m, hw=hw, setup=setup, context=ctx),
    )


def _first(values: list):
    return values[0]


def _per_model(values: list) -> np.ndarray:
    return np.asarray(values, dtype=float)[:, None, None, None]


def _per_hw(values: list) -> np.ndarray:
    return np.asarray(values, dtype=float)[None, :, None, None]


def decode_sweep(
    deployments: Deployments | str | ModelSpec | list | None = None,
    hardware: str | HardwareSpec | list | None = None,
    /,
    batch_sizes: object = None,
    contexts: object = None,
    *,
    prompt: int | None = None,
    **fields: object,
) -> pd.DataFrame:
    """`decode` (the tutorial's LLM decode view) for every model × hardware × context × batch,
    in one vectorised pass.

    Args:
        deployments: a Deployments grid (one precision, tp = pp = 1), or (the keyword form) the
            models (ids or specs; one or a list; decoder LLMs) with the accelerators second and
            the other fields as keywords, as for `decode` (`precision`: one).
        batch_sizes, contexts: whole numbers (1 to MAX_BATCH; 1 to MAX_CONTEXT tokens).
        prompt: one prompt length S for every row (at most the smallest context); None: each
            row's context.

    Returns:
        At most MAX_DECODE_SWEEP_ROWS rows ordered model, hardware, context, batch; columns as
        `DecodeResult.as_dict` with the assumptions flattened, warnings a tuple of Messages.
    """
    if not isinstance(deployments, Deployments):
        fields.setdefault("profile", TUTORIAL)
    (grid,) = bind((deployments, hardware), fields, Deployments)
    if grid is None or batch_sizes is None or contexts is None:
        raise ValueError("decode_sweep: give models, hardware, batch_sizes and contexts")
    if len(grid.precisions) != 1:
        raise ValueError("decode_sweep: give one precision (a sweep per precision)")
    ms, hs, batches, ctxs = _grid(grid, batch_sizes=batch_sizes, contexts=contexts)
    if prompt is not None:
        check_prompt(prompt, int(ctxs.min()))
    setup = _setup(grid, grid.precisions[0])
    ctx_axis = ctxs[None, None, :, None]
    prompt_axis = ctx_axis if prompt is None else float(prompt)
    inputs = _kernel_inputs(ms=ms, hs=hs, setup=setup, per_model=_per_model, per_hw=_per_hw)
    t = llm.llm_terms(
        **inputs, batch=batches[None, None, None, :], context=ctx_axis, prompt=prompt_axis
    )
    return _frame(
        t=t, ms=ms, hs=hs, batches=batches, ctxs=ctxs, prompt_axis=prompt_axis, setup=setup
    )


def _grid(grid: Deployments, batch_sizes, contexts) -> tuple:
    """The checked axes of a sweep; over MAX_DECODE_SWEEP_ROWS is refused before any work."""
    ms, hs = grid.models, grid.hardware
    bs, cs = as_list(batch_sizes, "batch_sizes"), as_list(contexts, "contexts")
    rows, limit = len(ms) * len(hs) * len(bs) * len(cs), MAX_DECODE_SWEEP_ROWS
    if rows > limit:
        raise ValueError(f"sweep of {rows:,} scenarios is over the limit of {limit:,}")
    return (
        [resolve_llm(m, grid.catalog) for m in ms],
        [resolve_hardware(h, grid.catalog) for h in hs],
        check_whole_numbers(bs, "batch_size", high=MAX_BATCH),
        check_whole_numbers(cs, "context", high=MAX_TOKENS),
    )


def _frame(t: dict, ms, hs, batches, ctxs, prompt_axis, setup: _Setup) -> pd.DataFrame:
    """The sweep's DataFrame from the broadcast kernel terms, one row per scenario."""
    shape = (len(ms), len(hs), len(ctxs), len(batches))

    def col(x) -> np.ndarray:
        return np.broadcast_to(x, shape).ravel()

    mi, hi, ci, bi = (ix.ravel() for ix in np.indices(shape))
    flat = {k: col(v) for k, v in t.items() if k not in PHASES}
    flat |= {p: {k: col(v) for k, v in t[p].items()} for p in PHASES}
    flat |= {"batch_size": batches[bi], "prompt": col(prompt_axis)}
    warns = [
        _warnings(m=m, hw=h, setup=setup, context=int(c)) for m in ms for h in hs for c in ctxs
    ]
    shown = llm.display_assumptions(setup.assumptions)
    dispatch_ms = _per_hw([dispatch_s(h, setup.assumptions) for h in hs]) * 1e3
    shown["dispatch_overhead_ms"] = col(dispatch_ms)
    used = [h.peak_for(setup.precision)[1] for h in hs]
    ids = {
        "model": categorical(mi, [m.id for m in ms]),
        "hardware": categorical(hi, [h.id for h in hs]),
        "batch_size": batches.astype(np.int64)[bi],
        "context": ctxs.astype(np.int64)[ci],
        "prompt": flat["prompt"].astype(np.int64),
        "precision": setup.precision,
        "kv_precision": setup.kv_precision,
        "peak_precision": categorical(hi, used),
    }
    warnings = categorical((mi * len(hs) + hi) * len(ctxs) + ci, warns)
    import pandas as pd

    return pd.DataFrame(ids | llm.display_metrics(flat) | shown | {"warnings": warnings})
