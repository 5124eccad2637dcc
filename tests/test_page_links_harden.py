"""Links that the page cannot use as given (issue 18): what is shown is what the link holds,
and the change is said beside the field (AppTest, opened from the entry file as a browser does).
"""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from tests.conftest import ROOT


def open_page(page: str, query: dict[str, str]) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.switch_page(f"pages/{page}.py")
    at.query_params.update(query)
    at.run()
    assert not at.exception, at.exception
    return at


def url(at: AppTest, key: str) -> str:
    value = at.query_params[key]
    return value[-1] if isinstance(value, list) else value


def test_decode_tp_that_does_not_divide_the_heads_falls_back_and_the_link_says_so():
    # Llama-3.1-8B has 32 attention heads: tp 3 cannot split them
    at = open_page("decode", {"model": "Llama-3.1-8B", "hardware": "H100", "tp": "3"})
    assert url(at, "tp") == "1" and url(at, "pp") == "1"  # the link holds what is shown
    beside = " ".join(w.value for w in at.sidebar.warning)
    assert "tp 3 does not divide" in beside and "tp=1, pp=1" in beside
    assert at.number_input(key="decode:tp").value == 3  # the field keeps what was asked
    assert any("Devices not used" in e.value for e in at.main.error)
