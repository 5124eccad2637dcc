"""How a training run's GEMMs hold their numbers: 16-bit, or fp8 under a scaling recipe.

An fp8 GEMM reads 8-bit operands, so before each one the 16-bit tensor it consumes is
quantised: a scale is chosen (from a history of the tensor's maxima, from its current maximum,
or per block) and the tensor is cast, once as it is laid out and once transposed, because the
backward pass multiplies it along the other dimension (Hopper's fp8 tensor cores take K-major
operands only). The forward pass quantises each GEMM's input and its weights; the backward pass
the gradient of its output (the weights' transposed copy is already made). Those casts are
memory-bound kernels of their own: per element they read the 16-bit value and write two 8-bit
copies, plus whatever the recipe adds. Transformer Engine fuses some casts into the norm or the
activation before a GEMM; that saving is not modelled, so the cast terms are an upper estimate
(documented in docs/model.md, "FP8 training").

What stays in 16 bits under every recipe: attention (FlashAttention's products on bf16), the
norms, the embedding lookup, the LM head (Megatron-LM's output layer and torchtitan's `output`
are not converted; Transformer Engine's recipes leave them to the framework) and an MoE
router (Megatron-LM computes it in fp32; taken at the 16-bit rate here). The
optimizer keeps fp32 master weights and moments as in 16-bit training.

Recipes (bytes moved per quantised element; a tensor of N elements costs N × bytes / HBM
bandwidth):

- `delayed`: tensor-wise scaling from a history of maxima (Transformer Engine's DelayedScaling,
  its default; Micikevicius et al. 2022, "FP8 Formats for Deep Learning"): the maximum is
  taken in the same pass as the cast. 2 read + 1 + 1 written = 4 bytes.
- `current`: tensor-wise scaling from the tensor's own maximum (Transformer Engine's
  Float8CurrentScaling, torchtitan's default "tensorwise"): a pass that reads the tensor to find
  its maximum, then the cast. 4 + 2 = 6 bytes. Its maxima are also reduced across the
  tensor-parallel group, a latency per tensor that is not modelled.
- `blockwise`: a scale per 1×128 tile of activations and per 128×128 block of weights, computed
  in the casting pass (DeepSeek-AI 2024, "DeepSeek-V3 Technical Report", §3.3): 4 bytes plus a
  4-byte scale per 128 elements for each copy (4 + 2·4/128); weights 4 + 2·4/128².
- `mxfp8`: the OCP microscaling format, an 8-bit power-of-two scale per 32 elements, which
  Blackwell's and CDNA4's tensor cores apply inside the GEMM (OCP Microscaling Formats
  specification v1.0, 2023): 4 + 2·1/32 bytes. Refused on accelerators without block-scaled
  tensor cores (those that list no MX peak).

`fp8_param_gather` (Megatron-LM's `--fp8-param-gather`, torchtitan's
`enable_fsdp_float8_all_gather`): the model's weights are kept in fp8 (the optimizer's fp32
master copy stays) and the data-parallel all-gathers of weights (ZeRO-1 and 2 after the
optimizer step, ZeRO-3 before every pass) move 1 byte per weight instead of 2. The gradients'
reductions stay 16-bit. The weights' casts before each GEMM are still priced (an upper estimate:
with the weights already in fp8 only their transposed copy is made).

The GEMMs themselves run at the accelerator's fp8 peak times the profile's GEMM efficiency
under every recipe; a block-scaled GEMM's own slowdown on Hopper (scales applied in the main
loop) is inside that efficiency, not a term of its own.
"""

from __future__ import annotations

from typing import NamedTuple

from engine.catalog.specs import BYTES_PER_PARAM, HardwareSpec
from engine.scenarios.training import DEFAULT_FP8_RECIPE, FP8_RECIPES


class Recipe(NamedTuple):
    """An fp8 scaling recipe: bytes moved per activation and per weight element quantised."""

    act_bytes: float
    weight_bytes: float
    needs_mx: bool = False  # block scaling inside the tensor cores (Blackwell, CDNA4)


