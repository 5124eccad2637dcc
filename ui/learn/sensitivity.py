"""The sensitivity lessons' experiments: 9 "Where to Invest: Sensitivity Analysis" and 10 "GPU
vs. Wafer-Scale".

Numbers from engine.sensitivity, engine.synthesis, engine.serve and
engine.decode_crossover_batch (the serving model, weight streaming included); the tornado from
ui.charts.tornado, the tables from the serving page's Sensitivity section
(ui/widgets/sensitivity.py).
"""

from __future__ import annotations

import dataclasses

import pandas as pd
import streamlit as st

import engine
from ui.charts.lines import Series, lines_figure
from ui.charts.tornado import tornado_figure
from ui.core.downloads import download_csv
from ui.learn.content import Outcome
from ui.learn.link import HARDWARE
from ui.links.params import Link
from ui.widgets import sensitivity as ds
from ui.widgets.pickers import number_input
from ui.words.format import fmt, pct, sig
from ui.words.i18n import N_, _
from ui.words.text import bound

LLAMA_70B, GPT3 = "Llama-3.1-70B", "GPT-3-175B"
REQUEST_70B = engine.Batch(input_tokens=1024, output_tokens=128)
REQUEST_GPT3 = engine.Batch(input_tokens=2048, output_tokens=128)
# The lessons show the tutorial's numbers: every run, link and command names its profile.
TUTORIAL = engine.TUTORIAL_PROFILE
GENERATIONS = ("A100", "H100", "H200")
WAFER_BATCHES = [1, 2, 3, 4, 8, 16, 64, 128]  # the chapter's table, and where the SRAM fills
CHART_BATCHES = [4**k for k in range(9)]  # 1 … 65,536: past B*
YES_NO = (N_("no"), N_("yes"))


def _tpot(ms: float) -> str:
    return fmt(ms * 1e-3, "s")


def invest(link: Link, cat) -> Outcome:
    """Lesson 9: the elasticities of Llama-3.1-70B's batch-1 decode and the inverse roofline."""
    a, b, c = st.columns(3)
    hw = a.selectbox(
        _("Accelerator"),
        HARDWARE["9"],
        key=link.key("hardware"),
        format_func=lambda h: cat.hardware[h].name,
    )
    with b:
        target = float(number_input(link, "target_ms", _("ITL target (ms)")))
    with c:
        step = float(number_input(link, "step_pct", _("Perturbation ± (%)"))) / 100.0
    dep = engine.Deployment(LLAMA_70B, hw, catalog=cat, profile=TUTORIAL)
    each = generations(cat)  # ±10 % on each generation: the picked one's too, unless h differs
    same = step == engine.Perturbation().step
    sens = each[hw] if same else engine.sensitivity(dep, REQUEST_70B, engine.Perturbation(step))
    syn = engine.synthesis(dep, REQUEST_70B, engine.Target(value=target))
    rows = [r for r in sens.rows if r["metric"] == "tpot_ms"]
    title = _("{model} on {hardware}, batch 1: TPOT when each figure moves ±{step}").format(
        model=LLAMA_70B, hardware=cat.hardware[hw].name, step=pct(step)
    )
    st.plotly_chart(tornado_figure(rows=rows, labels=ds.labels(), title=title, step=step), key="l9")
    st.markdown(ds.binding_text(sens, "tpot_ms"))
    st.dataframe(ds.elasticity_table(sens, "tpot_ms"), hide_index=True, key="l9_table")
    download_csv(sens.frame(), f"lesson_9_{hw}_sensitivity.csv", "learn:l9_csv")
    st.markdown(_("**Inverse roofline** for an ITL of {target}:").format(target=_tpot(target)))
    st.dataframe(ds.synthesis_table(syn), hide_index=True, key="l9_synthesis")
    download_csv(syn.frame(), f"lesson_9_{hw}_synthesis.csv", "learn:l9_synth_csv")
    st.dataframe(_generations_table(cat, each), hide_index=True, key="l9_generations")
    return _invest_outcome(cat=cat, each=each, chosen=(hw, target))


