"""Bring-your-own config.json (engine/catalog/hf_config.py): every catalogue decoder LLM's real
config.json (tests/fixtures/configs/, provenance in its README) imports to the catalogue's
shapes and count; bad files are refused with a message naming the field; the catalogue's
arch tables are validated; the CLI takes --model-config wherever it takes --model."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import engine
from engine.catalog.arch import param_count
from engine.catalog.hf_config import MAX_CONFIG_BYTES, architecture_from_config
from engine.catalog.parse import CatalogError, parse_model
from engine.cli.main import main

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "configs"
CATALOG = engine.load_catalog(use_env=False)
LLMS = [m for m in CATALOG.models.values() if m.arch is not None]
LLAMA = json.loads((FIXTURES / "Llama-3.1-8B.json").read_text())


def test_every_catalogue_decoder_llm_has_a_config_fixture():
    assert {p.stem for p in FIXTURES.glob("*.json")} == {m.id for m in LLMS}


@pytest.mark.parametrize("model", LLMS, ids=lambda m: m.id)
def test_config_json_gives_the_catalogue_shapes_and_parameter_count(model):
    spec = engine.model_from_config(FIXTURES / f"{model.id}.json", id=model.id)
    # a config import counts the text decoder only: no vision tower or other extra parameters
    decoder = dataclasses.replace(model.arch, extra_params=0.0)
    assert spec.arch == decoder
    assert spec.params == param_count(decoder)
    assert (spec.layers, spec.hidden, spec.heads, spec.kv_heads) == (
        model.layers,
        model.hidden,
        model.heads,
        model.kv_heads,
    )
    assert spec.task == "llm" and spec.published_params is None
    assert spec.is_decoder_llm and (spec.active_params is not None) == model.arch.is_moe


def test_sources_may_be_a_path_a_json_text_or_a_dict():
    path = FIXTURES / "Llama-3.1-8B.json"
    by_path = engine.model_from_config(path, id="mine", name="My Llama")
    assert by_path.id == "mine" and by_path.name == "My Llama"
    assert engine.model_from_config(str(path)).params == by_path.params
    assert engine.model_from_config(path.read_text()).params == by_path.params
    assert engine.model_from_config(LLAMA).params == 8_030_261_248  # tests/test_arch.py


def test_gemma_3_keys_left_out_take_the_transformers_defaults():
    a = architecture_from_config(FIXTURES / "Gemma-3-27B.json")  # no vocab_size in the file
    assert (a.vocab, a.context_length, a.sliding_pattern, a.sliding_layers) == (
        262_208,
        131_072,
        6,
        52,  # 62 layers - 62 // 6 global ones
    )


def test_an_imported_model_runs_through_the_solvers():
    spec = engine.model_from_config(FIXTURES / "Mixtral-8x7B.json", id="mixtral-mine")
    r = engine.decode(model=spec, hardware="H100", batch_size=1, context=1024, catalog=CATALOG)
    assert r.as_dict()["model"] == "mixtral-mine"
    # 2 FLOPs per active parameter per token: 2 · 12,879,925,248
    assert spec.flops_per_sample == 2 * 12_879_925_248


def _with(**changes) -> dict:
    config = dict(LLAMA)
    for key, value in changes.items():
        if value is None:
            config.pop(key)
        else:
            config[key] = value
    return config


@pytest.mark.parametrize(
    ("config", "message"),
    [
        (_with(num_hidden_layers=None), "config.json: 'num_hidden_layers' is missing"),
        (_with(hidden_size="4096"), "'hidden_size' must be a whole number, got '4096'"),
        (_with(num_attention_heads=-32), "'num_attention_heads' must be from 1 to 100,000"),
        (_with(vocab_size=10**12), "'vocab_size' must be from 1 to 100,000,000"),
        (_with(num_key_value_heads=True), "'num_key_value_heads' must be a whole number"),
        (_with(tie_word_embeddings="no"), "'tie_word_embeddings' must be true or false"),
        (_with(num_key_value_heads=7), "config.json: kv_heads must divide heads"),
        (_with(architectures=["BertModel"]), "architecture 'BertModel' is not supported"),
        (_with(architectures=None), "'architectures' is missing"),
        ({"architectures": ["Gemma3ForConditionalGeneration"]}, "'text_config' is missing"),
        (
            {"architectures": ["Gemma3ForConditionalGeneration"], "text_config": {}},
            "'text_config.num_attention_heads' is missing",
        ),
        ("[1, 2]", "must be a JSON object, got list"),
        ("{not json", "not valid JSON"),
        ("{" + " " * MAX_CONFIG_BYTES + "}", "larger than 1,000,000 bytes"),
        ("/no/such/config.json", "cannot read /no/such/config.json"),
    ],
)
def test_bad_configs_are_refused_with_a_message_naming_the_field(config, message):
    with pytest.raises(ValueError) as info:
        engine.model_from_config(config)
    assert message in str(info.value)


def test_unsupported_layer_layouts_are_refused_rather_than_miscounted():
    deepseek = json.loads((FIXTURES / "DeepSeek-V3.json").read_text())
    deepseek["moe_layer_freq"] = 2  # experts on every other layer: not a layout DeepSeek ships
    with pytest.raises(ValueError, match="moe_layer_freq"):
        engine.model_from_config(deepseek)


def test_maverick_alternating_layers_are_read_as_dense_and_moe_layers():
    # Scout's shapes with interleave_moe_layer_step 2 (Maverick's layout): 48 layers, every
    # 2nd with experts -> 24 MoE layers, the other 24 dense (intermediate_size_mlp).
    scout = json.loads((FIXTURES / "Llama-4-Scout.json").read_text())
    scout["text_config"]["interleave_moe_layer_step"] = 2
    a = engine.model_from_config(scout).arch
    assert (a.dense_layers, a.moe_layers, a.intermediate) == (24, 24, 16384)


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=20,
)


FUZZED = [json.loads((FIXTURES / f"{m}.json").read_text()) for m in ("gpt-oss-20b", "DeepSeek-V3")]


@settings(max_examples=300, deadline=None)
@given(st.sampled_from([LLAMA, *FUZZED]), st.data(), JSON_VALUES)
def test_any_value_in_any_field_gives_a_spec_or_a_value_error(config, data, value):
    key = data.draw(st.sampled_from(sorted(config)))
    try:
        spec = engine.model_from_config({**config, key: value})
    except ValueError as exc:
        assert str(exc).startswith("config.json")
    else:
        assert spec.params > 0


# ------------------------------------------------------------------ catalogue arch tables

TABLE = {
    "name": "toy",
    "task": "llm",
    "params": 1e9,
    "layers": 2,
    "source": "https://example.org/toy",
}
ARCH = {
    "layers": 2,
    "hidden": 64,
    "heads": 4,
    "kv_heads": 2,
    "head_dim": 16,
    "intermediate": 128,
    "vocab": 100,
    "context_length": 512,
}


@pytest.mark.parametrize(
    ("arch", "field", "message"),
    [
        ({**ARCH, "window": 4}, "arch.window", "unknown field"),
        ({k: v for k, v in ARCH.items() if k != "vocab"}, "arch.vocab", "required field"),
        ({**ARCH, "hidden": "64"}, "arch.hidden", "whole number"),
        ({**ARCH, "tied_embeddings": 1}, "arch.tied_embeddings", "true or false"),
        ({**ARCH, "mlp": "swiglu"}, "arch.mlp", "must be one of gated, plain"),
        ({**ARCH, "layers": 3}, "arch", "layers = 2 disagrees with arch.layers = 3"),
        ("deep", "arch", "must be a table"),
    ],
)
def test_arch_table_errors_name_the_entry_and_the_field(arch, field, message):
    with pytest.raises(CatalogError) as info:
        parse_model("toy", {**TABLE, "arch": arch}, origin="team.toml")
    assert info.value.entry == "models.toy"
    assert info.value.field == (field if field != "arch" or "table" in message else "")
    assert message in str(info.value)


def test_flat_shapes_are_filled_from_the_arch_table():
    spec = parse_model("toy", {**TABLE, "arch": ARCH})
    assert (spec.hidden, spec.heads, spec.kv_heads, spec.head_dim) == (64, 4, 2, 16)


# ------------------------------------------------------------------ CLI


def test_cli_takes_model_config_wherever_it_takes_model(capsys):
    path = str(FIXTURES / "Qwen2.5-7B.json")
    assert main(["solve", "--model-config", path, "--hardware", "A100", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["model"] == "Qwen2.5-7B"
    argv = ["sweep", "--model", "GPT-2-XL", "--model-config", path, "--hardware", "A100"]
    assert main([*argv, "--batch-sizes", "1,2", "--format", "json"]) == 0
    assert {r["model"] for r in json.loads(capsys.readouterr().out)} == {"GPT-2-XL", "Qwen2.5-7B"}
    argv = ["decode", "--model-config", path, "--hardware", "H100", "--context", "512"]
    assert main([*argv, "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["model"] == "Qwen2.5-7B"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--model-config", "/no/such.json"], "cannot read /no/such.json"),
        (["--model", "GPT-2-XL", "--model-config", "x.json"], "not both"),
        ([], "a model is required"),
    ],
)
def test_cli_bad_model_input_exits_2_with_one_line(capsys, argv, message):
    assert main(["solve", *argv, "--hardware", "A100"]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_cli_lists_published_and_shape_counts(capsys):
    assert main(["list", "models", "--format", "json"]) == 0
    rows = {r["id"]: r for r in json.loads(capsys.readouterr().out)}
    gpt2 = rows["GPT-2-XL"]
    assert (gpt2["params"], gpt2["published_params"]) == (1.5e9, 1_557_611_200)
    assert gpt2["params_from_shapes"] == 1_557_611_200
    assert rows["ResNet-50"]["params_from_shapes"] is None
    assert rows["ResNet-50"]["published_params"] is None
