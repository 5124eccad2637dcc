"""The catalogue: every built-in entry is sound, the tutorial's reference values exactly,
tolerant ids, and team files that add, override or break entries without taking the built-ins
down (data/README.md)."""

import datetime as dt
import os
import tomllib
from pathlib import Path

import pytest

import engine
from engine import CatalogError, UnknownIdError, load_catalog
from engine.catalog.parse import parse_hardware, parse_model
from engine.catalog.reader import (
    BUILTIN_FILES,
    ENV_VAR,
    MAX_FILE_BYTES,
    read_catalog_bytes,
    read_catalog_file,
)

FIXTURES = Path(__file__).resolve().parent / "fixtures"
TEAM, BROKEN = FIXTURES / "team_catalog.toml", FIXTURES / "broken_team_catalog.toml"
BUILTIN = load_catalog(use_env=False)
RAW = {path.stem: tomllib.loads(path.read_text(encoding="utf-8")) for path in BUILTIN_FILES}
RAW_ENTRIES = [("hardware", k, t) for k, t in RAW["hardware"]["hardware"].items()]
RAW_ENTRIES += [("models", k, t) for k, t in RAW["models"]["models"].items()]
GIB = 2**30


def entry_id(value):
    return getattr(value, "id", value if isinstance(value, str) else None)


# --- every built-in entry ----------------------------------------------------
def test_builtin_catalogue_is_big_and_clean():
    assert len(BUILTIN.hardware) >= 20 and len(BUILTIN.models) >= 20
    assert not BUILTIN.problems and not BUILTIN.overrides


@pytest.mark.parametrize(("section", "key", "table"), RAW_ENTRIES, ids=[e[1] for e in RAW_ENTRIES])
def test_entry_loads_on_its_own_with_an_https_source_and_a_date(section, key, table):
    spec = (parse_hardware if section == "hardware" else parse_model)(key, table)
    assert spec.source.startswith("https://") and "." in spec.source[8:]
    assert dt.date.fromisoformat(spec.retrieved) <= dt.date.today()
    assert spec.name and spec.notes  # the decisions taken (dense, GB vs GiB, ...) are written down


@pytest.mark.parametrize("hw", BUILTIN.hardware.values(), ids=entry_id)
def test_hardware_figures_are_positive_and_fp16_is_present(hw):
    figures = [hw.memory_bandwidth_bytes_per_s, hw.memory_capacity_bytes, hw.tdp_w]
    assert all(x > 0 for x in [*figures, *hw.peak_flop_per_s.values()])
    assert hw.dispatch_overhead_s > 0 and "fp16" in hw.peak_flop_per_s


@pytest.mark.parametrize("hw", BUILTIN.hardware.values(), ids=entry_id)
def test_ridge_point_is_plausible_for_every_precision(hw):
    # > 5000 FLOP/byte smells like a GB-vs-TB typo; < 1 like a TFLOP-vs-GFLOP one, except on a
    # wafer whose memory is on-chip SRAM (CS-3: 21 PB/s against 15.6 PFLOP/s fp32, 0.74)
    low = 0.5 if hw.weight_stream_bandwidth_bytes_per_s else 1
    for precision, peak in hw.peak_flop_per_s.items():
        assert low < peak / hw.memory_bandwidth_bytes_per_s < 5000, precision


@pytest.mark.parametrize("m", BUILTIN.models.values(), ids=entry_id)
def test_model_figures_are_positive_and_shapes_are_consistent(m):
    assert m.params > 0 and m.flops_per_sample > 0 and m.layers > 0
    assert m.flop_convention in ("mac1", "mac2") and m.params_active <= m.params
    if m.task == "llm":  # a decoder LLM carries its attention shape, and GQA groups divide
        assert m.is_decoder_llm and m.heads % m.kv_heads == 0
        assert m.flops_per_sample == pytest.approx(2 * m.params_active)  # 2·P_active per token


