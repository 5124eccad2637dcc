"""Fixed English the engine and the shipped data files keep as plain text (not engine.Message):
what a profile file says of itself and of its scheduler, the KV-cache policies, what each
column of a measurements file holds, the assumptions' names and what an unset one stands for,
the grid profiles' site names.

Each text is marked here with `N_()` as the engine or the file writes it, so the catalogue
translates it; `said(text)` shows it in the reader's language, and any other text (a team's
own profile, a later wording) as written. tests/test_i18n_english.py checks that every text
the engine and the shipped files hold is marked here and translated, so a change on their side
fails there instead of showing English on a Chinese page.
"""

from __future__ import annotations

from ui.words.i18n import N_, _

PROFILES = (  # the shipped profiles' `description` and their [scheduler] `release`
    N_("The tutorial's defaults (efficiency 0.5, 10 us per layer, full bandwidth)"),
    N_("fitted from 'tutorial' on 57 measured rows"),
    N_("fitted from 'trtllm-0.6.1' on 112 measured rows"),
    N_("fitted from 'trtllm-1.0' on 9 measured rows"),
    N_("fitted on 22 measured training runs (megatron-2104.04473-training.csv)"),
    N_("fitted on 70 measured training runs (llm-foundry-h100-bf16-training.csv)"),
    N_("V1 engine, OpenAI-compatible server"),
    N_("executor defaults"),
)
KV_POLICIES = (N_("reserve"), N_("on_demand"))  # a scheduler's kv_policy
MEASUREMENTS = (  # engine.MEASUREMENT_COLUMNS' meanings and engine.MEASUREMENT_METRICS' units
    N_("where the number comes from: a URL, on every row"),
    N_("the serving software and its release, e.g. TensorRT-LLM 0.6.1"),
    N_("an accelerator id of the catalogue, e.g. H100 (python -m engine list hardware)"),
    N_("tensor-parallel degree: a whole number from 1 to 64"),
    N_("a model id of the catalogue with shapes, e.g. Llama-2-7B"),
    N_("weights and compute: fp32, tf32, fp16, bf16, fp8, int8 or int4"),
    N_("the KV cache's precision; empty: the same as precision"),
    N_("sequences in the static batch; empty for a run under load"),
    N_("prompt tokens per sequence"),
    N_("generated tokens per sequence"),
    N_("what was measured: one of the metrics below"),
    N_("the measured number in the metric's unit (positive, within its physical range)"),
    N_("optional: pipeline-parallel degree (default 1)"),
    N_(
        "optional, for a run under load (empty batch_size): closed-loop clients "
        "(1 to 100,000) or max (a max-throughput run); empty on static-batch rows"
    ),
    N_("optional: expert-parallel ranks among the tp devices of an MoE model (default 1)"),
    N_(
        "optional: on when attention ran data-parallel over the tp devices "
        "(MoE models; default off)"
    ),
    N_("tokens/s per GPU"),
    N_("TFLOP/s per GPU"),  # the training runs' measured metric (engine/training/calibrate.py)
    N_("fraction"),  # an MFU's unit (engine/accuracy/training_bands.py CHECK_UNITS)
)
ASSUMPTIONS = (  # engine.ASSUMPTIONS' labels and what an unset value stands for
    N_("Compute efficiency η (fraction of peak FLOP/s)"),
    N_("Layer overhead τ (µs per layer per step)"),
    N_("Dispatch overhead d (ms per call)"),
    N_("Activation traffic α (× weight bytes per extra sample)"),
    N_("FLOP convention"),
    N_("Bandwidth efficiency (fraction of HBM bandwidth)"),
    N_("Memory reserve (fraction of capacity the runtime keeps)"),
    N_("Attention efficiency (fraction of peak)"),
    N_("MoE expert efficiency (fraction of peak)"),
    N_("Link efficiency (fraction of interconnect bandwidth)"),
    N_("Link latency α (µs per hop)"),
    N_("8-bit GEMM efficiency (fraction of the fp8/int8 peak)"),
    N_("4-bit GEMM efficiency (fraction of the nvfp4/mxfp4 peak)"),
    N_("Dequantisation overhead δ (extra GEMM time when weights are widened in the kernel)"),
    N_(
        "Grouped-KV reuse (no longer used: decode attention reads each KV head once; see "
        "kv_bandwidth_efficiency)"
    ),
    N_(
        "KV read efficiency (fraction of the achieved memory bandwidth decode attention's KV "
        "reads reach)"
    ),
    N_("Prefill layer overhead (µs per layer per prefill step)"),
    N_("Sequence overhead σ (µs per sequence per step: sampling, bookkeeping)"),
    N_("Network efficiency (fraction of the inter-node bandwidth)"),
    N_("Network latency (µs per hop between nodes)"),
    N_("Expert imbalance (busiest expert-parallel rank's routed tokens over the mean)"),
    N_("Grouped-GEMM overhead n0 (token rows per routed expert: n tokens run at n/(n + n0))"),
    N_("Kernel curves (the stack whose GEMM tables move efficiencies between accelerators)"),
    N_("Kernel reference (the accelerator the profile's GEMM efficiencies were fitted on)"),
    N_("Overlap (share of the overlapping compute that hides data-parallel traffic)"),
    N_(
        "Expert all-to-all overlap (share of a layer's compute that hides MoE dispatch and combine)"
    ),
    N_(
        "Tensor-parallel overlap (share of a layer's GEMMs that hides its all-gathers and "
        "reduce-scatters)"
    ),
    N_(
        "Dropout probability (hidden and attention; above 0 each keeps a 1-byte mask for the "
        "backward pass, Megatron-LM's default 0.1; 0: none, as Llama-family runs)"
    ),
    N_(
        "Gradient bytes per parameter, held and reduced over the data-parallel ranks (2: 16-bit; "
        "4: fp32, Megatron-LM's default for bf16 runs)"
    ),
    N_(
        "Adam moment bytes: each of the momentum and variance per parameter, beside the fp32 "
        "master weight (4: fp32; 2: bf16, Megatron-Core's precision-aware optimizer and "
        "DeepSeek-V3)"
    ),
    N_(
        "fp8: bytes per element of a GEMM's input kept for the backward pass (1: Transformer "
        "Engine's fp8 copy; 2: the 16-bit input)"
    ),
    N_(
        "MoE dispatcher (alltoall: a token sent once per routed expert; flex: DeepEP, once per "
        "expert rank and once per node over the network)"
    ),
    N_(
        "MoE activation input bytes: per element of a routed or shared expert's SwiGLU input "
        "kept for the backward pass (2: 16-bit; 1: fp8, as DeepSeek-V3 kept it)"
    ),
    N_(
        "Attention output bytes: per element of attention's output kept for its backward pass "
        "(2: 16-bit, with an fp8 run's copy for the output projection beside it; below 2: one "
        "copy for both, 1.5 for DeepSeek-V3's E5M6)"
    ),
    N_("Attention backward (× its forward time)"),
    N_("the accelerator's catalogued figure"),
    N_("the compute efficiency η"),
    N_("the 8-bit GEMM efficiency"),
    N_("the interconnect's catalogued figure"),
    N_("the layer overhead τ"),
    N_("the network's catalogued figure"),
)
GRIDS = (  # data/grids.toml's names of the sites
    N_("Quebec (hydro)"),
    N_("Norway (hydro)"),
    N_("US average"),
    N_("Poland (coal)"),
    N_("Iowa (coal/gas reference)"),
    N_("France (nuclear)"),
    N_("Germany (coal + wind)"),
    N_("Texas (ERCOT)"),
    N_("India average"),
    N_("China average"),
    N_("Iceland (geothermal)"),
)
MARKED = frozenset((*PROFILES, *KV_POLICIES, *MEASUREMENTS, *ASSUMPTIONS, *GRIDS))


def said(text: object) -> str:
    """`text` in the reader's language when it is one of the marked texts, else as written."""
    text = "" if text is None else str(text)
    return _(text) if text in MARKED else text
