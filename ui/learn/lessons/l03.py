"""Lesson 3, "KV-Cache: The Hidden Tax" (03_kv_cache.qmd)."""

from ui.learn.content import Exercise, Lesson, Published
from ui.words.i18n import N_

LESSON = Lesson(
    number="3",
    source="03_kv_cache.qmd",
    title=N_("The KV-Cache"),
    question=N_(
        "You deploy Llama-3 8B on an H100: 16 GB of weights, 64 GB left. Surely dozens of "
        "users fit? Every active user carries a **KV cache**: the keys and values of every "
        "token so far, in every layer, kept so attention need not recompute them. It grows "
        "linearly with the context and with the number of users, and at long context the "
        "cache, not the model, decides how many users fit."
    ),
    experiment=N_(
        "The chapter's sweep in the tutorial's LLM view (the whole model on one device): "
        "Llama-3.1-8B at a fixed batch, context lengths from 512 to 128K "
        "tokens: the weights and the KV cache against the usable memory (90 % of the "
        "capacity, vLLM's default). Pick the accelerator, the number of users and the "
        "KV-cache precision."
    ),
    published=(
        Published(
            key="per_token",
            label=N_("KV cache per token per user (self-check)"),
            tutorial=N_("131,072 bytes = 2 × 32 layers × 8 KV heads × 128 × 2 bytes"),
            why=N_("Agrees."),
        ),
        Published(
            key="long",
            label=N_("One user's cache at 128K tokens"),
            tutorial=N_('"can exceed the model weights"'),
            why=N_("Agrees: 131,072 B × 131,072 tokens against {weights} of weights."),
        ),
        Published(
            key="one_user",
            label=N_("Users that fit at 128K on an 80 GB H100"),
            tutorial=N_('"room for exactly one user" (the subtitle)'),
            why=N_(
                "A slip for Llama-3 8B: with 8 KV heads one 128K cache is 17.2 GB, so {users} "
                'users fit in the usable memory. "Exactly one" would hold without grouped-'
                "query attention (32 KV heads: 68.7 GB per user), the 4× overestimate the "
                "chapter itself warns about."
            ),
        ),
        Published(
            key="short",
            label=N_("Users at a 2K context on the H100"),
            tutorial=N_('"serves 64 users"'),
            why=N_(
                "More than that: at {short_kv} of cache each, the usable memory holds "
                "{short_users}."
            ),
        ),
    ),
    exercises=(  # numbered as the chapter numbers them
        Exercise(
            "llama70",
            N_("Exercise 1: Llama-3 70B at 4,096 tokens on an 80 GB H100: how many users fit?"),
            N_("Start with the weights: 70.6 B parameters × 2 bytes."),
            tolerance=0,
        ),
        Exercise(
            "h200",
            N_(
                "Exercise 2: how many Llama-3 8B users fit on an H200 (141 GB) at 128K tokens "
                "in fp16?"
            ),
            N_("Usable memory = 90 % of 141 GB; subtract the weights; divide by 17.2 GB."),
            tolerance=0,
        ),
        Exercise(
            "h200_int8",
            N_("And in int8 (weights and KV cache at 1 byte)?"),
            N_("Both the weights and each user's cache halve."),
            tolerance=0,
        ),
    ),
    takeaway=N_(
        "The KV cache grows with layers, KV heads, context and users. At short context it is "
        "negligible and the weights dominate; at long context one user's cache outweighs the "
        "model. The context length on a model card is a memory bill: paging the cache (vLLM's "
        "PagedAttention) wastes less of it, quantizing it halves it."
    ),
)