# --- the tutorial's reference values (data/README.md), exactly ------------------------
SPEC_PEAKS = {  # dense, TFLOP/s (int8/int4: TOPS)
    "A100": dict(fp16=312, fp32=19.5, tf32=156, int8=624),
    "H100": dict(fp16=989, tf32=494, fp8=1979, int8=1979),
    "H200": dict(fp16=989, tf32=494, fp8=1979, int8=1979),
    "B200": dict(fp16=2250, fp8=4500, int4=9000),
    "V100": dict(fp16=125, fp32=15.7),
    "T4": dict(fp16=65, int8=130),
    "MI300X": dict(fp16=1307, fp8=2614, int8=2614, fp32=163.4),
    "Gaudi3": dict(fp16=1835, fp8=3670),
    "TPUv5p": dict(fp16=459, int8=918),
    "JetsonOrinNX": dict(fp16=25, int8=100),
    "M3Max": dict(fp16=14.2),
}
SPEC_HARDWARE = {  # id: name, bandwidth GB/s, capacity in bytes, dispatch ms, TDP W
    "A100": ("NVIDIA A100 80GB SXM", 2039, 80 * GIB, 0.015, 400),
    "H100": ("NVIDIA H100 SXM", 3350, 80 * GIB, 0.010, 700),
    "H200": ("NVIDIA H200 SXM", 4800, 141e9, 0.010, 700),
    "B200": ("NVIDIA B200", 8000, 192 * GIB, 0.008, 1000),
    "V100": ("NVIDIA V100", 900, 32 * GIB, 0.020, 300),
    "T4": ("NVIDIA T4", 320, 16 * GIB, 0.030, 70),
    "MI300X": ("AMD Instinct MI300X", 5300, 192 * GIB, 0.012, 750),
    "Gaudi3": ("Intel Gaudi 3", 3700, 128 * GIB, 0.010, 900),
    "TPUv5p": ("Google TPU v5p", 2760, 95 * GIB, 0.040, 300),
    "JetsonOrinNX": ("NVIDIA Jetson Orin NX", 102, 16e9, 0.200, 25),
    "M3Max": ("Apple MacBook Pro M3 Max", 400, 128e9, 0.050, 100),
}
SPEC_MODELS = {  # id: name, params, FLOPs per sample, convention, layers, hidden, heads, kv heads
    "ResNet-50": ("ResNet-50", 25.6e6, 4.1e9, "mac1", 50, None, None, None),
    "MobileNetV2": ("MobileNetV2", 3.5e6, 0.3e9, "mac1", 54, None, None, None),
    "YOLOv8-Nano": ("YOLOv8-Nano", 3.2e6, 8.7e9, "mac2", 225, None, None, None),
    "BERT-Base": ("BERT-Base", 110e6, 22e9, "mac2", 12, 768, 12, 12),  # per 512-token sequence
    "GPT-2-XL": ("GPT-2 1.5B", 1.5e9, 2 * 1.5e9, "mac2", 48, 1600, 25, 25),  # 2·P per token
    "Llama-3.1-8B": ("Llama-3.1-8B", 8.03e9, 2 * 8.03e9, "mac2", 32, 4096, 32, 8),
    "Llama-3.1-70B": ("Llama-3.1-70B", 70.6e9, 2 * 70.6e9, "mac2", 80, 8192, 64, 8),
}


@pytest.mark.parametrize("key", SPEC_HARDWARE)
def test_spec_section_4_hardware(key):
    name, gb_per_s, capacity, dispatch_ms, tdp = SPEC_HARDWARE[key]
    hw = BUILTIN.hardware[key]
    # The tutorial's peaks, unchanged; only an fp32 peak may be added (every chip lists one).
    assert hw.name == name and set(hw.peak_flop_per_s) - {"fp32"} == set(SPEC_PEAKS[key]) - {"fp32"}
    for precision, tflop_per_s in SPEC_PEAKS[key].items():
        assert hw.peak_flop_per_s[precision] == pytest.approx(tflop_per_s * 1e12, rel=1e-12)
    assert hw.memory_bandwidth_bytes_per_s == pytest.approx(gb_per_s * 1e9, rel=1e-12)
    assert hw.memory_capacity_bytes == pytest.approx(capacity, rel=1e-12)
    assert hw.dispatch_overhead_s == pytest.approx(dispatch_ms * 1e-3, rel=1e-12)
    assert hw.tdp_w == pytest.approx(tdp, rel=1e-12)


@pytest.mark.parametrize("key", SPEC_MODELS)
def test_spec_section_4_models(key):
    name, params, flops, convention, layers, hidden, heads, kv_heads = SPEC_MODELS[key]
    m = BUILTIN.models[key]
    assert (m.name, m.flop_convention, m.layers) == (name, convention, layers)
    assert (m.hidden, m.heads, m.kv_heads) == (hidden, heads, kv_heads)
    assert m.params == pytest.approx(params, rel=1e-12)
    assert m.flops_per_sample == pytest.approx(flops, rel=1e-12)


