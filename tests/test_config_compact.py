"""A config.json in a share link: the compaction keeps exactly the shapes and
costs time linear in the file's keys (a 99 kB file with 11,000 junk keys took 7 s of CPU when
every key was tried by re-reading the whole file)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

import engine
from ui.widgets import model_config as sc

CONFIGS = sorted((Path(__file__).parent / "fixtures" / "configs").glob("*.json"))


def _greedy(config: dict, arch) -> dict:
    """The former compaction, key by key over the whole file (the reference)."""
    out = dict(config)
    for key in list(config):
        if key in ("architectures", "text_config"):
            continue
        trial = {k: v for k, v in out.items() if k != key}
        try:
            if sc._arch(trial) == arch:
                out = trial
        except ValueError:
            pass
    if isinstance(out.get("text_config"), dict):
        text = dict(out["text_config"])
        for key in list(text):
            trial = out | {"text_config": {k: v for k, v in text.items() if k != key}}
            try:
                if sc._arch(trial) == arch:
                    text, out = trial["text_config"], trial
            except ValueError:
                pass
    return out


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.stem)
def test_config_fields_keep_the_shapes_and_only_what_the_reader_reads(path):
    config = json.loads(path.read_text())
    fields = engine.config_fields(config)
    arch = engine.model_from_config(config).arch
    assert engine.model_from_config(fields).arch == arch
    assert set(fields) <= set(config) and len(json.dumps(fields)) <= len(json.dumps(config))
    compact = json.loads(sc.compact(path.read_text()))
    assert compact == _greedy(config, sc._arch(config))  # the same link as before


def test_compaction_is_linear_in_the_keys_of_the_file():
    base = json.loads(CONFIGS[0].with_name("Llama-3.1-8B.json").read_text())
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    junk = {a + b + c: 0 for a in digits for b in digits for c in digits[:9]}  # 11,664 keys
    text = json.dumps(base | junk, separators=(",", ":"))
    assert len(junk) > 11_000 and 90_000 < len(text) <= sc.MAX_PASTE_CHARS  # the 99 kB probe
    sc.compact.cache_clear()
    start = time.process_time()
    out = sc.compact(text)
    cpu = time.process_time() - start
    assert json.loads(out) == json.loads(sc.compact(json.dumps(base)))
    assert cpu < 0.5, f"{cpu:.2f} s of CPU for {len(text):,} characters"
