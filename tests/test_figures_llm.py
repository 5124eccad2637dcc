"""Unit tests of the LLM decode page's pure builders (ui/decode/figures.py), without a browser.

Expected values come from the engine (`engine.decode`, `engine.decode_sweep`; the serving page's
curves: `engine.serve_sweep` through ui.decode.view.curves), never typed in;
every figure is re-validated by plotly (the builders skip validation for speed).
"""

from __future__ import annotations

import plotly.graph_objects as go
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import engine
from ui.charts import tables
from ui.decode import figures as fl
from ui.decode import view as sv
from ui.words.format import fmt, fmt_bytes

CATALOG = engine.load_catalog()
LLMS = [m.id for m in CATALOG.models.values() if m.is_decoder_llm]
CONTEXTS, BATCHES = [1024, 4096, 16384, 65536], [2**k for k in range(9)]


def scenario(model="Llama-3.1-8B", hardware="A100", batch=1, context=4096, prompt=1024, **kw):
    """(engine.decode(...).as_dict(), the page's sweep holding this scenario)."""
    r = engine.decode(
        model=model,
        hardware=hardware,
        batch_size=batch,
        context=context,
        prompt=prompt,
        catalog=CATALOG,
        **kw,
    )
    contexts, batches = sorted({*CONTEXTS, context}), sorted({*BATCHES, batch})
    sweep_prompt = prompt if prompt <= contexts[0] else None
    df = engine.decode_sweep(
        models=model,
        hardware=hardware,
        batch_sizes=batches,
        contexts=contexts,
        prompt=sweep_prompt,
        catalog=CATALOG,
        **kw,
    )
    return r.as_dict(), df


def names(fig: go.Figure) -> list[str]:
    return [t.name for t in fig.data]


def trace(fig: go.Figure, prefix: str):
    found = [t for t in fig.data if (t.name or "").startswith(prefix)]
    assert len(found) == 1, (prefix, names(fig))
    return found[0]


def valid(fig: go.Figure) -> go.Figure:
    """`fig`, after plotly's full validation of a copy (the builders skip it; raises if invalid)."""
    go.Figure(fig.to_dict())
    return fig


def test_phase_points_are_the_engines_prefill_and_decode():
    r, _ = scenario()
    points = fl.phase_points(r).set_index("phase")
    assert list(points.index) == ["prefill", "decode"]
    for phase, latency in (("prefill", "ttft_ms"), ("decode", "tpot_ms")):
        p = points.loc[phase]
        ai = r[f"{phase}_arithmetic_intensity_flop_per_byte"]
        assert p["arithmetic_intensity_flop_per_byte"] == pytest.approx(ai)
        assert p["attainable_tflops"] == pytest.approx(r[f"{phase}_attainable_tflops"])
        assert p["achieved_tflops"] == pytest.approx(r[f"{phase}_achieved_tflops"])
        assert p["latency_ms"] == pytest.approx(r[latency])
        assert p["bottleneck"] == r[f"{phase}_bottleneck"]
    assert points.loc["decode", "bottleneck"] == "memory"  # Llama-3.1-8B, A100, batch 1
    assert points.loc["prefill", "bottleneck"] == "compute"


def test_roofline_has_both_operating_points_roofs_and_gaps():
    r, _ = scenario()
    fig = valid(fl.decode_roofline(r, "NVIDIA A100 80GB SXM", "Roofline"))
    for prefix in ("Memory roof", "Compute roof", "Effective compute roof", "Ridge points"):
        trace(fig, prefix)
    top, low = trace(fig, "Attainable"), trace(fig, "Achieved")
    ais = [r[f"{p}_arithmetic_intensity_flop_per_byte"] for p in fl.PHASES]
    assert list(top.x) == pytest.approx(ais) and list(low.x) == pytest.approx(ais)
    assert list(top.y) == pytest.approx([r[f"{p}_attainable_tflops"] for p in fl.PHASES])
    assert list(low.y) == pytest.approx([r[f"{p}_achieved_tflops"] for p in fl.PHASES])
    gap = trace(fig, "Fixed-overhead gap")  # segments attainable -> achieved, NaN-separated
    assert gap.y[0] == pytest.approx(top.y[0]) and gap.y[1] == pytest.approx(low.y[0])
    assert gap.y[3] == pytest.approx(top.y[1]) and gap.y[4] == pytest.approx(low.y[1])
    peak = trace(fig, "Compute roof").y[0]
    assert peak == pytest.approx(r["peak_tflops"])
    assert trace(fig, "Effective compute roof").y[0] == pytest.approx(peak * 0.5)
    texts = " ".join(a.text for a in fig.layout.annotations)
    assert "<b>prefill</b>" in texts and "<b>decode</b>" in texts and "gap" in texts
    assert fig.layout.xaxis.type == "log" and fig.layout.yaxis.type == "log"


