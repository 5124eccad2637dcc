"""AppTest of the catalogue page: tables with units and sources, search and filters in the share
link, team files (good, overriding, broken), custom entries and the team-file upload preview."""

import io
from pathlib import Path

import pandas as pd
import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

import engine
from engine.catalog.reader import ENV_VAR, MAX_FILE_BYTES
from engine.catalog.resolve import _catalog_for

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).resolve().parent / "fixtures"
TEAM, BROKEN = FIXTURES / "team_catalog.toml", FIXTURES / "broken_team_catalog.toml"
BUILTIN = engine.load_catalog(use_env=False)
HW_LINK = (
    "name=<b>Mine</b>;fp16=400 TFLOP/s;fp32=50 TFLOP/s;bandwidth=1.5 TB/s;capacity=64 GiB;"
    "dispatch=0.01 ms;tdp=1 W"
)
MODEL_LINK = "name=My net;params=1e9;flops=2 GFLOP;convention=mac1;layers=24"


@pytest.fixture(autouse=True)
def _fresh_caches(monkeypatch):
    monkeypatch.setenv(ENV_VAR, "")
    st.cache_resource.clear()
    _catalog_for.cache_clear()
    yield
    st.cache_resource.clear()
    _catalog_for.cache_clear()


def catalogue_page(query: dict[str, str] | None = None) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.switch_page("pages/catalogue.py")
    at.query_params.update(query or {})
    return at.run()


