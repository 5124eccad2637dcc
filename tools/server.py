"""The app's server for tests and benchmarks: `streamlit run app.py` on a free loopback port.

Started from the repo root exactly as a user would; only the process started here is stopped.
Also the headless Chromium that drives it (Debian's /usr/bin/chromium, via Playwright).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = Path(os.environ.get("ROOFLINE_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(
    env_extra: dict[str, str] | None = None, script: str = "app.py", port: int | None = None
) -> tuple[subprocess.Popen, str]:
    """Start `streamlit run app.py` (or `script`, relative to the repo root, with the same flags
    and .streamlit/config.toml) on `port`, or a free one; returns (process, base URL) once
    healthy.

    Parallel test workers pick ports at the same time: a port taken between `free_port` and
    the server's bind (or `port`, taken) is retried on another (up to three ports)."""
    for attempt in range(3):
        port = port if attempt == 0 and port else free_port()
        proc, url = _launch(port, env_extra, script), f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                log = proc.stderr.read().decode()
                if f"Port {port} is not available" in log:
                    break  # another process won the port: try the next one
                raise RuntimeError(f"server exited: {log[-2000:]}")
            if _healthy(url):
                return proc, url
            time.sleep(0.2)
        else:
            stop_server(proc)
            raise RuntimeError("server did not become healthy within 30 s")
    raise RuntimeError("no free port for the server after three tries")


def _launch(port: int, env_extra: dict[str, str] | None, script: str) -> subprocess.Popen:
    env = {**os.environ, "ROOFLINE_CATALOG": "", **(env_extra or {})}
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "streamlit",
            "run",
            script,
            "--server.headless",
            "true",
            "--server.port",
            str(port),
            "--server.address",
            "127.0.0.1",
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/_stcore/health", timeout=1) as response:
            return response.read() == b"ok"
    except OSError:
        return False


def stop_server(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
