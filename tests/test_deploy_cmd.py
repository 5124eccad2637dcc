"""`python -m engine deploy` and engine.launch_plan (engine/deploy/): each stack's launch
command carries the deployment and scheduler the engine simulates, and the Kubernetes manifest
validates strictly against the supported Kubernetes versions (as tests/test_kubernetes.py
validates the app's own manifests)."""

from __future__ import annotations

import json
import shlex

import kubernetes_validate
import pytest
import yaml

import engine
from engine.cli.main import main
from engine.deploy.manifest import to_yaml, to_yaml_documents

K8S_VERSIONS = ("1.25.0", "1.37.0")  # tests/test_kubernetes.py's oldest and newest
CLI = ["deploy", "--model", "Llama-3.1-70B", "--hardware", "H100", "--tp", "4"]


def _flag(argv, name):
    """The value after `name` in argv."""
    return argv[list(argv).index(name) + 1]


def _validate(objects) -> None:
    for doc in objects:
        for version in K8S_VERSIONS:
            kubernetes_validate.validate(doc, version, strict=True)


def test_vllm_command_and_manifest_for_70b_on_four_h100s(capsys):
    # the tutorial profile: vLLM's scheduler defaults and a 10 % reserve
    assert main([*CLI, "--stack", "vllm", "--profile", "tutorial"]) == 0
    out = capsys.readouterr().out
    command = next(line for line in out.splitlines() if line.startswith("vllm serve"))
    argv = shlex.split(command)
    assert argv[:3] == ["vllm", "serve", "meta-llama/Llama-3.1-70B"]  # data/models.toml's source
    assert _flag(argv, "--tensor-parallel-size") == "4"
    sched = engine.load_scheduler("tutorial")  # the scheduler the engine simulates
    assert _flag(argv, "--max-num-seqs") == str(sched.max_num_seqs)
    assert _flag(argv, "--max-num-batched-tokens") == str(sched.max_batched_tokens)
    assert _flag(argv, "--block-size") == str(sched.block_size)
    # memory_reserve 0.10 (engine/assumptions.py): 1 − 0.10 = 0.9 of each GPU
    assert _flag(argv, "--gpu-memory-utilization") == "0.9"
    assert "--enable-chunked-prefill" in argv and _flag(argv, "--dtype") == "float16"
    docs = [d for d in yaml.safe_load_all(out[out.index("---") :]) if d]
    assert [d["kind"] for d in docs] == ["Deployment", "Service"]
    _validate(docs)
    pod = docs[0]["spec"]["template"]["spec"]
    container = pod["containers"][0]
    assert container["command"] == argv  # the manifest runs the same command
    assert container["resources"]["limits"]["nvidia.com/gpu"] == "4"  # tp 4 × pp 1


def test_the_scheduler_overrides_and_formats_reach_each_stack():
    common = {"tp": 2, "pp": 2, "precision": "fp8", "max_num_seqs": 64}
    common |= {"max_batched_tokens": 4096, "memory_reserve": 0.15}
    common |= {"profile": engine.TUTORIAL_PROFILE}  # its vLLM scheduler: chunked, on demand
    vllm = engine.launch_plan("Llama-3.1-70B", "H100", stack="vllm", **common)
    a = vllm.launch.argv
    assert _flag(a, "--pipeline-parallel-size") == "2" and _flag(a, "--max-num-seqs") == "64"
    assert _flag(a, "--quantization") == "fp8" and _flag(a, "--kv-cache-dtype") == "fp8"
    assert _flag(a, "--gpu-memory-utilization") == "0.85"  # 1 − 0.15
    sgl = engine.launch_plan("Llama-3.1-70B", "H100", stack="sglang", **common).launch.argv
    assert sgl[:5] == ("python3", "-m", "sglang.launch_server", "--model-path", a[2])
    assert _flag(sgl, "--tp") == "2" and _flag(sgl, "--pp-size") == "2"
    assert _flag(sgl, "--max-running-requests") == "64"
    assert _flag(sgl, "--chunked-prefill-size") == "4096"
    assert _flag(sgl, "--mem-fraction-static") == "0.85"
    assert _flag(sgl, "--kv-cache-dtype") == "fp8_e4m3"
    trt = engine.launch_plan("Llama-3.1-70B", "H100", stack="trtllm", **common)
    t = trt.launch.argv
    assert t[:2] == ("trtllm-serve", a[2]) and _flag(t, "--tp_size") == "2"
    assert _flag(t, "--max_batch_size") == "64" and _flag(t, "--max_num_tokens") == "4096"
    assert _flag(t, "--kv_cache_free_gpu_memory_fraction") == "0.85"
    assert trt.launch.config["kv_cache_config"] == {"tokens_per_block": 16, "dtype": "fp8"}
    # the tutorial profile's vLLM policy (on demand) as TensorRT-LLM's MAX_UTILIZATION
    assert trt.launch.config["scheduler_config"] == {"capacity_scheduler_policy": "MAX_UTILIZATION"}
    assert any("fp8" in n for n in trt.launch.notes)  # TensorRT-LLM: a quantized checkpoint
    kinds = [d["kind"] for d in trt.manifests]
    assert kinds == ["ConfigMap", "Deployment", "Service"]
    _validate(trt.manifests)
    # the options file in the ConfigMap reads back as the stack's config
    data = trt.manifests[0]["data"]["extra-llm-api-config.yml"]
    assert yaml.safe_load(data) == trt.launch.config


