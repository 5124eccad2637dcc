"""Capacity of one replica: concurrent active users per server process on one core, per page.

For each page (app.py and every pages/*.py, read at run time) this starts a fresh `streamlit
run app.py` with the image's flags and the example team catalogue, pinned to one core, on
127.0.0.1 only. Light clients (bench/capacity_client.py: one WebSocket each, the browser's
protobuf protocol, all in this process, on another core) join in steps (1, 5, 10, 15, ...);
each opens the page with its defaults, then changes one input (the accelerator where the page
has one) after pauses of 0.5-1.5 × the think time (mean 10 s). A step's rerun round trip runs
from sending the change to the server's "script finished", queueing included; the step passes
with p95 under 1 s and no error; one that fails without errors is measured once more over a
window twice as long, which decides. The capacity is the last passing step; the ramp stops at
the first failing one. Per step also: p50/max, the server's peak VmRSS, CPU (cores, s per rerun)
and the load average. Server and client run at nice -10 (--nice): on a shared machine that
gives them most of their core, as a Kubernetes CPU request of one core would.

Bounded: --max-users per page, --hold seconds per step, --timeout for the run; loopback only.
With --mixed, a last run spreads the users over all pages (user i on page i mod n), as a
replica of the Deployment serves them. Run: `.venv/bin/python bench/capacity.py [--pages solve
sweep] [--mixed] [--json FILE]` (about 5 minutes per page). Method and figures: docs/deploy.md.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))

from capacity_client import RunResult, Session, change_for  # noqa: E402
from capacity_server import cpu_s, pin, rss_mib, start_server  # noqa: E402

MIXED = "*"  # the page field of the mixed run: users spread over every page in turn
LEVELS = (1, 5, 10, 15, 20, 25, 30, 40, 50, 60, 80, 100, 120, 160)


@dataclass(frozen=True)
class Config:
    levels: tuple[int, ...] = LEVELS  # users at each step (cumulative: users stay connected)
    think_s: float = 10.0  # mean pause between one user's changes (uniform 0.5-1.5 ×)
    hold_s: float = 30.0  # measuring window per step, after the step's users have joined;
    # a step that fails without errors is measured once more over twice this, which decides
    p95_limit_s: float = 1.0  # a step passes with its rerun p95 below this and no error
    step_timeout_s: float = 60.0  # one rerun or first load; longer counts as an error
    server_core: int = 0
    client_core: int = 1
    nice: int = -10  # priority of the server and the client (negative needs root)


@dataclass(frozen=True)
class Step:
    users: int
    window_s: float
    reruns: int
    errors: int
    p50_s: float
    p95_s: float
    max_s: float
    first_load_p95_s: float
    rss_peak_mib: float
    server_cpu_cores: float  # server CPU seconds / wall seconds over the window
    cpu_s_per_rerun: float
    load_avg_1m: float
    passed: bool


@dataclass
class PageResult:
    page: str
    action: str
    rss_idle_mib: float = 0.0
    steps: list[Step] = field(default_factory=list)

    @property
    def capacity_users(self) -> int:
        return max((s.users for s in self.steps if s.passed), default=0)


def discover_pages(app_dir: Path) -> list[str]:
    """URL paths of the app's pages: "" for app.py, then each pages/*.py by file name."""
    return ["", *sorted(p.stem for p in (app_dir / "pages").glob("*.py") if p.stem != "__init__")]


def p95(values: list[float]) -> float:
    """95th percentile (inclusive method; the largest value for fewer than 2 samples)."""
    if len(values) < 2:
        return max(values, default=float("nan"))
    return statistics.quantiles(values, n=20, method="inclusive")[-1]


