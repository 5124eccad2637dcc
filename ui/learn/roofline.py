"""The whole-model lessons' experiments: 0 "Hello, Roofline" and 1 "The Memory Wall".

Numbers from engine.solve, engine.sweep and engine.compute_bound_batch; charts from the main
pages' builders (ui.charts.roofline, latency_split, sweep).
"""

from __future__ import annotations

import streamlit as st

import engine
from ui.charts.latency_split import latency_breakdown_figure
from ui.charts.roofline import roof_table, roofline_figure
from ui.charts.sweep import intensity_figure, speedup_figure, with_speedup
from ui.learn.content import Outcome
from ui.learn.link import HARDWARE
from ui.links.params import Link
from ui.widgets.pickers import number_input
from ui.words.format import fmt, pct
from ui.words.i18n import _
from ui.words.text import bound

POWERS = [2**i for i in range(9)]  # 1 … 256: the lesson's power-of-two sweep
TUTORIAL_BATCHES = [1, 4, 16, 32, 64, 128, 256]  # the chapters' printed loop


def _hardware(link: Link, cat, lesson: str) -> str:
    ids = HARDWARE[lesson]
    return st.selectbox(
        _("Accelerator"), ids, key=link.key("hardware"), format_func=lambda h: cat.hardware[h].name
    )


def hello(link: Link, cat) -> Outcome:
    """Lesson 0: ResNet-50 on one accelerator, batch 1 and the power-of-two sweep."""
    left, right = st.columns(2)
    with left:
        hw = _hardware(link, cat, "0")
    with right:
        batch = int(number_input(link, "batch", _("Batch size (images)"), step=1))
    batches = sorted({*POWERS, batch})
    rows = engine.sweep("ResNet-50", hw, batches, catalog=cat)
    r = engine.solve("ResNet-50", hw, batch, catalog=cat)
    exact = engine.compute_bound_batch("ResNet-50", hw, catalog=cat)
    first = engine.crossover_batch(rows[rows["batch_size"].isin(POWERS)])
    sweep_first = first["crossover_batch"].iloc[0]
    st.markdown(
        _(
            "**{hardware}, batch {batch}:** {bound}, {latency}, {throughput}; intensity "
            "{intensity} against the effective ridge {ridge}; MFU {mfu}."
        ).format(
            hardware=cat.hardware[hw].name,
            batch=f"{batch:,}",
            bound=bound(r.bottleneck),
            latency=fmt(r.latency_s, "s"),
            throughput=fmt(r.throughput_per_s, "images/s"),
            intensity=fmt(r.arithmetic_intensity_flop_per_byte, "FLOP/B"),
            ridge=fmt(r.as_dict()["effective_ridge_flop_per_byte"], "FLOP/B"),
            mfu=pct(r.mfu),
        )
    )
    names = {hw: cat.hardware[hw].name}
    label = _("{hardware}, batch {batch}")
    points = rows.assign(
        label=[label.format(hardware=names[hw], batch=f"{b:,}") for b in rows["batch_size"]]
    )
    title = _("Roofline: ResNet-50 on {hardware}, fp16").format(hardware=names[hw])
    st.plotly_chart(
        roofline_figure(
            points=points, roofs=roof_table(rows, names), convention="catalog", title=title
        ),
        key="l0",
    )
    d = r.as_dict()
    split = latency_breakdown_figure(d["t_compute_ms"], d["t_memory_ms"], d["t_overhead_ms"])
    st.plotly_chart(split, key="l0_split")
    st.plotly_chart(intensity_figure(rows, sweep_first, "catalog"), key="l0_intensity")
    st.caption(
        _(
            "The chapter prints the batches {tutorial}; the lesson sweeps every power of two, "
            "so the crossover shows where it is. First compute-bound batch: {sweep} in this "
            "sweep, exactly {exact}."
        ).format(tutorial=", ".join(map(str, TUTORIAL_BATCHES)), sweep=sweep_first, exact=exact)
    )
    return _hello_outcome(cat, hw, batch)


