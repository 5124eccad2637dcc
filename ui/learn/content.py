"""What a lesson is, as data: the chapter's question, its experiment, the figures the tutorial
publishes (with why ours agree or differ), exercises and the take-away.

Every text field is English marked with `N_` where it is written (ui/learn/lessons/); the page
shows it through `_()` (ui.words.i18n), so the catalogue holds every language. `{name}`
placeholders are filled with numbers the lesson's experiment formats (ui.words.format), the same
in every language.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Published:
    """One figure the chapter publishes, beside ours.

    Attributes:
        key: the experiment's name for our figure (`Outcome.ours[key]`).
        label: what the figure is.
        tutorial: the figure as the chapter writes it (quoted where it is prose).
        why: why ours agrees or differs (placeholders filled from `Outcome.values`).
    """

    key: str
    label: str
    tutorial: str
    why: str


@dataclass(frozen=True)
class Exercise:
    """A "try it" question whose answer the engine gives (`Outcome.answers[key]`).

    A number answer (`choices` empty) is right within `tolerance` (in `unit`, absolute); a
    choice answer is the index of the right choice.
    """

    key: str
    prompt: str
    hint: str
    unit: str = ""
    tolerance: float = 0.0
    choices: tuple[str, ...] = ()


@dataclass(frozen=True)
class Lesson:
    """One chapter of the tutorial chain (mlsysim/docs/tutorials/<source>)."""

    number: str
    source: str
    title: str
    question: str
    experiment: str
    published: tuple[Published, ...]
    exercises: tuple[Exercise, ...]
    takeaway: str


@dataclass
class Outcome:
    """What a lesson's experiment computed, for the page's common parts.

    Attributes:
        ours: our figure beside each published one (formatted text), by key.
        values: numbers (formatted text) for the placeholders of the lesson's texts.
        answers: each exercise's answer (a number in its unit, or a choice's index), by key.
        pages: the full pages that open this scenario: (label, page path, query).
        command: the equivalent CLI command (shown when a page does not exist yet).
    """

    ours: dict[str, str] = field(default_factory=dict)
    values: dict[str, str] = field(default_factory=dict)
    answers: dict[str, float] = field(default_factory=dict)
    pages: list[tuple[str, str, dict[str, str]]] = field(default_factory=list)
    command: str = ""
