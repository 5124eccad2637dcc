# ruff: noqa: RUF001, RUF002, RUF003 (Chinese text: full-width punctuation is right there)
"""English words left on a page shown in Chinese: the scan behind tests/test_i18n_english.py.

Everything an AppTest run draws as text is read (titles, markdown, captions, boxes, metric
labels, values and help, expander and widget labels, options and help, table headers and
cells, chart titles, axis titles, trace names, annotations and hover text), and every English
word left in it is reported, with the text it was in. What may stay in English:

- names: the catalogue's models, accelerators, profiles, stacks and measurement files as
  written, the engine's operator names (ids in its tables and CSVs); people, papers, products
  and kernels (NAMES); a section title of docs/model.md quoted beside it (the document is
  English); a term glossed in brackets right after its Chinese (分块预填充（chunked prefill）);
- units and symbols (UNITS), ids (a token with a digit, `_`, `.`, `/` or `=`: `tokens_per_s`,
  `fp16`, `Llama-3.1-8B`, `engine.train`), acronyms in capitals (TTFT, GPU, MAPE) and
  CamelCase product names (FlashAttention, TensorRT);
- the link parameters and the choices a link writes where the text teaches the link (LINK_IDS).

Anything else made of two letters or more is an English word on a Chinese page.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable

import engine
from tests.conftest import chart_spec

UNITS = {  # units and symbols, the same in every language
    *(
        "token",
        "tokens",
        "requests",
        "request",
        "images",
        "ps",
        "ns",
        "us",
        "µs",
        "ms",
        "s",
        "min",
        "h",
        "d",
    ),
    *("GB", "MB", "kB", "TB", "GiB", "MiB", "FLOP", "FLOPs", "byte", "bytes", "USD"),
}
NAMES = {  # people, papers, products, kernels and formats named as their authors write them
    *("Chowdhery", "Megatron", "Adam", "Gamma", "Poisson", "Pareto", "Roofline", "Explorer"),
    *("Oracle", "Cloud", "Azure", "CoreWeave", "Streamlit", "Plotly", "Python", "Excel"),
    *("Williams", "Pope", "Narayanan", "Korthikanti", "Kwon", "Agrawal", "Yu", "Shoeybi"),
    *("Meta", "Llama", "Young", "Daly", "MLSys·im", "ReliabilityModel"),
    "Cerebras",  # the wafer-scale maker (lesson 10, the CS-3)
    "English",  # the language picker names each language in its own language
    *("Ampere", "Hopper", "Blackwell", "torchtitan"),  # GPU generations; PyTorch's trainer
    "llm-foundry",  # MosaicML's training code, whose benchmark tables set the Hopper MFU ceiling
    *("Chrome", "Perfetto"),  # the trace viewers (chrome://tracing, ui.perfetto.dev)
    "Chinchilla",  # Hoffmann et al.'s compute-optimal model (20 tokens per parameter)
    *("Transformer", "Engine"),  # NVIDIA's fp8 training library, whose default recipe is named
    "Megatron-Core",  # NVIDIA's training library, whose recompute modules /train names
    *("DualPipe", "DualPipeV"),  # DeepSeek's pipeline schedules, named in /train's detail
    "DeepSpeed-Ulysses",  # the all-to-all context parallelism /train's field names
}
LINK_IDS = {  # link parameters, column ids and values a link or a file writes, where taught
    *("tp", "pp", "cp", "vp", "ep", "dp", "gpus", "zero", "recompute", "flash", "prices"),
    *("hfu", "mfu", "max", "unfused"),
    "etp",  # the experts' tensor parallelism (/train's field and link)
    *("dualpipe", "dualpipev"),  # pipeline schedules (/train's field and link pp_schedule)
    *("p2p", "allgather", "a2a"),  # cp_comm_type values (Megatron-Core's --cp-comm-type)
    *("alltoall", "flex"),  # moe_dispatcher values (Megatron-Core's --moe-token-dispatcher-type)
    "dropout",  # a training assumption's link parameter and id (its tables list them)
    *("moe", "mlp", "layernorm"),  # recompute_modules values (Megatron-Core's module names)
}
# A term glossed after its Chinese, as the field writes it: 分块预填充（chunked prefill）.
GLOSS = re.compile(r"(?<=[\u3400-\u9fff])（[A-Za-z][A-Za-z -]{1,40}）")
# Quoted section titles of docs/model.md (an English document) may stay as written.
DOC_SECTION = re.compile(re.escape("docs/model.md") + r"[^“\"']{0,12}[“\"'][^”\"']+[”\"']")
DOC_SECTION_BEFORE = re.compile(r"[“\"'][^”\"']+[”\"'](?:[与和]“[^”]+”)?两?[节一]")
URL = re.compile(r"https?://\S+|\]\([^)]*\)")
MARKUP = re.compile(r"<[^<>]*>|%\{[^{}]*\}|`[^`]*`|:material/[a-z_]+:|&[a-z]+;|\[[a-z_]+\]")
COMMAND = re.compile(r"python -m engine[ \w./=-]*")  # a CLI command, as typed
TOKEN = re.compile(r"[A-Za-z0-9_./=µ'’·+-]*[A-Za-z][A-Za-z0-9_./=µ'’·+-]*")
ID_MARKS = re.compile(r"[0-9_./=]")
# What the engine writes as English text, not as an engine.Message, so no page can translate
# it without reading its English back (docs/architecture.md, "Languages"): the accuracy page's
# row table is its CSV as downloaded (a row's `not_predicted_because`: engine/accuracy/
# validate.py), and the training runs' "filled in" notes (engine/training/measurements.py).
CSV_SHOWN = {"measured_in_unit"}  # a table with this column is the CSV, shown as is
NOT_SCANNED = {"Filled in", "补全项"}  # the training runs' filled-in notes, in each language


def catalogue_names() -> set[str]:
    """Names as the catalogue and the shipped files write them: models, accelerators,
    profiles, stacks, measurement files and the serving software their rows name, and each
    list price's provenance note (quoted from its source, as a source's title would be)."""
    cat = engine.load_catalog(use_env=False)
    names = set()
    for key, spec in (*cat.models.items(), *cat.hardware.items()):
        names |= {key, getattr(spec, "name", key)}
    names |= {*engine.profile_names(), *engine.training_profile_names()}
    for profile in map(engine.get_profile, engine.profile_names()):
        if profile.scheduler is not None:
            names.add(profile.scheduler.stack)
        names |= set(profile.fitted_on)
    labels = {m.engine for m in engine.read_measurements(engine.shipped_measurements())}
    names |= labels | {label.split(" (")[0] for label in labels}  # a picker shows the first part
    for name in engine.training_profile_names():  # the sources' tables, as the files name them
        runs = engine.training_fit_rows(name)
        names |= set(runs["table"]) | set(runs["scheme"])
    names |= {hw.price_notes for hw in cat.hardware.values() if hw.price_notes}  # provenance
    return {n for n in names if n}


def operator_ids() -> set[str]:
    """Ids allowed as whole words only: the engine's operator names (in its operator tables
    and CSVs: mlp, norm, lm_head), the assumptions' names (efficiency) and the columns of a
    measurements file and of the accuracy table's CSV (source, engine, metric, value)."""
    cat = engine.load_catalog(use_env=False)
    run = engine.TrainRun(cat.models["Llama-3.1-8B"], cat.hardware["H100"], gpus=8, seq_len=2048)
    ids = set(engine.training_operators(run, engine.TrainLayout())["name"])
    moe = engine.Deployment("Mixtral-8x7B-v0.1", "H100", tp=2)
    sparse = engine.Deployment("DeepSeek-V3.2-Exp", "H200", tp=8, precision="fp8")  # indexer
    for phase in ("prefill", "decode"):
        for dep in (moe, sparse):
            ids |= set(engine.operators(dep, phase=phase, context=512)["name"])
    ids |= {*engine.PROFILE_KEYS, *engine.MEASUREMENT_COLUMNS}
    ids |= {"unit", "profile", "file", "row"}  # the accuracy table's CSV columns, on screen too
    return ids - {"overhead"}  # a word too: never allowed


