"""Lesson 11, "Training Memory" (11_training_memory_capacity_moe.qmd, its first part), then the
chapter "Full-stack audit" (11_full_stack_audit.qmd): Llama-3.1-70B on 512 H100 for 30 days,
one row per domain."""

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
        "usable memory. Pick the stage and the activation recomputation. Then the chapter "
        "**Full-stack audit**: Llama-3.1-70B on 512 H100 (64 nodes of 8; TP 8, DP 64, ZeRO-1, "
        "2,048 sequences a step) for 30 days, in Quebec and in Poland, one row per domain: the "
        "step, the data it needs, tokens per parameter, communication, failures and "
        "checkpoints, cost of ownership and carbon."
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
        Published(
            key="binding",
            label=N_("Audit, node: what binds the training step"),
            tutorial=N_('"Wall 1 (Compute) is the binding constraint at the node level"'),
            why=N_(
                "Agrees: compute is the largest part of our step. The rest is communication "
                "the layout leaves exposed (the fleet row), which the chapter's roofline does "
                "not see."
            ),
        ),
        Published(
            key="chinchilla",
            label=N_("Audit, algorithm: tokens per parameter in 30 days"),
            tutorial=N_('"D = 20P (tokens = 20x parameters) for optimal allocation"'),
            why=N_(
                "Ours: the tokens our simulated step processes in 30 days, over the parameters; "
                "the chapter derives its budget from an assumed 40 % MFU, ours from the step."
            ),
        ),
        Published(
            key="carbon_ratio",
            label=N_("Audit, ops: carbon in Poland against Quebec"),
            tutorial=N_('"Quebec vs. Poland can change carbon footprint by 40x"'),
            why=N_(
                "Ours is higher: {g_poland} against {g_quebec} gCO2e/kWh is 41×, and Poland's "
                "PUE ({pue_poland} against {pue_quebec}) multiplies the energy too; the "
                "chapter's 40× compares the grids alone."
            ),
        ),
        Published(
            key="tco_change",
            label=N_("Audit, ops: cost of ownership in Poland against Quebec"),
            tutorial=N_('"and TCO by 20--30%"'),
            why=N_(
                "Ours is far smaller: at one electricity price, power is {energy_share} of the "
                "month's cost of ownership (the amortised purchase dominates), so Poland's "
                "higher PUE moves the total little. The chapter's figure needs a dearer "
                "electricity price in Poland, which its text does not give."
            ),
        ),
        Published(
            key="self_check",
            label=N_("Audit, self-check: MTBF 4 h, a 2-minute checkpoint"),
            tutorial=N_('"optimal interval = sqrt(2 * delta * MTBF)"'),
            why=N_(
                "By the formula: √(2 × 2 min × 240 min) = 31.0 min, so writing takes 2 ÷ 31.0 "
                "= 6.5 % of the time (rework after failures comes on top)."
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
        Exercise(
            "poland_carbon",
            N_("Audit: how many times Quebec's carbon does the same month emit in Poland?"),
            N_("Read both carbon figures in the audit's table; the PUE counts as well."),
            unit="×",
            tolerance=0.5,
        ),
        Exercise(
            "self_check",
            N_(
                "Audit: with a cluster MTBF of 4 h and a 2-minute checkpoint, what percentage "
                "of the time goes to writing checkpoints at the Young–Daly interval?"
            ),
            N_("The interval is √(2 × write time × MTBF); the share is write time ÷ interval."),
            unit="%",
            tolerance=0.2,
        ),
    ),
    takeaway=N_(
        "Weights, gradients and optimizer state are direct byte counts (2 + 2 + 12 bytes per "
        "parameter with Adam in mixed precision); ZeRO stages 1, 2 and 3 split the optimizer "
        "state, then the gradients, then the weights across data-parallel GPUs. Activations "
        "are the framework-dependent term: recomputation, not ZeRO, shrinks them. No single "
        "figure audits a training run: compute binds each GPU's step, while communication, "
        "checkpoints and the grid's carbon appear only when the whole fleet and its month "
        "are traced."
    ),
)
