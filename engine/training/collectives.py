"""The collectives of a training step, and which link each runs on.

Ring formulas (Patarasuk and Yuan 2009; NCCL's ring algorithms), each written once in the
engine: the all-reduce and the point-to-point send are engine/serving/parallel.py's; the
reduce-scatter, all-gather and all-to-all are here, since only training uses them. N is the
size of the whole tensor (the reduced result, or the gathered one), p the group's devices, bw a
device's bandwidth per direction and α the latency per hop:

    reduce-scatter = all-gather = (p−1)/p · N/bw + (p−1)·α   (an all-reduce is the two in turn)
    all-to-all                  = (p−1)/p · N/bw + (p−1)·α   (N: the bytes a device sends out)

A group runs on the accelerator's in-node link (`interconnect`, NVLink) when its members sit in
one node and on the inter-node network (`network`, per GPU) when it spans nodes: a ring that
crosses nodes is bound by its slowest link. Megatron-LM orders ranks tp, cp, ep/dp, pp from the
fastest-varying: a group of `size` members `stride` ranks apart spans size·stride consecutive
ranks and fits one node when that is at most the node's devices.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from engine.serving.parallel import ring_all_reduce_s, send_s

__all__ = ["Links", "all_gather_s", "all_to_all_s", "link_for", "reduce_scatter_s",
           "ring_all_reduce_s", "send_s"]  # fmt: skip


def reduce_scatter_s(nbytes, devices, bandwidth, latency):
    """Ring reduce-scatter of an `nbytes` tensor over `devices`: each ends with 1/p of the sum.
    (p−1)/p·N/bw + (p−1)·α; 0 for p = 1."""
    hops = devices - 1.0
    return hops / devices * nbytes / bandwidth + hops * latency


def all_gather_s(nbytes, devices, bandwidth, latency):
    """Ring all-gather of an `nbytes` tensor from p shards: the mirror of the reduce-scatter
    (the same hops, the same bytes)."""
    return reduce_scatter_s(nbytes, devices, bandwidth, latency)


def all_to_all_s(nbytes, devices, bandwidth, latency):
    """All-to-all where each device sends `nbytes` spread evenly over the group (MoE token
    dispatch): it keeps 1/p and sends (p−1)/p·N, meeting p−1 peers; 0 for p = 1."""
    hops = devices - 1.0
    return hops / devices * nbytes / bandwidth + hops * latency


class Links(NamedTuple):
    """A device's links, the assumptions applied (floats)."""

    node_bw: float  # in-node interconnect, bytes/s per direction, times link_efficiency
    node_lat: float  # s per hop
    net_bw: float  # inter-node network per GPU, bytes/s per direction, × network_efficiency
    net_lat: float
    per_node: float  # devices per node


def link_for(links: Links, span) -> tuple:
    """(bandwidth, latency) of a group spanning `span` consecutive ranks: the in-node link if
    they fit one node, else the network (arrays over configurations)."""
    inside = np.asarray(span) <= links.per_node
    return np.where(inside, links.node_bw, links.net_bw), np.where(
        inside, links.node_lat, links.net_lat
    )
