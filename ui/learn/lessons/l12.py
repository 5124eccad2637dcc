"""Lesson 12, "Design-space exploration" (12_design_space_exploration.qmd)."""

from ui.learn.content import Exercise, Lesson, Published
from ui.words.i18n import N_

LESSON = Lesson(
    number="12",
    source="12_design_space_exploration.qmd",
    title=N_("Design-space exploration"),
    question=N_(
        "Tensor or pipeline parallelism? A bigger batch for throughput, or a smaller one for a "
        "shorter step? A real system is a grid of such choices. How do you search it cleanly, "
        "drop the configurations that break a constraint, and rank the rest, without a nest of "
        "loops? And when two goals pull apart, which configurations are worth considering at "
        "all?"
    ),
    experiment=N_(
        "The chapter's grid: Llama-3-70B on 8,192 H100 (1,024 DGX H100), global batch × tp "
        "(1, 2, 4, 8) × pp (1, 2, 4), fp16. The chapter's batches (16 to 128 sequences) do not "
        "fit this cluster (below), so ours are the chapter's × 64 by default: 1,024 to 8,192 "
        "sequences of 2,048 tokens (micro-batch 1, ZeRO-1, selective recomputation). Each "
        "configuration is the training model's step; set the longest step allowed. The table "
        "ranks by tokens/s; the chart keeps the **Pareto front**: the configurations no other "
        "beats on both tokens/s and step time."
    ),
    published=(
        Published(
            key="grid",
            label=N_("Configurations searched"),
            tutorial=N_('"Tests all 4 * 4 * 3 = 48 combinations"'),
            why=N_("Agrees: the same batch × tp × pp grid, searched as one."),
        ),
        Published(
            key="feasible",
            label=N_("Valid configurations of the chapter's grid on 8,192 GPUs"),
            tutorial=N_(
                '"The DSE automatically ignores configurations where the Tier 1 models report '
                'feasible = False due to Out of Memory errors" (the best one is printed)'
            ),
            why=N_(
                "None is valid in our model, and not for memory: every one breaks the rule "
                "“{rule}”. On 8,192 GPUs, tp × pp is at most 32, which leaves at least 8,192 ÷ 32 "
                "= 256 data-parallel replicas, each needing at least one whole sequence per "
                "step; the chapter's largest batch is 128 sequences. Its model scores these "
                "configurations anyway; ours refuses them, so our grid multiplies the batches "
                "by 64 ({valid_ours} of those 48 fit)."
            ),
        ),
        Published(
            key="efficiency",
            label=N_("Efficiency of each configuration"),
            tutorial=N_("efficiency=0.45 for every configuration (an input)"),
            why=N_(
                "Not an input here: the training model computes each layout's step "
                "(communication, pipeline bubble, recomputation), so MFU is a result and "
                "differs between configurations; a fixed efficiency would rank them only by "
                "their communication."
            ),
        ),
        Published(
            key="best",
            label=N_("Best configuration by throughput"),
            tutorial=N_("printed by the code; the page states no figure"),
            why=N_(
                "Ours, with the batches × 64 and no step limit. The front of tokens/s against "
                "step time holds {front} configurations: a larger batch buys tokens/s with a "
                "longer step, so the single best by tokens/s is only one end of the trade-off."
            ),
        ),
    ),
    exercises=(
        Exercise(
            "chapter_valid",
            N_("How many of the chapter's 48 configurations are valid on 8,192 GPUs?"),
            N_("dp = 8,192 ÷ (tp × pp): compare it with the chapter's global batches."),
        ),
        Exercise(
            "best8192",
            N_("At a global batch of 8,192, which layout gives the most tokens/s?"),
            N_("Choose only that batch and read the top of the ranking."),
            choices=(N_("tp 8 × pp 4"), N_("tp 4 × pp 4"), N_("tp 8 × pp 1"), N_("tp 4 × pp 2")),
        ),
    ),
    takeaway=N_(
        "Search the whole grid at once, apply the constraints, then rank; but keep the Pareto "
        "front, not only the winner: when goals conflict (tokens/s against step time, memory or "
        "cost), every configuration on the front is the best for some trade-off and every one "
        "off it is beaten by one on it. Check the grid itself first: a batch smaller than the "
        "data-parallel width is not a configuration at all."
    ),
)
