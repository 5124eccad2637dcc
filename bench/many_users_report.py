"""Many-users load report: the load of tests/test_many_users.py (tools/many_users/) with more users,
browsers, rounds or pauses.

Starts its own `streamlit run app.py` on a free loopback port and opens N sessions on different
share links of the single-solve page: `--browsers` of them headless Chromium contexts (Debian's
/usr/bin/chromium), the others protocol clients (tools/tab.py: the browser's websocket
protocol, no drawing). It changes each user's batch size R times, checks every page shows its
own numbers, and prints the figures: Chromium rerun latency p50/p95, websocket round trip,
first-load time, the server's peak memory (VmHWM / VmRSS) and CPU.

Run: `.venv/bin/python bench/many_users_report.py --sessions 30 --rounds 6` (`--json` for machine-
readable output; `--browsers 20` for the all-Chromium load). Exit status 1 if any page showed
something else than its own scenario or an error. On the 2-core reference machine (shared with
other work), 20 Chromium users × 3 changes took 3.5-5.5 minutes, most of it the browsers drawing
pages, and 4 Chromium users among 20 took 35 s; more browsers scale that about linearly.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tools.many_users.config import ManyUsersConfig  # noqa: E402
from tools.many_users.run import run_many_users  # noqa: E402


def main() -> int:
    d = ManyUsersConfig()
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sessions", type=int, default=d.sessions, help="simulated users")
    p.add_argument(
        "--browsers",
        type=int,
        default=d.browsers,
        help="users drawn in Chromium (the others are protocol clients)",
    )
    p.add_argument("--rounds", type=int, default=d.rounds, help="batch changes per user")
    p.add_argument(
        "--load-concurrency", type=int, default=d.load_concurrency, help="links opened at once"
    )
    p.add_argument(
        "--think",
        type=float,
        nargs=2,
        default=d.think_s,
        metavar=("MIN", "MAX"),
        help="a user's pause before each change, seconds (uniform)",
    )
    p.add_argument("--step-timeout", type=float, default=d.step_timeout_s, help="seconds")
    p.add_argument("--run-timeout", type=float, default=None, help="seconds (default: scaled)")
    p.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    a = p.parse_args()
    if a.sessions < 1 or a.rounds < 0 or a.load_concurrency < 1 or a.browsers < 0:
        p.error("--sessions and --load-concurrency must be ≥ 1, --rounds and --browsers ≥ 0")
    scale = (a.sessions / d.sessions) * (1 + a.rounds) / (1 + d.rounds)
    config = replace(
        d,
        sessions=a.sessions,
        browsers=a.browsers,
        rounds=a.rounds,
        load_concurrency=a.load_concurrency,
        think_s=tuple(a.think),
        step_timeout_s=a.step_timeout,
        run_timeout_s=a.run_timeout or max(d.run_timeout_s, d.run_timeout_s * scale),
    )
    report = run_many_users(config)
    if a.json:
        out = report.figures() | {"failures": report.failures, "server_log": report.server_errors}
        print(json.dumps(out, indent=2))
    else:
        print(report.text())
    return 1 if report.failures or report.server_errors else 0


if __name__ == "__main__":
    sys.exit(main())
