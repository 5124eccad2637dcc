"""The serving page's pure builders: config.json in the link, older links, headline, curves.

No streamlit session: ui/widgets/model_config.py and ui/decode/view.py are plain functions.
"""

from __future__ import annotations

import json

import pytest

import engine
from engine.scenarios.bind import bind
from engine.scenarios.deployment import Deployment
from engine.scenarios.requests import Batch
from tests.conftest import ROOT
from ui.decode import view as sv
from ui.decode.link import declare
from ui.links.link_params import legacy_tokens
from ui.links.params import MAX_VALUE_CHARS, ParamError, parse_params
from ui.widgets import model_config as sc
from ui.words.format import fmt

CATALOG = engine.load_catalog()
CONFIGS = sorted((ROOT / "tests" / "fixtures" / "configs").glob("*.json"))
OPTS = {"tp": 2, "pp": 1, "batch_size": 1, "input_tokens": 8192, "output_tokens": 256}
OPTS |= {"precision": "fp16", "profile": "tutorial"}


def run(opts: dict) -> tuple:
    """ui.decode.view.run on the page's objects for `opts` (the keyword form's fields)."""
    dep, request = bind(("Llama-3.1-70B", CATALOG.hardware["H100"]), opts, Deployment, Batch)
    result, error, _ = sv.run(dep, request)
    return result.as_dict(), error


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.stem)
def test_compact_config_keeps_the_shapes_and_fits_a_link(path):
    text = path.read_text()
    short = sc.compact(text)
    assert len(short) <= MAX_VALUE_CHARS and len(short) < len(text)
    full = engine.model_from_config(text).arch
    assert engine.model_from_config(short).arch == full  # the same shapes, exactly
    assert sc.compact(short) == short  # compacting is idempotent: the link is canonical


def test_compact_llama_config_holds_only_the_fields_read():
    short = json.loads(sc.compact((ROOT / "tests/fixtures/configs/Llama-3.1-70B.json").read_text()))
    assert set(short) == {
        "architectures",
        "hidden_size",
        "intermediate_size",
        "max_position_embeddings",
        "num_attention_heads",
        "num_hidden_layers",
        "num_key_value_heads",
        "vocab_size",
    }


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{", "not valid JSON"),
        ("[1]", "must be a JSON object"),
        ('{"architectures": ["<script>X</script>"]}', "is not supported"),
        ('{"architectures": ["LlamaForCausalLM"], "hidden_size": 8}', "'num_attention_heads'"),
        ("{" + " " * sc.MAX_PASTE_CHARS + "}", "longer than"),
    ],
)
def test_bad_configs_are_refused_naming_the_problem(text, message):
    with pytest.raises(ValueError, match=message):
        sc.compact(text)
    with pytest.raises(ParamError, match=message):
        sc.read_param(text)


def test_upload_limits():
    with pytest.raises(ValueError, match="larger than"):
        sc.read_upload(b" " * (sc.MAX_UPLOAD_BYTES + 1))
    with pytest.raises(ValueError, match="UTF-8"):
        sc.read_upload(b"\xff\xfe")
    with pytest.raises(ValueError, match="the uploaded file is empty"):
        sc.read_upload(b" \n")  # said, not taken for "no file"
    assert sc.read_upload(b"{}") == "{}"


def test_every_new_link_parameter_is_read_and_checked():
    params = declare(CATALOG).params
    raw = {"tp": ["2"], "pp": ["0"], "input_tokens": ["8192"], "output_tokens": ["1.5"]}
    raw |= {"profile": ["trtllm"], "model": ["config.json"], "model_config": ["{"]}
    values, warnings = parse_params(raw, params)
    assert values == {"tp": 2, "input_tokens": 8192, "profile": "trtllm", "model": "config.json"}
    text = " ".join(warnings)
    assert "'pp'" in text and "'output_tokens'" in text and "'model_config'" in text


def test_older_links_map_onto_input_and_output_tokens():
    # context 4096 with a 1024-token prompt: the request grows to 4096, so O = 4096 − 1024
    assert legacy_tokens({"context": ["4096"], "prompt": ["1024"]}) == {
        "input_tokens": 1024,
        "output_tokens": 3072,
    }
    assert legacy_tokens({"context": ["4096"]}) == {"input_tokens": 4096}
    assert legacy_tokens({"prompt": ["9"], "input_tokens": ["5"]}) == {}  # new names win
    assert legacy_tokens({"context": ["x"]}) == {}


def test_headline_and_fit_text_match_serve():
    r, error = run(OPTS)
    assert error is None and r["fits_in_memory"]
    cards = {label: value for label, value, _ in sv.headline(r)}
    assert next(iter(cards)) == "Fits in memory" and cards["Fits in memory"] == "yes"
    assert cards["TPOT"] == fmt(r["tpot_ms"] * 1e-3, "s")
    # 80 GiB = 85,899,345,920 B; 10 % reserve (tutorial) = 8,589,934,592 B -> "8.59 GB"
    assert cards["Reserve per device"] == "8.59 GB"
    assert sv.fit_text(r, CATALOG.hardware["H100"]).startswith("Fits: ")
    one, _ = run(OPTS | {"tp": 1})
    assert not one["fits_in_memory"]
    assert sv.fit_text(one, CATALOG.hardware["H100"]).startswith("Does not fit: ")
    marked = [label for label, _, _ in sv.headline(one) if label.endswith("— hypothetical")]
    assert len(marked) == 6  # TTFT, TPOT, e2e and the three throughputs


def test_a_refused_placement_falls_back_to_one_device_and_says_why():
    r, error = run(OPTS | {"tp": 3})
    assert r["devices"] == 1 and "tp 3 does not divide" in error


def test_curves_are_the_serve_sweep_with_the_page_columns():
    fields = {k: v for k, v in OPTS.items() if k not in ("batch_size", "input_tokens")}
    fields.pop("output_tokens")
    dep = Deployment.of(model="Llama-3.1-70B", hardware=CATALOG.hardware["H100"], **fields)
    df = sv.curves(dep=dep, output_tokens=256, batches=[1, 8, 64], contexts=[1024, 8192])
    row = df[(df["batch_size"] == 8) & (df["context"] == 1024)].iloc[0]
    r = engine.serve("Llama-3.1-70B", "H100", **(OPTS | {"batch_size": 8, "input_tokens": 1024}))
    assert row["tpot_ms"] == pytest.approx(r["tpot_ms"], rel=1e-9)
    assert row["aggregate_tokens_per_s"] == pytest.approx(r["output_tokens_per_s"], rel=1e-9)
    # the largest batch that fits is the engine's figure (between sweep points too)
    fits = df[df["fits_in_memory"].astype(bool)].groupby("context")["batch_size"].max()
    most = df.groupby("context")["max_batch_size"].first()
    assert (most >= fits).all() and "max_batch_at_context" not in df.columns
    one = engine.serve("Llama-3.1-70B", "H100", **(OPTS | {"input_tokens": 1024}))
    assert most[1024] == one["max_batch_size"]


def test_devices_text_names_the_interconnect():
    text = sv.devices_text(CATALOG.hardware["H100"], 2, 1)
    assert text.startswith("2 × NVIDIA H100 SXM (TP 2 × PP 1), NVLink 4: 450 GB/s")
