"""The LLM lessons' experiments: 2 "Two Phases, One Request", 3 "The KV-Cache" and 5
"Quantization".

Numbers from engine.decode / engine.decode_sweep (the tutorial's LLM view: one prefill, one
decode step) and engine.solve; charts from ui.charts (the roofline, stacked memory bars).
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

import engine
from ui.charts.lines import Series, stacked_bars_figure
from ui.charts.roofline import roof_table, roofline_figure
from ui.core.downloads import download_csv
from ui.learn.content import Outcome
from ui.learn.link import HARDWARE, LLM_PRECISIONS
from ui.links.params import Link
from ui.widgets.pickers import number_input
from ui.words.format import fmt
from ui.words.i18n import N_, _
from ui.words.text import bound

LLAMA = "Llama-3.1-8B"
PHASES = (N_("prefill"), N_("decode"))  # engine column prefixes, shown translated
CONTEXTS = [512, 2048, 4096, 8192, 16384, 32768, 65536, 131072]  # the chapter's sweep


def phase_points(d: dict, hw: str, label: str) -> pd.DataFrame:
    """A decode result's two phases as roofline points (the engine's columns, renamed)."""
    rows = []
    for phase in PHASES:
        rows.append(
            {
                "hardware": hw,
                "label": label.format(phase=_(phase)),
                "bottleneck": d[f"{phase}_bottleneck"],
                "arithmetic_intensity_flop_per_byte": d[
                    f"{phase}_arithmetic_intensity_flop_per_byte"
                ],
                "attainable_tflops": d[f"{phase}_attainable_tflops"],
                "achieved_tflops": d[f"{phase}_achieved_tflops"],
                "latency_ms": d["ttft_ms" if phase == "prefill" else "tpot_ms"],
                "t_overhead_ms": d[f"{phase}_t_overhead_ms"],
                "overhead_share": d[f"{phase}_overhead_share"],
                "peak_tflops": d["peak_tflops"],
                "effective_peak_tflops": d["effective_peak_tflops"],
                "efficiency": d["assumptions"]["efficiency"],
                "memory_bandwidth_bytes_per_s": d["memory_bandwidth_bytes_per_s"],
            }
        )
    return pd.DataFrame(rows)


def _pick_hardware(link: Link, cat, lesson: str, where) -> str:
    return where.selectbox(
        _("Accelerator"),
        HARDWARE[lesson],
        key=link.key("hardware"),
        format_func=lambda h: cat.hardware[h].name,
    )


def two_phases(link: Link, cat) -> Outcome:
    """Lesson 2: Llama-3.1-8B's prefill and decode step on one accelerator."""
    a, b, c = st.columns(3)
    hw = _pick_hardware(link=link, cat=cat, lesson="2", where=a)
    with b:
        context = int(number_input(link, "context", _("Prompt (tokens)"), step=512))
    precision = c.selectbox(_("Precision"), LLM_PRECISIONS, key=link.key("precision"))
    d = engine.decode(
        model=LLAMA, hardware=hw, batch_size=1, context=context, precision=precision, catalog=cat
    ).as_dict()
    st.markdown(
        _(
            "**TTFT {ttft}** (prefill, {prefill}) · **TPOT {tpot}** (decode, {decode}) · "
            "{tokens} per user"
        ).format(
            ttft=fmt(d["ttft_ms"] * 1e-3, "s"),
            prefill=bound(d["prefill_bottleneck"]),
            tpot=fmt(d["tpot_ms"] * 1e-3, "s"),
            decode=bound(d["decode_bottleneck"]),
            tokens=fmt(d["tokens_per_s"], "tokens/s"),
        )
    )
    points = phase_points(d, hw, "{phase}")
    names = {hw: cat.hardware[hw].name}
    title = _("Roofline: {model} on {hardware}, {precision}").format(
        model=LLAMA, hardware=names[hw], precision=precision
    )
    st.plotly_chart(
        roofline_figure(
            points=points, roofs=roof_table(points, names), convention="mac2", title=title
        ),
        key="l2",
    )
    gpus = ("A100", "H100", "H200")
    table = engine.decode_sweep(
        models=LLAMA, hardware=list(gpus), batch_sizes=[1], contexts=[context], catalog=cat
    )
    shown = pd.DataFrame(
        {
            _("Accelerator"): [cat.hardware[h].name for h in table["hardware"]],
            _("TTFT"): [fmt(v * 1e-3, "s") for v in table["ttft_ms"]],
            _("TPOT"): [fmt(v * 1e-3, "s") for v in table["tpot_ms"]],
        }
    )
    st.dataframe(shown, hide_index=True, key="l2_table")
    download_csv(table, f"lesson_2_prompt_{context}.csv", "learn:l2_csv")
    return _phases_outcome(cat=cat, hw=hw, context=context, precision=precision)


