"""The published vLLM and SGLang results shipped in data/measurements/: every row cites a public
page that is not one of the held-back sources, names its stack and release, and a few rows are
checked against the published numbers by hand."""

import re
from collections import Counter
from pathlib import Path

import pytest

from engine.accuracy.measurements import METRICS, read_measurements

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "data" / "measurements"
STACKS = {"vllm-v": "vLLM ", "sglang-v": "SGLang "}  # file prefix -> engine column prefix
PUBLISHED = sorted(p for p in DATA.glob("*.csv") if p.name.startswith(tuple(STACKS)))
# URL fragments of the results the project keeps back to measure its error out of sample: no
# shipped row may cite them (this guard is the one place that names them).
HELD_BACK = (
    "nim/benchmarking",
    "docs.nvidia.com/nim",
    "mlcommons",
    "mlperf",
    "inferencemax",
    "inferencex",
    "aiconfigurator",
    "rocm/vllm",
    "llm-inference-bench",
    "inference-sim",
    "dgxc-benchmarking",
    "docs.nvidia.com/nemo",
    "nemo-framework",
)
# TensorRT-LLM's performance tables of the releases between 0.6.1 and 1.0 are held back too.
TRTLLM_RELEASE = re.compile(r"tensorrt-llm/(?:blob|tree)/v?(\d+)\.(\d+)")


def _rows(prefix: str) -> list:
    return [m for p in PUBLISHED if p.name.startswith(prefix) for m in read_measurements([p])]


def test_both_stacks_ship_files():
    names = [p.name for p in PUBLISHED]
    assert names == [
        "sglang-v0.3.csv",
        "sglang-v0.5.csv",
        "vllm-v0.11.csv",
        "vllm-v0.19.csv",
        "vllm-v0.6.csv",
    ]


@pytest.mark.parametrize("path", PUBLISHED, ids=lambda p: p.name)
def test_every_row_has_a_source_a_stack_release_and_a_known_metric(path):
    rows = read_measurements([path])
    stack = next(engine for prefix, engine in STACKS.items() if path.name.startswith(prefix))
    for m in rows:
        assert m.source.startswith("https://") and " " not in m.source
        assert m.engine.startswith(stack) and re.search(r"\d+\.\d+", m.engine)
        assert m.metric in METRICS and m.value > 0


@pytest.mark.parametrize("path", PUBLISHED, ids=lambda p: p.name)
def test_no_row_cites_a_held_back_source(path):
    for m in read_measurements([path]):
        url = m.source.lower()
        assert not [f for f in HELD_BACK if f in url], (m.row, m.source)
        release = TRTLLM_RELEASE.search(url)
        if release:  # 0.6.1 itself and 1.0 are allowed, nothing in between
            assert tuple(map(int, release.groups())) <= (0, 6) or int(release.group(1)) >= 1


def test_each_stack_has_forty_rows_over_models_gpus_and_metrics():
    for prefix in STACKS:
        rows = _rows(prefix)
        assert len(rows) >= 40
        models = {m.model for m in rows}
        assert {"Llama-3.1-8B", "Llama-3.1-70B"} <= models  # dense 8B and 70B
        assert {"gpt-oss-120b", "Qwen3-235B-A22B", "DeepSeek-V3"} <= models  # MoE
        assert {"A100", "H100", "H200"} <= {m.hardware for m in rows}
        assert {"output_tokens_per_s_per_gpu", "tpot_ms", "ttft_ms"} <= {m.metric for m in rows}
    assert {"B200", "MI300X"} <= {m.hardware for m in _rows("sglang-v")}


def test_no_scenario_is_listed_twice():
    rows = _rows("vllm-v") + _rows("sglang-v")
    scenario = ("file", "source", "engine", "hardware", "tp", "pp", "model", "precision")
    scenario += ("kv_precision", "batch_size", "concurrency", "input_tokens", "output_tokens")
    key = Counter(tuple(getattr(m, c) for c in (*scenario, "metric")) for m in rows)
    assert max(key.values()) == 1


def _find(prefix: str, **cells) -> list:
    return [m for m in _rows(prefix) if all(getattr(m, k) == v for k, v in cells.items())]


def test_transcriptions_by_hand():
    # gpustack, gpt-oss-120b on 2x H100 (vLLM 0.10.2, ShareGPT, 1,000 requests at once, written
    # as 1,000 clients of one request each): 7,648.67 output tok/s / 2 GPUs = 3,824.34 per GPU;
    # 215,312 / 1,000 = 215 input tokens
    metric = "output_tokens_per_s_per_gpu"
    (m,) = _find(
        "vllm-v", model="gpt-oss-120b", hardware="H100", tp=2, input_tokens=215, metric=metric
    )
    assert (m.value, m.output_tokens, m.concurrency) == (3824.34, 196, 1000)
    # SGLang cookbook, Llama-3.1-70B on 8x A100, 16 clients: 513.48 / 8 = 64.19 tok/s per GPU,
    # 39,668 / 80 = 496 input and 40,805 / 80 = 510 output tokens per request
    rows = _find("sglang-v", model="Llama-3.1-70B", hardware="A100", concurrency=16)
    by_metric = {m.metric: m for m in rows if m.input_tokens == 496}
    assert by_metric["output_tokens_per_s_per_gpu"].value == 64.19
    assert by_metric["tpot_ms"].value == 26.09 and by_metric["ttft_ms"].value == 264.84
    assert by_metric["e2e_latency_ms"].output_tokens == 510
    # SGLang cookbook, DeepSeek-V3.1 on 8x MI300X, 100 clients, 1K/1K: 1,216.79 / 8 = 152.10
    # tok/s per GPU; 252,662 / 500 = 505 output tokens per request
    (m,) = _find(
        "sglang-v", hardware="MI300X", model="DeepSeek-V3", concurrency=100, metric="tpot_ms"
    )
    assert (m.value, m.input_tokens, m.output_tokens) == (73.33, 500, 505)
    metric = "output_tokens_per_s_per_gpu"
    (m,) = _find("sglang-v", hardware="MI300X", model="DeepSeek-V3", concurrency=100, metric=metric)
    assert m.value == 152.1
    # LMSYS blog: gpt-oss-120b MXFP4 on 8x H100 decodes one sequence at 318.53 tok/s,
    # so 1,000 / 318.53 = 3.139 ms per output token
    (m,) = _find("sglang-v", model="gpt-oss-120b", hardware="H100", batch_size=1, precision="int4")
    assert (m.metric, m.value, m.tp) == ("tpot_ms", 3.139, 8)
