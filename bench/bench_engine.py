"""Engine benchmark: import time, scalar solves per second, sweep rows per second.

Run: `.venv/bin/python bench/bench_engine.py` (add `--json` for machine-readable output).
Targets on the 2-core reference machine: `import engine` < 0.5 s, a scalar solve
< 50 µs, a 100,000-scenario sweep < 100 ms. Each figure is the median of several repeats.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def median_time(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def import_time_s() -> float:
    """Wall time of `import engine` in a fresh interpreter (median of 5)."""
    code = "import time; t = time.perf_counter(); import engine; print(time.perf_counter() - t)"
    runs = [
        float(
            subprocess.run(
                [sys.executable, "-c", code], cwd=ROOT, check=True, capture_output=True, text=True
            ).stdout
        )
        for _ in range(5)
    ]
    return statistics.median(runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()

    import engine
    from engine.roofline.solve import solve_specs

    cat = engine.default_catalog()
    model, hw = cat.find_model("ResNet-50"), cat.find_hardware("A100")
    n = 20_000
    by_spec = (
        median_time(
            lambda: [
                solve_specs(model=model, hw=hw, batch_size=8, precision="fp16") for _ in range(n)
            ],
            5,
        )
        / n
    )
    by_id = median_time(lambda: [engine.solve("ResNet-50", "A100", 8) for _ in range(n)], 5) / n

    models = list(cat.models)[:10]
    hardware = list(cat.hardware)[:10]
    batches = list(range(1, 251))
    precisions = ["fp16", "fp8", "int8", "fp32"]
    rows = len(models) * len(hardware) * len(batches) * len(precisions)  # 100,000
    sweep_s = median_time(
        lambda: engine.sweep(
            models=models, hardware=hardware, batch_sizes=batches, precisions=precisions
        ),
        7,
    )
    big = list(range(1, 1_000_001))
    sweep_1m_s = median_time(lambda: engine.sweep("ResNet-50", "A100", big), 3)

    results = {
        "import_engine_s": import_time_s(),
        "scalar_solve_us_specs": by_spec * 1e6,
        "scalar_solve_us_ids": by_id * 1e6,
        "scalar_solves_per_s": 1 / by_id,
        "sweep_rows": rows,
        "sweep_ms": sweep_s * 1e3,
        "sweep_rows_per_s": rows / sweep_s,
        "sweep_1m_rows_ms": sweep_1m_s * 1e3,
    }
    if args.json:
        print(json.dumps(results, indent=2))
        return
    print(f"import engine              {results['import_engine_s'] * 1e3:8.1f} ms  (target < 500)")
    print(f"scalar solve (specs)       {results['scalar_solve_us_specs']:8.1f} µs  (target < 50)")
    print(
        f"scalar solve (ids)         {results['scalar_solve_us_ids']:8.1f} µs  "
        f"({results['scalar_solves_per_s']:,.0f} solves/s)"
    )
    print(
        f"sweep {rows:,} rows        {results['sweep_ms']:8.1f} ms  (target < 100; "
        f"{results['sweep_rows_per_s']:,.0f} rows/s)"
    )
    print(f"sweep 1,000,000 rows       {results['sweep_1m_rows_ms']:8.1f} ms")


if __name__ == "__main__":
    main()
