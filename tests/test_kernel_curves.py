"""Kernel efficiency curves (engine/catalog/kernels.py, data/kernels/): the shipped files load,
the laws reproduce measured kernels within the error the files state, and they behave
physically (efficiency at most 1, time never falling as a shape grows, overheads >= 0).

The measured points below are quoted from aiconfigurator's kernel tables at commit
095f58a51c4ca8e61b66ec108d86f223f8d559ce (https://github.com/ai-dynamo/aiconfigurator), file
by file; latencies in ms as the tables give them. docs/model.md, "Kernel efficiency curves".
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import engine
from engine.catalog import kernels as k

ROOT = Path(__file__).resolve().parent.parent
CURVES = engine.kernel_curves()
DATA = "https://github.com/ai-dynamo/aiconfigurator/blob/095f58a51c4ca8e61b66ec108d86f223f8d559ce/aic-core/src/aiconfigurator_core/systems/data"
GEMM = f"{DATA}/h100_sxm/gemm/trtllm/1.3.0rc20/gemm_perf.parquet"
DECODE = f"{DATA}/h100_sxm/attention/trtllm/1.3.0rc20/generation_attention_perf.parquet"
PREFILL = f"{DATA}/h100_sxm/attention/trtllm/1.3.0rc20/context_attention_perf.parquet"
ALL_REDUCE = f"{DATA}/h100_sxm/comm/trtllm/1.3.0rc20/custom_allreduce_perf.parquet"
NCCL = f"{DATA}/h100_sxm/comm/nccl/2.29.2/nccl_perf.parquet"


def within_stated(curve: engine.KernelCurve, predicted_s: float, measured_ms: float) -> None:
    """|predicted / measured − 1| within the 90th percentile of the curve's held-out errors."""
    error = abs(predicted_s / (measured_ms * 1e-3) - 1) * 100
    assert error <= curve.fit.p90_ape_pct, (error, curve.fit.p90_ape_pct)


# H100, TensorRT-LLM 1.3.0rc20 (GEMM table): bf16 at N = K = 8192; fp8 at N = 7168, K = 8192.
@pytest.mark.parametrize(
    ("dtype", "m", "n", "measured_ms"),
    [
        ("bf16", 1, 8192, 0.049184),  # weight-bound: 134 MB / 0.049 ms = 2.73 TB/s = 0.82·β
        ("bf16", 64, 8192, 0.050421),
        ("bf16", 512, 8192, 0.089765),
        ("bf16", 8192, 8192, 1.404784),  # 1.1 PFLOP / 1.40 ms = 783 TFLOP/s = 0.79·Π
        ("fp8", 1, 7168, 0.033957),
        ("fp8", 512, 7168, 0.065285),
        ("fp8", 8192, 7168, 0.811451),
    ],
)
def test_gemm_reproduces_measured_points(dtype, m, n, measured_ms):
    curve = CURVES.find("H100", "trtllm", op="gemm", dtype=dtype)
    assert curve.source.url == GEMM
    within_stated(curve, engine.gemm_time_s(curve, m=m, n=n, k=8192), measured_ms)


# H100, TensorRT-LLM 1.3.0rc20, decode: 32 query heads, 8 KV heads, head size 128, bf16 cache;
# `step` cached tokens, so step + 1 keys.
@pytest.mark.parametrize(
    ("batch", "step", "measured_ms"),
    [(1, 32767, 0.064677), (16, 8191, 0.190779), (64, 2047, 0.193488)],
)
def test_decode_attention_reproduces_measured_points(batch, step, measured_ms):
    curve = CURVES.find("H100", "trtllm", op="decode_attention", dtype="bf16")
    assert curve.source.url == DECODE
    seconds = engine.decode_attention_time_s(
        curve, batch=batch, keys=step + 1, heads=32, kv_heads=8, head_dim=128
    )
    within_stated(curve, seconds, measured_ms)


