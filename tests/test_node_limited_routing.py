"""Group-limited routing and DeepEP's per-node dispatch across nodes (docs/model.md, "MoE
layouts"): a prefill step's token crosses the network once per node holding its experts, and
DeepSeek-V3's node-limited routing (n_group 8, topk_group 4) bounds those nodes. Hand
arithmetic, properties, the config reader and the serving results."""

from __future__ import annotations

import dataclasses
from math import comb

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import engine
from engine.arrays import SCALAR
from engine.catalog.resolve import default_catalog, resolve_model
from engine.catalog.shapes import shapes_of
from engine.serving.collectives import (
    Fabric,
    all_to_all_s,
    deduplicated_all_to_all_s,
    group_all_to_all_s,
)
from engine.serving.operators import nodes_reached

V3 = resolve_model("DeepSeek-V3", default_catalog()).arch
QWEN = resolve_model("Qwen3-235B-A22B", default_catalog()).arch
RUN = dict(precision="fp8", attention_dp="on", input_tokens=2000, output_tokens=1000)


def test_deepseek_v3_nodes_reached_by_hand():
    s = shapes_of(V3)
    assert (V3.expert_groups, V3.groups_per_token) == (8, 4)
    # 8 nodes of one group each: the 4 chosen groups are 4 nodes (1 − C(7,4)/C(8,4) = 1/2);
    # the 8 experts on them: 4·(1 − 0.75^8) = 3.5995
    assert nodes_reached(s, 8.0, SCALAR) == pytest.approx(4 * (1 - 0.75**8))
    # 4 nodes of two groups: c = 4·(1 − C(6,4)/C(8,4)) = 4·(1 − 15/70) = 3.142857;
    # r = c·(1 − (1 − 1/c)^8) = 2.99607
    c = 4 * (1 - comb(6, 4) / comb(8, 4))
    assert nodes_reached(s, 4.0, SCALAR) == pytest.approx(c * (1 - (1 - 1 / c) ** 8))
    assert nodes_reached(s, 4.0, SCALAR) == pytest.approx(2.99607, abs=1e-5)
    # 16 nodes, fewer groups than nodes: the 4 groups span 4·16/8 = 8 nodes
    assert nodes_reached(s, 16.0, SCALAR) == pytest.approx(8 * (1 - (7 / 8) ** 8))
    # Qwen3 has no groups: the k experts anywhere, n·(1 − (1 − 1/n)^8)
    q = shapes_of(QWEN)
    for n in (1.0, 2.0, 4.0):
        assert nodes_reached(q, n, SCALAR) == pytest.approx(n * (1 - (1 - 1 / n) ** 8))


@settings(max_examples=60, deadline=None)
@given(
    groups=st.sampled_from([1, 2, 4, 8, 16]),
    share=st.floats(0.0, 1.0),
    k=st.integers(1, 16),
    nodes=st.sampled_from([1, 2, 3, 4, 8, 16, 32]),
)
def test_nodes_reached_is_bounded_and_grows_with_the_groups(groups, share, k, nodes):
    g = max(1, round(share * groups))
    arch = dataclasses.replace(
        V3, experts=256, experts_per_token=k, expert_groups=groups, groups_per_token=g
    )
    s = shapes_of(arch)
    r = nodes_reached(s, float(nodes), SCALAR)
    assert 1.0 - 1e-9 <= r <= min(nodes, k) + 1e-9
    free = nodes * (1 - (1 - 1 / nodes) ** k)  # no limit
    assert r <= free + 1e-9
    if g == groups:
        assert r == pytest.approx(free)
    vec = nodes_reached(shapes_of(arch), np.array([float(nodes)]), np)
    assert vec[0] == pytest.approx(r)


