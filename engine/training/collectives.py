"""The collectives of a training step: which link each runs on.

Every collective's rule is engine/serving/collectives.py's, written once for the engine: the
ring all-reduce, reduce-scatter and all-gather, the all-to-all and the point-to-point send. N
is the size of the whole tensor (the reduced result, or the gathered one), p the group's
devices, bw a device's bandwidth per direction and α the latency of one step:

    reduce-scatter = all-gather = (p−1)/p · N/bw + (p−1)·α   (an all-reduce is the two in turn)
    all-to-all                  = (p−1)/p · N/bw + α         (N: the bytes a device sends out)

A group runs on the accelerator's in-node link (`interconnect`, NVLink) when its members sit in
one node and on the inter-node network (`network`, per GPU) when it spans nodes: a ring that
crosses nodes is bound by its slowest link. Megatron-LM orders ranks tp, cp, ep/dp, pp from the
fastest-varying: a group of `size` members `stride` ranks apart spans size·stride consecutive
ranks and fits one node when that is at most the node's devices.

An all-to-all (MoE dispatch and combine) that spans nodes is the serving model's
(`group_all_to_all_s`): the share for the group's members in a device's own node goes over the
in-node link while the rest goes over the network, at once, so it costs the slower of the two.
A node holds per_node/stride of the group's members (at least one). With a de-duplicating
dispatcher (Megatron-Core's `flex`, DeepEP) a token crosses the network once per other node
holding its experts and NVLink forwards it there (`deduplicated_all_to_all`).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from engine.serving.collectives import (
    Fabric,
    all_gather_s,
    all_to_all_s,
    deduplicated_all_to_all_s,
    group_all_to_all_s,
    reduce_scatter_s,
    ring_all_reduce_s,
    send_s,
)

__all__ = [
    "Links",
    "all_gather_s",
    "all_to_all_s",
    "deduplicated_all_to_all",
    "group_all_to_all",
    "link_for",
    "reduce_scatter_s",
    "ring_all_reduce_s",
    "send_s",
]


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


def _fabric(links: Links, stride) -> Fabric:
    """The links as a serving Fabric for a group whose members are `stride` ranks apart: a
    node holds per_node/stride of them (at least one)."""
    return Fabric(
        link_bw=links.node_bw,
        link_lat=links.node_lat,
        net_bw=links.net_bw,
        net_lat=links.net_lat,
        domain=np.maximum(np.floor(links.per_node / stride), 1.0),
        peer=False,
        switch=False,
    )


def group_nodes(links: Links, devices, stride):
    """Nodes a group of `devices` members `stride` ranks apart spans."""
    return np.ceil(devices / _fabric(links, stride).domain)


def deduplicated_all_to_all(links: Links, nbytes, net_bytes, stride, devices):
    """A de-duplicating dispatch (or combine) of `nbytes` per device (its rank copies) over a
    group of `devices` members `stride` ranks apart, `net_bytes` of it crossing the network
    once per node (engine/serving/collectives.py `deduplicated_all_to_all_s`)."""
    return deduplicated_all_to_all_s(
        nbytes=nbytes,
        net_bytes=net_bytes,
        devices=devices,
        fabric=_fabric(links, stride),
        xp=np,
    )


def group_all_to_all(links: Links, nbytes, devices, stride):
    """All-to-all of `nbytes` per device over a group of `devices` members `stride` ranks
    apart (arrays over configurations): NVLink for the members in a node, the network for the
    others, the slower of the two (engine/serving/collectives.py `group_all_to_all_s`)."""
    return group_all_to_all_s(nbytes=nbytes, devices=devices, fabric=_fabric(links, stride), xp=np)
