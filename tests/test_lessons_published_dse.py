"""Lesson 12's figures ("Design-space exploration", 12_design_space_exploration.qmd) pinned
against the chapter: the sentence quoted, the arithmetic beside it, and the engine's figure the
lesson shows; where ours differ, ours are pinned and the reason stated (ui/learn/lessons/l12.py).
Also the reliability figures of the full-stack audit chapter (12_full_stack_audit.qmd) that the
fleet model reproduces."""

import pytest

import engine
from ui.learn import dse


def test_12_the_chapters_grid_has_48_configurations_and_none_is_valid_on_8192_gpus():
    # "Tests all 4 * 4 * 3 = 48 combinations": batch (16, 32, 64, 128) × tp (1, 2, 4, 8) × pp
    # (1, 2, 4). On Frontier_8K (1,024 DGX H100 = 8,192 GPUs) dp = 8,192 / (tp · pp) ≥ 8,192 /
    # 32 = 256, and every replica needs a whole sequence per step: 128 < 256, so the chapter's
    # "top candidates" do not exist in our model; every one breaks the whole-micro-batch rule.
    grid = dse.chapter_grid()
    assert len(grid) == 4 * 4 * 3 == 48
    assert int(grid["reason"].isna().sum()) == 0
    assert {r.code for r in grid["reason"]} == {"micro_batches_not_whole"}
    assert (grid["dp"] >= 256).all() and grid["global_batch_size"].max() == 128


def test_12_our_grid_is_the_chapters_batches_times_64():
    # Batches 1,024 ... 8,192 (the chapter's × 64). Rejected (24 of 48), by hand:
    # - batch < dp (= 8,192 / (tp·pp)): tp·pp ≤ 4 at 1,024 (6 layouts), tp·pp ≤ 2 at 2,048 (3),
    #   tp·pp = 1 at 4,096 (1) = 10;
    # - memory: with tp·pp = 4 the 16-bit weights and gradients alone are 4 B × 70.6e9 / 4 =
    #   70.6 GB per GPU, with activations beyond the usable ~77 GB of an 80 GB H100: the other
    #   tp·pp ≤ 4 layouts at 2,048 (3), 4,096 (5) and 8,192 (6) = 14.
    grid = dse.grid((1024, 2048, 4096, 8192))
    assert len(grid) == 48
    rejected = grid[grid["reason"].notna()]
    assert len(rejected) == 24
    assert ((rejected["tp"] * rejected["pp"]) <= 4).all()
    valid = grid[grid["reason"].isna()]
    assert ((valid["tp"] * valid["pp"]) >= 8).all()


def test_12_the_best_by_throughput_and_the_front():
    # The chapter prints its best configuration from code and states no figure. Ours (the
    # engine's step, not a fixed efficiency of 0.45): tp 4 × pp 4 at batch 8,192, 6.97 M
    # tokens/s, MFU 37.2 %: 8,192 × 2,048 tokens in a 2.408 s step = 6.966e6 tokens/s.
    table = dse.explored((1024, 2048, 4096, 8192), None)
    best = table.iloc[0]
    assert (int(best["tp"]), int(best["pp"]), int(best["global_batch_size"])) == (4, 4, 8192)
    assert best["tokens_per_s"] == pytest.approx(8192 * 2048 / best["step_time_s"])
    assert best["tokens_per_s"] == pytest.approx(6.97e6, rel=0.005)
    assert best["mfu"] == pytest.approx(0.372, abs=0.001)
    # The MFU is a result, not an input: it spans 8 % to 37 % over the 24 valid layouts.
    assert table["mfu"].min() < 0.1 < 0.3 < table["mfu"].max()
    # The front of tokens/s (max) against step time (min): the fastest step of each batch when
    # it also beats every smaller batch's throughput; 4 configurations, one per batch.
    front = table[table["pareto"]]
    assert len(front) == 4
    assert sorted(front["global_batch_size"]) == [1024, 2048, 4096, 8192]
    assert front.sort_values("step_time_s")["tokens_per_s"].is_monotonic_increasing


def test_12_the_step_limit_removes_configurations_before_the_front():
    table = dse.explored((1024, 2048, 4096, 8192), 2.0)
    assert (table.loc[table["feasible"], "step_time_s"] <= 2.0).all()
    assert not table.loc[table["pareto"], "global_batch_size"].eq(8192).any()  # ≥ 2.4 s each


def test_full_stack_audit_reliability_figures():
    # 12_full_stack_audit.qmd: 64 DGX H100 (512 GPUs), a 30-day job, checkpoint_time_s=120;
    # the chapter prints the solver's MTBF but no number in its text. Ours, the GPU counted by
    # default: λ = 512 / 50,000 per hour, MTBF = 97.66 h; Young-Daly with δ = 120 s:
    # sqrt(2 × (120 / 3,600) × 97.66) = 2.552 h; P(≥ 1 failure in 720 h) = 1 − e^(−7.373).
    r = engine.fleet_reliability(gpus=512, checkpoint_s=120)
    assert r.mtbf_hours == pytest.approx(50_000 / 512)
    assert r.checkpoint_interval_hours == pytest.approx(2.552, abs=0.001)
    assert r.failure_probability == pytest.approx(0.99937, abs=1e-5)
