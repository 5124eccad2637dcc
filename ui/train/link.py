"""The training planner's share link: every input declared once (ui.links.params.Link).

Link parameters, named as the `train-search` CLI's flags: model (a catalogue LLM, `config.json`
with `model_config=`, or `gpt` with `gpt_shape=L,H,A[,V]`: layers, hidden, heads and the
vocabulary of a Megatron/GPT-3-style model), hardware, gpus, global_batch_size, seq_len,
precision (bf16, fp16, fp8), fp8_recipe (delayed, current, blockwise, mxfp8) and
fp8_param_gather (on: the weights kept and all-gathered in fp8), both read with precision fp8
only, attention (flash, unfused), profile (a training profile); the search's values to try:
tp, pp, cp, vp, ep, micro_batch_size (comma lists or ranges), etp (the routed experts' tensor
parallelism, a list or range; absent: each layout's tp), zero and recompute (lists), and
recompute_modules (what the selective layouts run again: a list of Megatron-Core's
--recompute-modules, default core_attn); rank_by (tokens_per_s, mfu, cost), token_budget
(tokens), price_per_gpu_hour (USD; absent: the catalogue's list price); gpus_curve (the GPU
counts of the scaling curves), rejected (on: list the rejected configurations too), pick (the
rank of the configuration shown in detail); the footprint section's grid, carbon_g_per_kwh,
pue, wue_l_per_kwh, carbon_price, unit_price_usd, years, infrastructure_multiplier,
maintenance_per_year and electricity_usd_per_kwh (ui/widgets/footprint.py); custom_hw,
custom_model. Model: docs/model.md, "Training step".
"""

from __future__ import annotations

import engine
from ui.links import assumptions
from ui.links import link_params as lp
from ui.links.params import (
    Link,
    Param,
    ParamError,
    choice,
    listing,
    number,
    whole_ranges,
    write_list,
    write_number,
    write_ranges,
)
from ui.train.dse_link import pareto_params, reliability_params
from ui.widgets import footprint
from ui.widgets import model_config as mc
from ui.words.i18n import N_, _, ngettext

PAGE = "train"
GPT_ID = "gpt"  # the model picker's entry for GPT shapes (and the link's `model=gpt`)
GPT_NAME = N_("GPT-style model by its shapes (L, H, A[, V])")  # translated where shown
PRECISIONS = ("bf16", "fp16", "fp8")  # the training model's
ATTENTION = ("flash", "unfused")
RECIPE_WORDS = {  # engine.FP8_RECIPES as shown (engine/training/numerics.py)
    "delayed": N_("tensor-wise, delayed scaling (Transformer Engine's default)"),
    "current": N_("tensor-wise, current scaling"),
    "blockwise": N_("block-wise (1×128 activations, 128×128 weights)"),
    "mxfp8": N_("MXFP8 (1×32 blocks; Blackwell, CDNA4)"),
}
ATTENTION_WORDS = {"flash": N_("FlashAttention"), "unfused": N_("unfused attention")}  # shown
RECOMPUTE = ("none", "selective", "full")
RECOMPUTE_WORDS = {  # a configuration's recomputation, as shown
    "none": N_("no recomputation"),
    "selective": N_("selective recomputation"),
    "full": N_("full recomputation"),
}
MODULE_WORDS = {  # engine.RECOMPUTE_MODULES (Megatron-Core's names): what each runs again
    "core_attn": N_("the attention core"),
    "moe_act": N_("the routed experts' activation"),
    "layernorm": N_("the norms before attention and the MLP"),
    "mla_up_proj": N_("MLA's up-projections (DeepSeek)"),
    "mlp": N_("the dense MLP"),
    "moe": N_("the whole MoE layer, its all-to-alls too"),
    "shared_experts": N_("the shared experts"),
}
ZERO = ("0", "1", "2", "3")
RANKS = {"tokens_per_s": N_("tokens/s (highest first)"), "mfu": N_("MFU (highest first)")}
RANKS["cost"] = N_("cost to the token budget (lowest first)")
MAX_GPUS = 1_000_000
MAX_LIST = 16  # values per search dimension
MAX_CURVE = 10  # GPU counts on the scaling curves
MAX_PICK = 10_000
DEFAULTS = {"model": "Llama-3.1-70B", "hardware": "H100", "gpus": 64, "global_batch_size": 512}
DEFAULTS |= {"seq_len": 8192, "gpt_shape": (96, 12288, 96, 51_200)}
DIMENSIONS = {  # name: (label, translated where shown; default values)
    "tp": (N_("tp (tensor parallel, with sequence parallelism)"), [1, 2, 4, 8]),
    "pp": (N_("pp (pipeline stages)"), [1, 2, 4, 8, 16]),
    "cp": (N_("cp (context parallel)"), [1]),
    "vp": (N_("vp (virtual stages per pipeline stage)"), [1, 2]),
    "ep": (N_("ep (expert parallel, MoE)"), [1]),
    "micro_batch_size": (N_("Micro-batch sizes (sequences)"), [1, 2, 4]),
}
DEFAULT_CURVE = [8, 16, 32, 64, 128, 256, 512]


def read_on_off(text: str) -> bool:
    word = text.strip().lower()
    if word not in ("on", "off"):
        raise ParamError(_("{value} is not on or off").format(value=repr(text[:20])))
    return word == "on"


