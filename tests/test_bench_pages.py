"""bench/bench_pages.py's first-chart summary: the paired ratio keeps a busy spell, which slows
the minimal page and the app's page alike, out of the figure it reports."""

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
spec = importlib.util.spec_from_file_location("bench_pages", ROOT / "bench" / "bench_pages.py")
bench_pages = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bench_pages)


def test_paired_ratio_divides_each_round_by_that_rounds_minimal_time():
    # round 2 is a busy spell: both pages take twice as long
    times = {"min": [1000.0, 2000.0, 1000.0], "page": [1200.0, 2400.0, 1500.0]}
    r = bench_pages.ratios(times, "min")["page"]
    # medians: page 1500, minimal 1000 -> 1.5; per round 1.2, 1.2, 1.5 -> median 1.2
    assert r["ratio"] == pytest.approx(1.5)
    assert r["paired_ratio"] == pytest.approx(1.2)
    # statistics.quantiles (exclusive) of 1.2, 1.2, 1.5: q1 = 1.2, q3 = 1.5
    assert r["paired_iqr"] == pytest.approx([1.2, 1.5])
    assert bench_pages.ratios(times, "min")["min"]["paired_ratio"] == pytest.approx(1.0)


def test_rounds_must_pair_up():
    with pytest.raises(ValueError):
        bench_pages.ratios({"min": [1.0, 2.0], "page": [1.0]}, "min")


def test_every_page_is_paired_with_solve_in_the_same_rounds_too():
    times = {"min": [1000.0, 2000.0], "/solve": [2000.0, 4000.0], "/load": [3000.0, 4400.0]}
    r = bench_pages.ratios(times, "min")
    # /load over /solve per round: 1.5 and 1.1 -> median 1.3 (the middle of two)
    assert r["/load"]["versus_solve"]["paired_ratio"] == pytest.approx(1.3)
    assert r["/load"]["paired_ratio"] == pytest.approx((3.0 + 2.2) / 2)  # over the minimal page
    assert "versus_solve" not in r["/solve"] and "versus_solve" in r["min"]