def generations(cat) -> dict[str, engine.Sensitivity]:
    """The chapter's section 6: Llama-3.1-70B's elasticities on each generation (±10 %)."""
    return {
        hw: engine.sensitivity(
            engine.Deployment(LLAMA_70B, hw, catalog=cat, profile=TUTORIAL), REQUEST_70B
        )
        for hw in GENERATIONS
    }


def _generations_table(cat, each: dict[str, engine.Sensitivity]) -> pd.DataFrame:
    """Each generation's elasticities, binding figure and TPOT."""
    out = []
    for hw, s in each.items():
        out.append(
            {
                _("Accelerator"): cat.hardware[hw].name,
                _("Bandwidth elasticity"): sig(s.elasticity("memory_bandwidth", "tpot_ms")),
                _("FLOP/s elasticity"): sig(s.elasticity("peak_flops", "tpot_ms")),
                _("Binding"): _(ds.PARAMETER_LABELS[s.binding("tpot_ms")]),
                "TPOT": _tpot(s.baseline["tpot_ms"]),
            }
        )
    return pd.DataFrame(out)


def _invest_outcome(cat, each: dict[str, engine.Sensitivity], chosen: tuple) -> Outcome:
    """The chapter's figures: always its scenario (the A100, ±10 %, 50 ms), whatever is picked
    (`chosen`: the accelerator and target the page's links open)."""
    hw, target = chosen
    dep = engine.Deployment(LLAMA_70B, "A100", catalog=cat, profile=TUTORIAL)
    sens = each["A100"]
    syn = engine.synthesis(dep, REQUEST_70B, engine.Target(parameters=("memory_bandwidth",)))
    base = engine.serve(dep, REQUEST_70B)
    e_bw, e_flops = (sens.elasticity(p, "tpot_ms") for p in ("memory_bandwidth", "peak_flops"))
    row = next(
        r for r in sens.rows if r["parameter"] == "memory_bandwidth" and r["metric"] == "tpot_ms"
    )
    need = syn.required("memory_bandwidth")
    binding = {s.binding("tpot_ms") for s in each.values()}
    ours = {
        "e_bw": sig(e_bw),
        "e_flops": sig(e_flops),
        "ratio": _("no bound (FLOP/s elasticity 0)") if e_flops == 0 else sig(e_bw / e_flops),
        "bw_needed": fmt(need, "B/s"),
        "bw_ratio": fmt(need / cat.hardware["A100"].memory_bandwidth_bytes_per_s, "×"),
        "binding": ", ".join(_(ds.PARAMETER_LABELS[b]) for b in sorted(binding)),
    }
    overhead = base["decode_overhead_ms"]
    values = {
        "share": pct((base["tpot_ms"] - overhead) / base["tpot_ms"]),
        "overhead": _tpot(overhead),
        "plus": pct(-row["change_at_plus_step"]),
        "ridge": fmt(base["effective_ridge_flop_per_byte"], "FLOP/B"),
        "ttft_flops": sig(sens.elasticity("peak_flops", "ttft_ms")),
        "generations": ", ".join(
            f"{sig(each[h].elasticity('memory_bandwidth', 'tpot_ms'))} ({h})" for h in GENERATIONS
        ),
    }
    answers = {"e_bw": e_bw, "bw_tbps": need / 1e12, "upgrade": 0 if e_flops == 0 else 2}
    query = {"model": LLAMA_70B, "hardware": hw, "batch": "1", "input_tokens": "1024"}
    query |= {"profile": TUTORIAL}
    query |= {"output_tokens": "128", "target_tpot_ms": f"{target:g}"}
    pages = [(N_("LLM serving, Sensitivity section"), "pages/decode.py", query)]
    command = (
        f"python -m engine sensitivity --model {LLAMA_70B} --hardware {hw} "
        f"--input-tokens 1024 --output-tokens 128 --target {target:g} --profile {TUTORIAL} "
        "--format table"
    )
    return Outcome(ours=ours, values=values, answers=answers, pages=pages, command=command)


def _wafer_spec(cat, tbps: float) -> engine.HardwareSpec:
    """The catalogue's CS-3 with the injection bandwidth the lesson's field gives."""
    hw = cat.hardware["CS-3"]
    return dataclasses.replace(hw, weight_stream_bandwidth_bytes_per_s=tbps * 1e12)