def tables(at: AppTest) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The accelerator and model tables (the first two dataframes), indexed by id."""
    return tuple(at.dataframe[i].value.set_index("Id") for i in (0, 1))


def warning_text(at: AppTest) -> str:
    return "\n".join(w.value for w in at.warning)


def no_html_with(at: AppTest, text: str) -> bool:
    """No element that renders raw HTML (st.html, unsafe_allow_html) carries `text`."""
    raw = [m.value for m in at.markdown if m.proto.allow_html]
    raw += [h.proto.body for h in at.get("html")]
    return not any(text in body for body in raw)


def test_default_lists_every_entry_with_units_sources_and_conventions():
    at = catalogue_page()
    assert not at.exception and not at.warning
    hw, models = tables(at)
    assert set(hw.index) == set(BUILTIN.hardware) and set(models.index) == set(BUILTIN.models)
    a100 = hw.loc["A100"]
    # A100 reference entry: 312 TFLOP/s, 2039 GB/s, 80 GiB, 0.015 ms, 400 W;
    # ridge 312e12 / 2039e9 = 153.0
    assert a100["Peak fp16/bf16 (TFLOP/s, dense)"] == pytest.approx(312)
    assert a100["Peak int8 (TOPS, dense)"] == "624"  # a column with gaps: text, "—" for none
    assert "None" not in hw.to_string() and "—" in set(hw["Peak tf32 (TFLOP/s, dense)"])
    assert a100["Bandwidth (GB/s)"] == pytest.approx(2039)
    assert a100["Capacity (GiB)"] == pytest.approx(80)
    assert a100["Dispatch (ms)"] == pytest.approx(0.015)
    assert a100["TDP (W)"] == pytest.approx(400)
    assert a100["Ridge fp16 (FLOP/byte)"] == pytest.approx(153.016, rel=1e-4)
    # the formats each chip runs natively: Ampere has int8 but no fp8, Hopper fp8, Blackwell FP4
    assert a100["Native formats (8- and 4-bit)"] == "int8, w4a16"
    assert hw.loc["H100", "Native formats (8- and 4-bit)"] == "fp8, fp8-block, int8, w4a16"
    assert {"nvfp4", "mxfp4"} <= set(hw.loc["B200", "Native formats (8- and 4-bit)"].split(", "))
    assert hw.loc["MI355X", "Native formats (8- and 4-bit)"].endswith("w4a16, mxfp4")
    assert hw.loc["H200", "Capacity (GiB)"] == pytest.approx(141e9 / 2**30, rel=1e-6)  # 141 GB
    assert (hw["Origin"] == "built-in").all() and hw["Source"].str.startswith("https://").all()
    resnet = models.loc["ResNet-50"]
    assert resnet["Params (B)"] == pytest.approx(0.0256)
    assert resnet["FLOPs/sample (GFLOP)"] == pytest.approx(4.1)
    assert (resnet["FLOP convention"], resnet["Layers"], resnet["Sample"]) == (
        "1 per MAC",
        50,
        "image",
    )
    llama = models.loc["Llama-3.1-8B"]
    assert (llama["Hidden"], llama["Heads"], llama["KV heads"]) == ("4,096", "32", "8")
    assert llama["FLOP convention"] == "2 per MAC"
    caption = " ".join(c.value for c in at.caption)
    assert "GiB = 2³⁰ bytes" in caption and "dense" in caption and "TOPS" in caption


def test_search_box_filters_both_tables_and_goes_into_the_link():
    at = catalogue_page()
    at.text_input(key="catalogue:q").set_value("llama").run()
    hw, models = tables(at)
    assert hw.empty and len(models) >= 4 and all("Llama" in i for i in models.index)
    assert at.query_params["q"] in ("llama", ["llama"])


def test_search_matches_words_in_any_order():
    at = catalogue_page()
    for query in ("llama 70", "70 LLAMA", "70b llama-3.1"):
        at.text_input(key="catalogue:q").set_value(query).run()
        hw, models = tables(at)
        assert hw.empty and "Llama-3.1-70B" in models.index, query
        assert all("70" in i and "Llama" in i for i in models.index), query


def test_query_string_sets_search_and_filters():
    at = catalogue_page({"q": "resnet50", "vendor": "AMD,nvidia", "task": "vision,llm"})
    assert not at.exception and not at.warning
    assert at.text_input(key="catalogue:q").value == "resnet50"
    assert at.multiselect(key="catalogue:vendor").value == ["AMD", "NVIDIA"]
    assert at.multiselect(key="catalogue:task").value == ["vision", "llm"]
    hw, models = tables(at)
    assert list(models.index) == ["ResNet-50"] and hw.empty  # the search is id-tolerant


def test_filters_keep_only_the_chosen_vendors_and_tasks():
    at = catalogue_page({"vendor": "AMD", "task": "llm"})
    hw, models = tables(at)
    assert set(hw["Vendor"]) == {"AMD"} and len(hw) >= 3
    assert set(models["Task"]) == {"llm"} and "ResNet-50" not in models.index
    at.multiselect(key="catalogue:vendor").set_value(["Google"]).run()
    assert set(tables(at)[0]["Vendor"]) == {"Google"} and at.query_params["vendor"] in (
        "Google",
        ["Google"],
    )


def test_invalid_query_string_warns_and_shows_everything():
    bad = {"vendor": "Acme", "task": "cooking", "q": "x" * 101, "bogus": "<script>1</script>"}
    at = catalogue_page(bad)
    assert not at.exception
    text = warning_text(at)
    for name in ("vendor", "task", "q", "bogus"):
        assert name in text
    hw, models = tables(at)
    assert len(hw) == len(BUILTIN.hardware) and len(models) == len(BUILTIN.models)
    assert "bogus" not in at.query_params and no_html_with(at, "<script>")


def test_csv_downloads_have_unit_bearing_headers():
    at = catalogue_page()
    assert {b.key for b in at.get("download_button")} >= {
        "catalogue_hw_csv",
        "catalogue_models_csv",
    }
    for df in (at.dataframe[0].value, at.dataframe[1].value):
        csv = engine.to_csv(df)  # what ui.core.downloads.download_csv serves
        back = pd.read_csv(io.StringIO(csv))
        assert list(back.columns) == list(df.columns) and len(back) == len(df)
    assert "Bandwidth (GB/s)" in engine.to_csv(at.dataframe[0].value).splitlines()[0]


def test_team_file_entries_and_overrides_are_marked(monkeypatch):
    monkeypatch.setenv(ENV_VAR, str(TEAM))
    at = catalogue_page()
    assert not at.exception
    hw, models = tables(at)
    assert hw.loc["A100", "Origin"] == str(TEAM) and hw.loc["Team-X1", "Origin"] == str(TEAM)
    assert hw.loc["A100", "Peak fp16/bf16 (TFLOP/s, dense)"] == pytest.approx(280)
    assert models.loc["OurNet", "Origin"] == str(TEAM) and hw.loc["H100", "Origin"] == "built-in"
    assert any(str(TEAM) in i.value for i in at.info)
    assert any("overrides" in m.value for m in at.markdown)  # ui.core.frame.show_catalog_notes


def test_broken_team_file_is_reported_and_everything_else_works(monkeypatch):
    monkeypatch.setenv(ENV_VAR, str(BROKEN))
    at = catalogue_page()
    assert not at.exception
    text = warning_text(at).replace("\\", "")  # file text is shown backslash-escaped (inert)
    assert "broken_team_catalog.toml: hardware.BadUnits.memory_bandwidth: " in text
    assert "hardware.NoTdp.tdp" in text and "hardware.team_good" in text
    hw, models = tables(at)
    assert {"A100", "Team-Good"} <= set(hw.index) and "TeamNet" in models.index
    assert "BadUnits" not in hw.index and no_html_with(at, "<script>")


def test_custom_entries_from_the_link_are_listed_and_marked():
    at = catalogue_page({"custom_hw": HW_LINK, "custom_model": MODEL_LINK, "vendor": "Custom"})
    assert not at.exception and not at.warning
    hw, models = tables(at)
    assert list(hw.index) == ["Custom-HW"] and hw.loc["Custom-HW", "Vendor"] == "Custom"
    assert hw.loc["Custom-HW", "Origin"] == "custom (share link)"
    assert hw.loc["Custom-HW", "Name"] == "<b>Mine</b>" and no_html_with(at, "<b>Mine")
    assert models.loc["Custom-Model", "Origin"] == "custom (share link)"
    assert models.loc["Custom-Model", "FLOPs/sample (GFLOP)"] == pytest.approx(2)


def upload(content: bytes, name: str = "team.toml") -> AppTest:
    at = catalogue_page()
    at.file_uploader(key="catalogue:upload").set_value((name, content, "application/toml"))
    return at.run()


def test_upload_previews_a_good_team_file():
    at = upload(TEAM.read_bytes())
    assert not at.exception and not at.warning
    summary = " ".join(i.value for i in at.info)
    assert "2 accelerators, 1 models, 0 problems. Would override: `A100`." in summary
    new_hw, new_models = (at.dataframe[i].value for i in (2, 3))
    assert list(new_hw["Id"]) == ["A100", "Team-X1"] and list(new_models["Id"]) == ["OurNet"]
    assert set(new_hw["Origin"]) == {"upload: team.toml"}
    assert engine.load_catalog(use_env=False).hardware["A100"] == BUILTIN.hardware["A100"]
    assert tables(at)[0].loc["A100", "Origin"] == "built-in"  # a preview, never loaded


def test_upload_of_a_broken_file_lists_file_entry_and_field():
    at = upload(BROKEN.read_bytes(), name="<script>alert(1)</script>.toml")
    assert not at.exception
    problems = at.dataframe[2].value
    assert list(problems.columns) == ["File", "Entry", "Field", "Problem"]
    assert set(problems["File"]) == {"upload: <script>alert(1)</script>.toml"}
    rows = set(zip(problems["Entry"], problems["Field"], strict=True))
    assert ("hardware.BadUnits", "memory_bandwidth") in rows
    assert ("hardware.HugePeak", "peak.fp16") in rows and len(problems) == 8
    assert "8 problem(s)" in warning_text(at) and no_html_with(at, "<script>")


@pytest.mark.parametrize(
    ("content", "words"),
    [
        (b"[hardware.X\n", "not valid TOML"),
        (b"\xff\xfe\x00", "not UTF-8"),
        (b"#" * (MAX_FILE_BYTES + 1), "limit"),
        (b"x = " + b"[" * 5000, "nested too deeply"),
        (b"", ""),
    ],
)
def test_upload_of_garbage_is_a_message_not_a_crash(content, words):
    at = upload(content, name="x.bin")
    assert not at.exception
    assert words in " ".join(at.dataframe[2].value["Problem"]) if words else not at.warning
