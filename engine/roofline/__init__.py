"""The tutorial's first-order views (the MLSys·im "Hello, Roofline" chain, docs/model.md).

The whole-model solve and its result (`solve.py`), vectorised sweeps and the exact crossover
batch (`sweep.py`), each CNN layer on its own roofline (`layers.py`), the input pipeline
beside the accelerator (`pipeline.py`, tutorial 04), and the tutorial's LLM
decode view (`decode.py`, `decode_sweep.py`), kept as labelled views beside the serving model.
"""