def curves(model="Llama-3.1-8B", hardware="A100", contexts=CONTEXTS, batches=BATCHES, **kw):
    """The serving page's curves (ui.decode.view.curves: engine.serve_sweep rows)."""
    opts = {"tp": 1, "pp": 1, "precision": "fp16", "profile": "tutorial"} | kw
    output_tokens = opts.pop("output_tokens", 256)
    hw = CATALOG.hardware[hardware]
    dep = engine.Deployment.of(model=CATALOG.models[model], hardware=hw, **opts)
    return sv.curves(
        dep=dep, output_tokens=output_tokens, batches=list(batches), contexts=list(contexts)
    )


@pytest.mark.parametrize("column", list(fl.SPEED_CHARTS))
def test_speed_figures_draw_solid_lines_only_while_they_fit(column):
    df = curves()
    fig = valid(fl.speed_figure(df, column, (1, 4096)))
    assert fig.layout.xaxis.type == "log" and fig.layout.yaxis.type == "log"
    assert fig.layout.yaxis.title.text == fl.SPEED_CHARTS[column][1]
    for ctx in CONTEXTS:
        rows = df[df["context"] == ctx].sort_values("batch_size")
        fit = rows[rows["fits_in_memory"]]
        (line,) = [t for t in fig.data if t.name == f"context {ctx:,} tokens"]  # solid: fits
        assert list(line.x) == fit["batch_size"].tolist()
        assert list(line.y) == pytest.approx(fit[column].tolist())
        assert line.line.dash is None and line.marker.symbol == "circle"
        past = [t for t in fig.data if t.name == f"context {ctx:,} tokens: does not fit"]
        if len(fit) == len(rows):
            assert not past
            continue
        (past,) = past  # dotted and faint, from the last batch that fits through the rest
        assert past.line.dash == "dot" and past.opacity < 1 and past.showlegend is fit.empty
        tail = rows.iloc[max(len(fit) - 1, 0) :]
        assert list(past.x) == tail["batch_size"].tolist()
        assert list(past.y) == pytest.approx(tail[column].tolist())
    star = trace(fig, "This scenario")
    row = df[(df["batch_size"] == 1) & (df["context"] == 4096)].iloc[0]
    assert list(star.x) == [1] and star.y[0] == pytest.approx(row[column])
    trace(fig, "┈✕┈ does not fit")


def test_readme_question_1_throughput_line_stops_at_the_best_that_fits():
    # Llama-3.1-70B on 2 × H100, 1,024 input tokens: past batch 32 the KV cache does not fit
    # in the usable memory; the solid line must not climb through those batches
    df = curves("Llama-3.1-70B", "H100", [1024, 8192], tp=2)
    fig = fl.speed_figure(df=df, column="aggregate_tokens_per_s", current=(1, 8192), word="input")
    rows = df[df["context"] == 1024]
    fit = rows[rows["fits_in_memory"]]
    (solid,) = [t for t in fig.data if t.name == "input 1,024 tokens"]
    assert max(solid.y) == pytest.approx(fit["aggregate_tokens_per_s"].max())
    assert max(solid.x) == fit["batch_size"].max() < rows["batch_size"].max()
    assert max(solid.y) < rows["aggregate_tokens_per_s"].max()  # the hypothetical plateau


def test_memory_figure_draws_the_limit_at_usable_memory_and_the_engines_max_batch():
    df = curves()
    fig = valid(fl.memory_figure(df, (1, 4096)))
    first = df.iloc[0]
    capacity = CATALOG.hardware["A100"].memory_capacity_bytes / 1e9  # 80 GiB = 85.9 GB
    usable = first["usable_memory_bytes"] / 1e9  # capacity less the 10% reserve: 77.3 GB
    limit = trace(fig, "Usable")
    assert list(limit.y) == pytest.approx([usable, usable])
    # wrapped to a phone's legend line (46 columns)
    assert limit.name == "Usable 77.3 GB: capacity less the 10% reserve<br>(the fit's limit)"
    cap = trace(fig, "Capacity")
    assert list(cap.y) == pytest.approx([capacity, capacity])
    assert cap.name == "Capacity 85.9 GB (80 GiB)"  # 80 x 2**30 B = 85.9e9 B
    assert list(trace(fig, "Weights alone").y) == pytest.approx([first["weight_bytes"] / 1e9] * 2)
    oom = trace(fig, "Out of memory")
    assert oom.fill == "toself" and min(oom.y) == pytest.approx(usable)  # not at capacity
    assert max(oom.y) > df["memory_required_bytes"].max() / 1e9  # covers every point above
    assert min(oom.x) <= min(BATCHES) and max(oom.x) >= max(BATCHES)
    rows = df[df["context"] == 4096].sort_values("batch_size")
    fit = rows[rows["fits_in_memory"]]
    (line,) = [t for t in fig.data if t.name == "context 4,096 tokens"]
    assert list(line.y) == pytest.approx((fit["memory_required_bytes"] / 1e9).tolist())
    assert (fit["memory_required_bytes"] / 1e9 <= usable).all()  # solid: under the limit
    most = trace(fig, "Max batch")
    assert list(most.x) == [rows["max_batch_size"].iloc[0]] * 2  # the engine's figure
    assert most.y[1] == pytest.approx(usable)
    assert fig.layout.xaxis.type == "log" and fig.layout.yaxis.type == "log"