def test_the_prefill_all_to_all_by_hand():
    # 4 nodes of 8 (p 32), link 400 GB/s, network 40 GB/s, α 2 µs, α_net 10 µs
    f = Fabric(
        link_bw=400e9,
        link_lat=2e-6,
        net_bw=40e9,
        net_lat=10e-6,
        domain=8.0,
        peer=True,
        switch=False,
    )
    n, n_net = 64e6, 16e6
    # NVLink forwards (q − 1)/q of the rank copies: 7/8 · 64 MB / 400 GB/s = 140 µs; the
    # network 16 MB / 40 GB/s = 400 µs; the slower + 10 µs = 410 µs
    got = deduplicated_all_to_all_s(nbytes=n, net_bytes=n_net, devices=32.0, fabric=f, xp=SCALAR)
    assert got == pytest.approx(410e-6)
    # the direct path: max(7/32·64 MB/400 GB/s, 24/32·64 MB/40 GB/s) + 10 µs = 1,210 µs
    assert group_all_to_all_s(nbytes=n, devices=32.0, fabric=f, xp=SCALAR) == pytest.approx(1210e-6)
    # inside one domain both are the plain all-to-all
    inside = all_to_all_s(nbytes=n, devices=8.0, bandwidth=400e9, latency=2e-6)
    assert deduplicated_all_to_all_s(
        nbytes=n, net_bytes=n_net, devices=8.0, fabric=f, xp=SCALAR
    ) == pytest.approx(inside)


def serve(model, tp):
    return engine.serve(model, "H100", tp=tp, ep=tp, batch_size=64 * tp, **RUN)  # 64 a rank


def test_deepseek_r1_prefill_across_nodes_is_cheaper_and_decode_unchanged():
    r1 = resolve_model("DeepSeek-R1", default_catalog()).arch
    free = dataclasses.replace(r1, expert_groups=1, groups_per_token=1)
    # inside one node (8 GPUs) the groups change nothing
    inside = serve(r1, 8), serve(free, 8)
    assert inside[0]["prefill_comm_ms"] == pytest.approx(inside[1]["prefill_comm_ms"])
    # across 4 nodes: each token crosses the network to 2.996·3/4 = 2.247 other nodes with the
    # limit, 4·(1 − 0.75^8)·3/4 = 3.923 without (its 8 experts on any of 4 nodes); the
    # direct path would send 7.178·24/32 = 5.383 rank copies (docs/model.md: 27.0 s → 11.3 s)
    limited, plain = serve(r1, 32), serve(free, 32)
    assert limited["prefill_comm_ms"] < plain["prefill_comm_ms"]
    assert limited["prefill_comm_ms"] == pytest.approx(11_280, rel=0.01)
    # the network term binds, so the ratio is the copies' (the latency aside)
    ratio = 2.247056 / (4 * (1 - 0.75**8) * 0.75)
    assert limited["prefill_comm_ms"] / plain["prefill_comm_ms"] == pytest.approx(ratio, rel=0.01)
    # decode steps run the low-latency kernels: each rank copy sent directly, groups or not
    assert limited["decode_comm_ms"] == pytest.approx(plain["decode_comm_ms"])


def test_the_config_reader_takes_the_groups():
    from tests.test_config_families import DEEPSEEK_R1

    arch = engine.model_from_config(DEEPSEEK_R1).arch
    assert (arch.expert_groups, arch.groups_per_token) == (8, 4)
    listed = resolve_model("DeepSeek-R1", default_catalog()).arch  # the catalogue agrees
    assert (listed.expert_groups, listed.groups_per_token) == (8, 4)
    # plain greedy top-k (DeepSeek-V2-Lite) has no group limit, whatever n_group says
    greedy = engine.model_from_config(DEEPSEEK_R1 | {"topk_method": "greedy"}).arch
    assert (greedy.expert_groups, greedy.groups_per_token) == (1, 1)
    with pytest.raises(ValueError, match="groups_per_token cannot exceed expert_groups"):
        engine.model_from_config(DEEPSEEK_R1 | {"topk_group": 9})
    with pytest.raises(ValueError, match="expert_groups must divide experts"):
        engine.model_from_config(DEEPSEEK_R1 | {"n_group": 7, "topk_group": 4})
