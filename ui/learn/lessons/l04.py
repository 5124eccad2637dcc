"""Lesson 4, "Starving the GPU" (04_starving_the_gpu.qmd)."""

from ui.learn.content import Exercise, Lesson, Published
from ui.words.i18n import N_

LESSON = Lesson(
    number="4",
    source="04_starving_the_gpu.qmd",
    title=N_("Starving the GPU"),
    question=N_(
        "You train ResNet-50 on an A100 and nvidia-smi reads 40 %. The model is compute-bound "
        "and the GPU top-tier, so why does it idle? Every step needs its batch read, decoded "
        "and augmented by the CPU first. When the CPU workers cannot prepare batches as fast "
        "as the accelerator consumes them, the **input pipeline** is the binding constraint "
        "and the GPU starves."
    ),
    experiment=N_(
        "The chapter's sweep: ResNet-50 on the A100, batches from 1 to 1,024. For each batch "
        "the accelerator's step (the whole-model solve) against the CPU's transform time "
        "(batch × sample size ÷ CPU throughput); the slower one sets the pace. Change the CPU "
        "throughput (workers × 250 MB/s) and the sample size; the batch sets the utilisation "
        "read-out."
    ),
    published=(
        Published(
            key="cpu",
            label=N_("CPU throughput, 8 workers"),
            tutorial=N_("~2 GB/s (8 × 250 MB/s)"),
            why=N_("The same input (change it above)."),
        ),
        Published(
            key="step256",
            label=N_("Batch 256: GPU step against CPU transform"),
            tutorial=N_('the GPU is "several times faster"'),
            why=N_("Agrees: {times} faster; the GPU is busy {util} of the time."),
        ),
        Published(
            key="crossover",
            label=N_("First batch at which the CPU binds"),
            tutorial=N_('"at the very bottom of the sweep"'),
            why=N_(
                "Agrees: batch {batch}. The fixed overhead shields the GPU only while batches "
                "are tiny; then utilisation levels off at the ratio of the per-sample times."
            ),
        ),
        Published(
            key="selfcheck",
            label=N_("Self-check: GPU 20 ms, CPU 35 ms"),
            tutorial="57 %",
            why=N_("The same rule: utilisation = GPU step ÷ the slower stage."),
        ),
    ),
    exercises=(
        Exercise(
            "util64",
            N_("Exercise 1: GPU utilisation at batch 64 with 8 workers (2 GB/s), in %?"),
            N_("Compare the transform time (64 × 500 KB ÷ 2 GB/s) with the GPU step."),
            unit="%",
            tolerance=0.5,
        ),
        Exercise(
            "medical",
            N_(
                "Exercise 2: medical images of 5 MB: at which batch does the CPU first stall "
                "the GPU?"
            ),
            N_("Set the sample size to 5,000 KB and read the first CPU-bound batch."),
            tolerance=0,
        ),
        Exercise(
            "dali",
            N_("Exercise 3: with GPU preprocessing at 50 GB/s, utilisation at batch 512, in %?"),
            N_("Set the CPU throughput to 50 GB/s: does the bottleneck move back to compute?"),
            unit="%",
            tolerance=0.5,
        ),
    ),
    takeaway=N_(
        "A step has three stages, storage, CPU preprocessing and the accelerator, and the "
        "slowest sets the pace. Large batches often move the bottleneck to the CPU; more "
        "workers help linearly until storage binds; GPU-side decoding (DALI) or pre-decoded "
        "data removes the stage."
    ),
)
