"""The page code (never math: every number comes from the engine's public API), by role and by
page (docs/architecture.md; tests/test_layering.py enforces the arrows):

- core/: what every page needs (page frame, link parameters, formatter, plain text, CSV);
- charts/: pure figure and table builders several pages share (imports core);
- widgets/: sidebar inputs several pages share (imports core and charts);
- solve/, sweep/, compare/, decode/, plan/, accuracy/, catalogue/: one page's own code each
  (imports core, charts, widgets; never another page's folder).
"""