def read_gpt_shape(text: str) -> tuple[int, ...]:
    """`L,H,A[,V]`: layers, hidden, heads and the vocabulary (51,200 if left out), checked by
    the engine's GPT builder (H must divide by A)."""
    parts = [p.strip() for p in text.split(",")]
    if len(parts) not in (3, 4) or not all(p.isdigit() for p in parts):
        raise ParamError(
            _("{value}: write LAYERS,HIDDEN,HEADS[,VOCAB] (e.g. 96,12288,96)").format(
                value=repr(text[:40])
            )
        )
    layers, hidden, heads, *vocab = (int(p) for p in parts)
    shape = (layers, hidden, heads, vocab[0] if vocab else 51_200)
    try:
        engine.gpt_architecture(layers=layers, hidden=hidden, heads=heads, vocab=shape[3])
    except ValueError as exc:
        raise ParamError(str(exc)[:200]) from None
    return shape


def pick_note(pick: int, ranked: int) -> str | None:
    """Said beside the 'show in detail' field when its rank is past the last configuration
    that fits (the range of `pick` is known only once the search has run); None otherwise."""
    if ranked < 1 or pick <= ranked:
        return None
    return ngettext(
        "Rank {pick} is past the only configuration that fits: showing rank {ranked}.",
        "Rank {pick} is past the {ranked} configurations that fit: showing the last, "
        "rank {ranked}.",
        ranked,
    ).format(pick=f"{pick:,}", ranked=f"{ranked:,}")


def read_etp(text: str) -> list[int] | None:
    """The experts' tensor parallelism to try: whole numbers or ranges, or blank (None: each
    layout's tp, Megatron-Core's default)."""
    return _ranges(engine.MAX_DEGREE)(text) if text.strip() else None


def write_etp(values) -> str:
    return "" if values is None else write_ranges(values)


def write_gpt_shape(shape) -> str:
    return ",".join(str(int(v)) for v in shape)


def _ranges(hi: int, max_items: int = MAX_LIST):
    return whole_ranges(1, hi, max_items=max_items)


def _chosen(name: str, values: tuple, default: list) -> Param:
    """A search dimension chosen from a fixed list (any of its values, several at once)."""
    return Param(
        name=name,
        read=listing(choice(values), max_items=len(values)),
        write=write_list,
        default=default,
    )


def _chosen_params() -> list[Param]:
    """The search's values that are not counts: etp (a count, or blank), then the ZeRO
    stages, recomputation modes, pipeline schedules, context-parallel exchanges and recompute
    modules to try."""
    return [
        Param(name="etp", read=read_etp, write=write_etp, widget="text"),
        _chosen("zero", ZERO, ["0", "1"]),
        _chosen("recompute", RECOMPUTE, [*RECOMPUTE]),
        _chosen("pp_schedule", engine.PP_SCHEDULES, ["1f1b"]),
        _chosen("cp_comm_type", engine.CP_COMM_TYPES, ["p2p"]),
        _chosen("recompute_modules", engine.RECOMPUTE_MODULES, ["core_attn"]),
    ]


def declare(cat: engine.Catalog) -> Link:
    """Every link parameter of the page, in the order the link writes them."""
    dims = [
        Param(name=name, read=_ranges(top), write=write_ranges, default=default, widget="text")
        for (name, (_, default)), top in zip(
            DIMENSIONS.items(), (*(engine.MAX_DEGREE,) * 5, engine.MAX_BATCH), strict=True
        )
    ]
    return Link(
        PAGE,
        [
            Param("model", mc.llm_reader(cat, (GPT_ID,)), default=DEFAULTS["model"]),
            mc.param(),
            Param(
                name="gpt_shape",
                read=read_gpt_shape,
                write=write_gpt_shape,
                default=DEFAULTS["gpt_shape"],
                widget="text",
            ),
            lp.hardware(cat, DEFAULTS["hardware"]),
            Param(
                name="gpus",
                read=number(1, MAX_GPUS, whole=True),
                write=write_number,
                default=DEFAULTS["gpus"],
            ),
            Param(
                name="global_batch_size",
                read=number(1, engine.MAX_BATCH * 1000, whole=True),
                write=write_number,
                default=DEFAULTS["global_batch_size"],
            ),
            Param(
                name="seq_len",
                read=number(1, engine.MAX_TOKENS, whole=True),
                write=write_number,
                default=8192,
            ),
            Param("precision", choice(PRECISIONS), default="bf16"),
            Param("fp8_recipe", choice(engine.FP8_RECIPES), default="delayed"),
            Param(
                name="fp8_param_gather",
                read=read_on_off,
                write=lambda on: "on" if on else "off",
                default=False,
            ),
            Param("attention", choice(ATTENTION), default="flash"),
            Param("profile", choice(engine.training_profile_names()), default="megatron"),
            *(assumptions.param(name) for name in engine.TRAINING_NAMES),  # blank: the profile's
            *dims,
            *_chosen_params(),
            Param("rank_by", choice(tuple(RANKS)), default="tokens_per_s"),
            Param(name="token_budget", read=number(1.0, 1e17), write=write_number, default=1e12),
            Param("price_per_gpu_hour", number(0.01, 999_999.0), write_number),
            Param(
                name="gpus_curve",
                read=_ranges(MAX_GPUS, MAX_CURVE),
                write=write_ranges,
                default=DEFAULT_CURVE,
                widget="text",
            ),
            Param(
                name="rejected",
                read=read_on_off,
                write=lambda on: "on" if on else "off",
                default=False,
            ),
            Param(name="pick", read=number(1, MAX_PICK, whole=True), write=write_number, default=1),
            *footprint.params(),
            *lp.custom_specs(),
            *pareto_params(),  # ui/train/dse_link.py
            *reliability_params(),
        ],
    )
