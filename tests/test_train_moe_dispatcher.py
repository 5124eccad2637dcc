"""Megatron-Core's MoE token dispatchers in training (`moe_dispatcher`, docs/model.md "Training
step"): `alltoall` sends a token once per routed expert; `flex` (DeepEP) once per expert rank,
and over the network once per other node holding its experts, which DeepSeek-V3's node-limited
routing bounds. Hand arithmetic at the function and a whole step."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import engine
from engine.catalog.resolve import default_catalog, resolve_model
from engine.catalog.shapes import shapes_of
from engine.training.collectives import Links
from engine.training.config import make_config
from engine.training.kernel import _dispatch

V3 = shapes_of(resolve_model("DeepSeek-V3", default_catalog()).arch)
# NVLink 200 GB/s a direction, 2 µs; the network 40 GB/s a GPU, 10 µs; nodes of 8
LINKS = Links(node_bw=200e9, node_lat=2e-6, net_bw=40e9, net_lat=10e-6, per_node=8.0)


def config(ep, tp=1):
    return make_config(
        gpus=2048,
        tp=tp,
        pp=16,
        cp=1,
        vp=1,
        ep=ep,
        zero=1,
        micro_batch=1,
        global_batch=15360,
        seq_len=4096,
        recompute=1,
    )


def test_dispatch_by_hand():
    per_copy = 1e6  # bytes of one token copy a GPU sends
    c = config(ep=64)  # 8 nodes of 8 expert ranks
    # alltoall: k = 8 copies; 7/64 of them to the node's peers over NVLink, 56/64 over the
    # network, at once: max(7/64·8 MB/200 GB/s = 4.375 µs, 56/64·8 MB/40 GB/s = 175 µs) + 10 µs
    a2a = _dispatch(s=V3, c=c, links=LINKS, per_copy=per_copy, flex=False)
    assert a2a[0] == pytest.approx(185e-6)
    # flex: ranks reached 64·(1 − (63/64)^8) = 7.5718 copies, NVLink forwarding 7/8 of them:
    # 6.6253 MB/200 GB/s = 33.13 µs; the network once per other node: the 8 experts lie in 4
    # of the 8 groups, one group a node: 4·(1 − 0.75^8) = 3.5995 nodes, 7/8 of them another:
    # 3.1496 MB/40 GB/s = 78.74 µs; the slower + 10 µs = 88.74 µs
    ranks = 64 * (1 - (63 / 64) ** 8)
    far = 4 * (1 - 0.75**8) * 7 / 8
    flex = _dispatch(s=V3, c=c, links=LINKS, per_copy=per_copy, flex=True)
    assert flex[0] == pytest.approx(max(7 / 8 * ranks * 1e6 / 200e9, far * 1e6 / 40e9) + 10e-6)
    assert flex[0] == pytest.approx(88.74e-6, abs=0.01e-6)
    # inside a node (ep 8): flex sends 8·(1 − (7/8)^8) = 5.2511 rank copies where alltoall
    # sends 8, each 7/8 to peers: 1 MB·7/8·{8, 5.2511}/200 GB/s + 2 µs
    c8 = config(ep=8)
    inside = [
        _dispatch(s=V3, c=c8, links=LINKS, per_copy=per_copy, flex=d)[0] for d in (False, True)
    ]
    assert inside[0] == pytest.approx(7 / 8 * 8e6 / 200e9 + 2e-6)
    assert inside[1] == pytest.approx(7 / 8 * 8 * (1 - (7 / 8) ** 8) * 1e6 / 200e9 + 2e-6)


def test_deepseek_v3_without_overlap_gains_from_flex():
    # the report's layout on 2,048 H800 with 1F1B and no overlap: the all-to-alls are exposed,
    # and flex halves their time (18.0 s → 9.1 s of a 34.4 s step)
    kw = dict(gpus=2048, pp=16, ep=64, zero=1, global_batch_size=15360, seq_len=4096)
    kw |= dict(precision="fp8", fp8_recipe="blockwise", recompute="selective")
    kw |= dict(recompute_modules=("core_attn", "layernorm", "mla_up_proj", "moe_act"))
    plain = engine.train("DeepSeek-V3", "H800", **kw)
    flex = engine.train("DeepSeek-V3", "H800", **kw, moe_dispatcher="flex")
    assert flex["comm_ep_s"] < 0.6 * plain["comm_ep_s"]
    assert flex["tokens_per_s_per_gpu"] > plain["tokens_per_s_per_gpu"]
    assert flex["compute_s"] == pytest.approx(plain["compute_s"])
    # a dense model has no dispatch: the choice changes nothing
    dense = [
        engine.train("Llama-3.1-8B", "H100", gpus=8, global_batch_size=64, seq_len=4096, **d)
        for d in ({}, {"moe_dispatcher": "flex"})
    ]
    assert dense[0]["step_time_s"] == dense[1]["step_time_s"]


def test_the_cli_takes_it_and_refuses_other_words():
    cmd = [sys.executable, "-m", "engine", "train", "--model", "Mixtral-8x7B", "--hardware"]
    cmd += ["H100", "--gpus", "64", "--ep", "8", "--global-batch-size", "512", "--seq-len"]
    cmd += ["4096", "--format", "json"]
    out = subprocess.run([*cmd, "--moe-dispatcher", "flex"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["assumptions"]["moe_dispatcher"] == "flex"
    bad = subprocess.run([*cmd, "--moe-dispatcher", "nccl"], capture_output=True, text=True)
    assert bad.returncode != 0 and "Traceback" not in bad.stderr
    assert "alltoall" in bad.stderr and "flex" in bad.stderr
