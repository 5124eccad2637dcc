# ruff: noqa: RUF001 (Chinese text: full-width punctuation is right there)
"""No English words on /train, /plan, /load and /accuracy in Chinese, in their heavier states
too (a search with its rejected configurations, a closest configuration that does not fit, the
planner's sections open, a simulated run and the max-rate search, a trace's field, a team
profile fitted), except names, units and column ids (tests/english_scan.py says which).

Also: the scan itself on the texts it was written for, the engine's and the shipped files'
fixed English all marked for translation (ui/words/data_text.py), a link's rank past the last
configuration that fits said beside its field, and Streamlit's own uploader words replaced.
"""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

import engine
from engine.accuracy.bands import FAMILY_IDS
from tests.conftest import ROOT
from tests.english_scan import catalogue_names, english_on, english_words, operator_ids
from tools import i18n as catalogues
from ui.accuracy import session
from ui.words import data_text, i18n

NAMES, IDS = catalogue_names(), operator_ids()
NO_FIT = {"model": "Llama-3.1-70B", "gpus": "8", "tp": "1", "pp": "1", "cp": "1", "vp": "1"}
NO_FIT |= {"zero": "0", "recompute": "none"}
ACTIVATIONS = {"model": "Llama-3.1-8B", "gpus": "8", "tp": "8", "pp": "1", "zero": "3"}
ACTIVATIONS |= {"recompute": "none", "micro_batch_size": "16", "seq_len": "32768"}
ACTIVATIONS |= {"global_batch_size": "128"}  # 309 GB of activations in flight: none fits
DUALPIPE = {"model": "Llama-3.1-8B", "gpus": "8", "tp": "1", "pp": "4", "cp": "1", "vp": "1"}
DUALPIPE |= {"global_batch_size": "16", "seq_len": "4096", "zero": "1", "recompute": "none"}
DUALPIPE |= {"pp_schedule": "dualpipe,dualpipev"}  # the detail names it, its warning is said
SPARSE = {"model": "DeepSeek-V3.2-Exp", "hardware": "H200", "tp": "8", "precision": "fp8"}
FLEET = {"model": "Llama-3.1-8B", "tp": "1", "fleet": "on", "requests": "400", "rate": "8"}
PLAN_OPEN = {f"plan:{name}.open": True for name in ("table", "load", "prices", "cost_front")}
STATES = {  # id: (page, link, session state before the run)
    "train-search": ("pages/train.py", {"rejected": "on", "pick": "10000"}, {}),
    "train-nothing-fits": ("pages/train.py", NO_FIT, {}),
    "train-activations": ("pages/train.py", ACTIVATIONS, {}),
    "train-over-budget": ("pages/train.py", {"tp": "1..16", "pp": "1..16"}, {}),
    "train-dualpipe": ("pages/train.py", DUALPIPE, {}),
    "plan-sections-open": ("pages/plan.py", {}, PLAN_OPEN),
    "decode-sparse-attention": ("pages/decode.py", SPARSE, {}),
    "solve": ("pages/solve.py", {}, {}),  # the energy formula's words
    "load-run-and-search": ("pages/load.py", {}, {"load:tables.open": True}),
    "load-trace": ("pages/load.py", {"mode": "trace"}, {}),
    "load-fleet": ("pages/load.py", FLEET, {}),
    "accuracy": ("pages/accuracy.py", {}, {}),
    "accuracy-training": ("pages/accuracy.py", {"section": "training"}, {}),
    "accuracy-training-hopper": (
        "pages/accuracy.py",
        {"section": "training", "training_profile": "llm-foundry-h100"},
        {},
    ),
    "learn-12": ("pages/learn.py", {"lesson": "12"}, {}),
    "learn-09-sensitivity": ("pages/learn.py", {"lesson": "9"}, {}),
    "learn-10-wafer": ("pages/learn.py", {"lesson": "10"}, {}),
    "learn-07-footprint": ("pages/learn.py", {"lesson": "7"}, {}),
    "learn-08-tco": ("pages/learn.py", {"lesson": "8"}, {}),
    "learn-11-audit": ("pages/learn.py", {"lesson": "11"}, {}),
}


def chinese_run(page: str, query: dict, state: dict, monkeypatch) -> AppTest:
    # the session's language for the test's own widget reads too: AppTest formats a radio's
    # value outside the script run, where the page would otherwise read English
    monkeypatch.setattr(i18n, "language", lambda: "zh")
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=240)
    at.switch_page(page)
    at.query_params.update({**query, "lang": "zh"})
    for key, value in state.items():
        at.session_state[key] = value
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    return at


