# ruff: noqa: RUF001 (Chinese text: full-width brackets are right there)
"""The one translation mechanism (ui/words/i18n.py): catalogues, the language, and the rule that
every user-visible string of pages/ and ui/ goes through it.

- The committed .mo is the committed .po compiled, byte for byte; the .po holds every message
  the sources mark, and the Chinese catalogue translates every message of a translated file.
- An AST walk over every translated file: each string literal (or f-string) shown on screen —
  an argument of a Streamlit element or widget, a figure's title, axis title, trace name or
  hover text — goes through `_()`, `ngettext()` or `N_()`; and any sentence-like literal
  anywhere in the file does too (text kept in a variable or in data is still marked). The
  allow-list names the few literals that are not prose, each with its reason.
- Files other engineers are editing now are in NOT_YET (a later pass translates them and
  empties it); every other file of pages/ and ui/ is checked strictly.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import engine
from tools import i18n as catalogues
from ui.words import i18n

ROOT = Path(__file__).resolve().parent.parent
UI_FILES = sorted([*(ROOT / "pages").glob("*.py"), *(ROOT / "ui").rglob("*.py"), ROOT / "app.py"])

# Not yet translated: none (kept so a later page can be listed while it is translated).
NOT_YET: tuple[str, ...] = ()
MUST_BE_TRANSLATED = {  # the files this pass translated: never moved back to NOT_YET
    "app.py",
    "pages/learn.py",
    "ui/core/frame.py",
    "ui/words/i18n.py",
    "ui/words/text.py",
    "ui/core/downloads.py",
    "ui/charts/roofline.py",
    "ui/charts/latency_split.py",
    "ui/charts/sweep.py",
    "ui/charts/lines.py",
}
ALLOWED = {  # literals that are not prose, and why
    "images/s": "a unit: units stay as written in every language",
    "tokens/s": "a unit: units stay as written in every language",
    "简体中文": "a language named in its own language, so anyone can find it",
    "Ended %d disconnected session(s) past their reconnection time": "the server's log (not shown)",
    "Ending lapsed sessions failed": "the server's log, for its operator (not shown)",
}
# CLI commands, shown in st.code, and a style sheet (ui.words.i18n.UPLOADER_STYLE): not prose
CODE_PREFIXES = ("python -m engine", "<style>")

WRAPPERS = {"_", "N_", "ngettext"}
ELEMENTS = {  # Streamlit calls whose first argument (and these keywords) are shown as text
    "title",
    "header",
    "subheader",
    "markdown",
    "caption",
    "write",
    "text",
    "info",
    "warning",
    "error",
    "success",
    "toast",
    "metric",
    "button",
    "download_button",
    "link_button",
    "selectbox",
    "radio",
    "multiselect",
    "number_input",
    "text_input",
    "text_area",
    "slider",
    "select_slider",
    "checkbox",
    "toggle",
    "expander",
    "popover",
    "segmented_control",
    "pills",
    "form_submit_button",
    "file_uploader",
    "tabs",
    "page_link",
}
TEXT_KEYWORDS = {"label", "help", "placeholder", "body", "title", "x_title", "y_title"}
FIGURE_KEYS = {"title", "text", "name", "hovertemplate", "hovertext"}  # plotly dicts
FIGURE_CALLS = {"Series", "log_axis"}  # builders whose first argument is a name or a title
# Markup and placeholders, which are not words: {name}, %{x:,}, <br>, **, `code`.
MARKUP = re.compile(r"%?\{[^{}]*\}|<[^<>]*>|&[a-z]+;")
WORD = re.compile(r"[^\W\d_]{2,}")
IDENTIFIER = re.compile(r"[_/=\\]|\w\.\w")
CJK = re.compile(r"[\u3400-\u9fff]")


def _is_ui_file(rel: str) -> bool:
    return not any(rel == p or (p.endswith("/") and rel.startswith(p)) for p in NOT_YET)


def _rel(path: Path) -> str:
    return str(path.relative_to(ROOT))


TRANSLATED = [p for p in UI_FILES if _is_ui_file(_rel(p))]


def words(text: str) -> list[str]:
    """The words of `text`: whitespace-separated tokens with two letters in a row, markup and
    placeholders removed; identifiers, paths and keys (`latency_ms`, `text/csv`,
    `server.baseUrlPath`, `a=b`) are not words."""
    tokens = MARKUP.sub(" ", text).split()
    return [t for t in tokens if WORD.search(t) and not IDENTIFIER.search(t.rstrip(".,;:!?)"))]


def is_text(text: str) -> bool:
    """Shown as a label: any word (two letters or more) or any CJK character."""
    return text not in ALLOWED and (bool(words(text)) or bool(CJK.search(text)))


def is_sentence(text: str) -> bool:
    """Prose wherever it is: two words or more, or CJK, and not a command."""
    if text in ALLOWED or text.startswith(CODE_PREFIXES):
        return False
    return len(words(text)) >= 2 or bool(CJK.search(text))


def _literal(node: ast.AST) -> str | None:
    """A string literal's text; an f-string's literal parts with its holes as {}."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values)
    return None


