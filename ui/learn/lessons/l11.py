"""Lesson 11, "Training Memory" (11_training_memory_capacity_moe.qmd, its first part)."""

from ui.learn.content import Exercise, Lesson, Published
from ui.words.i18n import N_

LESSON = Lesson(
    number="11",
    source="11_training_memory_capacity_moe.qmd",
    title=N_("Training Memory"),
    question=N_(
        "Why does training need so much more memory than inference? Inference keeps the "
        "weights and the KV cache. Training also keeps a gradient for every weight, the "
        "optimizer's state (fp32 master weights, Adam's momentum and variance: 12 bytes per "
        "parameter) and the activations the backward pass needs. A model that serves easily "
        "can fail to train; **ZeRO** splits those states across the **data-parallel** GPUs."
    ),
    experiment=N_(
        "The chapter's setup: Llama-3.1-8B trained on 8 H100s, data parallel 8, sequences of "
        "2,048 tokens (micro-batch 1, bf16). Memory per GPU at each ZeRO stage, against the "
        "usable memory. Pick the stage and the activation recomputation."
    ),
    published=(
        Published(
            key="weights",
            label=N_("Weights per GPU"),
            tutorial=N_("a direct count: 2 bytes × 8 B parameters = 16 GB"),
            why=N_("Agrees (ZeRO-3 splits them too)."),
        ),
        Published(
            key="gradients",
            label=N_("Gradients per GPU, ZeRO-2 over 8 GPUs"),
            tutorial=N_("a direct count: 16 GB ÷ 8 = 2 GB"),
            why=N_("Agrees."),
        ),
        Published(
            key="optimizer",
            label=N_("Optimizer state per GPU, ZeRO-2"),
            tutorial=N_("a direct count: 12 bytes × 8 B ÷ 8 = 12 GB"),
            why=N_("Agrees."),
        ),
        Published(
            key="activations",
            label=N_("Activations per GPU"),
            tutorial=N_('"the term most sensitive to framework behavior"'),
            why=N_(
                "The engine's activation rule (Korthikanti et al.) gives {activations}; the "
                "chapter prints no figure and asks for a framework trace."
            ),
        ),
    ),
    exercises=(
        Exercise(
            "zero3",
            N_("Memory per GPU at ZeRO-3 (no recomputation), in GB?"),
            N_("ZeRO-3 splits weights, gradients and optimizer state 8 ways; not activations."),
            unit="GB",
            tolerance=0.5,
        ),
        Exercise(
            "unsplit",
            N_("Which term does no ZeRO stage shrink?"),
            N_("Compare the bars of ZeRO-0 and ZeRO-3."),
            choices=(N_("Weights"), N_("Gradients"), N_("Optimizer state"), N_("Activations")),
        ),
    ),
    takeaway=N_(
        "Weights, gradients and optimizer state are direct byte counts (2 + 2 + 12 bytes per "
        "parameter with Adam in mixed precision); ZeRO stages 1, 2 and 3 split the optimizer "
        "state, then the gradients, then the weights across data-parallel GPUs. Activations "
        "are the framework-dependent term: recomputation, not ZeRO, shrinks them."
    ),
)
