"""Page rerun benchmark: server-side script time per rerun, per page, via Streamlit's AppTest.

Run: `.venv/bin/python bench/bench_pages.py` (`--repeats N`, `--json`). Each page is run once
with its default scenario to warm caches, then rerun N times; the median and the worst rerun
are reported, with the median CPU time (on a shared machine, what a rerun costs a free core).
A 2,000-point batch sweep is measured too. Target: < 300 ms per rerun.
"""

from __future__ import annotations

import argparse
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--only", default="", help="run the scenarios whose name contains this")
    args = parser.parse_args()
    results = {}
    for name, (page, query) in SCENARIOS.items():
        if (page and not (ROOT / page).exists()) or args.only not in name:
            continue
        results[name] = time_page(page, query, args.repeats)
    for name, (page, query, edit) in COLD.items():
        if (ROOT / page).exists() and args.only in name:
            results[name] = time_page(page, query, args.repeats, edit)
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
