"""Lesson 0, "Hello, Roofline" (00_hello_roofline.qmd): the seed tutorial."""

from ui.learn.content import Exercise, Lesson, Published
from ui.words.i18n import N_

LESSON = Lesson(
    number="0",
    source="00_hello_roofline.qmd",
    title=N_("Hello, Roofline"),
    question=N_(
        "You have a model and a GPU. Before you write any code or rent any cloud instance, can "
        "you predict which hardware resource will be the bottleneck? The **roofline model** "
        "answers in under a second. Every accelerator has two ceilings: how fast it computes "
        "(FLOP/s) and how fast it reads memory (bytes/s). A workload's **arithmetic "
        "intensity** (FLOPs ÷ bytes moved) against the accelerator's **ridge point** (peak "
        "FLOP/s ÷ bandwidth) says which ceiling it hits first: below the ridge it is "
        "**memory-bound** (starved for data), above it **compute-bound**. Batch size is the "
        "knob that moves a workload along the roofline."
    ),
    experiment=N_(
        "The chapter's experiment: ResNet-50 at fp16, one image at a time, then a sweep of "
        "batch sizes to watch the bottleneck flip. Pick the accelerator and the batch. The "
        "roofline shows the sweep (powers of two, 1 to 256) and your batch: each point's "
        "attainable performance on the roof (open circle) and what it achieves (filled), the "
        "gap between them being fixed overhead (dispatch and 10 µs per layer, the tutorial's "
        "defaults)."
    ),
    published=(
        Published(
            key="latency",
            label=N_("Latency, ResNet-50 on the A100, batch 1"),
            tutorial="0.543 ms",
            why=N_(
                "Agrees: the same model, catalogue figures and defaults (efficiency 0.5, "
                "10 µs per layer, the A100's 15 µs dispatch). {overhead} of it is fixed "
                "overhead: the roofline calls it memory-bound, but overhead dominates."
            ),
        ),
        Published(
            key="throughput",
            label=N_("Throughput, batch 1"),
            tutorial=N_("1,843 images/s"),
            why=N_("Agrees."),
        ),
        Published(
            key="intensity",
            label=N_("Arithmetic intensity against the effective ridge, A100"),
            tutorial=N_("72.8 against 76.5 FLOP/byte (the prose rounds to ~82 against ~156)"),
            why=N_(
                "The printed figures agree; the prose mixes conventions. Its 82 is 4.1 GFLOP "
                "÷ 50 MB (25 M parameters, no activations); its ridge of 156 is the datasheet "
                "312 TFLOP/s ÷ 2.0 TB/s, but with its own 1-FLOP-per-MAC peak (156 TFLOP/s) "
                "the ridge is 78. The engine's effective ridge, 312 TFLOP/s × 0.5 efficiency ÷ "
                "2.039 TB/s = 76.5, plays that role, against 4.1 GFLOP ÷ 56.3 MB (25.6 M "
                "parameters and 10 % activation traffic) = 72.8."
            ),
        ),
        Published(
            key="mfu",
            label=N_("MFU, batch 1 → batch 256"),
            tutorial="2.4 % → 46.4 %",
            why=N_("Agrees."),
        ),
        Published(
            key="cross_a100",
            label=N_("First compute-bound batch, A100"),
            tutorial="2",
            why=N_(
                "Agrees: compute per image (26.3 µs) outgrows the weight read (25.1 µs) once "
                "the batch exceeds 1.06."
            ),
        ),
        Published(
            key="cross_h100",
            label=N_("First compute-bound batch, H100 (exercise 2)"),
            tutorial=N_("4 in the power-of-two sweep"),
            why=N_(
                "Both are right: a sweep of 1, 2, 4, 8 … can only report 4; the exact "
                "crossover is batch {exact} (the engine's closed form). The H100's ridge is "
                "higher ({ridge}), so it stays memory-bound longer."
            ),
        ),
        Published(
            key="llama",
            label=N_("Llama-3.1-8B on the A100, batch 1 (exercise 3)"),
            tutorial=N_("9.0 ms, 111 tokens/s"),
            why=N_(
                "Agrees: about 1 FLOP per byte, deep on the memory side: 16 GB of weights "
                "(+10 % activations) read for every token."
            ),
        ),
    ),
    exercises=(
        Exercise(
            "bound64",
            N_("Exercise 1: at batch 64 on the A100, is ResNet-50 memory-bound or compute-bound?"),
            N_("Batch 64 is far past the crossover (2): compare the intensity with the ridge."),
            choices=(N_("memory-bound"), N_("compute-bound")),
        ),
        Exercise(
            "h100",
            N_(
                "Exercise 2: at which batch does ResNet-50 first turn compute-bound on the "
                "H100? The exact batch, not the sweep's."
            ),
            N_("Pick the H100 and try batches 2, 3 and 4: watch the bottleneck."),
            tolerance=0,
        ),
        Exercise(
            "mfu256",
            N_("What MFU does ResNet-50 reach on the A100 at batch 256, in %?"),
            N_("Set the batch to 256: MFU is the achieved FLOP/s over the peak."),
            unit="%",
            tolerance=0.5,
        ),
        Exercise(
            "llama_ms",
            N_("Exercise 3: Llama-3.1-8B at batch 1 on the A100: latency in ms?"),
            N_(
                "Memory-bound: 16.06 GB of fp16 weights plus 10 % activations at 2.039 TB/s, "
                "plus 0.335 ms of overhead (32 layers × 10 µs + dispatch)."
            ),
            unit="ms",
            tolerance=0.2,
        ),
    ),
    takeaway=N_(
        "The roofline predicts performance from two ratios, before any experiment: the "
        "workload's arithmetic intensity and the hardware's ridge point. Small batches are "
        "memory-bound (or, like here, overhead-bound), large ones compute-bound; a GPU with "
        "half the FLOP/s but the same bandwidth would serve batch 1 just as fast."
    ),
)
