"""Hostile input: the share-link parser, the engine's entry points and every page.

Hypothesis: `parse_params` never raises, keeps only valid values and warns for each dropped one;
engine entry points let only ValueError/KeyError escape. AppTest: 500+ seeded hostile links over
app.py and every page in pages/ (found at test time); every page with a broken team catalogue."""

from __future__ import annotations

import contextlib
import math
import random
import re
import time
import tomllib
from pathlib import Path

import pytest
import streamlit
from hypothesis import given, settings
from hypothesis import strategies as st
from streamlit.testing.v1 import AppTest

import engine
from engine.assumptions import ASSUMPTION_NAMES
from engine.catalog.reader import BUILTIN_FILES, ENV_VAR, read_catalog_bytes
from engine.catalog.resolve import _catalog_for
from tests.conftest import page_links
from ui.links import custom
from ui.links.params import MAX_PARAMS, MAX_VALUE_CHARS, parse_params
from ui.words.text import plain

ROOT = Path(__file__).resolve().parent.parent
BROKEN = Path(__file__).resolve().parent / "fixtures" / "broken_team_catalog.toml"
CAT = engine.load_catalog(use_env=False)
HTML = ["<script>alert(1)</script>", "<img src=x onerror=alert(1)>", "<svg onload=1>", "<iframe>"]
MARKERS = ("<script", "onerror=", "<svg", "<iframe")  # must never reach an HTML-enabled element
NEVER_VALID = ["nan", "NaN", "inf", "-inf", "-Infinity", "1e400", "-1e400", "-1", *HTML]
HW = "name=X;fp16=400 TFLOP/s;fp32=50 TFLOP/s;bandwidth=1.5 TB/s;capacity=64 GiB;dispatch=0.01 ms"
HW += ";tdp=1 W"
MODEL = "name=M;params=1e9;flops=2 GFLOP;convention=mac2;layers=24"
HTML_HW, HTML_MODEL = HW.replace("X", HTML[0]), MODEL.replace("M;", f"{HTML[1]};")
CUSTOM = [HW, MODEL, HTML_HW, HTML_MODEL, HW.replace("1.5 TB/s", "3.35 TB/z")]
CUSTOM += [HW.replace("64 GiB", "-1 GiB"), HW.replace("400 TFLOP/s", "1e400 FLOP/s")]
CUSTOM += [HW.replace("400", "9**9**9"), MODEL.replace("24", "²"), MODEL.replace("2 G", "1/0 G")]
CUSTOM += [HW.replace("1.5 TB/s", "3.2 TBps"), HW.replace("1.5 TB/s", "3.2 TBs")]  # datasheet, typo
CUSTOM += [HW.replace("400 TFLOP/s", "400 TFLOPS"), HW.replace(";fp32=50 TFLOP/s", "")]
CUSTOM += [HW.replace("name=X", "name=[x](http://e.example) www.e.example")]
ODD = [*NEVER_VALID, *CUSTOM, "", " ", "\x00", "\u202e", "\u200b", "🙂" * 30, "\uff21\uff11"]
ODD += ["١٢٣", "½", "0x10", "1_000", "1e-400", "4.9e-324", "9" * 400, "1" + ",1" * 5000]
ODD += ["A" * 10_000, "0", "-0", "None", "[]", "{}", "'; DROP TABLE x;--", "../../etc/passwd"]
ODD += ["%3Cscript%3E", "[x](javascript:1)", "**b** `c` $x$", ":material/home:", "1..2000"]
ODD += ["8..512:8", "5..1", "1..10:0", "1,2,4", "A100,A100,H100", "A100," * 20, "ResNet-50"]
ODD += ["resnet50", "a100", "Llama-3.1-8B", "fp8", "int4", "bf16", "0.7", "mac2", "catalog"]
ODD += ["NVIDIA", "llm", "64", "2048", "1000001", "name=x;name=y", "fp16=;=;;"]
ODD += ["H100:6.16,A100:none", "H100:", ":1", "H100:-1", "none", "fp16,fp8", "trtllm", "1,2,4,8"]
ODD += ["decode", "tutorial", "DECODE", "vision", "0.005", "0.01", "0.95", "0.99", "1", "10000001"]
ODD += ["8xH100/tp8,4xMI300X/tp4", "2xH100/tp1/pp2", "8xH100/tp4", "3xH100/tp3", "h100/pp0"]
ODD += ["2xJetsonOrinNX/tp2", "x/tp1", "1xA100/tp1," * 9, "team", "my-team_2"]
STRICT = {"model", "hardware", "batch", "batches", "precision", "efficiency", "custom_hw"}
STRICT |= {"layer_overhead_us", "dispatch_overhead_ms", "activation_fraction", "flop_convention"}
STRICT |= {"view", "context", "memory_reserve"}  # the LLM view (ui.widgets.llm_view)
NAMES = [*STRICT, "custom_model", "q", "vendor", "task", "baseline", "prompt", "kv_precision"]
NAMES += ["contexts", "budget_ms"]
# the serving page's config.json (ui.widgets.model_config): a valid compact one, a refused one
CONFIG = '{"architectures":["LlamaForCausalLM"],"hidden_size":4096,"intermediate_size":14336,'
CONFIG += '"num_attention_heads":32,"num_hidden_layers":32,"num_key_value_heads":8,'
CONFIG += '"vocab_size":128256,"max_position_embeddings":131072}'
ODD += [CONFIG, CONFIG.replace("4096", '"<b>4096</b>"'), "config.json", '{"a":' * 400]
STRICT |= {"model_config", "tutorial"}  # tutorial: on or off (the one-step decode view)
NAMES += ["model_config", "tutorial"]
ODD += ["on", "off", "ON"]
PLAN = {"input_tokens", "output_tokens", "ttft_ms", "tpot_ms", "min_tokens_per_s_per_user"}
PLAN |= {"tp", "pp", "precisions", "profile", "prices", "bandwidth_efficiency", "link_latency_us"}
PLAN |= {"attention_efficiency", "expert_efficiency", "link_efficiency"}  # the planner's link
STRICT |= PLAN  # none of NEVER_VALID is a valid value of any of them
STRICT |= {"deployments"}  # Compare's multi-device deployments (ui.compare.deployments)
NAMES += [*sorted(PLAN), "deployments"]
NAMES += ["ep", "attention_dp"]  # an MoE layout: /decode once raised on ep=2 with tp 1
# with any of these in a link, `profile` may name a custom profile (ui.core.profiles)
CUSTOM_PROFILE_KEYS = set(engine.PROFILE_KEYS)
ODD_KEYS = [*HTML, "", " model", "MODEL", "model[]", "__proto__", "embed", "a" * 300, "x\x00y"]
IDENTIFIER = re.compile(r"[a-z][a-z0-9_]*")  # every page parameter's name has this form