# H100, TensorRT-LLM 1.3.0rc20, prefill (context) attention, bf16, same heads.
@pytest.mark.parametrize(
    ("batch", "tokens", "measured_ms"),
    [(1, 4096, 0.338741), (1, 16384, 4.336709), (8, 1024, 0.272293)],
)
def test_prefill_attention_reproduces_measured_points(batch, tokens, measured_ms):
    curve = CURVES.find("H100", "trtllm", op="prefill_attention", dtype="bf16")
    assert curve.source.url == PREFILL
    seconds = engine.prefill_attention_time_s(
        curve, batch=batch, tokens=tokens, heads=32, kv_heads=8, head_dim=128
    )
    within_stated(curve, seconds, measured_ms)


# H100 × 8: TensorRT-LLM's custom all-reduce and NCCL 2.29.2's, bf16/half; the tables count
# elements (2 bytes each).
@pytest.mark.parametrize(
    ("stack", "dtype", "elements", "measured_ms", "url"),
    [
        ("trtllm", "bf16", 8192, 0.003559, ALL_REDUCE),  # 16 KB in 3.6 µs: one-shot
        ("trtllm", "bf16", 524288, 0.025965, ALL_REDUCE),
        ("trtllm", "bf16", 16777216, 0.197229, ALL_REDUCE),
        ("nccl", "fp16", 8192, 0.01898, NCCL),
        ("nccl", "fp16", 16777216, 0.1998, NCCL),
    ],
)
def test_all_reduce_reproduces_measured_points(stack, dtype, elements, measured_ms, url):
    curve = CURVES.find("H100", stack, op="all_reduce", dtype=dtype)
    assert curve.source.url == url
    seconds = engine.collective_time_s(curve, gpus=8, message_bytes=2.0 * elements)
    within_stated(curve, seconds, measured_ms)


def test_a_tp8_all_reduce_of_16_kb_takes_microseconds_not_a_ring_of_hops():
    # The serving model's ring charges 2·(p − 1)·α = 2·7·7.23 µs = 101 µs of latency alone
    # (the trtllm profile); TensorRT-LLM's one-shot kernel measured 3.6 µs.
    curve = CURVES.find("H100", "trtllm", op="all_reduce", dtype="bf16")
    assert engine.collective_time_s(curve, gpus=8, message_bytes=16384.0) < 5e-6


def test_every_shipped_curve_cites_its_file_at_a_commit():
    assert len(CURVES.curves) > 100
    for curve in CURVES.curves:
        assert re.fullmatch(
            r"https://github\.com/ai-dynamo/aiconfigurator/blob/[0-9a-f]{40}/\S+", curve.source.url
        )
        assert curve.source.path.endswith(".parquet") and curve.source.version
        fit = curve.fit
        assert 1 <= len(fit.free) <= 4 and fit.rows > 0 and fit.held_out_rows > 0
        assert 0 <= fit.median_ape_pct <= fit.p90_ape_pct <= fit.max_ape_pct


def test_every_accelerator_in_the_catalogue_uses_the_catalogues_figures():
    catalog = engine.load_catalog(use_env=False)
    peaks = {"bf16": "fp16", "fp8": "fp8", "int8": "int8"}  # fp4: the catalogue's nvfp4 peak
    checked = 0
    for path in sorted((ROOT / "data" / "kernels").glob("*.toml")):
        for name, table in tomllib.loads(path.read_text()).get("accelerators", {}).items():
            try:
                spec = catalog.find_hardware(name)
            except ValueError:
                continue  # cited from the vendor until the catalogue lists it
            bandwidth = engine.quantity(table["memory_bandwidth"]).m_as("byte/s")
            assert bandwidth == pytest.approx(spec.memory_bandwidth_bytes_per_s)
            for key, text in table["peak"].items():
                if key == "fp4":
                    ours = spec.fp4_peak_flop_per_s["nvfp4"]
                else:
                    ours = spec.peak_flop_per_s[peaks[key]]
                assert engine.quantity(text).m_as("flop/s") == pytest.approx(ours), (name, key)
            checked += 1
    assert checked >= 5  # A100, H100, H200, B200, L40S at least


