"""Server memory before, during and after a burst of users: does it return near idle?

Starts `streamlit run app.py` as bench/capacity_server.py does (the image's flags, loopback,
the example team catalogue), then:

1. idle: one light client opens every page once (imports, catalogue, caches warm), leaves,
   and the server's resident memory (VmRSS) is read after a pause;
2. burst: N clients (default 16, bench/capacity_client.py: the browser's own protocol) join at
   once, client i on link i mod the links below (every page's default, and the heavy links of
   issue 18's probe, which a page may refuse as over its budget), each changing one input
   every 0.5-1.5 s for --burst seconds;
   the peak VmRSS is sampled every 0.5 s;
3. after: every client disconnects, and VmRSS is read at fixed times after (Streamlit keeps a
   disconnected session for server.disconnectedSessionTTL seconds, 120; the app ends a lapsed
   one within 30 s more, ui/core/sessions.py; the planner's shared grids go after 60 s
   unused, ui/core/memo.py);
4. the next visitor: one client opens the overview and leaves; VmRSS 5 s later.

Run: `.venv/bin/python bench/memory_burst.py [--users 16] [--burst 60] [--after 150]
[--json FILE]` (about 5 minutes). Prints one line per phase, in MiB.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))

from capacity_client import Session, change_for  # noqa: E402
from capacity_server import rss_mib, start_server  # noqa: E402

PLAN_BIG = (
    "hardware=H100,H200,B200,MI300X,L40S&tp=1,2,4,8&pp=1,2&precisions=fp16,fp8&batches=1..625"
)
EIGHT = "hardware=A100,H100,H200,B200,MI300X,L40S,L4,A10G"
LINKS = (  # (page, query): every page's default, and the heavy links of issue 18's probe
    ("", ""),
    ("solve", ""),
    ("sweep", "batches=1..4096"),
    ("compare", f"{EIGHT}&batches=1..4096"),
    ("decode", "batches=1..4096&contexts=128,256,512,1024,2048,4096,8192,16384"),
    ("plan", PLAN_BIG),
    ("catalogue", ""),
    ("accuracy", ""),
    ("decode", ""),
    ("plan", ""),
)
AFTER = (5, 30, 60, 130, 160, 190)  # seconds after the last client left (TTL 120 s + sweeps)


async def visit(url: str, page: str, query: str, timeout: float) -> Session:
    session = Session(url, page)
    session.query_string = query
    result = await session.open(timeout)
    if result.error:
        raise SystemExit(f"/{page}?{query}: {result.error}")
    return session


async def user(url: str, index: int, until: float, timeout: float) -> tuple[Session, int]:
    page, query = LINKS[index % len(LINKS)]
    session, rng, turns = await visit(url, page, query, timeout), random.Random(index), 0
    while time.monotonic() < until:
        await asyncio.sleep(rng.uniform(0.5, 1.5))
        change, _ = change_for(session.widgets, index, turns)
        await session.run(change, timeout)
        turns += 1
    return session, turns


async def measure(
    users: int, burst_s: float, after: tuple[int, ...], timeout: float, app_dir: Path
) -> dict:
    proc, url = start_server(0, 0, app_dir)
    pid = proc.pid
    try:
        for page, query in LINKS:  # warm every page once, then leave
            await (await visit(url, page, query, timeout)).close()
        await asyncio.sleep(10)
        out = {"rss_idle_mib": rss_mib(pid)}
        until, peak = time.monotonic() + burst_s, out["rss_idle_mib"]
        tasks = [asyncio.create_task(user(url, i, until, timeout)) for i in range(users)]
        while not all(t.done() for t in tasks):
            await asyncio.sleep(0.5)
            peak = max(peak, rss_mib(pid))
        done = [t.result() for t in tasks]
        out |= {"rss_peak_mib": peak, "reruns": sum(n for _, n in done), "users": users}
        await asyncio.gather(*(s.close() for s, _ in done))
        left, waited = time.monotonic(), 0.0
        for t in after:
            await asyncio.sleep(max(0.0, left + t - time.monotonic()))
            out[f"rss_after_{t}s_mib"] = rss_mib(pid)
            waited = t
        out["after_s"] = waited
        # the next visitor: a new session makes Streamlit drop the disconnected sessions whose
        # TTL has passed (they are purged when its session store is next written, not on time)
        await (await visit(url, "", "", timeout)).close()
        await asyncio.sleep(5)
        out["rss_after_next_visitor_mib"] = rss_mib(pid)
        return out
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--users", type=int, default=16)
    p.add_argument("--burst", type=float, default=60.0, help="seconds of changes")
    p.add_argument("--timeout", type=float, default=120.0, help="per rerun")
    p.add_argument("--json", type=Path)
    p.add_argument("--app-dir", type=Path, default=ROOT, help="e.g. a `git archive` snapshot")
    p.add_argument("--env", action="append", default=[], help="NAME=VALUE for the server")
    a = p.parse_args()
    os.environ.update(dict(e.split("=", 1) for e in a.env))
    r = asyncio.run(measure(a.users, a.burst, AFTER, a.timeout, a.app_dir))
    print(f"idle {r['rss_idle_mib']:.0f} MiB · peak with {r['users']} users "
          f"{r['rss_peak_mib']:.0f} MiB ({r['reruns']} reruns in {a.burst:g} s) · after: "
          + ", ".join(f"{t} s {r[f'rss_after_{t}s_mib']:.0f} MiB" for t in AFTER)
          + f" · 5 s after the next visitor {r['rss_after_next_visitor_mib']:.0f} MiB")  # fmt: skip
    if a.json:
        a.json.write_text(json.dumps(r, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
