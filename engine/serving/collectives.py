"""Collectives by algorithm and message size, and the one the serving stacks pick.

One rule per collective for the whole engine: the serving model's steps (tensor-parallel
all-reduces, expert-parallel dispatch and combine, pipeline sends), the load model (which prices
its steps with the serving model's) and the training step (engine/training/collectives.py picks
its links and imports these). N is the message: the bytes each device contributes to an
all-reduce (and receives reduced) or sends out in an all-to-all; p the group's devices; bw a
device's bandwidth per direction, times its efficiency; α the latency of one step of an
algorithm (one synchronised transfer between devices: the profile's `link_latency_us`, else the
interconnect's catalogued per-hop figure; `network_latency_us` between nodes):

    ring all-reduce      2(p−1)/p·N/bw + 2(p−1)·α   reduce-scatter, then all-gather, around a ring
    two-shot all-reduce  2(p−1)/p·N/bw + 2·α        the same two halves, with every peer at once
    one-shot all-reduce  (p−1)·N/bw + α             each device reads every peer's whole buffer
    NVLS all-reduce      N/bw + 2·α                 the switch reduces and multicasts
    tree all-reduce      2·N/bw_net + 2(q−1)·α + 2·⌈log2 n⌉·α_net   (n nodes of q devices)
    reduce-scatter = all-gather = (p−1)/p·N/bw + (p−1)·α            (a ring)
    all-to-all           (p−1)/p·N/bw + α           every peer at once
    send                 N/bw + α                   one device to the next (pipeline stages)

Sources: the ring, Patarasuk and Yuan (J. Parallel Distrib. Comput. 2009) and NCCL's cost model
(src/graph/tuning.cc: 2(p−1) steps, a ring that crosses nodes paying the network's latency on
its 2(n−1) inter-node steps; the tree 2·((q−1)·α + log2(n)·α_net) and twice the bytes, NVLS one
switch step); one-shot and two-shot, vLLM's custom all-reduce (csrc/custom_all_reduce.cuh:
`cross_device_reduce_1stage` reads all ranks' buffers, `..._2stage` reduce-scatters then
all-gathers) and TensorRT-LLM's ONESHOT and TWOSHOT strategies
(cpp/tensorrt_llm/kernels/customAllReduceKernels.h); NVLS, NVLink SHARP on third-generation
NVSwitch and later (NCCL 2.17+: each device sends its N to the switch and receives the reduced
N once, against ≈ 2N through a ring).

Which all-reduce a stack runs (`all_reduce_s`), by system and message size:

- inside one NVLink (or Infinity Fabric) domain, on a fabric where every device reaches every
  other's memory (NVSwitch, a full mesh: the catalogue's `interconnect.peer_to_peer`), messages
  up to 8 MiB take the custom all-reduce (vLLM's `CustomAllreduce` max_size 8192·1024;
  TensorRT-LLM's workspace, 8 MB beyond two GPUs): one-shot on 2 devices, or below 512 KiB on
  up to 4 and 256 KiB on up to 8 (vLLM's thresholds; TensorRT-LLM's SM90 TP8 table switches
  near the same size), two-shot otherwise (TensorRT-LLM's MNNVL two-shot kernels across an
  NVL72);
- larger messages, or a fabric without peer access, go to NCCL, which picks the fastest by its
  cost model: NVLS where the switch reduces (`interconnect.switch_reduction`), else the ring;
- a group that spans nodes runs NCCL's ring or tree over the scale-out network per GPU,
  whichever is faster.

So the latency of a small all-reduce inside a domain is one or two steps whatever p, where the
ring's grows as 2(p−1)·α. Floats or numpy arrays throughout (`xp`: engine/arrays.py); docs/
model.md, "Collectives".
"""

from __future__ import annotations

from typing import NamedTuple

KIB, MIB = 1024.0, 1024.0 * 1024.0
CUSTOM_ALL_REDUCE_MAX_BYTES = 8 * MIB  # vLLM CustomAllreduce(max_size=8192 * 1024)
ONE_SHOT_MAX_BYTES = (512 * KIB, 256 * KIB)  # up to 4 devices, up to 8 (custom_all_reduce.cuh)
ONE_SHOT_MAX_DEVICES = 8  # vLLM's custom kernels: 2, 4, 6 or 8 ranks
ALGORITHMS = ("ring", "two_shot", "one_shot", "nvls", "tree")


class Fabric(NamedTuple):
    """How a device reaches its peers (floats, or arrays over deployments): its link inside the
    domain and the scale-out network beyond it, each times its efficiency."""

    link_bw: object  # bytes/s per direction inside the domain
    link_lat: object  # s per step
    net_bw: object  # bytes/s per direction per device over the network
    net_lat: object  # s per step between nodes
    domain: object  # devices one link domain joins (an HGX node 8, a GB200 NVL72 72)
    peer: object  # bool: every device reads every other's memory (custom all-reduces run)
    switch: object  # bool: the switch reduces (NVLink SHARP: NCCL's NVLS)


