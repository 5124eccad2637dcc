"""What the engine says is data (engine/report/messages.py): a stable code, an English template
and its values. `str()` is the English the CSV and JSON carry; the app translates by the
template and tells messages apart by the code, never by the English.

- A kind is declared once (`MessageKind(code, template)` in the module that says it) and
  `engine.message_kinds()` lists every one: an AST walk of engine/ finds each declaration.
- Every kind's template is in the Chinese catalogue.
- Frames keep their messages as data; the CSV and JSON writers print the English.
- An AST walk of ui/ and pages/: no code compares, searches or splits text against the
  engine's English (a self-test shows the walk finds the old prefix matching).
"""

from __future__ import annotations

import ast
import copy
import io
import json
import pickle
import re
from dataclasses import asdict
from pathlib import Path
from string import Formatter

import pandas as pd
import pytest

import engine
from engine.cli.main import main
from engine.report.messages import english
from tools import i18n as catalogues

ROOT = Path(__file__).resolve().parent.parent
ENGINE_FILES = sorted((ROOT / "engine").rglob("*.py"))
UI_FILES = sorted([*(ROOT / "pages").glob("*.py"), *(ROOT / "ui").rglob("*.py"), ROOT / "app.py"])
KINDS = {kind.code: kind for kind in engine.message_kinds()}
CJK = re.compile(r"[\u3400-\u9fff]")

# --- a message and its kind ----------------------------------------------------------------

FALLBACK = engine.MessageKind("toy_fallback", "{hardware} lists no {precision} peak")


def test_a_kind_builds_messages_whose_str_is_the_english():
    m = FALLBACK(hardware="H100", precision="fp4")
    assert (m.code, m.template, dict(m.fields)) == (
        "toy_fallback",
        "{hardware} lists no {precision} peak",
        {"hardware": "H100", "precision": "fp4"},
    )
    assert str(m) == "H100 lists no fp4 peak"
    assert FALLBACK.fields == ("hardware", "precision")
    fixed = engine.MessageKind("toy_fixed", "no decode step")
    assert str(fixed()) == "no decode step" and fixed().fields == {}


def test_a_kind_checks_its_field_names_and_values_and_its_code():
    with pytest.raises(ValueError, match=r"toy_fallback takes the fields \['hardware', 'prec"):
        FALLBACK(hardware="H100")
    with pytest.raises(ValueError, match="takes the fields"):
        FALLBACK(hardware="H100", precision="fp4", extra="x")
    with pytest.raises(TypeError, match="formatted text"):
        FALLBACK(hardware="H100", precision=4)
    for code in ("Toy", "toy fallback", "toy-fallback", "_toy", "toy__x", ""):
        with pytest.raises(ValueError, match="snake_case"):
            engine.MessageKind(code, "text")
    with pytest.raises(ValueError):  # a template that does not parse fails where it is declared
        engine.MessageKind("toy_broken", "a {field")


def test_messages_are_values_hashed_pickled_copied_and_read_only_to_the_caller():
    fields = {"hardware": "H100", "precision": "fp4"}
    m = FALLBACK(**fields)
    fields["hardware"] = "changed"  # the message keeps its own copy
    assert str(m) == "H100 lists no fp4 peak"
    same = FALLBACK(hardware="H100", precision="fp4")
    assert m == same and hash(m) == hash(same) and len({m, same}) == 1
    assert m != FALLBACK(hardware="A100", precision="fp4")
    assert pickle.loads(pickle.dumps(m)) == m  # Streamlit's st.cache_data pickles frames
    assert copy.deepcopy(m) == m
    assert asdict(m)["fields"] == {"hardware": "H100", "precision": "fp4"}
    with pytest.raises(AttributeError):
        m.code = "other"  # frozen


# --- every kind, declared once ----------------------------------------------------------


def _declared_kinds() -> dict[str, str]:
    """code -> template of every `MessageKind("code", "template")` written in engine/."""
    found = {}
    for path in ENGINE_FILES:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "MessageKind":
                code, template = (ast.literal_eval(a) for a in node.args)
                assert code not in found, f"{code} is declared twice"
                found[code] = template
    return found


