"""What a page needs to bound its work before it simulates: the scheduler a run uses and the
events a run (or a max-rate search) takes, by the same rule `serve_load` refuses a run by."""

from __future__ import annotations

import pytest

import engine


def test_the_scheduler_is_the_profiles_with_the_overrides_checked():
    trt = engine.load_scheduler("trtllm")
    assert trt == engine.get_profile("trtllm").scheduler
    assert (trt.max_num_seqs, trt.max_batched_tokens, trt.chunked_prefill) == (2048, 8192, False)
    edited = engine.load_scheduler("trtllm", max_num_seqs=64, chunked_prefill=True)
    assert (edited.max_num_seqs, edited.chunked_prefill, edited.block_size) == (64, True, 32)
    assert engine.load_scheduler("trtllm", max_num_seqs=None) == trt  # None: the profile's
    with pytest.raises(ValueError, match="must be at least max_num_seqs"):
        engine.load_scheduler("tutorial", max_num_seqs=4096)  # above its 2,048-token budget


def test_a_run_reports_the_scheduler_load_scheduler_gives():
    r = engine.serve_load("Llama-3.1-8B", "H100", input_tokens=256, output_tokens=32, rate=2.0,
                          requests=60, profile="trtllm", max_num_seqs=16)  # fmt: skip
    assert r.scheduler == engine.load_scheduler("trtllm", max_num_seqs=16).as_dict()


def test_the_event_estimate_is_the_one_serve_load_refuses_by():
    events = engine.load_events(100_000, 100_000, 2048)
    assert events == 4 * 100_000 + 2 * -(-100_000 * 100_000 // 1024)
    with pytest.raises(ValueError, match=f"about {events:,} events"):
        engine.serve_load("Llama-3.1-8B", "H100", input_tokens=100_000, output_tokens=2,
                          rate=1.0, requests=100_000)  # fmt: skip


def test_the_estimate_grows_with_requests_and_prompts_and_shrinks_with_the_budget():
    base = engine.load_events(1000, 1500, 2048)
    assert engine.load_events(2000, 1500, 2048) > base
    assert engine.load_events(1000, 6000, 2048) > base
    assert engine.load_events(1000, 1500, 8192) < base
    assert engine.max_rate_events(1500, 2048) == 14 * base  # at most 14 runs of 1,000


@pytest.mark.parametrize(
    ("args", "word"),
    [((0, 10, 2048), "requests"), ((10, 0, 2048), "input_tokens"), ((10, 10, 0), "max_batched")],
)
def test_the_estimate_checks_its_arguments(args, word):
    with pytest.raises(ValueError, match=word):
        engine.load_events(*args)
