"""The engine's public functions stay short to call: at most MAX_PARAMETERS parameters each.

A scenario object (a Deployment, a TrainRun, ...) counts as one parameter, and so do `*args` and
`**fields` (the keyword form scripts and the CLI use, mapped onto the objects in one place:
engine/scenarios/bind.py). The public classes are records (specs, results, the scenarios
themselves) whose fields are their point, so they are not counted here.
"""

from __future__ import annotations

import inspect

import pytest

import engine

MAX_PARAMETERS = 8
FUNCTIONS = sorted(n for n in engine.__all__ if inspect.isfunction(getattr(engine, n)))


def parameter_count(function) -> int:
    """Parameters as a caller sees them: *args and **kwargs count one each."""
    return len(inspect.signature(function).parameters)


def test_the_count_takes_star_args_and_keywords_as_one_each():
    def f(a, b, /, c=None, *args, d=1, **fields):
        return a, b, c, args, d, fields

    assert parameter_count(f) == 6


def test_the_training_and_serving_entry_points_are_counted():
    names = {"train", "train_search", "training_operators", "scaling_overheads", "serve"}
    assert names | {"serve_load", "max_rate", "load_grid"} <= set(FUNCTIONS)


@pytest.mark.parametrize("name", FUNCTIONS)
def test_no_public_function_takes_more_than_eight_parameters(name):
    count = parameter_count(getattr(engine, name))
    assert count <= MAX_PARAMETERS, f"engine.{name} takes {count} parameters"
