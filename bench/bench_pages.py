"""Page rerun benchmark: server-side script time per rerun, per page, via Streamlit's AppTest.

Run: `.venv/bin/python bench/bench_pages.py` (`--repeats N`, `--json`). Each page is run once
with its default scenario to warm caches, then rerun N times; the median and the worst rerun
are reported. A 2,000-point batch sweep is measured too. Target: < 300 ms per rerun.
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

SCENARIOS = {
    "overview (app.py)": (None, {}),
    "solve (default)": ("pages/solve.py", {}),
    "sweep (default)": ("pages/sweep.py", {}),
    "sweep (2,000 batches)": ("pages/sweep.py", {"batches": "1..2000"}),
    "compare (default)": ("pages/compare.py", {}),
    "decode (default)": ("pages/decode.py", {}),
    "catalogue (default)": ("pages/catalogue.py", {}),
}


def time_page(page: str | None, query: dict[str, str], repeats: int) -> dict[str, float]:
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    if page:
        at.switch_page(page)
    at.query_params.update(query)
    at.run()  # first run: imports, catalogue load, caches
    if at.exception:
        raise RuntimeError(f"{page}: {at.exception[0].message}")
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        at.run()
        times.append(time.perf_counter() - start)
    return {"median_ms": statistics.median(times) * 1e3, "max_ms": max(times) * 1e3}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    results = {}
    for name, (page, query) in SCENARIOS.items():
        if page and not (ROOT / page).exists():
            continue
        results[name] = time_page(page, query, args.repeats)
    if args.json:
        print(json.dumps(results, indent=2))
        return
    for name, r in results.items():
        print(f"{name:<24} median {r['median_ms']:7.1f} ms   worst {r['max_ms']:7.1f} ms")


if __name__ == "__main__":
    main()
