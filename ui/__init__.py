"""Shared page code: pickers, share-link parameters, Plotly figure builders (never math)."""
