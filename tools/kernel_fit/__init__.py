"""Fits the kernel efficiency curves of data/kernels/ to public kernel measurements.

`python -m tools.kernel_fit` (see __main__.py): tables.py finds and reads the measured tables,
datasheets.py gives the peaks and bandwidths the curves are fractions of, problems.py turns a
table into fitting problems, fitting.py fits and judges them on held-out shapes, report.py
writes the TOML files and docs/model.md's table of errors.
"""
