"""How context parallelism exchanges keys and values (`cp_comm_type`, Megatron-Core's
--cp-comm-type): p2p, the ring hidden under attention; allgather, Llama 3's, exposed; a2a,
DeepSpeed-Ulysses, all-to-alls around attention."""

import json
import subprocess
import sys

import pytest

import engine
from engine.scenarios.training import TrainRun
from engine.training.setup import setup

# Llama-3.1-8B on 8 H100, cp 8 over one 131,072-token sequence: 16,384 tokens a rank, m = 8
RUN = dict(gpus=8, global_batch_size=8, seq_len=131072, cp=8)


def step(kind, **kw):
    return engine.train("Llama-3.1-8B", "H100", **RUN | kw, cp_comm_type=kind)


def test_each_exchange_by_hand():
    links = setup(TrainRun("Llama-3.1-8B", "H100", gpus=8, global_batch_size=8, seq_len=8)).links
    bw, alpha = links.node_bw, links.node_lat  # 450 GB/s × 0.470141 = 211.56 GB/s, 0.6 µs
    assert bw == pytest.approx(211.56345e9) and alpha == pytest.approx(0.6e-6)
    per_step = 8 * 32  # micro-batches × layers
    # a rank's KV block: 16,384 tokens × 8 KV heads × (128 + 128) × 2 bytes = 67,108,864 B;
    # allgather: gather it (7/8 of 8 blocks: 7 blocks, 7 steps), gather it again for the
    # backward pass and reduce-scatter its gradient: 3 × (7 × 67,108,864 / bw + 7α) = 6.674 ms
    allgather = per_step * 3 * (7 * 67_108_864 / bw + 7 * alpha)
    assert step("allgather")["comm_cp_s"] == pytest.approx(allgather, rel=1e-12)
    assert allgather == pytest.approx(1.7085, rel=1e-4)
    # a2a: q (32 heads), k, v (8 each) in and o (32) out, 16,384 × 2 × (32 + 8) × 256 =
    # 335,544,320 B sent at 7/8 over the peers, two all-to-alls (2α); the backward pass again:
    # 2 × (7/8 × 335,544,320 / bw + 2α) = 2.778 ms
    a2a = per_step * 2 * (7 / 8 * 335_544_320 / bw + 2 * alpha)
    assert step("a2a")["comm_cp_s"] == pytest.approx(a2a, rel=1e-12)
    assert a2a == pytest.approx(0.71115, rel=1e-4)
    # p2p: the ring's 7 sends of a block hide under the attention they feed at 128k
    p2p = step("p2p")
    assert p2p["comm_cp_s"] == 0.0
    assert p2p["step_time_s"] < step("a2a")["step_time_s"] < step("allgather")["step_time_s"]


def test_recomputed_attention_exchanges_once_more():
    # selective recomputation reruns core_attn: allgather 4 collectives instead of 3, a2a 3
    # pairs of all-to-alls instead of 2
    for kind, ratio in (("allgather", 4 / 3), ("a2a", 3 / 2)):
        again = step(kind, recompute="selective")["comm_cp_s"]
        assert again == pytest.approx(ratio * step(kind)["comm_cp_s"], rel=1e-12)


def test_ulysses_needs_heads_for_every_rank():
    # tp 2 × cp 8 = 16 ranks share 8 KV heads: refused, with the rule named
    with pytest.raises(ValueError, match="a2a \\(DeepSpeed-Ulysses\\) needs the attention heads"):
        step("a2a", gpus=16, tp=2)
    step("allgather", gpus=16, tp=2)  # the ring and the gather need no heads of their own
    # MLA attends with per-head keys and values: DeepSeek-V3's 128 heads on tp 1 × cp 2
    kw = dict(gpus=2048, pp=16, ep=64, cp=2, zero=1, global_batch_size=7680, seq_len=32768)
    kw |= dict(precision="fp8", fp8_recipe="blockwise", recompute="full")
    r = engine.train("DeepSeek-V3", "H800", **kw, cp_comm_type="a2a")
    assert r["comm_cp_s"] > 0 and r["cp_comm_type"] == "a2a"
    with pytest.raises(ValueError, match="cp_comm_type must be one of p2p, allgather, a2a"):
        step("ring")


def test_the_search_tries_them_once_each_where_cp_exchanges():
    df = engine.train_search(
        "Llama-3.1-8B",
        "H100",
        gpus=8,
        global_batch_size=64,
        seq_len=8192,
        tp=(1, 2),
        cp=(1, 2),
        pp=(1,),
        vp=(1,),
        zero=(1,),
        recompute=("selective",),
        micro_batch_size=(1,),
        cp_comm_type=("a2a", "p2p", "allgather"),
    )
    kinds = df.groupby("cp", observed=True)["cp_comm_type"].apply(lambda k: sorted(k.astype(str)))
    assert kinds[2] == ["a2a", "a2a", "allgather", "allgather", "p2p", "p2p"]  # tp 1 and 2
    assert kinds[1] == ["p2p"]  # cp 1 exchanges nothing: one row (tp 2; tp 1 does not fit)
    default = engine.train_search("Llama-3.1-8B", "H100", **RUN | {"cp": (2,), "seq_len": 8192})
    assert set(default["cp_comm_type"].astype(str)) == {"p2p"}
    cmd = [sys.executable, "-m", "engine", "train", "--model", "Llama-3.1-8B", "--hardware"]
    cmd += ["H100", "--gpus", "8", "--cp", "8", "--global-batch-size", "8", "--seq-len"]
    cmd += ["131072", "--cp-comm-type", "a2a", "--format", "json"]
    out = json.loads(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout)
    assert out["cp_comm_type"] == "a2a"
    assert out["comm_cp_s"] == pytest.approx(step("a2a")["comm_cp_s"])


def test_an_exchange_no_measured_run_used_says_so():
    codes = {w.code for w in step("a2a").warnings}
    assert "cp_exchange_not_measured" in codes
    assert "cp_exchange_not_measured" not in {w.code for w in step("p2p").warnings}
    # cp 1 exchanges nothing, whatever its type says
    plain = engine.train("Llama-3.1-8B", "H100", gpus=8, global_batch_size=8, seq_len=4096)
    one = engine.train(
        "Llama-3.1-8B", "H100", gpus=8, global_batch_size=8, seq_len=4096, cp_comm_type="a2a"
    )
    assert "cp_exchange_not_measured" not in {w.code for w in one.warnings}
    assert one["step_time_s"] == plain["step_time_s"]
