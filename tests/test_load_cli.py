"""`python -m engine load` (engine/cli/load.py), the profiles' `[scheduler]` table and
measurement rows under load (a `concurrency` column, no batch)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from engine import (
    DEFAULT_PROFILE,
    TUTORIAL_PROFILE,
    load_events,
    load_scheduler,
    parse_measurements,
    serve_load,
    validate,
)
from engine.accuracy.calibrate import calibrate
from engine.catalog.profiles import get_profile, profile_from_toml, profile_to_toml
from engine.catalog.scheduler import DEFAULT_SCHEDULER
from engine.cli.main import main
from engine.load import analytic as an
from engine.load.api import MAX_EVENTS, instance
from engine.load.grid import limits
from engine.scenarios.deployment import Deployment

ROOT = Path(__file__).resolve().parent.parent
LOAD = [
    "load",
    "--model",
    "Llama-3.1-8B",
    "--hardware",
    "H100",
    "--input-tokens",
    "500",
    "--output-tokens",
    "100",
]
KEYS = [
    f"{m}_{s}"
    for m in ("ttft_ms", "tpot_ms", "e2e_latency_ms")
    for s in ("mean", "p50", "p90", "p99")
] + [
    "requests_per_s",
    "output_tokens_per_s",
    "output_tokens_per_s_per_gpu",
    "mean_running_requests",
    "preemptions",
    "kv_cache_utilisation",
    "requests_measured",
    "fits_in_memory",
    "scheduler",
    "assumptions",
    "warnings",
    "goodput_requests_per_s",
    "queueing_ms_p99",
]


# a search's simulations in this process: a pool of fresh interpreters costs ~3 s of CPU a call
# (tests/test_parallel.py checks --workers)
ONE_WORKER = ("--workers", "1")


def cli(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_json_has_the_contract_keys_and_equals_the_api(capsys):
    code, out, err = cli(capsys, *LOAD, "--rate", "5", "--requests", "300", "--format", "json")
    assert code == 0, err
    r = json.loads(out)
    assert not [k for k in KEYS if k not in r]
    assert "timeseries" not in r
    api = serve_load(
        "Llama-3.1-8B", "H100", input_tokens=500, output_tokens=100, rate=5.0, requests=300
    ).as_dict(series=False)
    assert r["ttft_ms_p90"] == pytest.approx(api["ttft_ms_p90"])
    # goodput's SLOs when no flag sets them: the API's defaults, which --help states
    assert (r["slo_ttft_ms"], r["slo_tpot_ms"]) == (api["slo_ttft_ms"], api["slo_tpot_ms"])
    assert (r["slo_ttft_ms"], r["slo_tpot_ms"]) == (2000, 100)
    # the default profile's scheduler (trtllm-1.0: TensorRT-LLM's), as the API's
    assert r["profile"] == api["profile"] == DEFAULT_PROFILE
    assert r["scheduler"] == api["scheduler"] == load_scheduler(DEFAULT_PROFILE).as_dict()
    assert r["scheduler"]["stack"] == "TensorRT-LLM" and r["scheduler"]["max_num_seqs"] == 2048
    # naming the tutorial profile still gives vLLM's defaults
    code, out, err = cli(
        capsys,
        *LOAD,
        "--rate",
        "5",
        "--requests",
        "300",
        "--profile",
        "tutorial",
        "--format",
        "json",
    )
    assert code == 0, err
    r = json.loads(out)
    assert r["profile"] == TUTORIAL_PROFILE
    assert r["scheduler"]["stack"] == "vLLM" and r["scheduler"]["max_num_seqs"] == 256


def test_scheduler_flags_closed_loops_and_time_series(capsys):
    code, out, err = cli(
        capsys,
        *LOAD,
        "--concurrency",
        "8",
        "--requests",
        "100",
        "--max-num-seqs",
        "4",
        "--max-batched-tokens",
        "1024",
        "--chunked-prefill",
        "off",
        "--kv-policy",
        "reserve",
        "--timeseries",
        "--format",
        "json",
    )
    assert code == 0, err
    r = json.loads(out)
    s = r["scheduler"]
    assert (s["max_num_seqs"], s["max_batched_tokens"], s["chunked_prefill"], s["kv_policy"]) == (
        4,
        1024,
        False,
        "reserve",
    )
    assert r["mode"] == "closed" and r["concurrency"] == 8
    assert r["mean_running_requests"] == pytest.approx(4, rel=1e-6)  # 8 clients, 4 slots
    series = r["timeseries"]
    assert set(series) == {"time_s", "running", "queued", "kv_in_use"}
    assert max(series["running"]) == 4
    assert all(a + b == 8 for a, b in zip(series["running"], series["queued"], strict=True))


def test_max_rate_searches_and_plans(capsys):
    code, out, err = cli(
        capsys,
        *LOAD,
        "--max-rate",
        *ONE_WORKER,
        "--slo-ttft-ms-p90",
        "150",
        "--slo-tpot-ms-p99",
        "25",
        "--requests",
        "400",
        "--target-rate",
        "40",
        "--format",
        "json",
    )
    assert code == 0, err
    r = json.loads(out)
    assert r["max_rate_per_s"] > 0 and r["ttft_ms_p90"] <= 150 and r["tpot_ms_p99"] <= 25
    assert r["replicas"] == int(np.ceil(40 / r["max_rate_per_s"]))
    assert r["rates_tried"] and r["slo_ttft_ms_p90"] == 150
    # the answer's run counts goodput against the search's limits, the ones given here
    assert (r["slo_ttft_ms"], r["slo_tpot_ms"]) == (150, 25)
    code, out, _ = cli(
        capsys, *LOAD, "--max-rate", *ONE_WORKER, "--requests", "300", "--format", "table"
    )
    assert code == 0 and "max_rate_per_s" in out and "rates_tried" not in out


def test_traces_and_profile_files(capsys, tmp_path):
    trace = tmp_path / "trace.csv"
    trace.write_text("arrival_s,input_tokens,output_tokens\n0,100,10\n0.5,200,20\n1,300,30\n")
    code, out, err = cli(
        capsys,
        "load",
        "--model",
        "Llama-3.1-8B",
        "--hardware",
        "A100",
        "--trace",
        str(trace),
        "--format",
        "json",
    )
    assert code == 0, err
    assert json.loads(out)["requests_measured"] == 3
    team = profile_to_toml(get_profile("trtllm")).replace('name = "trtllm"', 'name = "team"')
    path = tmp_path / "team.toml"
    path.write_text(team.replace("max_num_seqs = 2048", "max_num_seqs = 64"))
    code, out, err = cli(
        capsys,
        *LOAD,
        "--rate",
        "2",
        "--requests",
        "100",
        "--profile",
        str(path),
        "--format",
        "json",
    )
    assert code == 0, err
    r = json.loads(out)
    assert r["profile"] == "team" and r["scheduler"]["max_num_seqs"] == 64
    assert r["scheduler"]["stack"] == "TensorRT-LLM"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--rate", "0"], "rate: expected a number of requests per second above 0"),
        (["--concurrency", "lots"], "--concurrency: expected a whole number of clients"),
        (["--rate", "1", "--concurrency", "2"], "not allowed with argument --rate"),
        ([], "give exactly one of rate"),
        (["--rate", "1", "--requests", "0"], "requests: expected a whole number from 1"),
        (["--concurrency", "100", "--requests", "150"], "give at least 201 requests"),
        (["--rate", "1", "--max-num-seqs", "100000"], "max_num_seqs: expected a whole number"),
        (
            ["--rate", "1", "--chunked-prefill", "off", "--max-batched-tokens", "256"],
            "turn chunked prefill on",
        ),
        (["--rate", "1", "--tp", "3"], "tp 3 does not divide"),
        (["--trace", "/no/such/file.csv"], "cannot read /no/such/file.csv"),
        (["--max-rate", "--rate", "3"], "give no --rate"),
        (["--rate", "3", "--target-rate", "9"], "add --max-rate"),
        # each mode's SLO flags: given to the other mode they were once ignored, and the
        # search's answer then reported the p99 limit as the goodput SLO the user had set
        (["--rate", "3", "--slo-tpot-ms-p99", "50"], "are --max-rate's limits: add --max-rate"),
        (["--concurrency", "4", "--slo-ttft-ms-p90", "500"], "add --max-rate"),
        (["--max-rate", "--slo-tpot-ms", "50"], "--max-rate's limits are --slo-ttft-ms-p90"),
        (["--max-rate", "--slo-ttft-ms", "500"], "one run's goodput SLOs"),
        # a worker's flags without workers (once ignored: one plain deployment ran)
        (["--rate", "1", "--kv-overlap", "on"], "--kv-overlap: describe disaggregated workers"),
        (["--rate", "1", "--replicas", "2", "--prefill-tp", "2"], "add --prefill-workers"),
        (["--rate", "1", "--decode-precision", "fp8", "--decode-ep", "1"], "--decode-ep"),
        (["--rate", "1", "--profile", "nope"], "unknown profile"),
        (["--rate", "1", "--efficiency", "7"], "efficiency must be a number from"),
    ],
)
def test_bad_input_exits_2_with_one_line(capsys, args, message):
    code, out, err = cli(capsys, *LOAD, *args)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and message in err


def test_a_heavy_run_or_search_is_refused_before_any_work_with_its_figures(capsys):
    # 100,000 requests at once of 1 prompt token and 99,999 output tokens: preempted over and
    # over; the older estimate let such runs through to 20 times itself (78 s against 30 s).
    # Preemption is the tutorial profile's vLLM policy (on_demand), so the run names it: the
    # default trtllm-1.0 reserves whole requests, never preempts, and takes 300,008 events.
    heavy = ["--input-tokens", "1", "--output-tokens", "99999", "--requests", "100000"]
    heavy += ["--profile", "tutorial"]
    start = time.process_time()
    code, out, err = cli(capsys, *LOAD[:5], *heavy, "--concurrency", "max")
    assert time.process_time() - start < 5
    assert code == 2 and out == "" and err.count("\n") == 1
    bound = load_events(
        "Llama-3.1-8B",
        "H100",
        concurrency="max",
        input_tokens=1,
        output_tokens=99_999,
        requests=100_000,
        profile=TUTORIAL_PROFILE,
    )
    assert f"up to {bound:,} events" in err and f"more than {MAX_EVENTS:,} (about 30 s)" in err
    # a search counts its 14 runs and 5 rounds of 3 confirmation runs of 6 × its requests
    # (at most 100,000 each): 14 × the bound of one run + 15 × the bound of a 100,000 run
    code, out, err = cli(capsys, *LOAD, "--max-rate", "--requests", "20000")
    kw = {"input_tokens": 500, "output_tokens": 100, "rate": 1.0}
    one = load_events("Llama-3.1-8B", "H100", requests=20_000, **kw)
    longer = load_events("Llama-3.1-8B", "H100", requests=100_000, **kw)
    assert code == 2 and err.count("\n") == 1
    search = 14 * one + 5 * 3 * longer
    assert f"this search would take up to {search:,} events (14 runs of 20,000 requests" in err
    assert "5 rounds of 3 runs of 100,000 at most" in err and "--confirm-requests" in err


def test_max_rate_says_why_no_rate_meets_the_slos(capsys):
    slo = ["--slo-ttft-ms-p90", "1", "--slo-tpot-ms-p99", "1", "--requests", "200"]
    code, out, err = cli(capsys, *LOAD, "--max-rate", *ONE_WORKER, *slo, "--format", "json")
    assert code == 0, err
    r = json.loads(out)
    assert r["max_rate_per_s"] == 0 and list(r)[:2] == ["max_rate_per_s", "reason"]
    rate, ttft, tpot, passed = min(tuple(t.values()) for t in r["rates_tried"])
    assert not passed and ttft > 1 and tpot > 1
    assert r["reason"].startswith(f"no rate meets the SLOs: even the lowest rate tried, {rate:.4g}")
    assert f"p90 TTFT {ttft:,.4g} ms against 1 ms" in r["reason"]
    assert f"p99 TPOT {tpot:,.4g} ms against 1 ms" in r["reason"]
    code, out, _ = cli(capsys, *LOAD, "--max-rate", *ONE_WORKER, *slo, "--format", "table")
    assert code == 0 and "reason" in out and "even the lowest rate tried" in out
    code, out, _ = cli(
        capsys, *LOAD, "--max-rate", *ONE_WORKER, "--requests", "200", "--format", "json"
    )
    assert json.loads(out)["max_rate_per_s"] > 0 and "reason" not in json.loads(out)


def test_the_real_module_runs(tmp_path):
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "engine",
            *LOAD,
            "--concurrency",
            "max",
            "--requests",
            "200",
            "--format",
            "json",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["mode"] == "max"


# --- profiles: the [scheduler] table ---------------------------------------------------


def test_shipped_profiles_carry_their_stacks_scheduler():
    vllm, trt = get_profile("tutorial").scheduler, get_profile("trtllm").scheduler
    got = (
        vllm.stack,
        vllm.max_num_seqs,
        vllm.max_batched_tokens,
        vllm.block_size,
        vllm.chunked_prefill,
        vllm.kv_policy,
    )
    assert got == ("vLLM", 256, 2048, 16, True, "on_demand")
    assert (
        trt.stack,
        trt.max_num_seqs,
        trt.max_batched_tokens,
        trt.chunked_prefill,
        trt.kv_policy,
    ) == ("TensorRT-LLM", 2048, 8192, False, "reserve")
    assert all(s.startswith("https://") for s in (*vllm.sources, *trt.sources))
    r = serve_load(
        "Llama-3.1-8B",
        "H100",
        input_tokens=100,
        output_tokens=10,
        rate=1.0,
        requests=20,
        profile="trtllm",
    )
    assert r.scheduler["stack"] == "TensorRT-LLM"


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ("frobnicate = 1", "unknown scheduler key 'frobnicate'"),
        ("max_num_seqs = 0", "max_num_seqs: expected a whole number from 1 to 16,384"),
        ('kv_policy = "lru"', "kv_policy must be one of on_demand, reserve"),
        ("chunked_prefill = 1", "chunked_prefill must be true or false"),
        ("watermark = 0.9", "watermark must be a fraction from 0 to 0.5"),
        ('sources = "x"', "sources must be a list of URLs"),
    ],
)
def test_bad_scheduler_tables_name_the_file_and_key(table, message):
    text = f'name = "x"\n[assumptions]\nefficiency = 0.5\n[scheduler]\n{table}\n'
    with pytest.raises(ValueError, match=message) as err:
        profile_from_toml(text, "x.toml")
    assert str(err.value).startswith("x.toml: ")


def test_a_profile_without_the_table_uses_vllms_defaults():
    p = profile_from_toml('name = "plain"\n[assumptions]\nefficiency = 0.6\n', "plain.toml")
    assert p.scheduler is None
    assert profile_from_toml(profile_to_toml(p), "plain.toml") == p
    dep = instance(Deployment("Llama-3.1-8B", "H100", profile=p))
    assert dep.scheduler == DEFAULT_SCHEDULER


# --- measurements under load ------------------------------------------------------------

HEADER = (
    "source,engine,hardware,tp,model,precision,kv_precision,batch_size,input_tokens,"
    "output_tokens,metric,value,concurrency\n"
)
ROWS = [
    "https://example.org/a,vLLM,H100,4,Llama-3.1-70B,fp16,,,1500,300,output_tokens_per_s_per_gpu,"
    "300,32",
    "https://example.org/a,vLLM,H100,4,Llama-3.1-70B,fp16,,,1500,300,tpot_ms,25,32",
    "https://example.org/a,vLLM,H100,4,Llama-3.1-70B,fp16,,,1500,300,output_tokens_per_s_per_gpu,"
    "450,max",
    "https://example.org/a,vLLM,H100,4,Llama-3.1-70B,fp16,,,1500,300,ttft_ms,700,",
    "https://example.org/a,vLLM,H100,4,Llama-3.1-70B,fp16,,8,1500,300,tpot_ms,15,",
]


def test_rows_under_load_are_read_with_their_concurrency():
    rows = parse_measurements((HEADER + "\n".join(ROWS) + "\n").encode(), "load.csv")
    assert [(m.batch_size, m.concurrency) for m in rows] == [
        (None, 32),
        (None, 32),
        (None, "max"),
        (None, "max"),
        (8, None),
    ]
    bad = (
        HEADER
        + "\n".join(
            [
                "https://x,v,H100,1,Llama-3.1-8B,fp16,,4,100,10,ttft_ms,5,8",
                "https://x,v,H100,1,Llama-3.1-8B,fp16,,,100,10,ttft_ms,5,lots",
                "https://x,v,H100,1,Llama-3.1-8B,fp16,,,100,10,ttft_ms,5,0",
            ]
        )
        + "\n"
    )
    with pytest.raises(ValueError) as err:
        parse_measurements(bad.encode(), "bad.csv")
    assert err.value.problems == [
        "row 1, column 'concurrency': give batch_size (a static batch) or concurrency (a run "
        "under load), not both",
        "row 2, column 'concurrency': must be a whole number of clients from 1 to 100,000 or "
        "'max', got 'lots'",
        "row 3, column 'concurrency': must be a whole number of clients from 1 to 100,000 or "
        "'max', got '0'",
    ]


def test_validate_predicts_rows_under_load_with_the_fast_path():
    rows = parse_measurements((HEADER + "\n".join(ROWS) + "\n").encode(), "load.csv")
    df = validate(rows, "tutorial")
    dep = instance(Deployment("Llama-3.1-70B", "H100", tp=4, profile=TUTORIAL_PROFILE))
    f, lim = dep.scenario.folded, limits(dep.scenario.folded, dep.scheduler)
    closed = an.closed_loop(f=f, lim=lim, clients=32.0, n_in=1500.0, n_out=300.0)
    top = an.max_throughput(f=f, lim=lim, n_in=1500.0, n_out=300.0)
    assert df["predicted"][0] == pytest.approx(float(closed["output_tokens_per_s"]) / 4)
    assert df["predicted"][1] == pytest.approx(float(closed["tpot_s_mean"]) * 1e3)
    assert df["predicted"][2] == pytest.approx(float(top["output_tokens_per_s"]) / 4)
    assert np.isnan(df["predicted"][3]) and "max-throughput run" in df["reason"][3]
    assert df["reason"][4] == ""  # the static row as before
    # the trtllm profile predicts them with TensorRT-LLM's scheduler: another number
    assert validate(rows, "trtllm")["predicted"][0] != pytest.approx(df["predicted"][0])


def test_calibrate_takes_rows_under_load_and_keeps_the_stack(tmp_path):
    rows = parse_measurements((HEADER + "\n".join(ROWS) + "\n").encode(), "load.csv")
    fitted = calibrate(rows, "trtllm", name="team", params=("efficiency", "bandwidth_efficiency"))
    assert fitted.rows == 4 and fitted.scheduler == get_profile("trtllm").scheduler
