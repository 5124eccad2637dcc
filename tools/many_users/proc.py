"""The server process under load, read from /proc: memory, CPU and its error log lines."""

from __future__ import annotations

import os
import threading
from pathlib import Path


def proc_status_mb(pid: int) -> dict[str, float]:
    """VmRSS and VmHWM of `pid` in MB (10⁶ bytes), from /proc/<pid>/status."""
    out = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, rest = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            out[key] = int(rest.split()[0]) * 1024 / 1e6
    return out


def proc_cpu_s(pid: int) -> float:
    """User + system CPU seconds of `pid` so far, from /proc/<pid>/stat."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class MemorySampler(threading.Thread):
    """Samples the server's VmRSS every `period` s until stopped; keeps the maximum."""

    def __init__(self, pid: int, period: float = 0.2):
        super().__init__(daemon=True)
        self.pid, self.period, self.peak = pid, period, 0.0
        self._stop_event = threading.Event()

    def run(self) -> None:
        while not self._stop_event.is_set():
            try:
                self.peak = max(self.peak, proc_status_mb(self.pid)["VmRSS"])
            except (OSError, KeyError):
                return
            self._stop_event.wait(self.period)

    def stop(self) -> None:
        self._stop_event.set()
        if self.is_alive():
            self.join(timeout=5)


class StderrDrain(threading.Thread):
    """Reads the server's stderr (so its pipe never fills) and keeps error-looking lines."""

    MARKERS = ("Traceback", "Error", "Exception", "Uncaught")

    def __init__(self, stream):
        super().__init__(daemon=True)
        self.stream, self.lines = stream, []

    def run(self) -> None:
        for raw in iter(self.stream.readline, b""):
            line = raw.decode(errors="replace").rstrip()
            if any(m in line for m in self.MARKERS):
                self.lines.append(line[:300])