def ring_all_reduce_s(nbytes, devices, bandwidth, latency):
    """Ring all-reduce of `nbytes` over `devices`: 2·(p−1)/p·N/bw + 2·(p−1)·α (0 for p = 1).

    Args:
        nbytes: bytes each device contributes (and receives reduced).
        devices: p.
        bandwidth: per device, per direction, bytes/s (already scaled by the link efficiency).
        latency: per step, seconds.
    """
    hops = devices - 1.0
    return 2.0 * hops / devices * nbytes / bandwidth + 2.0 * hops * latency


def two_shot_all_reduce_s(nbytes, devices, bandwidth, latency):
    """Two-shot: each device reduces its 1/p of the buffer from every peer, then gathers the
    others' reduced parts: the ring's bytes, 2·(p−1)/p·N/bw, in two steps, 2·α."""
    return 2.0 * (devices - 1.0) / devices * nbytes / bandwidth + 2.0 * latency


def one_shot_all_reduce_s(nbytes, devices, bandwidth, latency):
    """One-shot: each device reads every peer's whole buffer and reduces it locally:
    (p−1)·N/bw in one step, α. Fastest for small messages, its bytes grow with p."""
    return (devices - 1.0) * nbytes / bandwidth + latency


def nvls_all_reduce_s(nbytes, bandwidth, latency):
    """NVLS (NVLink SHARP): the switch reduces the devices' buffers and multicasts the sum, so a
    device sends N and receives N: N/bw, in two steps (reduce, multicast), 2·α."""
    return nbytes / bandwidth + 2.0 * latency


def tree_all_reduce_s(nbytes, devices, fabric: Fabric, xp):
    """NCCL's double binary tree over n nodes of q devices: a chain inside each node and a tree
    of ⌈log2 n⌉ levels between them, up and down: 2·(q−1)·α + 2·⌈log2 n⌉·α_net, and 2·N/bw_net
    (NCCL's tree moves its data at half its bus bandwidth)."""
    nodes = xp.ceil(devices / fabric.domain)
    per_node = devices / nodes
    levels = xp.ceil(xp.log2(nodes))
    steps = 2.0 * (per_node - 1.0) * fabric.link_lat + 2.0 * levels * fabric.net_lat
    return 2.0 * nbytes / fabric.net_bw + steps


def spanning_ring_all_reduce_s(nbytes, devices, fabric: Fabric, xp):
    """A ring over n nodes: the network's bandwidth (its slowest link), 2·(n−1) of its 2·(p−1)
    steps between nodes at α_net and the rest inside them at α (NCCL's tuning model)."""
    nodes = xp.ceil(devices / fabric.domain)
    inside = 2.0 * (devices - nodes) * fabric.link_lat + 2.0 * (nodes - 1.0) * fabric.net_lat
    return 2.0 * (devices - 1.0) / devices * nbytes / fabric.net_bw + inside


def reduce_scatter_s(nbytes, devices, bandwidth, latency):
    """Ring reduce-scatter of an `nbytes` tensor over `devices`: each ends with 1/p of the sum.
    (p−1)/p·N/bw + (p−1)·α; 0 for p = 1."""
    hops = devices - 1.0
    return hops / devices * nbytes / bandwidth + hops * latency


def all_gather_s(nbytes, devices, bandwidth, latency):
    """Ring all-gather of an `nbytes` tensor from p shards: the mirror of the reduce-scatter
    (the same hops, the same bytes)."""
    return reduce_scatter_s(nbytes=nbytes, devices=devices, bandwidth=bandwidth, latency=latency)


def all_to_all_s(nbytes, devices, bandwidth, latency):
    """All-to-all where each device sends `nbytes` spread evenly over the group (MoE dispatch
    and combine): it keeps 1/p and sends (p−1)/p·N to its p−1 peers at once, one step:
    (p−1)/p·N/bw + α; 0 for p = 1 (DeepEP's and NCCL's all-to-all issue every peer's
    transfer together)."""
    hops = devices - 1.0
    return hops / devices * nbytes / bandwidth + (hops > 0.0) * latency


def send_s(nbytes, bandwidth, latency):
    """One point-to-point transfer (pipeline stage to the next): N/bw + α."""
    return nbytes / bandwidth + latency


def all_reduce_algorithm(nbytes, devices, fabric: Fabric, xp):
    """The index in ALGORITHMS of the all-reduce the stacks run (module docstring): the
    custom one-shot or two-shot inside a peer-to-peer domain up to 8 MiB, else NCCL's
    NVLS or ring inside the domain, or ring or tree across nodes (the faster)."""
    times = _nccl_times(nbytes, devices, fabric, xp=xp)
    return _pick(nbytes=nbytes, devices=devices, fabric=fabric, nccl_times=times, xp=xp)


