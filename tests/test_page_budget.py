"""Each page's work budget per rerun (ui/core/budget.py): a link over it is
refused before the work, beside its field and where the result would be, with how to narrow it;
a link at the budget still draws. The engine's sweep is spied on: a refused rerun runs none of
the rows it was asked for.
"""

from __future__ import annotations

import time

import pytest
from streamlit.testing.v1 import AppTest

import engine
from tests.conftest import ROOT
from ui.core import budget
from ui.core.frame import section_key
from ui.links import link_params as lp

CONTEXTS = "128,256,512,1024,2048,4096,8192,16384"  # with input_tokens 1024: 8 input lengths
EIGHT = "A100,H100,MI300X,L4,A10,H200,B200,T4"


def open_page(page: str, query: dict[str, str]) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    for key, value in query.items():
        at.query_params[key] = value
    at.session_state[section_key("decode", "curves")] = True  # /decode's curves open (lazy)
    at.run()
    at.switch_page(f"pages/{page}.py").run()
    assert not at.exception, at.exception
    return at


@pytest.fixture
def swept_rows(monkeypatch) -> list[int]:
    """The rows of every engine.serve_sweep and engine.sweep call the page makes."""
    calls: list[int] = []
    serve_sweep, sweep = engine.serve_sweep, engine.sweep

    def spy_serve(*args, **kw):
        df = serve_sweep(*args, **kw)
        calls.append(len(df))
        return df

    def spy_sweep(*args, **kw):
        df = sweep(*args, **kw)
        calls.append(len(df))
        return df

    monkeypatch.setattr(engine, "serve_sweep", spy_serve)
    monkeypatch.setattr(engine, "sweep", spy_sweep)
    return calls


def errors(at: AppTest) -> list[str]:
    return [e.value for e in at.error]


def test_heavy_decode_curves_are_refused_before_the_work_saying_how_to_narrow(swept_rows):
    start = time.perf_counter()
    at = open_page("decode", {"batches": "1..4096", "contexts": CONTEXTS})
    took = time.perf_counter() - start
    said = [e for e in errors(at) if "32,768 rows" in e]
    assert len(said) == 2  # beside the fields (sidebar) and where the curves would be
    assert any(e in [x.value for x in at.sidebar.error] for e in said)
    assert "4,096 batch sizes × 8 input lengths" in said[0]
    assert f"budget of {budget.ROWS['decode']:,} rows" in said[0]
    assert "fewer batch sizes" in said[0] and "fewer input" in said[0]
    assert max(swept_rows, default=0) <= budget.ROWS["decode"]  # no curve row was computed
    assert len(at.get("plotly_chart")) == 1  # the operators' roofline, above the tabs
    assert took < 20  # was 8 s a rerun with two clients; the refusal costs what the page does
    assert at.metric  # the deployment's own figures are still drawn


def test_decode_curves_at_the_budget_still_draw(swept_rows):
    at = open_page("decode", {"batches": "1..1024", "contexts": CONTEXTS})
    assert not errors(at)
    assert max(swept_rows) == 1024 * 8 == budget.ROWS["decode"]
    assert len(at.get("plotly_chart")) == 4  # operators' roofline, two speeds, memory


def test_heavy_compare_is_refused_before_the_work(swept_rows):
    at = open_page("compare", {"hardware": EIGHT, "batches": "1..4096"})
    said = [e for e in errors(at) if "32,768 rows" in e]
    assert len(said) == 2, errors(at)
    assert "8 accelerators and deployments × 4,096 batch sizes" in said[0]
    assert "fewer batch sizes" in said[0]
    assert not swept_rows and not at.get("plotly_chart")


def test_compare_at_the_budget_still_draws(swept_rows):
    at = open_page("compare", {"hardware": EIGHT, "batches": "1..1024"})
    assert not errors(at)
    assert sum(swept_rows) == 8 * 1024 == budget.ROWS["compare"]
    assert at.get("plotly_chart")


def test_every_page_has_its_budget_in_one_place():
    from ui.load import run as load_run
    from ui.plan import grid
    from ui.train import run as train_run

    assert grid.MAX_CONFIGURATIONS == budget.PLAN_CONFIGURATIONS
    assert load_run.BUDGET_EVENTS == budget.LOAD_EVENTS
    assert train_run.BUDGET_CONFIGS == budget.TRAIN_CONFIGURATIONS
    # /sweep draws one accelerator: its longest batch list is within its budget by construction
    assert budget.ROWS["sweep"] >= lp.MAX_BATCH_LIST
