"""Side-by-side benchmark: `engine.solve` by ids against mlsysim 0.1.1's `Engine.solve`.

Both solve the reference case (ResNet-50 on an A100, batch 8, fp16, efficiency 0.5; the same
tutorial model, so the latencies must agree) in one process, in interleaved rounds, so a busy
machine slows both alike. Prints µs per call for each, and the ratio (target: >= 100×).

Run: `.venv/bin/pip install -r bench/requirements.txt` once, then
`.venv/bin/python bench/bench_mlsysim.py` (`--rounds N`, `--json`).
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

BATCH = 8


def per_call_s(fn, calls: int) -> float:
    """Mean wall time of one call over `calls` calls."""
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - start) / calls


def contenders():
    """(ours, theirs): zero-argument callables solving the same scenario."""
    import mlsysim

    import engine

    model, hardware = mlsysim.Models.ResNet50, mlsysim.Hardware.A100

    def ours():
        return engine.solve(model="ResNet-50", hardware="A100", batch_size=BATCH, precision="fp16")

    def theirs():
        return mlsysim.Engine.solve(model, hardware, batch_size=BATCH, precision="fp16")

    return ours, theirs


def check_agreement(ours, theirs) -> float:
    """Both predict the same latency (the same tutorial model); returns it in ms."""
    mine = ours().latency_s * 1e3
    other = theirs().latency.m_as("millisecond")
    if abs(mine - other) > 1e-6 * other:
        raise SystemExit(f"latencies differ: engine {mine:.6g} ms, mlsysim {other:.6g} ms")
    return mine


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7, help="interleaved rounds (median)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    try:
        ours, theirs = contenders()
    except ImportError:
        raise SystemExit(
            "mlsysim is missing: .venv/bin/pip install -r bench/requirements.txt"
        ) from None
    latency_ms = check_agreement(ours, theirs)
    for fn in (ours, theirs):  # warm caches (catalogue, pint registry)
        per_call_s(fn, 50)
    ours_s, theirs_s = [], []
    for _ in range(args.rounds):
        ours_s.append(per_call_s(ours, 5_000))
        theirs_s.append(per_call_s(theirs, 100))
    mine, other = statistics.median(ours_s), statistics.median(theirs_s)
    import mlsysim

    results = {
        "scenario": f"ResNet-50 / A100 / batch {BATCH} / fp16",
        "latency_ms": latency_ms,
        "engine_solve_us": mine * 1e6,
        "mlsysim_version": getattr(mlsysim, "__version__", "0.1.1"),
        "mlsysim_solve_us": other * 1e6,
        "ratio": other / mine,
        "rounds": args.rounds,
    }
    if args.json:
        print(json.dumps(results, indent=2))
        return
    print(f"scenario              {results['scenario']} (latency {latency_ms:.4g} ms, both)")
    print(f"engine.solve (ids)    {results['engine_solve_us']:9.1f} µs per call")
    print(f"mlsysim Engine.solve  {results['mlsysim_solve_us']:9.1f} µs per call")
    print(f"ratio                 {results['ratio']:9.0f}×  (target >= 100×)")


if __name__ == "__main__":
    main()
