"""Lesson 6, "Scaling to 1000 GPUs" (06_scaling_1000_gpus.qmd)."""

from ui.core.i18n import N_
from ui.learn.content import Exercise, Lesson, Published

LESSON = Lesson(
    number="6",
    source="06_scaling_1000_gpus.qmd",
    title=N_("Scaling to 1000 GPUs"),
    question=N_(
        "A 70B model and up to 1,024 H100s. Communication (all-reduces, pipeline bubbles) eats "
        "some scaling efficiency, everyone knows that. But is it the dominant cost at scale? "
        "A cluster of N GPUs fails N times as often as one GPU; every failure rolls the job "
        "back to its last checkpoint, and every checkpoint pauses it. The chapter's claim: at "
        "scale, reliability costs more than communication."
    ),
    experiment=N_(
        "Llama-3.1-70B on 8 to 1,024 H100s, **tensor parallelism** 8 inside a node and data "
        "parallelism across nodes, a global batch of max(64, GPUs) sequences of 2,048 tokens "
        "(the chapter's setup; ZeRO-1 so the optimizer state fits). For each size: the hours "
        "of a 30-day run lost to communication (the share of each step the training model "
        "exposes) against those lost to checkpoints and rollbacks (MTBF = MTTF ÷ GPUs, the "
        "Young-Daly interval). Change the GPU MTTF and the checkpoint write time."
    ),
    published=(
        Published(
            "mtbf",
            N_("Cluster MTBF at 512 GPUs"),
            N_("~97 hours"),
            N_("Agrees: 50,000 h ÷ 512."),
        ),
        Published(
            "interval",
            N_("Optimal checkpoint interval at 512+ GPUs"),
            N_("about 1–2 hours"),
            N_("Agrees: √(2 × 60 s × 97.7 h) at 512 GPUs; {interval_1024} at 1,024."),
        ),
        Published(
            "daily",
            N_("How often a 512-GPU cluster fails"),
            N_('"roughly every day"'),
            N_(
                "Not from the chapter's own figures: MTTF ÷ N gives {failures} failures in 30 "
                "days, one every {every}. Daily failures need the other parts the chapter's "
                "reliability model counts (NICs, power supplies) or a lower MTTF: try "
                "10,000 h."
            ),
        ),
        Published(
            "verdict",
            N_("What dominates at 1,024 GPUs"),
            N_("checkpoints and rollbacks, 10–30 % of the run"),
            N_(
                "Not with the chapter's own inputs in our model: 60 s checkpoints lose "
                "{ckpt_hours} of 720 h, while the training model exposes {comm_share} of every "
                "step to communication ({comm_hours}): the tensor-parallel all-reduces of "
                "each micro-batch, which a data-parallel-only estimate leaves out. The verdict "
                "depends on the inputs: a 70B checkpoint with Adam state (about 1 TB) takes "
                "minutes to write, not 60 s."
            ),
        ),
    ),
    exercises=(
        Exercise(
            "mtbf2048",
            N_("Exercise 1: the MTBF of a 2,048-GPU cluster (50,000 h per GPU), in hours?"),
            N_("MTBF = MTTF ÷ the number of GPUs."),
            unit="h",
            tolerance=0.5,
        ),
        Exercise(
            "fail2048",
            N_("And how many failures in a 30-day run?"),
            N_("720 hours ÷ the MTBF."),
            tolerance=0.5,
        ),
    ),
    takeaway=N_(
        "Failures grow with the cluster: MTBF falls as 1/N and the Young-Daly interval "
        "√(2·δ·MTBF) with it. Whether checkpoints or communication cost more depends on the "
        "checkpoint write time and the parallel layout: compute both before you buy the "
        "network or the storage."
    ),
)
