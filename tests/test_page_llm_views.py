"""Decoder LLMs give the same tokens/s on every page: Sweep and Compare use the decode model
(engine.decode_sweep) at a context by default, as the decode page does; the tutorial's
whole-model view stays available as a labelled choice (`view=tutorial`)."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

import engine

ROOT = Path(__file__).resolve().parent.parent
BATCHES = "1,8,64,256"
LLAMA = {"model": "Llama-3.1-8B", "precision": "bf16", "batches": BATCHES}


def run(page: str, query: dict[str, str]) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.query_params.update(query)
    at.switch_page(f"pages/{page}.py").run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def url(at: AppTest, key: str) -> str:
    value = at.query_params[key]
    return value[-1] if isinstance(value, list) else value


def throughput(table, batch: int, accelerator: str | None = None) -> str:
    """The table cell of 'Throughput (tokens/s)' at `batch` (and accelerator)."""
    rows = table[table["Batch size"] == batch]
    if accelerator is not None:
        rows = rows[rows["Accelerator"] == accelerator]
    return rows["Throughput (tokens/s)"].iloc[0]


def decode_page_aggregate(batch: int, context: int) -> str:
    """The decode page's tutorial one-step view at `context` (prompt 1,024 + the rest output)."""
    query = {"batch": str(batch), "prompt": "1024", "context": str(context), "tutorial": "on"}
    at = run("decode", {**LLAMA, **query})
    (value,) = [m.value for m in at.metric if m.label.startswith("Aggregate")]
    return value


@pytest.mark.parametrize("context", [4096, 16384])
def test_sweep_and_compare_give_the_decode_pages_tokens_per_s(context):
    # the decode model at batch 64: 64 sequences ÷ TPOT (weights once + 64 KV caches per step)
    r = engine.decode("Llama-3.1-8B", "A100", 64, context, precision="bf16")
    want = r.batch_size / r.tpot_s
    on_decode = decode_page_aggregate(64, context)
    sweep = run("sweep", {**LLAMA, "hardware": "A100", "context": str(context)})
    compare = run("compare", {**LLAMA, "hardware": "A100,H100", "context": str(context)})
    name = engine.default_catalog().hardware["A100"].name
    in_sweep = throughput(sweep.dataframe[0].value, 64)
    (table,) = [
        d.value
        for d in compare.dataframe
        if {"Accelerator", "Batch size", "Throughput (tokens/s)"} <= set(d.value.columns)
    ]
    in_compare = throughput(table, 64, name)
    assert in_sweep == in_compare  # the same cell, formatted the same way
    if isinstance(in_sweep, float):  # a numeric cell: the engine's figure exactly
        assert in_sweep == pytest.approx(want)
    digits = on_decode.replace(",", "").split()[0]
    assert float(digits) == pytest.approx(want, rel=5e-3)  # the card shows 4 figures
    assert str(in_sweep).replace(",", "").startswith(digits[:4])
    assert url(sweep, "view") == url(compare, "view") == "decode"
    assert url(sweep, "context") == url(compare, "context") == str(context)


def test_the_tutorial_view_is_a_labelled_choice_and_differs():
    at = run("sweep", {**LLAMA, "hardware": "A100", "view": "tutorial"})
    tutorial = engine.sweep("Llama-3.1-8B", "A100", [1, 8, 64, 256], ["bf16"])
    decode = engine.decode("Llama-3.1-8B", "A100", 64, 4096, precision="bf16")
    cell = throughput(at.dataframe[0].value, 64)
    tp = float(tutorial.loc[tutorial["batch_size"] == 64, "throughput_per_s"].iloc[0])
    if isinstance(cell, float):
        assert cell == pytest.approx(tp)
    # the vision rule moves 10 % of the weights again per extra sample: fewer tokens/s
    assert tp < 64 / decode.tpot_s
    assert at.radio(key="sweep:view").value == "tutorial"
    assert "Tutorial whole-model view" in " ".join(c.value for c in at.caption)
    at.radio(key="sweep:view").set_value("decode").run()
    assert url(at, "view") == "decode"


def test_view_context_and_reserve_are_validated_in_the_link():
    query = {**LLAMA, "hardware": "A100", "view": "vision", "context": "0"}
    at = run("compare", query | {"hardware": "A100,H100", "memory_reserve": "1.5"})
    text = " ".join(w.value for w in at.warning).replace("\\", "")
    for name in ("view", "context", "memory_reserve"):
        assert f"ignored '{name}'" in text
    assert url(at, "view") == "decode" and url(at, "context") == "4096"
    assert url(at, "memory_reserve") == "0.1"  # the engine's default, recorded in the link


def test_non_llm_models_have_no_llm_view_in_the_link():
    at = run("sweep", {"model": "ResNet-50", "hardware": "A100"})
    assert "view" not in at.query_params and "context" not in at.query_params
    assert not [r for r in at.radio if r.key == "sweep:view"]


def kinds(at: AppTest) -> list[str]:
    main = at.main.children
    return [type(main[k]).__name__ for k in sorted(main)]


def test_rows_that_do_not_fit_are_said_first_and_marked_hypothetical():
    # Llama-3.1-70B at fp16: 141 GB of weights > one H100's 80 GiB at every batch
    query = {"model": "Llama-3.1-70B", "precision": "fp16", "batches": "1,8"}
    at = run("sweep", query | {"hardware": "H100"})
    assert kinds(at)[:3] == ["Title", "Caption", "Error"]
    assert "Does not fit" in at.error[0].value and "hypothetical" in at.error[0].value
    # the tutorial view: 70.6e9 params × 2 B = 141.2 GB > 80 GiB (H100) and > 141 GB (H200)
    at = run("compare", query | {"hardware": "H100,H200", "view": "tutorial"})
    df = engine.sweep("Llama-3.1-70B", ["H100", "H200"], [1, 8], ["fp16"])
    assert not df["fits_in_memory"].any()
    assert "Does not fit" in at.error[0].value and "every row" in at.error[0].value
    small = {"model": "Llama-3.1-8B", "precision": "fp16", "batches": "1,256"}
    at = run("sweep", small | {"hardware": "A100", "context": "8192"})
    d = engine.decode_sweep("Llama-3.1-8B", "A100", [1, 256], [8192])
    assert list(d["fits_in_memory"]) == [True, False]  # 16 GB + 256 × 1.07 GB > 80 GiB
    assert "1 of 2 rows do not fit" in at.error[0].value