def test_attention_dp_and_expert_parallel_flags():
    plan = engine.launch_plan("Mixtral-8x7B", "H100", stack="sglang", tp=4, ep=4, attention_dp=True)
    a = plan.launch.argv
    assert _flag(a, "--ep-size") == "4" and "--enable-dp-attention" in a and _flag(a, "--dp") == "4"
    v = engine.launch_plan("Mixtral-8x7B", "H100", stack="vllm", tp=4, ep=4, attention_dp=True)
    b = v.launch.argv
    assert "--enable-expert-parallel" in b and _flag(b, "--data-parallel-size") == "4"
    assert _flag(b, "--tensor-parallel-size") == "1"  # one engine per attention rank
    _validate(v.manifests)


def test_the_trtllm_profile_s_reserve_policy_is_its_default_and_a_note_elsewhere():
    trt = engine.launch_plan("Llama-3.1-70B", "H100", tp=4, stack="trtllm", profile="trtllm")
    assert "scheduler_config" not in trt.launch.config  # GUARANTEED_NO_EVICT, the default
    assert _flag(trt.launch.argv, "--max_num_tokens") == "8192"  # the profile's scheduler
    vllm = engine.launch_plan("Llama-3.1-70B", "H100", tp=4, stack="vllm", profile="trtllm")
    assert any("GUARANTEED_NO_EVICT" in n for n in vllm.launch.notes)


def test_json_format_and_more_gpus_than_a_node(capsys):
    assert main([*CLI[:-1], "16", "--stack", "trtllm", "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) == {"stack", "command", "argv", "port", "stack_config", "notes", "manifests"}
    assert out["argv"][out["argv"].index("--tp_size") + 1] == "16"
    assert any("multi-node" in n for n in out["notes"])  # 16 GPUs > 8 per H100 node
    _validate(out["manifests"])


@pytest.mark.parametrize(
    ("extra", "says"),
    [
        (["--stack", "tgi"], "invalid choice"),
        (["--tp", "3"], "divide"),
        (["--hf-id", ""], "hf_id"),
    ],
)
def test_bad_input_exits_2_with_one_line(capsys, extra, says):
    assert main([*CLI[:-2], *extra]) == 2
    err = capsys.readouterr().err
    assert says in err and err.count("\n") == 1


def test_a_custom_id_and_image():
    plan = engine.launch_plan(
        "Llama-3.1-8B", "A100", hf_id="my-org/llama-8b-fp8", image="registry.local/vllm:1"
    )
    assert plan.launch.argv[2] == "my-org/llama-8b-fp8"
    pod = plan.manifests[0]["spec"]["template"]["spec"]
    assert pod["containers"][0]["image"] == "registry.local/vllm:1"
    assert plan.manifests[0]["metadata"]["name"] == "llama-8b-fp8-vllm"


def test_the_yaml_writer_round_trips_through_a_yaml_reader():
    value = {"a": [1, 2.5, {"b": "x: y", "c": True}], "d": {}, "e": [], "f": "4", "g/h": None}
    assert yaml.safe_load(to_yaml(value)) == value
    docs = [{"kind": "A"}, {"kind": "B", "spec": {"n": 1}}]
    assert list(yaml.safe_load_all(to_yaml_documents(docs))) == docs
