"""The Accuracy page's "Kernel curves" section (AppTest) and its pure figure and table builders
(ui/accuracy/kernel_curves.py): pick an accelerator, a stack and an operator class; every data
type's curve is drawn, its parameters, source and held-out errors tabulated and offered as CSV;
the link carries the three picks; English and Chinese."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

import engine
from tests.conftest import chart_spec
from ui.accuracy import kernel_curves as kc

ROOT = Path(__file__).resolve().parent.parent
CURVES = engine.kernel_curves()


def page(query: dict) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.switch_page("pages/accuracy.py")
    at.query_params.update(query)
    return at.run()


def param(at: AppTest, key: str) -> str | None:
    value = at.query_params.get(key)
    return value[-1] if isinstance(value, list) else value


def charts(at: AppTest) -> list[dict]:
    return [chart_spec(c) for c in at.get("plotly_chart")]


def test_the_section_draws_h100_gemm_curves_by_default():
    at = page({"section": "kernels"})
    assert not at.exception
    picks = [at.selectbox(key=f"accuracy:kernel_{n}").value for n in ("hw", "stack", "op")]
    assert picks == ["H100", "trtllm", "gemm"]
    expected = CURVES.select("H100", "trtllm", "gemm")
    (figure,) = charts(at)
    assert [t["name"] for t in figure["data"]] == [c.dtype for c in expected]
    assert figure["layout"]["yaxis"]["range"] == [0, 1]  # a fraction of the type's peak
    table = at.dataframe[0].value
    assert list(table["type"]) == [c.dtype for c in expected]
    assert table["source"].str.startswith("https://github.com/ai-dynamo/aiconfigurator/blob/").all()
    labels = [b.label for b in at.get("download_button")]
    assert labels == ["Download the table (CSV)", "Download the kernel transfer (CSV)"]
    assert (param(at, "kernel_hw"), param(at, "kernel_op")) == ("H100", "gemm")


def test_the_section_tabulates_the_profiles_kernel_transfer():
    at = page({"section": "kernels"})  # the default profile, trtllm-1.0: trtllm, H100
    assert not at.exception
    assert "Kernel transfer of profile trtllm-1.0" in [s.value for s in at.subheader]
    table = at.dataframe[1].value
    b200 = table[(table["accelerator"] == "B200") & (table["weight format"] == "nvfp4")]
    # data/kernels/trtllm.toml: B200 nvfp4 η_c 0.361703, η_m 0.592352 over H100 fp8's
    # 0.677057, 0.835216: 0.534 and 0.709
    assert list(b200["× GEMM compute fraction"]) == ["0.534 ×"]
    assert list(b200["× weight bandwidth fraction"]) == ["0.709 ×"]
    assert list(b200["compared with"]) == ["H100 fp8"]
    h100 = table[table["accelerator"] == "H100"]
    assert set(h100["× GEMM compute fraction"]) == {"1 ×"}  # the reference itself
    csv = kc.transfer_csv(engine.get_profile("trtllm-1.0"))
    assert list(csv.columns[:3]) == ["profile", "accelerator", "format"]
    assert len(csv) == len(table)


def test_a_profile_without_a_transfer_says_so():
    at = page({"section": "kernels", "profile": "vllm-mi300x"})
    assert not at.exception
    (info,) = [i.value for i in at.info]
    assert "keeps one GEMM efficiency on every accelerator" in info
    assert "kernel_curves = none" in info


def test_a_link_opens_a_collective_with_its_gpu_counts():
    at = page(
        {
            "section": "kernels",
            "kernel_hw": "B200",
            "kernel_stack": "nccl",
            "kernel_op": "all_gather",
        }
    )
    assert not at.exception
    (figure,) = charts(at)
    assert figure["layout"]["yaxis"]["type"] == "log"  # time against message size
    names = {t["name"] for t in figure["data"]}
    assert {"fp16, 2 GPUs", "fp16, 8 GPUs", "int8, 4 GPUs"} <= names
    assert param(at, "kernel_stack") == "nccl"


def test_a_pick_without_curves_falls_to_one_that_has_them():
    # NCCL has no GEMM: the operator picker offers the collectives and takes the first
    at = page({"section": "kernels", "kernel_stack": "nccl", "kernel_op": "gemm"})
    assert not at.exception
    assert at.selectbox(key="accuracy:kernel_op").value == "all_reduce"


def test_an_unknown_accelerator_in_the_link_is_named_and_dropped():
    at = page({"section": "kernels", "kernel_hw": "Z9000"})
    assert not at.exception
    assert "Z9000" in " ".join(w.value for w in at.warning)
    assert at.selectbox(key="accuracy:kernel_hw").value == "H100"


def test_the_kernel_picks_stay_in_the_link_while_another_section_is_shown():
    # like the measurements file on the training section: a link keeps every pick
    at = page({"section": "kernels", "kernel_hw": "H200"})
    at.radio(key="accuracy:section").set_value("training").run()
    assert not at.exception and param(at, "kernel_hw") == "H200"
    at.radio(key="accuracy:section").set_value("kernels").run()
    assert at.selectbox(key="accuracy:kernel_hw").value == "H200"  # kept meanwhile


def test_the_section_speaks_chinese():
    at = page({"section": "kernels", "lang": "zh"})
    assert not at.exception
    labels = [s.label for s in at.selectbox]
    assert "加速器" in labels and "Accelerator" not in labels
    assert "held-out MAPE" not in at.dataframe[0].value.columns


# --- the pure builders ----------------------------------------------------------------


@pytest.mark.parametrize("op", ["gemm", "decode_attention", "prefill_attention"])
def test_efficiency_points_are_fractions_on_a_log_axis(op):
    curves = CURVES.select("H100", "trtllm", op)
    points = kc.curve_points(curves)
    assert ((points["y"] > 0) & (points["y"] <= 1)).all()
    per_curve = len(kc.DECODE_BATCHES) if op == "decode_attention" else 1
    assert points["series"].nunique() == per_curve * len(curves)
    figure = kc.kernel_figure(points, op)
    assert len(figure.data) == points["series"].nunique()
    assert figure.layout.xaxis.type == "log" and tuple(figure.layout.yaxis.range) == (0, 1)


def test_gemm_efficiency_rises_with_the_tokens():
    (curve,) = (c for c in CURVES.select("H100", "trtllm", "gemm") if c.dtype == "bf16")
    points = kc.curve_points((curve,))
    y = points["y"].to_numpy()
    assert y[0] < 0.05 < 0.6 < y[-1]  # M = 1: weight-bound; M = 16384: near η_c
    assert (y[1:] >= y[:-1] - 1e-9).all()


def test_collective_points_are_times_per_gpu_count():
    curves = CURVES.select("H100", "trtllm", "all_reduce")
    points = kc.curve_points(curves)
    assert points["series"].nunique() == sum(len(c.law.gpus) for c in curves)
    assert (points["y"] > 0).all()
    assert kc.kernel_figure(points, "all_reduce").layout.yaxis.type == "log"


def test_the_csv_has_english_unit_suffixed_columns_and_every_number():
    curves = CURVES.select("H100", "trtllm", "gemm")
    csv = kc.csv_table(curves)
    assert {"accelerator", "stack", "op", "dtype", "overhead_s", "eta_compute", "mape_pct"} <= set(
        csv
    )
    assert list(csv["eta_compute"]) == [c.law.eta_compute for c in curves]
    coll = kc.csv_table(CURVES.select("H100", "trtllm", "all_reduce"))
    assert {"small_latency_s_8gpu", "large_bandwidth_bytes_per_s_8gpu"} <= set(coll)


def test_the_table_names_the_parameters_as_the_docs_do():
    (curve,) = (c for c in CURVES.select("H100", "trtllm", "gemm") if c.dtype == "bf16")
    text = kc.parameters_text(curve)
    assert text.startswith("t0 = ") and "η_c = " in text and "η_m = " in text
    assert ("s = 0 *" in text) != ("exposed" in curve.fit.free)  # * marks a neutral value
    row = kc.parameters_table((curve,)).iloc[0]
    assert row["release"] == curve.source.version and row["source"] == curve.source.url
