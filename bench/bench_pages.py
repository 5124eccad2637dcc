"""Page rerun benchmark: server-side script time per rerun, per page, via Streamlit's AppTest;
and, with --first-chart, the time to a page's first chart in a fresh browser.

Run: `.venv/bin/python bench/bench_pages.py` (`--repeats N`, `--json`). Each page is run once
with its default scenario to warm caches, then rerun N times; the median and the worst rerun
are reported, with the median CPU time (on a shared machine, what a rerun costs a free core).
A 2,000-point batch sweep is measured too. Target: < 300 ms per rerun.

`--first-chart [--repeats N]`: the app's server and a minimal Streamlit page with one Plotly
chart (bench/first_chart_minimal.py, same flags and config) run side by side; each is warmed
once, then, in turns, every page is opened N times in a fresh headless Chromium context and
timed from navigation start to the first `.js-plotly-plot` drawn (a trace in its SVG, seen by
a MutationObserver installed before the page loads). Reported: the median per page and its
ratio to the minimal page's median (target: within 1.3x), and the paired
ratio: each round's page time over that round's minimal time, median and quartiles. Both
servers share the machine, so a busy spell slows both; the pairing keeps it out of the ratio.
With /solve among the pages, each page's paired ratio over /solve's time in the same round too
(`versus_solve`; /load's target: within 1.5x): `--first-chart --pages /solve,/load`. A page
whose address holds `{visit}` gets a new number at every visit (`/load?seed={visit}`: a scenario
no session has asked for yet, so nothing is cached: what a new user's own link costs).
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

# 5 accelerators × 2 precisions × TP 1,2,4,8 × PP 1,2 × batches 1..625 = 50,000 configurations
PLAN_50K = {"hardware": "H100,H200,B200,MI300X,L40S", "tp": "1,2,4,8", "pp": "1,2"}
PLAN_50K |= {"precisions": "fp16,fp8", "batches": "1..625", "ttft_ms": "2000", "tpot_ms": "50"}
SCENARIOS = {
    "overview (app.py)": (None, {}),
    "solve (default)": ("pages/solve.py", {}),
    "sweep (default)": ("pages/sweep.py", {}),
    "sweep (2,000 batches)": ("pages/sweep.py", {"batches": "1..2000"}),
    "compare (default)": ("pages/compare.py", {}),
    "decode (default)": ("pages/decode.py", {}),
    "catalogue (default)": ("pages/catalogue.py", {}),
    "plan (default)": ("pages/plan.py", {}),
    "plan (50,000 configurations)": ("pages/plan.py", PLAN_50K),
}
COLD = {  # a widget edited before every rerun, so the page's cached sweep is recomputed
    "plan (50,000, sweep recomputed)": ("pages/plan.py", PLAN_50K, "plan:input_tokens"),
}


def time_page(
    page: str | None, query: dict[str, str], repeats: int, edit: str | None = None
) -> dict[str, float]:
    """Median and worst rerun; with `edit` (a number widget's key) the widget is raised by one
    before each rerun, so whatever the page caches on its inputs is recomputed."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    if page:
        at.switch_page(page)
    at.query_params.update(query)
    at.run()  # first run: imports, catalogue load, caches
    if at.exception:
        raise RuntimeError(f"{page}: {at.exception[0].message}")
    times, cpus = [], []
    for _ in range(repeats):
        if edit:
            widget = at.number_input(key=edit)
            widget.set_value(widget.value + 1)  # a new value each time: never a cache hit
        start, cpu = time.perf_counter(), time.process_time()
        at.run()
        times.append(time.perf_counter() - start)
        cpus.append(time.process_time() - cpu)  # all threads: what the rerun costs a free core
    return {
        "median_ms": statistics.median(times) * 1e3,
        "max_ms": max(times) * 1e3,
        "median_cpu_ms": statistics.median(cpus) * 1e3,
    }


FIRST_CHART_PAGES = ("/solve", "/decode", "/plan", "/load")
VERSUS = "/solve"  # the page every other is paired with too (`versus_solve`)
FIRST_CHART_JS = """
window.__firstChart = null;
new MutationObserver((_, observer) => {
  if (document.querySelector(".js-plotly-plot .main-svg .trace")) {  // a trace drawn
    window.__firstChart = performance.now();
    observer.disconnect();
  }
}).observe(document, {subtree: true, childList: true});
"""


def first_chart_ms(browser, url: str, timeout_ms: int = 120_000) -> float:
    """Milliseconds from navigation start to the first Plotly chart, in a fresh context."""
    context = browser.new_context(viewport={"width": 1440, "height": 1000})
    context.add_init_script(FIRST_CHART_JS)
    page = context.new_page()
    page.goto(url)
    page.wait_for_function("() => window.__firstChart !== null", timeout=timeout_ms)
    elapsed = page.evaluate("window.__firstChart")
    context.close()
    return float(elapsed)


def first_chart(repeats: int, pages: tuple[str, ...] = FIRST_CHART_PAGES) -> dict:
    """Median time to the first chart per page and its ratio to the minimal page's."""
    from playwright.sync_api import sync_playwright

    from tools.server import CHROMIUM, CHROMIUM_ARGS, start_server, stop_server

    app, app_url = start_server()
    minimal, minimal_url = start_server(script="bench/first_chart_minimal.py")
    targets = {"minimal (one Plotly chart)": minimal_url + "/"}
    targets |= {path: app_url + path for path in pages}
    times: dict[str, list[float]] = {name: [] for name in targets}
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
            visits = itertools.count()  # `{visit}` in an address: a new scenario each time
            for url in targets.values():  # warm: imports, catalogue, caches
                first_chart_ms(browser, url.format(visit=next(visits)))
            for _ in range(repeats):  # in turns, so a busy spell slows every page alike
                for name, url in targets.items():
                    times[name].append(first_chart_ms(browser, url.format(visit=next(visits))))
            browser.close()
    finally:
        stop_server(app)
        stop_server(minimal)
    return ratios(times, "minimal (one Plotly chart)")


def ratios(times: dict[str, list[float]], base_name: str) -> dict:
    """Per page: the median time, its ratio to the base page's median, and the paired view: in
    each round, the page's time over the base page's time in that round (a busy spell slows
    both), with the median and quartiles of those per-round ratios."""
    base = statistics.median(times[base_name])
    out = {}
    for name, t in times.items():
        out[name] = {"median_ms": statistics.median(t), "ratio": statistics.median(t) / base}
        out[name] |= paired_ratio(t, times[base_name]) | {"runs": t}
        if VERSUS in times and name != VERSUS:
            out[name] |= {"versus_solve": paired_ratio(t, times[VERSUS])}
    return out


def paired_ratio(times: list[float], base: list[float]) -> dict:
    """Each round's time over the base page's time in that round: median and quartiles."""
    paired = [x / b for x, b in zip(times, base, strict=True)]
    q1, _, q3 = statistics.quantiles(paired, n=4) if len(paired) > 1 else (paired * 3)
    return {"paired_ratio": statistics.median(paired), "paired_iqr": [q1, q3]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--only", default="", help="run the scenarios whose name contains this")
    parser.add_argument("--first-chart", action="store_true", help="time to the first chart")
    parser.add_argument("--pages", default=",".join(FIRST_CHART_PAGES), help="with --first-chart")
    args = parser.parse_args()
    if args.first_chart:
        results = first_chart(args.repeats, tuple(args.pages.split(",")))
        if args.json:
            print(json.dumps(results, indent=2))
            return
        for name, r in results.items():
            runs = ", ".join(f"{t / 1e3:.2f}" for t in r["runs"])
            median, ratio = r["median_ms"] / 1e3, r["ratio"]
            paired, (q1, q3) = r["paired_ratio"], r["paired_iqr"]
            versus = r.get("versus_solve")
            over = f"  over {VERSUS} {versus['paired_ratio']:4.2f}x" if versus else ""
            print(
                f"{name:<28} median {median:5.2f} s  {ratio:4.2f}x  "
                f"paired {paired:4.2f}x [{q1:4.2f}-{q3:4.2f}]{over}  ({runs} s)"
            )
        return
    results = {}
    for name, (page, query) in SCENARIOS.items():
        if (page and not (ROOT / page).exists()) or args.only not in name:
            continue
        results[name] = time_page(page, query, args.repeats)
    for name, (page, query, edit) in COLD.items():
        if (ROOT / page).exists() and args.only in name:
            results[name] = time_page(page=page, query=query, repeats=args.repeats, edit=edit)
    if args.json:
        print(json.dumps(results, indent=2))
        return
    for name, r in results.items():
        print(
            f"{name:<32} median {r['median_ms']:7.1f} ms   worst {r['max_ms']:7.1f} ms   "
            f"CPU {r['median_cpu_ms']:7.1f} ms"
        )


if __name__ == "__main__":
    main()
