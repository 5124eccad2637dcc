"""User text reaches the screen only through ui.words.text.plain: an uploaded
file's name, a linked profile's name and a team catalogue's ids are shown as text, never as live
Markdown (AppTest: the element's markdown source must hold the escaped text, not the raw one)."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from tests.conftest import ROOT
from ui.accuracy.session import UPLOAD
from ui.words.text import plain

HOSTILE = "**bold** [click](http://evil.example) `x` measurements.csv"


def _markdown(at: AppTest) -> str:
    kinds = ("caption", "markdown", "subheader", "info", "warning", "error", "success", "title")
    return "\n".join(e.value for kind in kinds for e in at.get(kind))


def test_an_uploaded_file_name_in_the_fitted_on_caption_is_plain_text():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.switch_page("pages/accuracy.py").run()
    shipped = (ROOT / "data" / "measurements" / "trtllm-v0.6.1.csv").read_bytes()
    at.session_state[UPLOAD] = (shipped, HOSTILE)  # as a valid upload named so leaves it
    at.run()
    at.button(key="acc:fit").click().run()
    assert not at.exception, at.exception
    shown = _markdown(at)
    assert plain(HOSTILE) in shown  # the band basis and the measurements caption name it
    assert HOSTILE not in shown  # nowhere raw: the brackets and stars would be live
    tips = [m.proto.help for m in at.metric]  # a metric's help renders Markdown too
    assert any(plain(HOSTILE) in t for t in tips) and not any(HOSTILE in t for t in tips)


def test_a_list_the_page_cannot_read_is_named_as_plain_text():
    """The reason quotes the text the user typed: it must not become a link or bold."""
    typed = "1,**2**[x](http://evil.example)"
    fields = (("sweep", "sweep:batches"), ("plan", "plan:tp"), ("decode", "decode:contexts"))
    for page, key in fields:
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
        at.switch_page(f"pages/{page}.py").run()
        at.text_input(key=key).set_value(typed).run()
        assert not at.exception, at.exception
        errors = [e.value for e in at.error if "not used" in e.value]
        assert errors and "\\*\\*2\\*\\*" in errors[0] and "**2**" not in errors[0], page
