"""The serving model: whole requests of a decoder LLM on TP×PP accelerators, per operator.

A static batch of B sequences with I input and O output tokens: TTFT is the prefill of B·I
tokens, then O−1 decode steps at contexts I+1 … I+O−1, each the sum of its operators' own
rooflines (engine/ops.py) plus per-layer and dispatch overheads plus communication
(engine/parallel.py); the sum over the steps is in closed form. The kernel `request_terms` takes
Python floats (the scalar `serve`) or numpy arrays (engine/serve_sweep.py), so both agree. The
model, its conventions and defaults are in docs/model.md, "Serving model".
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from engine import ops, parallel
from engine import serve_inputs as si
from engine.specs import Assumptions

BOUNDS = ("compute", "memory", "communication", "overhead", "none")
# Row-level warnings, one bit each (the sweep keeps the bits; the text is looked up once).
WARNINGS = (
    "no peak listed for this precision: a slower one's is used (see peak_precision)",
    "tp beyond one node's devices: all-reduces modelled on the in-node link (optimistic)",
    "does not fit: memory per device exceeds the usable memory (capacity less the reserve)",
    "input + output tokens exceed the model's trained context length",
    "one output token: the prefill produces it and no decode step runs, so TPOT and "
    "tokens/s per user are undefined (NaN)",
    "fewer KV heads than tensor-parallel devices: each device holds a replicated KV head",
    "MLA's latent KV cache is replicated on every tensor-parallel device",
)
NAN = float("nan")


def peak_of(op, hw: dict):
    """The datasheet peak an operator runs at: attention on 16-bit (or wider) activations."""
    return hw["peak_attn"] if op.cls == "attention" else hw["peak"]


def _rates(hw: dict, eta: dict) -> dict:
    """Achievable FLOP/s per operator class: its datasheet peak times its efficiency."""
    return {c: (hw["peak_attn"] if c == "attention" else hw["peak"]) * e for c, e in eta.items()}


def bound_code(parts, xp):
    """Index of the largest of (compute, memory, communication, overhead)."""
    code, best = 0, parts[0]
    for i, part in enumerate(parts[1:], 1):
        code = xp.where(part > best, i, code)
        best = xp.maximum(best, part)
    return code


def step_lists(s, sc, xp, phases=("prefill", "decode")) -> tuple[list, ...]:
    """The operators of the prefill (B·I tokens) and of a decode step (B tokens), without
    those no layer carries."""
    sizes = {"tp": sc["tp"], "bw": sc["bw"], "b_kv": sc["b_kv"], "ba": sc["ba"], "xp": xp}
    B, out = sc["B"], []
    for phase in phases:
        S = sc["I"] if phase == "prefill" else None
        step = ops.step_ops(s, T=B if S is None else B * S, B=B, prefill_tokens=S, **sizes)
        out.append([op for op in step if (op.count if xp is ops.SCALAR else xp.any(op.count))])
    return tuple(out)


def prefill_terms(s, hw, sc, eta, xp, step) -> dict:
    """TTFT: the prefill of B·I tokens as one step (constants per operator)."""
    T = sc["B"] * sc["I"]
    t_ops = compute = memory = flops = nbytes = 0.0
    rates = _rates(hw, eta)
    for op in step:
        moved = op.mw + op.ma + op.mk0
        g, m = op.f0 / rates[op.cls], moved / hw["bandwidth"]
        t_ops = t_ops + op.count * xp.maximum(g, m)
        compute, memory = compute + op.count * g, memory + op.count * m
        flops, nbytes = flops + op.count * op.f0, nbytes + op.count * moved
    comm = parallel.step_comm_s(s, T, sc["tp"], sc["pp"], sc["ba"], hw["link_bw"], hw["link_lat"])
    overhead = s["L"] * hw["tau"] + hw["dispatch"]
    ttft = t_ops + comm + overhead
    return {
        "ttft_s": ttft,
        "prefill_comm_s": comm,
        "prefill_overhead_share": overhead / ttft,
        "prefill_flop": flops,
        "prefill_bytes": nbytes,
        "prefill_bound": bound_code((compute, memory, comm, overhead), xp),
    }


def decode_terms(s, hw, sc, eta, xp, step) -> dict:
    """The O−1 decode steps at contexts I+1 … I+O−1, summed in closed form."""
    B, a, b = sc["B"], sc["I"] + 1.0, sc["I"] + sc["O"] - 1.0
    steps = sc["O"] - 1.0
    t_ops = compute = memory = flops = nbytes = 0.0  # summed over the steps
    s_t = s_c = s_m = s_f = s_b = 0.0  # one step of the context-independent operators
    rates = _rates(hw, eta)
    for op in step:
        peak, moved, k = rates[op.cls], op.mw + op.ma + op.mk0, op.count
        g0, m0 = op.f0 / peak, moved / hw["bandwidth"]
        if op.layers in ("global", "local"):  # attention: lines in the context
            g1, m1 = op.f1 / peak, op.mk1 / hw["bandwidth"]
            n, x = ops.context_basis(a, b, op.w, xp)  # steps, Σ min(c, w)
            t_ops = t_ops + k * ops.max_line_sum(g0, g1, m0, m1, a, b, op.w, xp)
            compute, memory = compute + k * (g0 * n + g1 * x), memory + k * (m0 * n + m1 * x)
            flops = flops + k * (op.f0 * n + op.f1 * x)
            nbytes = nbytes + k * (moved * n + op.mk1 * x)
        else:
            s_t, s_c, s_m = s_t + k * xp.maximum(g0, m0), s_c + k * g0, s_m + k * m0
            s_f, s_b = s_f + k * op.f0, s_b + k * moved
    t_ops, compute, memory = t_ops + steps * s_t, compute + steps * s_c, memory + steps * s_m
    flops, nbytes = flops + steps * s_f, nbytes + steps * s_b
    comm = parallel.step_comm_s(s, B, sc["tp"], sc["pp"], sc["ba"], hw["link_bw"], hw["link_lat"])
    overhead = s["L"] * hw["tau"] + hw["dispatch"]
    total = t_ops + steps * (comm + overhead)
    per = xp.maximum(steps, 1.0)  # O = 1: no step; the means below are NaN then
    none = steps < 0.5
    tpot = xp.where(none, NAN, total / per)
    code = bound_code((compute, memory, steps * comm, steps * overhead), xp)
    return {
        "decode_total_s": total,
        "tpot_s": tpot,
        "decode_comm_s": xp.where(none, NAN, comm),
        "decode_comm_share": comm / tpot,
        "decode_overhead_share": overhead / tpot,
        "decode_flop_per_step": xp.where(none, NAN, flops / per),
        "decode_bytes_per_step": xp.where(none, NAN, nbytes / per),
        "decode_bound": xp.where(none, 4, code),
        "experts_touched_per_layer": ops.experts_touched(s, B),
    }


def warning_bits(s, hw, sc, fits, xp):
    """The WARNINGS that apply, as an integer of bits."""
    tp = sc["tp"]
    flags = (
        hw["fallback"],
        tp > hw["devices_per_node"],
        1.0 - fits,
        sc["I"] + sc["O"] > s["context_length"],
        sc["O"] < 1.5,
        (s["mla"] < 0.5) & (s["K"] < tp),
        (s["mla"] > 0.5) & (tp > 1.5),
    )
    bits = 0
    for i, flag in enumerate(flags):
        bits = bits + (flag > 0) * (1 << i)
    return bits


def warning_list(bits: int, notes: tuple[str, ...] = ()) -> list[str]:
    """The call-wide notes, then the WARNINGS whose bits are set (the sweep joins them: '; ')."""
    return list(notes) + [w for i, w in enumerate(WARNINGS) if bits >> i & 1]


def request_terms(s: dict, hw: dict, sc: dict, eta: dict, xp, steps=None) -> dict:
    """Everything about one request (or a grid of them), in SI units.

    Args:
        s: ops.shape_values() plus context_length (floats or arrays).
        hw: peak, peak_attn (FLOP/s), bandwidth (bytes/s, times the bandwidth efficiency),
            capacity (bytes), reserve, link_bw (bytes/s, times the link efficiency), link_lat
            (s), dispatch (s), tau (s per layer), devices_per_node, fallback (0/1).
        sc: B, I, O, tp, pp and bw, b_kv, ba (bytes per weight, KV and activation element).
        eta: serve_inputs.eta_by_class().
        xp: ops.SCALAR or numpy.
        steps: step_lists(s, sc, xp) if already built.
    """
    prefill, decode = steps or step_lists(s, sc, xp)
    pre = prefill_terms(s, hw, sc, eta, xp, prefill)
    dec = decode_terms(s, hw, sc, eta, xp, decode)
    mem = parallel.memory_terms(s, hw, sc, decode, xp)
    devices = sc["tp"] * sc["pp"]
    e2e = pre["ttft_s"] + dec.pop("decode_total_s")
    out_tokens = sc["B"] * sc["O"]
    return (
        pre
        | dec
        | mem
        | {
            "devices": devices,
            "e2e_latency_s": e2e,
            "output_tokens_per_s": out_tokens / e2e,
            "output_tokens_per_s_per_gpu": out_tokens / e2e / devices,
            "tokens_per_s_per_user": 1.0 / dec["tpot_s"],
            "pp_bubble_fraction": parallel.bubble_fraction(sc["pp"]),
            "warning_bits": warning_bits(s, hw, sc, mem["fits_in_memory"], xp),
        }
    )


# The result's metric keys in order; each comes from the SI term of the same name, except the
# milliseconds (from seconds), the bottleneck words (from codes) and fits_in_memory (a bool).
METRIC_KEYS = (
    "ttft_ms", "tpot_ms", "e2e_latency_ms", "output_tokens_per_s", "output_tokens_per_s_per_gpu",
    "tokens_per_s_per_user", "prefill_bottleneck", "decode_bottleneck", "prefill_comm_ms",
    "decode_comm_ms", "decode_comm_share", "prefill_overhead_share", "decode_overhead_share",
    "prefill_flop", "prefill_bytes", "decode_flop_per_step", "decode_bytes_per_step",
    "experts_touched_per_layer", "pp_bubble_fraction", "kv_cache_bytes",
    "kv_cache_bytes_per_device", "weight_bytes_per_device", "memory_per_device_bytes",
    "memory_capacity_bytes", "usable_memory_bytes", "fits_in_memory",
)  # fmt: skip
METRICS = tuple(  # (key, SI term, scale; None: not a number)
    (k, k[:-3] + "_s", 1e3) if k.endswith("_ms")
    else (k, k.replace("bottleneck", "bound"), None) if k.endswith("bottleneck")
    else (k, k, None if k == "fits_in_memory" else 1.0)
    for k in METRIC_KEYS
)  # fmt: skip
ID_KEYS = ("model", "hardware", "devices", "tp", "pp", "batch_size", "input_tokens",
           "output_tokens", "precision", "kv_precision", "peak_precision", "profile")  # fmt: skip
KEYS = ID_KEYS + tuple(key for key, _, _ in METRICS)


@dataclass(frozen=True, slots=True)
class ServeResult:
    """One request's serving metrics; `as_dict()` is the CLI's JSON object (a contract).

    `values` holds ID_KEYS then the METRICS keys (SI-scaled as named: _ms, _bytes, per_s);
    `result["ttft_ms"]` reads one.
    """

    values: dict
    assumptions: dict
    warnings: tuple[str, ...]

    def __getitem__(self, key: str):
        return self.values[key]

    def as_dict(self) -> dict[str, object]:
        return dict(self.values) | {
            "assumptions": dict(self.assumptions),
            "warnings": list(self.warnings),
        }


def serve(
    model,
    hardware,
    *,
    tp: int = 1,
    pp: int = 1,
    batch_size: int = 1,
    input_tokens: int,
    output_tokens: int,
    precision: str = "fp16",
    kv_precision: str | None = None,
    profile: str = "tutorial",
    assumptions: Assumptions | None = None,
    catalog=None,
    **overrides: object,
) -> ServeResult:
    """One static batch of requests on TP×PP accelerators (docs/model.md, "Serving model").

    Args:
        model, hardware: ids, or a ModelSpec with `arch` (or an Architecture), a HardwareSpec.
        tp, pp, batch_size: parallel degrees (devices = tp·pp); sequences in the static batch.
        input_tokens, output_tokens: I and O per sequence (O = 1: the prefill only).
        precision, kv_precision: weights (and the compute peak); KV cache (default: weights).
        profile, assumptions: a profile name (its assumptions when `assumptions` is None).
        catalog: where ids are looked up (the default catalogue if None).
        **overrides: assumptions by their user names (engine.api.ASSUMPTION_NAMES).
    """
    st = si.setup(precision, kv_precision, assumptions, profile, overrides)
    name, arch, hw, tp, pp = si.placement(model, hardware, tp, pp, catalog)
    b = si.check_whole(batch_size, "batch_size", si.MAX_BATCH)
    i = si.check_whole(input_tokens, "input_tokens", si.MAX_TOKENS)
    o = si.check_whole(output_tokens, "output_tokens", si.MAX_TOKENS)
    hwv = si.hardware_values(hw, st.precision, st.assumptions)
    sc = {"B": float(b), "I": float(i), "O": float(o), "tp": float(tp), "pp": float(pp)}
    sc |= si.element_bytes(st.precision, st.kv_precision)
    steps = _steps(arch, b, i, tp, st.precision, st.kv_precision)
    t = request_terms(si.shapes(arch), hwv, sc, si.eta_by_class(st.assumptions), ops.SCALAR, steps)
    ids = (name, hw.id, tp * pp, tp, pp, b, i, o, st.precision, st.kv_precision)
    return _result(t, (*ids, hwv["peak_precision"], st.profile), st)


def _result(t: dict, ids: tuple, st) -> ServeResult:
    values = dict(zip(ID_KEYS, ids, strict=True))  # then METRICS: the documented order
    for key, term, scale in METRICS:
        v = t[term]
        values[key] = v * scale if scale else BOUNDS[v] if term.endswith("_bound") else bool(v)
    warnings = warning_list(int(t["warning_bits"]), st.notes)
    return ServeResult(values, dict(si.echo(st.assumptions)), tuple(warnings))


def _steps(arch, batch: int, tokens: int, tp: int, precision: str, kv_precision: str):
    """The operator lists of one scalar scenario (pure and immutable: cached across calls)."""
    return _ops_of(arch, batch, tokens, tp, precision, kv_precision, "prefill") + _ops_of(
        arch, batch, 0, tp, precision, kv_precision, "decode"
    )


@functools.lru_cache(maxsize=512)
def _ops_of(arch, batch, tokens, tp, precision, kv_precision, phase) -> tuple:
    sc = {"B": float(batch), "I": float(tokens), "tp": float(tp)}
    sc |= si.element_bytes(precision, kv_precision)
    return step_lists(si.shapes(arch), sc, ops.SCALAR, (phase,))
