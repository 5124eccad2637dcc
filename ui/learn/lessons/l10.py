"""Lesson 10, "GPU vs. Wafer-Scale" (10_gpu_vs_wafer.qmd)."""

from ui.learn.content import Exercise, Lesson, Published
from ui.words.i18n import N_

LESSON = Lesson(
    number="10",
    source="10_gpu_vs_wafer.qmd",
    title=N_("GPU vs. Wafer-Scale"),
    question=N_(
        "Can a different architecture change *which* wall binds? A GPU keeps the weights in "
        "HBM and reads them all at every decode step: HBM bandwidth binds. The Cerebras WSE-3 "
        "keeps activations and the KV cache in 44 GB of on-wafer SRAM and **streams the "
        "weights** in from external MemoryX nodes, layer by layer: now the **injection "
        "bandwidth** binds. Larger batches share each injected layer, so somewhere compute "
        "takes over: the batch B*. Does the wafer remove the memory wall, or move it?"
    ),
    experiment=N_(
        "GPT-3 175B in fp16 (2,048 tokens in, 128 out) on an H100 and on a Cerebras CS-3, both "
        "in the serving model. On the CS-3 the weights (349 GB) do not fit in the SRAM, so they "
        "stream at the injection bandwidth (the chapter's 1.2 TB/s: change it), one layer "
        "resident, while the KV cache stays in SRAM at 21 PB/s. The batch table shows where "
        "the SRAM fills and where compute would take over (B*)."
    ),
    published=(
        Published(
            key="gpu_bound",
            label=N_("H100 at batch 1: the binding resource"),
            tutorial=N_('"The 3.35 TB/s HBM bandwidth, not the 989 TFLOP/s compute"'),
            why=N_(
                "Agrees ({gpu_tpot} per token: 349 GB ÷ 3.35 TB/s plus KV and overhead), for an "
                "H100 that could hold GPT-3: one H100 has 80 GiB, and 349 GB of weights need "
                "five of them at least. The chapter's GPU baseline is a bound, not a deployment."
            ),
        ),
        Published(
            key="wafer_bound",
            label=N_("CS-3: the binding resource"),
            tutorial=N_('"injection bandwidth (MemoryX -> wafer)"'),
            why=N_(
                "Agrees: TPOT's elasticity to the injection bandwidth is {e_stream}, to the "
                "SRAM's 21 PB/s {e_sram}."
            ),
        ),
        Published(
            key="injection",
            label=N_("Injection bandwidth"),
            tutorial=N_('"~1.2 TB/s"'),
            why=N_(
                "The chapter's assumption, used here as the catalogue's figure. Cerebras lists "
                "the CS-3's system I/O as 1.2 Tb/s (12 × 100 GbE), 0.15 TB/s: if that is the "
                "path the weights take, every figure of the CS-3 below is 8× slower. Set the "
                "bandwidth to 0.15 to see."
            ),
        ),
        Published(
            key="speed",
            label=N_("Which is faster per token at batch 1"),
            tutorial=N_(
                '"Cerebras eliminates the memory wall — then hits a completely different one"'
            ),
            why=N_(
                "The wall moves, and at 1.2 TB/s it is lower than the H100's: injecting 349 GB "
                "takes {wafer_tpot} per token against the H100's {gpu_tpot}. Weight streaming "
                "wins where the weights fit in SRAM (a model of under 40 GB is read at 21 PB/s) "
                "or where a large batch shares each injection."
            ),
        ),
        Published(
            key="b_star",
            label=N_("Where compute takes over, and the SRAM"),
            tutorial=N_(
                '"At the optimal batch size B*, the two pipelines overlap … '
                'Beyond B*, SRAM fills up"'
            ),
            why=N_(
                "The order is the other way round for GPT-3: its KV cache is 4.72 MB per token "
                "(96 layers × 96 heads × 128 × 2 × 2 B), so the SRAM holds {fit_batch} "
                "sequences of 2,176 tokens, while compute takes over only at B* = {b_star} "
                "(by hand 62.5 PFLOP/s × 0.5 ÷ 1.2 TB/s ≈ 26,000). Injection binds at every "
                "batch that fits."
            ),
        ),
        Published(
            key="sram",
            label=N_("On-wafer SRAM"),
            tutorial=N_('"44 GB of on-wafer SRAM"'),
            why=N_("Agrees (Cerebras' datasheet); the runtime's 10 % reserve leaves {usable}."),
        ),
    ),
    exercises=(
        Exercise(
            "layer_ms",
            N_(
                "The chapter's self-check: at 1.2 TB/s, what is the least injection time of "
                "one of GPT-3's 96 layers, in ms?"
            ),
            N_("349 GB ÷ 96 layers ÷ 1.2 TB/s."),
            unit="ms",
            tolerance=0.05,
        ),
        Exercise(
            "wafer_tpot",
            N_("What is the CS-3's TPOT for GPT-3 at batch 1, in ms?"),
            N_("Every weight is injected once per step, plus 96 layers × 10 µs of overhead."),
            unit="ms",
            tolerance=3.0,
        ),
        Exercise(
            "fit_batch",
            N_("How many sequences of 2,048 + 128 tokens fit their KV cache in the SRAM?"),
            N_("(44 GB × 0.9 − one layer's weights) ÷ (4.72 MB × 2,176 tokens)."),
        ),
        Exercise(
            "faster",
            N_("At batch 1 and 1.2 TB/s, which is faster per token?"),
            N_("Compare 349 GB ÷ 3.35 TB/s with 349 GB ÷ 1.2 TB/s."),
            choices=(N_("The H100 (if it could hold the model)"), N_("The CS-3")),
        ),
    ),
    takeaway=N_(
        "An architecture does not remove the memory wall; it moves it. Weight streaming "
        "replaces HBM bandwidth with injection bandwidth, and a large batch amortises each "
        "injected layer, but only as far as the SRAM holds the KV cache: for GPT-3's full "
        "multi-head attention that is a handful of sequences. Ask of any new chip: which wall "
        "does it move, and which one does it create?"
    ),
)
