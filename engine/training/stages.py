"""Layers per pipeline stage, as Megatron-LM and torchtitan lay them out (docs/model.md,
"Pipeline layouts").

A pipeline of pp stages holds the model's L layers; the first stage also runs the embedding and
the last the final norm, the LM head and the loss. Three kinds of stage are told apart, since
every stage of a kind does the same work and holds the same weights:

- the first stage: f layers and the embedding;
- the middle stages (pp − 2 of them): the fullest holds M layers;
- the last stage: l layers, the final norm and the LM head.

Given f and l (Megatron-LM's `--decoder-first-pipeline-num-layers` and
`--decoder-last-pipeline-num-layers`; Llama 3 405B put 7 of its 126 layers on each end stage of
16, Llama Team 2024 §3.3.2), the middle stages share the rest, balanced: M = ⌈(L − f − l)/(pp −
2)⌉. Given one of them, the other stages share the rest and the other end gets the balanced
share rounded down. Given neither, the layers are balanced with remainders: ⌈L/pp⌉ on the
fullest stage, and the stages one short are the end stages first (they carry the embedding and
the head), so Qwen3-235B's 94 layers on 8 stages are 11 + 6 × 12 + 11.

With vp virtual stages (the interleaved schedule) each stage's layers are split into vp chunks,
uneven when they do not divide (126 layers on 8 × 8 virtual stages: chunks of 2 and 1); every
chunk needs one layer at least, except that the end stages' first and last chunks may hold the
embedding or the head alone (Llama 3 405B: "the first model chunk on the first stage has only
the embedding"), so a middle stage needs vp layers and an end stage vp − 1.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np


class StageLayers(NamedTuple):
    """Layers on the first stage, the fullest middle stage and the last stage (arrays; with
    pp = 1 all three are the one stage's L layers; with pp = 2 there is no middle stage and
    `middle` is 0)."""

    first: np.ndarray
    middle: np.ndarray
    last: np.ndarray

    @property
    def fewest(self) -> np.ndarray:
        """The fewest layers any stage holds (the middle ones only when there are some)."""
        return np.minimum(
            np.minimum(self.first, self.last), np.where(self.middle > 0, self.middle, np.inf)
        )


def stage_layers(layers, pp, first, last) -> StageLayers:
    """Layers per stage kind. `first`, `last`: the layers given for the end stages (0: not
    given, balanced). Impossible requests (more layers than the model has) give counts that
    `layout_ok` refuses; the arithmetic stays finite."""
    L = np.asarray(layers, dtype=float)
    pp = np.asarray(pp, dtype=float)
    first, last = np.asarray(first, dtype=float), np.asarray(last, dtype=float)
    full = np.ceil(L / pp)
    short = pp * full - L  # stages one layer short of `full`: the ends first
    bal_first = full - (short >= 1)
    bal_last = full - (short >= 2)
    gave_f, gave_l = first > 0, last > 0
    # One end given: the other pp − 1 stages share the rest; the other end rounded down.
    rest_f = np.maximum(L - first, 0.0)
    rest_l = np.maximum(L - last, 0.0)
    others = np.maximum(pp - 1.0, 1.0)
    f = np.where(gave_f, first, np.where(gave_l, np.floor(rest_l / others), bal_first))
    lst = np.where(gave_l, last, np.where(gave_f, np.floor(rest_f / others), bal_last))
    middles = np.maximum(pp - 2.0, 1.0)
    between = np.maximum(L - f - lst, 0.0)
    # Balanced, the ends short first: a middle stage is always among the full ones.
    middle = np.where(pp > 2, np.where(gave_f | gave_l, np.ceil(between / middles), full), 0.0)
    one = pp == 1
    return StageLayers(
        first=np.where(one, L, f), middle=np.where(one, L, middle), last=np.where(one, L, lst)
    )


def layout_ok(layers, pp, vp, first, last) -> np.ndarray:
    """The end-stage counts and virtual stages describe a pipeline: given counts need pp > 1;
    the stages hold exactly the L layers (with pp = 2 the two ends hold them all; with more,
    every middle stage one at least); a middle stage holds vp layers at least (one per chunk),
    an end stage vp − 1 (its embedding or head a chunk of its own)."""
    L = np.asarray(layers, dtype=float)
    pp = np.asarray(pp, dtype=float)
    first, last = np.asarray(first, dtype=float), np.asarray(last, dtype=float)
    given = (first > 0) | (last > 0)
    st = stage_layers(layers=L, pp=pp, first=first, last=last)
    middles = np.maximum(pp - 2.0, 0.0)
    ends = st.first + st.last
    holds = (ends + middles <= L) & (ends + middles * st.middle >= L)
    shape_ok = np.where(given, (pp > 1) & holds, True)
    vp = np.maximum(np.asarray(vp, dtype=float), 1.0)
    ends_ok = (np.minimum(st.first, st.last) >= np.maximum(vp - 1.0, 1.0)) & np.where(
        pp > 2, st.middle >= vp, True
    )
    return shape_ok & np.where(pp > 1, ends_ok, True)


def in_flight(pp, vp, m, stage) -> np.ndarray:
    """Micro-batch chunks of activations stage `stage` (0-based) holds at its peak: 1F1B
    min(m, pp − stage); interleaved (vp chunks per stage) Megatron-LM's warm-up plus one,
    min(m·vp, 2(pp − stage − 1) + (vp − 1)·pp + 1), each chunk 1/vp of the stage's layers."""
    pp, vp, m, stage = (np.asarray(x, dtype=float) for x in (pp, vp, m, stage))
    plain = np.minimum(m, np.maximum(pp - stage, 1.0))
    warm = 2.0 * (pp - stage - 1.0) + (vp - 1.0) * pp + 1.0
    interleaved = np.minimum(m * vp, np.maximum(warm, 1.0))
    return np.where(vp > 1, interleaved, plain)