def test_message_kinds_lists_every_kind_the_engine_declares_each_once():
    kinds = engine.message_kinds()
    declared = _declared_kinds()
    assert {k.code: k.template for k in kinds} == declared  # the list is complete, no extra
    assert len({k.code for k in kinds}) == len(kinds) == len({k.template for k in kinds})
    assert len(kinds) >= 50
    assert all(isinstance(k, engine.MessageKind) for k in kinds)


def test_marked_messages_still_names_every_template():
    # a recorded name of engine.__all__: the English templates, now from the one list
    assert engine.marked_messages() == tuple(k.template for k in engine.message_kinds())
    assert all(isinstance(t, str) and t for t in engine.marked_messages())


def test_every_kinds_template_has_a_chinese_translation():
    zh = catalogues.read("zh")
    missing = []
    for kind in engine.message_kinds():
        entry = zh.get(kind.template)
        if entry is None or entry.fuzzy or not CJK.search(entry.string or ""):
            missing.append(kind.code)
            continue
        holes = {name for _, name, _, _ in Formatter().parse(entry.string) if name}
        assert holes == set(kind.fields), kind.code  # every value has its place
    assert missing == [], "python -m tools.i18n update, then translate them"


# --- frames keep messages; the writers print the English ------------------------------------


def test_a_sweeps_warnings_are_messages_and_its_csv_and_json_their_english():
    df = engine.sweep("ResNet-50", "A100", [1], precisions=["fp16", "fp8"])
    none, (fallback,) = df["warnings"]  # fp16: none; fp8: the A100 lists no fp8 peak
    assert none == () and fallback.code == "precision_fallback"
    english_text = "NVIDIA A100 80GB SXM lists no fp8 peak: its fp16 peak (312 TFLOP/s) is used"
    csv = pd.read_csv(io.StringIO(engine.to_csv(df)), keep_default_na=False)
    assert csv["warning"].tolist() == ["", english_text + " instead"]
    assert [r["warnings"] for r in engine.records(df)] == [[], [english_text + " instead"]]


def test_english_turns_message_columns_into_text_and_leaves_others():
    a, b = FALLBACK(hardware="H100", precision="fp4"), engine.MessageKind("toy_b", "b")()
    tuples = pd.Series(pd.Categorical.from_codes([0, 1, 2, 1], [(), (a,), (a, b)]))
    assert english(tuples).tolist() == ["", str(a), f"{a}; b", str(a)]
    assert isinstance(english(tuples).dtype, pd.CategoricalDtype)  # each category once
    single = pd.Series(pd.Categorical.from_codes([0, -1, 1], [a, b]))  # -1: no reason
    assert english(single).tolist() == [str(a), "", "b"]
    objects = pd.Series([a, None, (b,), "kept"], dtype=object)
    assert english(objects).tolist() == [str(a), "", "b", "kept"]
    words = pd.Series(["x", "y"])
    assert english(words) is words


def test_the_plans_reasons_are_messages_and_its_csv_their_english():
    df = engine.load_plan(
        "Llama-3.1-70B", "H100", tp=[1, 4], input_tokens=512, output_tokens=128, target_rate=1.0
    )
    big, fits = df.iloc[0], df.iloc[1]  # tp 1: 140 GB of weights on one 80 GB H100
    assert big["reason"].code == "plan_no_kv_room" and pd.isna(fits["reason"])
    csv = pd.read_csv(io.StringIO(engine.to_csv(df)), keep_default_na=False)
    assert csv["reason"].tolist() == ["does not fit: the weights leave no room for a KV cache", ""]


def test_the_training_searchs_reasons_print_as_english_in_every_cli_format(capsys):
    args = ["train-search", "--model", "Llama-3.1-8B", "--hardware", "H100", "--gpus", "8"]
    args += ["--global-batch-size", "8", "--seq-len", "4096", "--include-rejected"]
    args += ["--tp", "1,2", "--pp", "1,16", "--cp", "1", "--zero", "0", "--recompute", "none"]
    rules = {kind.template for kind in engine.message_kinds() if kind.code in RULES}
    for fmt in ("json", "csv", "table"):
        assert main([*args, "--format", fmt, "--top", "1000"]) == 0
        out = capsys.readouterr().out
        assert "gpus is not a multiple of tp" in out and "Message(" not in out, fmt
        if fmt == "json":
            rows = json.loads(out)
            reasons = [r["reason"] for r in rows]
            assert reasons[0] == "" and set(reasons[1:]) <= rules  # ranked, then rejected
            assert all(r["model_flops_definition"].startswith("PaLM (") for r in rows)


