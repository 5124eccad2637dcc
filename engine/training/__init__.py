"""The training model: one step of a decoder LLM on a TP×PP×DP(×CP×EP) cluster, and searches.

The run and its layouts are engine/scenarios/training.py's (`TrainRun`, `TrainLayout`,
`LayoutSpace`, `Failures`). Configurations and their rules (`config.py`), the run resolved
(`setup.py`), per-operator forward and backward compute built on the serving operators
(`compute.py`), collectives in and between nodes (`collectives.py`), memory per GPU by ZeRO
stage and recomputation (`memory.py`), the step kernel over configurations as arrays
(`kernel.py`), `train` and its result (`train.py`, `report.py`), the vectorised `train_search`
(`search.py`), GPT-3-style shapes (`gpt.py`), the measured runs and the `megatron` fit
(`measurements.py`, `calibrate.py`), and failures and checkpoints beside the step's
communication (`reliability.py`, tutorial 06).
"""
