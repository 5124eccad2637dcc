"""AppTest tests of the training planner's "Reliability at scale" and "Pareto front" sections
(ui/train/reliability.py, ui/train/pareto.py): the figures are engine.fleet_reliability's and
engine.pareto_table's, formatted as the page does; the inputs are share-link parameters."""

from __future__ import annotations

import engine
from tests.conftest import chart_spec
from tests.test_page_train import cards, open_page, text
from ui.train import run as tr
from ui.words.format import fmt, pct

SMALL = {"model": "Llama-3.1-8B", "gpus": "512", "global_batch_size": "512", "seq_len": "4096"}
SMALL |= {"tp": "1,2,4,8", "pp": "1,2", "cp": "1", "vp": "1", "ep": "1"}
SMALL |= {"micro_batch_size": "1,2", "zero": "1", "recompute": "selective", "gpus_curve": "512"}


def test_reliability_cards_are_the_engines_and_the_tutorials_side_by_side():
    at = open_page(SMALL)
    shown = cards(at)
    # 512 H100, only the GPU counted by default: 50,000 h / 512 = 97.66 h (test_fleet_reliability)
    r = engine.fleet_reliability(gpus=512)
    assert shown["Fleet MTBF"] == fmt(r.mtbf_hours, "h") == "97.7 h"
    assert shown["GPU-only MTBF (tutorial 06)"] == fmt(50_000 / 512, "h")
    assert shown["Checkpoint every"] == fmt(r.checkpoint_interval_hours, "h")
    assert shown["Goodput"] == pct(r.goodput)
    table = next(d.value for d in at.dataframe if "Share of failures" in d.value.columns)
    assert len(table) == len(engine.FLEET_PARTS)
    assert table["Share of failures"].iloc[0] == pct(r.parts[0]["share"]) == pct(1.0)
    assert list(table["MTTF of one unit"])[1:] == ["not counted"] * 6


def test_reliability_inputs_are_link_parameters():
    query = SMALL | {"checkpoint_s": "600", "gpu_mttf_hours": "20000", "restart_s": "0"}
    at = open_page(query)
    r = engine.fleet_reliability(gpus=512, checkpoint_s=600, gpu_mttf_hours=20_000, restart_s=0)
    assert cards(at)["Fleet MTBF"] == fmt(r.mtbf_hours, "h")
    assert at.query_params["gpu_mttf_hours"] in ("20000", ["20000"])
    bad = open_page(SMALL | {"checkpoint_s": "-5"})
    assert "ignored 'checkpoint_s'" in text(bad.warning)  # named, the default used
    assert cards(bad)["Checkpoint every"] == fmt(
        engine.fleet_reliability(gpus=512).checkpoint_interval_hours, "h"
    )


def test_the_pareto_front_is_the_engines_and_limits_apply():
    at = open_page(SMALL | {"max_step_s": "100"})
    df = tr.search(
        engine.TrainRun("Llama-3.1-8B", "H100", gpus=512, global_batch_size=512, seq_len=4096),
        engine.LayoutSpace(
            tp=[1, 2, 4, 8],
            pp=[1, 2],
            cp=[1],
            vp=[1],
            ep=[1],
            micro_batch_size=[1, 2],
            zero=[1],
            recompute=["selective"],
        ),
        "tokens_per_s",
    )
    ranked = df[df["reason"].isna()]
    table = engine.pareto_table(
        ranked,
        {"step_time_s": "min", "memory_per_gpu_bytes": "min"},
        {"step_time_s": (None, 100.0)},
    )
    front = int(table["pareto"].sum())
    assert 1 <= front < len(table)
    words = " ".join(str(m.value) for m in at.markdown)
    assert f"**{front:,}** of the {len(table):,} configurations that fit are on the front" in words
    chart = next(c for c in at.get("plotly_chart") if "Pareto" in c.proto.spec)
    spec = chart_spec(chart)
    names = [t["name"] for t in spec["data"]]
    assert names == ["dominated", "outside the limits", "Pareto front"]
    assert len(spec["data"][2]["customdata"]) == front
    assert spec["data"][0]["marker"]["opacity"] < 1  # dominated points faded


def test_one_objective_is_refused_beside_the_field():
    at = open_page(SMALL | {"pareto": "step_time_s"})
    assert "ignored 'pareto'" in text(at.warning)  # the link's value is named, default used
    assert any("Pareto front" in c.proto.spec for c in at.get("plotly_chart"))
