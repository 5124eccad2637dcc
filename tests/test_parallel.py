"""Simulations in parallel (engine/load/parallel.py, engine/scenarios/execution.py): a process
pool and a local Ray instance give the serial answer, bit for bit; the speculative search
decides exactly as the serial bisection; bad settings are refused with their field's name."""

from __future__ import annotations

import json

import pytest

import engine
from engine.cli.main import main
from engine.load import search
from engine.load.parallel import NO_RAY, Runner, run_all
from engine.scenarios.execution import Execution

# a small search: one 8B replica, 200 requests a run (about a second of CPU serially)
SEARCH = {
    "input_tokens": 800,
    "output_tokens": 150,
    "requests": 200,
    "slo_ttft_ms_p90": 1500.0,
    "slo_tpot_ms_p99": 60.0,
}
CLI = ["load", "--model", "Llama-3.1-8B", "--hardware", "H100", "--input-tokens", "800"]
CLI += ["--output-tokens", "150", "--requests", "200", "--max-rate", "--format", "json"]
CLI += ["--slo-ttft-ms-p90", "1500", "--slo-tpot-ms-p99", "60"]


def _square(x: int) -> int:
    return x * x


@pytest.fixture(scope="module")
def serial() -> engine.MaxRate:
    return engine.max_rate("Llama-3.1-8B", "H100", workers=1, **SEARCH)


def test_two_processes_give_the_serial_answer_bit_for_bit(serial):
    done = []
    two = engine.max_rate(
        "Llama-3.1-8B",
        "H100",
        execution=Execution(workers=2, progress=lambda d, t: done.append((d, t))),
        **SEARCH,
    )
    assert serial.max_rate_per_s > 0  # a real search: some rate passes
    assert two.as_dict() == serial.as_dict()  # every key, every rate tried, the same floats
    assert two.tried == serial.tried
    # the progress callable heard every simulation, in order (speculative ones included)
    assert [d for d, _ in done] == list(range(1, len(done) + 1))
    assert len(done) >= len(serial.tried)


def test_the_cli_with_two_workers_prints_the_serial_answer(capsys):
    outs = []
    for workers in ("1", "2"):
        assert main([*CLI, "--workers", workers]) == 0
        outs.append(json.loads(capsys.readouterr().out))
    assert outs[0]["max_rate_per_s"] > 0
    assert outs[0] == outs[1]


def test_many_deployments_searched_on_two_workers_answer_as_each_alone(serial):
    deps = [engine.Deployment("Llama-3.1-8B", "H100"), engine.Deployment("Llama-3.1-8B", "A100")]
    heard = []
    many = engine.max_rates(
        deps, execution=Execution(workers=2, progress=lambda d, t: heard.append((d, t))), **SEARCH
    )
    alone = engine.max_rate(deps[1], **SEARCH)
    assert many[0].as_dict() == serial.as_dict()  # the H100 search above
    assert many[1].as_dict() == alone.as_dict()
    assert many[1].max_rate_per_s < many[0].max_rate_per_s  # A100 serves fewer than H100
    assert heard == [(1, 2), (2, 2)]
    with pytest.raises(ValueError, match="Deployment objects"):
        engine.max_rates(["Llama-3.1-8B"], **SEARCH)


def test_the_speculative_frontier_starts_with_the_serial_search_s_next_rate():
    # a toy search: start 10, cap 40; a rate passes below 17.3 (the serial path, by hand:
    # 10 passes, 13 passes, 16.9 passes, 21.97 fails; then bisection within 2 %)
    def path(known):
        return search._path(known=known, start=10.0, cap=40.0, tolerance=0.02)

    def outcome(rate):
        return rate < 17.3

    known, order = {}, []
    while True:
        try:
            lo, tried = path(known)
            break
        except search._Need as need:
            frontier = search._frontier(known=known, width=3, path=path)
            assert frontier[0] == need.rate  # the serial search's next rate comes first
            assert len(frontier) == len(set(frontier)) <= 3
            for rate in frontier:
                known[rate] = outcome(rate)
            order.append(frontier)
    serial_known = {}
    while True:  # the same search, one rate at a time
        try:
            lo_serial, tried_serial = path(serial_known)
            break
        except search._Need as need:
            serial_known[need.rate] = outcome(need.rate)
    assert (lo, tried) == (lo_serial, tried_serial)
    assert tried[:4] == [10.0, 13.0, 16.900000000000002, 21.970000000000002]
    assert 16.9 <= lo < 17.3 and len(order) < len(tried)  # fewer rounds than serial runs


def test_run_all_keeps_the_items_order_in_processes_and_in_this_process():
    items = list(range(7))
    assert run_all(_square, items, Execution(workers=2)) == [x * x for x in items]
    seen = []
    out = run_all(_square, items, Execution(workers=1, progress=lambda d, t: seen.append((d, t))))
    assert out == [x * x for x in items]
    assert seen == [(k, 7) for k in range(1, 8)]


@pytest.mark.parametrize(
    ("fields", "says"),
    [
        ({"workers": 0}, "workers"),
        ({"workers": 2.5}, "workers"),
        ({"workers": True}, "workers"),
        ({"ray_address": ""}, "ray_address"),
        ({"ray_address": "x" * 400}, "ray_address"),
        ({"progress": 3}, "progress"),
    ],
)
def test_bad_settings_are_refused_by_name(fields, says):
    with pytest.raises(ValueError, match=says):
        Execution(**fields)


def test_the_ray_address_comes_from_the_environment_when_not_given(monkeypatch):
    monkeypatch.setenv("RAY_ADDRESS", "ray://head:10001")
    assert Execution().address == "ray://head:10001"
    assert Execution(ray_address="auto").address == "auto"
    monkeypatch.delenv("RAY_ADDRESS")
    assert Execution().address is None
    assert Execution().processes >= 1


def test_without_ray_installed_a_ray_address_says_how_to_get_it(monkeypatch):
    import builtins

    real = builtins.__import__

    def no_ray(name, *args, **kwargs):
        if name == "ray":
            raise ImportError("no module named ray")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_ray)
    with pytest.raises(ValueError, match="pip install ray") as info:
        Runner(Execution(ray_address="auto"))
    assert str(info.value) == NO_RAY


def test_the_cli_refuses_workers_without_max_rate_and_a_bad_count(capsys):
    base = CLI[: CLI.index("--max-rate")]
    assert main([*base, "--rate", "2", "--workers", "2"]) == 2
    assert "--max-rate" in capsys.readouterr().err
    assert main([*CLI, "--workers", "0"]) == 2
    assert "workers" in capsys.readouterr().err


@pytest.fixture(scope="module")
def local_ray():
    ray = pytest.importorskip("ray")  # requirements-dev.txt pins it; users need not
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()


def test_a_local_ray_instance_gives_the_serial_answer(local_ray, serial):
    on_ray = engine.max_rate("Llama-3.1-8B", "H100", ray_address="auto", **SEARCH)
    assert on_ray.as_dict() == serial.as_dict()
    # a function Ray's workers can import (builtins): the answers in the items' order
    assert run_all(abs, [-3, 1, -2, 0], Execution(ray_address="auto")) == [3, 1, 2, 0]
