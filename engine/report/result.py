"""One result of the engine's scalar calls (`serve`, `train`): its values by name, the
assumptions used and the warnings, and the CLI's JSON object (`as_dict()`, a contract)."""

from __future__ import annotations

from dataclasses import dataclass

from engine.report.messages import Message


@dataclass(frozen=True, slots=True)
class Result:
    """`values` holds the result's keys (SI-scaled as named; a value the engine says in words
    is a Message); `result["key"]` reads one. `warnings`: what the engine says beside them."""

    values: dict
    assumptions: dict
    warnings: tuple[Message, ...]

    def __getitem__(self, key: str):
        return self.values[key]

    def as_dict(self) -> dict[str, object]:
        """The JSON object: every message as its English text."""
        values = {k: str(v) if isinstance(v, Message) else v for k, v in self.values.items()}
        return values | {
            "assumptions": dict(self.assumptions),
            "warnings": [str(w) for w in self.warnings],
        }