CAST = 2.0 + 1.0 + 1.0  # read 16 bits; write the 8-bit copy and its transpose
AMAX_PASS = 2.0  # current scaling: the 16-bit tensor read once more to find its maximum
BLOCK_SCALES = 2.0 * 4.0  # an fp32 scale for each of the two copies, per block
MX_SCALES = 2.0 * 1.0  # an 8-bit (E8M0) scale for each of the two copies, per 32 elements
RECIPES = {
    "delayed": Recipe(act_bytes=CAST, weight_bytes=CAST),
    "current": Recipe(act_bytes=CAST + AMAX_PASS, weight_bytes=CAST + AMAX_PASS),
    "blockwise": Recipe(
        act_bytes=CAST + BLOCK_SCALES / 128.0, weight_bytes=CAST + BLOCK_SCALES / 128.0**2
    ),
    "mxfp8": Recipe(
        act_bytes=CAST + MX_SCALES / 32.0, weight_bytes=CAST + MX_SCALES / 32.0, needs_mx=True
    ),
}
PARAM_GATHER_BYTES = 1.0  # fp8_param_gather: the weights held and all-gathered in fp8
assert tuple(RECIPES) == FP8_RECIPES  # the run checks the names (engine/scenarios/training.py)


MASTER_BYTES = 4.0  # the optimizer's fp32 copy of each weight


class Numerics(NamedTuple):
    """What the training kernel reads of a run's number formats and attention kernel."""

    weight_bytes: float  # bytes per weight element a GEMM reads (1 for fp8, else 2)
    quant_act: float = 0.0  # bytes moved per activation element an fp8 GEMM quantises
    quant_weight: float = 0.0  # bytes moved per weight element quantised (per micro-batch)
    wide_gemms: bool = False  # the LM head and the router in 16 bits, the other GEMMs in fp8
    param_bytes: float = 2.0  # bytes per weight held and all-gathered (1: fp8_param_gather)
    unfused: bool = False  # attention as separate kernels, the scores through memory
    saved_bytes: float = 2.0  # per element of a GEMM's input kept for the backward pass
    grad_bytes: float = 2.0  # per gradient element held and reduced (`gradient_bytes`)
    moment_bytes: float = 4.0  # each of Adam's moments (`optimizer_moment_bytes`)
    masks: bool = True  # dropout's 1-byte masks kept for the backward pass (`dropout` above 0)
    moe_act_bytes: float = 2.0  # per element of an expert's SwiGLU input (`moe_act_input_bytes`)
    attn_out_bytes: float = 2.0  # per element of attention's output (`attention_output_bytes`)
    flex_dispatch: bool = False  # MoE dispatch de-duplicated per rank and node (`moe_dispatcher`)

    @property
    def optimizer_bytes(self) -> float:
        """Optimizer state per parameter: the fp32 master weight and Adam's two moments."""
        return MASTER_BYTES + 2.0 * self.moment_bytes


def numerics(
    precision: str,
    recipe: str | None,
    attention: str,
    hw: HardwareSpec,
    param_gather: bool = False,
    saved_bytes: float = 1.0,
) -> Numerics:
    """The kernel's view of a checked run's number formats: fp8 brings its recipe's casts, a
    16-bit LM head and router, and its GEMMs' inputs kept for the backward pass at
    `saved_bytes` an element (the `fp8_saved_bytes` assumption; 16-bit runs keep 2). The fields
    no format changes (gradients, Adam's moments, dropout's masks, the activations MoE and
    attention keep, the MoE dispatcher) keep their defaults here; the run's assumptions set them
    (engine/training/setup.py). ValueError for `mxfp8` on an accelerator without block-scaled
    tensor cores."""
    unfused = attention == "unfused"
    if precision != "fp8":
        return Numerics(weight_bytes=BYTES_PER_PARAM[precision], unfused=unfused)
    name = recipe or DEFAULT_FP8_RECIPE
    r = RECIPES[name]
    if r.needs_mx and "mxfp4" not in hw.fp4_peak_flop_per_s:
        raise ValueError(
            f"fp8_recipe {name}: {hw.id} has no block-scaled (MX) tensor cores; "
            "use delayed, current or blockwise"
        )
    return Numerics(
        weight_bytes=BYTES_PER_PARAM["fp8"],
        quant_act=r.act_bytes,
        quant_weight=r.weight_bytes,
        wide_gemms=True,
        param_bytes=PARAM_GATHER_BYTES if param_gather else BYTES_PER_PARAM["bf16"],
        unfused=unfused,
        saved_bytes=saved_bytes,
    )