@dataclass
class User:
    """One simulated person: a session, its reruns (send time, result) and what is in flight."""

    index: int
    session: Session
    first_load: RunResult
    runs: list[tuple[float, RunResult]] = field(default_factory=list)
    busy_since: float | None = None

    async def loop(self, cfg: Config, rng: random.Random) -> None:
        for turn in range(10**6):
            await asyncio.sleep(rng.uniform(0.5, 1.5) * cfg.think_s)
            change, _ = change_for(self.session.widgets, self.index, turn)
            self.busy_since = time.monotonic()
            result = await self.session.run(change, cfg.step_timeout_s)
            self.runs.append((self.busy_since, result))
            self.busy_since = None


async def join(url: str, pages: tuple, first: int, count: int, cfg: Config) -> list[User]:
    """Open `count` new sessions (at most 4 loading at once), user i on page i mod n."""
    gate = asyncio.Semaphore(4)

    async def one(index: int) -> User:
        async with gate:
            session = Session(url, pages[index % len(pages)])
            return User(index, session, await session.open(cfg.step_timeout_s))

    return list(await asyncio.gather(*(one(first + i) for i in range(count))))


async def measure_step(users: list[User], pid: int, cfg: Config, hold_s: float) -> Step:
    """Hold the window, let reruns started in it finish, and summarise them."""
    cpu0, start, peak = cpu_s(pid), time.monotonic(), rss_mib(pid)
    while time.monotonic() < start + hold_s:
        await asyncio.sleep(0.5)
        peak = max(peak, rss_mib(pid))
    end, cpu1 = time.monotonic(), cpu_s(pid)
    while any(u.busy_since is not None and u.busy_since < end for u in users):
        await asyncio.sleep(0.05)  # a rerun ends by itself within cfg.step_timeout_s
    runs = [r for u in users for t, r in u.runs if start <= t < end]
    seconds = [r.seconds for r in runs]
    errors = sum(bool(r.error) for r in runs) + sum(bool(u.first_load.error) for u in users)
    q95 = p95(seconds)
    return Step(
        users=len(users),
        window_s=hold_s,
        reruns=len(runs),
        errors=errors,
        p50_s=statistics.median(seconds) if seconds else float("nan"),
        p95_s=q95,
        max_s=max(seconds, default=float("nan")),
        first_load_p95_s=p95([u.first_load.seconds for u in users]),
        rss_peak_mib=peak,
        server_cpu_cores=(cpu1 - cpu0) / (end - start),
        cpu_s_per_rerun=(cpu1 - cpu0) / max(1, len(runs)),
        load_avg_1m=os.getloadavg()[0],
        passed=bool(runs) and errors == 0 and q95 < cfg.p95_limit_s,
    )


async def measure_page(pages: tuple, cfg: Config, max_users: int, app_dir: Path) -> PageResult:
    """Ramp users on one fresh server until a step fails or `max_users` is reached."""
    page = pages[0] if len(pages) == 1 else MIXED
    proc, url = start_server(cfg.server_core, cfg.nice, app_dir)
    users: list[User] = []
    tasks: list[asyncio.Task] = []
    try:
        result = PageResult(page, "", rss_idle_mib=rss_mib(proc.pid))
        rng = random.Random(f"capacity:{page}")
        for level in (n for n in cfg.levels if n <= max_users):
            new = await join(
                url=url, pages=pages, first=len(users), count=level - len(users), cfg=cfg
            )
            users += new
            tasks += [asyncio.create_task(u.loop(cfg, rng)) for u in new]
            first = change_for(users[0].session.widgets, 0, 0)[1]
            result.action = "each page's own change" if page == MIXED else first
            await asyncio.sleep(cfg.think_s / 2)  # let the joins' first loads settle
            step = await measure_step(users=users, pid=proc.pid, cfg=cfg, hold_s=cfg.hold_s)
            if not step.passed and step.errors == 0:  # a bad half-minute, or the limit?
                result.steps.append(step)
                step = await measure_step(users=users, pid=proc.pid, cfg=cfg, hold_s=2 * cfg.hold_s)
            result.steps.append(step)
            print(f"  {label(page)}: {step}", file=sys.stderr, flush=True)
            if not step.passed:
                break
        return result
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await asyncio.gather(*(u.session.close() for u in users), return_exceptions=True)
        proc.terminate()
        proc.wait(timeout=20)


