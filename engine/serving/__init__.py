"""The serving model: whole requests of a decoder LLM on TP×PP accelerators, per operator.

Operators per unit of a step (`operators.py`), the kernel that folds a deployment and evaluates
requests (`kernel.py`), the one decode step and the operator roofline rule (`decode_step.py`,
with closed-form sums over decode steps in `closed_form.py`), one continuous-batching step
(`step.py`), collectives and memory per device (`parallel.py`), checked inputs and the
folded-deployment cache (`inputs.py`), the scalar `serve` (`serve.py`), the vectorised
`serve_sweep` (`sweep.py`) and the operator table (`op_table.py`).
"""
