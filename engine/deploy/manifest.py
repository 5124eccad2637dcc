"""The Kubernetes objects that run one launch command: a Deployment of one pod with the
command's GPUs, a ClusterIP Service on its port and, for TensorRT-LLM, the ConfigMap of its
options file; and a small YAML writer for them.

The pod asks for `tp × pp` GPUs as the `nvidia.com/gpu` extended resource (NVIDIA's device
plugin: https://github.com/NVIDIA/k8s-device-plugin), mounts a memory-backed /dev/shm (the
stacks' workers share tensors through it: SGLang's and vLLM's Kubernetes guides), reads a
Hugging Face token from the Secret `hf-token` when there is one, and is ready when the stack's
health endpoint answers. Images (each stack's published container; pin another with --image):
vllm/vllm-openai (https://docs.vllm.ai/en/stable/deployment/docker.html), lmsysorg/sglang
(https://docs.sglang.io/get-started/install.html), nvcr.io/nvidia/tensorrt-llm/release
(https://nvidia.github.io/TensorRT-LLM/1.0.0/commands/trtllm-serve/run-benchmark-with-trtllm-serve.html).
"""

from __future__ import annotations

import json
import re

from engine.deploy.stacks import CONFIG_PATH, Launch

IMAGES = {
    "vllm": "vllm/vllm-openai:v0.11.0",
    "sglang": "lmsysorg/sglang:v0.5.19-cu129",
    "trtllm": "nvcr.io/nvidia/tensorrt-llm/release:1.0.0",
}
SHM = "16Gi"  # /dev/shm for the workers' shared tensors
STARTUP_MINUTES = 30  # a large checkpoint's download and load, before the probes give up


def dns_name(text: str) -> str:
    """A DNS-1123 label (lower-case letters, digits and '-', at most 63 characters)."""
    name = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:63].strip("-")
    return name or "model"


def _container(launch: Launch, image: str, gpus: int) -> dict:
    probe = {"httpGet": {"path": launch.health_path, "port": "http"}, "periodSeconds": 10}
    mounts = [{"name": "shm", "mountPath": "/dev/shm"}]
    if launch.config:
        mounts.append({"name": "config", "mountPath": CONFIG_PATH.rsplit("/", 1)[0]})
    token = {"name": "hf-token", "key": "token", "optional": True}
    return {
        "name": launch.stack,
        "image": image,
        "command": list(launch.argv),
        "ports": [{"name": "http", "containerPort": launch.port}],
        "env": [{"name": "HF_TOKEN", "valueFrom": {"secretKeyRef": token}}],
        "resources": {
            "requests": {"nvidia.com/gpu": str(gpus)},
            "limits": {"nvidia.com/gpu": str(gpus)},
        },
        "volumeMounts": mounts,
        "startupProbe": probe | {"failureThreshold": STARTUP_MINUTES * 6},
        "readinessProbe": probe,
        "livenessProbe": probe | {"failureThreshold": 6},
    }


def manifests(launch: Launch, name: str, gpus: int, labels: dict, image: str = "") -> list[dict]:
    """The objects (dicts) `kubectl apply -f` takes for this launch."""
    labels = {"app.kubernetes.io/name": name, **labels}
    volumes: list[dict] = [{"name": "shm", "emptyDir": {"medium": "Memory", "sizeLimit": SHM}}]
    objects: list[dict] = []
    if launch.config:
        cm = f"{name}-config"[:63]
        file = CONFIG_PATH.rsplit("/", 1)[1]
        objects.append(
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": cm, "labels": labels},
                "data": {file: to_yaml(launch.config)},
            }
        )
        volumes.append({"name": "config", "configMap": {"name": cm}})
    pod = {
        "containers": [_container(launch, image or IMAGES[launch.stack], gpus)],
        "volumes": volumes,
    }
    selector = {"app.kubernetes.io/name": name}
    objects.append(
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": name, "labels": labels},
            "spec": {
                "replicas": 1,
                "selector": {"matchLabels": selector},
                "template": {"metadata": {"labels": labels}, "spec": pod},
            },
        }
    )
    port = {"name": "http", "port": launch.port, "targetPort": "http"}
    objects.append(
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": name, "labels": labels},
            "spec": {"type": "ClusterIP", "selector": selector, "ports": [port]},
        }
    )
    return objects


def _scalar(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return json.dumps(value)
    return json.dumps(str(value), ensure_ascii=False)  # a JSON string is a YAML scalar


PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_./-]*")


def _key(key: object) -> str:
    text = str(key)
    return text if PLAIN_KEY.fullmatch(text) else _scalar(text)


def _lines(value: object, indent: int) -> list[str]:
    pad = " " * indent
    if isinstance(value, dict) and value:
        out = []
        for k, v in value.items():
            if isinstance(v, dict | list) and v:
                out += [f"{pad}{_key(k)}:", *_lines(v, indent + 2)]
            else:
                out.append(f"{pad}{_key(k)}: {_lines(v, 0)[0]}")
        return out
    if isinstance(value, list) and value:
        out = []
        for item in value:
            inner = _lines(item, indent + 2)
            out.append(f"{pad}- {inner[0].lstrip()}")
            out += inner[1:]
        return out
    if isinstance(value, dict | list):
        return [f"{pad}{'{}' if isinstance(value, dict) else '[]'}"]
    return [f"{pad}{_scalar(value)}"]


def to_yaml(value: object) -> str:
    """Block-style YAML of dicts, lists, strings, numbers, booleans and None (string values quoted,
    as JSON strings, which YAML reads the same)."""
    return "\n".join(_lines(value, 0)) + "\n"


def to_yaml_documents(objects: list[dict]) -> str:
    """Several objects as one multi-document YAML stream."""
    return "---\n" + "---\n".join(to_yaml(o) for o in objects)
