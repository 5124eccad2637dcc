#!/usr/bin/env python3
"""Browser half of the container smoke check (run by ci/container_smoke.sh).

Opens a solve deep link as the FIRST request of a fresh browser on a fresh server and checks
that the team catalogue's accelerator ("Team Chip X1") is shown and a solve ("Latency") is
rendered, with no exception and no warning about the mounted catalogue file.

Usage: smoke_browser.py --url http://127.0.0.1:PORT[/base] [--screenshot out.png]
Exits 0 on success, 1 on a failed check (with the page text printed), 2 on a setup problem.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repo root
from tools.server import CHROMIUM, CHROMIUM_ARGS

DEEP_LINK = "solve?model=ResNet-50&hardware=TeamChip&batch=1&precision=fp16"


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--url", required=True, help="server root, e.g. http://127.0.0.1:8501")
    p.add_argument(
        "--expect",
        action="append",
        default=None,
        help="text that must appear on the page (repeatable; default: Team Chip X1)",
    )
    p.add_argument("--metric", default="Latency", help="label of a metric that must be shown")
    p.add_argument(
        "--catalog-name",
        default="team.toml",
        help="file name of the mounted catalogue; a warning naming it fails the check",
    )
    p.add_argument("--timeout", type=float, default=90.0, help="seconds to wait for the page")
    p.add_argument("--screenshot", default=None, help="write a full-page PNG here")
    return p.parse_args(argv)


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    expect = args.expect or ["Team Chip X1"]
    url = args.url.rstrip("/") + "/" + DEEP_LINK
    try:
        from playwright.sync_api import Error as PlaywrightError
        from playwright.sync_api import sync_playwright
    except ImportError as exc:  # pragma: no cover - setup problem
        print(f"[smoke_browser] playwright is not importable: {exc}", file=sys.stderr)
        return 2

    console: list[str] = []
    failures: list[str] = []
    t0 = time.monotonic()
    with sync_playwright() as pw:
        try:
            browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        except PlaywrightError as exc:
            print(f"[smoke_browser] cannot launch {CHROMIUM}: {exc}", file=sys.stderr)
            return 2
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1800})
            page.on("console", lambda m: console.append(f"{m.type}: {m.text}"))
            print(f"[smoke_browser] first request: GET {url}")
            page.goto(url, wait_until="domcontentloaded", timeout=args.timeout * 1000)

            deadline = time.monotonic() + args.timeout

            def remaining_ms() -> float:  # one shared budget: a failing page fails in time
                return max(1000.0, (deadline - time.monotonic()) * 1000)

            # 1. The team accelerator's display name and the solve's metric appear.
            for text in expect:
                try:
                    page.wait_for_function(
                        "t => document.body && document.body.innerText.includes(t)",
                        arg=text,
                        timeout=remaining_ms(),
                    )
                    print(f"[smoke_browser] found text {text!r}")
                except PlaywrightError:
                    failures.append(f"text {text!r} not shown within {args.timeout:.0f} s")
            label = page.get_by_test_id("stMetricLabel").filter(has_text=args.metric)
            try:
                label.first.wait_for(state="visible", timeout=remaining_ms())
                value = page.get_by_test_id("stMetric").filter(has=label.first).first
                shown = " ".join(value.inner_text().split())
                print(f"[smoke_browser] metric shown: {shown!r}")
            except PlaywrightError:
                failures.append(f"no metric labelled {args.metric!r} within {args.timeout:.0f} s")

            # 2. Once the script is idle: no exception, no warning about the team catalogue.
            try:
                page.get_by_test_id("stStatusWidget").wait_for(state="detached", timeout=30_000)
            except PlaywrightError:
                failures.append("the script was still running after 30 s")
            exceptions = page.get_by_test_id("stException")
            if exceptions.count():
                failures.append("exception on the page: " + exceptions.first.inner_text()[:500])
            alerts = page.locator(
                "[data-testid=stAlertContentWarning], [data-testid=stAlertContentError]"
            )
            for i in range(alerts.count()):
                text = alerts.nth(i).inner_text()
                if args.catalog_name and args.catalog_name in text:
                    failures.append(f"catalogue problem reported: {text[:500]}")

            if args.screenshot:
                page.screenshot(path=args.screenshot, full_page=True)
                print(f"[smoke_browser] screenshot: {args.screenshot}")
            if failures:
                print("[smoke_browser] page text:\n" + page.locator("body").inner_text()[:3000])
        finally:
            browser.close()

    for line in console:
        print(f"[smoke_browser] console {line}"[:300])
    elapsed = time.monotonic() - t0
    if failures:
        for f in failures:
            print(f"[smoke_browser] FAIL: {f}", file=sys.stderr)
        return 1
    print(
        f"[smoke_browser] OK in {elapsed:.1f} s: {', '.join(expect)} and a "
        f"{args.metric!r} metric shown"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