# --- ids ---------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        *[("resnet50", "ResNet-50"), ("ResNet-50", "ResNet-50"), ("RESNET 50", "ResNet-50")],
        *[("rn50", "ResNet-50"), ("bert-base-uncased", "BERT-Base")],
        ("llama_3.1_8b", "Llama-3.1-8B"),
    ],
)
def test_model_ids_ignore_case_punctuation_and_accept_aliases(text, expected):
    assert BUILTIN.find_model(text).id == expected


@pytest.mark.parametrize("text", ["a100", "A100", "A100-SXM4-80GB", "nvidia a100 80gb sxm"])
def test_hardware_ids_ignore_case_punctuation_and_accept_aliases_and_names(text):
    assert BUILTIN.find_hardware(text).id == "A100"
    assert engine.solve("resnet50", text).latency_s == pytest.approx(0.5426e-3, rel=1e-3)


@pytest.mark.parametrize(
    ("find", "text", "close"),
    [
        *[("find_hardware", "A10O", "A100"), ("find_model", "resnet-5", "ResNet-50")],
        *[("find_model", "lama-3.1-8b", "Llama-3.1-8B"), ("find_hardware", "H1OO", "H100")],
    ],
)
def test_unknown_ids_list_the_closest_matches(find, text, close):
    with pytest.raises(UnknownIdError) as info:
        getattr(BUILTIN, find)(text)
    assert isinstance(info.value, KeyError) and isinstance(info.value, ValueError)
    assert text in str(info.value) and close in str(info.value)


# --- team catalogues -----------------------------------------------------------
def test_environment_variable_adds_files_in_a_path_list(monkeypatch, tmp_path):
    other = tmp_path / "other.toml"
    other.write_text(TEAM.read_text().replace("Team-X1", "Team-Y2").replace("OurNet", "TheirNet"))
    monkeypatch.setenv(ENV_VAR, os.pathsep.join([str(TEAM), "", str(other)]))
    cat = load_catalog()
    assert {"Team-X1", "Team-Y2"} <= set(cat.hardware) and {"OurNet", "TheirNet"} <= set(cat.models)
    assert cat.hardware["Team-X1"].origin == str(TEAM) and not cat.problems
    assert cat.hardware["Team-Y2"].origin == str(other)
    assert "Team-X1" not in load_catalog(use_env=False).hardware  # the switch works


def test_explicit_paths_add_entries_and_an_override_replaces_a_built_in(monkeypatch):
    monkeypatch.delenv(ENV_VAR, raising=False)
    cat = load_catalog([TEAM])
    a100 = cat.find_hardware("A100")
    assert a100.origin == str(TEAM) and a100.peak_flop_per_s["fp16"] == pytest.approx(280e12)
    assert len(cat.overrides) == 1 and "A100" in cat.overrides[0] and str(TEAM) in cat.overrides[0]
    assert cat.find_model("ournet").layers == 40 and not cat.problems
    assert len(cat.hardware) == len(BUILTIN.hardware) + 1  # A100 replaced, Team-X1 added


def test_the_broken_fixture_reports_every_bad_entry_and_loads_the_good_ones():
    cat = load_catalog([BROKEN], use_env=False)
    where = {(p.entry, p.field) for p in cat.problems}
    assert all(p.file == str(BROKEN) for p in cat.problems)
    assert {
        ("hardware.BadUnits", "memory_bandwidth"),
        ("hardware.NegativeMemory", "memory_capacity"),
        ("hardware.HugePeak", "peak.fp16"),
        ("hardware.NoTdp", "tdp"),
        ("hardware.ExtraField", "colour"),
        ("hardware.team_good", ""),  # a duplicate id: the whole entry
        ("models.BadConvention", "flop_convention"),
        ("models.<script>alert(1)</script>", ""),  # an id that is not an id
    } == where
    assert cat.find_hardware("Team-Good").origin == str(BROKEN) and "TeamNet" in cat.models
    assert cat.hardware["A100"] == BUILTIN.hardware["A100"]


HW = """[hardware.Chip]
name = "Chip"
memory_bandwidth = "1 TB/s"
memory_capacity = "16 GiB"
dispatch_overhead = "0.01 ms"
tdp = "100 W"
peak = { fp16 = "100 TFLOP/s", fp32 = "10 TFLOP/s" }
interconnect = "none"
source = "https://example.com/chip"
"""


