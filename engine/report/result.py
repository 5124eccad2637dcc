"""One result of the engine's scalar calls (`serve`, `train`): its values by name, the
assumptions used and the warnings, and the CLI's JSON object (`as_dict()`, a contract)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Result:
    """`values` holds the result's keys (SI-scaled as named); `result["key"]` reads one."""

    values: dict
    assumptions: dict
    warnings: tuple[str, ...]

    def __getitem__(self, key: str):
        return self.values[key]

    def as_dict(self) -> dict[str, object]:
        return dict(self.values) | {
            "assumptions": dict(self.assumptions),
            "warnings": list(self.warnings),
        }