def test_find_names_what_there_is():
    with pytest.raises(ValueError, match="known: bf16"):
        CURVES.find("H100", "trtllm", op="gemm", dtype="fp64")
    with pytest.raises(ValueError, match="no 'gemm' curve for TPU"):
        CURVES.find("TPU", "trtllm", op="gemm", dtype="bf16")
    with pytest.raises(ValueError, match=r"measured: 2, 4, 8"):
        engine.collective_time_s(
            CURVES.find("H100", "trtllm", op="all_reduce", dtype="bf16"), gpus=3, message_bytes=1.0
        )


# --- the laws behave physically, for every shipped curve ---------------------------------

ROOFLINES = [c for c in CURVES.curves if c.op in ("gemm", "decode_attention", "prefill_attention")]
COLLECTIVES = [c for c in CURVES.curves if isinstance(c.law, k.CollectiveLaw)]
sizes = st.floats(1, 65536)


@pytest.mark.parametrize("curve", ROOFLINES, ids=lambda c: " ".join(c.key))
def test_overheads_are_non_negative_and_efficiencies_at_most_one(curve):
    law = curve.law
    assert law.overhead_s >= 0 and getattr(law, "per_row_s", 0.0) >= 0
    assert 0 < law.eta_compute <= 1 and 0 < law.eta_memory <= 1


@settings(max_examples=60, deadline=None)
@given(m=sizes, n=sizes, k=sizes, grow=st.floats(1.0, 8.0))
def test_gemm_time_never_falls_as_a_dimension_grows_and_efficiency_stays_below_one(m, n, k, grow):
    for curve in (c for c in ROOFLINES if c.op == "gemm"):
        t = engine.gemm_time_s(curve, m=m, n=n, k=k)
        for bigger in ({"m": m * grow}, {"n": n * grow}, {"k": k * grow}):
            assert engine.gemm_time_s(curve, **({"m": m, "n": n, "k": k} | bigger)) >= t * (
                1 - 1e-12
            )
        assert t >= curve.law.overhead_s
        assert engine.gemm_efficiency(curve, m=m, n=n, k=k) <= curve.law.eta_compute + 1e-12


@settings(max_examples=40, deadline=None)
@given(batch=st.integers(1, 2048), keys=st.integers(1, 131072), grow=st.floats(1.0, 8.0))
def test_attention_time_never_falls_as_batch_or_context_grows(batch, keys, grow):
    shape = {"heads": 32, "kv_heads": 8, "head_dim": 128}
    ulp = 1 - 1e-12  # the same time computed two ways may differ in its last bits
    for curve in ROOFLINES:
        if curve.op == "decode_attention":
            t = engine.decode_attention_time_s(curve, batch=batch, keys=keys, **shape)
            assert (
                engine.decode_attention_time_s(curve, batch=batch * grow, keys=keys, **shape)
                >= t * ulp
            )
            assert (
                engine.decode_attention_time_s(curve, batch=batch, keys=keys * grow, **shape)
                >= t * ulp
            )
            assert engine.decode_attention_efficiency(curve, batch=batch, keys=keys, **shape) <= 1
        elif curve.op == "prefill_attention":
            t = engine.prefill_attention_time_s(curve, batch=batch, tokens=keys, **shape)
            assert (
                engine.prefill_attention_time_s(curve, batch=batch, tokens=keys * grow, **shape)
                >= t * ulp
            )
            assert (
                engine.prefill_attention_efficiency(curve, batch=batch, tokens=keys, **shape) <= 1
            )


@settings(max_examples=40, deadline=None)
@given(size=st.floats(1.0, 1e10), grow=st.floats(1.0, 100.0))
def test_collective_time_never_falls_as_the_message_grows(size, grow):
    for curve in COLLECTIVES:
        for gpus in curve.law.gpus:
            t = engine.collective_time_s(curve, gpus=gpus, message_bytes=size)
            assert (
                t > 0 and engine.collective_time_s(curve, gpus=gpus, message_bytes=size * grow) >= t
            )


def test_scalars_and_arrays_give_the_same_times():
    curve = CURVES.find("H100", "trtllm", op="gemm", dtype="bf16")
    m = np.array([1.0, 64.0, 4096.0])
    together = engine.gemm_time_s(curve, m=m, n=4096.0, k=4096.0)
    one_by_one = [engine.gemm_time_s(curve, m=float(x), n=4096.0, k=4096.0) for x in m]
    assert together == pytest.approx(one_by_one, rel=1e-15)


