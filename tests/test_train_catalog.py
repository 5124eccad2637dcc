"""The accelerator catalogue's inter-node network (data/README.md, "Network"): the figures the
training model reads, their sources, and clear messages for a broken team table."""

import pytest

import engine
from engine.catalog.parse import CatalogError, parse_hardware

HW = engine.load_catalog(use_env=False).hardware


@pytest.mark.parametrize(
    ("key", "gbytes_per_s"),
    [
        ("A100", 25.0),  # DGX A100: 8 x 200 Gb/s HDR for 8 GPUs -> 200 Gb/s / 8 bits = 25 GB/s
        ("H100", 50.0),  # DGX H100: 8 x 400 Gb/s NDR for 8 GPUs -> 400 / 8 = 50 GB/s
        ("H200", 50.0),
        ("B200", 50.0),
        ("V100", 6.25),  # DGX-1: 4 x 100 Gb/s EDR for 8 GPUs -> 50 Gb/s = 6.25 GB/s
    ],
)
def test_network_per_gpu_per_direction(key, gbytes_per_s):
    hw = HW[key]
    assert hw.network_bandwidth_bytes_per_s == pytest.approx(gbytes_per_s * 1e9, rel=1e-12)
    assert hw.network_latency_s == pytest.approx(2.7e-6)  # NCCL's network hop (tuning.cc)
    assert hw.network_source.startswith("https://") and hw.network_notes


def test_every_network_is_slower_than_its_node_link_and_sourced():
    with_network = [h for h in HW.values() if h.network_bandwidth_bytes_per_s is not None]
    assert len(with_network) >= 5
    for hw in with_network:
        assert hw.network_bandwidth_bytes_per_s < hw.interconnect_bandwidth_bytes_per_s, hw.id
        assert hw.network_source.startswith("https://"), hw.id


def test_existing_figures_are_unchanged_by_the_network_tables():
    a100 = HW["A100"]  # the tutorial's reference entry: NVLink 3 300 GB/s, 80 GiB, 312 TFLOP/s
    assert a100.interconnect_bandwidth_bytes_per_s == 300e9
    assert a100.memory_capacity_bytes == 80 * 2**30
    assert a100.peak_flop_per_s["fp16"] == 312e12


def _table(**network) -> dict:
    return {
        "name": "X",
        "memory_bandwidth": "1000 GB/s",
        "memory_capacity": "80 GB",
        "dispatch_overhead": "0.01 ms",
        "tdp": "500 W",
        "peak": {"fp16": "100 TFLOP/s", "fp32": "10 TFLOP/s"},
        "source": "https://example.com",
        "interconnect": {
            "name": "L",
            "bandwidth": "100 GB/s",
            "latency": "1 us",
            "devices_per_node": 8,
            "source": "https://example.com",
        },
        "network": network,
    }


@pytest.mark.parametrize(
    ("network", "match"),
    [
        ({"name": "n", "latency": "1 us", "source": "s"}, r"network\.bandwidth: required"),
        ({"name": "n", "bandwidth": "100", "latency": "1 us", "source": "s"}, "network.bandwidth"),
        (
            {"name": "n", "bandwidth": "1 GB/s", "latency": "1 us", "source": "s", "speed": 1},
            r"network\.speed: unknown field",
        ),
    ],
)
def test_a_broken_network_table_names_its_field(network, match):
    with pytest.raises(CatalogError, match=match):
        parse_hardware("X", _table(**network), origin="team.toml")


def test_a_team_network_is_read_in_si():
    net = {"name": "RoCE", "bandwidth": "100 Gbit/s", "latency": "3 us", "source": "https://x"}
    hw = parse_hardware("X", _table(**net), origin="team.toml")
    assert hw.network_bandwidth_bytes_per_s == 12.5e9  # 100e9 bits / 8
    assert hw.network_latency_s == pytest.approx(3e-6)