# --- the share-link parser ---------------------------------------------------
def page_params() -> dict[str, list]:
    """Every page's parameters, as the pages declare them (ui/<page>/link.py)."""
    return {page: list(link) for page, link in page_links(CAT).items()}


PARAMS = page_params()
texts = st.one_of(st.sampled_from(ODD), st.text(max_size=40), st.floats().map(repr))
keys = st.one_of(st.sampled_from(NAMES), st.sampled_from(ODD_KEYS), st.text(max_size=12))


@pytest.mark.parametrize("page", PARAMS)
@settings(max_examples=150, deadline=None)
@given(raw=st.dictionaries(keys, st.lists(texts, max_size=3), max_size=50))
def test_parse_params_keeps_only_valid_values_and_warns_for_each_dropped(page, raw):
    params = {p.name: p for p in PARAMS[page]}
    values, warnings = parse_params(raw, list(params.values()))
    assert set(values) <= set(params)
    for name, value in values.items():  # the canonical form reads back to the same value
        again = params[name].read(params[name].write(value))
        assert again == (pytest.approx(value, rel=1e-5) if isinstance(value, float) else value)
    text = "\n".join(warnings)
    for name in list(raw)[:MAX_PARAMS]:  # each dropped name is in a warning, cut at 40 chars
        shown = repr(name if len(name) <= 40 else name[:40] + "...")
        assert name in values or shown in text or repr(name) in text, (name, warnings)
    assert len(raw) <= MAX_PARAMS or f"limit {MAX_PARAMS}" in text


