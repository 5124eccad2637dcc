"""Lesson 8, "The $9M Question" (08_nine_million_dollar.qmd)."""

from ui.learn.content import Exercise, Lesson, Published
from ui.words.i18n import N_

LESSON = Lesson(
    number="8",
    source="08_nine_million_dollar.qmd",
    title=N_("The $9M question"),
    question=N_(
        "Chain-of-thought reasoning makes the model think in K steps of a few dozen tokens "
        "before it answers. Each step is decoding, the slow, memory-bound phase. What does "
        "K = 8 cost a service of 100 queries per second, in GPUs and in dollars a year? Is it "
        "an algorithm choice or a capital expense?"
    ),
    experiment=N_(
        "A large model (Llama-3.1-405B in fp8 on a node of 8 H100; the chapter's GPT-4 has no "
        "published shapes) answers a 2,048-token prompt after K steps of 50 tokens. The "
        "serving model gives the time of one query; each replica serves one query at a time, "
        "as the chapter assumes, so 100 queries/s need ⌈100 × time⌉ replicas. A year of their "
        "GPUs is priced by the cost-of-ownership model. Then route the easy share to "
        "Llama-3.1-70B at K = 1."
    ),
    published=(
        Published(
            key="multiplier",
            label=N_("Time per query, K = 8 ÷ K = 1"),
            tutorial=N_('"7.6x"'),
            why=N_(
                "Ours is lower: the prefill of the 2,048-token prompt is {ttft_share} of a K = 1 "
                "query in our serving model, a fixed cost that K does not multiply."
            ),
        ),
        Published(
            key="annual",
            label=N_("A year at 100 queries/s, K = 1 to K = 8"),
            tutorial=N_('"from $1.2M to $9.1M annually"'),
            why=N_(
                "Not reproducible from the chapter: its fleet gives one GPU to each query in "
                "flight, but a model of this size needs a node of 8 H100 per replica even in "
                "fp8 ({gpus_k8} GPUs at K = 8), and its cost model's inputs are not printed. "
                "Ours: the cost-of-ownership model's defaults, shown on the training planner."
            ),
        ),
        Published(
            key="routing",
            label=N_("Routing 70 % to the small model, 30 % to K = 8"),
            tutorial=N_('"routing contains it but does not make the capital planning go away"'),
            why=N_(
                "Agrees in kind; the chapter prints no figure. Each share gets a fleet of its "
                "own here, where the chapter averages the query times over one fleet."
            ),
        ),
        Published(
            key="selfcheck",
            label=N_("Decode time of K = 8 steps of 50 tokens"),
            tutorial=N_('"8 x 50 x 5ms = 2000ms" (at an ITL of 5 ms)'),
            why=N_("The same arithmetic at our time per output token, {tpot}."),
        ),
    ),
    exercises=(
        Exercise(
            "k16",
            N_("Does K = 16 take 16 times as long as K = 1?"),
            N_("One prefill per query, however many steps follow it."),
            choices=(N_("Less than 16 times"), N_("16 times or more")),
        ),
        Exercise(
            "gpus8",
            N_("How many H100 does K = 8 need at 100 queries/s?"),
            N_("⌈100 × time per query⌉ replicas of 8 GPUs."),
        ),
    ),
    takeaway=N_(
        "Reasoning steps are decode time, and decode time is GPUs: the fleet grows almost "
        "linearly with K, less only by the fixed prefill. Adding reasoning is a budget "
        "decision; routing the easy queries to a smaller model is how the budget is contained."
    ),
)