def test_a_hand_made_law_gives_its_roofline():
    # Π = 1e15, β = 1e12: M = N = K = 1000 bf16 → 2e9 FLOP / 1e15 = 2 µs compute;
    # 1000·1000·2 + 2·(2·1e6) B = 6 MB / 1e12 = 6 µs memory; + t0 1 µs + 0.5·2 µs exposed = 8 µs.
    law = k.GemmLaw(
        peak_flop_per_s=1e15,
        bandwidth_bytes_per_s=1e12,
        weight_bytes=2.0,
        overhead_s=1e-6,
        eta_compute=1.0,
        eta_memory=1.0,
        exposed=0.5,
    )
    assert engine.gemm_time_s(law, m=1000, n=1000, k=1000) == pytest.approx(8e-6)
    # all-reduce: min(1 µs + 1 MB / 100 GB/s, 10 µs + 1 MB / 1 TB/s) = min(11, 11) µs
    coll = k.CollectiveLaw(
        gpus=(8,),
        small_latency_s=(1e-6,),
        small_bandwidth_bytes_per_s=(1e11,),
        large_latency_s=(1e-5,),
        large_bandwidth_bytes_per_s=(1e12,),
    )
    assert engine.collective_time_s(coll, gpus=8, message_bytes=1e6) == pytest.approx(11e-6)


# --- the files are read strictly ------------------------------------------------------

HEAD = """stack = "trtllm"
repository = "https://github.com/ai-dynamo/aiconfigurator"
commit = "095f58a51c4ca8e61b66ec108d86f223f8d559ce"
[accelerators.H100]
memory_bandwidth = "3350 GB/s"
peak = { bf16 = "989 TFLOP/s" }
source = "https://www.nvidia.com/en-us/data-center/h100/"
"""
CURVE = """[[curves]]
accelerator = "H100"
op = "gemm"
dtype = "bf16"
peak = "bf16"
version = "1"
path = "x.parquet"
free = ["overhead_s"]
rows = 1
held_out_rows = 1
held_out = "shapes"
mape_pct = 1.0
median_ape_pct = 1.0
p90_ape_pct = 1.0
max_ape_pct = 1.0
in_sample_mape_pct = 1.0
[curves.params]
weight_bytes = 2.0
overhead_s = 1e-6
eta_compute = ETA
eta_memory = 0.8
"""


def test_a_minimal_file_loads():
    (curve,) = k.curves_from_toml(HEAD + CURVE.replace("ETA", "0.7"), "x.toml")
    assert curve.law.peak_flop_per_s == pytest.approx(989e12) and curve.law.narrow_n == 0


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (HEAD + CURVE.replace("ETA", "1.5"), "eta_compute must be a number from"),
        (
            HEAD + CURVE.replace("ETA", "0.7").replace('op = "gemm"', 'op = "softmax"'),
            "unknown op 'softmax'",
        ),
        (HEAD + CURVE.replace("ETA", "0.7") + "colour = 1.0\n", "unknown parameter 'colour'"),
        (HEAD + CURVE.replace("ETA", "0.7") * 2, "appears twice"),
        (HEAD + CURVE.replace("ETA", "0.7").replace('peak = "bf16"', 'peak = "fp8"'), "peak 'fp8'"),
        (HEAD.replace("989 TFLOP/s", "989 GB/s") + CURVE.replace("ETA", "0.7"), "not in units"),
        ("stack = [", "not a TOML file"),
    ],
)
def test_a_broken_file_is_refused_in_one_line(text, message):
    with pytest.raises(ValueError, match=message) as caught:
        k.curves_from_toml(text, "x.toml")
    assert "\n" not in str(caught.value) and str(caught.value).startswith("x.toml")


def test_the_docs_table_of_held_out_errors_is_the_files():
    from tools.kernel_fit.report import errors_table

    assert errors_table(CURVES) in (ROOT / "docs" / "model.md").read_text()