def _hello_outcome(cat, hw: str, batch: int) -> Outcome:
    ref = engine.solve("ResNet-50", "A100", 1, catalog=cat)
    big = engine.solve("ResNet-50", "A100", 256, catalog=cat)
    llama = engine.solve("Llama-3.1-8B", "A100", 1, catalog=cat)
    h100 = engine.solve("ResNet-50", "H100", 1, catalog=cat).as_dict()
    d = ref.as_dict()
    h100_sweep = engine.sweep("ResNet-50", "H100", POWERS, catalog=cat)
    exact = engine.compute_bound_batch("ResNet-50", "H100", catalog=cat)
    sweep_first = engine.crossover_batch(h100_sweep)["crossover_batch"].iloc[0]
    ridge = fmt(d["effective_ridge_flop_per_byte"], "FLOP/B")
    ours = {
        "latency": fmt(ref.latency_s, "s"),
        "throughput": fmt(ref.throughput_per_s, "images/s"),
        "intensity": _("{intensity} against {ridge}").format(
            intensity=fmt(ref.arithmetic_intensity_flop_per_byte, "FLOP/B"), ridge=ridge
        ),
        "mfu": f"{pct(ref.mfu)} → {pct(big.mfu)}",
        "cross_a100": str(engine.compute_bound_batch("ResNet-50", "A100", catalog=cat)),
        "cross_h100": _("{sweep} in the sweep; exactly {exact}").format(
            sweep=sweep_first, exact=exact
        ),
        "llama": f"{fmt(llama.latency_s, 's')}, {fmt(llama.throughput_per_s, 'tokens/s')}",
    }
    values = {
        "overhead": pct(ref.overhead_share),
        "exact": str(exact),
        "ridge": fmt(h100["effective_ridge_flop_per_byte"], "FLOP/B"),
    }
    answers = {
        "bound64": ("memory", "compute").index(
            engine.solve("ResNet-50", "A100", 64, catalog=cat).bottleneck
        ),
        "h100": exact,
        "mfu256": big.mfu * 100,
        "llama_ms": llama.latency_s * 1e3,
    }
    pages = [
        (
            _("Single solve"),
            "pages/solve.py",
            {"model": "ResNet-50", "hardware": hw, "batch": str(batch), "precision": "fp16"},
        ),
        (
            _("Batch sweep"),
            "pages/sweep.py",
            {"model": "ResNet-50", "hardware": hw, "batches": ",".join(map(str, POWERS))},
        ),
    ]
    command = f"python -m engine solve --model ResNet-50 --hardware {hw} --batch-size {batch}"
    return Outcome(ours=ours, values=values, answers=answers, pages=pages, command=command)


MODELS = ("Llama-3.1-8B", "ResNet-50")


def memory_wall(link: Link, cat) -> Outcome:
    """Lesson 1: the H100 against the A100 at every batch, in the whole-model view."""
    left, right = st.columns(2)
    with left:
        model = st.selectbox(_("Model"), MODELS, key=link.key("model"))
    with right:
        batch = int(number_input(link, "batch", _("Batch size"), step=1))
    pair = ["A100", "H100"]
    names = {h: cat.hardware[h].name for h in pair}
    rows = engine.sweep(model, pair, sorted({*POWERS, batch}), catalog=cat)
    st.plotly_chart(speedup_figure(with_speedup(rows, "A100"), names, "A100"), key="l1_speedup")
    here = rows[rows["batch_size"] == batch]
    label = _("{hardware}, batch {batch}")
    points = here.assign(
        label=[label.format(hardware=names[h], batch=f"{batch:,}") for h in here["hardware"]]
    )
    title = _("Roofline: {model}, A100 and H100").format(model=model)
    figure = roofline_figure(
        points=points, roofs=roof_table(rows, names), convention="catalog", title=title
    )
    st.plotly_chart(figure, key="l1_roofline")
    return _wall_outcome(cat, model, batch)


def _wall_outcome(cat, model: str, batch: int) -> Outcome:
    a, h = (engine.solve("Llama-3.1-8B", hw, 1, catalog=cat) for hw in ("A100", "H100"))
    b200 = engine.solve("Llama-3.1-8B", "B200", 1, catalog=cat)
    big = engine.sweep(["Llama-3.1-8B", "ResNet-50"], ["A100", "H100"], [256], catalog=cat)
    big = with_speedup(big, "A100").set_index(["model", "hardware"])
    ratio = {m: big.loc[(m, "H100"), "speedup_vs_baseline_ratio"] for m in MODELS}
    da, dh = a.as_dict(), h.as_dict()
    ours = {
        "ratios": _("{flops} and {bandwidth}").format(
            flops=" → ".join(fmt(d["peak_tflops"] * 1e12, "FLOP/s") for d in (da, dh)),
            bandwidth=" → ".join(fmt(d["memory_bandwidth_bytes_per_s"], "B/s") for d in (da, dh)),
        ),
        "latency": f"{fmt(a.latency_s, 's')} / {fmt(h.latency_s, 's')}",
        "speedup": fmt(a.latency_s / h.latency_s, "×"),
        "large_batch": _("{llama} (Llama-3 8B) and {resnet} (ResNet-50) at batch 256").format(
            llama=fmt(ratio["Llama-3.1-8B"], "×"), resnet=fmt(ratio["ResNet-50"], "×")
        ),
    }
    values = {
        "flops": fmt(dh["peak_tflops"] / da["peak_tflops"], "×"),
        "bandwidth": fmt(
            dh["memory_bandwidth_bytes_per_s"] / da["memory_bandwidth_bytes_per_s"], "×"
        ),
        "llama_256": fmt(ratio["Llama-3.1-8B"], "×"),
        "resnet_256": fmt(ratio["ResNet-50"], "×"),
    }
    never = engine.compute_bound_batch("Llama-3.1-8B", "A100", catalog=cat)
    answers = {
        "b200": h.latency_s / b200.latency_s,
        "never": 0 if never is not None and never <= 512 else 1,
    }
    query = {"model": model, "hardware": "A100,H100", "baseline": "A100"}
    query |= {"batches": ",".join(map(str, POWERS)), "view": "tutorial"}
    pages = [(_("Hardware comparison"), "pages/compare.py", query)]
    command = (
        f"python -m engine sweep --model {model} --hardware A100 --hardware H100 "
        f"--batch-sizes {','.join(map(str, POWERS))} --format table"
    )
    return Outcome(ours=ours, values=values, answers=answers, pages=pages, command=command)