def _nccl_times(nbytes, devices, fabric: Fabric, xp) -> tuple:
    """NCCL's candidates: (ring inside the domain, NVLS, ring across nodes, tree)."""
    bw, lat = fabric.link_bw, fabric.link_lat
    return (
        ring_all_reduce_s(nbytes=nbytes, devices=devices, bandwidth=bw, latency=lat),
        nvls_all_reduce_s(nbytes, bw, lat),
        spanning_ring_all_reduce_s(nbytes, devices, fabric, xp=xp),
        tree_all_reduce_s(nbytes, devices, fabric, xp=xp),
    )


def _pick(nbytes, devices, fabric: Fabric, nccl_times: tuple, xp):
    """`all_reduce_algorithm` given NCCL's candidates' times (`_nccl_times`)."""
    ring, nvls, spanning, tree = nccl_times
    inside = devices <= fabric.domain
    custom = inside & fabric.peer & (nbytes <= CUSTOM_ALL_REDUCE_MAX_BYTES)
    small = nbytes < xp.where(devices <= 4.0, ONE_SHOT_MAX_BYTES[0], ONE_SHOT_MAX_BYTES[1])
    one = custom & (devices <= ONE_SHOT_MAX_DEVICES) & ((devices <= 2.0) | small)
    nccl = xp.where(fabric.switch & (nvls < ring), 3, 0)
    across = xp.where(tree < spanning, 4, 0)
    return xp.where(one, 2, xp.where(custom, 1, xp.where(inside, nccl, across)))


def all_reduce_s(nbytes, devices, fabric: Fabric, xp):
    """Seconds of the all-reduce of `nbytes` per device over `devices` that the stacks run
    (`all_reduce_algorithm`); 0 for one device. Each candidate is priced once, for the choice
    and for the time."""
    bw, lat = fabric.link_bw, fabric.link_lat
    nccl = _nccl_times(nbytes, devices, fabric, xp=xp)
    ring, nvls, spanning, tree = nccl
    times = (
        xp.where(devices <= fabric.domain, ring, spanning),
        two_shot_all_reduce_s(nbytes=nbytes, devices=devices, bandwidth=bw, latency=lat),
        one_shot_all_reduce_s(nbytes=nbytes, devices=devices, bandwidth=bw, latency=lat),
        nvls,
        tree,
    )
    pick = _pick(nbytes=nbytes, devices=devices, fabric=fabric, nccl_times=nccl, xp=xp)
    t = times[0]
    for index, time in enumerate(times[1:], 1):
        t = xp.where(pick == index, time, t)
    return xp.where(devices > 1.5, t, 0.0)


def deduplicated_all_to_all_s(nbytes, net_bytes, devices, fabric: Fabric, xp):
    """DeepEP's normal (high-throughput) dispatch or combine, which the stacks run for prefill
    steps: across nodes a token crosses the network once per node holding any of its experts
    (`net_bytes` per device: to the same-index GPU there) and NVLink forwards it to each expert
    rank of that node (`nbytes`, every rank copy, (q − 1)/q of them leaving the GPU they land
    on); the two run pipelined, so the slower sets the time, plus α_net (deepseek-ai/DeepEP,
    README: "internode" kernels, aligned with DeepSeek-V3's group-limited gating). Inside one
    domain it is `all_to_all_s`."""
    nodes = xp.ceil(devices / fabric.domain)
    per_node = devices / nodes
    near = (per_node - 1.0) / per_node * nbytes / fabric.link_bw
    far = net_bytes / fabric.net_bw
    spanning = xp.maximum(near, far) + fabric.net_lat
    inside = all_to_all_s(
        nbytes=nbytes, devices=devices, bandwidth=fabric.link_bw, latency=fabric.link_lat
    )
    return xp.where(devices <= fabric.domain, inside, spanning)


def group_all_to_all_s(nbytes, devices, fabric: Fabric, xp):
    """All-to-all of `nbytes` per device over `devices`: inside the domain on the link;
    across n nodes of q devices the (q−1)/p share for peers in its node goes over the link and
    the (p−q)/p for the others over the network, at once: the slower of the two, plus α_net."""
    nodes = xp.ceil(devices / fabric.domain)
    per_node = devices / nodes
    near = (per_node - 1.0) / devices * nbytes / fabric.link_bw
    far = (devices - per_node) / devices * nbytes / fabric.net_bw
    spanning = xp.maximum(near, far) + fabric.net_lat
    inside = all_to_all_s(
        nbytes=nbytes, devices=devices, bandwidth=fabric.link_bw, latency=fabric.link_lat
    )
    return xp.where(devices <= fabric.domain, inside, spanning)
