"""Lesson 5, "Quantization: Not a Free Lunch" (05_quantization.qmd)."""

from ui.learn.content import Exercise, Lesson, Published
from ui.words.i18n import N_

LESSON = Lesson(
    number="5",
    source="05_quantization.qmd",
    title=N_("Quantization"),
    question=N_(
        "INT4 makes a model 4× smaller. Does it make it 4× faster? **Quantization** removes "
        "bytes, not FLOPs: it speeds up a workload in proportion only where bytes are the "
        "bottleneck. The regime decides whether the optimization works at all."
    ),
    experiment=N_(
        "The chapter's two workloads in fp16, int8 and int4: Llama-3.1-8B decoding at batch 1 "
        "on the H100 (2,048 tokens of context, memory-bound; one decode step in the tutorial's "
        "LLM view) and ResNet-50 at batch 256 on "
        "the A100 (compute-bound). Pick a precision to see both workloads on their rooflines "
        "against fp16."
    ),
    published=(
        Published(
            key="decode",
            label=N_("Llama-3 8B decode, batch 1: int8 and int4 speedup over fp16"),
            tutorial=N_("~2× and ~4×"),
            why=N_(
                "A little below: the fixed overhead per step does not shrink with the bytes, "
                "and the speedup tracks the bytes only while they dominate."
            ),
        ),
        Published(
            key="train",
            label=N_("ResNet-50, batch 256 on the A100: int8 and int4 speedup"),
            tutorial=N_('"negligible" (about 1×)'),
            why=N_(
                "int4 agrees: the A100 lists no int4 peak, so the engine computes at the fp16 "
                "peak. int8 does not: the engine uses the A100's int8 tensor-core peak (624 "
                'TOPS, twice fp16), the second-order effect the chapter\'s own "Nuance" note '
                "describes and its first-order model leaves out."
            ),
        ),
        Published(
            key="accuracy",
            label=N_("Accuracy cost"),
            tutorial=N_("int8 < 1 %, int4 2–5 %"),
            why=N_("Not modelled: Roofline Explorer predicts speed, not accuracy."),
        ),
    ),
    exercises=(
        Exercise(
            "int4",
            N_("By how much does int4 speed up the Llama-3 8B decode step on the H100 (×)?"),
            N_("Decode is memory-bound: the weights shrink 4×, the fixed overhead does not."),
            unit="×",
            tolerance=0.05,
        ),
        Exercise(
            "int8_resnet",
            N_("ResNet-50 at batch 256 on the A100 in int8: latency in ms?"),
            N_("Compute-bound: the same FLOPs at the int8 peak (624 TOPS × 0.5)."),
            unit="ms",
            tolerance=0.05,
        ),
    ),
    takeaway=N_(
        "Quantization helps memory-bound workloads in proportion (decode at batch 1 is the "
        "ideal case) and compute-bound ones only through faster low-precision arithmetic. "
        "Check the regime first, then whether the accuracy cost is acceptable."
    ),
)