RULES = (  # the training planner's rules (engine/training/config.py REASONS)
    "no_inter_node_network",
    "tp_must_divide_heads",
    "pp_exceeds_layers",
    "dp_not_whole",
    "micro_batches_not_whole",
    "vp_needs_pp",
    "seq_len_not_divisible",
    "ep_needs_experts",
    "zero_with_pp",
    "does_not_fit_in_memory",
)


# --- the app tells messages apart by code, never by their English ----------------------------


def _english_pieces() -> set[str]:
    """The fixed words of every template, split at its fields and at '; '."""
    pieces = set()
    for kind in engine.message_kinds():
        for literal, _, _, _ in Formatter().parse(kind.template):
            pieces |= {p.strip() for p in literal.split("; ") if p.strip()}
    return pieces


SEARCHES = {"startswith", "endswith", "contains", "match", "fullmatch", "find", "index"}
SEARCHES |= {"rfind", "removeprefix", "removesuffix", "split", "rsplit", "partition"}


def _constants(trees: list[ast.AST]) -> dict[str, set[str]]:
    """Name -> the string literals assigned to it at the top of any module (a name compared
    elsewhere, `lr.NO_FIT`, is found by its last part)."""
    out: dict[str, set[str]] = {}
    for tree in trees:
        for node in getattr(tree, "body", []):
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant):
                for target in node.targets:
                    if isinstance(target, ast.Name) and isinstance(node.value.value, str):
                        out.setdefault(target.id, set()).add(node.value.value)
    return out


def _strings(node: ast.AST, constants: dict[str, set[str]]) -> set[str]:
    """The string values an operand may hold: literals, tuples of them, named constants."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return {node.value}
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return set().union(*(_strings(e, constants) for e in node.elts))
    name = node.id if isinstance(node, ast.Name) else getattr(node, "attr", None)
    return constants.get(name, set()) if isinstance(name, str) else set()


def text_comparisons(tree: ast.AST, constants: dict[str, set[str]]) -> list[tuple[int, str]]:
    """(line, text) of every string a comparison (==, !=, in, not in) or a text search
    (startswith, contains, split ...) uses."""
    found = []
    for node in ast.walk(tree):
        operands = []
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", None) in SEARCHES:
            operands = list(node.args)
        found += [(node.lineno, s) for o in operands for s in _strings(o, constants)]
    return found


def engine_english_compared(source_by_path: dict[str, str]) -> list[str]:
    """Where the given sources compare or search text against the engine's English: a phrase
    (two words or more, or '; ' that joins messages) inside one of its templates."""
    pieces = _english_pieces()
    trees = {path: ast.parse(text) for path, text in source_by_path.items()}
    constants = _constants(list(trees.values()))
    bad = []
    for path, tree in trees.items():
        for line, text in text_comparisons(tree, constants):
            phrase = text.strip()
            joins = text == "; "
            if joins or (" " in phrase and any(phrase in piece for piece in pieces)):
                bad.append(f"{path}:{line}: {text!r}")
    return bad


def test_no_page_compares_or_parses_the_engines_english():
    sources = {str(p.relative_to(ROOT)): p.read_text() for p in UI_FILES}
    assert engine_english_compared(sources) == []


def test_the_walk_finds_the_old_prefix_matching():
    old = {
        "ui/load/run.py": 'GREW = "the queue grew"\ngrew = any(x.startswith(GREW) for x in w)\n',
        "pages/load.py": "fit = [x for x in r.warnings if x.startswith(lr.NO_FIT)]\n",
        "ui/load/view.py": 'NO_FIT = "does not fit"\n',
        "ui/train/run.py": 'memory = df[df["reason"].astype(str).str.startswith("does not fit")]\n',
        "ui/plan/grid.py": 'parts = str(text).split("; ")\n',
        "pages/train.py": 'ok = [w for w in ws if w == "does not fit in memory"]\n',
    }
    bad = engine_english_compared(old)
    assert len(bad) == 5 and all(path in " ".join(bad) for path in old if path != "ui/load/view.py")
    fine = {
        "ui/words/text.py": 'a = [w for w in ws if w.code == "queue_grew"]\nb = v == "decode"\n'
    }
    assert engine_english_compared(fine) == []
