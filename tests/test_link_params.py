"""Every page's share-link parameters, each declared once (ui/<page>/link.py), over every one.

What a link accepts, the page's widget takes unchanged: a number parameter's reader accepts
both ends of its range and refuses just past them, and the widget's range is that same range
(ui.widgets.pickers.number_input reads it from the declaration), so nothing a link accepts is
clamped or blanked by a widget. Checked on the pages themselves: opened with a link holding
every parameter at the low ends, then at the high ends, each widget holds exactly the link's
value and the link written back is the one given. A value outside a field's range that reaches
it another way (a profile's, another page's) is refused with a warning beside the field.
"""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

import engine
from tests.conftest import ROOT, page_links
from ui.core.frame import section_key
from ui.decode.view import SECTIONS as DECODE_SECTIONS
from ui.links.params import Choice, ParamError
from ui.solve.breakdown import DETAILS_KEY
from ui.words.format import sig

CAT = engine.load_catalog()
LINKS = page_links(CAT)
# What makes every widget of a page appear: a decoder LLM with shapes (tokens, LLM view).
CONTEXT = {p: {"model": "Llama-3.1-8B"} for p in ("solve", "sweep", "compare")}
CONTEXT["sweep"] |= {"view": "decode"}
# /train: its GPT-shapes field, on an accelerator with MX tensor cores (the last fp8 recipe's)
CONTEXT["train"] = {"model": "gpt", "hardware": "B200"}
# Text and composite parameters: their edges as link text (low, high). Every parameter held by
# a text widget must have an entry here, so a new one cannot be forgotten.
TEXT_EDGES = {
    "batches": ("1", "1000000"),
    "contexts": ("1", "10000000"),
    "tp": ("1", "1024"),
    "pp": ("1", "1024"),
    "deployments": ("1xA100/tp1", "8xH100/tp8"),
    "model_config": None,  # a config.json (tests/test_serve_view.py): no numeric edges
    "prices": ("H100:0", "H100:1000000"),
    "cp": ("1", "1024"),  # /train's values to try per dimension
    "vp": ("1", "1024"),
    "ep": ("1", "1024"),
    "etp": ("1", "1024"),  # blank (each layout's tp) is its default
    "micro_batch_size": ("1", str(engine.MAX_BATCH)),
    "gpus_curve": ("1", "1000000"),
    "gpt_shape": ("1,1,1,1", "100000,1000000,100000,1000000"),
}
PROFILE_EDGES = ("tutorial", "trtllm")
# Taken at the other end in each run: the serving model's operator table (Solve and Decode)
# refuses a decode step at a context I + ⌊O/2⌋ above engine.MAX_TOKENS, so a link with both
# token counts at the top is accepted but cannot be drawn (test_both_token_counts_at_the_top).
CROSSED = {"output_tokens"}


def _params(kind):
    return [(page, p.name) for page, link in LINKS.items() for p in link if kind(p)]


def _outside(value: float, whole: bool, sign: int) -> float:
    step = 1 if whole else max(abs(value) * 0.01, 1e-3)
    return value + sign * step


@pytest.mark.parametrize(("page", "name"), _params(lambda p: p.bounds is not None))
def test_a_number_reads_both_ends_of_its_range_and_refuses_past_them(page, name):
    p = LINKS[page][name]
    lo, hi = p.bounds
    for edge in (lo, hi):
        assert p.read(p.write(edge)) == edge
    for outside in (_outside(lo, p.read.whole, -1), _outside(hi, p.read.whole, +1)):
        with pytest.raises(ParamError, match=r"out of range|from \d"):
            p.read(p.write(outside))
    if p.default is not None and p.default != p.read.none:
        assert lo <= p.default <= hi


@pytest.mark.parametrize(("page", "name"), _params(lambda p: p.default is not None))
def test_every_default_is_a_value_the_link_accepts(page, name):
    p = LINKS[page][name]
    assert p.read(p.write(p.default)) == p.default


@pytest.mark.parametrize(("page", "name"), _params(lambda p: p.widget == "text"))
def test_every_text_parameter_has_its_edges_here(page, name):
    assert name in TEXT_EDGES


def _edge(p, side: int) -> str | None:
    """The link text of parameter `p` at its low (0) or high (1) end; None: left out."""
    if p.bounds is not None:
        return p.write(p.bounds[1 - side if p.name in CROSSED else side])
    serving = not set(getattr(p.read, "options", ())) - set(engine.profile_names())
    if p.name == "profile" and serving:  # /train's are training profiles: its own options
        return PROFILE_EDGES[side]
    if isinstance(p.read, Choice) and p.read.options:
        return p.read.options[-side]  # the first option, then the last
    edges = TEXT_EDGES.get(p.name)
    return edges[side] if edges else None


