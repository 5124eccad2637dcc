"""Run the many-users load: a dedicated server, its users (Chromium contexts and protocol clients),
the report's figures."""

from __future__ import annotations

import asyncio
import os
import threading
import time

from tools.many_users.client import ProtocolUser
from tools.many_users.config import ManyUsersConfig, Report, scenarios
from tools.many_users.proc import MemorySampler, StderrDrain, proc_cpu_s, proc_status_mb
from tools.many_users.user import User
from tools.server import CHROMIUM, CHROMIUM_ARGS, start_server, stop_server


async def _drive(
    base_url: str,
    server_pid: int,
    users: list[User | ProtocolUser],
    config: ManyUsersConfig,
    report: Report,
) -> None:
    """Phase 1: the users open their links, `load_concurrency` at a time (people arriving).
    Phase 2: with every session open, all users change their batch `rounds` times at once."""
    from playwright.async_api import async_playwright

    gate = asyncio.Semaphore(config.load_concurrency)

    async def arrive(user: User) -> None:
        async with gate:
            await user.open(browser, base_url)

    async def both_phases() -> None:
        await asyncio.gather(*(arrive(u) for u in users))
        report.concurrent_sessions = sum(u.ok for u in users)
        report.load_phase_s = time.perf_counter() - start
        cpu = proc_cpu_s(server_pid)
        await asyncio.gather(*(u.change_batches() for u in users))
        report.server_cpu_changes_s = proc_cpu_s(server_pid) - cpu

    async with async_playwright() as pw:
        browser = None
        if any(isinstance(u, User) for u in users):
            browser = await pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        start = time.perf_counter()
        try:
            await asyncio.wait_for(both_phases(), timeout=config.run_timeout_s)
        except TimeoutError:
            report.failures.append(f"the load did not finish within {config.run_timeout_s} s")
        finally:
            await asyncio.gather(*(u.close() for u in users))
            if browser is not None:
                await browser.close()


def run_many_users(config: ManyUsersConfig | None = None) -> Report:
    """Start a dedicated server, run the users against it, stop it; returns the figures."""
    config = config or ManyUsersConfig()
    report = Report(config)
    users = [
        (User if config.in_browser(sc.index) else ProtocolUser)(sc, config, report)
        for sc in scenarios(config.sessions, config.rounds)
    ]
    proc, url = start_server()
    drain = StderrDrain(proc.stderr)
    drain.start()
    sampler = MemorySampler(proc.pid)
    try:
        report.rss_before_mb = proc_status_mb(proc.pid)["VmRSS"]
        cpu_before, load_before = proc_cpu_s(proc.pid), os.getloadavg()[0]
        sampler.start()
        start = time.perf_counter()
        # Its own thread and event loop: independent of the sync Playwright of other tests.
        worker = threading.Thread(
            target=asyncio.run,
            args=(
                _drive(
                    base_url=url, server_pid=proc.pid, users=users, config=config, report=report
                ),
            ),
            daemon=True,
        )
        worker.start()
        worker.join(config.run_timeout_s + 60)
        if worker.is_alive():
            report.failures.append("the browser driver did not stop (hard limit)")
        report.wall_s = time.perf_counter() - start
        sampler.stop()
        mem = proc_status_mb(proc.pid)
        report.hwm_mb = mem["VmHWM"]
        report.peak_rss_mb = max(sampler.peak, mem["VmRSS"])
        report.server_cpu_s = proc_cpu_s(proc.pid) - cpu_before
        report.loadavg = (round(load_before, 1), round(os.getloadavg()[0], 1))
    finally:
        sampler.stop()
        stop_server(proc)
        drain.join(timeout=5)
        report.server_errors = list(drain.lines)
    return report
