"""Lesson 1, "The Memory Wall" (01_memory_wall.qmd)."""

from ui.learn.content import Exercise, Lesson, Published
from ui.words.i18n import N_

LESSON = Lesson(
    number="1",
    source="01_memory_wall.qmd",
    title=N_("The Memory Wall"),
    question=N_(
        "NVIDIA's H100 has 3.2× the A100's peak FLOP/s. Does upgrading make inference 3.2× "
        "faster? Not for the workloads that matter most in production: a **memory-bound** "
        "workload speeds up by the **memory bandwidth** ratio (about 1.7×), whatever the "
        "compute. The binding constraint decides which spec matters, and you can know it "
        "before spending a dollar."
    ),
    experiment=N_(
        "The chapter's experiment: Llama-3 8B in the whole-model view, A100 against H100, "
        "batch sizes 1 to 256. The first chart is the H100's speedup over the A100 at every "
        "batch; the roofline shows both operating points at the batch you pick. Switch to "
        "ResNet-50, a model that does cross the ridge, to see the speedup climb from the "
        "bandwidth ratio towards the FLOP/s ratio."
    ),
    published=(
        Published(
            key="ratios",
            label=N_("H100 ÷ A100: peak fp16 and bandwidth"),
            tutorial=N_("3.2× and 1.7× (989 vs 312 TFLOP/s; 3.35 vs 2.0 TB/s)"),
            why=N_(
                "Same datasheets: {flops} and {bandwidth}. The catalogue keeps the A100's "
                "2.039 TB/s, so the bandwidth ratio is 1.64×, not the rounded 1.7×."
            ),
        ),
        Published(
            key="latency",
            label=N_("Llama-3 8B at batch 1: A100 / H100"),
            tutorial=N_("8.0 ms / 4.8 ms (the chapter's sanity check: 16 GB ÷ bandwidth)"),
            why=N_(
                "The sanity check counts the weights only. The engine adds the tutorial's "
                "activation traffic (10 % of the weights: 17.7 GB in all) and the fixed "
                "overhead (32 layers × 10 µs + dispatch)."
            ),
        ),
        Published(
            key="speedup",
            label=N_("Speedup at batch 1"),
            tutorial=N_("≈ 1.7× (8.0 / 4.8 = 1.67×)"),
            why=N_(
                "Both memory-bound, so the speedup follows the bandwidth; a little below it "
                "because the fixed overhead does not shrink on a faster GPU."
            ),
        ),
        Published(
            key="large_batch",
            label=N_("Speedup once compute-bound"),
            tutorial=N_("up to 3.2× (the FLOP/s ratio)"),
            why=N_(
                "Not for Llama-3 8B in this view: each extra sample moves another 10 % of the "
                "weights (the tutorial's activation rule), so its intensity stays near 1 "
                "FLOP/byte and it never crosses the ridge ({llama_256} at batch 256). "
                "ResNet-50 does cross it: {resnet_256} at batch 256."
            ),
        ),
    ),
    exercises=(
        Exercise(
            "b200",
            N_(
                "Exercise 1: Llama-3 8B at batch 1, H100 → B200 (about 8 TB/s, 2,250 TFLOP/s): "
                "what speedup (×)?"
            ),
            N_(
                "Memory-bound: compare bandwidths (3.35 → 8 TB/s), then remember the fixed "
                "overhead."
            ),
            unit="×",
            tolerance=0.05,
        ),
        Exercise(
            "never",
            N_(
                "Exercise 2: in this whole-model view, does Llama-3 8B on the A100 turn "
                "compute-bound at any batch up to 512?"
            ),
            N_(
                "Look at the intensity at batch 1 and 256: the weights read for each extra "
                "sample grow as fast as its FLOPs."
            ),
            choices=(N_("Yes"), N_("No")),
        ),
    ),
    takeaway=N_(
        "Speedup depends on the regime: memory-bound workloads scale with the bandwidth ratio, "
        "compute-bound ones with the FLOP/s ratio. Compute has grown faster than bandwidth "
        "across generations, so the ridge keeps rising and more workloads are memory-bound on "
        "newer hardware: the memory wall."
    ),
)
