"""The serving-under-load page's share link: every input declared once (ui.links.params.Link).

Link parameters (a public contract once shipped): model (a catalogue LLM, or `config.json` with
`model_config=`), hardware, tp, pp, ep and attention_dp (an MoE model's expert parallelism
and attention DP inside the tp devices), precision, kv_precision (`same`: the weights'), profile
(a serving profile: its assumptions and its stack's scheduler; a custom one, fitted on
/accuracy, by its name with every serving assumption it sets and its band and ground, as every
page carries one: ui.core.profiles); overrides of the profile's assumptions, as on the planner
(efficiency, bandwidth_efficiency, attention_efficiency, expert_efficiency, link_efficiency,
link_latency_us, layer_overhead_us, dispatch_overhead_ms, memory_reserve, dequant_overhead;
absent: the profile's value); the scheduler's max_num_seqs,
max_batched_tokens, chunked_prefill (on/off), block_size (absent: the profile's); the workload:
mode (open: requests arrive at `rate` per second with `burstiness`; closed: `concurrency`
clients; max: every request queued at once; trace: an uploaded trace, which the link cannot
carry: the page asks for the file), input_tokens, output_tokens, length_spread,
requests, seed; the SLOs slo_ttft_ms_p90 and slo_tpot_ms_p99 (the CLI's names); price (USD per
accelerator-hour; absent: the catalogue's list price) and target_rate (requests/s to plan
replicas for); the serving techniques: spec_method (off, draft, eagle, mtp, ngram),
spec_tokens and spec_acceptance (absent: the method's defaults), draft_model (a catalogue LLM,
for draft), prefix_tokens (0: no shared prefix), prefix_share and session_turns (1: single
requests; more: multi-turn sessions whose history is cached); the comparison of aggregated and
disaggregated serving on the same GPUs: fleet (on/off), prefill_workers, prefill_tp,
decode_workers, decode_tp (absent: the page's tp), router (engine.ROUTERS); custom_hw,
custom_model. Model: docs/model.md, "Serving under load", "Speculative decoding", "Prefix
caching" and "Replicas, routers and disaggregated serving".
"""

from __future__ import annotations

import engine
from ui.core import profiles
from ui.links import assumptions
from ui.links import link_params as lp
from ui.links.params import Link, Param, ParamError, choice, number, write_number
from ui.widgets import model_config as mc
from ui.words.i18n import N_, _

PAGE = "load"
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
FLEET_MAX = 64  # workers of one side (engine/scenarios/fleet.py MAX_REPLICAS)
MAX_RATE = 1e6  # requests/s, the engine's limit
SLO = number(0.001, 1e9)  # ms, the engine's range for an SLO
PRICE = number(0.01, 1e6)  # USD per accelerator-hour (the catalogue takes a positive price)
SCHEDULER = {  # name: (reader: the engine's bounds, engine/catalog/scheduler.py)
    "max_num_seqs": number(1, 16_384, whole=True),
    "max_batched_tokens": number(1, 1_048_576, whole=True),
    "block_size": number(1, 1024, whole=True),
}
DEFAULTS = {"model": "Llama-3.1-70B", "hardware": "H100", "tp": 4, "profile": profiles.DEFAULT}
WORKLOAD = {"input_tokens": 1500, "output_tokens": 300, "rate": 3.0, "concurrency": 32}


def read_on_off(text: str) -> str:
    word = text.strip().lower()
    if word not in ON_OFF:
        raise ParamError(_("{value} is not on or off").format(value=repr(text[:20])))
    return word


def _whole(lo: int, hi: int):
    return number(lo, hi, whole=True)


SPEC_OFF = "off"
SPEC_CHOICES = (SPEC_OFF, *engine.SPEC_METHODS)
SPEC_TOKENS = 16  # at most, as the engine allows
MAX_TURNS = 100  # turns per multi-turn session, as the engine allows
DRAFT_DEFAULT = "Llama-3.2-1B"


