"""The LLM decode page's parameters, sweep and not-fit wording (page-specific builders).

The curves' sweep gives every row whose context holds the prompt this scenario's prompt, so
the table row of the scenario and the headline show the same TTFT; shorter curve contexts use
their own context as the prompt (a prompt cannot be longer than its context), and say so."""

from __future__ import annotations

import pandas as pd
import streamlit as st

import engine
from ui import explain
from ui.format import fmt, pct
from ui.llm_view import reserve_param
from ui.params import Param, choice, listing, number, write_list, write_number
from ui.widgets import EFFICIENCY_MIN, assumption_params, batch_param, batches_param

KV_CHOICES = ("same", "fp16", "bf16", "fp8", "int8", "int4")  # same: the weight precision
USED = ("efficiency", "layer_overhead_us", "dispatch_overhead_ms", "memory_reserve")
DEFAULT_CONTEXTS, DEFAULT_BATCHES = [1024, 4096, 16384, 65536], [2**k for k in range(9)]
TOKENS = number(1, engine.MAX_CONTEXT, whole=True)


def params(base, hardware_param) -> tuple[list[Param], Param, Param]:
    """(every link parameter of the page, the contexts parameter, the batches parameter)."""
    contexts_p = Param(
        "contexts", lambda t: sorted(listing(TOKENS, max_items=8)(t)), write_list, True
    )
    batches_p = batches_param(4096, ranges=True)
    out = [Param("model", choice((), canon=lambda t: engine.resolve_llm(t, base).id))]
    out += [hardware_param, batch_param(), Param("context", TOKENS), Param("prompt", TOKENS)]
    out += [Param("kv_precision", choice(KV_CHOICES)), contexts_p, batches_p]
    out += [Param("efficiency", number(EFFICIENCY_MIN, 1.0), write_number), reserve_param()]
    skip = ("efficiency", *engine.IGNORED_ASSUMPTIONS)
    out += [p for p in assumption_params() if p.name not in skip]
    return out, contexts_p, batches_p


def check_prompt(prompt: int, context: int) -> tuple[int, str | None]:
    """(the prompt used, an error to show): a prompt longer than the context is cut to it."""
    try:
        return engine.check_prompt(prompt, context), None
    except ValueError as exc:
        return context, f"{exc}. Showing a prompt of {context:,} tokens."


def sweep(model, hw, batches, contexts, prompt: int, opts: dict) -> tuple[pd.DataFrame, bool]:
    """The curves' rows (contexts × batches), and whether some rows use a shorter prompt."""
    long = [c for c in contexts if c >= prompt]
    short = [c for c in contexts if c < prompt]
    parts = [engine.decode_sweep(model, hw, batches, long, prompt=prompt, **opts)]
    if short:
        parts.insert(0, engine.decode_sweep(model, hw, batches, short, **opts))
    df = pd.concat(parts, ignore_index=True) if short else parts[0]
    return df, bool(short)


def table_note(shorter: bool, prompt: int) -> str:
    note = "The sweep adds this scenario's batch and context to the lists."
    if shorter:
        note += (
            f" TTFT uses the {prompt:,}-token prompt wherever the context holds it; shorter "
            "contexts use their own length as the prompt."
        )
    return note


def show_not_fit(r: dict, hw, hw_name: str) -> bool:
    """When weights + KV cache exceed the usable memory, say so first; True if it does not fit."""
    if r["fits_in_memory"]:
        return False
    st.error(
        f"**Does not fit.** Weights + KV cache need {fmt(r['memory_required_bytes'], 'B')}; "
        f"{hw_name} has {explain.capacity_text(hw)}, of which "
        f"{fmt(r['usable_memory_bytes'], 'B')} is usable after the "
        f"{pct(r['assumptions']['memory_reserve'])} reserve. Every figure below is "
        "**hypothetical** (as if it fitted): shard across devices, quantise, or shorten the "
        "context or the batch.",
        icon="🚫",
    )
    return True


def hypothetical(cards: list[tuple[str, str, str]], fits: bool) -> list[tuple[str, str, str]]:
    """The metric cards, their speed labels marked hypothetical when it does not fit."""
    if fits:
        return cards
    speed = ("TPOT", "Per user", "Aggregate", "TTFT")
    return [
        (f"{label} — hypothetical" if label.startswith(speed) else label, value, tip)
        for label, value, tip in cards
    ]


def memory_caption(r: dict, hw, split: str) -> str:
    return (
        f"Memory: {split}. Capacity {explain.capacity_text(hw)} as catalogued; usable "
        f"{fmt(r['usable_memory_bytes'], 'B')} after holding back "
        f"{pct(r['assumptions']['memory_reserve'])} (memory reserve)."
    )
