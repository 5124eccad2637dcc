"""AppTest tests of the serving page (pages/decode.py): one deployment on TP × PP devices.

Every expected number comes from the engine (`engine.serve`, `engine.operators`), formatted as
the page's builders format it; the page is opened from the entry file, as a browser routes it.
"""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

import engine
from tests.conftest import ROOT, chart_spec
from ui.core.frame import section_key
from ui.decode import figures as fl
from ui.decode import link as dl
from ui.decode import view as sv
from ui.links import custom
from ui.widgets import model_config as sc
from ui.words.format import fmt

PAGE = "pages/decode.py"
DEPLOY = {"model": "Llama-3.1-70B", "hardware": "H100", "tp": "2", "input_tokens": "8192"}
DEPLOY |= {"output_tokens": "256"}
LLAMA_70B = (ROOT / "tests" / "fixtures" / "configs" / "Llama-3.1-70B.json").read_text()


def open_page(query: dict[str, str] | None = None) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=90)
    for key, value in (query or {}).items():
        at.query_params[key] = value
    at.run()
    at.switch_page(PAGE).run()
    assert not at.exception, at.exception
    return at


def text(elements) -> str:
    """The elements' text with markdown escapes removed (user text is backslashed)."""
    return " ".join(e.value for e in elements).replace("\\", "")


def url(at: AppTest, key: str) -> str:
    value = at.query_params[key]
    return value[-1] if isinstance(value, list) else value


def expected(model="Llama-3.1-8B", hardware="A100", **kw) -> dict:
    opts = {"tp": 1, "pp": 1, "batch_size": 1, "input_tokens": 1024, "output_tokens": 256}
    return engine.serve(model, hardware, **(opts | kw)).as_dict()