def test_the_memory_limit_names_what_a_stacks_rule_sets_aside():
    # trtllm-1.0 (the default profile), Llama-3.1-8B fp16 on one A100 80 GB: activations at the
    # 8,192-token budget 8,192 × (4 · 4,096 + 3 · 14,336) × 2 B = 973,078,528 B, + 2^30 B
    # workspace = 2.05 GB set aside before the 5 % reserve of what the weights leave free
    df = curves(profile="trtllm-1.0")
    assert df["runtime_memory_bytes"].iloc[0] == pytest.approx(2_046_820_352)
    limit = trace(valid(fl.memory_figure(df, (1, 4096))), "Usable")
    usable = fmt_bytes(df["usable_memory_bytes"].iloc[0])
    assert limit.name == (
        f"Usable {usable}: capacity less 2.05 GB runtime<br>memory and the 5% reserve "
        "(the fit's limit)"
    )


def test_metrics_say_when_it_does_not_fit():
    r, _ = scenario(model="Llama-3.1-70B", hardware="H100", batch=4, context=8192)
    assert not r["fits_in_memory"]
    cards = {label: value for label, value, _ in fl.headline_metrics(r)}
    assert cards["Max batch at this context (sequences)"] == "0"
    assert "does NOT fit" in fl.memory_split(r)


def test_headline_metrics_carry_units_and_engine_values():
    r, _ = scenario()
    cards = {label: value for label, value, _ in fl.headline_metrics(r)}
    assert cards["TPOT"] == fmt(r["tpot_ms"] / 1e3, "s") == "8.47 ms"  # 8.475 ms, 3 figures
    assert cards["Per user (tokens/s)"] == fmt(r["tokens_per_s"]) == "118"  # 1 / 8.475 ms
    assert cards["Aggregate (tokens/s)"] == fmt(r["aggregate_tokens_per_s"])
    assert cards["TTFT"] == fmt(r["ttft_ms"] / 1e3, "s")
    assert cards["Memory used / capacity"] == "16.6 GB / 85.9 GB"
    assert cards["Decode bottleneck"] == "memory" and cards["Prefill bottleneck"] == "compute"
    assert cards["Max batch at this context (sequences)"] == f"{r['max_batch_at_context']:,}"
    assert cards["Max context at this batch (tokens)"] == f"{r['max_context_at_batch']:,}"
    assert fl.memory_split(r) == "weights 16.1 GB + KV cache 537 MB, fits"


def test_display_table_headers_carry_units():
    _, df = scenario()
    table = tables.decode_table(df)
    assert list(table.columns) == [spec[0] for spec in tables.DECODE_TABLE.values()] and len(
        table
    ) == len(df)
    assert table["KV cache"].tolist() == [fmt_bytes(v) for v in df["kv_cache_bytes"]]
    assert table["TPOT"].iloc[0].endswith(" ms") and "None" not in table.to_string()


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    model=st.sampled_from(LLMS),
    hardware=st.sampled_from(sorted(CATALOG.hardware)),
    batch=st.integers(1, 4096),
    context=st.integers(1, 2_000_000),
    kv=st.sampled_from(["fp16", "fp8", "int4"]),
)
def test_builders_work_for_any_catalogued_scenario(model, hardware, batch, context, kv):
    r, df = scenario(
        model=model,
        hardware=hardware,
        batch=batch,
        context=context,
        prompt=min(1024, context),
        kv_precision=kv,
    )
    assert len(fl.headline_metrics(r)) == 10
    valid(fl.decode_roofline(r, hardware, "t"))
    df = curves(
        model=model,
        hardware=hardware,
        contexts=sorted({*CONTEXTS[:2], context}),
        batches=sorted({*BATCHES, batch}),
    )
    for fig in (
        fl.memory_figure(df, (batch, context)),
        *(fl.speed_figure(df, c, (batch, context)) for c in fl.SPEED_CHARTS),
    ):
        valid(fig)
