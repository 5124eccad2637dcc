"""DeepSeek Sparse Attention (DeepSeek-V3.2-Exp; github.com/deepseek-ai/DeepSeek-V3.2-Exp,
inference/model.py): a lightning indexer scores every cached key with its own fp8 key cache, and
each query attends only the index_topk (2,048) best. Its cache, its decode and prefill costs by
hand, against DeepSeek-V3, whose shapes it shares."""

import dataclasses

import pytest

import engine
from engine.catalog.arch import param_count
from engine.catalog.reader import load_catalog
from engine.catalog.shapes import kv_bytes_per_token

CAT = load_catalog()
V3, V32 = CAT.models["DeepSeek-V3"].arch, CAT.models["DeepSeek-V3.2-Exp"].arch
H200 = dict(hardware="H200", tp=8, precision="fp8")


def ops(model, context, phase="decode", **kw):
    df = engine.operators(model, **H200, phase=phase, batch_size=1, context=context, **kw)
    return df.set_index("name")


def test_its_cache_adds_the_indexers_fp8_key_to_each_token():
    # a token a layer: V3's latent, 512 + 64 elements, and the indexer's key, 128 fp8 bytes and
    # one fp32 scale (132 bytes) whatever the latent's format: at fp8 576 + 132 = 708 B, at bf16
    # 1,152 + 132 = 1,284 B; 61 layers
    for kv_bytes, per_layer in ((1.0, 708), (2.0, 1284)):
        assert kv_bytes_per_token(V32, kv_bytes) == 61 * per_layer
        assert kv_bytes_per_token(V3, kv_bytes) == 61 * (per_layer - 132)


def test_a_decode_step_attends_2048_keys_and_indexes_them_all():
    sparse, dense = ops("DeepSeek-V3.2-Exp", 32000), ops("DeepSeek-V3", 32000)
    short = ops("DeepSeek-V3", 2048)
    # the sparse layer attends its 2,048 best keys: exactly V3 at a 2,048-token context
    # (absorbed MLA, 16 heads a device: 2·16·(2·512 + 64) = 34,816 FLOPs a key)
    assert sparse.loc["attention", "flops"] == short.loc["attention", "flops"]
    assert sparse.loc["attention", "flops"] == pytest.approx(34_816 * 2048, rel=1e-3)
    assert sparse.loc["attention", "bytes"] == short.loc["attention", "bytes"]
    assert dense.loc["attention", "flops"] == pytest.approx(34_816 * 32000, rel=1e-3)
    # its indexer, replicated on every device: 64 heads × 128 × 2 = 16,384 FLOPs and 132
    # bytes a key over all 32,000 keys (plus the new token's key written and its queries)
    idx = sparse.loc["indexer"]
    assert idx["count"] == 61 and idx["op_class"] == "attention"
    assert idx["flops"] == 16_384 * 32000
    queries = 64 * 128 * 2  # 16-bit activations in
    assert idx["bytes"] == 132 * 32000 + 132 + queries
    assert "indexer" not in ops("DeepSeek-V3", 32000).index  # V3 has none
    # a decode step at 32k: faster than V3's, at 2,048 within the indexer's cost
    at = lambda m, c: engine.serve(  # noqa: E731
        m, **H200, input_tokens=c, output_tokens=256, batch_size=16
    )["tpot_ms"]
    assert at("DeepSeek-V3.2-Exp", 32000) < 0.9 * at("DeepSeek-V3", 32000)
    assert at("DeepSeek-V3.2-Exp", 1000) == pytest.approx(at("DeepSeek-V3", 1000), rel=0.03)


def test_prefill_attends_at_most_2048_keys_a_token():
    # a prompt of S tokens: token i attends min(i, 2,048) keys (the mean a sliding window of
    # 2,048 gives); the indexer scores all i keys before it, (S + 1)/2 on average
    S = 32000
    sparse, dense = ops("DeepSeek-V3.2-Exp", S, "prefill"), ops("DeepSeek-V3", S, "prefill")
    mean = (2048 * 2049 / 2 + (S - 2048) * 2048) / S
    per_key = 2 * 16 * (192 + 128)  # decompressed MLA prefill: 10,240 FLOPs a key a device
    assert sparse.loc["attention", "flops"] == pytest.approx(per_key * S * mean, rel=1e-9)
    assert dense.loc["attention", "flops"] == pytest.approx(per_key * S * (S + 1) / 2, rel=1e-9)
    assert sparse.loc["indexer", "flops"] == pytest.approx(16_384 * S * (S + 1) / 2, rel=1e-9)


def test_its_parameters_and_its_rule():
    # 61 indexers of 1,536·64·128 + 7,168·128 + 2·128 + 7,168·64 = 13,959,424 parameters
    added = param_count(V32) - param_count(V3) - (V32.extra_params - V3.extra_params)
    assert added == 61 * 13_959_424
    # the indexer reads the query latent: sparse attention needs MLA with q_lora_rank
    with pytest.raises(ValueError, match=r"index_topk .*needs attention 'mla'"):
        llama = CAT.models["Llama-3.1-8B"].arch
        dataclasses.replace(llama, index_topk=64, index_heads=2, index_head_dim=16)


def test_the_indexer_runs_at_the_gemms_peak_with_attentions_efficiency():
    # fp8 on H200: the indexer's scores at the fp8 peak, 1,979 TFLOP/s, the attention at the
    # 16-bit 989, both times trtllm-1.0's attention efficiency 0.636858
    df = ops("DeepSeek-V3.2-Exp", 32000, "prefill")
    eta = engine.get_profile("trtllm-1.0").assumptions.attention_efficiency
    assert eta == 0.636858
    assert df.loc["indexer", "peak_flop_per_s"] == 1979e12
    assert df.loc["indexer", "achievable_flop_per_s"] == pytest.approx(1979e12 * eta)
    assert df.loc["attention", "achievable_flop_per_s"] == pytest.approx(989e12 * eta)
    # its time is its FLOPs at that rate: 16,384 · 32,000 · 16,000.5 (each token scores the
    # (S + 1)/2 keys before it on average) / (1,979e12 · 0.636858) = 6.656 ms
    flops = 16_384 * 32000 * 16000.5
    assert df.loc["indexer", "time_ms"] == pytest.approx(flops / (1979e12 * eta) * 1e3, rel=1e-9)
