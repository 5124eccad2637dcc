"""A share link's values are what the browser paints first.

A widget created with only its key (its state seeded from the link) had Streamlit's own default
as the element's default: the browser painted the number field at that default (batch 1, η
0.01) and applied the linked value in a later render, which on a busy machine came long after
the results (a share link showed batch 64's latency beside a box saying 1). The widgets are now
created with the value their state holds (ui.links.state.drawn_with), so the first value the
browser ever puts in each number field is the linked one. A MutationObserver installed before
the page loads records that first value; no waiting is involved.
"""

from __future__ import annotations

import pytest

from tests.conftest import wait_idle

RECORD_FIRST_VALUES = """
window.__first = {};
new MutationObserver(() => {
  for (const el of document.querySelectorAll("input[type='number'][aria-label]")) {
    const name = el.getAttribute("aria-label");
    if (!(name in window.__first)) window.__first[name] = el.value;
  }
}).observe(document, {subtree: true, childList: true, attributes: true});
"""
NOW = """() => Object.fromEntries([...document.querySelectorAll("input[type='number'][aria-label]")]
  .map(el => [el.getAttribute("aria-label"), el.value]))"""
LINKS = {
    "/solve?model=ResNet-50&hardware=H100&batch=64&efficiency=0.3&layer_overhead_us=20": {
        "Batch size (samples)": "64",
        "Compute efficiency η (fraction of peak)": "0.30",
    },
    "/decode?model=Llama-3.1-70B&hardware=H100&tp=2&batch=8&input_tokens=2048": {
        "TP (tensor-parallel devices)": "2",
        "Batch (concurrent sequences)": "8",
        "Input tokens (prompt)": "2048",
    },
}


@pytest.mark.parametrize("path", list(LINKS))
def test_a_linked_number_field_is_painted_with_its_value_first(live_server, tab, path):
    page = tab.context.new_page()  # a tab of its own for the recorder, in the worker's browser
    page.set_viewport_size({"width": 1400, "height": 2000})
    page.add_init_script(RECORD_FIRST_VALUES)
    page.goto(live_server + path)
    wait_idle(page)
    for label in LINKS[path]:  # drawn (a heavy page may still be drawing its sidebar)
        page.get_by_label(label, exact=True).wait_for(timeout=60_000)
    first, now = page.evaluate("window.__first"), page.evaluate(NOW)
    page.close()
    for label, value in LINKS[path].items():
        assert now.get(label) == value, (label, now)
    lagged = {label: (first[label], now[label]) for label in now if first.get(label) != now[label]}
    assert not lagged, f"painted first at another value (first, now): {lagged}"