def _wrapped(node: ast.AST) -> bool:
    """`_("...")`, `N_(...)`, `ngettext(...)` or `_("... {x}").format(...)`."""
    if isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "format":
        return _wrapped(node.func.value)
    return isinstance(node, ast.Call) and getattr(node.func, "id", None) in WRAPPERS


def _shown(node: ast.AST) -> list[ast.AST]:
    """The literals among an argument: itself, each item of a list/tuple, each side of +."""
    if isinstance(node, ast.List | ast.Tuple):
        return [x for item in node.elts for x in _shown(item)]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _shown(node.left) + _shown(node.right)
    if isinstance(node, ast.IfExp):
        return _shown(node.body) + _shown(node.orelse)
    return [node] if _literal(node) is not None else []


def _name(func: ast.AST) -> str:
    return getattr(func, "attr", None) or getattr(func, "id", "") or ""


def _sink_arguments(node: ast.Call) -> list[ast.AST]:
    name = _name(node.func)
    args: list[ast.AST] = []
    if name in ELEMENTS and name != "page_link" and node.args:
        args.append(node.args[0])
    if name in FIGURE_CALLS and node.args:
        args.append(node.args[0])
    if name in ELEMENTS or name in FIGURE_CALLS or name.endswith("figure"):
        args += [k.value for k in node.keywords if k.arg in TEXT_KEYWORDS]
    return args