def wafer(link: Link, cat) -> Outcome:
    """Lesson 10: GPT-3 175B on an H100 and on a CS-3 that streams its weights."""
    a, b = st.columns(2)
    with a:
        batch = int(number_input(link, "batch", _("Batch (sequences)"), step=1))
    with b:
        tbps = float(number_input(link, "stream_tbps", _("CS-3 injection bandwidth (TB/s)")))
    cs3 = _wafer_spec(cat, tbps)
    request = dataclasses.replace(REQUEST_GPT3, batch_size=batch)
    runs = {
        "H100": engine.serve(
            engine.Deployment(GPT3, "H100", catalog=cat, profile=TUTORIAL), request
        ),
        "CS-3": engine.serve(engine.Deployment(GPT3, cs3, catalog=cat, profile=TUTORIAL), request),
    }
    st.dataframe(_side_by_side(cat, runs), hide_index=True, key="l10_table")
    st.plotly_chart(_by_batch_figure(cat, cs3), key="l10")
    table = _wafer_batches(cat, cs3)
    st.markdown(
        _("**CS-3 by batch** (GPT-3, 2,048 + 128 tokens, {tbps} injection):").format(
            tbps=fmt(tbps * 1e12, "B/s")
        )
    )
    st.dataframe(table, hide_index=True, key="l10_batches")
    rows = [
        engine.serve(
            engine.Deployment(GPT3, cs3, catalog=cat, profile=TUTORIAL), engine.Batch(2048, 128, b)
        )
        for b in WAFER_BATCHES
    ]
    download_csv(
        pd.DataFrame([r.as_dict() for r in rows]).drop(columns=["assumptions", "warnings"]),
        f"lesson_10_cs3_{tbps:g}tbps.csv",
        "learn:l10_csv",
    )
    return _wafer_outcome(cat=cat, batch=batch)


def _by_batch_figure(cat, cs3):
    """TPOT against batch on both: the CS-3's flat injection line until compute takes over
    (B*), the H100's HBM line; marks where the SRAM fills and at B*."""
    h100 = engine.Deployment(GPT3, "H100", catalog=cat, profile=TUTORIAL)
    wafer_dep = engine.Deployment(GPT3, cs3, catalog=cat, profile=TUTORIAL)
    tpot = {
        name: [engine.serve(d, engine.Batch(2048, 128, b))["tpot_ms"] for b in CHART_BATCHES]
        for name, d in ((cs3.name, wafer_dep), (cat.hardware["H100"].name, h100))
    }
    series = [Series(name=k, values=v, unit="s", scale=1e-3) for k, v in tpot.items()]
    fit = engine.serve(wafer_dep, REQUEST_GPT3)["max_batch_size"]
    b_star = engine.decode_crossover_batch(wafer_dep, REQUEST_GPT3)
    marks = [(fit + 1, _("SRAM full"))] + ([(b_star, "B*")] if b_star else [])
    return lines_figure(
        CHART_BATCHES,
        series,
        title=_("GPT-3 175B: TPOT against batch (2,048 + 128 tokens)"),
        x_title=_("Batch (sequences)"),
        y_title=_("TPOT (ms)"),
        marks=marks,
    )


def _side_by_side(cat, runs: dict) -> pd.DataFrame:
    rows = []
    for hw, r in runs.items():
        rows.append(
            {
                _("Accelerator"): cat.hardware[hw].name,
                "TPOT": _tpot(r["tpot_ms"]),
                "TTFT": _tpot(r["ttft_ms"]),
                _("Decode bound"): bound(str(r["decode_bottleneck"])),
                _("Weights held per device"): fmt(r["weight_bytes_per_device"], "B"),
                _("Memory per device"): fmt(r["memory_per_device_bytes"], "B"),
                _("Fits"): _(YES_NO[bool(r["fits_in_memory"])]),
            }
        )
    return pd.DataFrame(rows)


