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

from engine.accuracy import bands as _bands
from engine.accuracy.bands import (
    Band,
    PredictionBand,
    error_band,
    held_out_band,
    off_ground,
    prediction_band,
)
from engine.accuracy.calibrate import (
    FIT_WARNING_KINDS,
    MIN_ROWS_PER_PARAMETER,
    calibrate,
    fit_warnings,
)
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
from engine.accuracy.training_bands import BAND_KINDS as _TRAIN_BAND_KINDS
from engine.accuracy.training_bands import check_rows as training_check_rows
from engine.accuracy.training_bands import profile_band as training_profile_band
from engine.accuracy.training_bands import profile_stack as training_profile_stack
from engine.accuracy.training_bands import training_band
from engine.accuracy.validate import fit_parts, in_sample, overall, summarise, validate
from engine.assumptions import DEFAULTS, TRAINING_NAMES, Assumptions, make_assumptions
from engine.assumptions import REGISTRY as ASSUMPTIONS
from engine.catalog.arch import Architecture
from engine.catalog.formats import ALIASES as FORMAT_ALIASES
from engine.catalog.formats import FORMATS, KV_FORMATS, KVFormat, NumberFormat, runs_natively
from engine.catalog.formats import KV_ALIASES as KV_FORMAT_ALIASES
from engine.catalog.hf_config import config_fields, model_from_config
from engine.catalog.kernels import (
    KernelCurve,
    KernelCurves,
    collective_time_s,
    decode_attention_efficiency,
    decode_attention_time_s,
    gemm_efficiency,
    gemm_time_s,
    gemm_transfer,
    kernel_curves,
    kernel_transfers,
    load_kernel_curves,
    prefill_attention_efficiency,
    prefill_attention_time_s,
)
from engine.catalog.parse import CatalogError, parse_hardware, parse_model
from engine.catalog.profiles import (
    DEFAULT_PROFILE,
    PROFILE_KEYS,
    TUTORIAL_PROFILE,
    Profile,
    check_profile_name,
    get_profile,
    get_training_profile,
    profile_from_toml,
    profile_from_values,
    profile_label,
    profile_names,
    profile_to_toml,
    training_profile_names,
)
from engine.catalog.reader import (
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
from engine.catalog.resolve import default_catalog
from engine.catalog.specs import BYTES_PER_PARAM, PRECISIONS, TASKS, HardwareSpec, ModelSpec
from engine.catalog.units import quantity
from engine.checks import MAX_BATCH, MAX_DEGREE, MAX_TOKENS, check_whole, check_whole_numbers
from engine.deploy.plan import LaunchPlan, launch_plan
from engine.explore.pareto import pareto_front, pareto_table
from engine.files import MAX_UPLOAD_BYTES, MAX_UPLOAD_MB
from engine.footprint.data import grids, ownership_defaults
from engine.footprint.model import (
    POWER_FORMULA,
    FootprintResult,
    TcoResult,
    footprint,
    plan_usage,
    tco,
    train_usage,
)
from engine.load import api as _load_api
from engine.load import disagg as _load_disagg
from engine.load import disagg_plan as _disagg_plan
from engine.load import plan as _load_plan
from engine.load.api import EVENT_US as LOAD_EVENT_US
from engine.load.api import MAX_EVENTS as MAX_LOAD_EVENTS
from engine.load.api import load_events, load_scheduler
from engine.load.disagg import fleet_events, serve_load
from engine.load.disagg_plan import load_plan_disaggregated
from engine.load.grid import load_grid
from engine.load.plan import load_plan
from engine.load.results import LoadResult
from engine.load.search import CONFIRM_ROUNDS as MAX_RATE_CONFIRM_ROUNDS
from engine.load.search import MAX_RUNS as MAX_RATE_RUNS
from engine.load.search import MaxRate, max_rate, max_rate_events
from engine.load.searches import max_rates
from engine.load.trace_export import ChromeTrace, chrome_trace
from engine.report.export import records, to_csv
from engine.report.messages import Message, MessageKind
from engine.roofline import decode_sweep as _decode_sweep
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
    FALLBACK,
    IDLE_POWER_FRACTION,
    OVERHEAD_REGIME_SHARE,
    REGIMES,
    SolveResult,
    solve,
)
from engine.roofline.sweep import compute_bound_batch, crossover_batch, marginal_gain, sweep
from engine.scenarios.deployment import Deployment, Deployments, check_split
from engine.scenarios.execution import Execution
from engine.scenarios.fleet import ROUTERS, Disaggregated, Replicas
from engine.scenarios.fleet_parts import PARTS as FLEET_PARTS
from engine.scenarios.fleet_parts import (
    RESTART_SOURCE,
    RESTART_URL,
    FleetParts,
)
from engine.scenarios.prefix import Prefix
from engine.scenarios.requests import Batch, BatchGrid, RateSearch, Traffic
from engine.scenarios.sensitivity import METRICS as SENSITIVITY_METRICS
from engine.scenarios.sensitivity import PARAMETERS as SENSITIVITY_PARAMETERS
from engine.scenarios.sensitivity import Perturbation, Target
from engine.scenarios.service import SLO, Scheduler
from engine.scenarios.site import Grid, Ownership, Usage
from engine.scenarios.speculation import METHODS as SPEC_METHODS
from engine.scenarios.speculation import Speculation
from engine.scenarios.trace import (
    MAX_TRACE_BYTES,
    MAX_TRACE_ROWS,
    TRACE_COLUMNS,
    TraceError,
    parse_trace,
)
from engine.scenarios.training import (
    CP_COMM_TYPES,
    FP8_RECIPES,
    PP_SCHEDULES,
    RECOMPUTE_MODULES,
    Failures,
    LayoutSpace,
    TrainLayout,
    TrainRun,
)
from engine.scenarios.workload import ClosedLoop, MaxThroughput, OpenLoop, Replay, Workload
from engine.serving.inputs import UNUSED, check_devices, check_parallel
from engine.serving.kernel import WARNING_KINDS
from engine.serving.op_table import operators
from engine.serving.sensitivity import (
    Sensitivity,
    Synthesis,
    decode_crossover_batch,
    sensitivity,
    synthesis,
)
from engine.serving.serve import ServeResult, serve
from engine.serving.sweep import serve_sweep
from engine.training import report as _train_report
from engine.training.calibrate import fit_rows as training_fit_rows
from engine.training.config import REASONS
from engine.training.gpt import gpt_architecture
from engine.training.operators import training_operators
from engine.training.reliability import (
    FleetReliability,
    Reliability,
    fleet_parts_frame,
    fleet_reliability,
    reliability,
    scaling_overheads,
    young_daly_hours,
)
from engine.training.search import train_search
from engine.training.train import MODEL_FLOPS_DEFINITION, TrainResult, train

