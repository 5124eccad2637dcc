"""Lesson 2, "Two Phases, One Request" (02_two_phases.qmd)."""

from ui.learn.content import Exercise, Lesson, Published
from ui.words.i18n import N_

LESSON = Lesson(
    number="2",
    source="02_two_phases.qmd",
    title=N_("Two Phases, One Request"),
    question=N_(
        "An LLM writes one token at a time. The first token and the hundredth are limited by "
        "different resources: the **prefill** reads the whole prompt in one pass, thousands of "
        "tokens per weight read, and is **compute-bound**; each **decode** step reads every "
        "weight (and the KV cache) for one new token and is **memory-bound**. So the "
        "**time to first token (TTFT)** scales with FLOP/s and the **time per output token "
        "(TPOT)** with memory bandwidth. Which one your users feel decides which GPU to buy."
    ),
    experiment=N_(
        "Llama-3.1-8B at batch 1 in the tutorial's LLM view (one prefill of the prompt, one "
        "decode step at that context). Pick the accelerator, the prompt length and the "
        "precision: the roofline shows the two phases as two points on the same roofs (the "
        "prefill on the right, thousands of FLOPs per byte; the decode step on the left, about "
        "one), and the table compares the chapter's GPUs."
    ),
    published=(
        Published(
            key="ttft",
            label=N_("TTFT, 2,048-token prompt on the H100"),
            tutorial=N_('"tens of milliseconds"'),
            why=N_(
                "Agrees: 2 FLOPs × 8 B parameters × 2,048 tokens (plus attention) at 989 "
                "TFLOP/s × 0.5 efficiency."
            ),
        ),
        Published(
            key="tpot",
            label=N_("Time per output token on the H100"),
            tutorial=N_('"a fraction of a millisecond"'),
            why=N_(
                "A slip in the text: its own background says every decode step loads 16 GB of "
                "weights, and 16 GB ÷ 3.35 TB/s = 4.8 ms. The engine adds the 2,048-token KV "
                "cache ({kv}) and the fixed overhead. No batch-1 decode of an 8 B model in "
                "fp16 takes under a millisecond on one H100; the text's own formula gives "
                "about 5 ms."
            ),
        ),
        Published(
            key="intensity",
            label=N_("Arithmetic intensity: prefill / decode"),
            tutorial=N_("~2,048 / ~1 FLOP/byte"),
            why=N_("Agrees in kind; the engine adds the attention over the prompt."),
        ),
        Published(
            key="a100_h100",
            label=N_("A100 → H100: TTFT / TPOT faster by"),
            tutorial=N_("~3× / ~1.7×"),
            why=N_("Agrees: TTFT follows the FLOP/s ratio, TPOT the bandwidth ratio (2.039 TB/s)."),
        ),
        Published(
            key="h100_h200",
            label=N_("H100 → H200: TTFT / TPOT faster by"),
            tutorial=N_("about the same / ~1.4×"),
            why=N_("Agrees: the same compute, 4.8 against 3.35 TB/s."),
        ),
    ),
    exercises=(
        Exercise(
            "ttft",
            N_("What is the TTFT of a 2,048-token prompt on the H100, in ms?"),
            N_("Prefill is compute-bound: 2 × 8 B × 2,048 FLOPs at half of 989 TFLOP/s."),
            unit="ms",
            tolerance=2.0,
        ),
        Exercise(
            "ratio",
            N_("How many times faster is a decode step on the H100 than on the A100 (×)?"),
            N_("Decode is memory-bound: compare the bandwidths, 3.35 and 2.039 TB/s."),
            unit="×",
            tolerance=0.05,
        ),
        Exercise(
            "phase",
            N_("Which phase is compute-bound on the H100 at a 2,048-token prompt?"),
            N_("Compare each phase's arithmetic intensity with the ridge point."),
            choices=(N_("The prefill (TTFT)"), N_("The decode step (TPOT)")),
        ),
    ),
    takeaway=N_(
        "LLM serving is two problems in sequence. Prefill scales with FLOP/s, decode with "
        "bandwidth; quantization is a decode optimization, more TFLOP/s a prefill one. A "
        "chatbot (short prompts, long answers) buys bandwidth; a summarizer (long documents, "
        "short answers) buys compute."
    ),
)
