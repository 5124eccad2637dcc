"""Measured against predicted: measurement files, row-wise prediction, validation, fitting.

The measurements CSV schema (`measurements.py`), the serving model over measurement rows
(`rows.py`), errors per row and summaries (`validate.py`) and least-squares profile fits
(`calibrate.py`).
"""
