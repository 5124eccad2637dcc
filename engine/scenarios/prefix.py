"""A shared prompt prefix: a system prompt (or few-shot examples) that many requests begin with.

`Prefix(tokens, share)`: a fraction `share` of the requests (each drawn independently, seeded)
start with the same `tokens`-token prefix, counted inside their input tokens (a request shorter
than the prefix carries all of its input but the last token). With prefix caching (vLLM's
automatic prefix caching, SGLang's RadixAttention, Zheng et al. 2024, arXiv:2312.07104;
TensorRT-LLM's KV-cache reuse) the KV blocks of a computed prefix stay in the pool, so a later
request that carries it skips their prefill (engine/load/prefix.py). docs/model.md, "Prefix
caching".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from engine.checks import MAX_TOKENS, check_whole

KEYWORDS = ("prefix_tokens", "prefix_share")


def check_share(value: object) -> float:
    ok = isinstance(value, int | float) and not isinstance(value, bool)
    if not (ok and 0.0 <= value <= 1.0):
        raise ValueError(
            f"prefix_share: expected the fraction of requests carrying the prefix, from 0 to 1, "
            f"got {value!r}"[:200]
        )
    return float(value)


@dataclass(frozen=True, slots=True)
class Prefix:
    """`tokens` shared prompt tokens carried by a fraction `share` of the requests."""

    tokens: int
    share: float = 1.0

    ARG: ClassVar[str] = "prefix"

    def __post_init__(self) -> None:
        object.__setattr__(
            self, "tokens", check_whole(self.tokens, "prefix_tokens", high=MAX_TOKENS)
        )
        object.__setattr__(self, "share", check_share(self.share))

    def as_dict(self) -> dict[str, object]:
        return {"prefix_tokens": self.tokens, "prefix_share": self.share}


def prefix_of(values: dict) -> Prefix | None:
    """The keyword form (`prefix_tokens`, `prefix_share`), popped from `values`; None when no
    prefix (or 0 tokens) is given."""
    tokens, share = values.pop("prefix_tokens", None), values.pop("prefix_share", None)
    if tokens is None or tokens == 0:
        if share not in (None, 1.0, 1) and tokens is None:
            raise ValueError("prefix_share: give prefix_tokens too")
        return None
    return Prefix(tokens=tokens, share=1.0 if share is None else share)
