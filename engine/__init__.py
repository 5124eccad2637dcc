"""Roofline Explorer's engine: first-order performance bounds of ML models on accelerators.

Pure Python (numpy, pandas, pint at the edges); never imports streamlit. The model, its
formulas, defaults and conventions are described in docs/model.md (Williams et al.,
"Roofline", CACM 2009; the MLSys·im "Hello, Roofline" tutorial's defaults).

    >>> import engine
    >>> r = engine.solve("ResNet-50", "A100", batch_size=1, precision="fp16")
    >>> r.bottleneck, r.regime, round(r.latency_s * 1e3, 3)
    ('memory', 'overhead', 0.543)
    >>> engine.compute_bound_batch("ResNet-50", "A100")
    2
"""

from engine.accuracy.bands import Band, error_band, off_ground
from engine.accuracy.calibrate import MIN_ROWS_PER_PARAMETER, calibrate, fit_warnings
from engine.accuracy.measurements import COLUMN_MEANINGS as MEASUREMENT_COLUMNS
from engine.accuracy.measurements import (
    MAX_MEASUREMENTS_BYTES,
    Measurement,
    MeasurementsError,
    catalogue_problems,
    measurements_template,
    parse_measurements,
    read_measurements,
    shipped_measurements,
)
from engine.accuracy.measurements import METRICS as MEASUREMENT_METRICS
from engine.accuracy.validate import summarise, validate
from engine.assumptions import DEFAULTS, Assumptions, make_assumptions
from engine.assumptions import REGISTRY as ASSUMPTIONS
from engine.catalog.arch import Architecture
from engine.catalog.hf_config import config_fields, model_from_config
from engine.catalog.load import (
    BUILTIN_FILES,
    ENV_VAR,
    MAX_FILE_BYTES,
    Catalog,
    UnknownIdError,
    load_catalog,
    normalise_id,
    read_catalog_bytes,
    user_catalog_paths,
)
from engine.catalog.parse import CatalogError, parse_hardware, parse_model
from engine.catalog.profiles import (
    PROFILE_KEYS,
    Profile,
    check_profile_name,
    get_profile,
    get_training_profile,
    profile_from_toml,
    profile_from_values,
    profile_names,
    profile_to_toml,
    training_profile_names,
)
from engine.catalog.resolve import default_catalog
from engine.catalog.specs import BYTES_PER_PARAM, PRECISIONS, TASKS, HardwareSpec, ModelSpec
from engine.catalog.units import quantity
from engine.checks import MAX_BATCH, MAX_DEGREE, MAX_TOKENS, check_whole, check_whole_numbers
from engine.load.api import load_events, load_scheduler, serve_load
from engine.load.grid import load_grid
from engine.load.plan import load_plan
from engine.load.results import LoadResult
from engine.load.search import MaxRate, max_rate, max_rate_events
from engine.load.trace import (
    MAX_TRACE_BYTES,
    MAX_TRACE_ROWS,
    TRACE_COLUMNS,
    TraceError,
    parse_trace,
)
from engine.report.export import records, to_csv
from engine.report.messages import marked as marked_messages
from engine.roofline.decode import MAX_CONTEXT, DecodeResult
from engine.roofline.decode_sweep import (
    IGNORED_ASSUMPTIONS,
    check_prompt,
    decode,
    decode_sweep,
    resolve_llm,
)
from engine.roofline.layers import layer_table, layer_totals
from engine.roofline.pipeline import first_transform_bound, pipeline_sweep
from engine.roofline.solve import (
    ENERGY_FORMULA,
    IDLE_POWER_FRACTION,
    OVERHEAD_REGIME_SHARE,
    REGIMES,
    SolveResult,
    solve,
)
from engine.roofline.sweep import compute_bound_batch, crossover_batch, marginal_gain, sweep
from engine.serving.inputs import check_devices, check_parallel
from engine.serving.op_table import operators
from engine.serving.serve import ServeResult, serve
from engine.serving.sweep import serve_sweep
from engine.training.calibrate import fit_rows as training_fit_rows
from engine.training.gpt import gpt_architecture
from engine.training.operators import training_operators
from engine.training.reliability import Reliability, reliability, scaling_overheads
from engine.training.search import train_search
from engine.training.train import TrainResult, train

__all__ = [
    "ASSUMPTIONS",
    "BUILTIN_FILES",
    "BYTES_PER_PARAM",
    "DEFAULTS",
    "ENERGY_FORMULA",
    "ENV_VAR",
    "IDLE_POWER_FRACTION",
    "IGNORED_ASSUMPTIONS",
    "MAX_BATCH",
    "MAX_CONTEXT",
    "MAX_DEGREE",
    "MAX_FILE_BYTES",
    "MAX_MEASUREMENTS_BYTES",
    "MAX_TOKENS",
    "MAX_TRACE_BYTES",
    "MAX_TRACE_ROWS",
    "MEASUREMENT_COLUMNS",
    "MEASUREMENT_METRICS",
    "MIN_ROWS_PER_PARAMETER",
    "OVERHEAD_REGIME_SHARE",
    "PRECISIONS",
    "PROFILE_KEYS",
    "REGIMES",
    "TASKS",
    "TRACE_COLUMNS",
    "Architecture",
    "Assumptions",
    "Band",
    "Catalog",
    "CatalogError",
    "DecodeResult",
    "HardwareSpec",
    "LoadResult",
    "MaxRate",
    "Measurement",
    "MeasurementsError",
    "ModelSpec",
    "Profile",
    "Reliability",
    "ServeResult",
    "SolveResult",
    "TraceError",
    "TrainResult",
    "UnknownIdError",
    "calibrate",
    "catalogue_problems",
    "check_devices",
    "check_parallel",
    "check_profile_name",
    "check_prompt",
    "check_whole",
    "check_whole_numbers",
    "compute_bound_batch",
    "config_fields",
    "crossover_batch",
    "decode",
    "decode_sweep",
    "default_catalog",
    "error_band",
    "first_transform_bound",
    "fit_warnings",
    "get_profile",
    "get_training_profile",
    "gpt_architecture",
    "layer_table",
    "layer_totals",
    "load_catalog",
    "load_events",
    "load_grid",
    "load_plan",
    "load_scheduler",
    "make_assumptions",
    "marginal_gain",
    "marked_messages",
    "max_rate",
    "max_rate_events",
    "measurements_template",
    "model_from_config",
    "normalise_id",
    "off_ground",
    "operators",
    "parse_hardware",
    "parse_measurements",
    "parse_model",
    "parse_trace",
    "pipeline_sweep",
    "profile_from_toml",
    "profile_from_values",
    "profile_names",
    "profile_to_toml",
    "quantity",
    "read_catalog_bytes",
    "read_measurements",
    "records",
    "reliability",
    "resolve_llm",
    "scaling_overheads",
    "serve",
    "serve_load",
    "serve_sweep",
    "shipped_measurements",
    "solve",
    "summarise",
    "sweep",
    "to_csv",
    "train",
    "train_search",
    "training_fit_rows",
    "training_operators",
    "training_profile_names",
    "user_catalog_paths",
    "validate",
]
