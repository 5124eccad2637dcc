"""Server memory before, during and after a burst of users: does it return near idle?

Starts `streamlit run app.py` as bench/capacity_server.py does (the image's flags, loopback,
the example team catalogue), then:

1. idle: one light client opens every page once at its defaults (imports, catalogue, caches
   warm), leaves, and the server's resident memory (VmRSS) is read after a pause;
2. burst: N clients (default 16, bench/capacity_client.py: the browser's own protocol) join at
   once, client i on link i mod the links below (every page's default, the heavy links of
   bench/probe.py, which a page may refuse as over its budget, and three heavy /train and three
   heavy /load links within their pages' budgets: HEAVY_TRAIN, HEAVY_LOAD), each changing one
   input every 0.5-1.5 s for --burst seconds; the peak VmRSS is sampled every 0.5 s; a heavy
   link the page refused (an error naming its budget) fails the run;
3. after: every client disconnects, and VmRSS is read at fixed times after (Streamlit keeps a
   disconnected session for server.disconnectedSessionTTL seconds, 120; the app ends a lapsed
   one within 30 s more, ui/runtime/sessions.py; the planner's grids, /train's searches and
   /load's simulations are shared by every session and go after 60 s unused,
   ui/runtime/memo.py);
4. the next visitor: one client opens the overview and leaves; VmRSS 5 s later.

Run: `.venv/bin/python bench/memory_burst.py [--users 16] [--burst 60] [--json FILE]` (about 6
minutes). Prints one line per phase, in MiB; --json writes the run (the links included).
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
RESULTS = Path(__file__).resolve().parent / "memory_burst_results.json"
sys.path.insert(0, str(Path(__file__).resolve().parent))

from capacity_client import Session, change_for  # noqa: E402
from capacity_server import rss_mib, start_server  # noqa: E402
from streamlit.proto.Alert_pb2 import Alert  # noqa: E402

PLAN_BIG = (
    "hardware=H100,H200,B200,MI300X,L40S&tp=1,2,4,8&pp=1,2&precisions=fp16,fp8&batches=1..625"
)
EIGHT = "hardware=A100,H100,H200,B200,MI300X,L40S,L4,A10G"
# Three heavy /train searches within the page's budget of 200,000 configurations (search +
# scaling curves, ui/core/budget.py): 23,040 configurations x (1 + 7 GPU counts) = 184,320 for
# the first two; 41,472 x (1 + 1) = 82,944 for the third, whose search frame is the largest
# (41,472 rows kept, every rejected one listed).
SEARCH = "tp=1,2,4,8&cp=1,2,4&vp=1,2,3,4&zero=0,1,2,3&rejected=on"
HEAVY_TRAIN = (
    (
        "train",
        f"model=Llama-3.1-70B&gpus=1024&global_batch_size=2048&pp=1,2,4,8,16&"
        f"micro_batch_size=1..8&{SEARCH}",
    ),
    ("train", f"model=Llama-3.1-8B&gpus=512&pp=1,2,4,8&micro_batch_size=1..10&{SEARCH}"),
    (
        "train",
        "model=Llama-3.1-405B&gpus=2048&global_batch_size=2048&tp=1,2,4,8,16,32&"
        "pp=1,2,4,8,16,32&cp=1,2,4,8&vp=1,2,3,4&micro_batch_size=1..6&zero=0,1,2,3&"
        "gpus_curve=2048&rejected=on",
    ),
)
# Three heavy /load links within the page's budget of 1,000,000 simulated events (ui/load/run.py
# `events`: the run, six check rates and the max-rate search with its confirmation runs):
# 719,146, 730,126 and 691,145 (with the check runs at 2,000 requests).
TUTORIAL = "tp=1&profile=tutorial"
HEAVY_LOAD = (
    (
        "load",
        f"model=Llama-3.1-8B&hardware=H100&{TUTORIAL}&input_tokens=512&"
        "output_tokens=256&requests=20000&rate=20",
    ),
    (
        "load",
        "model=Llama-3.1-70B&hardware=H100&tp=4&profile=tutorial&input_tokens=1024&"
        "output_tokens=128&requests=15000&rate=5",
    ),
    (
        "load",
        f"model=Llama-3.1-8B&hardware=A100&{TUTORIAL}&mode=max&input_tokens=256&"
        "output_tokens=64&requests=30000",
    ),
)
PAGES = ("", "solve", "sweep", "compare", "decode", "plan", "catalogue", "accuracy", "train")
PAGES += ("load",)  # each opened once at its defaults before idle is read
LINKS = (  # (page, query): every page's default, the heavy links of bench/probe.py, and these
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
    *HEAVY_TRAIN,
    *HEAVY_LOAD,
)
REFUSED = "budget"  # a page's refusal names its budget (ui/core/budget.py)
AFTER = (5, 30, 60, 130, 160, 190)  # seconds after the last client left (TTL 120 s + sweeps)


class Visitor(Session):
    """A client session that also reads the page's error messages (a refusal among them)."""

    @property
    def errors(self) -> list[str]:
        """The error messages its last run drew."""
        return [
            e.proto.body
            for e in self.elements
            if e.kind == "alert" and e.proto.format == Alert.ERROR
        ]


