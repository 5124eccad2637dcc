"""The training scenarios (engine/scenarios/training.py): the typed form and the keyword form are
the same call, each object checks itself with the message users see, and `bind` routes every
keyword to the one object that declares it."""

from __future__ import annotations

import math
from dataclasses import fields, replace

import pandas as pd
import pytest

import engine
from engine.scenarios.bind import bind

RUN = {"gpus": 64, "global_batch_size": 512, "seq_len": 4096}
LAYOUT = {"tp": 8, "pp": 2, "micro_batch_size": 2, "zero": 1, "recompute": "selective"}
SEARCH = {"gpus": [32, 64], "global_batch_size": 256, "seq_len": 8192}
SPACE = {"tp": [2, 8], "pp": [1, 2], "micro_batch_size": [1, 2], "zero": [0, 1]}


def run(**changes) -> engine.TrainRun:
    return engine.TrainRun("Llama-3.1-70B", "H100", **(RUN | changes))


def same_frames(a: pd.DataFrame, b: pd.DataFrame) -> None:
    pd.testing.assert_frame_equal(a, b, check_exact=True)


def test_train_typed_equals_keywords():
    keywords = engine.train("Llama-3.1-70B", "H100", **RUN, **LAYOUT, price_per_gpu_hour=2.0)
    typed = engine.train(run(price_per_gpu_hour=2.0), engine.TrainLayout(**LAYOUT))
    assert typed.as_dict() == keywords.as_dict()  # exactly: the same kernel on the same numbers
    # 64 GPUs / (tp 8 · pp 2) = dp 4; 512 / (4 · 2) = 64 micro-batches per step
    assert typed["dp"] == 4 and typed["micro_batches"] == 64
    assert typed["price_per_gpu_hour_usd"] == 2.0


def test_an_object_adjusted_by_keywords_is_the_object_replaced():
    base = engine.train(run(), engine.TrainLayout(tp=4))
    adjusted = engine.train(run(), engine.TrainLayout(tp=4), tp=8, seq_len=2048)
    direct = engine.train(run(seq_len=2048), engine.TrainLayout(tp=8))
    assert adjusted.as_dict() == direct.as_dict() != base.as_dict()
    assert adjusted["tp"] == 8 and adjusted["seq_len"] == 2048


def test_keyword_form_by_name_only_still_works():
    # bench/bench_train.py passes model= and hardware= by name
    by_name = engine.train(model="Llama-3.1-70B", hardware="H100", **RUN, tp=8)
    assert by_name.as_dict() == engine.train(run(), engine.TrainLayout(tp=8)).as_dict()


def test_train_search_typed_equals_keywords():
    keywords = engine.train_search("Llama-3.1-8B", "H100", **SEARCH, **SPACE, rank_by="mfu")
    typed = engine.train_search(
        engine.TrainRun("Llama-3.1-8B", "H100", **SEARCH),
        engine.LayoutSpace(**SPACE),
        rank_by="mfu",
    )
    same_frames(typed, keywords)
    # 2 GPU counts × 2 tp × 2 pp × 2 micro-batch sizes × 2 ZeRO stages, and the defaults of
    # the fields left None: 4 cp (1, 2, 4, 8) × 4 vp (1-4) × 1 ep (dense) × 3 recompute modes
    every = engine.train_search(
        engine.TrainRun("Llama-3.1-8B", "H100", **SEARCH),
        engine.LayoutSpace(**SPACE),
        include_rejected=True,
    )
    assert len(every) == 2 * 2 * 2 * 2 * 2 * 4 * 4 * 1 * 3 and set(every["gpus"]) == {32, 64}


def test_a_search_row_is_train_of_its_layout():
    space = engine.LayoutSpace(**SPACE, recompute=["none"])
    ranked = engine.train_search(run(gpus=64), space)
    row = ranked.iloc[0]
    layout = engine.TrainLayout(
        **{k: int(row[k]) for k in ("tp", "pp", "cp", "vp", "ep", "micro_batch_size", "zero")},
        recompute=str(row["recompute"]),
    )
    assert engine.train(run(), layout)["tokens_per_s"] == row["tokens_per_s"]


def test_training_operators_typed_equals_keywords():
    keywords = engine.training_operators("Llama-3.1-8B", "H100", tp=4, seq_len=4096)
    typed = engine.training_operators(
        engine.TrainRun("Llama-3.1-8B", "H100", seq_len=4096), engine.TrainLayout(tp=4)
    )
    same_frames(typed, keywords)
    # the run's GPUs, global batch and the layout's pp, ZeRO and recompute change no operator
    whole = engine.training_operators(
        engine.TrainRun("Llama-3.1-8B", "H100", **(SEARCH | {"seq_len": 4096})),
        engine.TrainLayout(tp=4, pp=4, zero=1, recompute="full"),
    )
    same_frames(whole, keywords)


