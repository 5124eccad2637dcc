"""Pure builders shared by pages: DataFrames and engine results in, Plotly figures, display
tables and their words out (no streamlit). Imports only the shared folders below it (ui.words
today) and the engine's public API.

- theme: palette, greys, log axes with decade ticks, the legend under the plot.
- roofline: the roofline with its fixed-overhead gap; latency_split: the latency bar.
- sweep: throughput, latency, intensity and speedup against batch; the roofline trajectories.
- operators, operator_table: the serving model's operators on the roofline, by class, as tables.
- tables: the sweep, comparison and decode tables under readable headers.
- serve_rows: a decoder LLM's serve_sweep rows as sweep rows (Sweep's and Compare's serving views).
- cost: USD per million output tokens (the planner's ranking, Compare's deployments).
"""
