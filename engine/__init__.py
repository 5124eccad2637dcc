"""Roofline Explorer's engine: first-order performance bounds of ML models on accelerators.

Pure Python (numpy, pandas, pint at the edges); never imports streamlit. The model is
../shared/SPEC.md (Williams et al., "Roofline", CACM 2009; the MLSys·im tutorial's defaults).

    >>> import engine
    >>> r = engine.solve("ResNet-50", "A100", batch_size=1, precision="fp16")
    >>> r.bottleneck, round(r.latency_s * 1e3, 3)
    ('memory', 0.543)
"""

from engine.api import default_catalog, make_assumptions, solve
from engine.catalog import Catalog, UnknownIdError, load_catalog, normalise_id
from engine.cnn import layer_table
from engine.export import records, to_csv
from engine.llm import DecodeResult
from engine.llm_sweep import decode, decode_sweep
from engine.parse import CatalogError, parse_hardware, parse_model
from engine.roofline import SolveResult
from engine.specs import (
    BYTES_PER_PARAM,
    DEFAULTS,
    PRECISIONS,
    Assumptions,
    HardwareSpec,
    ModelSpec,
)
from engine.sweep import crossover_batch, marginal_gain, sweep

__all__ = [
    "BYTES_PER_PARAM",
    "DEFAULTS",
    "PRECISIONS",
    "Assumptions",
    "Catalog",
    "CatalogError",
    "DecodeResult",
    "HardwareSpec",
    "ModelSpec",
    "SolveResult",
    "UnknownIdError",
    "crossover_batch",
    "decode",
    "decode_sweep",
    "default_catalog",
    "layer_table",
    "load_catalog",
    "make_assumptions",
    "marginal_gain",
    "normalise_id",
    "parse_hardware",
    "parse_model",
    "records",
    "solve",
    "sweep",
    "to_csv",
]
