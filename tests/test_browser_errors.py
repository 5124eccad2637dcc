"""What a user sees of an uncaught error: in the container, no traceback and no server path
(the Dockerfile's CMD passes client.showErrorDetails "none"); with `streamlit run` from a
checkout, the details a developer wants (.streamlit/config.toml: "full").

The server runs tests/fixtures/raises.py, a page that raises with a server path in its message,
with the CMD's client flags as the environment variables Streamlit reads for them."""

from __future__ import annotations

import json
import re

import pytest
from dockerfile_parse import DockerfileParser

from tests.conftest import ROOT, start_fresh_server, stop_server

pytestmark = pytest.mark.browser
SCRIPT = "tests/fixtures/raises.py"
TIMEOUT_MS = 60_000


def env_name(option: str) -> str:
    """Streamlit's environment variable for a config option: client.showErrorDetails ->
    STREAMLIT_CLIENT_SHOW_ERROR_DETAILS."""
    return "STREAMLIT_" + re.sub(r"(?<=[a-z])(?=[A-Z])", "_", option.replace(".", "_")).upper()


def image_client_flags() -> dict[str, str]:
    """The Dockerfile CMD's `--client.*` flags as STREAMLIT_* environment variables."""
    parser = DockerfileParser(path=str(ROOT / "Dockerfile"))
    (cmd,) = [i["value"] for i in parser.structure if i["instruction"] == "CMD"]
    flags = dict(a[2:].split("=", 1) for a in json.loads(cmd) if a.startswith("--client."))
    return {env_name(option): value for option, value in flags.items()}


def error_shown(tab, env: dict[str, str]) -> str:
    """The text of the exception box the failing page shows, under a server with `env`."""
    proc, url = start_fresh_server(env_extra=env, script=SCRIPT)
    try:
        page = tab
        page.set_default_timeout(TIMEOUT_MS)
        page.goto(url)
        box = page.locator("[data-testid='stException']").first
        box.wait_for()
        page.wait_for_timeout(500)
        text = box.inner_text()
        return text
    finally:
        stop_server(proc)


def test_the_container_shows_no_traceback_nor_server_path(tab):
    env = image_client_flags()
    assert env == {"STREAMLIT_CLIENT_SHOW_ERROR_DETAILS": "none"}
    text = error_shown(tab, env)
    assert text.strip()  # the user is told something went wrong
    for detail in ("Traceback", "raises.py", str(ROOT), "cannot write inf", "ValueError"):
        assert detail not in text, (detail, text)


def test_a_developer_sees_the_traceback(tab):
    """The contrast that makes the test above mean something: the same page under the
    checkout's config shows the traceback, the path and the message."""
    text = error_shown(tab, {})
    assert "raises.py" in text and "cannot write inf" in text and "ValueError" in text
