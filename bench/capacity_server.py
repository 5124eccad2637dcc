"""The server under test for bench/capacity.py: started as the image starts it, pinned to one
core on the loopback address, and its memory and CPU read from /proc."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

CATALOG = Path("deploy", "kubernetes", "overlays", "example", "team.toml")  # as deployed
# The image's CMD flags (Dockerfile), but on loopback: nothing leaves this machine.
FLAGS = """server.address=127.0.0.1 server.headless=true server.runOnSave=false
    server.fileWatcherType=none server.enableXsrfProtection=true
    browser.gatherUsageStats=false logger.hideWelcomeMessage=true"""


def pin(core: int, nice: int) -> None:
    """This process on `core` at `nice`, also across sessions (Linux autogroup), if allowed."""
    os.sched_setaffinity(0, {core})
    with contextlib.suppress(OSError):
        os.setsid()
        Path("/proc/self/autogroup").write_text(str(nice))
    os.setpriority(os.PRIO_PROCESS, 0, nice)


def start_server(core: int, nice: int, app_dir: Path) -> tuple[subprocess.Popen, str]:
    """`streamlit run app.py` in `app_dir`, pinned to `core`, on a free loopback port."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    cmd = [sys.executable, "-m", "streamlit", "run", "app.py", f"--server.port={port}"]
    env = {**os.environ, "ROOFLINE_CATALOG": str(app_dir / CATALOG)}
    proc = subprocess.Popen(
        [*cmd, *(f"--{flag}" for flag in FLAGS.split())],
        cwd=app_dir,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        preexec_fn=lambda: pin(core, nice),
    )
    url = f"http://127.0.0.1:{port}"
    for _ in range(150):
        with contextlib.suppress(OSError):
            if urllib.request.urlopen(f"{url}/_stcore/health", timeout=1).read() == b"ok":
                return proc, url
        time.sleep(0.2)
    proc.kill()
    raise SystemExit("the server did not become healthy within 30 s")


def rss_mib(pid: int) -> float:
    """Resident memory of a process (VmRSS), MiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def cpu_s(pid: int) -> float:
    """User + system CPU seconds used so far by a process."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
