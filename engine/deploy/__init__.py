"""The chosen deployment as its serving stack's launch command and a Kubernetes manifest.

`launch_plan` (plan.py) turns the engine's own Deployment and Scheduler objects (the layout,
number formats and the profile's scheduler with its overrides: what the simulator ran) into
the command line of vLLM, SGLang or TensorRT-LLM (stacks.py, each flag from the stack's
documentation) and the Kubernetes objects that run it (manifest.py). docs/model.md, "Taking
the answer away".
"""