def test_scaling_overheads_typed_equals_keywords():
    keywords = engine.scaling_overheads("Llama-3.1-70B", "H100", [64, 1024], zero=1)
    failures = engine.Failures()  # the tutorial's 50,000 h MTTF, 60 s checkpoints, 30 days
    typed = engine.scaling_overheads(
        engine.TrainRun("Llama-3.1-70B", "H100", gpus=[64, 1024], seq_len=2048),
        engine.TrainLayout(tp=8, zero=1),
        failures,
    )
    same_frames(typed, keywords)
    # no global batch in the run: the tutorial's max(64, N) at each size
    assert typed["global_batch_size"].tolist() == [64, 1024]


def test_scaling_overheads_keeps_a_given_global_batch_and_failures():
    rows = engine.scaling_overheads(
        engine.TrainRun(
            "Llama-3.1-70B", "H100", gpus=[64, 128], global_batch_size=256, seq_len=2048
        ),
        engine.TrainLayout(tp=8, zero=1),
        failures=engine.Failures(checkpoint_s=600.0),
    )
    assert rows["global_batch_size"].tolist() == [256, 256]
    # MTBF = 50,000 / 128 = 390.6 h; T_opt = sqrt(2 · (600 / 3600) h · 390.6 h) = 11.41 h
    assert rows["checkpoint_interval_hours"].iloc[1] == pytest.approx(11.41, abs=0.01)
    keywords = engine.scaling_overheads(
        "Llama-3.1-70B", "H100", [64, 128], zero=1, global_batch_size=256, checkpoint_s=600.0
    )
    same_frames(rows, keywords)


@pytest.mark.parametrize(
    ("build", "match"),
    [
        (lambda: run(precision="int8"), "training precision must be one of bf16, fp16, fp8"),
        (lambda: run(attention="paged"), "attention must be one of flash, unfused"),
        (lambda: run(gpus=0), "gpus: expected a whole number from 1 to 1,000,000, got 0"),
        (lambda: run(gpus=[8, 0]), "gpus: expected a whole number"),
        (lambda: run(seq_len=0), "seq_len: expected a whole number"),
        (lambda: run(global_batch_size=2.5), "global_batch_size: expected a whole number"),
        (lambda: run(token_budget=-1.0), r"token_budget must be 1 to 1e\+17 tokens"),
        (lambda: run(price_per_gpu_hour=0), "price_per_gpu_hour must be a number of USD > 0"),
        (lambda: run(profile="nope"), "unknown training profile 'nope'"),
        (lambda: run(profile=engine.get_profile("trtllm")), "is a serving profile"),
        (lambda: run(assumptions=3), "assumptions must be an Assumptions, got int"),
        (lambda: run(catalog=3), "catalog must be a Catalog, got int"),
        (
            lambda: run(overrides={"activation_fraction": 0.2}),
            "the training model does not use 'activation_fraction'",
        ),
        (
            lambda: run(overrides={"overlap_fraction": 2.0}),
            "overlap_fraction must be a number from 0 to 1",
        ),
        (lambda: engine.TrainLayout(tp=0), "tp: expected a whole number from 1 to 1,024"),
        (lambda: engine.TrainLayout(zero=4), "zero must be one of 0, 1, 2, 3"),
        (lambda: engine.TrainLayout(recompute="some"), "recompute must be one of none, selective"),
        (lambda: engine.LayoutSpace(pp=[1, 2048]), "pp: expected a whole number from 1 to 1,024"),
        (lambda: engine.LayoutSpace(zero=[0, 5]), "zero must be one of 0, 1, 2, 3"),
        (lambda: engine.LayoutSpace(recompute=[]), "recompute: give at least one"),
        (lambda: engine.Failures(checkpoint_s=-1), "checkpoint_s: must be a positive number"),
        (lambda: engine.Failures(job_hours=math.inf), "job_hours: must be a positive number"),
    ],
)
def test_a_bad_field_gets_the_users_message_from_its_constructor(build, match):
    with pytest.raises(ValueError, match=match):
        build()


def test_the_entry_points_give_the_constructors_messages():
    with pytest.raises(ValueError, match="training precision must be one of bf16, fp16, fp8"):
        engine.train("Llama-3.1-8B", "H100", **RUN, precision="int8")
    with pytest.raises(ValueError, match="zero must be one of 0, 1, 2, 3"):
        engine.train_search("Llama-3.1-8B", "H100", **SEARCH, zero=[4])
    with pytest.raises(ValueError, match="checkpoint_s: must be a positive number"):
        engine.reliability(8, checkpoint_s=-1)


