"""Lesson 9, "Where to Invest: Sensitivity Analysis" (09_sensitivity.qmd)."""

from ui.learn.content import Exercise, Lesson, Published
from ui.words.i18n import N_

LESSON = Lesson(
    number="9",
    source="09_sensitivity.qmd",
    title=N_("Where to Invest: Sensitivity Analysis"),
    question=N_(
        "Your team can afford one hardware upgrade for serving Llama-3.1-70B on A100s: more "
        "FLOP/s or more memory bandwidth? Move each figure of the accelerator by ±10 % and "
        "measure how much the latency moves: the **elasticity** (ΔT/T) ÷ (Δp/p) of each "
        "parameter. The one with the largest magnitude is the **binding constraint**, the one "
        "worth buying. Then turn the roofline around: for a target inter-token latency (ITL) "
        "of 50 ms, what is the least bandwidth, FLOP/s and memory that meets it?"
    ),
    experiment=N_(
        "Llama-3.1-70B in fp16 at batch 1 (1,024 tokens in, 128 out) in the serving model, "
        "re-run with one figure of the accelerator at −h and +h (a central difference). The "
        "tornado shows how much the time per output token (TPOT, the ITL) moves for each; the "
        "inverse roofline solves for the smallest figure that meets the target, each alone "
        "(the rest as catalogued, and with the other rates unbounded). The table compares the "
        "chapter's three GPU generations."
    ),
    published=(
        Published(
            key="e_bw",
            label=N_("Elasticity of latency to memory bandwidth (A100)"),
            tutorial=N_(
                '"dT/dBW = −0.88": "a 10% bandwidth increase yields 8.8% latency reduction"'
            ),
            why=N_(
                "Differs, and the chapter's two readings disagree with each other. A decode "
                "step that is all memory time has T ∝ 1/BW: a +10 % perturbation cuts it by "
                "1 − 1/1.1 = 9.1 % (−0.091, an elasticity of −0.91), and the central difference "
                "of ±10 % gives −1/(1 − 0.01) = −1.01 times the memory share of the step "
                "({share} here: the rest is {overhead} of fixed overhead). +10 % bandwidth here "
                "cuts TPOT by {plus}. Neither reading gives −0.88."
            ),
        ),
        Published(
            key="e_flops",
            label=N_("Elasticity of latency to peak FLOP/s (A100)"),
            tutorial=N_('"dT/dFLOPS = −0.06"'),
            why=N_(
                "Differs: at batch 1 every GEMM of a decode step does about 1 FLOP per byte "
                "against a ridge of {ridge}, so each is memory-bound and ±10 % of FLOP/s "
                "changes no term of the step: the elasticity is exactly 0. −0.06 would need 6 % "
                "of the step to be compute time."
            ),
        ),
        Published(
            key="ratio",
            label=N_("How much more a unit of bandwidth buys than one of FLOP/s"),
            tutorial=N_('"~15x"'),
            why=N_(
                "Follows from the two figures above in the chapter (0.88 ÷ 0.06 ≈ 15); with a "
                "FLOP/s elasticity of 0 the ratio has no bound: more FLOP/s buys no decode "
                "latency at all at batch 1. It buys prefill: TTFT's elasticity to FLOP/s is "
                "{ttft_flops}."
            ),
        ),
        Published(
            key="bw_needed",
            label=N_("Least memory bandwidth for a 50 ms ITL"),
            tutorial=N_('"approximately 2.8 TB/s"'),
            why=N_(
                "Agrees: 141.1 GB of fp16 weights ÷ 50 ms = 2.82 TB/s; the engine's step also "
                "reads the KV cache, and {overhead} of the 50 ms go to fixed overheads."
            ),
        ),
        Published(
            key="bw_ratio",
            label=N_("…as a multiple of the A100's 2.039 TB/s"),
            tutorial=N_('"1.4x what the A100 provides"'),
            why=N_("Agrees."),
        ),
        Published(
            key="binding",
            label=N_("Binding constraint on the A100, H100 and H200"),
            tutorial=N_('"memory_bandwidth" (the memory wall persists across generations)'),
            why=N_("Agrees: TPOT's elasticity to bandwidth is {generations}."),
        ),
    ),
    exercises=(
        Exercise(
            "e_bw",
            N_("What is the elasticity of TPOT to memory bandwidth on the A100, at ±10 %?"),
            N_("All memory time gives −1/(1 − h²); multiply by the memory share of the step."),
            tolerance=0.02,
        ),
        Exercise(
            "bw_tbps",
            N_("How much memory bandwidth does a 50 ms ITL need, in TB/s?"),
            N_("Bytes of one decode step ÷ (50 ms − the fixed overhead)."),
            unit="TB/s",
            tolerance=0.05,
        ),
        Exercise(
            "upgrade",
            N_("Which upgrade lowers the A100's batch-1 TPOT?"),
            N_("Look at the tornado: which bar is not zero?"),
            choices=(N_("Memory bandwidth"), N_("Peak FLOP/s"), N_("Both the same")),
        ),
    ),
    takeaway=N_(
        "Elasticities turn 'which spec matters' into a number: at batch 1 LLM decode is all "
        "bandwidth (elasticity ≈ −1) and no FLOP/s (0). The inverse roofline gives a shopping "
        "list: the least bandwidth is the bytes of a step over the time left after the fixed "
        "overheads. Check the arithmetic of any published sensitivity: a +10 % perturbation of "
        "a pure 1/x term moves it by 9.1 %, never by more than 10 %."
    ),
)