def _speedups(slow: dict, fast: dict) -> str:
    """How many times faster `fast` is than `slow`: TTFT / TPOT."""
    return " / ".join(fmt(slow[k] / fast[k], "×") for k in ("ttft_ms", "tpot_ms"))


def _phases_outcome(cat, hw: str, context: int, precision: str) -> Outcome:
    by = {
        h: engine.decode(model=LLAMA, hardware=h, batch_size=1, context=2048, catalog=cat).as_dict()
        for h in ("A100", "H100", "H200")
    }
    a, h, h2 = by["A100"], by["H100"], by["H200"]
    ai = "{prefill} / {decode}".format(
        prefill=fmt(h["prefill_arithmetic_intensity_flop_per_byte"], "FLOP/B"),
        decode=fmt(h["decode_arithmetic_intensity_flop_per_byte"], "FLOP/B"),
    )
    ours = {
        "ttft": fmt(h["ttft_ms"] * 1e-3, "s"),
        "tpot": fmt(h["tpot_ms"] * 1e-3, "s"),
        "intensity": ai,
        "a100_h100": _speedups(a, h),
        "h100_h200": _speedups(h, h2),
    }
    values = {"kv": fmt(h["kv_cache_bytes"], "B")}
    answers = {
        "ttft": h["ttft_ms"],
        "ratio": a["tpot_ms"] / h["tpot_ms"],
        "phase": 0 if h["prefill_bottleneck"] == "compute" else 1,
    }
    query = {"model": LLAMA, "hardware": hw, "batch": "1", "input_tokens": str(context)}
    # /decode takes number formats: the lesson's int4 (4-bit weights) is its w4a16
    query |= {"output_tokens": "256", "precision": engine.FORMAT_ALIASES.get(precision, precision)}
    query |= {"profile": engine.TUTORIAL_PROFILE}  # the lesson's assumptions on the page
    pages = [(_("LLM decode"), "pages/decode.py", query)]
    command = (
        f"python -m engine decode --model {LLAMA} --hardware {hw} --batch-size 1 "
        f"--context {context} --precision {precision} --format table"
    )
    return Outcome(ours=ours, values=values, answers=answers, pages=pages, command=command)