def _query(page: str, side: int) -> dict[str, str]:
    """Every parameter a widget holds, at one end; link-only ones are left out."""
    query = {}
    for p in LINKS[page]:
        if p.widget == "link" and p.name != "prices":
            continue
        text = _edge(p, side)
        if text is not None:
            query[p.name] = text
    return query | CONTEXT.get(page, {})


def open_page(page: str, query: dict[str, str], opened: tuple[str, ...] = ()) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.switch_page(f"pages/{page}.py")
    at.query_params.update(query)
    for key in opened:  # expanders drawn only while open, opened
        at.session_state[key] = True
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def _held(at: AppTest, key: str) -> object:
    """What the widget at `key` holds (its session state)."""
    try:
        return at.session_state[key]
    except KeyError:
        return "<missing>"


@pytest.mark.parametrize("side", [0, 1], ids=["low", "high"])
@pytest.mark.parametrize("page", list(LINKS))
def test_a_link_at_the_edges_reaches_every_widget_unchanged(page, side):
    link, query = LINKS[page], _query(page, side)
    at = open_page(page, query)
    warned = " ".join(str(w.value) for w in at.warning)
    assert "ignored" not in warned, warned
    for name, text in query.items():
        p, key = link[name], link.key(name)
        value = p.read(text)
        if name == "prices":  # one field per accelerator
            for hw_id, price in value.items():
                assert _held(at, link.key(f"price.{hw_id}")) == price
            continue
        held = _held(at, key)
        if p.widget == "text":
            assert p.read(held) == value, (name, held)
        else:
            assert held == value, (name, held, value)
        if p.bounds is not None:  # the number field itself shows the value
            assert at.number_input(key=key).value == value, name
        written = at.query_params[name]
        written = written[-1] if isinstance(written, list) else written
        devices = ("tp", "pp", "ep", "attention_dp")  # a refused placement falls back to one
        if page == "decode" and name in devices and "Devices not used" in warned + _errors(at):
            assert written in ("1", "off"), (name, written)  # the placement shown, said beside it
            continue
        assert p.read(written) == value, (name, written)


def _errors(at) -> str:
    return " ".join(str(e.value) for e in at.error)


def test_plans_strict_slo_beyond_its_field_is_refused_with_a_warning_not_blanked():
    # the field takes 0.001 ms and up; a smaller TPOT is refused by name (never "no limit")
    at = open_page("plan", {"tpot_ms": "0.0005"})
    warned = " ".join(str(w.value) for w in at.warning)
    assert "ignored 'tpot_ms': 0.0005 is out of range (at least 0.001" in warned.replace("\\", "")
    assert at.number_input(key="plan:tpot_ms").value == LINKS["plan"]["tpot_ms"].default


@pytest.mark.parametrize(
    ("page", "name", "outside"),
    [("solve", "efficiency", 0.005), ("sweep", "memory_reserve", 0.995), ("plan", "ttft_ms", 1e10)],
)
def test_a_value_outside_a_field_from_elsewhere_is_refused_beside_it(page, name, outside):
    """A value that did not come through the link (here: put in the session as a profile or
    another page would) is never clamped or blanked silently: the field starts at its default
    and says why, under the field."""
    link = LINKS[page]
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.switch_page(f"pages/{page}.py")
    at.query_params.update(CONTEXT.get(page, {}))
    at.session_state[link.key(name)] = outside
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    assert at.number_input(key=link.key(name)).value == link[name].default
    beside = [str(w.value) for w in at.sidebar.warning]
    assert any(w.startswith(f"{sig(outside)} was not used here") for w in beside), beside


@pytest.mark.parametrize("page", ["solve", "decode"])
def test_both_token_counts_at_the_top(page):
    """input_tokens and output_tokens are each accepted up to engine.MAX_TOKENS; the operator view's
    decode step then sits at I + ⌊O/2⌋ = 15,000,000 tokens, which engine.operators takes (up to
    engine/checks.py's MAX_SEQUENCE = I + O at their limits): every section draws, with no error (it
    stopped with the engine's error before)."""
    top = engine.MAX_TOKENS
    query = CONTEXT.get(page, {}) | {"input_tokens": str(top), "output_tokens": str(top)}
    sections = (DETAILS_KEY, section_key("solve", "table"))
    if page == "decode":
        sections = tuple(section_key("decode", name) for name in DECODE_SECTIONS)
    at = open_page(page, query, opened=sections)
    errors = [e.value for e in at.error]  # only that 2.6 TB of KV cache does not fit one GPU
    assert all(e.startswith("Does not fit:") for e in errors), errors
    held = {name: at.session_state[f"{page}:{name}"] for name in ("input_tokens", "output_tokens")}
    assert held == {"input_tokens": top, "output_tokens": top}
    assert len(at.dataframe) >= 2  # the operators' table and one more, computed at that context
