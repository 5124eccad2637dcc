"""A simulated run's timeline as a Chrome trace (engine/load/trace_export.py, `load
--chrome-trace`): the Trace Event Format's structure (checked with a JSON schema written from
the format's document), tracks in time order, spans that match the run, and a recorder that
changes nothing in the run it records."""

from __future__ import annotations

import itertools
import json
from collections import defaultdict

import jsonschema
import pytest

import engine
from engine.cli.main import main
from engine.load.trace_export import PREEMPT_TID, STEPS_TID, TRANSFER_TID, StepRecorder

RUN = {"input_tokens": 1000, "output_tokens": 200, "requests": 100, "rate": 5.0, "seed": 3}
CLI = ["load", "--model", "Llama-3.1-8B", "--hardware", "H100", "--input-tokens", "1000"]
CLI += ["--output-tokens", "200", "--requests", "100", "--rate", "5", "--seed", "3"]

# The Trace Event Format (Google's "Trace Event Format" document; Perfetto's JSON importer
# reads the same): an object with a traceEvents list; every event a name, a phase, a
# timestamp in µs and a pid/tid; complete events ("X") a duration; async events ("b"/"e") a
# category and an id; metadata ("M") its args.
SCHEMA = {
    "type": "object",
    "required": ["traceEvents"],
    "properties": {
        "displayTimeUnit": {"enum": ["ms", "ns"]},
        "traceEvents": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["name", "ph", "ts", "pid", "tid"],
                "properties": {
                    "name": {"type": "string"},
                    "ph": {"enum": ["X", "b", "e", "i", "M"]},
                    "ts": {"type": "number", "minimum": 0},
                    "dur": {"type": "number", "minimum": 0},
                    "pid": {"type": "integer"},
                    "tid": {"type": "integer"},
                    "cat": {"type": "string"},
                    "s": {"enum": ["g", "p", "t"]},
                    "args": {"type": "object"},
                },
                "allOf": [
                    {"if": {"properties": {"ph": {"const": "X"}}}, "then": {"required": ["dur"]}},
                    {
                        "if": {"properties": {"ph": {"enum": ["b", "e"]}}},
                        "then": {"required": ["cat", "id"]},
                    },
                    {"if": {"properties": {"ph": {"const": "M"}}}, "then": {"required": ["args"]}},
                ],
            },
        },
    },
}


@pytest.fixture(scope="module")
def written(tmp_path_factory) -> dict:
    path = tmp_path_factory.mktemp("trace") / "t.json"
    assert main([*CLI, "--chrome-trace", str(path), "--format", "json"]) == 0
    return json.loads(path.read_text(encoding="utf-8"))


def test_the_cli_writes_a_trace_event_format_file_with_many_events(written):
    jsonschema.validate(written, SCHEMA)
    events = written["traceEvents"]
    assert len(events) > 100  # for 100 requests
    kinds = {e["ph"] for e in events}
    assert {"X", "b", "e", "M"} <= kinds
    names = {e["args"]["name"] for e in events if e["ph"] == "M"}
    assert "steps" in names and any(n.startswith("replica 1: Llama-3.1-8B") for n in names)


def test_every_track_runs_forward_in_time_and_steps_never_overlap(written):
    tracks = defaultdict(list)
    for e in written["traceEvents"]:
        if e["ph"] != "M":
            tracks[(e["pid"], e["tid"])].append(e)
    for events in tracks.values():
        stamps = [e["ts"] for e in events]
        assert stamps == sorted(stamps)
    steps = [e for e in tracks[(1, STEPS_TID)] if e["ph"] == "X"]
    for a, b in itertools.pairwise(steps):
        assert a["ts"] + a["dur"] <= b["ts"] * (1 + 1e-12) + 1e-6  # one step at a time


