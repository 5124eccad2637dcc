"""The command line, `python -m engine <command>`: flags and JSON keys are a contract.

`main.py` builds the parser and runs a command (bad input: exit 2, one line); one module per
family of commands (`serve.py`, `decode.py`, `accuracy.py`) the shared model flags
(`model_args.py`) and assumption flags (`flags.py`, from the assumption registry).
"""
