"""The many-users load: its configuration, its simulated users' scenarios and its report.

Shared by tests/test_many_users.py and bench/many_users_report.py (see tests/test_many_users.py
for what the run does and what its figures mean).
"""

from __future__ import annotations

import collections
import math
import os
import statistics
from dataclasses import dataclass, field
from urllib.parse import parse_qs, urlencode

import engine
from ui.words.format import fmt

MODELS = ("ResNet-50", "MobileNetV2", "BERT-Base", "Llama-3.1-8B", "GPT-2-XL")
HARDWARE = ("A100", "H100", "T4", "V100", "MI300X")
PRECISIONS = ("fp16", "bf16", "fp32", "int8")
BATCH_BASES = (1, 40, 150, 600, 2400, 9000, 30000)  # + user index: unique in every round
BATCH_LABEL = "Batch size (samples)"
BATCH_DEFAULT = "1"  # what the batch field shows before its session-state value arrives
CHECK_PATIENCE_S = 60.0  # how long a check waits for late elements (never for wrong values);
# at load average 25 on 2 cores the sidebar was seen drawn up to 19 s after the main area


@dataclass(frozen=True)
class ManyUsersConfig:
    sessions: int = 20
    browsers: int = 4  # of the sessions, those drawn in a Chromium context; the others are
    # protocol clients (tools/tab.py): the server's work per session is the same, a browser's
    # drawing costs ~10 CPU s per first load and ~1.5 per rerun on these cores
    rounds: int = 3  # batch changes per user after its first load
    load_concurrency: int = 3  # users opening their link at the same moment (all stay open)
    think_s: tuple[float, float] = (0.2, 2.0)  # a user's pause before each change (uniform)
    settle_s: float = 0.5  # after new numbers show: wait, require idle, then check them
    step_timeout_s: float = 120.0  # one page load or one rerun
    run_timeout_s: float = 600.0  # the whole load, whatever happens: a hang fails, never blocks
    viewport: tuple[int, int] = (1100, 800)

    def in_browser(self, index: int) -> bool:
        """Whether user `index` is drawn in Chromium: `browsers` users spread evenly over the
        arrival order, so browsers open their links among the protocol clients."""
        n, b = self.sessions, min(self.browsers, self.sessions)
        return any(index == i * n // b for i in range(b))


@dataclass(frozen=True)
class Scenario:
    """One simulated user: a share link and the batch sizes it then types, in order."""

    index: int
    model: str
    hardware: str
    precision: str
    batches: tuple[int, ...]  # batches[0] is in the link

    def link(self) -> str:
        query = {
            "model": self.model,
            "hardware": self.hardware,
            "batch": self.batches[0],
            "precision": self.precision,
        }
        return "/solve?" + urlencode(query)

    def expected(self, batch: int) -> dict[str, str]:
        """What the page must show for this user at `batch` (formatted by ui.words.format)."""
        r = engine.solve(
            model=self.model, hardware=self.hardware, batch_size=batch, precision=self.precision
        )
        cat = engine.default_catalog()
        return {
            "title": f"{cat.models[self.model].name} on {cat.hardware[self.hardware].name}",
            "caption": f"Batch {batch} · {self.precision} ·",
            "latency": fmt(r.latency_s, "s"),
            "bottleneck": r.bottleneck,
        }


def scenarios(sessions: int, rounds: int) -> list[Scenario]:
    """`sessions` users over the 25 model × accelerator pairs and 4 precisions.

    User i's batch in round r is BATCH_BASES[r] + i (the bases cycle, offset by a larger step
    each cycle), so in every round all users hold different batches, and one user's
    consecutive batches are far apart (its Latency changes on every step).
    """
    pairs = [(m, h) for m in MODELS for h in HARDWARE]
    out = []
    for i in range(sessions):
        model, hw = pairs[(i * 7) % len(pairs)]
        precision = PRECISIONS[(i + i // len(pairs)) % len(PRECISIONS)]
        batches = []
        for r in range(rounds + 1):
            cycle, k = divmod(r, len(BATCH_BASES))
            batches.append(BATCH_BASES[k] + i + cycle * 40 * (sessions + 1))
        out.append(
            Scenario(index=i, model=model, hardware=hw, precision=precision, batches=tuple(batches))
        )
    return out


def compare(sc: Scenario, batch: int, state: dict) -> tuple[list[str], list[str]]:
    """(wrong values, pending ones) of a page snapshot for user `sc` at `batch`.

    `state` is what a browser (tools/many_users/js.py STATE_JS) or a protocol client
    (tools/many_users/client.py) read off the page: title, caption, latency, bottleneck,
    batch_input, search (the address bar's query, with "?"), errors. A value that is not drawn
    yet, or a batch field still showing the widget's default, is pending; any other mismatch
    is wrong (that is what a leak between sessions looks like).
    """
    want = sc.expected(batch)
    query = {k: v[-1] for k, v in parse_qs(state["search"].lstrip("?")).items()}
    shown = {
        "title": (state["title"], want["title"], "=="),
        "latency": (state["latency"], want["latency"], "=="),
        "caption": (state["caption"], want["caption"], "startswith"),
        "bottleneck": (state["bottleneck"], want["bottleneck"], "startswith"),
        "batch field": (state["batch_input"], str(batch), "=="),
    }
    for key, value in (
        ("model", sc.model),
        ("hardware", sc.hardware),
        ("batch", str(batch)),
        ("precision", sc.precision),
    ):
        shown[f"URL {key}"] = (query.get(key), value, "==")
    wrong = [f"errors on the page: {state['errors']}"] if state["errors"] else []
    pending = []
    for name, (got, expected, how) in shown.items():
        if got is None:
            pending.append(f"{name} missing")
        elif name == "batch field" and got == BATCH_DEFAULT and expected != got:
            pending.append(f"batch field shows the default {got!r}, not {expected!r}")
        elif not (got == expected if how == "==" else got.startswith(expected)):
            wrong.append(f"{name} shows {got!r}, expected {expected!r}")
    return wrong, pending


def quantile(values: list[float], q: float) -> float:
    if len(values) < 2:
        return values[0] if values else math.nan
    return statistics.quantiles(values, n=100, method="inclusive")[round(q * 100) - 1]


@dataclass
class Report:
    config: ManyUsersConfig
    # Chromium users: goto → first numbers drawn, idle; batch change → new numbers, idle
    load_s: list[float] = field(default_factory=list)
    rerun_s: list[float] = field(default_factory=list)
    protocol_reruns: int = 0  # the protocol clients' batch changes with their numbers verified
    server_rerun_s: list[float] = field(default_factory=list)  # rerun request → script finished
    server_load_s: list[float] = field(default_factory=list)  # same, for the first runs
    session_ids: set[str] = field(default_factory=set)  # Streamlit sessions the server opened
    frames: collections.Counter = field(default_factory=collections.Counter)  # websocket events
    verified: int = 0  # page states checked and found right (first loads + reruns)
    late_elements: int = 0  # checks that had to wait for an element to be drawn
    default_flicker: int = 0  # checks that saw the batch field show "1" before its value
    pending_max_s: float = 0.0  # the longest such wait
    concurrent_sessions: int = 0  # sessions open and right when the changes began
    sessions_done: int = 0  # users that finished every round with every check passing
    failures: list[str] = field(default_factory=list)
    server_errors: list[str] = field(default_factory=list)
    rss_before_mb: float = math.nan
    peak_rss_mb: float = math.nan  # sampled VmRSS maximum during the run
    hwm_mb: float = math.nan  # the kernel's VmHWM (peak RSS since start) at the end
    server_cpu_s: float = math.nan  # user + system CPU of the server during the run
    server_cpu_changes_s: float = math.nan  # the same, during the batch changes only
    load_phase_s: float = math.nan  # until every user had its link open
    wall_s: float = math.nan
    loadavg: tuple[float, float] = (math.nan, math.nan)  # 1-minute load, before / after

    def figures(self) -> dict[str, float | int]:
        c, r3 = self.config, lambda x: round(x, 3)
        runs = self.frames["rerun requests sent"]  # first loads and changes, every user
        reruns = len(self.rerun_s) + self.protocol_reruns  # the changes verified
        return {
            "sessions": c.sessions,
            "browsers": min(c.browsers, c.sessions),
            "rounds_per_session": c.rounds,
            "server_sessions": len(self.session_ids),
            "concurrent_sessions": self.concurrent_sessions,
            "sessions_completed": self.sessions_done,
            "reruns_measured": len(self.rerun_s),
            "protocol_reruns_verified": self.protocol_reruns,
            "round_trips_measured": len(self.server_rerun_s),
            **{k.replace(" ", "_"): v for k, v in sorted(self.frames.items())},
            "states_verified": self.verified,
            "errors": len(self.failures) + len(self.server_errors),
            "checks_waiting_for_late_elements": self.late_elements,
            "checks_seeing_batch_default_first": self.default_flicker,
            "longest_wait_for_late_elements_s": round(self.pending_max_s, 1),
            "rerun_p50_s": r3(quantile(self.rerun_s, 0.50)),
            "rerun_p95_s": r3(quantile(self.rerun_s, 0.95)),
            "rerun_max_s": r3(max(self.rerun_s, default=math.nan)),
            "server_rerun_p50_s": r3(quantile(self.server_rerun_s, 0.50)),
            "server_rerun_p95_s": r3(quantile(self.server_rerun_s, 0.95)),
            "first_load_p50_s": r3(quantile(self.load_s, 0.50)),
            "first_load_p95_s": r3(quantile(self.load_s, 0.95)),
            "server_rss_before_mb": round(self.rss_before_mb, 1),
            "server_peak_rss_mb": round(self.peak_rss_mb, 1),
            "server_vmhwm_mb": round(self.hwm_mb, 1),
            "server_cpu_s": round(self.server_cpu_s, 1),
            "server_cpu_ms_per_run": round(1e3 * self.server_cpu_s / max(1, runs)),
            "server_cpu_ms_per_rerun": round(1e3 * self.server_cpu_changes_s / max(1, reruns)),
            "load_phase_s": round(self.load_phase_s, 1),
            "wall_s": round(self.wall_s, 1),
            "loadavg_before": self.loadavg[0],
            "loadavg_after": self.loadavg[1],
        }

    def text(self) -> str:
        f, c = self.figures(), self.config
        lines = [
            f"load: {f['sessions']} sessions ({f['browsers']} Chromium contexts, the others "
            f"protocol clients) × {f['rounds_per_session']} batch changes "
            f"(pause {c.think_s[0]}-{c.think_s[1]} s) in {f['wall_s']} s wall",
            f"  links opened {c.load_concurrency} at a time, all open after "
            f"{f['load_phase_s']} s; {f['concurrent_sessions']} sessions open at once for the "
            f"changes; {f['server_sessions']} distinct server sessions",
            f"  reruns measured {f['reruns_measured']} (Chromium) and "
            f"{f['protocol_reruns_verified']} (protocol clients), page states verified "
            f"{f['states_verified']}, users completed {f['sessions_completed']}, "
            f"errors {f['errors']}",
            f"  checks that waited: for an element not drawn yet "
            f"{f['checks_waiting_for_late_elements']}, for the batch field to replace its "
            f"default '1' {f['checks_seeing_batch_default_first']} (longest wait "
            f"{f['longest_wait_for_late_elements_s']} s)",
            f"  rerun latency (Chromium, change → numbers drawn, idle): p50 {f['rerun_p50_s']} s, "
            f"p95 {f['rerun_p95_s']} s, max {f['rerun_max_s']} s",
            f"  rerun round trip (websocket, request → script finished, "
            f"{f['round_trips_measured']} measured): "
            f"p50 {f['server_rerun_p50_s']} s, p95 {f['server_rerun_p95_s']} s",
            f"  first load (Chromium): p50 {f['first_load_p50_s']} s, "
            f"p95 {f['first_load_p95_s']} s",
            f"  server memory: RSS {f['server_rss_before_mb']} MB before, peak RSS "
            f"{f['server_peak_rss_mb']} MB (sampled), VmHWM {f['server_vmhwm_mb']} MB",
            f"  server CPU {f['server_cpu_s']} s (~{f['server_cpu_ms_per_run']} ms per script "
            f"run with page loads, ~{f['server_cpu_ms_per_rerun']} ms per rerun during the "
            f"changes); machine load average {f['loadavg_before']} before, "
            f"{f['loadavg_after']} after, {os.cpu_count()} CPUs",
        ]
        lines += [f"  websocket: {dict(sorted(self.frames.items()))}"]
        lines += [f"  FAILURE: {m}" for m in self.failures[:20]]
        lines += [f"  SERVER LOG: {m}" for m in self.server_errors[:10]]
        return "\n".join(lines)
