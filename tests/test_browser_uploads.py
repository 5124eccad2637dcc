"""Real-browser tests of the upload limit: one figure (engine.MAX_UPLOAD_MB, engine/files.py)
for the server (.streamlit/config.toml), the uploaders and the engine's readers. A file over it
is refused in the browser with Streamlit's reason beside it, never sent to be refused by the
server with "AxiosError: Request failed with status code 413" and no reason; a file under it
reaches the engine. Headless Chromium against `streamlit run app.py`."""

from __future__ import annotations

import pytest

import engine
from tests.conftest import start_fresh_server, stop_server, wait_idle

pytestmark = pytest.mark.browser
TRACE_PAGE = "/load?mode=trace&model=Llama-3.1-8B&hardware=H100&profile=tutorial"
VIEWPORT = {"width": 1400, "height": 2000}
TIMEOUT_MS = 120_000
HEADER = "arrival_s,input_tokens,output_tokens\n"


@pytest.fixture(scope="module")
def server():
    proc, url = start_fresh_server()
    yield url
    stop_server(proc)


def trace_file(path, size_bytes: int) -> int:
    """A valid trace of `size_bytes` bytes at most (rows of 10 ms apart); its row count."""
    rows, text = 0, [HEADER]
    total = len(HEADER)
    while True:
        row = f"{rows * 0.01:.2f},512,128\n"
        if total + len(row) > size_bytes:
            break
        text.append(row)
        total += len(row)
        rows += 1
    path.write_text("".join(text))
    return rows


def open_trace_page(tab, server):
    page = tab
    page.set_viewport_size(VIEWPORT)
    page.set_default_timeout(TIMEOUT_MS)
    page.goto(server + TRACE_PAGE)
    wait_idle(page, TIMEOUT_MS)
    return page


def test_a_trace_over_the_limit_is_refused_in_the_browser_with_the_reason(server, tab, tmp_path):
    """A 1.5 MB trace: between Streamlit's old 2 MB uploader and the server's 1 MB it was sent
    and refused with a 413 the user could not read; now the uploader refuses it, saying why."""
    page = open_trace_page(tab, server)
    uploader = page.locator("[data-testid='stSidebar'] [data-testid='stFileUploader']").first
    text = uploader.inner_text()
    limit = f"{engine.MAX_TRACE_BYTES:,}"  # 1,000,000: what the engine reads
    assert f"Trace (CSV, at most {limit} bytes)" in text  # the figure, before any try
    assert f"{engine.MAX_UPLOAD_MB}MB per file" in text  # Streamlit's words, the same figure
    big = tmp_path / "big.csv"
    trace_file(big, 1_500_000)
    assert big.stat().st_size > 1_400_000
    page.locator("[data-testid='stFileUploaderDropzoneInput']").first.set_input_files(str(big))
    uploader.get_by_text(f"File must be {engine.MAX_UPLOAD_MB:.1f}MB or smaller.").wait_for()
    page.wait_for_timeout(1_000)  # a request sent to the server would have failed by now
    body = page.locator("body").inner_text()
    assert "AxiosError" not in body and "413" not in body
    assert page.locator("[data-testid='stException']").count() == 0


def test_a_trace_just_under_the_limit_reaches_the_engine(server, tab, tmp_path):
    """A trace within 40 bytes of the limit: taken by the uploader, accepted by the server,
    read by the engine (the page names its requests)."""
    page = open_trace_page(tab, server)
    near = tmp_path / "near.csv"
    rows = trace_file(near, engine.MAX_TRACE_BYTES - 10)
    assert (
        engine.MAX_TRACE_BYTES - 40 < near.stat().st_size <= engine.MAX_TRACE_BYTES
    )  # a row < 40 B
    page.locator("[data-testid='stFileUploaderDropzoneInput']").first.set_input_files(str(near))
    sidebar = page.locator("[data-testid='stSidebar']")
    sidebar.get_by_text(f"near.csv: {rows:,} requests over", exact=False).wait_for()
    body = page.locator("body").inner_text()
    assert "AxiosError" not in body and "must be" not in body
    assert page.locator("[data-testid='stException']").count() == 0