def kv_cache(link: Link, cat) -> Outcome:
    """Lesson 3: weights and KV cache against the usable memory, context by context."""
    a, b, c = st.columns(3)
    hw = _pick_hardware(link=link, cat=cat, lesson="3", where=a)
    with b:
        batch = int(number_input(link, "batch", _("Users (batch)"), step=1))
    kv = c.selectbox(
        _("KV-cache precision"), ("fp16", "fp8", "int8", "int4"), key=link.key("kv_precision")
    )
    rows = engine.decode_sweep(
        models=LLAMA,
        hardware=hw,
        batch_sizes=[batch],
        contexts=CONTEXTS,
        kv_precision=kv,
        catalog=cat,
    )
    usable = float(rows["usable_memory_bytes"].iloc[0])
    parts = [
        Series(name=_("Weights"), values=rows["weight_bytes"] / 1e9, unit="B", scale=1e9),
        Series(name=_("KV cache"), values=rows["kv_cache_bytes"] / 1e9, unit="B", scale=1e9),
    ]
    title = _("Memory of {users} users: {model} on {hardware}").format(
        users=f"{batch:,}", model=LLAMA, hardware=cat.hardware[hw].name
    )
    figure = stacked_bars_figure(
        [f"{c:,}" for c in rows["context"]],
        parts,
        title=title,
        y_title=_("Memory (GB)"),
        limit=(_("usable"), usable / 1e9),
        limit_scale=1e9,
    )
    st.plotly_chart(figure, key="l3")
    table = pd.DataFrame(
        {
            _("Context (tokens)"): [f"{c:,}" for c in rows["context"]],
            _("KV cache"): [fmt(v, "B") for v in rows["kv_cache_bytes"]],
            _("Fits"): [_("yes") if f else _("no (out of memory)") for f in rows["fits_in_memory"]],
            _("Most users at this context"): [f"{int(v):,}" for v in rows["max_batch_at_context"]],
        }
    )
    st.dataframe(table, hide_index=True, key="l3_table")
    download_csv(rows, f"lesson_3_{hw}_batch_{batch}.csv", "learn:l3_csv")
    return _kv_outcome(cat=cat, hw=hw, batch=batch, kv=kv)


def _kv_outcome(cat, hw: str, batch: int, kv: str) -> Outcome:
    long = engine.decode(
        model=LLAMA, hardware="H100", batch_size=1, context=131072, catalog=cat
    ).as_dict()
    short = engine.decode(
        model=LLAMA, hardware="H100", batch_size=1, context=2048, catalog=cat
    ).as_dict()
    h200 = engine.decode(
        model=LLAMA, hardware="H200", batch_size=1, context=131072, catalog=cat
    ).as_dict()
    h200_8 = engine.decode(
        model=LLAMA, hardware="H200", batch_size=1, context=131072, precision="int8", catalog=cat
    ).as_dict()
    big = engine.decode(
        model="Llama-3.1-70B", hardware="H100", batch_size=1, context=4096, catalog=cat
    ).as_dict()
    ours = {
        "per_token": fmt(long["kv_cache_bytes_per_token"], "B"),
        "long": _("{kv} against {weights}").format(
            kv=fmt(long["kv_cache_bytes"], "B"), weights=fmt(long["weight_bytes"], "B")
        ),
        "one_user": str(long["max_batch_at_context"]),
        "short": f"{short['max_batch_at_context']:,}",
    }
    values = {
        "weights": fmt(long["weight_bytes"], "B"),
        "users": str(long["max_batch_at_context"]),  # at 128K
        "short_kv": fmt(short["kv_cache_bytes"], "B"),  # one user's cache at 2,048 tokens
        "short_users": f"{short['max_batch_at_context']:,}",
    }
    answers = {
        "h200": h200["max_batch_at_context"],
        "h200_int8": h200_8["max_batch_at_context"],
        "llama70": big["max_batch_at_context"],
    }
    query = {"model": LLAMA, "hardware": hw, "batch": str(batch), "input_tokens": "32768"}
    query |= {"output_tokens": "256", "kv_precision": kv, "profile": engine.TUTORIAL_PROFILE}
    pages = [(_("LLM decode"), "pages/decode.py", query)]
    command = (
        f"python -m engine decode --model {LLAMA} --hardware {hw} --batch-size {batch} "
        f"--context 131072 --kv-precision {kv} --format table"
    )
    return Outcome(ours=ours, values=values, answers=answers, pages=pages, command=command)