def test_each_request_s_spans_open_and_close_in_order(written):
    spans = defaultdict(list)
    for e in written["traceEvents"]:
        if e["ph"] in ("b", "e"):
            spans[e["id"]].append((e["ph"], e["name"], e["ts"]))
    assert len(spans) >= 90  # nearly every one of the 100 requests ran in the run
    for seq in spans.values():
        phases = [p for p, _, _ in seq]
        assert phases == ["b", "e"] * (len(seq) // 2)  # never two open at once
        names = [n for p, n, _ in seq if p == "b"]
        assert names == ["queued", "prefill", "decode"][: len(names)]
        stamps = [t for _, _, t in seq]
        assert stamps == sorted(stamps)


def test_the_trace_matches_the_run_it_records():
    traced = engine.chrome_trace("Llama-3.1-8B", "H100", **RUN)
    plain = engine.serve_load("Llama-3.1-8B", "H100", **RUN)
    # the recorder changes nothing: the same result, key by key
    assert traced.result.as_dict() == plain.as_dict()
    events = traced.as_dict()["traceEvents"]
    # per request: TTFT = first token − arrival = end of "prefill" − start of "queued"
    starts = {e["id"]: e["ts"] for e in events if e["ph"] == "b" and e["name"] == "queued"}
    firsts = {e["id"]: e["ts"] for e in events if e["ph"] == "e" and e["name"] == "prefill"}
    ttft_ms = [(firsts[i] - starts[i]) / 1e3 for i in firsts if i in starts]
    # the run's TTFT percentiles summarise its measured requests, a subset of these
    assert min(ttft_ms) <= plain["ttft_ms_p50"] <= max(ttft_ms)
    # decode runs carry steps × batch output tokens
    for e in events:
        if e["ph"] == "X" and e["name"].startswith("decode"):
            assert e["args"]["output_tokens"] == e["args"]["steps"] * e["args"]["batch"]
            assert e["name"] == f"decode ×{e['args']['steps']}"


def test_preemptions_are_marked_on_their_own_track():
    # 70B in fp16 on two H100s: the weights leave a small KV pool, so long requests preempt
    # under the tutorial profile's vLLM policy (on_demand); the default trtllm-1.0 reserves
    # whole requests (TensorRT-LLM's GUARANTEED_NO_EVICT) and never preempts
    run = {"input_tokens": 3000, "output_tokens": 1500, "requests": 130, "concurrency": 64}
    run |= {"profile": engine.TUTORIAL_PROFILE}
    traced = engine.chrome_trace("Llama-3.1-70B", "H100", tp=2, **run)
    marks = [e for e in traced.as_dict()["traceEvents"] if e["ph"] == "i"]
    assert traced.result["preemptions"] > 0
    assert len(marks) >= traced.result["preemptions"]  # every one, the measured ones included
    assert {e["tid"] for e in marks} == {PREEMPT_TID}


def test_chrome_trace_is_refused_with_max_rate(capsys, tmp_path):
    bad = [*CLI[: CLI.index("--rate")], "--max-rate", "--chrome-trace", str(tmp_path / "x.json")]
    assert main(bad) == 2
    assert "--chrome-trace" in capsys.readouterr().err
    assert main([*CLI, "--chrome-trace", str(tmp_path / "no" / "dir" / "x.json")]) == 2
    assert "cannot write" in capsys.readouterr().err


def test_a_transfer_is_a_span_on_its_own_track_and_the_limit_counts_the_rest():
    rec = StepRecorder(pid=2, limit=2)
    rec.transfer(start_s=1.5, seconds=0.002, request=7, nbytes=1.3e9)
    rec.preempted(2.0, 7)
    rec.preempted(2.5, 8)  # past the limit: counted, not kept
    span = rec.events[0]
    assert (span["ph"], span["tid"], span["pid"]) == ("X", TRANSFER_TID, 2)
    assert span["ts"] == 1.5e6 and span["dur"] == 2000.0  # µs
    assert span["args"] == {"request": 7, "bytes": 1.3e9, "to": ""}
    assert len(rec.events) == 2 and rec.dropped == 1


FLEET_RUN = {"input_tokens": 1000, "output_tokens": 100, "requests": 120, "rate": 20.0}


def spans_by_request(events) -> dict:
    out = defaultdict(list)
    for e in events:
        if e["ph"] in ("b", "e"):
            out[e["id"]].append(e)
    return out


def test_replicas_are_a_process_each_and_every_request_is_on_the_one_it_was_routed_to():
    dep = engine.Deployment("Llama-3.1-8B", "H100", tp=1)
    fleet = engine.Replicas(dep, replicas=3, router="least-outstanding")
    traced = engine.chrome_trace(fleet, **FLEET_RUN)
    # the recorders change nothing: serve_load's answer for the fleet, key by key
    assert traced.result.as_dict() == engine.serve_load(fleet, **FLEET_RUN).as_dict()
    trace = traced.as_dict()
    jsonschema.validate(trace, SCHEMA)
    events = trace["traceEvents"]
    names = {e["pid"]: e["args"]["name"] for e in events if e["name"] == "process_name"}
    assert sorted(names) == [1, 2, 3]
    assert all(names[k].startswith(f"replica {k}: Llama-3.1-8B on 1× H100") for k in names)
    spans = spans_by_request(events)
    assert sorted(spans) == list(range(120))  # every request, by its own index, once
    for seq in spans.values():
        assert len({e["pid"] for e in seq}) == 1  # on one replica
        assert [e["name"] for e in seq if e["ph"] == "b"] == ["queued", "prefill", "decode"]
    used = {e["pid"] for e in events if e["ph"] == "X"}
    assert used == {1, 2, 3}  # the router spread the load: every replica stepped


def test_a_disaggregated_fleet_traces_its_workers_and_each_prompts_kv_transfer(tmp_path):
    dep = engine.Deployment("Llama-3.1-8B", "H100", tp=1)
    fleet = engine.Disaggregated(prefill=dep, decode=dep, prefill_workers=2, decode_workers=1)
    traced = engine.chrome_trace(fleet, **FLEET_RUN)
    assert traced.result.as_dict() == engine.serve_load(fleet, **FLEET_RUN).as_dict()
    events = traced.as_dict()["traceEvents"]
    names = {e["pid"]: e["args"]["name"] for e in events if e["name"] == "process_name"}
    assert names[1].startswith("prefill worker 1:") and names[2].startswith("prefill worker 2:")
    assert names[3].startswith("decode worker 1:")
    moves = [e for e in events if e.get("cat") == "transfer"]
    assert sorted(e["args"]["request"] for e in moves) == list(range(120))  # one per prompt
    assert {e["pid"] for e in moves} <= {1, 2} and {e["tid"] for e in moves} == {TRANSFER_TID}
    # 1,000 prompt tokens × 131,072 B per token (Llama-3.1-8B, 32 layers × 8 KV heads × 128 ×
    # 2 (K and V) × 2 B at fp16 KV); sent whole over NVLink after the prompt: the exposed mean
    assert {e["args"]["bytes"] for e in moves} == {131_072_000.0}
    assert {e["args"]["to"] for e in moves} == {"decode worker 1"}
    mean_ms = sum(e["dur"] for e in moves) / len(moves) / 1e3
    assert mean_ms == pytest.approx(traced.result["kv_transfer_ms_mean"], rel=1e-9)
    # each request: queued, prefill on its prefill worker; queued, decode on the decode worker,
    # which it reaches when its transfer ends
    end = {e["args"]["request"]: e["ts"] + e["dur"] for e in moves}
    for i, seq in spans_by_request(events).items():
        on_decode = [e for e in seq if e["pid"] == 3]
        assert [e["name"] for e in on_decode if e["ph"] == "b"] == ["queued", "decode"]
        assert on_decode[0]["ts"] == pytest.approx(end[i])
    # the CLI writes the same fleet's trace
    path = tmp_path / "fleet.json"
    cli = ["load", "--model", "Llama-3.1-8B", "--hardware", "H100", "--input-tokens", "1000"]
    cli += ["--output-tokens", "100", "--requests", "120", "--rate", "20"]
    cli += ["--prefill-workers", "2", "--decode-workers", "1", "--chrome-trace", str(path)]
    assert main([*cli, "--format", "json"]) == 0
    written = json.loads(path.read_text(encoding="utf-8"))
    jsonschema.validate(written, SCHEMA)
    assert len([e for e in written["traceEvents"] if e.get("cat") == "transfer"]) == 120
