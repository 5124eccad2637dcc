"""Dropout's masks (`dropout`): kept for the backward pass when above 0 (Megatron-LM's 0.1, the
default), none at 0 (Llama-family recipes): memory only."""

import pytest

import engine
from engine.scenarios.training import TrainRun
from engine.training.memory import activation_bytes_per_token
from engine.training.numerics import Numerics
from engine.training.setup import setup

RUN = dict(gpus=8, global_batch_size=128, seq_len=8192, micro_batch_size=1, zero=1)


def test_no_dropout_keeps_no_masks():
    # Llama-3.1-8B (h 4,096, 32 heads of 128, 8 KV heads, ffn 14,336), per token of a layer:
    # attention 2h + 2(32 + 8)·128 + 2·8·128 + 2·32·128 + h = 32,768; MLP 2h + 4·14,336 +
    # 2·14,336 + h = 98,304; norms 4h = 16,384: 147,456 bytes, of which the two masks are
    # h + h = 8,192
    s = setup(TrainRun("Llama-3.1-8B", "H100", gpus=8, global_batch_size=128, seq_len=8192)).s
    with_masks, scores = activation_bytes_per_token(s, 8192.0)
    without, no_mask_scores = activation_bytes_per_token(s, 8192.0, num=Numerics(2.0, masks=False))
    assert with_masks == pytest.approx(147_456) and without == pytest.approx(139_264)
    # unfused attention's scores: softmax input and output (2 + 2 bytes) and a 1-byte mask
    assert scores == pytest.approx(5 * 32 * 8192) and no_mask_scores == pytest.approx(4 * 32 * 8192)
    kept, dropped = (engine.train("Llama-3.1-8B", "H100", dropout=d, **RUN) for d in (0.1, 0.0))
    ratio = dropped["activation_bytes_per_gpu"] / kept["activation_bytes_per_gpu"]
    assert ratio == pytest.approx(139_264 / 147_456)
    assert dropped["step_time_s"] == kept["step_time_s"]  # memory only
    assert kept.as_dict()["assumptions"]["dropout"] == 0.1  # the default, echoed
