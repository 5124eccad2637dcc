"""The serving model: whole requests of a decoder LLM on TP×PP accelerators, per operator.

A static batch of B sequences with I input and O output tokens: TTFT is the prefill of B·I
tokens, then O−1 decode steps at contexts I+1 … I+O−1, each the sum of its operators' own
rooflines (engine/serving/operators.py) plus per-layer and dispatch overheads plus communication
(engine/serving/parallel.py); the sum over the steps is in closed form. The kernel
(engine/serving/kernel.py) takes Python floats (the scalar `serve`, which folds a deployment once
and caches it: engine/serving/inputs.py) or numpy arrays (engine/serving/sweep.py), so both agree.
The model, its conventions and defaults are in docs/model.md, "Serving model".
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.arrays import SCALAR
from engine.report.messages import Message
from engine.report.result import Result
from engine.scenarios.bind import bind
from engine.scenarios.deployment import Deployment, HardwareRef, ModelRef
from engine.scenarios.requests import Batch
from engine.serving import inputs as si
from engine.serving.kernel import WARNINGS, Warn, evaluate

__all__ = ["BOUNDS", "KEYS", "METRICS", "WARNINGS", "ServeResult", "serve", "warning_list"]

BOUNDS = ("compute", "memory", "communication", "overhead", "none")


def warning_list(bits: int, notes: tuple[Message, ...] = ()) -> list[Message]:
    """The call-wide notes, then the WARNINGS whose bits are set."""
    if not bits:
        return list(notes)
    return list(notes) + [m for w, m in zip(Warn, WARNINGS, strict=True) if bits & w]


# The result's metric keys in order; each comes from the SI term of the same name, except the
# milliseconds (from seconds), the bottleneck words (from codes) and fits_in_memory (a bool).
METRIC_KEYS = (
    "ttft_ms",
    "tpot_ms",
    "e2e_latency_ms",
    "output_tokens_per_s",
    "output_tokens_per_s_per_gpu",
    "tokens_per_s_per_user",
    "prefill_bottleneck",
    "decode_bottleneck",
    "prefill_comm_ms",
    "decode_comm_ms",
    "decode_comm_share",
    "prefill_overhead_share",
    "decode_overhead_share",
    "prefill_flop",
    "prefill_bytes",
    "decode_flop_per_step",
    "decode_bytes_per_step",
    "prefill_arithmetic_intensity_flop_per_byte",
    "decode_arithmetic_intensity_flop_per_byte",
    "prefill_achieved_flop_per_s",
    "decode_achieved_flop_per_s",
    "decode_attainable_flop_per_s",
    "decode_mfu",
    "decode_overhead_ms",
    "decode_tokens_per_s",
    "peak_flop_per_s",
    "achievable_flop_per_s",
    "memory_bandwidth_bytes_per_s",
    "achievable_bytes_per_s",
    "ridge_flop_per_byte",
    "effective_ridge_flop_per_byte",
    "experts_touched_per_layer",
    "pp_bubble_fraction",
    "kv_cache_bytes",
    "kv_cache_bytes_per_device",
    "weight_bytes_per_device",
    "memory_per_device_bytes",
    "memory_capacity_bytes",
    "usable_memory_bytes",
    "runtime_memory_bytes",
    "fits_in_memory",
    "max_batch_size",
)
METRICS = tuple(  # (key, SI term, scale; None: not a number)
    (k, k[:-3] + "_s", 1e3)
    if k.endswith("_ms")
    else (k, k.replace("bottleneck", "bound"), None)
    if k.endswith("bottleneck")
    else (k, k, None if k in ("fits_in_memory", "max_batch_size") else 1.0)
    for k in METRIC_KEYS
)
ID_KEYS = (
    "model",
    "hardware",
    "devices",
    "tp",
    "pp",
    "ep",
    "attention_dp",
    "batch_size",
    "input_tokens",
    "output_tokens",
    "precision",
    "kv_precision",
    "peak_precision",
    "profile",
)
KEYS = ID_KEYS + tuple(key for key, _, _ in METRICS)


@dataclass(frozen=True, slots=True)
class ServeResult(Result):
    """One request's serving metrics; `as_dict()` is the CLI's JSON object (a contract).

    `values` holds ID_KEYS then the METRICS keys (SI-scaled as named: _ms, _bytes, per_s);
    `result["ttft_ms"]` reads one.
    """


def serve(
    deployment: Deployment | ModelRef | None = None,
    hardware: HardwareRef | None = None,
    /,
    batch: Batch | None = None,
    **fields: object,
) -> ServeResult:
    """One static batch of requests on TP×PP accelerators (docs/model.md, "Serving model").

    Args:
        deployment: a Deployment (engine/scenarios/deployment.py), or the keyword form's model
            (an id, a ModelSpec with `arch` or an Architecture) with `hardware` (an id or a
            HardwareSpec) and the Deployment's other fields as keywords: tp, pp, precision,
            kv_precision (default: the weights'), profile, assumptions (the profile's when
            None), catalog, ep and attention_dp (an MoE model's expert parallelism and
            attention data parallelism inside the tp devices), and assumptions by their user
            names (engine/assumptions.py).
        batch: a Batch, or its fields as keywords: batch_size (sequences in the static batch),
            input_tokens and output_tokens (I and O per sequence; O = 1: the prefill only).
    """
    dep, batch = bind((deployment, hardware), fields, Deployment, Batch)
    if batch is None:
        raise ValueError("Batch: give input_tokens, output_tokens")
    p = si.scenario(dep)
    b, i, o = batch.batch_size, batch.input_tokens, batch.output_tokens
    t = evaluate(f=p.folded, B=float(b), n_in=float(i), n_out=float(o), xp=SCALAR)
    return _result(p, (b, i, o), t)


def _result(p: si.Scenario, request: tuple[int, int, int], t: dict) -> ServeResult:
    """The kernel's SI terms as a ServeResult: ids first, then METRICS in the documented
    order (milliseconds, bottleneck words, fits as a bool)."""
    st = p.setup
    ids = (
        p.name,
        p.hw_id,
        p.tp * p.pp,
        p.tp,
        p.pp,
        p.split.ep,
        p.split.attention_dp,
        *request,
        st.precision,
        st.kv_precision,
        p.peak_precision,
        st.profile,
    )
    values = dict(zip(ID_KEYS, ids, strict=True))
    for key, term, scale in METRICS:
        values[key] = t[term] if scale is None else t[term] * scale
    values["prefill_bottleneck"] = BOUNDS[values["prefill_bottleneck"]]
    values["decode_bottleneck"] = BOUNDS[values["decode_bottleneck"]]
    values["fits_in_memory"] = bool(values["fits_in_memory"])
    values["max_batch_size"] = int(values["max_batch_size"])
    warnings = warning_list(int(t["warning_bits"]), st.notes)
    return ServeResult(values, dict(p.echo), tuple(warnings))
