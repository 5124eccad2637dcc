"""The routed experts' own tensor parallelism (`etp`, Megatron-Core's MoE parallel folding: an
MoE layer splits a stage's tp·cp·dp GPUs etp × ep × edp): weights per GPU, the expert-parallel
group's place (etp ranks apart), the MoE block's tensor-parallel traffic, and the rules."""

import json
import subprocess
import sys

import pytest

import engine

# Qwen3-30B-A3B on 64 H100: 48 MoE layers of 128 experts of width 768 (gated), h 2,048
RUN = dict(gpus=64, global_batch_size=256, seq_len=4096, micro_batch_size=1, zero=1)
RUN |= dict(recompute="full")


def step(**layout):
    return engine.train("Qwen3-30B-A3B", "H100", **RUN, **layout)


def test_whole_experts_on_each_tensor_parallel_rank_weigh_more():
    # routed weights: 48 · 128 · 3 · 2,048 · 768 = 28,991,029,248 parameters at 2 bytes;
    # tp 2, ep 8: etp 1 holds 1/8 of them, etp 2 (the default) 1/16: 3.624 GB more a GPU
    one, two = step(tp=2, ep=8, etp=1), step(tp=2, ep=8)
    routed = 48 * 128 * 3 * 2048 * 768
    assert routed == 28_991_029_248
    extra = one["weight_bytes_per_gpu"] - two["weight_bytes_per_gpu"]
    assert extra == pytest.approx(2 * routed * (1 / 8 - 1 / 16))
    assert two.as_dict()["etp"] == 2 and one.as_dict()["etp"] == 1


def test_the_expert_group_sits_etp_ranks_apart():
    # etp 1: the 8 ranks of an ep group are neighbours, one node's NVLink, as with tp 1 (tp 2
    # halves each all-to-all's bytes and doubles the micro-batches: the same per step)
    alone, folded, spread = step(tp=1, ep=8), step(tp=2, ep=8, etp=1), step(tp=2, ep=8)
    assert folded["comm_ep_s"] == pytest.approx(alone["comm_ep_s"], rel=0.01)
    # etp 2: 2 ranks apart, the group spans 16 ranks, two nodes: the network carries part
    assert spread["comm_ep_s"] > 2 * folded["comm_ep_s"]


def test_whole_experts_need_no_tensor_parallel_gather_around_them():
    # every layer of Qwen3-30B-A3B is MoE: with etp 1 a pass keeps attention's all-gather and
    # reduce-scatter and loses the MoE block's (nothing overlaps them: exactly half)
    one, two = step(tp=2, ep=8, etp=1), step(tp=2, ep=8)
    assert one["comm_tp_s"] == pytest.approx(0.5 * two["comm_tp_s"])
    assert one["compute_s"] == pytest.approx(two["compute_s"], rel=0.05)  # the same FLOPs


def test_the_rules_of_folding():
    # ep · etp must divide tp · cp · dp: 8 GPUs, tp 2, ep 8 fold with etp 1 (8 = 8), not with
    # the default etp 2 (16 > 8)
    small = dict(gpus=8, global_batch_size=32, seq_len=4096, zero=1, recompute="full")
    assert engine.train("Qwen3-30B-A3B", "H100", tp=2, ep=8, etp=1, **small)["step_time_s"] > 0
    with pytest.raises(ValueError, match="etp·ep dividing tp·cp·dp"):
        engine.train("Qwen3-30B-A3B", "H100", tp=2, ep=8, **small)
    with pytest.raises(ValueError, match=r"etp .* must divide tp"):
        step(tp=2, ep=8, etp=4)
    with pytest.raises(ValueError, match="needs a mixture of experts"):
        engine.train("Llama-3.1-8B", "H100", tp=2, etp=1, **small)
    # the default is tp, and etp = tp says the same
    assert step(tp=2, ep=8, etp=2)["step_time_s"] == step(tp=2, ep=8)["step_time_s"]


def test_the_search_tries_it_and_the_cli_takes_it():
    run = {k: v for k, v in RUN.items() if k in ("gpus", "global_batch_size", "seq_len")}
    df = engine.train_search(
        "Qwen3-30B-A3B",
        "H100",
        **run,
        tp=[2],
        pp=[1],
        cp=[1],
        vp=[1],
        ep=[8],
        micro_batch_size=[1],
        zero=[1],
        recompute=["full"],
        etp=[1, 2],
    )
    assert sorted(df["etp"]) == [1, 2]
    best = df.iloc[0]
    assert best["etp"] == 1  # the expert group in one node
    assert best["step_time_s"] == pytest.approx(step(tp=2, ep=8, etp=1)["step_time_s"])
    args = [sys.executable, "-m", "engine", "train", "--model", "Qwen3-30B-A3B", "--hardware"]
    args += ["H100", "--gpus", "64", "--global-batch-size", "256", "--seq-len", "4096"]
    args += ["--tp", "2", "--ep", "8", "--etp", "1", "--zero", "1", "--recompute", "full"]
    out = subprocess.run([*args, "--format", "json"], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout)["etp"] == 1
    bad = subprocess.run([*args[:-6], "--etp", "3"], capture_output=True, text=True)
    assert bad.returncode == 2 and "must divide tp" in bad.stderr and "Traceback" not in bad.stderr
    # the Pareto front's search takes the same flags as train-search
    pareto = [*args[:3], "train-pareto", *args[4:-6], "--etp", "1,2", "--pp", "1", "--cp", "1"]
    pareto += ["--vp", "1", "--zero", "1", "--recompute", "full", "--format", "json"]
    front = json.loads(subprocess.run(pareto, capture_output=True, text=True, check=True).stdout)
    assert {row["etp"] for row in front} <= {1, 2} and front
