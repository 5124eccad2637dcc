"""The serving-under-load page's share link: every input declared once (ui.core.params.Link).

Link parameters (a public contract once shipped): model (a catalogue LLM, or `config.json` with
`model_config=`), hardware, tp, pp, precision, kv_precision (`same`: the weights'), profile (a
serving profile: its assumptions and its stack's scheduler); the scheduler's max_num_seqs,
max_batched_tokens, chunked_prefill (on/off), block_size (absent: the profile's); the workload:
mode (open: requests arrive at `rate` per second with `burstiness`; closed: `concurrency`
clients; max: every request queued at once; trace: an uploaded trace, which the link cannot
carry: the page asks for the file), input_tokens, output_tokens, length_spread,
requests, seed; the SLOs slo_ttft_ms_p90 and slo_tpot_ms_p99 (the CLI's names); price (USD per
accelerator-hour; absent: the catalogue's list price) and target_rate (requests/s to plan
replicas for); custom_hw, custom_model. Model: docs/model.md, "Serving under load".
"""

from __future__ import annotations

import engine
from ui.core import link_params as lp
from ui.core import model_config as mc
from ui.core.i18n import N_, _
from ui.core.params import Link, Param, ParamError, choice, number, write_number

PAGE = "load"
KV_CHOICES = ("same", "fp16", "bf16", "fp8", "int8", "int4")  # same: the weight precision
MODES = ("open", "closed", "max", "trace")
MODE_LABELS = {  # translated where shown
    "open": N_("Open loop: requests arrive at a rate"),
    "closed": N_("Closed loop: N clients, each waits for its answer"),
    "max": N_("Max throughput: every request queued at once"),
    "trace": N_("Trace: the requests of an uploaded CSV"),
}
ON_OFF = ("on", "off")
MAX_REQUESTS = 100_000  # the engine's limit per run (a trace's rows)
MAX_SEED = 2**32 - 1
MAX_RATE = 1e6  # requests/s, the engine's limit
SLO = number(0.001, 1e9)  # ms, the engine's range for an SLO
PRICE = number(0.01, 1e6)  # USD per accelerator-hour (the catalogue takes a positive price)
SCHEDULER = {  # name: (reader: the engine's bounds, engine/catalog/scheduler.py)
    "max_num_seqs": number(1, 16_384, whole=True),
    "max_batched_tokens": number(1, 1_048_576, whole=True),
    "block_size": number(1, 1024, whole=True),
}
DEFAULTS = {"model": "Llama-3.1-70B", "hardware": "H100", "tp": 4, "profile": "trtllm"}
WORKLOAD = {"input_tokens": 1500, "output_tokens": 300, "rate": 3.0, "concurrency": 32}


def read_on_off(text: str) -> str:
    word = text.strip().lower()
    if word not in ON_OFF:
        raise ParamError(_("{value} is not on or off").format(value=repr(text[:20])))
    return word


def _whole(lo: int, hi: int):
    return number(lo, hi, whole=True)


def declare(cat: engine.Catalog) -> Link:
    """Every link parameter of the page, in the order the link writes them."""
    degree = _whole(1, engine.MAX_DEGREE)
    tokens = _whole(1, engine.MAX_TOKENS)
    return Link(
        PAGE,
        [
            Param("model", mc.llm_reader(cat), default=DEFAULTS["model"]),
            mc.param(),
            lp.hardware(cat, DEFAULTS["hardware"]),
            Param("tp", degree, write_number, DEFAULTS["tp"]),
            Param("pp", degree, write_number, 1),
            lp.precision(),
            Param("kv_precision", choice(KV_CHOICES), default="same"),
            Param("profile", choice(engine.profile_names()), default=DEFAULTS["profile"]),
            *(Param(name, reader, write_number) for name, reader in SCHEDULER.items()),
            Param("chunked_prefill", read_on_off),
            Param("mode", choice(MODES), default="open"),
            Param("rate", number(0.001, MAX_RATE), write_number, WORKLOAD["rate"]),
            Param("burstiness", number(0.01, 100.0), write_number, 1.0),
            Param("concurrency", _whole(1, MAX_REQUESTS), write_number, WORKLOAD["concurrency"]),
            Param("input_tokens", tokens, write_number, WORKLOAD["input_tokens"]),
            Param("output_tokens", tokens, write_number, WORKLOAD["output_tokens"]),
            Param("length_spread", number(0.0, 0.99), write_number, 0.0),
            Param("requests", _whole(1, MAX_REQUESTS), write_number, 2000),
            Param("seed", _whole(0, MAX_SEED), write_number, 0),
            Param("slo_ttft_ms_p90", SLO, write_number, 2000.0),
            Param("slo_tpot_ms_p99", SLO, write_number, 100.0),
            Param("price", PRICE, write_number),
            Param("target_rate", number(0.001, MAX_RATE), write_number, 20.0),
            *lp.custom_specs(),
        ],
    )