def english_words(text: str, names: Iterable[str] = (), ids: Iterable[str] = ()) -> list[str]:
    """The English words of `text` (see the module's docstring for what may stay): `names`
    are removed wherever they occur, `ids` are allowed as whole words."""
    text = URL.sub(" ", html.unescape(text).replace("\\", ""))  # markdown escapes: a\_b is a_b
    # (entities as a chart's hover shows them: &gt;= is >=)
    text = GLOSS.sub(" ", text)
    text = DOC_SECTION.sub(" ", text)
    text = DOC_SECTION_BEFORE.sub(" ", text)
    text = MARKUP.sub(" ", COMMAND.sub(" ", text))
    for name in sorted(names, key=len, reverse=True):
        if name in text:
            text = text.replace(name, " ")
    allowed = UNITS | NAMES | LINK_IDS | set(ids)
    found = []
    for token in TOKEN.findall(text):
        bare = token.strip(".'’·+-")
        if bare in allowed or ID_MARKS.search(bare) or len(bare) < 2:
            continue  # an id, a unit with a slash, a number with a letter: not a word
        for word in re.split(r"[-·+']", bare):
            if len(word) < 2 or word in allowed:
                continue
            if word.isupper() or re.search(r"[a-z][A-Z]|^[A-Z]{2,}", word):
                continue  # TTFT, GPUs, TensorRT, FlashAttention, vLLM
            found.append(word)
    return found