# --- the engine's entry points ---------------------------------------------
ids = st.one_of(st.sampled_from([*CAT.hardware, *CAT.models, "resnet50", "a100"]), texts)
anything = st.one_of(
    *(st.none(), st.booleans(), st.integers(), st.integers(-(10**400), 10**400), st.floats()),
    *(st.complex_numbers(), st.text(max_size=10), st.lists(st.integers(-3, 10**7), max_size=3)),
)
overrides = st.dictionaries(st.sampled_from([*ASSUMPTION_NAMES, "bogus"]), anything, max_size=4)


def only_value_or_key_errors(call, *args, **kwargs) -> None:
    """Anything but ValueError/KeyError (TypeError, OverflowError, ...) fails the test."""
    with contextlib.suppress(ValueError, KeyError):
        call(*args, **kwargs)


@settings(max_examples=300, deadline=None)
@given(ids, ids, anything, st.one_of(ids, anything), overrides)
def test_solve_raises_only_value_or_key_errors(model, hardware, batch, precision, kwargs):
    only_value_or_key_errors(engine.solve, model, hardware, batch, precision, **kwargs)


@settings(max_examples=200, deadline=None)
@given(
    st.one_of(ids, st.lists(ids, max_size=3)),
    st.one_of(ids, st.lists(ids, max_size=3)),
    st.one_of(anything, st.lists(anything, max_size=4), st.lists(st.integers(), max_size=50)),
    st.one_of(ids, anything, st.lists(st.one_of(ids, anything), max_size=3)),
    overrides,
)
def test_sweep_raises_only_value_or_key_errors(models, hardware, batches, precisions, kwargs):
    only_value_or_key_errors(engine.sweep, models, hardware, batches, precisions, **kwargs)


RAW = [tomllib.loads(path.read_text()) for path in BUILTIN_FILES]  # the built-in entries
TABLES = [(section, t) for raw in RAW for section, tables in raw.items() for t in tables.values()]
FIELDS = sorted({field for _, table in TABLES for field in table})
toml_values = st.recursive(
    st.one_of(anything, st.sampled_from(ODD), st.dates()),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(texts, inner, max_size=3)),
    max_leaves=8,
)
changes = st.dictionaries(st.one_of(st.sampled_from(FIELDS), texts), toml_values, max_size=3)


@settings(max_examples=400, deadline=None)
@given(st.sampled_from(TABLES), ids, changes, st.sets(st.sampled_from(FIELDS), max_size=2))
def test_catalogue_table_parsers_raise_only_value_errors(base, entry, change, drop):
    section, table = base  # a real entry with some fields changed or dropped
    table = {k: v for k, v in (table | change).items() if k not in drop}
    parser = engine.parse_hardware if section == "hardware" else engine.parse_model
    only_value_or_key_errors(parser, str(entry), table)


@settings(max_examples=300, deadline=None)
@given(st.one_of(texts, st.lists(st.sampled_from(ODD), max_size=6).map(";".join)))
def test_custom_spec_readers_raise_only_value_errors(text):
    only_value_or_key_errors(custom.read_custom_hw, text)
    only_value_or_key_errors(custom.read_custom_model, text)


@settings(max_examples=200, deadline=None)
@given(st.one_of(st.binary(max_size=300), texts.map(lambda t: f"[x.y]\nz = {t!r}\n".encode())))
def test_catalogue_bytes_never_raise(data):
    found, problems = read_catalog_bytes(data, "fuzz")
    assert all(p.file == "fuzz" for p in problems) and set(found) == {"hardware", "models"}


# --- every page under hostile share links ------------------------------------
FUZZ_QUERIES = 520  # random hostile links over all pages


def page_files() -> list[str]:
    """app.py and every page in pages/ (a page added later is fuzzed too)."""
    pages = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "pages").glob("[!_]*.py"))
    return ["app.py", *pages]


