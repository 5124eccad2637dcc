"""Public interfaces are contracts: what users' scripts and links relied on keeps working.

tests/fixtures/contracts.json was recorded from the code before the engine and ui/ were
reorganised into concept folders (round 3): every name of `engine.__all__`, every CLI
sub-command's flags, the JSON keys of every CLI command, the columns of the sweeps and the
operator table, and every page's share-link parameters. Each must still be there (new ones
may be added).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import pytest

import engine

ROOT = Path(__file__).resolve().parent.parent
RECORDED = json.loads((ROOT / "tests" / "fixtures" / "contracts.json").read_text())


def test_every_recorded_engine_name_is_still_public():
    missing = sorted(set(RECORDED["engine_all"]) - set(engine.__all__))
    assert not missing, f"engine.__all__ lost {missing}"
    assert all(hasattr(engine, name) for name in RECORDED["engine_all"])


def _cli_flags() -> dict[str, set[str]]:
    from engine.cli.main import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    flags = {"": {s for a in parser._actions for s in a.option_strings}}
    for name, p in sub.choices.items():
        flags[name] = {s for a in p._actions for s in a.option_strings}
    return flags


def test_every_recorded_cli_command_and_flag_still_exists():
    now = _cli_flags()
    for command, flags in RECORDED["cli_flags"].items():
        assert command in now, f"CLI command {command!r} is gone"
        missing = sorted(set(flags) - now[command])
        assert not missing, f"{command or 'python -m engine'} lost the flags {missing}"


COMMANDS = {
    "solve": ["solve", "--model", "ResNet-50", "--hardware", "A100"],
    "sweep": ["sweep", "--model", "ResNet-50", "--hardware", "A100", "--batch-sizes", "1,2"],
    "decode": ["decode", "--model", "Llama-3.1-8B", "--hardware", "A100", "--context", "1024"],
    "serve": [
        "serve",
        "--model",
        "Llama-3.1-8B",
        "--hardware",
        "A100",
        "--input-tokens",
        "128",
        "--output-tokens",
        "16",
    ],
    "ops": ["ops", "--model", "Llama-3.1-8B", "--hardware", "A100", "--context", "128"],
    "validate": ["validate", "data/measurements/trtllm-v0.6.1.csv"],
    "list_models": ["list", "models"],
    "list_hardware": ["list", "hardware"],
}


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_recorded_json_key_is_still_written(name):
    run = subprocess.run(
        [sys.executable, "-m", "engine", *COMMANDS[name], "--format", "json"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    obj = json.loads(run.stdout)
    obj = obj[0] if isinstance(obj, list) else obj
    recorded = RECORDED["cli_json"][name]
    assert not sorted(set(recorded["keys"]) - set(obj)), f"{name} JSON lost keys"
    for key, inner in recorded["nested"].items():
        assert not sorted(set(inner) - set(obj[key])), f"{name} JSON lost {key}.* keys"


def test_every_recorded_frame_column_is_still_there():
    frames = {
        "serve_sweep_columns": engine.serve_sweep(
            "Llama-3.1-8B", "A100", input_tokens=128, output_tokens=16
        ),
        "sweep_columns": engine.sweep("ResNet-50", "A100", [1]),
        "decode_sweep_columns": engine.decode_sweep(
            models="Llama-3.1-8B", hardware="A100", batch_sizes=[1], contexts=[128]
        ),
        "operators_columns": engine.operators("Llama-3.1-8B", "A100", context=128),
    }
    for name, df in frames.items():
        missing = sorted(set(RECORDED[name]) - set(df.columns))
        assert not missing, f"{name}: lost {missing}"


SCENARIO_PAGES = ("solve", "sweep", "compare", "decode", "plan", "catalogue", "learn")


@pytest.mark.parametrize("page", SCENARIO_PAGES)
def test_every_recorded_link_parameter_is_still_understood(page):
    """A link naming every recorded parameter gets no "unknown parameter" warning."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.query_params.update({name: "x" for name in RECORDED["link_params"][page]})
    at.run()
    at.switch_page(str(ROOT / "pages" / f"{page}.py")).run()
    assert not at.exception
    text = " ".join(str(el.value) for el in (*at.warning, *at.caption, *at.info))
    assert "unknown parameter" not in text


def test_the_accuracy_page_reads_every_recorded_profile_parameter():
    from ui.core.profiles import profile_from_query

    names = [n for n in RECORDED["link_params"]["accuracy"] if n != "profile"]
    values = {n: "0.5" for n in names} | {"profile": "team", "flop_convention": None}
    query = {k: [v] for k, v in values.items() if v is not None}
    profile, warnings = profile_from_query(query)
    assert warnings == [] and profile.name == "team"
    assert set(names) - {"flop_convention"} <= set(profile.values())