def label(page: str) -> str:
    return "all pages, mixed" if page == MIXED else f"/{page}"


def report(results: list[PageResult], cfg: Config) -> str:
    """A markdown table: per page its capacity and the figures of its last passing step."""
    lines = [
        f"Think time {cfg.think_s:g} s (uniform 0.5-1.5 ×), {cfg.hold_s:g} s per step, "
        f"limit p95 < {cfg.p95_limit_s:g} s; one server process on one core (nice {cfg.nice}).",
        "",
        "| Page | User's change | Users (p95 < 1 s) | p50 rerun (s) | p95 rerun (s) | "
        "Next step: users, p95 (s) | RSS at capacity (MiB) | RSS idle (MiB) | "
        "Server CPU at capacity (cores) | CPU s per rerun | Load avg 1 min |",
        "| --- | --- | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in results:
        ok = [s for s in r.steps if s.passed]
        cap = ok[-1] if ok else r.steps[0]
        nxt = r.steps[-1] if not r.steps[-1].passed else None
        after = f"{nxt.users}, {nxt.p95_s:.2f} ({nxt.errors} errors)" if nxt else "not reached"
        lines.append(
            f"| {label(r.page)} | {r.action} | {r.capacity_users} | {cap.p50_s:.3f} | "
            f"{cap.p95_s:.3f} | {after} | {cap.rss_peak_mib:.0f} | {r.rss_idle_mib:.0f} | "
            f"{cap.server_cpu_cores:.2f} | {cap.cpu_s_per_rerun:.3f} | {cap.load_avg_1m:.1f} |"
        )
    return "\n".join(lines)


def main() -> int:
    d = Config()
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--pages", nargs="*", help="URL paths ('' for the entry page); default all")
    p.add_argument("--mixed", action="store_true", help="then users over all pages at once")
    p.add_argument("--max-users", type=int, default=max(LEVELS), help="per page")
    p.add_argument("--think", type=float, default=d.think_s, help="mean seconds between changes")
    p.add_argument("--hold", type=float, default=d.hold_s, help="seconds measured per step")
    p.add_argument("--timeout", type=float, default=3600, help="seconds for the whole run")
    p.add_argument("--json", type=Path, help="also write every step's figures here")
    p.add_argument("--nice", type=int, default=d.nice, help="server and client priority")
    p.add_argument("--app-dir", type=Path, default=ROOT, help="e.g. a `git archive` snapshot")
    a = p.parse_args()
    found = discover_pages(a.app_dir)
    pages = found if a.pages is None else [s.strip("/") for s in a.pages]
    unknown = sorted(set(pages) - set(found))
    if unknown or not 1 <= a.max_users <= 1000 or a.think <= 0 or a.hold <= 0:
        p.error(f"unknown pages {unknown} or out-of-range --max-users/--think/--hold")
    cfg = Config(think_s=a.think, hold_s=a.hold, nice=a.nice)
    pin(cfg.client_core, cfg.nice)

    async def run_all() -> list[PageResult]:
        runs = [(page,) for page in pages] + [tuple(found)] * a.mixed
        return [
            await measure_page(pages=run, cfg=cfg, max_users=a.max_users, app_dir=a.app_dir)
            for run in runs
        ]

    try:
        results = asyncio.run(asyncio.wait_for(run_all(), a.timeout))
    except TimeoutError:
        print(f"stopped: the run took longer than --timeout {a.timeout:g} s", file=sys.stderr)
        return 1
    print(report(results, cfg))
    if a.json:
        rows = [asdict(r) | {"capacity_users": r.capacity_users} for r in results]
        a.json.write_text(json.dumps({"config": asdict(cfg), "pages": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
