"""Calibration: the fit recovers known parameters, stays in bounds, is deterministic.

The first tests use a toy predictor (defined here, for the tests only) whose true parameters
are known, so the fit has a right answer; the last ones refit the shipped profile.
"""

from pathlib import Path

import numpy as np
import pytest

from engine.accuracy.calibrate import FIT_BOUNDS, calibrate, fit
from engine.accuracy.measurements import Measurement, ape_summary, read_measurements
from engine.assumptions import Assumptions
from engine.catalog.profiles import get_profile, profile_from_toml, profile_to_toml

ROOT = Path(__file__).resolve().parent.parent
SHIPPED = ROOT / "data" / "measurements" / "trtllm-v0.6.1.csv"


def toy_seconds(m: Measurement, a: Assumptions) -> float:
    """A toy request time: GEMM + attention + memory + per-layer overhead + link terms."""
    gemm = 2e9 * m.batch_size * (m.input_tokens + m.output_tokens) / (1e15 * a.efficiency)
    eta_attention = a.attention_efficiency or a.efficiency  # None: the GEMM figure
    attention = 1e6 * m.batch_size * m.input_tokens**2 / (1e15 * eta_attention)
    memory = 1e9 * m.output_tokens * (1 + m.batch_size / 16) / (1e12 * a.bandwidth_efficiency)
    overhead = 32 * m.output_tokens * a.layer_overhead_s
    link = (m.tp - 1) * 1e7 * m.batch_size * m.output_tokens / (1e11 * a.link_efficiency)
    hops = 2 * (m.tp - 1) * 32 * m.output_tokens * (a.link_latency_s or 0.0)  # None: no link
    return gemm + attention + memory + overhead + link + hops


def toy_predictor(rows, a):
    values = []
    for m in rows:
        t = toy_seconds(m, a)
        per_gpu = m.batch_size * m.output_tokens / t / m.tp
        values.append(t * 1e3 if m.metric == "ttft_ms" else per_gpu)
    return np.array(values)


TRUTH = Assumptions(
    efficiency=0.62,
    attention_efficiency=0.35,
    bandwidth_efficiency=0.8,
    layer_overhead_s=12e-6,  # within the cited bound of 15 µs (OVERHEAD_BOUNDS)
    link_efficiency=0.55,
    link_latency_s=3e-6,
)


def synthetic_rows() -> list[Measurement]:
    rows = []
    grid = [(b, i, o, tp) for b in (1, 64) for i in (128, 4096) for o in (1, 512) for tp in (1, 4)]
    for n, (b, i, o, tp) in enumerate(grid, start=1):
        metric = "ttft_ms" if o == 1 else "output_tokens_per_s_per_gpu"
        m = Measurement(
            row=n,
            file="toy.csv",
            source="https://example.org",
            engine="toy",
            hardware="H100",
            tp=tp,
            pp=1,
            model="Toy",
            precision="fp16",
            kv_precision="fp16",
            batch_size=b,
            input_tokens=i,
            output_tokens=o,
            metric=metric,
            value=1.0,
        )
        value = toy_predictor([m], TRUTH)[0]
        rows.append(Measurement(**(m.as_dict() | {"value": float(value)})))
    return rows


def test_fit_recovers_known_parameters():
    profile = calibrate(synthetic_rows(), "tutorial", name="toy", predictor=toy_predictor)
    got = profile.values()
    assert got["efficiency"] == pytest.approx(0.62, rel=1e-4)
    assert got["attention_efficiency"] == pytest.approx(0.35, rel=1e-4)
    assert got["bandwidth_efficiency"] == pytest.approx(0.8, rel=1e-4)
    assert got["layer_overhead_us"] == pytest.approx(12.0, rel=1e-4)
    assert got["link_efficiency"] == pytest.approx(0.55, rel=1e-4)
    assert got["link_latency_us"] == pytest.approx(3.0, rel=1e-3)
    assert profile.residuals["mape_pct"] < 0.01
    assert profile.rows == 16 and profile.fitted_on == ("toy.csv",)


def test_tutorial_start_is_off_and_the_fit_improves_it():
    rows = synthetic_rows()
    start = toy_predictor(rows, get_profile("tutorial").assumptions)
    before = ape_summary(start / np.array([m.value for m in rows]) - 1)["mape_pct"]
    after = calibrate(rows, predictor=toy_predictor).residuals["mape_pct"]
    assert before > 10 and after < before / 100


def test_fit_is_deterministic():
    a = calibrate(synthetic_rows(), predictor=toy_predictor)
    b = calibrate(synthetic_rows(), predictor=toy_predictor)
    assert a.assumptions == b.assumptions


def test_parameters_stay_in_their_physical_bounds():
    # Measurements 100x faster than the toy allows: the efficiencies want to exceed 1.
    faster = {"ttft_ms": 0.01, "output_tokens_per_s_per_gpu": 100.0}
    rows = [
        Measurement(**(m.as_dict() | {"value": m.value * faster[m.metric]}))
        for m in synthetic_rows()
    ]
    values = calibrate(rows, predictor=toy_predictor).values()
    for name, (lo, hi) in FIT_BOUNDS.items():  # those the toy reads (the others stay unset)
        assert values.get(name) is None or lo <= values[name] <= hi, name
    assert values["efficiency"] == pytest.approx(FIT_BOUNDS["efficiency"][1])
    assert values["layer_overhead_us"] == pytest.approx(0.0, abs=1e-6)