def hostile_query(rng: random.Random) -> dict[str, list[str]]:
    """1-4 keys (now and then 45 more), a value each (sometimes repeated): odd, hostile, junk."""
    names = rng.choices([*NAMES, *ODD_KEYS, "zz_unknown"], k=rng.randint(1, 4))
    names += [f"zz_{i}" for i in range(45)] if rng.random() < 0.03 else []

    def value() -> str:
        if rng.random() < 0.2:  # random unicode, from control characters to CJK
            return "".join(chr(rng.randint(1, 0x9FFF)) for _ in range(rng.randint(1, 12)))
        return rng.choice(ODD)

    return {name: [value() for _ in range(rng.choice([1, 1, 1, 2, 3]))] for name in names}


def must_warn(query: dict[str, list[str]], names: set[str]) -> bool:
    """True when parse_params is sure to drop something for a page whose link holds `names`."""
    if len(query) > MAX_PARAMS:
        return True
    for key, values in query.items():
        if not IDENTIFIER.fullmatch(key) or key.startswith("zz_"):
            return True  # no page has such a parameter
        if key in names and (len(values) > 1 or len(values[-1]) > MAX_VALUE_CHARS):
            return True
        custom_profile = key == "profile" and CUSTOM_PROFILE_KEYS & set(query)
        if key in names & STRICT and values[-1] in NEVER_VALID and not custom_profile:
            return True
    return False


def html_leaks(at: AppTest) -> list[str]:
    """Bodies of HTML-enabled elements (st.html, unsafe_allow_html) carrying a payload."""
    leaks, stack = [], [at._tree]
    while stack:
        node = stack.pop()
        stack.extend(getattr(node, "children", {}).values())
        proto = getattr(node, "proto", None)
        html = getattr(node, "type", "") == "html" or getattr(proto, "allow_html", False)
        body = str(getattr(proto, "body", ""))
        if html and any(m in body.lower() for m in MARKERS):
            leaks.append(body[:200])
    return leaks


LIVE = re.compile(r"(?<![\\%])http://e\.example|www\.e\.example")  # live hostile links


def markdown_leaks(at: AppTest) -> list[str]:
    """Markdown bodies where the hostile chip name would render as a live link (a bare URL, a
    `[x](http...)` link or `www.` autolink): user text must be backslash-escaped."""
    leaks, stack = [], [at._tree]
    while stack:
        node = stack.pop()
        stack.extend(getattr(node, "children", {}).values())
        body = str(getattr(getattr(node, "proto", None), "body", ""))
        if LIVE.search(body):
            leaks.append(body[:200])
    return leaks


def open_page(page: str, query: dict) -> AppTest:
    """A fresh session on `page` (as a shared link opens it), run once (the process's one scan
    for Streamlit components: tests/conftest.py one_component_scan)."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    if page != "app.py":
        at.switch_page(page)
    at.query_params.update(query)
    at.run()
    return at


def check(page: str, query: dict, names: set[str] | None) -> list[str]:
    """Everything wrong with `page` opened with `query`; `names`: its link's, if it has one."""
    at = open_page(page, query)
    warned = any(re.search("ignored|parameter", w.value, re.I) for w in at.warning)
    kept = [k for k in at.query_params if not IDENTIFIER.fullmatch(k) or k.startswith("zz_")]
    problems = [f"exception: {e.value[:300]}" for e in at.exception]
    problems += [f"HTML: {leak}" for leak in html_leaks(at)]
    problems += [f"live link: {leak}" for leak in markdown_leaks(at)]
    problems += ["blank page"] if not at.main.children else []
    if names is not None:  # the page reads its share link and writes it back
        problems += (
            ["no warning for dropped input"] if must_warn(query, names) and not warned else []
        )
        problems += [f"hostile keys kept in the link: {kept}"] if kept else []
    return [f"{page}?{query!r:.300}: {p}" for p in problems]