def _docstrings(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and _literal(body[0].value) is not None:
                found.add(id(body[0].value))
    return found


def untranslated(source: str) -> list[str]:
    """Every user-visible literal of `source` that does not go through the mechanism."""
    tree = ast.parse(source)
    inside: set[int] = set()  # literals under a wrapper call
    for node in ast.walk(tree):
        if _wrapped(node):
            inside.update(id(n) for n in ast.walk(node))
    found = []
    for node in ast.walk(tree):
        sinks: list[ast.AST] = []
        if isinstance(node, ast.Call):
            sinks = _sink_arguments(node)
        elif isinstance(node, ast.Dict):
            sinks = [
                v for k, v in zip(node.keys, node.values, strict=True) if _literal(k) in FIGURE_KEYS
            ]
        for arg in sinks:
            for lit in _shown(arg):
                text = _literal(lit)
                if id(lit) not in inside and is_text(text):
                    found.append(f"line {lit.lineno}: shown untranslated: {text!r}")
                    inside.update(id(n) for n in ast.walk(lit))  # reported once
    skip = _docstrings(tree) | inside
    for node in ast.walk(tree):
        text = _literal(node)
        if text is not None and id(node) not in skip and is_sentence(text):
            if isinstance(node, ast.Constant) and _in_fstring(tree, node):
                continue  # checked as part of its f-string
            found.append(f"line {node.lineno}: prose outside _(): {text!r}")
    return sorted(set(found))


def _in_fstring(tree: ast.AST, const: ast.Constant) -> bool:
    return any(isinstance(n, ast.JoinedStr) and const in n.values for n in ast.walk(tree))


# --- the files --------------------------------------------------------------------------


@pytest.mark.parametrize("path", TRANSLATED, ids=_rel)
def test_every_visible_string_of_a_translated_file_goes_through_the_mechanism(path):
    assert untranslated(path.read_text()) == [], _rel(path)


def test_the_translated_files_include_this_passs_and_the_rest_are_listed():
    translated = {_rel(p) for p in TRANSLATED}
    assert translated >= MUST_BE_TRANSLATED
    assert {_rel(p) for p in (ROOT / "ui" / "learn").rglob("*.py")} <= translated
    # Every entry of NOT_YET is a page or a folder of the app, not a typo.
    for entry in NOT_YET:
        assert entry.startswith(("pages/", "ui/")) and (
            entry.endswith("/") or entry.endswith(".py")
        )
    assert not [f for f in MUST_BE_TRANSLATED if not _is_ui_file(f)]


def test_the_check_fails_when_a_translated_file_gains_an_untranslated_string():
    good = (
        "import streamlit as st\nfrom ui.words.i18n import N_, _\n"
        "LABEL = N_('A label kept in data')\n"
        "st.title(_('Lesson {n}').format(n=1))\n"
        "st.markdown(f'**{_(LABEL)}**')\n"
        "fig = {'title': {'text': _('Latency split')}, 'xaxis': {'ticksuffix': ' ms'}}\n"
        "st.code('python -m engine solve --model ResNet-50', language='bash')\n"
    )
    assert untranslated(good) == []
    bad = {
        "st.caption('Entries were skipped')": "shown untranslated",
        "col.metric('Latency', '5 ms')": "shown untranslated",
        "st.subheader(f'Batch {b}: results')": "shown untranslated",
        "st.tabs(['Chart', _('Table')])": "shown untranslated",
        "fig = {'title': {'text': f'Roofline: {hw}'}}": "shown untranslated",
        "figure(rows, title='Memory per GPU')": "shown untranslated",
        "Series('GPU step', ys)": "shown untranslated",
        "HINT = 'Compare the intensity with the ridge.'": "prose outside _()",
        "x = f'{n} users fit in memory'": "prose outside _()",
        "NAME = '中文名字'": "prose outside _()",
    }
    for line, kind in bad.items():
        found = untranslated("import streamlit as st\nfrom ui.words.i18n import _\n" + line)
        assert len(found) == 1 and kind in found[0], (line, found)


def test_the_allow_list_is_short_and_says_why():
    assert len(ALLOWED) <= 8 and all(len(reason) > 10 for reason in ALLOWED.values())


# --- the catalogues ---------------------------------------------------------------------


def test_the_committed_mo_is_the_po_compiled_byte_for_byte():
    for lang in catalogues.LANGUAGES:
        po = catalogues.read(lang)
        mo = catalogues.po_path(lang).with_suffix(".mo")
        assert mo.read_bytes() == catalogues.mo_bytes(po), "run: python -m tools.i18n compile"


def test_the_po_holds_every_marked_message_and_nothing_stale():
    template = catalogues.template()
    wanted = {m.id for m in template if m.id}
    for lang in catalogues.LANGUAGES:
        have = {m.id for m in catalogues.read(lang) if m.id}
        assert wanted - have == set(), "run: python -m tools.i18n update"
        assert have - wanted == set(), "messages no source uses any more"


def _translated_paths() -> set[str]:
    return {_rel(p) for p in TRANSLATED}


def test_the_chinese_catalogue_translates_every_message_of_the_translated_files():
    zh = catalogues.read("zh")
    strict = _translated_paths()
    missing = []
    for message in catalogues.template():
        if not message.id or not {loc for loc, _ in message.locations} & strict:
            continue
        entry = zh.get(message.id)
        strings = [entry.string] if isinstance(entry.string, str) else list(entry.string)
        if entry.fuzzy or not all(strings):
            missing.append(message.id)
    assert missing == []


def test_translations_keep_every_placeholder_and_the_numbers():
    zh = catalogues.read("zh")
    for m in zh:
        if not m.id:
            continue
        ids = [m.id] if isinstance(m.id, str) else list(m.id)
        strings = [m.string] if isinstance(m.string, str) else list(m.string)
        holes = set(re.findall(r"\{[a-z_0-9]*\}", ids[0]))
        for s in strings:
            assert set(re.findall(r"\{[a-z_0-9]*\}", s)) == holes, (m.id, s)
            # every figure of the English (0.543, 2,048, 10 µs ...) is in the translation
            for number in re.findall(r"\d+(?:[.,]\d+)*", ids[0]):
                assert number in s, (m.id, s, number)


def test_terms_the_field_uses():
    zh = catalogues.read("zh")

    def t(msgid: str) -> str:
        return zh.get(msgid).string

    assert t("memory-bound") == "访存受限" and t("compute-bound") == "计算受限"
    assert t("Arithmetic intensity (FLOP/byte)") == "算术强度（FLOP/byte）"
    lesson0 = next(m.string for m in zh if str(m.id).startswith("You have a model and a GPU"))
    for term in (
        "屋顶线模型（roofline model）",
        "算术强度（arithmetic intensity）",
        "脊点（ridge point）",
        "访存受限（memory-bound）",
        "计算受限（compute-bound）",
        "批大小（batch size）",
    ):
        assert term in lesson0
    lesson2 = next(m.string for m in zh if str(m.id).startswith("An LLM writes one token"))
    assert "首 token 延迟（TTFT）" in lesson2 and "每 token 输出时间（TPOT）" in lesson2
    lesson6 = next(m.string for m in zh if str(m.id).startswith("Llama-3.1-70B on 8 to"))
    assert "张量并行（tensor parallelism）" in lesson6
    assert "显存带宽（memory bandwidth）" in t(
        next(str(m.id) for m in zh if str(m.id).startswith("NVIDIA's H100 has"))
    )


def test_the_catalogue_is_read_and_english_is_the_messages_themselves():
    assert i18n.catalogue("zh").gettext("Lessons") == "课程"
    assert (
        i18n.catalogue("zh").ngettext(
            "{n} built-in entry overridden by team files",
            "{n} built-in entries overridden by team files",
            3,
        )
        == "{n} 个内置条目被团队文件覆盖"
    )
    assert i18n.catalogue("en").gettext("Lessons") == "Lessons"
    assert i18n._("Lessons") == "Lessons"  # outside a run: English


KINDS = {kind.code: kind for kind in engine.message_kinds()}


def test_the_engines_fixed_messages_show_in_chinese_by_their_code(monkeypatch):
    """What the engine says is data (engine.Message: a code, the English template, the
    values): the app shows the template translated, found by the template itself (the
    catalogue's msgid); the English stays in str(), the CSV and the JSON."""
    does_not_fit, beyond = KINDS["does_not_fit"](), KINDS["beyond_trained_context"]()
    no_room = KINDS["plan_no_kv_room"]()
    assert i18n.message_text(does_not_fit) == str(does_not_fit)  # outside a run: English
    monkeypatch.setattr(i18n, "language", lambda: "zh")
    # 放不下 = does not fit; 上下文长度 = context length
    assert (
        i18n.message_text(does_not_fit)
        == "放不下：每个设备所需内存超过可用内存（容量减去服务栈的运行时内存与预留）"
    )
    assert i18n.message_text(beyond) == "输入 + 输出 token 数超过模型训练时的上下文长度"
    assert i18n.message_text(no_room).startswith("放不下")
    assert str(beyond) == "input + output tokens exceed the model's trained context length"
    by_hand = engine.Message("by_hand", "set by hand")  # a template the catalogue lacks
    assert i18n.message_text(by_hand) == "set by hand"


def test_error_band_bases_and_training_rules_show_in_chinese_and_export_in_english(monkeypatch):
    """An error band's basis is a Message with its row count and file names as values
    (engine.Band.basis): exports carry the English, the app the translated template filled
    in. The training planner's rules and its model FLOPs definition are messages too."""
    from engine.accuracy import bands
    from engine.training.config import REASONS
    from engine.training.train import MODEL_FLOPS_DEFINITION

    band = engine.Band(12.5, bands.BASIS_BOTH(rows="42", files="a.csv, b.csv"))
    english = "the larger of the leave-one-model-out and leave-one-accelerator-out MAPE on 42 "
    assert str(band.basis) == english + "rows of a.csv, b.csv"  # what CSV and JSON carry
    assert band.as_dict()["error_band_basis"] == str(band.basis)
    assert i18n.message_text(band.basis) == str(band.basis)  # outside a run: English
    monkeypatch.setattr(i18n, "language", lambda: "zh")
    # 留一模型 = leave one model out; the count and the file names as the engine wrote them
    assert (
        i18n.message_text(band.basis)
        == "留一模型与留一加速器两种 MAPE 中的较大者，基于 a.csv, b.csv 的 42 行"
    )
    assert i18n.message_text(bands.BASIS_HAND_SET()) == "未测量（手动设定的配置档）"
    assert i18n.message_text(MODEL_FLOPS_DEFINITION()).startswith("PaLM（Chowdhery 等 2022")
    assert REASONS[3].code == "pp_exceeds_layers"
    assert i18n.message_text(REASONS[3]()) == "pp 超过了层数"


def test_engine_messages_with_values_show_in_chinese_with_the_engines_values(monkeypatch):
    """A message with values (a name, a count) is shown as its translated template with the
    engine's own values; a value is put in as text, never read as a template, so a hostile
    name is shown as written, in linear work."""
    from engine.roofline.decode_sweep import IGNORED_ASSUMPTIONS

    cat = engine.load_catalog(use_env=False)
    (fallback,) = engine.solve(
        model=cat.models["ResNet-50"], hardware=cat.hardware["A100"], batch_size=1, precision="fp8"
    ).warnings
    beyond, ignored = engine.decode(
        model=cat.models["Llama-3.1-8B"],
        hardware=cat.hardware["H100"],
        batch_size=1,
        context=200_000,
        activation_fraction=0.5,
    ).warnings
    assert (fallback.code, beyond.code) == ("precision_fallback", "context_beyond_maximum")
    assert ignored.code == "decode_ignores_activation_fraction"
    assert (
        str(fallback)
        == "NVIDIA A100 80GB SXM lists no fp8 peak: its fp16 peak (312 TFLOP/s) is used instead"
    )
    assert (
        str(beyond)
        == "context of 200,000 tokens is beyond Llama-3.1-8B's catalogued maximum of 131,072"
    )
    assert str(ignored).endswith(IGNORED_ASSUMPTIONS["activation_fraction"])
    assert i18n.message_text(fallback) == str(fallback)  # outside a run: English
    monkeypatch.setattr(i18n, "language", lambda: "zh")
    # 未列出 = does not list; 峰值 = peak; 超过了目录中 … 的最大值 = beyond the catalogue's maximum
    said = "NVIDIA A100 80GB SXM 未列出 fp8 峰值：改用其 fp16 峰值（312 TFLOP/s）"
    assert i18n.message_text(fallback) == said
    assert (
        i18n.message_text(beyond)
        == "200,000 个 token 的上下文超过了目录中 Llama-3.1-8B 的最大值 131,072"
    )
    assert (
        i18n.message_text(ignored)
        == "LLM 服务模型不使用 activation_fraction：它搬运权重和 KV 缓存，忽略激活"
    )
    hostile = "{hardware} lists no {precision} peak; " * 300 + "a ("  # braces, '; ', literals
    odd = KINDS["precision_fallback"](hardware=hostile, precision="fp8", used="fp16", tflops="1")
    assert i18n.message_text(odd) == f"{hostile} 未列出 fp8 峰值：改用其 fp16 峰值（1 TFLOP/s）"


# --- the language -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "chosen", "locale", "accept", "expected"),
    [
        ({}, None, None, "", "en"),
        ({"lang": ["zh"]}, None, "en-US", "en-US,en;q=0.9", "zh"),  # the link wins
        ({"lang": ["ZH"]}, None, None, "", "zh"),
        ({"lang": ["en"]}, None, "zh-CN", "", "en"),  # an explicit English link too
        ({}, None, "zh-CN", "", "zh"),  # the browser's language
        ({}, None, "zh-Hant-TW", "", "zh"),
        ({}, None, None, "fr-FR,fr;q=0.9,zh-CN;q=0.8", "zh"),  # Accept-Language
        ({}, None, "fr-FR", "fr-FR", "en"),  # unsupported: English
        ({"lang": ["xx"]}, None, "zh-CN", "", "zh"),  # a bad link value: the browser's
        ({"lang": ["en"]}, "zh", "en-US", "", "zh"),  # the session's choice is kept
    ],
)
def test_the_language_is_the_sessions_then_the_links_then_the_browsers(
    query, chosen, locale, accept, expected
):
    assert i18n.resolve(query=query, chosen=chosen, locale=locale, accept=accept) == expected


def test_from_locale():
    assert i18n.from_locale("zh_CN") == "zh" and i18n.from_locale("en-GB") == "en"
    assert i18n.from_locale(None) is None and i18n.from_locale("de") is None