def cards(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def assert_cards(at: AppTest, r: dict) -> None:
    assert cards(at) == {label: value for label, value, _ in sv.headline(r)}


def charts(at: AppTest) -> list[dict]:
    return [chart_spec(c) for c in at.get("plotly_chart")]


def test_default_run_shows_the_serving_models_numbers():
    at = open_page()
    r = expected()
    assert_cards(at, r)
    assert next(iter(cards(at))) == "Fits in memory" and cards(at)["Fits in memory"] == "yes"
    assert "Fits: " in text(at.success) and not at.warning and not at.error
    caption = text(at.caption)
    assert "1 × NVIDIA A100" in caption and "NVLink" in caption and "profile trtllm-1.0" in caption
    assert url(at, "tp") == "1" and url(at, "profile") == engine.DEFAULT_PROFILE == "trtllm-1.0"
    assert url(at, "input_tokens") == "1024" and url(at, "output_tokens") == "256"
    assert "context" not in at.query_params and "prompt" not in at.query_params


def test_must_show_70b_on_two_h100_fits_with_operator_points():
    at = open_page(DEPLOY)
    r = expected("Llama-3.1-70B", "H100", tp=2, input_tokens=8192)
    assert r["fits_in_memory"]
    assert_cards(at, r)
    assert text(at.success).startswith("Fits: ")
    roofline = charts(at)[0]
    points = [t for t in roofline["data"] if t["name"].startswith("Operators")]
    names = {n for t in points for n in t["text"]}
    assert {"qkv_projection", "attention", "mlp", "lm_head"} <= names
    assert "Whole decode step (TPOT)" in [t["name"] for t in roofline["data"]]
    assert len(charts(at)) == 1 and not at.dataframe  # step time and the table wait for a click
    at.session_state[section_key("decode", "step")] = True
    bars = charts(at.run())[1]["data"]
    decode = sum(t["x"][0] for t in bars if t.get("yaxis") == "y2")
    assert decode == pytest.approx(r["tpot_ms"], rel=1e-9)
    assert not at.dataframe  # the operators' table waits in its own expander
    at.session_state[section_key("decode", "table")] = True
    table = at.run().dataframe[0].value
    assert "Operator" in table.columns and "mlp" in set(table["Operator"])
    assert at.download_button(key="ops_csv").label == "Download operators CSV"


def test_one_device_does_not_fit_and_says_so_first():
    at = open_page(DEPLOY | {"tp": "1"})
    r = expected("Llama-3.1-70B", "H100", input_tokens=8192)
    assert not r["fits_in_memory"]
    assert_cards(at, r)
    assert cards(at)["Fits in memory"] == "NO"
    assert text(at.error).startswith("Does not fit: ") and "hypothetical" in text(at.error)


def test_devices_widgets_set_tp_and_pp():
    at = open_page({"model": "Llama-3.1-70B", "hardware": "H100"})
    at.number_input(key="decode:tp").set_value(4).run()
    at.number_input(key="decode:pp").set_value(2).run()
    assert not at.exception
    assert_cards(at, expected("Llama-3.1-70B", "H100", tp=4, pp=2))
    assert url(at, "tp") == "4" and url(at, "pp") == "2"
    assert "8 × NVIDIA H100 SXM (TP 4 × PP 2)" in text(at.caption)


def test_a_tp_the_model_refuses_is_explained_and_one_device_used():
    at = open_page({"tp": "3"})
    assert "tp 3 does not divide" in text(at.error)
    assert_cards(at, expected())


@pytest.mark.parametrize(
    ("query", "reason"),
    [
        # refused as the deployment is built (it once escaped as a stack trace): an ep that
        # does not divide tp, attention DP on one device
        ({"ep": "2"}, "ep 2 must divide tp 1"),
        ({"attention_dp": "on"}, "attention_dp needs a group of devices"),
        ({"model": "Qwen3-235B-A22B", "tp": "8", "ep": "3"}, "ep 3 must divide tp 8"),
    ],
)
def test_a_layout_refused_as_built_is_explained_and_one_device_used(query, reason):
    at = open_page(query)
    assert not at.exception
    assert reason in text(at.error) and "Showing tp = 1, pp = 1 (one device)" in text(at.error)
    assert_cards(at, expected(model=query.get("model", "Llama-3.1-8B")))
    assert (url(at, "tp"), url(at, "ep"), url(at, "attention_dp")) == ("1", "1", "off")


def test_token_widgets_and_profile():
    at = open_page()
    at.number_input(key="decode:input_tokens").set_value(2048).run()
    at.number_input(key="decode:output_tokens").set_value(64).run()
    at.selectbox(key="decode:profile").set_value("trtllm").run()
    at.number_input(key="decode:batch").set_value(8).run()
    assert not at.exception
    r = expected(input_tokens=2048, output_tokens=64, profile="trtllm", batch_size=8)
    assert_cards(at, r)
    assert url(at, "profile") == "trtllm" and url(at, "input_tokens") == "2048"
    assert "profile trtllm" in text(at.caption)


def test_kv_precision_fp8_halves_the_kv_cache():
    at = open_page()
    at.selectbox(key="decode:kv_precision").set_value("fp8").run()
    r = expected(kv_precision="fp8")
    assert r["kv_cache_bytes"] == pytest.approx(expected()["kv_cache_bytes"] / 2)
    assert_cards(at, r)
    assert url(at, "kv_precision") == "fp8"


def test_overrides_of_the_profile_are_in_the_link():
    at = open_page({"efficiency": "0.3", "memory_reserve": "0.2"})
    assert not at.warning
    assert at.number_input(key="decode:efficiency").value == pytest.approx(0.3)
    assert_cards(at, expected(efficiency=0.3, memory_reserve=0.2))
    assert url(at, "efficiency") == "0.3" and url(at, "memory_reserve") == "0.2"
    at.number_input(key="decode:efficiency").set_value(None).run()
    assert "efficiency" not in at.query_params  # blank: the profile's figure
    assert_cards(at, expected(memory_reserve=0.2))


def test_every_override_of_the_planner_and_load_is_on_decode_and_runs():
    """/decode offers the same overrides as /plan and /load (bandwidth efficiency above all:
    a decode step reads its weights and KV at it), each the engine's number: the cards are
    serve()'s with that override, and a memory-bound TPOT scales as the bandwidth's inverse."""
    query = {"bandwidth_efficiency": "0.8", "link_latency_us": "5", "dequant_overhead": "0.2"}
    at = open_page(query)
    assert not at.warning
    assert at.number_input(key="decode:bandwidth_efficiency").value == pytest.approx(0.8)
    r = expected(bandwidth_efficiency=0.8, link_latency_us=5.0, dequant_overhead=0.2)
    assert_cards(at, r)
    assert all(url(at, k) == v for k, v in query.items())
    # batch 1 on one A100: every decode operator is memory-bound, so TPOT less its fixed
    # overheads scales as profile's bandwidth efficiency / 0.8
    base, fitted = expected(), engine.get_profile("trtllm-1.0").values()["bandwidth_efficiency"]
    moved = (r["tpot_ms"] - r["decode_overhead_ms"]) / (
        base["tpot_ms"] - base["decode_overhead_ms"]
    )
    assert moved == pytest.approx(fitted / 0.8, rel=0.02)


def test_older_links_map_context_and_prompt():
    # context 4096 with a 1024-token prompt: 1024 input tokens, 4096 − 1024 = 3072 output
    at = open_page({"context": "4096", "prompt": "1024", "batch": "2"})
    assert not at.warning
    assert_cards(at, expected(input_tokens=1024, output_tokens=3072, batch_size=2))
    assert url(at, "input_tokens") == "1024" and url(at, "output_tokens") == "3072"
    assert "context" not in at.query_params  # the link is rewritten with the new names


def test_bad_parameters_warn_and_use_defaults():
    at = open_page({"tp": "0", "profile": "<b>x</b>", "output_tokens": "1e99", "pp": "x"})
    warning = text(at.warning)
    for name in ("'tp'", "'profile'", "'output_tokens'", "'pp'"):
        assert name in warning
    assert_cards(at, expected())


def test_config_json_from_the_link_is_the_model():
    compact = sc.compact(LLAMA_70B)
    at = open_page(DEPLOY | {"model": "config.json", "model_config": compact})
    assert not at.warning
    spec = engine.model_from_config(compact)
    assert_cards(at, expected(spec, "H100", tp=2, input_tokens=8192))
    assert "Custom model (config.json) on NVIDIA H100 SXM" in text(at.title)
    assert url(at, "model_config") == compact and url(at, "model") == "config.json"


def test_pasted_config_json_goes_into_the_link_compacted():
    at = open_page({"model": "config.json"})
    assert "Paste or upload" in text(at.info)
    at.text_area(key="decode:model_config").set_value(LLAMA_70B).run()
    assert not at.exception
    assert url(at, "model_config") == sc.compact(LLAMA_70B)
    assert "80 layers, hidden 8,192" in text(at.caption)


def test_a_broken_config_json_is_named_next_to_the_field_and_never_markup():
    at = open_page({"model": "config.json"})
    bad = '{"architectures": ["LlamaForCausalLM"], "hidden_size": "<img src=x onerror=1>"}'
    at.text_area(key="decode:model_config").set_value(bad).run()
    assert not at.exception
    errors = [e for e in at.sidebar.error]
    assert errors and "config.json" in text(errors)
    assert "model_config" not in at.query_params
    assert "No valid config.json yet: showing Llama-3.1-8B" in text(at.warning)


def test_custom_accelerator_from_the_link_is_used():
    chip = "name=My chip;fp16=400 TFLOP/s;fp32=50 TFLOP/s;bandwidth=1.5 TB/s;capacity=64 GiB"
    chip += ";dispatch=0.01 ms;tdp=350 W"
    at = open_page({"custom_hw": chip, "hardware": "Custom-HW"})
    hw = custom.hardware_from(custom.decode(chip, custom.HW_FIELDS))
    assert_cards(at, expected(hardware=hw))
    assert url(at, "custom_hw") == chip


def open_curves(at: AppTest) -> AppTest:
    """The curves' expander opened (drawn, and computed, only while open)."""
    at.session_state[section_key("decode", "curves")] = True
    at.run()
    assert not at.exception, at.exception
    return at


def test_the_curves_wait_in_their_expander_until_opened(monkeypatch):
    calls = []
    monkeypatch.setattr(engine, "serve_sweep", lambda *a, **k: calls.append(1))
    at = open_page()
    labels = [e.label for e in at.main.expander]
    assert labels[: len(sv.SECTIONS)] == list(sv.SECTIONS.values())
    assert labels[-1] == "🔗 Share this scenario"
    assert not calls and len(charts(at)) == 1  # the operators' roofline only
    assert (
        not at.dataframe and not at.code
    )  # no table or code block yet: they delay the first chart


def test_curves_and_their_table_come_from_the_serve_sweep():
    at = open_curves(open_page())
    df = sv.curves(
        dep=engine.Deployment("Llama-3.1-8B", "A100", precision="fp16"),  # the default profile
        output_tokens=256,
        batches=dl.DEFAULT_BATCHES,
        contexts=dl.DEFAULT_CONTEXTS,
    )
    assert at.dataframe[0].value.equals(sv.curve_table(df))  # the open tab's only table
    titles = [c["layout"]["title"]["text"] for c in charts(at)]
    assert any(t.startswith("Time per output token") for t in titles)
    row = df[(df["batch_size"] == 1) & (df["input_tokens"] == 1024)].iloc[0]
    assert row["tpot_ms"] == pytest.approx(expected()["tpot_ms"], rel=1e-9)


def test_bad_curve_list_is_reported_and_the_page_still_works():
    at = open_page()
    at.text_input(key="decode:contexts").set_value("1024, lots").run()
    assert not at.exception and "List not used" in text(at.error)
    assert_cards(at, expected())


def test_a_long_decode_has_its_numbers_with_units():
    at = open_page({"output_tokens": "1"})  # one output token: no decode step (TPOT undefined)
    assert cards(at)["TPOT"] == "—"
    assert all(
        v == "—" or " " in v or v in ("yes", "NO") or v.endswith("%") for v in cards(at).values()
    )
    assert fmt(expected(output_tokens=1)["ttft_ms"] * 1e-3, "s") == cards(at)["TTFT"]


def test_uploaded_config_json_is_the_model_and_goes_into_the_link():
    mixtral = (ROOT / "tests" / "fixtures" / "configs" / "Mixtral-8x7B.json").read_bytes()
    at = open_page({"model": "config.json", "hardware": "H100", "tp": "2"})
    at.file_uploader(key="decode:model_config.file").upload(
        "config.json", mixtral, "application/json"
    )
    at.run()
    assert not at.exception
    spec = engine.model_from_config(mixtral.decode())
    assert_cards(at, expected(spec, "H100", tp=2))
    assert url(at, "model_config") == sc.compact(mixtral.decode())
    assert "8 experts (2 per token)" in text(at.caption)


def test_an_uploaded_file_that_is_not_text_is_refused_next_to_the_field():
    at = open_page({"model": "config.json"})
    at.file_uploader(key="decode:model_config.file").upload("config.json", b"\xff\xfe", "x/y")
    at.run()
    assert not at.exception and "not UTF-8 text" in text(at.sidebar.error)
    assert_cards(at, expected())  # the fallback model, said in a warning
    assert "No valid config.json yet" in text(at.warning)


def test_overhead_overrides_change_the_overhead_and_are_linked():
    at = open_page()
    at.number_input(key="decode:layer_overhead_us").set_value(50.0).run()
    at.number_input(key="decode:dispatch_overhead_ms").set_value(0.2).run()
    assert not at.exception
    assert_cards(at, expected(layer_overhead_us=50.0, dispatch_overhead_ms=0.2))
    assert url(at, "layer_overhead_us") == "50" and url(at, "dispatch_overhead_ms") == "0.2"


def test_tutorial_one_step_view_is_a_labelled_choice():
    at = open_page()
    assert url(at, "tutorial") == "off" and "Tutorial view" not in text(at.subheader)
    at.toggle(key="decode:tutorial").set_value(True).run()
    assert not at.exception and url(at, "tutorial") == "on"
    # engine.decode at the request's last context, 1024 + 256 = 1280 tokens, one device, under
    # the page's profile (the serving default: the tutorial's view, the page's assumptions)
    d = engine.decode(
        model="Llama-3.1-8B",
        hardware="A100",
        batch_size=1,
        context=1280,
        prompt=1024,
        profile=engine.DEFAULT_PROFILE,
    ).as_dict()
    tutorial = {k.removesuffix(" (tutorial)"): v for k, v in cards(at).items() if "(tutorial)" in k}
    assert tutorial == {label: value for label, value, _ in fl.headline_metrics(d)}
    assert "Tutorial view: one decode step on one device" in text(at.subheader)
    again = open_page({"tutorial": "on", "model": "Llama-3.1-70B", "hardware": "H100"})
    assert any(k.endswith("(tutorial)") for k in cards(again))


def test_an_old_link_with_int4_opens_as_w4a16_with_the_note():
    at = open_page(DEPLOY | {"precision": "int4", "batch_size": "1"})
    assert at.selectbox(key="decode:precision").value == "w4a16"
    assert "int4 is read as w4a16" in text(at.warning)  # beside the picker
    assert url(at, "precision") == "w4a16"  # the link heals to the format's name
    r = expected(
        "Llama-3.1-70B", "H100", tp=2, input_tokens=8192, output_tokens=256, precision="int4"
    )
    assert r["precision"] == "w4a16" and "int4 is w4a16" in " ".join(r["warnings"])
    assert_cards(at, r)


def test_nvfp4_on_h100_shows_the_emulation_beside_the_numbers():
    at = open_page(DEPLOY | {"precision": "nvfp4"})
    assert "dequantised to 16 bits" in text(at.warning)
    at.selectbox(key="decode:hardware").set_value("B200").run()
    assert "dequantised to 16 bits" not in text(at.warning) and not at.exception
    at.selectbox(key="decode:kv_precision").set_value("nvfp4").run()
    assert url(at, "kv_precision") == "nvfp4" and not at.exception