def fuzz_page(page: str, queries: list[dict[str, list[str]]]) -> tuple[str, int, list, float]:
    """One page under every query; returns (page, runs, failures, seconds)."""
    start = time.monotonic()
    reads_link = "bind(" in (ROOT / page).read_text()  # then: the names it writes into its link
    names = set(open_page(page, {}).query_params) if reads_link else None
    failures = [f for query in queries for f in check(page, query, names)]
    return page, len(queries), failures, time.monotonic() - start


PAGES = page_files()
PER_PAGE = math.ceil(FUZZ_QUERIES / len(PAGES))  # random links per page, besides FIXED
NAMED = {"custom_hw": [HTML_HW], "custom_model": [HTML_MODEL], "model": ["Custom-Model"]}
NAMED |= {"hardware": ["Custom-HW"]}  # every page shows the hostile names it can
LINKED = {"custom_hw": [CUSTOM[-1]], "hardware": ["Custom-HW"], "precision": ["fp8"]}
FIXED = [NAMED, {"model": [HTML[0]], "hardware": [HTML[1]], "q": [HTML[2]]}, {HTML[0]: ["1"]}]
FIXED += [LINKED]  # a chip name with a markdown link and bare URLs, in engine warnings too
FIXED += [{"model": ["config.json"], "model_config": ['{"architectures":["' + HTML[0] + '"]}']}]


def test_the_fuzz_covers_every_page_with_enough_links():
    assert PAGES[0] == "app.py" and len(PAGES) >= 10  # the overview and every page
    assert len(PAGES) * (PER_PAGE + len(FIXED)) >= 500


@pytest.mark.parametrize("index", range(len(PAGES)), ids=PAGES)
def test_every_page_survives_hostile_share_links(index, monkeypatch):
    """One page under FIXED and PER_PAGE random hostile links (each page its own seed: the
    pages are shared out to the test workers, so each is fuzzed whichever runs it)."""
    monkeypatch.setenv(ENV_VAR, "")
    rng = random.Random(20261130 + index)
    queries = FIXED + [hostile_query(rng) for _ in range(PER_PAGE)]
    page, runs, failures, seconds = fuzz_page(PAGES[index], queries)
    print(f"\nAppTest fuzz: {page}: {runs} hostile links in {seconds:.0f} s")
    assert runs == len(FIXED) + PER_PAGE
    assert not failures, f"{len(failures)} failures, e.g.:\n" + "\n".join(failures[:10])


# --- a deliberately broken team catalogue ------------------------------------
@pytest.fixture
def broken_catalogue(monkeypatch):
    monkeypatch.setenv(ENV_VAR, str(BROKEN))
    streamlit.cache_resource.clear()
    _catalog_for.cache_clear()
    yield
    streamlit.cache_resource.clear()
    _catalog_for.cache_clear()


@pytest.mark.parametrize("page", page_files())
def test_every_page_runs_with_a_broken_team_catalogue(broken_catalogue, page):
    at = open_page(page, {})
    assert not at.exception
    text = "\n".join(w.value for w in at.warning)
    unescaped = text.replace("\\", "")  # markdown syntax in file text is backslashed
    assert "broken_team_catalog.toml: hardware.BadUnits.memory_bandwidth: " in unescaped
    assert "hardware.HugePeak.peak.fp16" in unescaped
    assert "models.BadConvention.flop_convention" in unescaped
    # shown as inert text: markdown/HTML syntax backslash-escaped (ui.words.text.plain), never HTML
    assert plain("<script>alert(1)</script>") in text and not html_leaks(at)


def test_built_in_solve_still_works_with_a_broken_team_catalogue(broken_catalogue):
    link = {"model": "ResNet-50", "hardware": "A100", "batch": "1", "precision": "fp16"}
    at = open_page("pages/solve.py", link)
    assert not at.exception
    metrics = {m.label: m.value for m in at.metric}
    # docs/model.md's reference case: 0.5426 ms, shown with 3 figures by ui.words.format
    assert metrics["Latency"] == "543 µs" and "memory" in metrics["Bottleneck"]
    assert engine.default_catalog().find_hardware("Team-Good").origin == str(BROKEN)