def chip(old: str = "", new: str = "", extra: str = "") -> bytes:
    """The good [hardware.Chip] table with `old` replaced by `new` and `extra` appended."""
    return (HW.replace(old, new) + extra).encode()


BAD_ENTRIES = {  # case: (file content, field of hardware.Chip, words in the message)
    "wrong units": (chip('"1 TB/s"', '"3.35 TB/z"'), "memory_bandwidth", "unknown unit"),
    "negative": (chip('"16 GiB"', '"-1 GiB"'), "memory_capacity", "positive"),
    "not finite": (chip('"100 TFLOP/s"', '"1e400 FLOP/s"'), "peak.fp16", "finite"),
    "a power": (chip('"1 TB/s"', '"9**9**9 TB/s"'), "memory_bandwidth", "powers"),
    "missing field": (chip('tdp = "100 W"', ""), "tdp", "missing"),
    "unknown field": (chip(extra='colour = "red"'), "colour", "unknown field"),
    "huge integer": (chip('"100 W"', "1" + "0" * 400), "tdp", "range"),
}
BROKEN_FILES = {case: (c, "hardware.Chip", f, w) for case, (c, f, w) in BAD_ENTRIES.items()}
BROKEN_FILES |= {  # case: (file content, entry, field, words in the message)
    "malformed TOML": (b"[hardware.Chip\nname = 1", "", "", "not valid TOML"),
    "exact duplicate key": (chip(extra=HW), "", "", "not valid TOML"),
    "duplicate id": (
        chip(extra=HW.replace(".Chip]", '."c-h-i-p"]')),
        "hardware.c-h-i-p",
        "",
        "dup",
    ),
    "5000-digit integer": (b"x = 1" + b"0" * 5000, "", "", "not valid TOML"),
    "nested 5000 deep": (b"x = " + b"[" * 5000 + b"]" * 5000, "", "", "nested too deeply"),
    "not UTF-8": (b"\xff\xfe[hardware.Chip]\n", "", "", "not UTF-8"),
    "not a table": (b"hardware = 5", "hardware", "", "table of entries"),
    "unknown section": (b"[chips.X]\nname = 1", "", "chips", "top-level"),
}


@pytest.mark.parametrize("case", BROKEN_FILES)
def test_a_broken_file_names_file_entry_and_field_and_built_ins_still_load(tmp_path, case):
    content, entry, field, words = BROKEN_FILES[case]
    path = tmp_path / "team.toml"
    path.write_bytes(content)
    cat = load_catalog([path], use_env=False)
    assert any(
        (p.file, p.entry, p.field) == (str(path), entry, field) and words in p.message
        for p in cat.problems
    ), cat.problems
    assert all(isinstance(p, CatalogError) and p.file == str(path) for p in cat.problems)
    assert cat.hardware.keys() >= BUILTIN.hardware.keys() and cat.find_model("resnet50")


@pytest.mark.parametrize("size", [MAX_FILE_BYTES + 1, 50_000_000])
def test_a_file_over_the_limit_is_refused_unread(tmp_path, size):
    path = tmp_path / "huge.toml"
    with path.open("wb") as f:  # sparse: the 50 MB case costs nothing to write
        f.truncate(size)
    _, problems = read_catalog_file(path)
    # read to the limit + 1 byte only, whatever size the file claims
    assert len(problems) == 1 and problems[0].message == "larger than the limit of 1,000,000 bytes"
    assert load_catalog([path], use_env=False).find_hardware("A100")


def test_a_missing_file_is_reported_not_fatal(tmp_path, monkeypatch):
    # a short relative path: messages cut a path at 80 characters, and tmp_path's length
    # depends on the run (a parallel worker's is longer)
    monkeypatch.chdir(tmp_path)
    cat = load_catalog([Path("nope.toml"), tmp_path], use_env=False)
    assert len(cat.problems) == 2
    assert cat.problems[0].message.endswith("nope.toml (No such file or directory)")
    assert cat.problems[1].message.endswith("is not a regular file")  # a directory


def test_uploaded_bytes_read_exactly_like_the_file():
    for path in (TEAM, BROKEN):
        found, problems = read_catalog_bytes(path.read_bytes(), str(path))
        found_file, problems_file = read_catalog_file(path)
        assert found == found_file and list(map(str, problems)) == list(map(str, problems_file))
    assert "limit" in read_catalog_bytes(b" " * (MAX_FILE_BYTES + 1), "up")[1][0].message
