"""The reference for bench/bench_pages.py --first-chart: a minimal Streamlit page with one
Plotly chart, served like the app (same flags, same .streamlit/config.toml)."""

import plotly.graph_objects as go
import streamlit as st

st.title("One chart")
st.plotly_chart(go.Figure(go.Scatter(x=[1, 2, 4, 8], y=[1, 3, 2, 5])), key="chart")