# Every kind of message the engine returns, each declared once where the engine says it.
MESSAGE_KINDS: tuple[MessageKind, ...] = (
    FALLBACK,
    *_decode_sweep.KINDS,
    *WARNING_KINDS.values(),
    *UNUSED.values(),
    *_load_api.KINDS,
    _load_disagg.PREFIX_FALLBACK,
    *_load_plan.KINDS,
    *_disagg_plan.KINDS,
    *REASONS[1:],
    MODEL_FLOPS_DEFINITION,
    *_train_report.KINDS,
    *_TRAIN_BAND_KINDS,
    *_bands.KINDS,
    *FIT_WARNING_KINDS,
)


def message_kinds() -> tuple[MessageKind, ...]:
    """Every kind of message the engine returns (its code, English template and fields)."""
    return MESSAGE_KINDS


def marked_messages() -> tuple[str, ...]:
    """The English template of every kind of message (the app's catalogue keys them)."""
    return tuple(kind.template for kind in MESSAGE_KINDS)


__all__ = [
    "ASSUMPTIONS",
    "BUILTIN_FILES",
    "BYTES_PER_PARAM",
    "CP_COMM_TYPES",
    "DEFAULTS",
    "DEFAULT_PROFILE",
    "ENERGY_FORMULA",
    "ENV_VAR",
    "FLEET_PARTS",
    "FORMATS",
    "FORMAT_ALIASES",
    "FP8_RECIPES",
    "IDLE_POWER_FRACTION",
    "IGNORED_ASSUMPTIONS",
    "KV_FORMATS",
    "KV_FORMAT_ALIASES",
    "LOAD_EVENT_US",
    "MAX_BATCH",
    "MAX_CONTEXT",
    "MAX_DEGREE",
    "MAX_FILE_BYTES",
    "MAX_LOAD_EVENTS",
    "MAX_MEASUREMENTS_BYTES",
    "MAX_RATE_CONFIRM_ROUNDS",
    "MAX_RATE_RUNS",
    "MAX_TOKENS",
    "MAX_TRACE_BYTES",
    "MAX_TRACE_ROWS",
    "MAX_UPLOAD_BYTES",
    "MAX_UPLOAD_MB",
    "MEASUREMENT_COLUMNS",
    "MEASUREMENT_METRICS",
    "MIN_ROWS_PER_PARAMETER",
    "OVERHEAD_REGIME_SHARE",
    "POWER_FORMULA",
    "PP_SCHEDULES",
    "PRECISIONS",
    "PROFILE_KEYS",
    "RECOMPUTE_MODULES",
    "REGIMES",
    "RESTART_SOURCE",
    "RESTART_URL",
    "ROUTERS",
    "SENSITIVITY_METRICS",
    "SENSITIVITY_PARAMETERS",
    "SLO",
    "SPEC_METHODS",
    "TASKS",
    "TRACE_COLUMNS",
    "TRAINING_NAMES",
    "TUTORIAL_PROFILE",
    "Architecture",
    "Assumptions",
    "Band",
    "Batch",
    "BatchGrid",
    "Catalog",
    "CatalogError",
    "ChromeTrace",
    "ClosedLoop",
    "DecodeResult",
    "Deployment",
    "Deployments",
    "Disaggregated",
    "Execution",
    "Failures",
    "FleetParts",
    "FleetReliability",
    "FootprintResult",
    "Grid",
    "HardwareSpec",
    "KVFormat",
    "KernelCurve",
    "KernelCurves",
    "LaunchPlan",
    "LayoutSpace",
    "LoadResult",
    "MaxRate",
    "MaxThroughput",
    "Measurement",
    "MeasurementsError",
    "Message",
    "MessageKind",
    "ModelSpec",
    "NumberFormat",
    "OpenLoop",
    "Ownership",
    "Perturbation",
    "PredictionBand",
    "Prefix",
    "Profile",
    "RateSearch",
    "Reliability",
    "Replay",
    "Replicas",
    "Scheduler",
    "Sensitivity",
    "ServeResult",
    "SolveResult",
    "Speculation",
    "Synthesis",
    "Target",
    "TcoResult",
    "TraceError",
    "Traffic",
    "TrainLayout",
    "TrainResult",
    "TrainRun",
    "UnknownIdError",
    "Usage",
    "Workload",
    "calibrate",
    "catalogue_problems",
    "check_devices",
    "check_parallel",
    "check_profile_name",
    "check_prompt",
    "check_split",
    "check_whole",
    "check_whole_numbers",
    "chrome_trace",
    "collective_time_s",
    "compute_bound_batch",
    "config_fields",
    "crossover_batch",
    "decode",
    "decode_attention_efficiency",
    "decode_attention_time_s",
    "decode_crossover_batch",
    "decode_sweep",
    "default_catalog",
    "error_band",
    "first_transform_bound",
    "fit_parts",
    "fit_warnings",
    "fleet_events",
    "fleet_parts_frame",
    "fleet_reliability",
    "footprint",
    "gemm_efficiency",
    "gemm_time_s",
    "gemm_transfer",
    "get_profile",
    "get_training_profile",
    "gpt_architecture",
    "grids",
    "held_out_band",
    "in_sample",
    "kernel_curves",
    "kernel_transfers",
    "launch_plan",
    "layer_table",
    "layer_totals",
    "load_catalog",
    "load_events",
    "load_grid",
    "load_kernel_curves",
    "load_plan",
    "load_plan_disaggregated",
    "load_scheduler",
    "make_assumptions",
    "marginal_gain",
    "marked_messages",
    "max_rate",
    "max_rate_events",
    "max_rates",
    "measurements_template",
    "message_kinds",
    "model_from_config",
    "normalise_id",
    "off_ground",
    "operators",
    "overall",
    "ownership_defaults",
    "pareto_front",
    "pareto_table",
    "parse_hardware",
    "parse_measurements",
    "parse_model",
    "parse_trace",
    "pipeline_sweep",
    "plan_usage",
    "prediction_band",
    "prefill_attention_efficiency",
    "prefill_attention_time_s",
    "profile_from_toml",
    "profile_from_values",
    "profile_label",
    "profile_names",
    "profile_to_toml",
    "quantity",
    "read_catalog_bytes",
    "read_measurements",
    "records",
    "reliability",
    "resolve_llm",
    "runs_natively",
    "scaling_overheads",
    "sensitivity",
    "serve",
    "serve_load",
    "serve_sweep",
    "shipped_measurements",
    "solve",
    "summarise",
    "sweep",
    "synthesis",
    "tco",
    "to_csv",
    "train",
    "train_search",
    "train_usage",
    "training_band",
    "training_check_rows",
    "training_fit_rows",
    "training_operators",
    "training_profile_band",
    "training_profile_names",
    "training_profile_stack",
    "user_catalog_paths",
    "validate",
    "young_daly_hours",
]