def test_a_run_missing_its_batch_or_cluster_is_refused_naming_what_to_give():
    with pytest.raises(ValueError, match="TrainRun: give seq_len"):
        engine.train("Llama-3.1-8B", "H100", gpus=8, global_batch_size=8)
    with pytest.raises(ValueError, match="TrainRun: give gpus, global_batch_size"):
        engine.train("Llama-3.1-8B", "H100", seq_len=2048)
    with pytest.raises(ValueError, match="TrainRun: give global_batch_size"):
        engine.train_search("Llama-3.1-8B", "H100", gpus=8, seq_len=2048)
    with pytest.raises(ValueError, match="TrainRun: give model, hardware"):
        engine.train()
    with pytest.raises(ValueError, match="gpus: one count for one training step, got 2"):
        engine.train(run(gpus=[32, 64]))


@pytest.mark.parametrize(
    "call",
    [
        lambda: engine.train("Llama-3.1-8B", "H100", **RUN, foo=1),
        lambda: engine.train_search("Llama-3.1-8B", "H100", **SEARCH, foo=1),
        lambda: engine.training_operators("Llama-3.1-8B", "H100", seq_len=4096, foo=1),
        lambda: engine.scaling_overheads("Llama-3.1-8B", "H100", [8], foo=1),
        lambda: engine.train(run(), engine.TrainLayout(), foo=1),
    ],
)
def test_an_unknown_keyword_is_refused_naming_it(call):
    with pytest.raises(ValueError, match="unknown assumption or argument 'foo'"):
        call()


def test_an_object_of_the_wrong_kind_is_refused():
    with pytest.raises(ValueError, match="layout: expected a TrainLayout, got LayoutSpace"):
        engine.train(run(), layout=engine.LayoutSpace())
    with pytest.raises(ValueError, match="gpus: given twice"):
        engine.scaling_overheads("Llama-3.1-8B", "H100", [8], gpus=[16])


def _one_value(cls, name: str):
    """A valid value of `cls`'s field `name` (a layout space takes its values as tuples)."""
    values = {"zero": 1, "recompute": "full", "precision": "fp16", "attention": "unfused"}
    values |= {"fp8_recipe": "current", "fp8_param_gather": True}
    values |= {"profile": "megatron", "token_budget": 1e9, "price_per_gpu_hour": 1.5}
    values |= {"gpu_mttf_hours": 1e4, "checkpoint_s": 30.0, "job_hours": 24.0}
    values |= {"recompute_modules": ("core_attn",)}  # one set, in a layout and a space alike
    values |= {"pp_schedule": "dualpipe", "cp_comm_type": "a2a"}
    value = values.get(name, 2)
    one_set = name == "recompute_modules"
    return (value,) if cls is engine.LayoutSpace and not one_set else value


ROUTED = [
    (kinds, cls, f.name)
    for kinds in (
        (engine.TrainRun, engine.TrainLayout),
        (engine.TrainRun, engine.LayoutSpace),
        (engine.TrainRun, engine.TrainLayout, engine.Failures),
    )
    for cls in kinds
    for f in fields(cls)
    if f.name not in ("model", "hardware", "assumptions", "overrides", "catalog")
]


@pytest.mark.parametrize(
    ("kinds", "cls", "name"),
    ROUTED,
    ids=[f"{'+'.join(k.__name__ for k in ks)}:{c.__name__}.{n}" for ks, c, n in ROUTED],
)
def test_bind_routes_each_keyword_to_the_object_that_declares_it(kinds, cls, name):
    value = _one_value(cls, name)
    given = {"seq_len": 1024} | {name: value}
    if name in ("fp8_recipe", "fp8_param_gather"):  # an fp8 run's
        given["precision"] = "fp8"
    objects = bind(("Llama-3.1-8B", "H100"), given, *kinds)
    got = objects[kinds.index(cls)]
    assert getattr(got, name) == value
    others = [
        o for k, o in zip(kinds, objects, strict=True) if k is not cls and k is not engine.TrainRun
    ]
    assert all(o is None for o in others)  # no other object was made from it


def test_bind_routes_assumption_names_to_the_runs_overrides():
    r, layout = bind(
        ("Llama-3.1-8B", "H100"),
        {"seq_len": 1024, "overlap_fraction": 0.5, "tp": 2},
        engine.TrainRun,
        engine.TrainLayout,
    )
    assert r.overrides == (("overlap_fraction", 0.5),) and layout.tp == 2
    result = engine.train(replace(r, gpus=8, global_batch_size=8), layout)
    assert result.as_dict()["assumptions"]["overlap_fraction"] == 0.5


def test_a_layout_space_sorts_and_dedupes_its_values():
    space = engine.LayoutSpace(tp=[8, 2, 2], zero=3, recompute=["full", "none"])
    assert space.tp == (2, 8) and space.zero == (3,) and space.recompute == ("none", "full")
    assert space.pp is None  # the search's defaults


def test_a_run_keeps_its_gpu_counts_in_order():
    assert run(gpus=[64, 32]).gpu_counts == (64, 32) and run().gpu_counts == (64,)
    assert run(gpus=64).gpus == 64 and run(profile=" Megatron").profile == "megatron"