def test_rows_the_model_cannot_predict_are_left_out_of_the_fit():
    rows = synthetic_rows()

    def partial(rs, a):
        values = toy_predictor(rs, a)
        return np.where([m.tp == 4 and m.batch_size == 64 for m in rs], np.nan, values)

    _, used, fitted = fit(
        rows=rows, predictor=partial, start=get_profile("tutorial"), params=("efficiency",)
    )
    assert fitted == ["efficiency"]
    assert used.sum() == 12  # 16 rows, 4 of them at tp 4 and batch 64
    with pytest.raises(ValueError, match="no measurement row can be predicted"):
        fit(rows, lambda rs, a: np.full(len(rs), np.nan), get_profile("tutorial"))


def test_unknown_fit_parameter_is_refused():
    with pytest.raises(ValueError, match="cannot fit 'hbm_size'"):
        fit(
            rows=synthetic_rows(),
            predictor=toy_predictor,
            start=get_profile("tutorial"),
            params=("hbm_size",),
        )


def test_fitted_profile_round_trips_through_toml():
    profile = calibrate(synthetic_rows(), predictor=toy_predictor, command="python -m engine x")
    again = profile_from_toml(profile_to_toml(profile), "toy.toml", origin="fitted")
    assert again == profile
    assert again.worst[0].startswith("toy.csv row ")


def test_ape_summary_by_hand():
    # errors +10 %, -20 %, +30 %: APE 10, 20, 30 -> mean 20, median 20, max 30
    s = ape_summary([0.1, -0.2, 0.3])
    assert s == pytest.approx({"mape_pct": 20.0, "median_ape_pct": 20.0, "max_ape_pct": 30.0})


def test_shipped_measurements_read_for_calibration():
    assert len(read_measurements([SHIPPED])) == 57


def test_vectorised_prediction_equals_serve_row_by_row():
    from engine.accuracy.validate import predict
    from engine.serving.serve import serve

    # static-batch rows: a row measured under load is predicted by the load model, not serve()
    rows = [m for m in read_measurements(sorted(SHIPPED.parent.glob("*.csv"))) if not m.under_load]
    assert len(rows) >= 57 + 9  # every row of trtllm-v0.6.1.csv and vllm-mi300x-oci.csv at least
    for name in ("tutorial", "trtllm"):
        a = get_profile(name).assumptions
        values, reasons = predict(rows, a)
        for m, value, reason in zip(rows, values, reasons, strict=True):
            sizes = {"batch_size": m.batch_size, "input_tokens": m.input_tokens}
            sizes |= {"output_tokens": m.output_tokens, "kv_precision": m.kv_precision}
            if m.batch_size is None or (reason and reason.startswith("unknown")):
                # a max-throughput row is the load model's (tests/test_load_analytic.py); a
                # format, model or accelerator the catalogue lacks: serve refuses it too
                assert m.batch_size is None or np.isnan(value)
                continue
            r = serve(
                m.model, m.hardware, tp=m.tp, pp=m.pp, precision=m.precision, assumptions=a, **sizes
            )
            if r["fits_in_memory"]:
                assert reason is None and value == pytest.approx(r[m.metric], rel=1e-12)
            else:
                assert reason.startswith("does not fit in memory") and np.isnan(value)


def test_many_assumptions_at_once_equal_each_alone_exactly():
    """ServingPredictor.many (the Jacobian's points in one pass) against one call per point, on
    every shipped row (static batches, closed-loop and max-throughput rows, MoE with expert
    parallelism), with the MoE terms moved as a fit moves them: equal to the last bit."""
    from dataclasses import replace

    from engine.accuracy.validate import ServingPredictor

    rows = read_measurements(sorted(SHIPPED.parent.glob("*.csv")))
    assert any(m.under_load for m in rows) and any(m.ep > 1 for m in rows)
    for name in ("trtllm-1.0", "vllm"):
        p = get_profile(name)
        a = p.assumptions
        many = [
            a,
            replace(a, efficiency=a.efficiency * 1.0001),
            replace(a, expert_imbalance=1.37),  # remakes the MoE operators
            replace(a, bandwidth_efficiency=0.61, sequence_overhead_s=3e-6),
        ]
        predictor = ServingPredictor(scheduler=p.scheduler)
        together = predictor.many(rows, many)
        assert together.shape == (4, len(rows)) and np.isfinite(together).sum() > 300
        for line, one in zip(together, many, strict=True):
            np.testing.assert_array_equal(line, predictor(rows, one))
        assert not np.array_equal(together[0], together[3])  # the points do differ


def test_a_fit_with_the_batched_jacobian_is_the_point_by_point_fit():
    from engine.accuracy.validate import ServingPredictor

    rows = read_measurements([SHIPPED])
    start = get_profile("trtllm")
    batched = ServingPredictor(scheduler=start.scheduler)

    def one_by_one(rows, a):  # no `many`: least_squares evaluates each point alone
        return batched(rows, a)

    a, used, chosen = fit(rows, batched, start)
    b, used_b, chosen_b = fit(rows, one_by_one, start)
    assert len(chosen) >= 4 and chosen == chosen_b and (used == used_b).all()
    assert a == b


def test_rows_the_model_cannot_express_keep_their_reason():
    from engine.accuracy.validate import predict

    (m,) = read_measurements([SHIPPED])[:1]  # GPT-J-6B on 1x H100
    odd = [
        Measurement(**(m.as_dict() | {"model": "Llama-9-1T"})),
        Measurement(**(m.as_dict() | {"tp": 3})),  # 16 heads do not split 3 ways
        Measurement(**(m.as_dict() | {"model": "ResNet-50"})),  # no decoder shapes
        m,
    ]
    values, reasons = predict(odd, get_profile("tutorial").assumptions)
    assert reasons[0].startswith("unknown model 'Llama-9-1T'")
    assert "tp 3 does not divide" in reasons[1]
    assert "no architecture" in reasons[2]
    assert reasons[3] is None and np.isnan(values[:3]).all() and values[3] > 0
