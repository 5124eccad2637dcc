"""The LLM decode page's link parameters, now those of the serving page (ui/serve_view.py).

Kept under this name for the hostile-link fuzz (tests/test_fuzz.py) and older imports; the
page's builders are ui/serve_view.py (parameters, engine calls, headline, curves),
ui/serve_widgets.py (widgets), ui/serve_config.py (config.json in the link),
ui/charts/operator_table.py and ui/charts/operators.py (the operator table and figures).
"""

from ui.serve_view import DEFAULT_BATCHES, DEFAULT_CONTEXTS, KV_CHOICES, params

__all__ = ["DEFAULT_BATCHES", "DEFAULT_CONTEXTS", "KV_CHOICES", "params"]
