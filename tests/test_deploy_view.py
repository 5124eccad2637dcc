"""Multi-device deployments on Compare through the serving model (ui.compare.deploy)."""

import pytest

import engine
from ui.compare import deploy as dv
from ui.compare.deployments import Deployment

CAT = engine.default_catalog()
TUTORIAL = engine.get_profile("tutorial")
DEPS = [Deployment("H100", 8), Deployment("MI300X", 4), Deployment("JetsonAGXOrin")]
TOKENS = {"input_tokens": 1024, "output_tokens": 256}


@pytest.fixture(scope="module")
def df():
    return dv.frame(
        "Llama-3.1-70B",
        DEPS,
        CAT,
        batches=[1, 8],
        tokens=TOKENS,
        precision="fp16",
        profile=TUTORIAL,
        overrides={"efficiency": 0.5, "activation_fraction": 0.1},
    )


def test_each_deployment_is_the_serving_models_figure(df):
    assert (
        df["deployment"].tolist()
        == ["8xH100/tp8"] * 2 + ["4xMI300X/tp4"] * 2 + ["1xJetsonAGXOrin/tp1"] * 2
    )
    for d in DEPS:
        one = engine.serve(
            "Llama-3.1-70B",
            d.hardware,
            tp=d.tp,
            pp=d.pp,
            batch_size=8,
            profile=TUTORIAL,  # the frame's (its overrides are the tutorial's own values)
            **TOKENS,
        ).as_dict()
        row = df[(df["deployment"] == d.text()) & (df["batch_size"] == 8)].iloc[0]
        assert row["devices"] == d.devices
        for key in ("ttft_ms", "tpot_ms", "output_tokens_per_s_per_gpu", "decode_comm_share"):
            assert row[key] == pytest.approx(one[key]), key
        # tokens/s in all = per GPU × devices
        assert row["output_tokens_per_s"] == pytest.approx(
            row["output_tokens_per_s_per_gpu"] * d.devices
        )


def test_cost_is_the_list_price_over_the_hourly_output(df):
    row = df[(df["deployment"] == "8xH100/tp8") & (df["batch_size"] == 8)].iloc[0]
    # H100 $6.16 per accelerator-hour (catalogue) × 8 = $49.28/h
    assert row["usd_per_hour"] == pytest.approx(6.16 * 8)
    expected = 6.16 * 8 / (row["output_tokens_per_s"] * 3600) * 1e6
    assert row["usd_per_1m_output_tokens"] == pytest.approx(expected)
    jetson = df[df["hardware"] == "JetsonAGXOrin"]  # no catalogued price: NaN, shown as —
    assert jetson["usd_per_hour"].isna().all()
    shown = dv.display_table(df)
    assert shown["USD per 1M output tokens"].iloc[-1] == "—"
    assert shown["Price (USD per hour, all devices)"].iloc[0] == "49.3 USD/h"
    assert "No catalogued price: JetsonAGXOrin." in dv.caption(df, TOKENS, "Profile tutorial.")


def test_display_has_units_and_the_labels(df):
    shown = dv.display_table(df)
    assert shown["Deployment"].iloc[0] == "8× NVIDIA H100 SXM TP8"
    assert shown["TTFT"].iloc[0].endswith("ms") and shown["TPOT"].iloc[0].endswith("ms")
    assert shown["Memory per device"].iloc[0].endswith("GB")
    assert shown["Communication (% of a decode step)"].iloc[0].endswith("%")
    # 70.6e9 params × 2 B = 141 GB of weights cannot fit a 64 GB Jetson
    assert shown["Fits in memory"].tolist()[-1] == "no"


def test_csv_keeps_snake_case_and_names_the_profile(df):
    csv = dv.csv_table(df, "trtllm, edited")
    assert csv.columns[0] == "deployment" and "deployment_label" not in csv.columns
    assert (csv["profile"] == "trtllm, edited").all()
    assert {"ttft_ms", "tpot_ms", "usd_per_1m_output_tokens", "memory_per_device_bytes"} <= set(
        csv.columns
    )
    assert all(c == c.lower() and " " not in c for c in csv.columns)


def test_a_profiles_values_and_edits_reach_the_engine():
    trt = engine.get_profile("trtllm")
    args = {"batches": [8], "tokens": TOKENS, "precision": "fp16", "profile": trt}
    plain = dv.frame("Llama-3.1-8B", DEPS[:1], CAT, overrides={}, **args)
    edited = dv.frame("Llama-3.1-8B", DEPS[:1], CAT, overrides={"efficiency": 0.2}, **args)
    one = engine.serve("Llama-3.1-8B", "H100", tp=8, batch_size=8, profile="trtllm", **TOKENS)
    assert plain["ttft_ms"].iloc[0] == pytest.approx(one.as_dict()["ttft_ms"])
    assert plain["efficiency"].iloc[0] == pytest.approx(0.866565)  # trtllm-1.0.toml
    assert edited["efficiency"].iloc[0] == pytest.approx(0.2)
    assert edited["ttft_ms"].iloc[0] > plain["ttft_ms"].iloc[0]  # less compute, slower prefill


def test_tradeoff_chart_has_a_line_per_deployment(df):
    fig = dv.tradeoff_figure(df, "Throughput vs interactivity: <i>x</i>")
    assert [t.name for t in fig.data] == [
        "8× NVIDIA H100 SXM TP8",
        "4× AMD Instinct MI300X TP4",
        "1× NVIDIA Jetson AGX Orin 64GB TP1",
    ]
    # y: log (throughput spans decades); x: linear from 0 (interactivity spans less)
    assert fig.layout.yaxis.type == "log" and fig.layout.xaxis.rangemode == "tozero"
    assert "&lt;i&gt;" in fig.layout.title.text
    assert list(fig.data[0].y) == pytest.approx(df["output_tokens_per_s_per_gpu"].iloc[:2].tolist())
    assert "does not fit" in fig.data[2].hovertext[0]
