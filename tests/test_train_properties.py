"""Properties of the training model that must hold for any configuration (hypothesis), and of
the search: every ranked row fits and they are sorted, and each row is `train` exactly."""

import math

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import engine
from engine.training import report

MODELS = ["Llama-3.1-8B", "Llama-3.2-1B", "Qwen2.5-7B", "Mixtral-8x7B", "Gemma-2-9B"]
HARDWARE = ["A100", "H100", "B200"]
SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _train(**kw):
    try:
        return engine.train(**kw)
    except ValueError:
        return None  # a rule the configuration breaks (tested elsewhere)


@SETTINGS
@given(
    model=st.sampled_from(MODELS),
    hw=st.sampled_from(HARDWARE),
    tp=st.sampled_from([1, 2, 4, 8]),
    pp=st.sampled_from([1, 2, 4]),
    dp=st.sampled_from([1, 2, 4, 8]),
    zero=st.sampled_from([0, 1, 2, 3]),
    recompute=st.sampled_from(["none", "selective", "full"]),
    m=st.sampled_from([1, 4, 16]),
)
def test_more_data_parallelism_costs_at_most_its_communication(
    model, hw, tp, pp, dp, zero, recompute, m
):
    """Doubling dp (and the global batch, so each replica's work is the same) slows the step by
    no more than the communication of the larger run: per-GPU throughput drops only by that."""
    common = dict(
        model=model, hardware=hw, tp=tp, pp=pp, zero=zero, recompute=recompute, seq_len=4096, ep=1
    )
    small = _train(gpus=tp * pp * dp, global_batch_size=dp * m, **common)
    large = _train(gpus=tp * pp * dp * 2, global_batch_size=2 * dp * m, **common)
    if small is None or large is None:
        return
    for same in ("compute_s", "overhead_s"):  # each replica's work is unchanged
        assert large[same] == pytest.approx(small[same], rel=1e-12)
    assert large["optimizer_s"] <= small["optimizer_s"] * (1 + 1e-12)  # ZeRO shards it further
    # what grows is communication, and the pipeline bubble it lengthens (a stage send that
    # now crosses nodes is paid in every bubble slot too)
    bubble = large["bubble_s"] - small["bubble_s"]
    assert bubble >= -1e-12
    slower = large["step_time_s"] - small["step_time_s"]
    assert slower <= large["comm_exposed_s"] + bubble + 1e-9 * small["step_time_s"]
    floor = (
        small["tokens_per_s_per_gpu"]
        * small["step_time_s"]
        / (small["step_time_s"] + large["comm_exposed_s"] + bubble)
    )
    assert large["tokens_per_s_per_gpu"] >= floor * (1 - 1e-12)


@SETTINGS
@given(
    model=st.sampled_from(MODELS),
    hw=st.sampled_from(HARDWARE),
    tp=st.sampled_from([1, 2, 8]),
    zero=st.sampled_from([0, 1, 3]),
    attention=st.sampled_from(["flash", "unfused"]),
    b=st.sampled_from([1, 2, 4]),
    seq=st.sampled_from([1024, 4096]),
)
def test_memory_grows_with_micro_batch_and_shrinks_with_recompute(
    model, hw, tp, zero, attention, b, seq
):
    kw = dict(
        model=model,
        hardware=hw,
        gpus=8 * tp,
        tp=tp,
        zero=zero,
        seq_len=seq,
        global_batch_size=64,
        attention=attention,
    )
    mem = {}
    for mode in ("none", "selective", "full"):
        for batch in (b, 2 * b):
            r = _train(micro_batch_size=batch, recompute=mode, **kw)
            if r is None:
                return
            mem[mode, batch] = r["memory_per_gpu_bytes"]
        assert mem[mode, 2 * b] >= mem[mode, b]  # more sequences per micro-batch
    for batch in (b, 2 * b):
        assert mem["none", batch] >= mem["selective", batch]
        if attention == "flash":  # rebuilding one unfused layer can outweigh what is saved
            assert mem["selective", batch] >= mem["full", batch]


SEARCH = dict(
    model="Llama-3.1-8B", hardware="H100", gpus=[32, 64], global_batch_size=256, seq_len=8192
)


@pytest.fixture(scope="module")
def searched():
    return engine.train_search(**SEARCH, include_rejected=True)


def test_search_ranks_only_what_fits_best_first(searched):
    ranked = searched[searched["reason"].isna()]  # no rule broken
    assert len(ranked) > 50 and ranked["fits_in_memory"].all()
    assert ranked["tokens_per_s"].is_monotonic_decreasing
    assert list(ranked.index) == list(range(len(ranked)))  # the ranked rows come first
    rejected = searched[searched["reason"].notna()]
    assert len(rejected) and all(isinstance(r, engine.Message) for r in rejected["reason"])
    too_big = rejected[[r.code == "does_not_fit_in_memory" for r in rejected["reason"]]]
    assert len(too_big) and {str(r) for r in too_big["reason"]} == {"does not fit in memory"}
    assert (too_big["memory_per_gpu_bytes"] > too_big["usable_memory_bytes"]).all()


def test_search_ranks_by_cost_and_mfu():
    by_cost = engine.train_search(**SEARCH, rank_by="cost", zero=[1], recompute=["none"])
    assert by_cost["cost_to_train_usd"].is_monotonic_increasing
    by_mfu = engine.train_search(**SEARCH, rank_by="mfu", zero=[1], recompute=["none"])
    assert by_mfu["mfu"].is_monotonic_decreasing
    with pytest.raises(ValueError, match="rank_by must be one of"):
        engine.train_search(**SEARCH, rank_by="speed")


@settings(max_examples=25, deadline=None)
@given(st.data())
def test_a_search_row_is_train_exactly(searched, data):
    row = searched.iloc[data.draw(st.integers(0, len(searched) - 1))]
    kw = {
        k: int(row[k]) for k in ("gpus", "tp", "pp", "cp", "vp", "ep", "micro_batch_size", "zero")
    }
    try:
        result = engine.train(
            SEARCH["model"],
            SEARCH["hardware"],
            recompute=row["recompute"],
            global_batch_size=256,
            seq_len=8192,
            **kw,
        )
    except ValueError as exc:  # a rejected row: the same rule
        assert isinstance(row["reason"], engine.Message) and str(row["reason"]) in str(exc)
        return
    if pd.isna(row["reason"]):  # valid: no rule broken
        assert result.values["fits_in_memory"]
    else:  # too big: train answers with the numbers and says so, the search ranks it last
        assert row["reason"].code == "does_not_fit_in_memory"
        assert not result.values["fits_in_memory"]
        shortfall = {kind.code for kind in report.MEMORY_SHORTFALL.values()}
        assert any(w.code in shortfall for w in result.warnings)
    for key, value in result.values.items():  # the model FLOPs definition: the same Message
        got = row[key]
        if value is None:  # a 16-bit run's fp8_recipe: null in both
            assert pd.isna(got), key
        elif isinstance(value, float) and math.isnan(value):
            assert math.isnan(got), key
        else:
            assert got == value, key  # exactly: the same kernel on the same numbers


def test_search_refuses_too_many_configurations():
    with pytest.raises(ValueError, match="configurations: at most"):
        engine.train_search(
            **SEARCH, micro_batch_size=list(range(1, 1001)), tp=[1, 2, 4, 8], pp=list(range(1, 33))
        )