def technique_params(cat: engine.Catalog) -> list[Param]:
    """Speculative decoding and a shared prompt prefix (off and none by default)."""
    return [
        Param("spec_method", choice(SPEC_CHOICES), default=SPEC_OFF),
        Param("spec_tokens", number(1, SPEC_TOKENS, whole=True), write_number),
        Param("spec_acceptance", number(0.01, SPEC_TOKENS + 1), write_number),
        Param("draft_model", mc.llm_reader(cat), default=DRAFT_DEFAULT),
        Param(
            name="prefix_tokens", read=_whole(0, engine.MAX_TOKENS), write=write_number, default=0
        ),
        Param(name="prefix_share", read=number(0.0, 1.0), write=write_number, default=1.0),
        Param(name="session_turns", read=_whole(1, MAX_TURNS), write=write_number, default=1),
    ]


def declare(cat: engine.Catalog, custom: engine.Profile | None = None) -> Link:
    """Every link parameter of the page, in the order the link writes them (`custom`: the
    custom profile a link carried; the page has no assumption widget, so a custom profile's
    every value is a link-only parameter)."""
    degree = _whole(1, engine.MAX_DEGREE)
    tokens = _whole(1, engine.MAX_TOKENS)
    return Link(
        PAGE,
        [
            Param("model", mc.llm_reader(cat), default=DEFAULTS["model"]),
            mc.param(),
            lp.hardware(cat, DEFAULTS["hardware"]),
            Param(name="tp", read=degree, write=write_number, default=DEFAULTS["tp"]),
            Param(name="pp", read=degree, write=write_number, default=1),
            *lp.moe_split(),
            lp.number_format(),
            lp.kv_format(),
            *profiles.params(
                custom,
                skip=assumptions.SERVING_OVERRIDES,
                keys=engine.PROFILE_KEYS,
                default=DEFAULTS["profile"],
            ),
            *(assumptions.param(name) for name in assumptions.SERVING_OVERRIDES),
            *(Param(name, reader, write_number) for name, reader in SCHEDULER.items()),
            Param("chunked_prefill", read_on_off),
            Param("mode", choice(MODES), default="open"),
            Param(
                name="rate",
                read=number(0.001, MAX_RATE),
                write=write_number,
                default=WORKLOAD["rate"],
            ),
            Param(name="burstiness", read=number(0.01, 100.0), write=write_number, default=1.0),
            Param(
                name="concurrency",
                read=_whole(1, MAX_REQUESTS),
                write=write_number,
                default=WORKLOAD["concurrency"],
            ),
            Param(
                name="input_tokens",
                read=tokens,
                write=write_number,
                default=WORKLOAD["input_tokens"],
            ),
            Param(
                name="output_tokens",
                read=tokens,
                write=write_number,
                default=WORKLOAD["output_tokens"],
            ),
            Param(name="length_spread", read=number(0.0, 0.99), write=write_number, default=0.0),
            Param(name="requests", read=_whole(1, MAX_REQUESTS), write=write_number, default=2000),
            Param(name="seed", read=_whole(0, MAX_SEED), write=write_number, default=0),
            Param(name="slo_ttft_ms_p90", read=SLO, write=write_number, default=2000.0),
            Param(name="slo_tpot_ms_p99", read=SLO, write=write_number, default=100.0),
            Param("price", PRICE, write_number),
            Param(
                name="target_rate", read=number(0.001, MAX_RATE), write=write_number, default=20.0
            ),
            Param("fleet", read_on_off, default="off"),
            Param(name="prefill_workers", read=_whole(1, FLEET_MAX), write=write_number, default=1),
            Param(name="prefill_tp", read=degree, write=write_number),
            Param(name="decode_workers", read=_whole(1, FLEET_MAX), write=write_number, default=1),
            Param(name="decode_tp", read=degree, write=write_number),
            Param("router", choice(engine.ROUTERS), default="least-outstanding"),
            *technique_params(cat),
            *lp.custom_specs(),
        ],
    )