@pytest.mark.parametrize(("page", "query", "state"), STATES.values(), ids=list(STATES))
def test_no_english_words_on_the_chinese_pages(page, query, state, monkeypatch):
    at = chinese_run(page=page, query=query, state=state, monkeypatch=monkeypatch)
    # the default profile's own record, shown as written (as a fitted one's, below): its worst
    # rows as data, its families as ids
    shipped = engine.get_profile(engine.DEFAULT_PROFILE)
    families = set(shipped.ground.get("families", ())) | set(FAMILY_IDS)  # a model's own, too
    assert english_on(at, NAMES | set(shipped.worst), IDS | families) == []


def test_no_english_words_after_a_team_profile_is_fitted(monkeypatch):
    at = chinese_run(page="pages/accuracy.py", query={}, state={}, monkeypatch=monkeypatch)
    at.button(key="acc:fit").click().run()
    assert not at.exception and at.session_state[session.PROFILE] == "team"
    # the fitted profile's own record, shown as written like a shipped profile's: its name and
    # its worst rows (the engine describes them once, when it fits)
    team = engine.profile_from_toml(at.session_state[session.CUSTOM]["team"], "team")
    families = set(team.ground.get("families", ()))  # ids, as a link's fitted_families
    assert team.worst and english_on(at, NAMES | {"team", *team.worst}, IDS | families) == []


def test_the_scan_finds_the_english_it_was_written_for():
    # what the Chinese /train, /plan and /load said before this scan
    assert english_words("1 trillion 个 token 需要 179 d，成本 1.7 million USD。") == [
        "trillion",
        "million",
    ]
    assert english_words("ZeRO 1 · 重计算 none") == ["none"]
    assert english_words("**Best under load:** 2× AMD Instinct MI300X", NAMES) == [
        "Best",
        "under",
        "load",
    ]
    assert english_words("调度器：TensorRT-LLM（executor defaults）", NAMES) == [
        "executor",
        "defaults",
    ]
    assert english_words("KV 策略 reserve。") == ["reserve"]
    # what may stay: names, units, ids, acronyms, a glossed term, a quoted docs section
    fine = (
        "Llama-3.1-70B 在 4 × NVIDIA H100 SXM 上（TP 4），KV fp16，按 tokens_per_s 的 MAPE；"
        "分块预填充（chunked prefill）；docs/model.md 的“Serving under load”一节；"
        "`prices=H100:6.16,A100:none`；python -m engine list hardware；885 tokens/s"
    )
    assert english_words(fine, NAMES) == []


def test_the_engines_and_the_files_fixed_english_is_marked_and_translated():
    """Every text the engine and the shipped files keep as plain English (not an
    engine.Message) and the pages show is in ui/words/data_text.py with a Chinese translation:
    a new or reworded one fails here, not as English on a Chinese page."""
    shipped = [engine.get_profile(n) for n in engine.profile_names()]
    shipped += [engine.get_training_profile(n) for n in engine.training_profile_names()]
    texts = {p.description for p in shipped}
    texts |= {p.scheduler.release for p in shipped if p.scheduler is not None}
    texts |= {p.scheduler.kv_policy for p in shipped if p.scheduler is not None}
    texts |= set(engine.MEASUREMENT_COLUMNS.values())
    texts |= {u for u in engine.MEASUREMENT_METRICS.values() if u != "ms"}
    texts |= {a.label for a in engine.ASSUMPTIONS} | {a.none_means for a in engine.ASSUMPTIONS}
    texts |= set(engine.training_fit_rows()["unit"])
    texts.discard("")
    assert texts - data_text.MARKED == set()
    zh = catalogues.read("zh")
    assert [t for t in data_text.MARKED if not zh.get(t) or not zh.get(t).string] == []
    assert i18n.catalogue("zh").gettext("executor defaults") == "执行器默认值"


def test_a_rank_past_the_last_configuration_that_fits_is_said_beside_its_field():
    # the default search: 118 distinct configurations fit (125 before the ZeRO stages of a
    # one-rank data-parallel group were collapsed into one); the link asks for rank 10,000
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=240)
    at.switch_page("pages/train.py")
    at.query_params.update({"pick": "10000"})
    at.run()
    said = [w.value for w in at.sidebar.warning]
    assert said == [
        "Rank 10,000 is past the 118 configurations that fit: showing the last, rank 118."
    ]
    assert at.success[0].value.startswith("Shown in detail, ranked 118 of the 118 that fit")
    at.number_input(key="train:pick").set_value(3).run()  # in range: nothing to say
    assert not at.sidebar.warning


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_streamlits_uploader_words_are_replaced_in_chinese_only(lang):
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=240)
    at.switch_page("pages/load.py")
    at.query_params.update({"mode": "trace", "lang": lang, "requests": "200"})
    at.run()
    styles = [h.proto.body for h in at.get("html")]
    if lang == "en":
        assert styles == []
    else:  # the size line hidden (the label states the limit), the button's word in Chinese
        (style,) = styles
        assert "stFileUploaderDropzoneInstructions" in style and 'content: "上传"' in style
        label = at.get("file_uploader")[0].proto.label
        assert "1,000,000 字节" in label