def quantization(link: Link, cat) -> Outcome:
    """Lesson 5: one precision against fp16, for a memory-bound and a compute-bound workload."""
    precision = st.selectbox(_("Precision"), LLM_PRECISIONS[1:], key=link.key("precision"))
    pair = ("fp16", precision)
    decode = {
        p: engine.decode(
            model=LLAMA, hardware="H100", batch_size=1, context=2048, precision=p, catalog=cat
        )
        for p in pair
    }
    solve = {
        p: engine.solve(
            model="ResNet-50", hardware="A100", batch_size=256, precision=p, catalog=cat
        )
        for p in pair
    }
    # one chart under the other: two to a row leave a roofline ~200 px wide on a laptop's half
    # screen, too narrow for its title and log ticks
    frames = [phase_points(decode[p].as_dict(), f"H100 · {p}", p).iloc[[1]] for p in pair]
    points = pd.concat(frames, ignore_index=True)
    names = {f"H100 · {p}": f"H100 · {p}" for p in pair}
    title = _("Decode step (tutorial's LLM view), {model} on H100").format(model=LLAMA)
    st.plotly_chart(
        roofline_figure(
            points=points, roofs=roof_table(points, names), convention="mac2", title=title
        ),
        key="l5a",
    )
    rows = engine.sweep(
        models="ResNet-50", hardware="A100", batch_sizes=[256], precisions=list(pair), catalog=cat
    )
    rows = rows.assign(hardware=[f"A100 · {p}" for p in rows["precision"]])
    rows = rows.assign(label=list(rows["hardware"]))
    names = {h: h for h in rows["hardware"]}
    title = _("ResNet-50, batch 256 on A100")
    st.plotly_chart(
        roofline_figure(
            points=rows, roofs=roof_table(rows, names), convention="catalog", title=title
        ),
        key="l5b",
    )
    speed = {
        "decode": decode["fp16"].tpot_s / decode[precision].tpot_s,
        "solve": solve["fp16"].latency_s / solve[precision].latency_s,
    }
    st.markdown(
        _("**{precision} over fp16:** decode {decode} faster · ResNet-50 {solve} faster").format(
            precision=precision, decode=fmt(speed["decode"], "×"), solve=fmt(speed["solve"], "×")
        )
    )
    return _quant_outcome(cat, precision)


def _quant_outcome(cat, precision: str) -> Outcome:
    tpot = {
        p: engine.decode(
            model=LLAMA, hardware="H100", batch_size=1, context=2048, precision=p, catalog=cat
        ).tpot_s
        for p in LLM_PRECISIONS
    }
    lat = {
        p: engine.solve(
            model="ResNet-50", hardware="A100", batch_size=256, precision=p, catalog=cat
        ).latency_s
        for p in LLM_PRECISIONS
    }
    ours = {
        "decode": ", ".join(fmt(tpot["fp16"] / tpot[p], "×") for p in LLM_PRECISIONS[1:]),
        "train": ", ".join(fmt(lat["fp16"] / lat[p], "×") for p in LLM_PRECISIONS[1:]),
        "accuracy": _("not modelled"),
    }
    answers = {"int4": tpot["fp16"] / tpot["int4"], "int8_resnet": lat["int8"] * 1e3}
    query = {"model": LLAMA, "hardware": "H100", "batch": "1", "input_tokens": "2048"}
    query |= {"output_tokens": "256", "precision": engine.FORMAT_ALIASES.get(precision, precision)}
    query |= {"profile": engine.TUTORIAL_PROFILE}
    solve_query = {"model": "ResNet-50", "hardware": "A100", "batch": "256", "precision": precision}
    pages = [
        (_("LLM decode"), "pages/decode.py", query),
        (_("Single solve"), "pages/solve.py", solve_query),
    ]
    command = (
        f"python -m engine decode --model {LLAMA} --hardware H100 --batch-size 1 "
        f"--context 2048 --precision {precision} --format table"
    )
    return Outcome(ours=ours, values={}, answers=answers, pages=pages, command=command)