def _figure_texts(spec: dict) -> Iterable[str]:
    """The visible words of a plotly figure: titles, names, annotations, tick and hover text."""
    keys = {"text", "name", "hovertemplate", "hovertext", "ticktext"}

    def walk(node):
        if isinstance(node, dict):
            for key, value in node.items():
                if key in keys and isinstance(value, str):
                    yield value
                elif key in keys and isinstance(value, list):
                    yield from (v for v in value[:200] if isinstance(v, str))
                elif key in ("title",) and isinstance(value, str):
                    yield value
                else:
                    yield from walk(value)
        elif isinstance(node, list):
            for item in node:
                if isinstance(item, dict | list):
                    yield from walk(item)

    yield from walk(spec)


def shown_texts(at) -> list[tuple[str, str]]:
    """(where, text) of everything the AppTest run `at` draws as text."""
    out: list[tuple[str, str]] = []
    for kind in ("title", "header", "subheader", "markdown", "caption"):
        out += [(kind, str(e.value)) for e in at.get(kind)]
    for kind in ("info", "warning", "error", "success", "toast"):
        out += [(kind, str(e.value)) for e in at.get(kind)]
    for m in at.get("metric"):
        out += [("metric", m.label), ("metric", str(m.value)), ("metric help", m.proto.help)]
    out += [("expander", e.label) for e in at.get("expander")]
    out += [("tab", t.label) for t in at.get("tab")]
    widgets = ("selectbox", "radio", "multiselect", "number_input", "text_input", "checkbox")
    widgets += ("toggle", "slider", "select_slider", "text_area", "button", "download_button")
    for kind in widgets:
        for w in at.get(kind):
            out += [(kind, w.label), (f"{kind} help", getattr(w.proto, "help", "") or "")]
            out += [(f"{kind} option", o) for o in getattr(w.proto, "options", [])]
            placeholder = getattr(w.proto, "placeholder", "")
            out += [(f"{kind} placeholder", placeholder)] if placeholder else []
    for table in at.dataframe:
        frame = table.value
        out += [("table header", str(c)) for c in frame.columns]
        if CSV_SHOWN & set(frame.columns):
            continue  # the CSV as downloaded: its cells are the engine's English (NOT_SCANNED)
        frame = frame.drop(columns=[c for c in frame.columns if c in NOT_SCANNED])
        out += [("table cell", v) for v in frame.to_numpy().ravel() if isinstance(v, str)]
    for chart in at.get("plotly_chart"):
        where = "chart " + chart.proto.id.split("-")[-1]
        out += [(where, t) for t in _figure_texts(chart_spec(chart))]
    return [(where, text) for where, text in out if text]


def english_on(at, names: Iterable[str], ids: Iterable[str] = ()) -> list[str]:
    """'where: word … in text' for every English word the run draws (one line per text)."""
    found = []
    names, ids = tuple(names), set(ids)
    for where, text in dict.fromkeys(shown_texts(at)):
        words = english_words(text, names, ids)
        if words:
            found.append(f"{where}: {' '.join(words)}  ←  {text[:160]}")
    return found
