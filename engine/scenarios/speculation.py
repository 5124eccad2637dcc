"""Speculative decoding settings: how a deployment drafts tokens and how many are accepted.

Speculative decoding (Leviathan et al., "Fast Inference from Transformers via Speculative
Decoding", ICML 2023, arXiv:2211.17192; Chen et al. 2023, arXiv:2302.01318): a cheap drafter
proposes K tokens, the served model checks them all in one forward pass of K + 1 positions,
and keeps the longest prefix it agrees with plus one token of its own. With a per-position
acceptance rate α (each drafted token accepted with probability α, given the ones before it
were), a pass yields on average

    L = 1 + α + α² + … + α^K = (1 − α^(K+1)) / (1 − α)      tokens (the bonus token included)

(Leviathan et al., eq. 1). `acceptance` is α when below 1, or L itself (1 to K + 1) when at
least 1, as serving stacks report it ("mean acceptance length").

Methods and their cited defaults (`METHODS`: tokens K, acceptance α):

- `draft`: a smaller model of the same family drafts (Leviathan et al. 2023: α from 0.62 to
  0.75 for T5-small drafting T5-XXL, Table 3); K = 4, α = 0.6. Needs `draft_model`.
- `eagle`: an EAGLE head, one decoder layer over the served model's features and its LM head
  (Li et al., "EAGLE", ICML 2024, arXiv:2401.15077, who report acceptance rates of about 0.7
  to 0.8 per position on MT-bench; EAGLE-3, arXiv:2503.01840); K = 3, α = 0.7.
- `mtp`: multi-token prediction modules trained with the model (DeepSeek-V3 technical report,
  arXiv:2412.19437, §5.4.3: the second token is accepted 85 % to 90 % of the time); one
  module, K = 1, α = 0.85.
- `ngram`: prompt lookup (Saxena 2023, github.com/apoorvumang/prompt-lookup-decoding; vLLM's
  `ngram` method): drafts copied from the prompt, free to propose, accepted only where the
  output repeats the input; K = 3, α = 0.5, an assumption to set per workload (no general
  figure is published: it ranges from near 0 in open chat to most tokens in code edits).

docs/model.md, "Speculative decoding".
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

from engine.checks import check_whole

METHODS = {  # method: (default K, default α)
    "draft": (4, 0.6),
    "eagle": (3, 0.7),
    "mtp": (1, 0.85),
    "ngram": (3, 0.5),
}
MAX_SPEC_TOKENS = 16  # drafted tokens per pass (vLLM's examples use 1 to 8)
KEYWORDS = ("spec_method", "spec_tokens", "spec_acceptance", "draft_model")


def accepted_length(alpha: float, k: int) -> float:
    """Mean tokens a verify pass yields: (1 − α^(K+1)) / (1 − α), the bonus token included."""
    if alpha >= 1.0:
        return float(k + 1)
    return (1.0 - alpha ** (k + 1)) / (1.0 - alpha)


def check_method(value: object) -> str:
    if not isinstance(value, str) or value.strip().lower() not in METHODS:
        raise ValueError(f"spec_method: expected one of {', '.join(METHODS)}, got {value!r}"[:200])
    return value.strip().lower()


def check_acceptance(value: object, k: int) -> float:
    """A per-position rate in (0, 1), or a mean accepted length from 1 to K + 1."""
    ok = isinstance(value, int | float) and not isinstance(value, bool)
    if not (ok and math.isfinite(value) and 0 < value <= k + 1):
        raise ValueError(
            f"spec_acceptance: expected a per-position rate above 0 and below 1, or a mean "
            f"accepted length from 1 to {k + 1} (spec_tokens + 1), got {value!r}"[:200]
        )
    return float(value)


@dataclass(frozen=True, slots=True)
class Speculation:
    """Speculative decoding: `method`, `tokens` drafted per pass (K), `acceptance` (a rate α
    below 1, or a mean accepted length L ≥ 1; None: the method's default) and, for `draft`,
    the drafting model's catalogue id."""

    method: str = "eagle"
    tokens: int | None = None
    acceptance: float | None = None
    draft_model: str | None = None

    ARG: ClassVar[str] = "speculation"

    def __post_init__(self) -> None:
        method = check_method(self.method)
        object.__setattr__(self, "method", method)
        k_default, a_default = METHODS[method]
        k = k_default if self.tokens is None else self.tokens
        k = check_whole(k, "spec_tokens", high=MAX_SPEC_TOKENS)
        object.__setattr__(self, "tokens", k)
        a = a_default if self.acceptance is None else self.acceptance
        object.__setattr__(self, "acceptance", check_acceptance(a, k))
        if method == "draft":
            ok = isinstance(self.draft_model, str) and 0 < len(self.draft_model.strip()) <= 100
            if not ok:
                raise ValueError("draft_model: the draft method needs a model id (--draft-model)")
        elif self.draft_model is not None:
            raise ValueError(f"draft_model: only the draft method takes one, not {method}")

    @property
    def mean_accepted(self) -> float:
        """L, tokens per verify pass (the bonus token included)."""
        if self.acceptance >= 1.0:
            return self.acceptance
        return accepted_length(self.acceptance, self.tokens)

    def as_dict(self) -> dict[str, object]:
        return {
            "spec_method": self.method,
            "spec_tokens": self.tokens,
            "spec_acceptance": self.acceptance,
            "draft_model": self.draft_model,
        }


def speculation_of(values: dict) -> Speculation | None:
    """The keyword form (`spec_method`, `spec_tokens`, `spec_acceptance`, `draft_model`),
    popped from `values`; None when no method is named."""
    given = {k: values.pop(k) for k in KEYWORDS if k in values}
    method = given.get("spec_method")
    if method is None or (isinstance(method, str) and method.strip().lower() in ("", "off")):
        extra = [k for k, v in given.items() if k != "spec_method" and v is not None]
        if extra:
            raise ValueError(f"{extra[0]}: give spec_method too (draft, eagle, mtp or ngram)")
        return None
    return Speculation(
        method=method,
        tokens=given.get("spec_tokens"),
        acceptance=given.get("spec_acceptance"),
        draft_model=given.get("draft_model"),
    )