def _wafer_batches(cat, cs3) -> pd.DataFrame:
    """The chapter's section 5: the CS-3 by batch (bottleneck, throughput, SRAM use, fits)."""
    out = []
    for b in WAFER_BATCHES:
        r = engine.serve(
            engine.Deployment(GPT3, cs3, catalog=cat, profile=TUTORIAL), engine.Batch(2048, 128, b)
        )
        out.append(
            {
                _("Batch"): f"{b:,}",
                _("Decode bound"): bound(str(r["decode_bottleneck"])),
                "TPOT": _tpot(r["tpot_ms"]),
                _("Output tokens/s"): fmt(r["output_tokens_per_s"], "tokens/s"),
                _("SRAM in use"): pct(r["memory_per_device_bytes"] / r["memory_capacity_bytes"]),
                _("Fits"): _(YES_NO[bool(r["fits_in_memory"])]),
            }
        )
    return pd.DataFrame(out)


def _wafer_outcome(cat, batch: int) -> Outcome:
    """The chapter's figures at its scenario (batch 1, the catalogue's 1.2 TB/s)."""
    cs3_dep = engine.Deployment(GPT3, "CS-3", catalog=cat, profile=TUTORIAL)
    gpu = engine.serve(engine.Deployment(GPT3, "H100", catalog=cat, profile=TUTORIAL), REQUEST_GPT3)
    wafer_r = engine.serve(cs3_dep, REQUEST_GPT3)
    sens = engine.sensitivity(cs3_dep, REQUEST_GPT3, engine.Perturbation(metrics=("tpot_ms",)))
    b_star = engine.decode_crossover_batch(cs3_dep, REQUEST_GPT3)
    stream = cat.hardware["CS-3"].weight_stream_bandwidth_bytes_per_s
    layer_s = wafer_r["weight_bytes_per_device"] / stream  # one layer resident = weights / 96
    e_stream = sens.elasticity("weight_stream_bandwidth", "tpot_ms")
    ours = {
        "gpu_bound": _("{bound}, {tpot}").format(
            bound=bound(str(gpu["decode_bottleneck"])), tpot=_tpot(gpu["tpot_ms"])
        ),
        "wafer_bound": _(ds.PARAMETER_LABELS[sens.binding("tpot_ms")]),
        "injection": fmt(stream, "B/s"),
        "speed": _("H100 {gpu}, CS-3 {wafer}").format(
            gpu=_tpot(gpu["tpot_ms"]), wafer=_tpot(wafer_r["tpot_ms"])
        ),
        "b_star": _("SRAM full after batch {fit}; B* = {b_star}").format(
            fit=wafer_r["max_batch_size"], b_star=f"{b_star:,}" if b_star else "—"
        ),
        "sram": fmt(cat.hardware["CS-3"].memory_capacity_bytes, "B"),
    }
    values = {
        "gpu_tpot": _tpot(gpu["tpot_ms"]),
        "wafer_tpot": _tpot(wafer_r["tpot_ms"]),
        "e_stream": sig(e_stream),
        "e_sram": sig(sens.elasticity("memory_bandwidth", "tpot_ms")),
        "fit_batch": str(wafer_r["max_batch_size"]),
        "b_star": f"{b_star:,}" if b_star else "—",
        "usable": fmt(wafer_r["usable_memory_bytes"], "B"),
    }
    answers = {
        "layer_ms": layer_s * 1e3,
        "wafer_tpot": wafer_r["tpot_ms"],
        "fit_batch": wafer_r["max_batch_size"],
        "faster": 0 if gpu["tpot_ms"] < wafer_r["tpot_ms"] else 1,
    }
    query = {"model": GPT3, "hardware": "CS-3", "batch": str(batch), "input_tokens": "2048"}
    query |= {"profile": TUTORIAL}
    query |= {"output_tokens": "128"}
    pages = [(N_("LLM serving"), "pages/decode.py", query)]
    command = (
        f"python -m engine sensitivity --model {GPT3} --hardware CS-3 --batch-size {batch} "
        f"--input-tokens 2048 --output-tokens 128 --profile {TUTORIAL} --format table"
    )
    return Outcome(ours=ours, values=values, answers=answers, pages=pages, command=command)