async def visit(url: str, page: str, query: str, timeout: float) -> Visitor:
    """A client on /page?query after its first run; SystemExit if that run failed, or if a
    heavy link was refused as over its page's budget (the burst would not be heavy)."""
    session = Visitor(url, page, query)
    result = await session.open(timeout)
    if result.error:
        raise SystemExit(f"/{page}?{query}: {result.error}")
    refused = [e for e in session.errors if REFUSED in e]
    if (page, query) in (*HEAVY_TRAIN, *HEAVY_LOAD) and refused:
        raise SystemExit(f"/{page}?{query} was refused: {refused[0][:300]}")
    return session


async def user(url: str, index: int, until: float, timeout: float) -> tuple[Visitor, int, int]:
    """One client's burst: (its session, the reruns it sent, how many of them failed)."""
    page, query = LINKS[index % len(LINKS)]
    session, rng, turns, failed = (
        await visit(url=url, page=page, query=query, timeout=timeout),
        random.Random(index),
        0,
        0,
    )
    while time.monotonic() < until:
        await asyncio.sleep(rng.uniform(0.5, 1.5))
        change, _ = change_for(session.widgets, index, turns)
        failed += bool((await session.run(change, timeout)).error)
        turns += 1
    return session, turns, failed


async def after_burst(pid: int, after: tuple[int, ...], url: str, timeout: float) -> dict:
    """VmRSS at each of `after` seconds once every client has gone, then 5 s after a next
    visitor (a new session makes Streamlit drop the disconnected sessions whose TTL has
    passed: they are purged when its session store is next written, not on time)."""
    out, left = {}, time.monotonic()
    for t in after:
        await asyncio.sleep(max(0.0, left + t - time.monotonic()))
        out[f"rss_after_{t}s_mib"] = rss_mib(pid)
    out["after_s"] = after[-1]
    await (await visit(url=url, page="", query="", timeout=timeout)).close()
    await asyncio.sleep(5)
    return out | {"rss_after_next_visitor_mib": rss_mib(pid)}


async def measure(
    users: int, burst_s: float, after: tuple[int, ...], timeout: float, app_dir: Path
) -> dict:
    proc, url = start_server(0, 0, app_dir)
    pid = proc.pid
    try:
        for page in PAGES:  # warm every page once at its defaults, then leave
            await (await visit(url=url, page=page, query="", timeout=timeout)).close()
        await asyncio.sleep(10)
        out = {"rss_idle_mib": rss_mib(pid)}
        until, peak = time.monotonic() + burst_s, out["rss_idle_mib"]
        tasks = [
            asyncio.create_task(user(url=url, index=i, until=until, timeout=timeout))
            for i in range(users)
        ]
        while not all(t.done() for t in tasks):
            await asyncio.sleep(0.5)
            peak = max(peak, rss_mib(pid))
        done = [t.result() for t in tasks]
        out |= {"rss_peak_mib": peak, "reruns": sum(n for _, n, _ in done), "users": users}
        out["failed_reruns"] = sum(f for _, _, f in done)
        await asyncio.gather(*(s.close() for s, _, _ in done))
        return out | await after_burst(pid=pid, after=after, url=url, timeout=timeout)
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def record(path: Path, state: str, r: dict, burst_s: float) -> None:
    """Append the run to the results file's "runs" (MiB, rounded), with the links it used."""
    results = json.loads(path.read_text())
    figures = {"idle": r["rss_idle_mib"], "peak": r["rss_peak_mib"]}
    figures |= {f"after_{t}s": r[f"rss_after_{t}s_mib"] for t in AFTER}
    figures["after_next_visitor_5s"] = r["rss_after_next_visitor_mib"]
    run = {"state": state, "users": r["users"], "burst_s": burst_s}
    run |= {k: round(v) for k, v in figures.items()}
    run |= {"reruns": r["reruns"], "failed_reruns": r["failed_reruns"]}
    run["load_average_1min"] = round(os.getloadavg()[0], 1)
    results["runs"].append(run)
    results["links"] = [f"/{page}?{query}" for page, query in LINKS]
    path.write_text(json.dumps(results, indent=1, ensure_ascii=False) + "\n")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--users", type=int, default=16)
    p.add_argument("--burst", type=float, default=60.0, help="seconds of changes")
    p.add_argument("--timeout", type=float, default=300.0, help="per rerun")
    p.add_argument("--json", type=Path)
    p.add_argument("--record", metavar="STATE", help=f"append the run to {RESULTS.name}")
    p.add_argument("--app-dir", type=Path, default=ROOT, help="e.g. a `git archive` snapshot")
    p.add_argument("--env", action="append", default=[], help="NAME=VALUE for the server")
    a = p.parse_args()
    os.environ.update(dict(e.split("=", 1) for e in a.env))
    r = asyncio.run(
        measure(users=a.users, burst_s=a.burst, after=AFTER, timeout=a.timeout, app_dir=a.app_dir)
    )
    print(
        f"idle {r['rss_idle_mib']:.0f} MiB · peak with {r['users']} users "
        f"{r['rss_peak_mib']:.0f} MiB ({r['reruns']} reruns in {a.burst:g} s, "
        f"{r['failed_reruns']} failed) · after: "
        + ", ".join(f"{t} s {r[f'rss_after_{t}s_mib']:.0f} MiB" for t in AFTER)
        + f" · 5 s after the next visitor {r['rss_after_next_visitor_mib']:.0f} MiB"
    )
    if a.json:
        a.json.write_text(json.dumps(r, indent=1))
    if a.record:
        record(path=RESULTS, state=a.record, r=r, burst_s=a.burst)
    return 0


if __name__ == "__main__":
    sys.exit(main())
