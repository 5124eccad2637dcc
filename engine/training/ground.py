"""Where a training prediction stands: the best MFU published for its GPU generation, the
ceiling a search result is checked against (docs/model.md, "Training: published ceilings and
bands").

**Ceilings.** The best 16-bit training MFU published per GPU generation (PaLM's convention,
recomputation not counted), from sources that are not held back:

- Ampere: 64.2 %, MosaicML's MPT-7B on 8 A100 80GB (BF16, FSDP, sequence 2,048, no
  activation checkpointing): 64.23 % in llm-foundry's benchmark tables
  (github.com/mosaicml/llm-foundry/blob/main/scripts/train/benchmarking/README.md, "A100 80GB",
  2023; PaLM's FLOPs against 312 TFLOP/s); torchtitan's Llama 3 8B with FSDP on 64 A100 58.2 %
  (github.com/pytorch/torchtitan/blob/main/docs/performance.md, 2024); Korthikanti et al. 2022
  report 54.2 % for a 530B GPT on 2,240 A100.
- Hopper: 46.4 %, MosaicML's MPT-7B on 8 H100 80GB (BF16, FSDP, sequence 2,048, no
  activation checkpointing; their MFU counts attention as PaLM does, against 989 TFLOP/s):
  46.44 % in the same tables ("H100 80GB BF16"); their other H100 rows are 26-46 %,
  torchtitan's Llama 3.1 8B on 8 or 128 H100 33-39 %
  (github.com/pytorch/torchtitan/blob/main/docs/performance.md, 2025). The Llama 3
  paper's training results are kept out of the repository to judge the model out of sample.
- Blackwell: none found; Hopper's is used and said so.

And the best fp8 MFU (the same FLOPs against the fp8 dense peak, 1,979 TFLOP/s on H100), from
MLPerf Training's H100 runs of NVIDIA's NeMo (data/measurements/training/
mlperf-training-hopper-fp8.csv, the step time of its logs): Hopper 48.9 %, Nebius's Llama 3.1
405B on 512 H200 (v5.0: 1,152 sequences of 8,192 in 50.014 s, 368.5 tokens/s per GPU at 2.625
TFLOP per token; the H200's fp8 peak is the H100's); NVIDIA's GPT-3 175B on 256 H100 reaches
48.4 % (v4.1). None elsewhere (Blackwell borrows Hopper's).

A layout predicted above its generation's ceiling is flagged (`above_published_mfu`, and a
warning): no published run has reached it, so it is an upper bound, not a plan.

The public checks and the bands built on them: engine/accuracy/training_bands.py.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.report.messages import Message, MessageKind

GENERATIONS = {  # catalogue id -> GPU generation (NVIDIA's architecture names)
    "A100": "Ampere",
    "A100-PCIe": "Ampere",
    "H100": "Hopper",
    "H100-PCIe": "Hopper",
    "H100-NVL": "Hopper",
    "H200": "Hopper",
    "B200": "Blackwell",
    "B300": "Blackwell",
    "GB200": "Blackwell",
    "GB300": "Blackwell",
}


@dataclass(frozen=True, slots=True)
class Ceiling:
    """The best published 16-bit training MFU of a generation and where it is published."""

    mfu: float
    source: str


CEILINGS = {
    "Ampere": Ceiling(0.6423, "llm-foundry benchmarking/README.md, 2023"),  # MPT-7B, 8 A100
    "Hopper": Ceiling(0.4644, "llm-foundry benchmarking/README.md, 2023"),  # MPT-7B, 8 H100
}
FP8_CEILINGS = {  # against the fp8 dense peak
    "Hopper": Ceiling(0.4889, "MLPerf Training v5.0, Llama 3.1 405B on 512 H200"),
}
FALLBACK = {"Blackwell": "Hopper"}  # no published figure: the nearest older generation's

ABOVE_CEILING = MessageKind(
    "mfu_above_published",
    "MFU {mfu} is above the best published {generation} 16-bit training MFU, {ceiling} "
    "({source}): no public run has reached it; read it as an upper bound",
)
ABOVE_FP8_CEILING = MessageKind(
    "mfu_above_published_fp8",
    "MFU {mfu} is above the best published {generation} fp8 training MFU against the fp8 peak, "
    "{ceiling} ({source}): no public run has reached it; read it as an upper bound",
)
CEILING_BORROWED = MessageKind(
    "mfu_ceiling_borrowed",
    "no {generation} training MFU is published: the {used} ceiling ({ceiling}) is used",
)


def generation_of(hw_id: str) -> str | None:
    """The GPU generation of a catalogue accelerator (None: not one of the three)."""
    return GENERATIONS.get(hw_id)


def ceiling_for(hw_id: str, precision: str) -> tuple[Ceiling | None, str | None, str | None]:
    """(the ceiling, the generation, the generation whose ceiling it is) of a run on `hw_id` at
    `precision` (fp8: the fp8 table; else the 16-bit one); (None, ...) for an accelerator
    outside the three generations."""
    gen = generation_of(hw_id)
    if gen is None:
        return None, gen, None
    table = FP8_CEILINGS if precision == "fp8" else CEILINGS
    used = gen if gen in table else FALLBACK.get(gen)
    return (table.get(used) if used else None), gen, used


def ceiling_messages(hw_id: str, precision: str, mfu: float) -> list[Message]:
    """The warnings of one result: above its generation's ceiling (and whose ceiling)."""
    ceiling, gen, used = ceiling_for(hw_id, precision)
    if ceiling is None or not mfu > ceiling.mfu:
        return []
    above = ABOVE_FP8_CEILING if precision == "fp8" else ABOVE_CEILING
    out = [
        above(mfu=f"{mfu:.1%}", generation=gen, ceiling=f"{ceiling.mfu:.1%}", source=ceiling.source)
    ]
    if used != gen:
        out.append(CEILING_BORROWED(generation=gen, used=used, ceiling=f"{ceiling.mfu:.1%}"))
    return out
