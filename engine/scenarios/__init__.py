"""Scenarios: what a user asks the engine, as small frozen dataclasses that check themselves.

A `Deployment` (a model on accelerators: layout, number formats, profile, assumptions) or a grid of
them (`Deployments`); a static `Batch` (or a `BatchGrid`); a `Workload` (lengths and their spread,
`arrivals`: `OpenLoop`, `ClosedLoop`, `MaxThroughput` or `Replay` of a trace, requests, seed); the
grids' `Traffic`; a `Scheduler` (overrides of the stack's settings); `SLO`s; a `RateSearch`; and for
training a `TrainRun`, a `TrainLayout` and a `LayoutSpace`. Each validates itself in its
`__post_init__` with the message users see. The engine's public functions take these objects, and
for scripts, the CLI and share links the same fields as keywords, mapped onto the objects in one
place (`bind.py`). Imports root and catalog only (docs/architecture.md).
"""
